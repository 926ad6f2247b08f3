//===- Quantization.cpp - fp8 ops to linalg ---------------------------------===//
//
// The fp8 ops: quantize (per tensor or per block) and dequantize, amax and
// block_amax, the scales from them, and delayed scaling's update of the
// amax history and scales.
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include <cfloat>
#include <cmath>

using namespace mlir;
using namespace mte::lowering;
using namespace mte::transformer;

namespace {

/// The column maxima of `rows` [R, C] (f32), or of their absolute values
/// in `inType` when `abs`: one parallel loop over the C columns, each
/// reading a strided column, so that neighbouring iterations read
/// neighbouring elements.
Value columnMax(OpBuilder &b, Location loc, Value rows, Type inType,
                bool abs) {
  auto type = cast<RankedTensorType>(rows.getType());
  MLIRContext *ctx = b.getContext();
  AffineExpr c = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  Value init = filledTensor(b, loc, {type.getDimSize(1)}, b.getF32Type(), 0);
  return linalg::GenericOp::create(
             b, loc, init.getType(), rows, init,
             {AffineMap::get(2, 0, {r, c}, ctx), AffineMap::get(2, 0, {c}, ctx)},
             {utils::IteratorType::parallel, utils::IteratorType::reduction},
             [&](OpBuilder &bb, Location l, ValueRange a) {
               Value x = a[0];
               if (abs)
                 x = math::AbsFOp::create(
                     bb, l, convertScalar(bb, l, x, inType, bb.getF32Type()));
               linalg::YieldOp::create(
                   bb, l, arith::MaximumFOp::create(bb, l, a[1], x).getResult());
             })
      .getResult(0);
}

/// The most values amax's last level reads in one unrolled loop.
constexpr int64_t kUnrolledAmax = 64;

/// amax as a tree of column maxima: while more than 64 values remain and a
/// power of two P (at most 2^20) divides their count leaving at least 16
/// rows, the [count / P, P] view is reduced to its P column maxima (the
/// largest such P); one loop takes the rest. max is exact in any order, so
/// this is the same value as one pass, and each level is one wide parallel
/// loop (on CUDA a kernel of P threads, each reading a few rows) instead of
/// a single thread reading everything; the last (at most kUnrolledAmax
/// values) is one rank-0 loop.
struct AmaxPattern : OpRewritePattern<AmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getInput().getType();
    Type inType = type.getElementType();
    int64_t count = type.getNumElements();
    Value values = reshapeTensor(rewriter, loc, op.getInput(), {count});
    bool abs = true; // the first level takes |x|
    while (count > 64) {
      int64_t columns = 1;
      while (columns < (int64_t(1) << 20) && count % (columns * 2) == 0 &&
             count / (columns * 2) >= 16)
        columns *= 2;
      if (columns < 16)
        break;
      Value rows =
          reshapeTensor(rewriter, loc, values, {count / columns, columns});
      values = columnMax(rewriter, loc, rows, inType, abs);
      abs = false;
      count = columns;
    }
    if (count <= kUnrolledAmax) {
      // The last few values as one rank-0 loop that reads them all: an
      // elementwise op, which fuses with the fp8_scale that reads it.
      Value init = emptyTensor(rewriter, loc, {}, rewriter.getF32Type());
      Type valuesType =
          cast<RankedTensorType>(values.getType()).getElementType();
      auto generic = linalg::GenericOp::create(
          rewriter, loc, init.getType(), ValueRange{}, init,
          AffineMap::get(0, 0, rewriter.getContext()),
          ArrayRef<utils::IteratorType>{},
          [&](OpBuilder &b, Location l, ValueRange) {
            Type f32 = b.getF32Type();
            Value result = constantOf(b, l, f32, 0);
            for (int64_t i = 0; i < count; ++i) {
              Value at = arith::ConstantIndexOp::create(b, l, i);
              Value x = convertScalar(
                  b, l, tensor::ExtractOp::create(b, l, values, at),
                  valuesType, f32);
              if (abs)
                x = math::AbsFOp::create(b, l, x);
              result = arith::MaximumFOp::create(b, l, result, x);
            }
            linalg::YieldOp::create(b, l, result);
          });
      rewriter.replaceOp(op, generic.getResult(0));
      return success();
    }
    // reduceTrailing converts each element to f32 before the map.
    Value result = reduceTrailing(
        rewriter, loc, values, 0, rewriter.getF32Type(), 0,
        combine<arith::MaximumFOp>, [&](OpBuilder &b, Location l, Value x) {
          return abs ? math::AbsFOp::create(b, l, x).getResult() : x;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// quantize: saturate(x / scale), or saturate(x * scale) when it
/// multiplies, in fp8; dequantize: f32(q) * scale.
struct QuantizePattern : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type in = op.getInput().getType().getElementType();
    Type out = op.getType().getElementType();
    bool saturate = op.getSaturate(), multiply = op.getMultiply();
    // Block scales [..., G]: the input viewed as [..., G, K / G] and the
    // scales as [..., G, 1], which broadcasts over each block.
    Value input = op.getInput(), scale = op.getScale();
    RankedTensorType resultType = op.getType();
    if (op.isBlockScaled()) {
      SmallVector<int64_t> blocks(op.getScale().getType().getShape());
      blocks.push_back(1);
      scale = reshapeTensor(rewriter, loc, scale, blocks);
      blocks.back() = op.getBlockLength();
      input = reshapeTensor(rewriter, loc, input, blocks);
      resultType = RankedTensorType::get(blocks, out);
    }
    Value result =
        elementwise(rewriter, loc, resultType, ValueRange{input, scale},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value wide =
                          convertScalar(b, l, a[0], in, b.getF32Type());
                      return quantizeScalar(b, l, wide, a[1], out, multiply,
                                            saturate);
                    });
    if (op.isBlockScaled())
      result = reshapeTensor(rewriter, loc, result, op.getType().getShape());
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// block_amax: max |x| over the last dimension of the [..., K / B, B] view.
struct BlockAmaxPattern : OpRewritePattern<BlockAmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BlockAmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<int64_t> blocks(op.getType().getShape());
    blocks.push_back(op.getBlockSize());
    Value rows = reshapeTensor(rewriter, loc, op.getInput(), blocks);
    Value result = reduceTrailing(
        rewriter, loc, rows, blocks.size() - 1, rewriter.getF32Type(), 0,
        combine<arith::MaximumFOp>, [](OpBuilder &b, Location l, Value x) {
          return math::AbsFOp::create(b, l, x).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DequantizePattern : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    Type in = op.getInput().getType().getElementType();
    Type out = op.getType().getElementType();
    Value result =
        elementwise(rewriter, op.getLoc(), op.getType(),
                    ValueRange{op.getInput(), op.getScale()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Type f32 = b.getF32Type();
                      Value x = arith::MulFOp::create(
                          b, l, convertScalar(b, l, a[0], in, f32), a[1]);
                      return convertScalar(b, l, x, f32, out);
                    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// TransformerEngine's scale from an amax (f32 scalars): `scaledMax /
/// amax` (at most the largest f32) when the amax is finite and positive,
/// else `fallback`.
Value scaleFromAmax(OpBuilder &b, Location l, Value amax, double scaledMax,
                    Value fallback) {
  Type f32 = b.getF32Type();
  Value usable = arith::AndIOp::create(
      b, l,
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, amax,
                            constantOf(b, l, f32, 0)),
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, amax,
                            constantOf(b, l, f32, INFINITY)));
  Value quotient =
      arith::DivFOp::create(b, l, constantOf(b, l, f32, scaledMax), amax);
  Value largest = constantOf(b, l, f32, FLT_MAX);
  quotient = arith::MinimumFOp::create(b, l, quotient, largest);
  return arith::SelectOp::create(b, l, usable, quotient, fallback);
}

/// fp8_scale as one loop with two results (rank 0 for a per-tensor scale),
/// so that both scales (and, through elementwise fusion, the amax's last
/// level) are one kernel.
struct Fp8ScalePattern : OpRewritePattern<Fp8ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Fp8ScaleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value source = op.getAmax() ? op.getAmax() : op.getDelayed();
    auto type = cast<RankedTensorType>(source.getType());
    SmallVector<Value> inputs = {source};
    Value init = emptyTensor(rewriter, loc, type.getShape(), f32);
    SmallVector<AffineMap> maps(
        inputs.size() + 2,
        rewriter.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    float fp8Max = op.getFp8Max().convertToFloat();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType(), init.getType()}, inputs,
        ValueRange{init, init}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value one = constantOf(b, l, f32, 1);
          Value scale;
          if (op.getAmax()) {
            scale = scaleFromAmax(b, l, a[0], fp8Max, one);
          } else {
            // The state's scale while it is finite and positive.
            Value usable = arith::AndIOp::create(
                b, l,
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a[0],
                                      constantOf(b, l, f32, 0)),
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0],
                                      constantOf(b, l, f32, INFINITY)));
            scale = arith::SelectOp::create(b, l, usable, a[0], one);
          }
          if (op.getPowerOfTwo()) {
            // Sign and exponent only: the power of two at or below it.
            Type i32 = b.getI32Type();
            Value bits = arith::BitcastOp::create(b, l, i32, scale);
            Value mask = arith::ConstantIntOp::create(
                b, l, i32, int64_t(int32_t(0xFF800000u)));
            scale = arith::BitcastOp::create(
                b, l, f32, arith::AndIOp::create(b, l, bits, mask));
          }
          Value inverse =
              arith::DivFOp::create(b, l, constantOf(b, l, f32, 1), scale);
          linalg::YieldOp::create(b, l, ValueRange{scale, inverse});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// `value` [R, C] with the rows [offset, offset + count) of `rows` written
/// at row `at`.
Value insertRows(OpBuilder &b, Location loc, Value rows, int64_t offset,
                 int64_t count, Value into, int64_t at) {
  int64_t columns = cast<RankedTensorType>(rows.getType()).getDimSize(1);
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(count),
                                     b.getIndexAttr(columns)};
  Value part = tensor::ExtractSliceOp::create(
      b, loc, rows, {b.getIndexAttr(offset), b.getIndexAttr(0)}, sizes,
      strides);
  return tensor::InsertSliceOp::create(
      b, loc, part, into, {b.getIndexAttr(at), b.getIndexAttr(0)}, sizes,
      strides);
}

