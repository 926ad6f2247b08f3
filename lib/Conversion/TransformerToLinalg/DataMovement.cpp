//===- DataMovement.cpp - data-movement ops to linalg -----------------------===//
//
// Ops that move or select elements (transpose, reshape, expand, slice,
// concat, split, the gathers and ScatterND with their index checks) and the
// ones whose result the types already fix (shape, size, range,
// constant_of_shape), to tensor and linalg ops.
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include <cmath>

using namespace mlir;
using namespace mte::lowering;
using namespace mte::transformer;

namespace {

struct TransposePattern : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Value init = emptyTensor(rewriter, op.getLoc(), op.getType().getShape(),
                             signlessType(op.getType().getElementType()));
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       op.getInput(), init,
                                                       op.getPermutation())
                               .getResult()[0]);
    return success();
  }
};

struct ReshapePattern : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(), op.getInput(),
                                         op.getType().getShape()));
    return success();
  }
};

struct ExpandPattern : OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpandOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op,
        elementwise(rewriter, op.getLoc(), op.getType(), op.getInput(),
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

struct SlicePattern : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    if (llvm::all_of(op.getStrides(), [](int64_t s) { return s > 0; })) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, type, op.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
          op.getOffsets(), op.getSizes(), op.getStrides());
      return success();
    }
    // Negative strides (ONNX Slice with negative steps): read each element.
    Value input = op.getInput();
    ArrayRef<int64_t> offsets = op.getOffsets(), strides = op.getStrides();
    rewriter.replaceOp(
        op,
        elementwise(rewriter, loc, type, ValueRange{},
                    [&](OpBuilder &b, Location l, ValueRange) -> Value {
                      SmallVector<Value> coords;
                      for (int64_t d = 0; d < type.getRank(); ++d) {
                        Value i = linalg::IndexOp::create(b, l, d);
                        Value scaled = arith::MulIOp::create(
                            b, l, i,
                            arith::ConstantIndexOp::create(b, l, strides[d]));
                        coords.push_back(arith::AddIOp::create(
                            b, l, scaled,
                            arith::ConstantIndexOp::create(b, l, offsets[d])));
                      }
                      return tensor::ExtractOp::create(b, l, input, coords);
                    }));
    return success();
  }
};

struct ConcatPattern : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t axis = *normalizeAxis(op.getAxis(), type.getRank());
    Value result = emptyTensor(rewriter, loc, type.getShape(),
                               signlessType(type.getElementType()));
    int64_t offset = 0;
    for (Value input : op.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        rewriter.getIndexAttr(0));
      offsets[axis] = rewriter.getIndexAttr(offset);
      SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
          inputType.getShape(),
          [&](int64_t s) -> OpFoldResult { return rewriter.getIndexAttr(s); });
      SmallVector<OpFoldResult> strides(type.getRank(),
                                        rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result,
                                             offsets, sizes, strides);
      offset += inputType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SplitPattern : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getInput().getType();
    int64_t axis = *normalizeAxis(op.getAxis(), type.getRank());
    SmallVector<Value> results;
    int64_t offset = 0;
    for (Value result : op.getResults()) {
      auto resultType = cast<RankedTensorType>(result.getType());
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        rewriter.getIndexAttr(0));
      offsets[axis] = rewriter.getIndexAttr(offset);
      SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
          resultType.getShape(),
          [&](int64_t s) -> OpFoldResult { return rewriter.getIndexAttr(s); });
      SmallVector<OpFoldResult> strides(type.getRank(),
                                        rewriter.getIndexAttr(1));
      results.push_back(
          resultType.getNumElements() == 0
              ? emptyTensor(rewriter, op.getLoc(), resultType.getShape(),
                            resultType.getElementType())
              : tensor::ExtractSliceOp::create(rewriter, op.getLoc(),
                                               resultType, op.getInput(),
                                               offsets, sizes, strides)
                    .getResult());
      offset += resultType.getDimSize(axis);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// An index value read from an integer tensor element, with ONNX's negative
/// indices counting from the end of a dimension of size `dim`.
Value toIndex(OpBuilder &b, Location loc, Value v, int64_t dim) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  Value size = arith::ConstantIndexOp::create(b, loc, dim);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  return arith::SelectOp::create(b, loc, negative,
                                 arith::AddIOp::create(b, loc, i, size), i);
}

