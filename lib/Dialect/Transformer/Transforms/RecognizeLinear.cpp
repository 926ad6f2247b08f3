//===- RecognizeLinear.cpp - MatMul (+ bias) to transformer.linear --------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZELINEAR
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {
/// The weight and layout of a matmul that computes x · W with a rank-2 W.
struct LinearMatch {
  Value input, weight;
  WeightLayout layout;
};

std::optional<LinearMatch> matchLinear(MatmulOp matmul) {
  RankedTensorType lhs = matmul.getLhs().getType();
  RankedTensorType rhs = matmul.getRhs().getType();
  if (lhs.getRank() < 2 || rhs.getRank() != 2 ||
      !isa<FloatType>(lhs.getElementType()))
    return std::nullopt;
  if (auto transpose = matmul.getRhs().getDefiningOp<TransposeOp>();
      transpose &&
      llvm::equal(transpose.getPermutation(), ArrayRef<int64_t>{1, 0}))
    return LinearMatch{matmul.getLhs(), transpose.getInput(), WeightLayout::NK};
  return LinearMatch{matmul.getLhs(), matmul.getRhs(), WeightLayout::KN};
}

/// A bias operand of `add` that broadcasts like a [N] vector over `product`.
Value matchBias(AddOp add, Value product) {
  Value bias = add.getLhs() == product ? add.getRhs() : add.getLhs();
  auto biasType = cast<RankedTensorType>(bias.getType());
  auto productType = cast<RankedTensorType>(product.getType());
  if (add.getType() != productType ||
      biasType.getElementType() != productType.getElementType() ||
      biasType.getRank() < 1 ||
      biasType.getShape().back() != productType.getShape().back() ||
      llvm::any_of(biasType.getShape().drop_back(),
                   [](int64_t d) { return d != 1; }))
    return nullptr;
  return bias;
}

LinearOp createLinear(PatternRewriter &rewriter, Location loc, Type type,
                      const LinearMatch &match, Value bias) {
  if (bias) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1)
      bias =
          ReshapeOp::create(rewriter, loc,
                            RankedTensorType::get({biasType.getShape().back()},
                                                  biasType.getElementType()),
                            bias);
  }
  return LinearOp::create(
      rewriter, loc, type, match.input, match.weight, bias,
      /*residual=*/nullptr, /*input_scale=*/nullptr, /*weight_scale=*/nullptr,
      WeightLayoutAttr::get(rewriter.getContext(), match.layout),
      ActivationAttr::get(rewriter.getContext(), Activation::None));
}

struct LinearWithBias : OpRewritePattern<AddOp> {
  LinearWithBias(MLIRContext *ctx, llvm::Statistic &linear,
                 llvm::Statistic &bias)
      : OpRewritePattern(ctx, /*benefit=*/2), numLinear(linear), numBias(bias) {
  }
  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (Value operand : {add.getLhs(), add.getRhs()}) {
      auto matmul = operand.getDefiningOp<MatmulOp>();
      if (!matmul || !matmul->hasOneUse())
        continue;
      std::optional<LinearMatch> match = matchLinear(matmul);
      Value bias = match ? matchBias(add, operand) : nullptr;
      if (!bias)
        continue;
      rewriter.replaceOp(add, createLinear(rewriter, add.getLoc(),
                                           add.getType(), *match, bias));
      rewriter.eraseOp(matmul);
      ++numLinear;
      ++numBias;
      return success();
    }
    return failure();
  }
  llvm::Statistic &numLinear, &numBias;
};

struct LinearWithoutBias : OpRewritePattern<MatmulOp> {
  LinearWithoutBias(MLIRContext *ctx, llvm::Statistic &linear)
      : OpRewritePattern(ctx, /*benefit=*/1), numLinear(linear) {}
  LogicalResult matchAndRewrite(MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    std::optional<LinearMatch> match = matchLinear(matmul);
    if (!match)
      return failure();
    // A bias add after it is LinearWithBias's to fold, whichever op the
    // driver visits first.
    if (matmul->hasOneUse())
      if (auto add = dyn_cast<AddOp>(*matmul->user_begin());
          add && matchBias(add, matmul.getResult()))
        return failure();
    rewriter.replaceOp(matmul, createLinear(rewriter, matmul.getLoc(),
                                            matmul.getType(), *match, nullptr));
    ++numLinear;
    return success();
  }
  llvm::Statistic &numLinear;
};

struct RecognizeLinearPass
    : mte::transformer::impl::RecognizeLinearBase<RecognizeLinearPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LinearWithBias>(&getContext(), numLinear, numBias);
    patterns.add<LinearWithoutBias>(&getContext(), numLinear);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
