//===- Contractions.cpp - matmuls, linears, attention
//-----------------------===//
//
// Contractions: matmul, linear (with its epilogue), attention and
// convolution, accumulating in f32 for half types.
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mte::lowering;
using namespace mte::transformer;

namespace {

/// A contraction's body: acc + lhs * rhs, the operands (`a`: lhs, rhs, acc)
/// converted from their types to the accumulator's, integer or float.
Value multiplyAdd(OpBuilder &b, Location l, ValueRange a, Type lhsType,
                  Type rhsType, Type acc) {
  Value x = convertScalar(b, l, a[0], lhsType, acc);
  Value y = convertScalar(b, l, a[1], rhsType, acc);
  if (isFloat(acc))
    return arith::AddFOp::create(b, l, a[2], arith::MulFOp::create(b, l, x, y));
  return arith::AddIOp::create(b, l, a[2], arith::MulIOp::create(b, l, x, y));
}

struct MatmulPattern : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType lhs = op.getLhs().getType(), rhs = op.getRhs().getType();
    RankedTensorType result = op.getType();
    bool lhsVector = lhs.getRank() == 1, rhsVector = rhs.getRank() == 1;
    int64_t batchRank =
        result.getRank() - (lhsVector ? 0 : 1) - (rhsVector ? 0 : 1);
    // Loops: batch..., [m], [n], k.
    unsigned numLoops = result.getRank() + 1;
    AffineExpr k = getAffineDimExpr(numLoops - 1, ctx);
    AffineExpr m = getAffineDimExpr(batchRank, ctx);
    AffineExpr n = getAffineDimExpr(batchRank + (lhsVector ? 0 : 1), ctx);
    auto batchExprs = [&](RankedTensorType t, int64_t matrixDims) {
      SmallVector<AffineExpr> exprs;
      int64_t rank = t.getRank() - matrixDims;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t loop = batchRank - rank + d;
        exprs.push_back(t.getDimSize(d) == 1 && result.getDimSize(loop) != 1
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(loop, ctx));
      }
      return exprs;
    };
    SmallVector<AffineExpr> lhsExprs = batchExprs(lhs, lhsVector ? 1 : 2);
    if (!lhsVector)
      lhsExprs.push_back(m);
    lhsExprs.push_back(k);
    SmallVector<AffineExpr> rhsExprs = batchExprs(rhs, rhsVector ? 1 : 2);
    rhsExprs.push_back(k);
    if (!rhsVector)
      rhsExprs.push_back(n);
    SmallVector<AffineMap> maps = {
        AffineMap::get(numLoops, 0, lhsExprs, ctx),
        AffineMap::get(numLoops, 0, rhsExprs, ctx),
        AffineMap::getMultiDimIdentityMap(numLoops, ctx)
            .getMajorSubMap(result.getRank())};
    SmallVector<utils::IteratorType> iterators(numLoops,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    Type elementType = result.getElementType();
    Type acc = signlessType(computeType(elementType));
    Value init = filledTensor(rewriter, loc, result.getShape(), acc, 0);
    Value product =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{op.getLhs(), op.getRhs()},
            init, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange a) {
              linalg::YieldOp::create(
                  b, l, multiplyAdd(b, l, a, elementType, elementType, acc));
            })
            .getResult(0);
    rewriter.replaceOp(
        op, castTensor(rewriter, loc, product, signlessType(elementType)));
    return success();
  }
};