struct GatherPattern : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType dataType = op.getData().getType();
    RankedTensorType indicesType = op.getIndices().getType();
    RankedTensorType type = op.getType();
    int64_t axis = *normalizeAxis(op.getAxis(), dataType.getRank());
    unsigned rank = type.getRank();
    int64_t q = indicesType.getRank();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = 0; d < q; ++d)
      indexExprs.push_back(getAffineDimExpr(axis + d, ctx));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, indexExprs, ctx),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    Value init = emptyTensor(rewriter, op.getLoc(), type.getShape(),
                             signlessType(type.getElementType()));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value data = op.getData();
    int64_t dim = dataType.getDimSize(axis);
    rewriter.replaceOp(
        op,
        linalg::GenericOp::create(
            rewriter, op.getLoc(), init.getType(), op.getIndices(), init, maps,
            iterators,
            [&](OpBuilder &b, Location l, ValueRange a) {
              SmallVector<Value> coords;
              for (int64_t d = 0; d < axis; ++d)
                coords.push_back(linalg::IndexOp::create(b, l, d));
              coords.push_back(toIndex(b, l, a[0], dim));
              for (int64_t d = axis + 1; d < dataType.getRank(); ++d)
                coords.push_back(linalg::IndexOp::create(b, l, d - 1 + q));
              linalg::YieldOp::create(
                  b, l,
                  tensor::ExtractOp::create(b, l, data, coords).getResult());
            })
            .getResult(0));
    return success();
  }
};

/// GatherND: every output element reads its index tuple from `indices`
/// (the output's leading dimensions, then each of the k positions) and the
/// data element it names.
struct GatherNDPattern : OpRewritePattern<GatherNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherNDOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType dataType = op.getData().getType();
    RankedTensorType indicesType = op.getIndices().getType();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank(), q = indicesType.getRank();
    int64_t batch = op.getBatchDims(), k = indicesType.getShape().back();
    Value init = emptyTensor(rewriter, op.getLoc(), type.getShape(),
                             signlessType(type.getElementType()));
    SmallVector<AffineMap> maps = {
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value data = op.getData(), indices = op.getIndices();
    rewriter.replaceOp(
        op, linalg::GenericOp::create(
                rewriter, op.getLoc(), init.getType(), ValueRange{}, init, maps,
                iterators,
                [&](OpBuilder &b, Location l, ValueRange) {
                  SmallVector<Value> tuple;
                  for (int64_t d = 0; d < q - 1; ++d)
                    tuple.push_back(linalg::IndexOp::create(b, l, d));
                  SmallVector<Value> coords(tuple.begin(),
                                            tuple.begin() + batch);
                  for (int64_t j = 0; j < k; ++j) {
                    SmallVector<Value> at(tuple);
                    at.push_back(arith::ConstantIndexOp::create(b, l, j));
                    Value v = tensor::ExtractOp::create(b, l, indices, at);
                    coords.push_back(
                        toIndex(b, l, v, dataType.getDimSize(batch + j)));
                  }
                  for (int64_t d = q - 1; d < rank; ++d)
                    coords.push_back(linalg::IndexOp::create(b, l, d));
                  linalg::YieldOp::create(
                      b, l,
                      tensor::ExtractOp::create(b, l, data, coords)
                          .getResult());
                })
                .getResult(0));
    return success();
  }
};

