//===- Reductions.cpp - reductions and norms to linalg ----------------------===//
//
// Reductions, softmax, cumulative sums and the normalisations, which reduce
// over trailing dimensions in f32 (for half types) and round once.
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include <cmath>

using namespace mlir;
using namespace mte::lowering;
using namespace mte::transformer;

namespace {

/// Moves the dimensions in `reduced` to the back, so reductions only ever
/// run over trailing dimensions.
Value moveToBack(OpBuilder &b, Location loc, Value input,
                 const llvm::SmallBitVector &reduced) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!reduced.test(d))
      perm.push_back(d);
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (reduced.test(d))
      perm.push_back(d);
  if (llvm::equal(perm, llvm::seq<int64_t>(0, type.getRank())))
    return input;
  SmallVector<int64_t> shape =
      llvm::map_to_vector(perm, [&](int64_t p) { return type.getDimSize(p); });
  Value init = emptyTensor(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, input, init, perm).getResult()[0];
}

struct ReducePattern : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getInput().getType();
    int64_t rank = type.getRank();
    llvm::SmallBitVector reduced(rank, op.getAxes().empty());
    for (int64_t axis : op.getAxes())
      reduced.set(*normalizeAxis(axis, rank));
    Value input = moveToBack(rewriter, loc, op.getInput(), reduced);
    int64_t kept = rank - reduced.count();
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (reduced.test(d))
        count *= type.getDimSize(d);
    Type elementType = type.getElementType();
    Type acc = signlessType(computeType(elementType));
    auto [initValue, combine] = reduction(op.getKind(), acc);
    Value result =
        reduceTrailing(rewriter, loc, input, kept, acc, initValue, combine);
    if (op.getKind() == ReduceKind::Mean) {
      Type t = acc;
      result = elementwise(
          rewriter, loc, cast<RankedTensorType>(result.getType()), result,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value n = constantOf(b, l, t, static_cast<double>(count));
            return isFloat(t)
                       ? arith::DivFOp::create(b, l, a[0], n).getResult()
                       : arith::DivSIOp::create(b, l, a[0], n).getResult();
          });
    }
    result = castTensor(rewriter, loc, result, signlessType(elementType));
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, result, op.getType().getShape()));
    return success();
  }
};

struct SoftmaxPattern : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    int64_t axis = *normalizeAxis(op.getAxis(), rank);
    llvm::SmallBitVector last(rank);
    last.set(axis);
    Value moved = moveToBack(rewriter, loc, op.getInput(), last);
    Value result = softmaxLast(rewriter, loc, moved);
    if (axis != rank - 1) {
      // Undo the move: the axis sits at the back.
      SmallVector<int64_t> perm;
      for (int64_t d = 0; d < rank; ++d)
        perm.push_back(d < axis ? d : d == axis ? rank - 1 : d - 1);
      Value init =
          emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
      result = linalg::TransposeOp::create(rewriter, loc, result, init, perm)
                   .getResult()[0];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// CumSum as one reduction over a second copy of the axis: result[.., i, ..]
/// adds input[.., j, ..] for the j the mode keeps (j <= i, j < i, j >= i,
/// j > i). Quadratic in the axis length, but every output element is
/// independent, which suits the GPU, and Transformer exports take it over
/// token positions (RoBERTa-style position ids from a padding mask).
struct CumSumPattern : OpRewritePattern<CumSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumSumOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    int64_t axis = *normalizeAxis(op.getAxis(), rank);
    Type elementType = type.getElementType();
    Type acc = signlessType(computeType(elementType));
    // Loops: the result's dimensions, then j.
    SmallVector<AffineExpr> inputExprs;
    for (int64_t d = 0; d < rank; ++d)
      inputExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank + 1, 0, inputExprs, ctx),
        AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank + 1,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    arith::CmpIPredicate keep =
        op.getReverse()
            ? (op.getExclusive() ? arith::CmpIPredicate::sgt
                                 : arith::CmpIPredicate::sge)
            : (op.getExclusive() ? arith::CmpIPredicate::slt
                                 : arith::CmpIPredicate::sle);
    Value init = filledTensor(rewriter, loc, type.getShape(), acc, 0);
    Value sum =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), op.getInput(), init, maps,
            iterators,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value i = linalg::IndexOp::create(b, l, axis);
              Value j = linalg::IndexOp::create(b, l, rank);
              Value x = convertScalar(b, l, a[0], elementType, acc);
              Value kept = arith::SelectOp::create(
                  b, l, arith::CmpIOp::create(b, l, keep, j, i), x,
                  constantOf(b, l, acc, 0));
              Value s = isFloat(acc)
                            ? arith::AddFOp::create(b, l, a[1], kept).getResult()
                            : arith::AddIOp::create(b, l, a[1], kept).getResult();
              linalg::YieldOp::create(b, l, s);
            })
            .getResult(0);
    rewriter.replaceOp(op,
                       castTensor(rewriter, loc, sum, signlessType(elementType)));
    return success();
  }
};