/// Convolution as one linalg.generic over (n, m, o..., c, k...) on the
/// zero-padded input: out[n, m, o] += x[n, g(m) * C/group + c, o * stride +
/// k * dilation] * w[m, c, k], with g(m) = m floordiv (M / group), in f32
/// for 16-bit types; the bias is added by a second, elementwise generic.
struct ConvPattern : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType weightType = op.getWeight().getType();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank(), spatial = rank - 2;
    Type elementType = type.getElementType();
    Type acc = computeType(elementType);
    ArrayRef<int64_t> pads = op.getPads(), strides = op.getStrides(),
                      dilations = op.getDilations();

    Value input = op.getInput();
    if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
      SmallVector<OpFoldResult> low(rank, rewriter.getIndexAttr(0)),
          high(rank, rewriter.getIndexAttr(0));
      SmallVector<int64_t> shape(inputType.getShape());
      for (int64_t i = 0; i < spatial; ++i) {
        low[2 + i] = rewriter.getIndexAttr(pads[i]);
        high[2 + i] = rewriter.getIndexAttr(pads[spatial + i]);
        shape[2 + i] += pads[i] + pads[spatial + i];
      }
      Value zero = arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getZeroAttr(elementType));
      input = tensor::PadOp::create(rewriter, loc,
                                    RankedTensorType::get(shape, elementType),
                                    input, low, high, zero);
    }

    // Loops: n, m, o_1..o_s, then c, k_1..k_s.
    int64_t numLoops = 3 + 2 * spatial;
    auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
    int64_t perGroup = weightType.getDimSize(1);
    int64_t filtersPerGroup = weightType.getDimSize(0) / op.getGroup();
    AffineExpr c = dim(2 + spatial);
    SmallVector<AffineExpr> inputExprs = {
        dim(0), dim(1).floorDiv(filtersPerGroup) * perGroup + c};
    SmallVector<AffineExpr> weightExprs = {dim(1), c};
    for (int64_t i = 0; i < spatial; ++i) {
      AffineExpr o = dim(2 + i), k = dim(3 + spatial + i);
      inputExprs.push_back(o * strides[i] + k * dilations[i]);
      weightExprs.push_back(k);
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(numLoops, 0, inputExprs, ctx),
        AffineMap::get(numLoops, 0, weightExprs, ctx),
        AffineMap::getMultiDimIdentityMap(numLoops, ctx).getMajorSubMap(rank)};
    SmallVector<utils::IteratorType> iterators(numLoops,
                                               utils::IteratorType::reduction);
    for (int64_t d = 0; d < rank; ++d)
      iterators[d] = utils::IteratorType::parallel;
    Value init = filledTensor(rewriter, loc, type.getShape(), acc, 0);
    Value sum =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{input, op.getWeight()},
            init, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange a) {
              linalg::YieldOp::create(
                  b, l, multiplyAdd(b, l, a, elementType, elementType, acc));
            })
            .getResult(0);
    Value bias = op.getBias();
    SmallVector<Value> operands = {sum};
    SmallVector<AffineMap> epilogueMaps = {
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    if (bias) {
      operands.push_back(bias);
      epilogueMaps.push_back(AffineMap::get(rank, 0, {dim(1)}, ctx));
    }
    epilogueMaps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
    Value out = emptyTensor(rewriter, loc, type.getShape(), elementType);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, out.getType(), operands, out, epilogueMaps,
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value v = a[0];
              if (bias)
                v = arith::AddFOp::create(
                    b, l, v, convertScalar(b, l, a[1], elementType, acc));
              linalg::YieldOp::create(b, l,
                                      convertScalar(b, l, v, acc, elementType));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LinearPattern : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType outType = op.getOutput().getType();
    unsigned rank = outType.getRank();
    unsigned numLoops = rank + 1;
    AffineExpr k = getAffineDimExpr(rank, ctx),
               n = getAffineDimExpr(rank - 1, ctx);
    SmallVector<AffineExpr> inputExprs;
    for (unsigned d = 0; d + 1 < rank; ++d)
      inputExprs.push_back(getAffineDimExpr(d, ctx));
    inputExprs.push_back(k);
    bool kn = op.getWeightLayout() == WeightLayout::KN;
    SmallVector<AffineMap> maps = {
        AffineMap::get(numLoops, 0, inputExprs, ctx),
        AffineMap::get(numLoops, 0,
                       kn ? SmallVector<AffineExpr>{k, n}
                          : SmallVector<AffineExpr>{n, k},
                       ctx),
        AffineMap::getMultiDimIdentityMap(numLoops, ctx).getMajorSubMap(rank)};
    SmallVector<utils::IteratorType> iterators(numLoops,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    if (op.isBlockScaled()) {
      Value product = reshapeTensor(
          rewriter, loc, mte::buildBlockScaledProduct(rewriter, op).getResult(0),
          outType.getShape());
      rewriter.replaceOp(op, mte::buildLinearEpilogue(rewriter, op, product));
      return success();
    }
    Type inElt = inputType.getElementType();
    Type wElt = op.getWeight().getType().getElementType();
    Type acc = inElt.isF64() ? inElt : rewriter.getF32Type();
    Value init = filledTensor(rewriter, loc, outType.getShape(), acc, 0);
    Value product =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(),
            ValueRange{op.getInput(), op.getWeight()}, init, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange a) {
              linalg::YieldOp::create(b, l,
                                      multiplyAdd(b, l, a, inElt, wElt, acc));
            })
            .getResult(0);
    Value result = mte::buildLinearEpilogue(rewriter, op, product);
    if (op.hasFp8Output())
      rewriter.replaceOp(op, mte::buildFp8Output(rewriter, op, result));
    else
      rewriter.replaceOp(op, result);
    return success();
  }
};

