//===- LibraryContractions.cpp - GEMMs a library runs ---------------------===//
//
// The products of linears and attention as named linalg contractions, for
// mte-matmul-to-library-call to hand to cuBLASLt. Everything around the
// products is the reference lowering's, built with its helpers.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/CUDA/LibraryContractions.h"

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mte::lowering;
using namespace mte::transformer;

namespace {

/// Ahead of the reference patterns (benefit 1).
constexpr unsigned kLibraryBenefit = 2;

/// Whether a library GEMM runs products of this element type.
bool isLibraryType(Type t) {
  return isa<Float32Type, BFloat16Type, Float16Type>(t);
}

/// Whether cuBLASLt runs this fp8 linear: E4M3 operands, the weight [N, K]
/// (FP8 GEMMs on sm_89/sm_90 take both operands K-major: the "TN" layout),
/// and K and N multiples of 16 (16-byte leading dimensions and rows).
bool isLibraryFp8Linear(LinearOp op, int64_t n, int64_t k) {
  return isa<Float8E4M3FNType>(op.getInput().getType().getElementType()) &&
         isa<Float8E4M3FNType>(op.getWeight().getType().getElementType()) &&
         op.getWeightLayout() == WeightLayout::NK && n % 16 == 0 &&
         k % 16 == 0;
}

/// `input` with its dimensions permuted (a copy).
Value transposeTensor(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  Value init = emptyTensor(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, input, init, perm).getResult()[0];
}

/// linalg.batch_matmul of [n, m, k] and [n, k, p] (or [n, p, k] with
/// `transposedB`), accumulating from zero in f32.
Value batchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  bool transposedB) {
  auto l = cast<RankedTensorType>(lhs.getType());
  auto r = cast<RankedTensorType>(rhs.getType());
  int64_t n = r.getDimSize(transposedB ? 1 : 2);
  Value init = filledTensor(b, loc, {l.getDimSize(0), l.getDimSize(1), n},
                            b.getF32Type(), 0);
  SmallVector<NamedAttribute> attrs;
  if (transposedB) {
    MLIRContext *ctx = b.getContext();
    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
               d2 = getAffineDimExpr(2, ctx), d3 = getAffineDimExpr(3, ctx);
    attrs.push_back(b.getNamedAttr(
        "indexing_maps",
        b.getAffineMapArrayAttr({AffineMap::get(4, 0, {d0, d1, d3}, ctx),
                                 AffineMap::get(4, 0, {d0, d2, d3}, ctx),
                                 AffineMap::get(4, 0, {d0, d1, d2}, ctx)})));
  }
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                       ValueRange{lhs, rhs}, ValueRange{init},
                                       attrs)
      .getResult(0);
}

bool hasNoElements(RankedTensorType type) {
  return type.hasStaticShape() && type.getNumElements() == 0;
}

