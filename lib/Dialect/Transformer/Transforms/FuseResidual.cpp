//===- FuseResidual.cpp - residual adds into a linear or a norm -----------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_FUSERESIDUAL
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {
struct LinearResidual {
  LinearOp linear;
  Value residual;
};

/// An operand of `add` that is a linear able to add the other operand in its
/// epilogue: nothing else reads the product, and no broadcast is involved.
std::optional<LinearResidual> matchLinearResidual(AddOp add) {
  for (auto [operand, other] : {std::pair(add.getLhs(), add.getRhs()),
                                std::pair(add.getRhs(), add.getLhs())}) {
    auto linear = operand.getDefiningOp<LinearOp>();
    // Same block: the linear moves down to the add, and not into a loop.
    if (linear && linear->hasOneUse() && !linear.getResidual() &&
        linear->getBlock() == add->getBlock() &&
        other.getType() == linear.getType() &&
        add.getType() == linear.getType())
      return LinearResidual{linear, other};
  }
  return std::nullopt;
}

struct ResidualIntoLinear : OpRewritePattern<AddOp> {
  ResidualIntoLinear(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numLinearResidual(count) {}

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    std::optional<LinearResidual> match = matchLinearResidual(add);
    if (!match)
      return failure();
    LinearOp linear = match->linear;
    // Created at the add, where the residual is defined for certain; the
    // linear's own operands dominate it already.
    auto fused = LinearOp::create(
        rewriter, rewriter.getFusedLoc({linear.getLoc(), add.getLoc()}),
        add.getType(), linear.getInput(), linear.getWeight(), linear.getBias(),
        match->residual, linear.getInputScale(), linear.getWeightScale(),
        linear.getWeightLayout(), linear.getActivation());
    rewriter.replaceOp(add, fused);
    rewriter.eraseOp(linear);
    ++numLinearResidual;
    return success();
  }

  llvm::Statistic &numLinearResidual;
};

/// True when every use of `sum` other than `input` is in an op after `norm`,
/// where the norm's residual_sum can replace it.
bool otherUsesFollow(Value sum, OpOperand &input, Operation *norm) {
  return llvm::all_of(sum.getUses(), [&](OpOperand &use) {
    if (&use == &input)
      return true;
    Operation *user = norm->getBlock()->findAncestorOpInBlock(*use.getOwner());
    return user && norm->isBeforeInBlock(user);
  });
}

LayerNormOp createNormWithResidual(PatternRewriter &rewriter, Location loc,
                                   LayerNormOp norm, Value input,
                                   Value residual) {
  return LayerNormOp::create(rewriter, loc, norm.getOutput().getType(),
                             input.getType(), input, norm.getScale(),
                             norm.getBias(), residual, norm.getAxisAttr(),
                             norm.getEpsilonAttr());
}

RMSNormOp createNormWithResidual(PatternRewriter &rewriter, Location loc,
                                 RMSNormOp norm, Value input, Value residual) {
  return RMSNormOp::create(rewriter, loc, norm.getOutput().getType(),
                           input.getType(), input, norm.getScale(), residual,
                           norm.getAxisAttr(), norm.getEpsilonAttr());
}

template <typename NormOp> struct ResidualIntoNorm : OpRewritePattern<NormOp> {
  ResidualIntoNorm(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern<NormOp>(ctx), numNormResidual(count) {}

  LogicalResult matchAndRewrite(NormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getInput().template getDefiningOp<AddOp>();
    if (norm.getResidual() || !add || add->getBlock() != norm->getBlock())
      return failure();
    Value a = add.getLhs(), b = add.getRhs();
    if (a.getType() != add.getType() || b.getType() != add.getType())
      return rewriter.notifyMatchFailure(norm, "the add broadcasts");
    if (matchLinearResidual(add))
      return rewriter.notifyMatchFailure(norm, "a linear takes the residual");
    if (!otherUsesFollow(add, norm.getInputMutable(), norm))
      return rewriter.notifyMatchFailure(norm, "the sum is used before");
    NormOp fused = createNormWithResidual(
        rewriter, rewriter.getFusedLoc({add.getLoc(), norm.getLoc()}), norm, a,
        b);
    rewriter.replaceOp(norm, fused.getOutput());
    rewriter.replaceOp(add, fused.getResidualSum());
    ++numNormResidual;
    return success();
  }

  llvm::Statistic &numNormResidual;
};

struct FuseResidualPass
    : mte::transformer::impl::FuseResidualBase<FuseResidualPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ResidualIntoLinear>(&getContext(), numLinearResidual);
    patterns.add<ResidualIntoNorm<LayerNormOp>, ResidualIntoNorm<RMSNormOp>>(
        &getContext(), numNormResidual);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