struct AttentionPattern : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType qType = op.getQuery().getType();
    RankedTensorType kType = op.getKey().getType();
    RankedTensorType vType = op.getValue().getType();
    Type t = qType.getElementType();
    Type c = computeType(t);
    int64_t batch = qType.getDimSize(0), sq = qType.getDimSize(1),
            skv = kType.getDimSize(1);
    int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads();
    int64_t dv = vType.getDimSize(2) / kvHeads;
    int64_t group = heads / kvHeads;
    auto [q, k, v] = mte::unpackAttentionHeads(rewriter, op);

    // scores[b, h, i, j] = scale * sum_d q[b, i, h, d] * k[b, j, h / g, d].
    AffineExpr b0 = getAffineDimExpr(0, ctx), h = getAffineDimExpr(1, ctx),
               i = getAffineDimExpr(2, ctx), j = getAffineDimExpr(3, ctx),
               e = getAffineDimExpr(4, ctx);
    SmallVector<AffineMap> scoreMaps = {
        AffineMap::get(5, 0, {b0, i, h, e}, ctx),
        AffineMap::get(5, 0, {b0, j, h.floorDiv(group), e}, ctx),
        AffineMap::get(5, 0, {b0, h, i, j}, ctx)};
    SmallVector<utils::IteratorType> scoreIterators(
        5, utils::IteratorType::parallel);
    scoreIterators[4] = utils::IteratorType::reduction;
    SmallVector<int64_t> scoreShape = {batch, heads, sq, skv};
    Value zeros = filledTensor(rewriter, loc, scoreShape, c, 0);
    Value scores =
        linalg::GenericOp::create(
            rewriter, loc, zeros.getType(), ValueRange{q, k}, zeros, scoreMaps,
            scoreIterators,
            [&](OpBuilder &bb, Location l, ValueRange a) {
              Value x = convertScalar(bb, l, a[0], t, c);
              Value y = convertScalar(bb, l, a[1], t, c);
              linalg::YieldOp::create(
                  bb, l,
                  arith::AddFOp::create(bb, l, a[2],
                                        arith::MulFOp::create(bb, l, x, y))
                      .getResult());
            })
            .getResult(0);
    Value probs = mte::buildAttentionProbabilities(rewriter, loc, op, scores);

    // out[b, i, h, e] = sum_j probs[b, h, i, j] * v[b, j, h / g, e].
    SmallVector<AffineMap> outMaps = {
        AffineMap::get(5, 0, {b0, h, i, j}, ctx),
        AffineMap::get(5, 0, {b0, j, h.floorDiv(group), e}, ctx),
        AffineMap::get(5, 0, {b0, i, h, e}, ctx)};
    SmallVector<utils::IteratorType> outIterators(
        5, utils::IteratorType::parallel);
    outIterators[3] = utils::IteratorType::reduction;
    // Loop order (b, h, i, j, e) with j reduced: shapes come from the maps.
    Value init = filledTensor(rewriter, loc, {batch, sq, heads, dv}, c, 0);
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{probs, v}, init, outMaps,
            outIterators,
            [&](OpBuilder &bb, Location l, ValueRange a) {
              Value y = convertScalar(bb, l, a[1], t, c);
              linalg::YieldOp::create(
                  bb, l,
                  arith::AddFOp::create(bb, l, a[2],
                                        arith::MulFOp::create(bb, l, a[0], y))
                      .getResult());
            })
            .getResult(0);
    out = castTensor(rewriter, loc, out, t);
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, out, op.getType().getShape()));
    return success();
  }
};

} // namespace

