//===- RecognizeLayerNorm.cpp - decomposed LayerNorm to layer_norm --------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "RecognitionUtils.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZELAYERNORM
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;
using namespace mte::transformer::recognition;

namespace {
/// Matches `normalized * gamma (+ beta)` rooted at `root` (the add, or the
/// product when there is no bias) and replaces it with a layer_norm.
LogicalResult matchNormalized(PatternRewriter &rewriter, Operation *root,
                              Value normalized, Value gamma, Value beta);

/// root = normalized * gamma + beta.
struct LayerNormWithBias : OpRewritePattern<AddOp> {
  LayerNormWithBias(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numLayerNorm(count) {}

  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    for (Value scaledValue : {root.getLhs(), root.getRhs()}) {
      auto scaled = singleUseProducer<MulOp>(scaledValue);
      if (!scaled)
        continue;
      Value beta = otherOperand(root, scaledValue);
      for (Value normalized : {scaled.getLhs(), scaled.getRhs()})
        if (succeeded(matchNormalized(rewriter, root, normalized,
                                      otherOperand(scaled, normalized),
                                      beta))) {
          ++numLayerNorm;
          return success();
        }
    }
    return failure();
  }
  llvm::Statistic &numLayerNorm;
};

/// root = normalized * gamma, with no bias added after it (T5-style and
/// bias=False norms).
struct LayerNormWithoutBias : OpRewritePattern<MulOp> {
  LayerNormWithoutBias(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numLayerNorm(count) {}

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    // A bias add after it is LayerNormWithBias's, whichever op the driver
    // visits first.
    if (root->hasOneUse())
      if (auto add = dyn_cast<AddOp>(*root->user_begin());
          add && add.getType() == root.getType() &&
          matchPattern(otherOperand(add, root.getResult()), m_Constant()))
        return failure();
    for (Value normalized : {root.getLhs(), root.getRhs()})
      if (succeeded(matchNormalized(rewriter, root, normalized,
                                    otherOperand(root, normalized),
                                    /*beta=*/nullptr))) {
        ++numLayerNorm;
        return success();
      }
    return failure();
  }
  llvm::Statistic &numLayerNorm;
};

LogicalResult matchNormalized(PatternRewriter &rewriter, Operation *root,
                              Value normalized, Value gamma, Value beta) {
  // normalized = d / sqrt(ve) | d * reciprocal(sqrt(ve)) | d * rsqrt(ve),
  // maybe Cast to the model's type.
  CastWrapping wrapping = peelOutputCast(normalized);
  normalized = wrapping.normalizedCore;
  Value d, ve;
  Operation *normOp = normalized.getDefiningOp();
  if (!normOp || !normOp->hasOneUse())
    return failure();
  if (auto div = dyn_cast<DivOp>(normOp)) {
    auto sqrt = singleUseProducer<SqrtOp>(div.getRhs());
    if (!sqrt)
      return failure();
    d = div.getLhs();
    ve = sqrt.getInput();
  } else if (auto mul = dyn_cast<MulOp>(normOp)) {
    for (Value factor : {mul.getLhs(), mul.getRhs()}) {
      if (auto rsqrt = singleUseProducer<RsqrtOp>(factor)) {
        ve = rsqrt.getInput();
      } else if (auto recip = singleUseProducer<ReciprocalOp>(factor)) {
        if (auto sqrt = singleUseProducer<SqrtOp>(recip.getInput()))
          ve = sqrt.getInput();
      }
      if (ve) {
        d = otherOperand(mul, factor);
        break;
      }
    }
  }
  if (!d || !ve)
    return failure();

  // ve = mean(square(d)) + eps.
  std::optional<MeanOfSquares> variance = matchMeanOfSquares(ve, d);
  if (!variance)
    return failure();
  Operation *square = variance->square;

  // d = x - mean(x), used only by the square and the normalisation.
  auto sub = d.getDefiningOp<SubOp>();
  if (!sub || llvm::any_of(d.getUsers(), [&](Operation *user) {
        return user != square && user != normOp;
      }))
    return failure();
  auto mean = singleUseProducer<ReduceOp>(sub.getRhs());
  Value x = sub.getLhs();
  if (!mean || mean.getInput() != x)
    return failure();
  std::optional<int64_t> axis = trailingMeanAxis(mean);
  Value input = normInput(x, wrapping.outputCast);
  if (!axis || trailingMeanAxis(variance->mean) != axis || !input)
    return failure();
  auto inputType = cast<RankedTensorType>(input.getType());
  if (root->getResult(0).getType() != inputType ||
      !isParameter(gamma, inputType, *axis) ||
      (beta && !isParameter(beta, inputType, *axis)))
    return failure();

  auto layerNorm = LayerNormOp::create(
      rewriter, root->getLoc(), TypeRange{inputType}, input, gamma, beta,
      /*residual=*/nullptr, rewriter.getI64IntegerAttr(*axis),
      rewriter.getF32FloatAttr(variance->epsilon));
  rewriter.replaceOp(root, layerNorm.getOutput());
  return success();
}

struct RecognizeLayerNormPass
    : mte::transformer::impl::RecognizeLayerNormBase<RecognizeLayerNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LayerNormWithBias, LayerNormWithoutBias>(&getContext(),
                                                          numLayerNorm);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