/// The column maxima of an amax history [L, T] in two levels when L is
/// long: the history viewed as [L1, L2 * T] (L = L1 * L2, L1 the largest
/// divisor up to sqrt(L)) reduced to [L2, T] by L2 * T parallel
/// iterations, then to [T]. A CUDA thread of one level reads L1 or L2
/// values, not all L of its column (TransformerEngine's default history,
/// 1024, is 32 x 32); max is exact in any order.
Value historyMax(OpBuilder &b, Location loc, Value history) {
  auto type = cast<RankedTensorType>(history.getType());
  int64_t length = type.getDimSize(0), tensors = type.getDimSize(1);
  Type f32 = b.getF32Type();
  int64_t outer = 1;
  for (int64_t d = 2; d * d <= length; ++d)
    if (length % d == 0)
      outer = d;
  if (length < 64 || outer < 8)
    return columnMax(b, loc, history, f32, /*abs=*/false);
  int64_t inner = length / outer;
  Value partial = columnMax(
      b, loc, reshapeTensor(b, loc, history, {outer, inner * tensors}), f32,
      /*abs=*/false);
  return columnMax(b, loc, reshapeTensor(b, loc, partial, {inner, tensors}),
                   f32, /*abs=*/false);
}

/// fp8_scale_update as the op defines it: the history with this run's
/// amaxes in row 0, its column maxima (or that row), the next scales from
/// them, and the history rolled into a fresh tensor (never in place: the
/// state it reads and the one it writes are different buffers).
struct Fp8ScaleUpdatePattern : OpRewritePattern<Fp8ScaleUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Fp8ScaleUpdateOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType historyType = op.getHistory().getType();
    int64_t length = historyType.getDimSize(0);
    int64_t tensors = historyType.getDimSize(1);
    Type f32 = rewriter.getF32Type();
    Value current = reshapeTensor(rewriter, loc, op.getAmax(), {1, tensors});
    Value history = insertRows(rewriter, loc, current, 0, 1, op.getHistory(),
                               /*at=*/0);
    Value window = op.getAlgorithm() == AmaxAlgorithm::Max
                       ? historyMax(rewriter, loc, history)
                       : op.getAmax();

    Value next = filledTensor(rewriter, loc, {length, tensors}, f32, 0);
    if (length > 2)
      next = insertRows(rewriter, loc, history, 2, length - 2, next, 1);
    if (length > 1)
      next = insertRows(rewriter, loc, current, 0, 1, next, length - 1);

    double scaledMax = std::ldexp(
        double(op.getFp8Max().convertToFloat()), -int(op.getMarginAttr().getInt()));
    Value scale = elementwise(
        rewriter, loc, op.getNextScale().getType(),
        ValueRange{window, op.getScale()},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return scaleFromAmax(b, l, a[0], scaledMax, a[1]);
        });
    rewriter.replaceOp(op, {next, scale});
    return success();
  }
};

} // namespace

void mte::populateTransformerQuantizationToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AmaxPattern, BlockAmaxPattern, QuantizePattern,
               DequantizePattern, Fp8ScalePattern, Fp8ScaleUpdatePattern>(
      patterns.getContext());
}