void mte::populateTransformerContractionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MatmulPattern, LinearPattern, AttentionPattern, ConvPattern>(
      patterns.getContext());
}

mte::AttentionHeads mte::unpackAttentionHeads(OpBuilder &b, AttentionOp op) {
  Location loc = op.getLoc();
  RankedTensorType qType = op.getQuery().getType();
  RankedTensorType kType = op.getKey().getType();
  RankedTensorType vType = op.getValue().getType();
  int64_t batch = qType.getDimSize(0), sq = qType.getDimSize(1),
          skv = kType.getDimSize(1);
  int64_t heads = op.getNumHeads(), kvHeads = op.getNumKvHeads();
  int64_t d = qType.getDimSize(2) / heads;
  int64_t dv = vType.getDimSize(2) / kvHeads;
  return {reshapeTensor(b, loc, op.getQuery(), {batch, sq, heads, d}),
          reshapeTensor(b, loc, op.getKey(), {batch, skv, kvHeads, d}),
          reshapeTensor(b, loc, op.getValue(), {batch, skv, kvHeads, dv})};
}

/// The value of an f32 constant that holds one value (a scalar, or a splat
/// per-channel scale).
static std::optional<float> constantScale(Value scale) {
  DenseElementsAttr value;
  if (!scale || !matchPattern(scale, m_Constant(&value)) ||
      !value.getElementType().isF32() || !value.isSplat())
    return std::nullopt;
  return value.getSplatValue<APFloat>().convertToFloat();
}

/// `scales` [R, C] with zero columns appended up to a multiple of 4: folded
/// when it is a constant.
static Value padColumnsToFour(OpBuilder &b, Location loc, Value scales) {
  auto type = cast<RankedTensorType>(scales.getType());
  int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
  int64_t padded = llvm::alignTo(columns, 4);
  if (padded == columns)
    return scales;
  auto paddedType = RankedTensorType::get({rows, padded}, b.getF32Type());
  DenseElementsAttr value;
  if (matchPattern(scales, m_Constant(&value))) {
    SmallVector<float> data(rows * padded, 0.0f);
    for (auto [i, v] : llvm::enumerate(value.getValues<float>()))
      data[(i / columns) * padded + i % columns] = v;
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(paddedType, ArrayRef<float>(data)));
  }
  Value zeros = filledTensor(b, loc, {rows, padded}, b.getF32Type(), 0);
  SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)),
      strides(2, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(rows),
                                     b.getIndexAttr(columns)};
  return tensor::InsertSliceOp::create(b, loc, scales, zeros, offsets, sizes,
                                       strides);
}