/// TopK by ranks. rank(i) counts the elements that come before element i
/// along the axis: larger ones (smaller ones without `largest`), and equal
/// ones at a lower index, so the ranks are a permutation of 0..n-1. Output
/// r takes the one i whose rank is r, and its value. NaN compares above
/// every number and equal to NaN. Quadratic in the axis length but every
/// output independent, which suits the GPU; Transformer exports take it
/// over a handful of experts (MoE routing) or one step's vocabulary.
struct TopKPattern : OpRewritePattern<TopKOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Whether `a` comes before `b` in the order (`a` larger, or smaller
  /// without `largest`), NaN above every number.
  static Value precedes(OpBuilder &b, Location l, Value a, Value x,
                        Type element, bool largest) {
    if (!largest)
      std::swap(a, x);
    if (!isFloat(element))
      return arith::CmpIOp::create(b, l,
                                   isUnsigned(element)
                                       ? arith::CmpIPredicate::ugt
                                       : arith::CmpIPredicate::sgt,
                                   a, x);
    // a > x, or a is NaN and x is not.
    Value greater = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a, x);
    Value aNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, a, a);
    Value xNumber = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ORD, x, x);
    return arith::OrIOp::create(
        b, l, greater, arith::AndIOp::create(b, l, aNan, xNumber));
  }

  static Value equal(OpBuilder &b, Location l, Value a, Value x, Type element) {
    if (!isFloat(element))
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a, x);
    Value same = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a, x);
    Value bothNan = arith::AndIOp::create(
        b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, a, a),
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x));
    return arith::OrIOp::create(b, l, same, bothNan);
  }

  LogicalResult matchAndRewrite(TopKOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType inputType = op.getInput().getType();
    if (!inputType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t rank = inputType.getRank();
    int64_t axis = *normalizeAxis(op.getAxis(), rank);
    Type element = inputType.getElementType();
    Type i64 = rewriter.getI64Type();
    bool largest = op.getLargest();
    Value input = bitcastElements(rewriter, loc, op.getInput(),
                                  signlessType(element));

    // rank[.., i, ..] = sum over j of precedes(x_j, x_i) or (equal, j < i).
    // Loops: the input's dimensions (i on the axis), then j.
    SmallVector<AffineExpr> atJ;
    for (int64_t d = 0; d < rank; ++d)
      atJ.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank);
    SmallVector<utils::IteratorType> iterators(rank + 1,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    Value zeros = filledTensor(rewriter, loc, inputType.getShape(), i64, 0);
    Value ranks =
        linalg::GenericOp::create(
            rewriter, loc, zeros.getType(), ValueRange{input, input}, zeros,
            ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, atJ, ctx), identity,
                                identity},
            iterators,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value i = linalg::IndexOp::create(b, l, axis);
              Value j = linalg::IndexOp::create(b, l, rank);
              Value earlier = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::ult, j, i);
              Value before = arith::OrIOp::create(
                  b, l, precedes(b, l, a[0], a[1], element, largest),
                  arith::AndIOp::create(b, l, equal(b, l, a[0], a[1], element),
                                        earlier));
              Value one = arith::ExtUIOp::create(b, l, i64, before);
              linalg::YieldOp::create(
                  b, l, ValueRange{arith::AddIOp::create(b, l, a[2], one)});
            })
            .getResult(0);

    // indices[.., r, ..] = the i whose rank is r (sum of i over rank == r).
    RankedTensorType indicesType = op.getIndices().getType();
    Value init = filledTensor(rewriter, loc, indicesType.getShape(), i64, 0);
    Value indices =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ranks, init,
            ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, atJ, ctx),
                                identity},
            iterators,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value r = arith::IndexCastOp::create(
                  b, l, i64, linalg::IndexOp::create(b, l, axis));
              Value i = arith::IndexCastOp::create(
                  b, l, i64, linalg::IndexOp::create(b, l, rank));
              Value hit =
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[0], r);
              Value add = arith::SelectOp::create(b, l, hit, i,
                                                  constantOf(b, l, i64, 0));
              linalg::YieldOp::create(
                  b, l, ValueRange{arith::AddIOp::create(b, l, a[1], add)});
            })
            .getResult(0);

    // values[.., r, ..] = input[.., indices[.., r, ..], ..].
    Value values = elementwise(
        rewriter, loc,
        RankedTensorType::get(indicesType.getShape(), signlessType(element)),
        indices, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d)
            coords.push_back(
                d == axis ? arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                       a[0])
                                .getResult()
                          : linalg::IndexOp::create(b, l, d).getResult());
          return tensor::ExtractOp::create(b, l, input, coords);
        });
    rewriter.replaceOp(op, {bitcastElements(rewriter, loc, values, element),
                            indices});
    return success();
  }
};

