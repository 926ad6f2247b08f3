//===- FuseBiasActivation.cpp - activations into the linear epilogue ------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_FUSEBIASACTIVATION
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {
Activation epilogueActivation(GeluOp gelu) {
  return gelu.getApproximate() == GeluApproximation::Tanh ? Activation::GeluTanh
                                                          : Activation::Gelu;
}
Activation epilogueActivation(SiluOp) { return Activation::Silu; }
Activation epilogueActivation(ReluOp) { return Activation::Relu; }

template <typename OpTy> struct ActivationIntoLinear : OpRewritePattern<OpTy> {
  ActivationIntoLinear(MLIRContext *ctx, llvm::Statistic &activation)
      : OpRewritePattern<OpTy>(ctx), numActivation(activation) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto linear = op.getInput().template getDefiningOp<LinearOp>();
    // The epilogue applies the activation before the residual, so a linear
    // that already adds one computes something else.
    if (!linear || !linear->hasOneUse() ||
        linear.getActivation() != Activation::None || linear.getResidual() ||
        linear.getType() != op.getType())
      return failure();
    rewriter.modifyOpInPlace(linear, [&] {
      linear.setActivation(epilogueActivation(op));
      linear->setLoc(rewriter.getFusedLoc({linear.getLoc(), op.getLoc()}));
    });
    rewriter.replaceOp(op, linear.getOutput());
    ++numActivation;
    return success();
  }

  llvm::Statistic &numActivation;
};

struct FuseBiasActivationPass
    : mte::transformer::impl::FuseBiasActivationBase<FuseBiasActivationPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ActivationIntoLinear<GeluOp>, ActivationIntoLinear<SiluOp>,
                 ActivationIntoLinear<ReluOp>>(&getContext(), numActivation);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