linalg::GenericOp mte::buildBlockScaledProduct(OpBuilder &b, LinearOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  RankedTensorType inputType = op.getInput().getType();
  int64_t k = inputType.getShape().back();
  int64_t n = op.getWeight().getType().getDimSize(0);
  int64_t m = inputType.getNumElements() / k, blocks = k / kFp8BlockSize;
  Value input = reshapeTensor(b, loc, op.getInput(), {m, k});
  // cuBLASLt reads 1-D block scales with the rows (its N) innermost.
  Value rowScales = reshapeTensor(b, loc, op.getInputScale(), {m, blocks});
  Value inputScales =
      linalg::TransposeOp::create(
          b, loc, rowScales,
          emptyTensor(b, loc, {blocks, m}, b.getF32Type()),
          ArrayRef<int64_t>{1, 0})
          .getResult()[0];
  Value weightScales = padColumnsToFour(b, loc, op.getWeightScale());
  AffineExpr dm = getAffineDimExpr(0, ctx), dn = getAffineDimExpr(1, ctx),
             dk = getAffineDimExpr(2, ctx);
  AffineExpr block = dk.floorDiv(kFp8BlockSize);
  SmallVector<AffineMap> maps = {
      AffineMap::get(3, 0, {dm, dk}, ctx), AffineMap::get(3, 0, {dn, dk}, ctx),
      AffineMap::get(3, 0, {block, dm}, ctx),
      AffineMap::get(3, 0, {dn.floorDiv(kFp8BlockSize), block}, ctx),
      AffineMap::get(3, 0, {dm, dn}, ctx)};
  Type f32 = b.getF32Type();
  Type inElt = inputType.getElementType();
  Type wElt = op.getWeight().getType().getElementType();
  Value init = filledTensor(b, loc, {m, n}, f32, 0);
  return linalg::GenericOp::create(
      b, loc, init.getType(),
      ValueRange{input, op.getWeight(), inputScales, weightScales}, init, maps,
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction},
      [&](OpBuilder &bb, Location l, ValueRange a) {
        // fp8 x fp8 is exact in f32, and so are the power-of-two scales.
        Value x = convertScalar(bb, l, a[0], inElt, f32);
        Value w = convertScalar(bb, l, a[1], wElt, f32);
        Value scale = arith::MulFOp::create(bb, l, a[2], a[3]);
        Value term = arith::MulFOp::create(
            bb, l, arith::MulFOp::create(bb, l, x, w), scale);
        linalg::YieldOp::create(bb, l,
                                arith::AddFOp::create(bb, l, a[4], term)
                                    .getResult());
      });
}

Value mte::buildLinearEpilogue(OpBuilder &b, LinearOp op, Value product,
                               float *foldedScale) {
  Location loc = op.getLoc();
  RankedTensorType outType = op.getOutput().getType();
  Type acc = cast<RankedTensorType>(product.getType()).getElementType();
  // An E4M3 output is rounded from the f32 value, by the caller.
  if (op.hasFp8Output())
    outType = RankedTensorType::get(outType.getShape(), acc);
  SmallVector<Value> epilogueInputs = {product};
  Value bias = op.getBias(), residual = op.getResidual();
  Value inputScale = op.getInputScale(), weightScale = op.getWeightScale();
  // Block scales are inside the product.
  if (op.isBlockScaled())
    inputScale = weightScale = nullptr;
  if (foldedScale) {
    *foldedScale = 1.0f;
    for (Value *scale : {&inputScale, &weightScale})
      if (std::optional<float> value = constantScale(*scale)) {
        *foldedScale *= *value;
        *scale = nullptr;
      }
  }
  if (inputScale)
    epilogueInputs.push_back(inputScale);
  if (weightScale)
    epilogueInputs.push_back(weightScale);
  if (bias)
    epilogueInputs.push_back(bias);
  if (residual)
    epilogueInputs.push_back(residual);
  Type outElt = outType.getElementType();
  Type biasElt = bias ? getElementTypeOrSelf(bias.getType()) : Type();
  Type residualElt = residual ? getElementTypeOrSelf(residual.getType()) : Type();
  Activation act = op.getActivation();
  return elementwise(
      b, loc, outType, epilogueInputs,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value v = a[0];
        unsigned next = 1;
        // The dequantisation factors of fp8 operands, as one product.
        Value scale;
        for (Value s : {inputScale, weightScale})
          if (s) {
            Value factor = a[next++];
            scale = scale ? arith::MulFOp::create(bb, l, scale, factor)
                          : factor;
          }
        if (foldedScale && *foldedScale != 1.0f) {
          Value folded = constantOf(bb, l, bb.getF32Type(), *foldedScale);
          scale = scale ? arith::MulFOp::create(bb, l, scale, folded) : folded;
        }
        if (scale)
          v = arith::MulFOp::create(bb, l, v,
                                    convertScalar(bb, l, scale, bb.getF32Type(),
                                                  acc));
        if (bias)
          v = arith::AddFOp::create(
              bb, l, v, convertScalar(bb, l, a[next++], biasElt, acc));
        v = applyActivation(bb, l, v, act);
        if (residual)
          v = arith::AddFOp::create(
              bb, l, v, convertScalar(bb, l, a[next++], residualElt, acc));
        return convertScalar(bb, l, v, acc, outElt);
      });
}