struct LinearToLibraryGemm : OpRewritePattern<LinearOp> {
  LinearToLibraryGemm(MLIRContext *ctx)
      : OpRewritePattern(ctx, kLibraryBenefit) {}

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType weightType = op.getWeight().getType();
    Type elementType = inputType.getElementType();
    bool kn = op.getWeightLayout() == WeightLayout::KN;
    int64_t k = inputType.getShape().back();
    int64_t n = weightType.getDimSize(kn ? 1 : 0);
    bool library = isLibraryType(elementType) &&
                   weightType.getElementType() == elementType;
    if ((!library && !isLibraryFp8Linear(op, n, k)) ||
        hasNoElements(op.getOutput().getType()))
      return rewriter.notifyMatchFailure(op, "not a library GEMM");
    SmallVector<int64_t> shape(op.getOutput().getType().getShape());
    if (op.isBlockScaled()) {
      // The block scales are inside the product; the epilogue has none.
      linalg::GenericOp product = mte::buildBlockScaledProduct(rewriter, op);
      product->setAttr(mte::kBlockScaledGemmAttrName, rewriter.getUnitAttr());
      Value result = mte::buildLinearEpilogue(
          rewriter, op, reshapeTensor(rewriter, loc, product.getResult(0), shape));
      tagEpilogue(rewriter, op, result, /*alpha=*/1.0f, /*inputScale=*/false,
                  /*weightScale=*/false);
      rewriter.replaceOp(op, result);
      return success();
    }
    // The product over the [M, K] view of the input, accumulated in f32.
    int64_t m = 1;
    for (int64_t d : inputType.getShape().drop_back())
      m *= d;
    Value input = reshapeTensor(rewriter, loc, op.getInput(), {m, k});
    Value init = filledTensor(rewriter, loc, {m, n}, rewriter.getF32Type(), 0);
    SmallVector<NamedAttribute> attrs;
    if (!kn) {
      MLIRContext *ctx = rewriter.getContext();
      AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
                 d2 = getAffineDimExpr(2, ctx);
      attrs.push_back(rewriter.getNamedAttr(
          "indexing_maps", rewriter.getAffineMapArrayAttr(
                               {AffineMap::get(3, 0, {d0, d2}, ctx),
                                AffineMap::get(3, 0, {d1, d2}, ctx),
                                AffineMap::get(3, 0, {d0, d1}, ctx)})));
    }
    Value product =
        linalg::MatmulOp::create(rewriter, loc, TypeRange{init.getType()},
                                 ValueRange{input, op.getWeight()},
                                 ValueRange{init}, attrs)
            .getResult(0);
    product = reshapeTensor(rewriter, loc, product, shape);
    // Constant per-tensor scales (compile-time quantized weights, imported
    // Q/DQ) fold into one factor, cuBLASLt's alpha; a scale computed on the
    // run stays an operand, handed over as a scale pointer. Row scales are
    // vectors cuBLASLt reads, both of them: none folds.
    float alpha = 1.0f;
    bool rowScaled = op.isRowScaled();
    Value result = mte::buildLinearEpilogue(rewriter, op, product,
                                            rowScaled ? nullptr : &alpha);
    bool inputScale =
        op.getInputScale() &&
        (rowScaled || !matchPattern(op.getInputScale(), m_Constant()));
    bool weightScale =
        op.getWeightScale() &&
        (rowScaled || !matchPattern(op.getWeightScale(), m_Constant()));
    tagEpilogue(rewriter, op, result, alpha, inputScale, weightScale);
    if (op.hasFp8Output())
      rewriter.replaceOp(op, buildTaggedFp8Output(rewriter, op, result));
    else
      rewriter.replaceOp(op, result);
    return success();
  }

  /// An E4M3-writing linear's cast and amax of its f32 epilogue value `y`,
  /// tagged for mte-matmul-to-library-call, which hands them to cuBLASLt's
  /// D scale and AMAX_D: the same arithmetic as the reference's quantize
  /// and amax, as one elementwise op and one reduction.
  static SmallVector<Value> buildTaggedFp8Output(PatternRewriter &rewriter,
                                                 LinearOp op, Value y) {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    RankedTensorType outType = op.getOutput().getType();
    Type fp8 = outType.getElementType();
    Value codes = elementwise(
        rewriter, loc, outType, ValueRange{y, op.getOutputScale()},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return quantizeScalar(b, l, a[0], a[1], fp8, /*multiply=*/true,
                                /*saturate=*/true);
        });
    codes.getDefiningOp()->setAttr(mte::kGemmFp8OutputAttrName,
                                   rewriter.getUnitAttr());
    SmallVector<Value> results = {codes};
    if (!op.getOutputAmax())
      return results;
    MLIRContext *ctx = rewriter.getContext();
    unsigned rank = outType.getRank();
    Value init = filledTensor(rewriter, loc, {}, f32, 0);
    auto amax = linalg::GenericOp::create(
        rewriter, loc, init.getType(), y, init,
        {AffineMap::getMultiDimIdentityMap(rank, ctx),
         AffineMap::get(rank, 0, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value magnitude = math::AbsFOp::create(b, l, a[0]);
          linalg::YieldOp::create(
              b, l, arith::MaximumFOp::create(b, l, a[1], magnitude).getResult());
        });
    amax->setAttr(mte::kGemmOutputAmaxAttrName, rewriter.getUnitAttr());
    results.push_back(amax.getResult(0));
    return results;
  }

  /// The library GEMM can apply this epilogue itself (bias, activation,
  /// residual as its C): say what it computes, so that
  /// mte-matmul-to-library-call need not reverse-engineer the body.
  static void tagEpilogue(PatternRewriter &rewriter, LinearOp op, Value result,
                          float alpha, bool inputScale, bool weightScale) {
    if (Operation *epilogue = result.getDefiningOp()) {
      SmallVector<NamedAttribute> spec = {rewriter.getNamedAttr(
          "activation",
          ActivationAttr::get(rewriter.getContext(), op.getActivation()))};
      if (alpha != 1.0f)
        spec.push_back(
            rewriter.getNamedAttr("alpha", rewriter.getF32FloatAttr(alpha)));
      if (inputScale)
        spec.push_back(
            rewriter.getNamedAttr("input_scale", rewriter.getUnitAttr()));
      if (weightScale)
        spec.push_back(
            rewriter.getNamedAttr("weight_scale", rewriter.getUnitAttr()));
      // The scales are [..., 1] per row of the input and [N] per channel.
      if (op.isRowScaled())
        spec.push_back(
            rewriter.getNamedAttr("row_scales", rewriter.getUnitAttr()));
      if (op.getBias())
        spec.push_back(rewriter.getNamedAttr("bias", rewriter.getUnitAttr()));
      if (op.getResidual())
        spec.push_back(
            rewriter.getNamedAttr("residual", rewriter.getUnitAttr()));
      if (op.hasFp8Output())
        spec.push_back(
            rewriter.getNamedAttr("fp8_output", rewriter.getUnitAttr()));
      epilogue->setAttr(mte::kGemmEpilogueAttrName,
                        rewriter.getDictionaryAttr(spec));
    }
  }
};