/// ScatterND as one generic over the output and the update tuples (a
/// reduction dimension, in order): each output element starts as data and
/// takes (or combines with) every update whose index tuple names it, so a
/// position named twice without reduction keeps the last. Quadratic in the
/// sizes, but needs no writes at computed addresses.
struct ScatterNDPattern : OpRewritePattern<ScatterNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterNDOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    RankedTensorType indicesType = op.getIndices().getType();
    int64_t rank = type.getRank(), k = indicesType.getShape().back();
    int64_t tuples = 1;
    for (int64_t d : indicesType.getShape().drop_back())
      tuples *= d;
    // indices [U, k], updates [U, data.shape[k:]...].
    Value indices = reshapeTensor(rewriter, loc, op.getIndices(), {tuples, k});
    SmallVector<int64_t> updatesShape = {tuples};
    llvm::append_range(updatesShape, type.getShape().drop_front(k));
    Value updates = reshapeTensor(rewriter, loc, op.getUpdates(), updatesShape);
    // Loops: the output's dimensions, then u.
    AffineExpr u = getAffineDimExpr(rank, ctx);
    SmallVector<AffineExpr> updateExprs = {u};
    for (int64_t d = k; d < rank; ++d)
      updateExprs.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank + 1, 0, updateExprs, ctx),
        AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank + 1,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    Type t = type.getElementType();
    Combiner combine = nullptr;
    if (std::optional<ReduceKind> kind = op.getReduction())
      combine = reduction(*kind, signlessType(t)).second;
    Value init = op.getData();
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, type, updates, init, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value ui = linalg::IndexOp::create(b, l, rank);
              Value match = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
              for (int64_t j = 0; j < k; ++j) {
                Value at = tensor::ExtractOp::create(
                    b, l, indices,
                    ValueRange{ui, arith::ConstantIndexOp::create(b, l, j)});
                Value want = toIndex(b, l, at, type.getDimSize(j));
                Value here = linalg::IndexOp::create(b, l, j);
                match = arith::AndIOp::create(
                    b, l, match,
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, want,
                                          here));
              }
              // The reduction's combiner: old value first, as ONNX applies
              // them (f(data, update)).
              Value combined = combine ? combine(b, l, a[1], a[0]) : a[0];
              linalg::YieldOp::create(
                  b, l, arith::SelectOp::create(b, l, match, combined, a[1])
                            .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherElementsPattern : OpRewritePattern<GatherElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherElementsOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    int64_t axis = *normalizeAxis(op.getAxis(), rank);
    int64_t dim = op.getData().getType().getDimSize(axis);
    Value data = op.getData();
    Value result = elementwise(
        rewriter, op.getLoc(), type, op.getIndices(),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d)
            coords.push_back(
                d == axis ? toIndex(b, l, a[0], dim)
                          : linalg::IndexOp::create(b, l, d).getResult());
          return tensor::ExtractOp::create(b, l, data, coords);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// check_indices: the clamp is elementwise; the status one reduction over
/// the flattened indices (count, first bad position, its value) into [1]
/// accumulators, order-independent, then packed into [3].
struct CheckIndicesPattern : OpRewritePattern<CheckIndicesOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The bound of the index at flat position `position` (an index value).
  static Value boundAt(OpBuilder &b, Location l, ArrayRef<int64_t> bounds,
                       Value position, Type t) {
    Value bound = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, bounds[0]));
    if (bounds.size() == 1)
      return bound;
    Value component = arith::RemUIOp::create(
        b, l, position,
        arith::ConstantIndexOp::create(b, l, bounds.size()));
    for (int64_t j = 1, e = bounds.size(); j < e; ++j)
      bound = arith::SelectOp::create(
          b, l,
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, component,
                                arith::ConstantIndexOp::create(b, l, j)),
          arith::ConstantOp::create(b, l, b.getIntegerAttr(t, bounds[j])),
          bound);
    return bound;
  }

  LogicalResult matchAndRewrite(CheckIndicesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getIndices().getType();
    Type t = type.getElementType();
    ArrayRef<int64_t> bounds = op.getBounds();
    int64_t rank = type.getRank();
    Value clamped = elementwise(
        rewriter, loc, type, op.getIndices(),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value last =
              rank ? linalg::IndexOp::create(b, l, rank - 1).getResult()
                   : arith::ConstantIndexOp::create(b, l, 0).getResult();
          Value bound = boundAt(b, l, bounds, last, t);
          Value one = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 1));
          Value low = arith::SubIOp::create(
              b, l, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0)),
              bound);
          Value high = arith::SubIOp::create(b, l, bound, one);
          return arith::MinSIOp::create(
              b, l, arith::MaxSIOp::create(b, l, a[0], low), high);
        });

    // The status reduces in two stages, over the rows of the indices viewed
    // as [R, C] with C the largest divisor of n up to sqrt(n), then over the
    // rows: a GPU runs R threads of C steps and one of R, not one thread
    // over all n (token ids: batch x seq, which divides well).
    Type i64 = rewriter.getI64Type();
    int64_t n = type.getNumElements();
    int64_t cols = 1;
    for (int64_t c = 1; c * c <= n; ++c)
      if (n % c == 0)
        cols = c;
    int64_t rows = n / cols;
    Value grid = reshapeTensor(rewriter, loc, op.getIndices(), {rows, cols});
    auto fill = [&](int64_t size, int64_t v) {
      return linalg::FillOp::create(
                 rewriter, loc,
                 ValueRange{arith::ConstantOp::create(
                     rewriter, loc, rewriter.getI64IntegerAttr(v))},
                 ValueRange{emptyTensor(rewriter, loc, {size}, i64)})
          .getResult(0);
    };
    // count, first position (none yet: the largest), value there.
    auto inits = [&](int64_t size) {
      return SmallVector<Value>{fill(size, 0),
                                fill(size, std::numeric_limits<int64_t>::max()),
                                fill(size, 0)};
    };
    // Folds a candidate (count, position, value) into the accumulators.
    auto merge = [](OpBuilder &b, Location l, Value count, Value position,
                    Value value, ValueRange acc) {
      Value earlier = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                            position, acc[1]);
      linalg::YieldOp::create(
          b, l,
          ValueRange{arith::AddIOp::create(b, l, acc[0], count),
                     arith::SelectOp::create(b, l, earlier, position, acc[1]),
                     arith::SelectOp::create(b, l, earlier, value, acc[2])});
    };
    AffineMap first = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    SmallVector<utils::IteratorType> iterators = {
        utils::IteratorType::parallel, utils::IteratorType::reduction};
    SmallVector<Value> rowInits = inits(rows);
    SmallVector<AffineMap> rowMaps = {AffineMap::getMultiDimIdentityMap(2, ctx),
                                      first, first, first};
    auto perRow = linalg::GenericOp::create(
        rewriter, loc, TypeRange(ValueRange(rowInits)), grid, rowInits, rowMaps,
        iterators, [&](OpBuilder &b, Location l, ValueRange a) {
          Value v = a[0];
          Value position = arith::AddIOp::create(
              b, l,
              arith::MulIOp::create(b, l, linalg::IndexOp::create(b, l, 0),
                                    arith::ConstantIndexOp::create(b, l, cols)),
              linalg::IndexOp::create(b, l, 1));
          Value bound = boundAt(b, l, bounds, position, t);
          Value low = arith::SubIOp::create(
              b, l, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0)),
              bound);
          Value bad = arith::OrIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, v, low),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, v, bound));
          Value none = arith::ConstantOp::create(
              b, l, b.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
          Value p = arith::SelectOp::create(
              b, l, bad, arith::IndexCastOp::create(b, l, i64, position), none);
          Value value = t == i64 ? v : arith::ExtSIOp::create(b, l, i64, v);
          merge(b, l, arith::ExtUIOp::create(b, l, i64, bad), p, value,
                a.drop_front());
        });
    SmallVector<Value> totalInits = inits(1);
    AffineMap second = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
    auto reduce = linalg::GenericOp::create(
        rewriter, loc, TypeRange(ValueRange(totalInits)), perRow.getResults(),
        totalInits, {second, second, second, first, first, first}, iterators,
        [&](OpBuilder &b, Location l, ValueRange a) {
          merge(b, l, a[0], a[1], a[2], a.drop_front(3));
        });

    // [count, first position (-1 when there is none), value].
    AffineMap scalar = AffineMap::get(1, 0, {getAffineConstantExpr(0, ctx)}, ctx);
    Value status =
        linalg::GenericOp::create(
            rewriter, loc, op.getStatus().getType(), reduce.getResults(),
            emptyTensor(rewriter, loc, {3}, i64),
            {scalar, scalar, scalar, AffineMap::getMultiDimIdentityMap(1, ctx)},
            {utils::IteratorType::parallel},
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value i = linalg::IndexOp::create(b, l, 0);
              auto is = [&](int64_t v) {
                return arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::eq, i,
                    arith::ConstantIndexOp::create(b, l, v));
              };
              Value zero = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
              Value none = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::eq, a[0], zero);
              Value first = arith::SelectOp::create(
                  b, l, none,
                  arith::ConstantOp::create(b, l, b.getI64IntegerAttr(-1)),
                  a[1]);
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(
                      b, l, is(0), a[0],
                      arith::SelectOp::create(b, l, is(1), first, a[2]))
                      .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, {clamped, status});
    return success();
  }
};