SmallVector<Value> mte::buildFp8Output(OpBuilder &b, LinearOp op, Value y) {
  Location loc = op.getLoc();
  SmallVector<Value> results = {QuantizeOp::create(
      b, loc, op.getOutput().getType(), y, op.getOutputScale(),
      /*saturate=*/true, /*multiply=*/true)};
  if (op.getOutputAmax())
    results.push_back(AmaxOp::create(b, loc, op.getOutputAmax().getType(), y));
  return results;
}

Value mte::buildAttentionProbabilities(OpBuilder &b, Location loc,
                                       AttentionOp op, Value scores) {
  auto scoreType = cast<RankedTensorType>(scores.getType());
  Type c = scoreType.getElementType();
  int64_t sq = scoreType.getDimSize(2), skv = scoreType.getDimSize(3);
  float scale = op.getScale().convertToFloat();
  bool causal = op.getCausal();
  Value mask = op.getMask();
  SmallVector<Value> maskInputs = {scores};
  if (mask)
    maskInputs.push_back(mask);
  Type maskElt =
      mask ? cast<RankedTensorType>(mask.getType()).getElementType() : Type();
  Value masked = elementwise(
      b, loc, scoreType, maskInputs,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value s =
            arith::MulFOp::create(bb, l, a[0], constantOf(bb, l, c, scale));
        if (std::optional<APFloat> softcap = op.getSoftcap()) {
          Value cap = constantOf(bb, l, c, softcap->convertToFloat());
          s = arith::MulFOp::create(
              bb, l, cap,
              math::TanhOp::create(bb, l, arith::DivFOp::create(bb, l, s, cap)));
        }
        Value negInf =
            constantOf(bb, l, c, -std::numeric_limits<double>::infinity());
        if (mask) {
          if (maskElt.isInteger(1))
            s = arith::SelectOp::create(bb, l, a[1], s, negInf);
          else
            s = arith::AddFOp::create(bb, l, s,
                                      convertScalar(bb, l, a[1], maskElt, c));
        }
        if (causal) {
          // The last query sees every key: j <= i + (skv - sq).
          Value row = linalg::IndexOp::create(bb, l, 2);
          Value col = linalg::IndexOp::create(bb, l, 3);
          Value limit = arith::AddIOp::create(
              bb, l, row, arith::ConstantIndexOp::create(bb, l, skv - sq));
          Value visible = arith::CmpIOp::create(
              bb, l, arith::CmpIPredicate::sle, col, limit);
          s = arith::SelectOp::create(bb, l, visible, s, negInf);
        }
        return s;
      });
  return softmaxLast(b, loc, masked, /*zeroEmptyRows=*/true);
}
