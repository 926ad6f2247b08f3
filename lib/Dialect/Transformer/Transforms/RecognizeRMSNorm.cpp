//===- RecognizeRMSNorm.cpp - decomposed RMSNorm to rms_norm --------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "RecognitionUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZERMSNORM
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;
using namespace mte::transformer::recognition;

namespace {
/// Matches `1 / sqrt(ve)` spelled as reciprocal(sqrt), div(1, sqrt) or
/// rsqrt; returns `ve`.
Value matchInverseRoot(Value v) {
  if (auto rsqrt = singleUseProducer<RsqrtOp>(v))
    return rsqrt.getInput();
  if (auto recip = singleUseProducer<ReciprocalOp>(v))
    if (auto sqrt = singleUseProducer<SqrtOp>(recip.getInput()))
      return sqrt.getInput();
  if (auto div = singleUseProducer<DivOp>(v))
    if (constantScalar(div.getLhs()) == 1.0)
      if (auto sqrt = singleUseProducer<SqrtOp>(div.getRhs()))
        return sqrt.getInput();
  return nullptr;
}

struct RMSNormPattern : OpRewritePattern<MulOp> {
  RMSNormPattern(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numRMSNorm(count) {}

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    for (Value normalized : {root.getLhs(), root.getRhs()})
      if (succeeded(match(rewriter, root, normalized,
                          otherOperand(root, normalized))))
        return success();
    return failure();
  }

  LogicalResult match(PatternRewriter &rewriter, MulOp root, Value normalized,
                      Value weight) const {
    // normalized = x / sqrt(ve) | x * inverseRoot(ve), maybe Cast to T.
    CastWrapping wrapping = peelOutputCast(normalized);
    normalized = wrapping.normalizedCore;
    Operation *normOp = normalized.getDefiningOp();
    if (!normOp || !normOp->hasOneUse())
      return failure();
    Value x, ve;
    if (auto div = dyn_cast<DivOp>(normOp)) {
      if (auto sqrt = singleUseProducer<SqrtOp>(div.getRhs())) {
        x = div.getLhs();
        ve = sqrt.getInput();
      }
    } else if (auto mul = dyn_cast<MulOp>(normOp)) {
      for (Value factor : {mul.getLhs(), mul.getRhs()})
        if ((ve = matchInverseRoot(factor))) {
          x = otherOperand(mul, factor);
          break;
        }
    }
    if (!x || !ve)
      return failure();

    // ve = mean(square(x)) + eps.
    std::optional<MeanOfSquares> meanOfSquares = matchMeanOfSquares(ve, x);
    if (!meanOfSquares)
      return failure();
    std::optional<int64_t> axis = trailingMeanAxis(meanOfSquares->mean);
    Value input = normInput(x, wrapping.outputCast);
    if (!axis || !input)
      return failure();
    auto inputType = cast<RankedTensorType>(input.getType());
    if (root.getType() != inputType || !isParameter(weight, inputType, *axis))
      return failure();

    auto rmsNorm = RMSNormOp::create(
        rewriter, root.getLoc(), TypeRange{inputType}, input, weight,
        /*residual=*/nullptr, rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr(meanOfSquares->epsilon));
    rewriter.replaceOp(root, rmsNorm.getOutput());
    ++numRMSNorm;
    return success();
  }

  llvm::Statistic &numRMSNorm;
};

struct RecognizeRMSNormPass
    : mte::transformer::impl::RecognizeRMSNormBase<RecognizeRMSNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RMSNormPattern>(&getContext(), numRMSNorm);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