struct AttentionToLibraryGemms : OpRewritePattern<AttentionOp> {
  AttentionToLibraryGemms(MLIRContext *ctx, mte::AttentionSoftmaxFn softmax)
      : OpRewritePattern(ctx, kLibraryBenefit), softmax(std::move(softmax)) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType qType = op.getQuery().getType();
    RankedTensorType kType = op.getKey().getType();
    RankedTensorType vType = op.getValue().getType();
    Type t = qType.getElementType();
    if (!isLibraryType(t) || hasNoElements(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a library GEMM");
    int64_t batch = qType.getDimSize(0), sq = qType.getDimSize(1),
            skv = kType.getDimSize(1);
    int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads();
    int64_t d = qType.getDimSize(2) / heads;
    int64_t dv = vType.getDimSize(2) / kvHeads;
    int64_t group = heads / kvHeads;
    // Heads unpacked to [B, S, H, D], then (batch, kv head) major: a kv
    // head's query heads stack their rows.
    auto [q, k, v] = mte::unpackAttentionHeads(rewriter, op);
    auto headsMajor = [&](Value x, ArrayRef<int64_t> shape) {
      return reshapeTensor(rewriter, loc,
                           transposeTensor(rewriter, loc, x, {0, 2, 1, 3}),
                           shape);
    };
    Value qRows = headsMajor(q, {batch * kvHeads, group * sq, d});
    Value kRows = headsMajor(k, {batch * kvHeads, skv, d});
    Value vRows = headsMajor(v, {batch * kvHeads, skv, dv});
    Value scores = reshapeTensor(
        rewriter, loc,
        batchMatmul(rewriter, loc, qRows, kRows, /*transposedB=*/true),
        {batch, heads, sq, skv});

    // The second product reads P in V's type, rounded once.
    Value probs =
        softmax ? softmax(rewriter, loc, op, scores, t)
                : mte::buildAttentionProbabilities(rewriter, loc, op, scores);
    Value rows =
        reshapeTensor(rewriter, loc, castTensor(rewriter, loc, probs, t),
                      {batch * kvHeads, group * sq, skv});
    Value product = reshapeTensor(
        rewriter, loc,
        batchMatmul(rewriter, loc, rows, vRows, /*transposedB=*/false),
        {batch, heads, sq, dv});
    Value out =
        castTensor(rewriter, loc,
                   transposeTensor(rewriter, loc, product, {0, 2, 1, 3}), t);
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, out, op.getType().getShape()));
    return success();
  }

  mte::AttentionSoftmaxFn softmax;
};

} // namespace

void mte::populateLinearToLibraryGemmPatterns(RewritePatternSet &patterns) {
  patterns.add<LinearToLibraryGemm>(patterns.getContext());
}

void mte::populateAttentionToLibraryGemmPatterns(RewritePatternSet &patterns,
                                                 AttentionSoftmaxFn softmax) {
  patterns.add<AttentionToLibraryGemms>(patterns.getContext(),
                                        std::move(softmax));
}

void mte::populateLibraryContractionPatterns(RewritePatternSet &patterns) {
  populateLinearToLibraryGemmPatterns(patterns);
  populateAttentionToLibraryGemmPatterns(patterns);
}
