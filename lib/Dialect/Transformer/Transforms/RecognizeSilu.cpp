//===- RecognizeSilu.cpp - x * sigmoid(x) to silu, silu * up to swiglu ----===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "RecognitionUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZESILU
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;
using namespace mte::transformer::recognition;

namespace {
struct SiluPattern : OpRewritePattern<MulOp> {
  SiluPattern(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx, /*benefit=*/2), numSilu(count) {}
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (Value factor : {mul.getLhs(), mul.getRhs()}) {
      auto sigmoid = singleUseProducer<SigmoidOp>(factor);
      if (!sigmoid || sigmoid.getInput() != otherOperand(mul, factor) ||
          sigmoid.getType() != mul.getType())
        continue;
      rewriter.replaceOpWithNewOp<SiluOp>(mul, sigmoid.getInput());
      ++numSilu;
      return success();
    }
    return failure();
  }
  llvm::Statistic &numSilu;
};

struct SwigluPattern : OpRewritePattern<MulOp> {
  SwigluPattern(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx, /*benefit=*/1), numSwiglu(count) {}
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (Value factor : {mul.getLhs(), mul.getRhs()}) {
      auto silu = singleUseProducer<SiluOp>(factor);
      Value up = otherOperand(mul, factor);
      if (!silu || up.getType() != mul.getType() ||
          silu.getType() != mul.getType())
        continue;
      rewriter.replaceOpWithNewOp<SwigluOp>(mul, silu.getInput(), up);
      ++numSwiglu;
      return success();
    }
    return failure();
  }
  llvm::Statistic &numSwiglu;
};

struct RecognizeSiluPass
    : mte::transformer::impl::RecognizeSiluBase<RecognizeSiluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SiluPattern>(&getContext(), numSilu);
    patterns.add<SwigluPattern>(&getContext(), numSwiglu);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