/// layer_norm and rms_norm over the dimensions from `axis`, in f32.
template <typename OpTy> struct NormPattern : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr bool isLayerNorm = std::is_same_v<OpTy, LayerNormOp>;
    Location loc = op.getLoc();
    RankedTensorType type = op.getInput().getType();
    Type t = type.getElementType();
    Type c = computeType(t);
    int64_t rank = type.getRank();
    int64_t axis = *normalizeAxis(op.getAxis(), rank);
    int64_t count = 1;
    for (int64_t d = axis; d < rank; ++d)
      count *= type.getDimSize(d);
    auto fullC = RankedTensorType::get(type.getShape(), c);

    Value sum = op.getInput();
    if (Value residual = op.getResidual())
      sum = elementwise(
          rewriter, loc, type, ValueRange{sum, residual},
          [&](OpBuilder &b, Location l, ValueRange a) {
            return viaComputeType(
                b, l, a, t, [](OpBuilder &nb, Location nl, ValueRange w) {
                  return arith::AddFOp::create(nb, nl, w[0], w[1]).getResult();
                });
          });
    auto statShape = [&](Value stat) {
      SmallVector<int64_t> shape(type.getShape().take_front(axis));
      shape.append(rank - axis, 1);
      return reshapeTensor(rewriter, loc, stat, shape);
    };
    Combiner add = combine<arith::AddFOp>;
    Value centered = castTensor(rewriter, loc, sum, c);
    if constexpr (isLayerNorm) {
      Value mean = reduceTrailing(rewriter, loc, sum, axis, c, 0, add);
      mean = statShape(mean);
      centered = elementwise(
          rewriter, loc, fullC, ValueRange{centered, mean},
          [&](OpBuilder &b, Location l, ValueRange a) {
            Value cnt = constantOf(b, l, c, count);
            return arith::SubFOp::create(b, l, a[0],
                                         arith::DivFOp::create(b, l, a[1], cnt))
                .getResult();
          });
    }
    Value sq =
        reduceTrailing(rewriter, loc, centered, axis, c, 0, add,
                       [](OpBuilder &b, Location l, Value x) {
                         return arith::MulFOp::create(b, l, x, x).getResult();
                       });
    sq = statShape(sq);
    float epsilon = op.getEpsilon().convertToFloat();
    SmallVector<Value> inputs = {centered, sq, op.getScale()};
    Value bias;
    if constexpr (isLayerNorm)
      bias = op.getBias();
    if (bias)
      inputs.push_back(bias);
    RankedTensorType outType = op.getOutput().getType();
    Type outElt = outType.getElementType();
    Value y = elementwise(
        rewriter, loc, outType, inputs,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value var =
              arith::DivFOp::create(b, l, a[1], constantOf(b, l, c, count));
          Value inv = math::RsqrtOp::create(
              b, l,
              arith::AddFOp::create(b, l, var, constantOf(b, l, c, epsilon)));
          Value v = arith::MulFOp::create(
              b, l, arith::MulFOp::create(b, l, a[0], inv),
              convertScalar(b, l, a[2], t, c));
          if (bias)
            v = arith::AddFOp::create(b, l, v, convertScalar(b, l, a[3], t, c));
          return convertScalar(b, l, v, c, outElt);
        });
    SmallVector<Value> results = {y};
    if (op.getResidual())
      results.push_back(sum);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mte::populateTransformerReductionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ReducePattern, SoftmaxPattern, CumSumPattern, TopKPattern,
               NormPattern<LayerNormOp>, NormPattern<RMSNormOp>>(
      patterns.getContext());
}
