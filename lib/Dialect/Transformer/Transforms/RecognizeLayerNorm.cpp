//===- RecognizeLayerNorm.cpp - decomposed LayerNorm to layer_norm --------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZELAYERNORM
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {
/// The other operand of a commutative binary op whose one operand is `v`.
template <typename OpTy>
Value otherOperand(OpTy op, Value v) {
  return op.getLhs() == v ? op.getRhs() : op.getLhs();
}

template <typename OpTy>
OpTy singleUseProducer(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  return op && op->hasOneUse() ? op : OpTy();
}

/// A constant scalar (any rank, one element) as a double.
std::optional<double> constantScalar(Value v) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1)
    return std::nullopt;
  return (*attr.value_begin<APFloat>()).convertToDouble();
}

/// The first normalised axis of a keepdims mean over trailing axes.
std::optional<int64_t> trailingMeanAxis(ReduceOp reduce) {
  if (!reduce || reduce.getKind() != ReduceKind::Mean || !reduce.getKeepdims())
    return std::nullopt;
  int64_t rank = reduce.getInput().getType().getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : reduce.getAxes())
    axes.push_back(*normalizeAxis(a, rank));
  llvm::sort(axes);
  if (axes.empty() || axes.back() != rank - 1 ||
      axes.back() - axes.front() + 1 != static_cast<int64_t>(axes.size()))
    return std::nullopt;
  return axes.front();
}

/// Matches the parameter `v` as a constant of the normalised shape.
bool isParameter(Value v, RankedTensorType input, int64_t axis) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  return matchPattern(v, m_Constant()) &&
         type.getElementType() == input.getElementType() &&
         type.getShape() == normalized;
}

struct LayerNormPattern : OpRewritePattern<AddOp> {
  LayerNormPattern(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numLayerNorm(count) {}

  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    // root = scaled + beta; scaled = normalized * gamma.
    for (Value scaledValue : {root.getLhs(), root.getRhs()}) {
      auto scaled = singleUseProducer<MulOp>(scaledValue);
      if (!scaled)
        continue;
      Value beta = otherOperand(root, scaledValue);
      for (Value normalized : {scaled.getLhs(), scaled.getRhs()})
        if (succeeded(matchNormalized(rewriter, root, normalized,
                                      otherOperand(scaled, normalized), beta)))
          return success();
    }
    return failure();
  }

  LogicalResult matchNormalized(PatternRewriter &rewriter, AddOp root,
                                Value normalized, Value gamma,
                                Value beta) const {
    // normalized = d / sqrt(ve) | d * reciprocal(sqrt(ve)) | d * rsqrt(ve).
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
    auto addEps = singleUseProducer<AddOp>(ve);
    if (!addEps)
      return failure();
    ReduceOp variance;
    std::optional<double> eps;
    for (Value v : {addEps.getLhs(), addEps.getRhs()}) {
      if ((variance = singleUseProducer<ReduceOp>(v)) &&
          (eps = constantScalar(otherOperand(addEps, v))))
        break;
      variance = nullptr;
    }
    if (!variance || !eps || *eps <= 0)
      return failure();
    Operation *square = variance.getInput().getDefiningOp();
    if (!square || !square->hasOneUse())
      return failure();
    if (auto pow = dyn_cast<PowOp>(square)) {
      if (pow.getLhs() != d || constantScalar(pow.getRhs()) != 2.0)
        return failure();
    } else if (auto mul = dyn_cast<MulOp>(square)) {
      if (mul.getLhs() != d || mul.getRhs() != d)
        return failure();
    } else {
      return failure();
    }

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
    if (!axis || trailingMeanAxis(variance) != axis)
      return failure();
    auto inputType = cast<RankedTensorType>(x.getType());
    if (root.getType() != inputType || !isParameter(gamma, inputType, *axis) ||
        !isParameter(beta, inputType, *axis))
      return failure();

    auto layerNorm = LayerNormOp::create(
        rewriter, root.getLoc(), TypeRange{inputType}, x, gamma, beta,
        /*residual=*/nullptr, rewriter.getI64IntegerAttr(*axis),
        rewriter.getF32FloatAttr(*eps));
    rewriter.replaceOp(root, layerNorm.getOutput());
    ++numLayerNorm;
    return success();
  }

  llvm::Statistic &numLayerNorm;
};

struct RecognizeLayerNormPass
    : mte::transformer::impl::RecognizeLayerNormBase<RecognizeLayerNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LayerNormPattern>(&getContext(), numLayerNorm);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