struct RangePattern : OpRewritePattern<RangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RangeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type t = op.getType().getElementType();
    Value start = tensor::ExtractOp::create(rewriter, loc, op.getStart());
    Value delta = tensor::ExtractOp::create(rewriter, loc, op.getDelta());
    Value result = elementwise(
        rewriter, loc, op.getType(), ValueRange{},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          Value i = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 0));
          Value iv = convertScalar(b, l, i, b.getI64Type(), t);
          return isFloat(t)
                     ? arith::AddFOp::create(
                           b, l, start, arith::MulFOp::create(b, l, iv, delta))
                           .getResult()
                     : arith::AddIOp::create(
                           b, l, start, arith::MulIOp::create(b, l, iv, delta))
                           .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Shape-computing ops that survived folding only when shapes are dynamic,
/// which the host backend does not support.
template <typename OpTy> struct StaticResultPattern : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    SmallVector<OpFoldResult> folded;
    if (failed(op->fold(folded)) || folded.size() != 1 ||
        !isa<Attribute>(folded[0]))
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(cast<Attribute>(folded[0])));
    return success();
  }
};

} // namespace

void mte::populateTransformerDataMovementToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<TransposePattern, ReshapePattern, ExpandPattern, SlicePattern,
               ConcatPattern, SplitPattern, GatherPattern, GatherNDPattern,
               ScatterNDPattern, GatherElementsPattern, CheckIndicesPattern,
               RangePattern, StaticResultPattern<ShapeOp>,
               StaticResultPattern<SizeOp>,
               StaticResultPattern<ConstantOfShapeOp>>(patterns.getContext());
}
