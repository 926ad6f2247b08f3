//===- TransformerToLinalg.cpp - reference lowering of the dialect --------===//
//
// Lowers every transformer op to linalg, tensor, arith and math on tensors.
// This is the dialect's reference semantics: the host backend runs it, and a
// fusion is correct when the fused and the unfused graph agree through it.
//
// Conventions: elementwise ops become one linalg.generic with numpy
// broadcasting in the indexing maps; contractions and reductions over f16 and
// bf16 accumulate in f32; normalisations, softmax and attention compute in f32
// and round once at the end.
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

namespace mte {
#define GEN_PASS_DEF_CONVERTTRANSFORMERTOLINALG
#include "mte/Conversion/Passes.h.inc"
} // namespace mte

using namespace mlir;
using namespace mte::transformer;

namespace {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

bool isFloat(Type t) { return isa<FloatType>(t); }

bool isUnsigned(Type t) { return t.isUnsignedInteger(); }

/// The type f16/bf16 values are computed in: f32. Others compute as they are.
Type computeType(Type t) {
  if (auto f = dyn_cast<FloatType>(t); f && f.getWidth() < 32)
    return Float32Type::get(t.getContext());
  return t;
}

/// Arithmetic on unsigned MLIR integers goes through signless values.
Type signlessType(Type t) {
  if (auto i = dyn_cast<IntegerType>(t); i && !i.isSignless())
    return IntegerType::get(t.getContext(), i.getWidth());
  return t;
}

Value constantOf(OpBuilder &b, Location loc, Type t, double value) {
  if (auto f = dyn_cast<FloatType>(t))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(signlessType(t), static_cast<int64_t>(value)));
}

/// The largest finite value of an fp8 type.
std::optional<double> fp8Max(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return 448.0;
  if (isa<Float8E5M2Type>(t))
    return 57344.0;
  return std::nullopt;
}

/// Converts a scalar between element types with ONNX Cast semantics.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type from, Type to) {
  if (from == to)
    return v;
  Type dst = signlessType(to);
  if (isFloat(from) && isFloat(to)) {
    if (cast<FloatType>(from).getWidth() < cast<FloatType>(to).getWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    // ONNX Cast to fp8 saturates to the largest finite value (NaN stays).
    if (std::optional<double> max = fp8Max(to)) {
      Value bound = constantOf(b, loc, from, *max);
      v = arith::MinimumFOp::create(b, loc, v, bound);
      v = arith::MaximumFOp::create(b, loc, v,
                                    arith::NegFOp::create(b, loc, bound));
    }
    return arith::TruncFOp::create(b, loc, to, v);
  }
  if (isFloat(from)) {
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   constantOf(b, loc, from, 0));
    if (isUnsigned(to))
      return arith::FPToUIOp::create(b, loc, dst, v);
    return arith::FPToSIOp::create(b, loc, dst, v);
  }
  if (isFloat(to)) {
    if (from.isInteger(1) || isUnsigned(from))
      return arith::UIToFPOp::create(b, loc, to, v);
    return arith::SIToFPOp::create(b, loc, to, v);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (to.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 constantOf(b, loc, from, 0));
  if (toWidth < fromWidth)
    return arith::TruncIOp::create(b, loc, dst, v);
  if (toWidth > fromWidth) {
    if (from.isInteger(1) || isUnsigned(from))
      return arith::ExtUIOp::create(b, loc, dst, v);
    return arith::ExtSIOp::create(b, loc, dst, v);
  }
  return v;
}

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value negX = arith::NegFOp::create(b, loc, x);
  Value e = math::ExpOp::create(b, loc, negX);
  Value one = constantOf(b, loc, t, 1.0);
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}

Value gelu(OpBuilder &b, Location loc, Value x, GeluApproximation approx) {
  Type t = x.getType();
  Value half = constantOf(b, loc, t, 0.5);
  Value one = constantOf(b, loc, t, 1.0);
  Value inner;
  if (approx == GeluApproximation::None) {
    Value scaled =
        arith::MulFOp::create(b, loc, x, constantOf(b, loc, t, M_SQRT1_2));
    inner = math::ErfOp::create(b, loc, scaled);
  } else {
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, x3, constantOf(b, loc, t, 0.044715)));
    inner = math::TanhOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, poly,
                              constantOf(b, loc, t, std::sqrt(2.0 / M_PI))));
  }
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, half, x),
                               arith::AddFOp::create(b, loc, one, inner));
}

Value applyActivation(OpBuilder &b, Location loc, Value x, Activation act) {
  switch (act) {
  case Activation::None:
    return x;
  case Activation::Relu:
    return arith::MaximumFOp::create(b, loc, x,
                                     constantOf(b, loc, x.getType(), 0));
  case Activation::Gelu:
    return gelu(b, loc, x, GeluApproximation::None);
  case Activation::GeluTanh:
    return gelu(b, loc, x, GeluApproximation::Tanh);
  case Activation::Silu:
    return arith::MulFOp::create(b, loc, x, sigmoid(b, loc, x));
  }
  llvm_unreachable("unknown activation");
}

//===----------------------------------------------------------------------===//
// Structured-op helpers
//===----------------------------------------------------------------------===//

/// The map reading `operandType` inside a loop nest of `numLoops` loops whose
/// trailing dimensions follow `resultShape`, with numpy broadcasting: the
/// operand aligns to the right and its size-1 dimensions read index 0.
AffineMap broadcastMap(MLIRContext *ctx, RankedTensorType operandType,
                       ArrayRef<int64_t> resultShape, unsigned numLoops) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = resultShape.size() - operandType.getRank();
  for (int64_t d = 0; d < operandType.getRank(); ++d) {
    bool broadcast =
        operandType.getDimSize(d) == 1 && resultShape[offset + d] != 1;
    exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(offset + d, ctx));
  }
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elementType, double value) {
  Value init = emptyTensor(b, loc, shape, elementType);
  return linalg::FillOp::create(
             b, loc, ValueRange{constantOf(b, loc, elementType, value)},
             ValueRange{init})
      .getResult(0);
}

/// One linalg.generic computing `body` elementwise over broadcast `inputs`
/// into a fresh tensor of `resultType`. `body` receives the input scalars.
/// Reinterprets a tensor of unsigned integers as signless (arith only takes
/// signless integers), or back.
Value bitcastElements(OpBuilder &b, Location loc, Value v, Type elementType) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == elementType)
    return v;
  return tensor::BitcastOp::create(
      b, loc, RankedTensorType::get(type.getShape(), elementType), v);
}

Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange originalInputs, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = resultType.getRank();
  SmallVector<Value> inputs = llvm::map_to_vector(originalInputs, [&](Value v) {
    return bitcastElements(
        b, loc, v,
        signlessType(cast<RankedTensorType>(v.getType()).getElementType()));
  });
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(ctx, cast<RankedTensorType>(input.getType()),
                                resultType.getShape(), rank));
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = emptyTensor(b, loc, resultType.getShape(),
                           signlessType(resultType.getElementType()));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args.drop_back()));
      });
  return bitcastElements(b, loc, generic.getResult(0),
                         resultType.getElementType());
}

/// Reduces `input` over its trailing dimensions from `firstReduced` with
/// `combine`, starting from `initValue`, in element type `accType` (the
/// input is converted on read). The result has the leading dimensions.
Value reduceTrailing(
    OpBuilder &b, Location loc, Value input, int64_t firstReduced, Type accType,
    double initValue,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine,
    function_ref<Value(OpBuilder &, Location, Value)> map = nullptr) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  ArrayRef<int64_t> kept = type.getShape().take_front(firstReduced);
  Value init = filledTensor(b, loc, kept, accType, initValue);
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, ctx),
      AffineMap::getMinorIdentityMap(rank, firstReduced, ctx)};
  maps[1] = AffineMap::get(
      rank, 0,
      llvm::map_to_vector(llvm::seq<unsigned>(0, firstReduced),
                          [&](unsigned d) { return getAffineDimExpr(d, ctx); }),
      ctx);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  for (unsigned d = firstReduced; d < rank; ++d)
    iterators[d] = utils::IteratorType::reduction;
  Type elementType = type.getElementType();
  return linalg::GenericOp::create(
             b, loc, init.getType(), input, init, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value x = convertScalar(nb, nloc, args[0], elementType, accType);
               if (map)
                 x = map(nb, nloc, x);
               linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args[1], x));
             })
      .getResult(0);
}

/// Reshapes a static tensor by collapsing to 1-D and expanding to `shape`.
Value reshapeTensor(OpBuilder &b, Location loc, Value input,
                    ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  auto target = RankedTensorType::get(shape, type.getElementType());
  if (type == target)
    return input;
  auto flatType =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  auto reassociation = [](int64_t rank) {
    SmallVector<ReassociationIndices> r;
    if (rank > 0)
      r.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return r;
  };
  Value flat = input;
  if (type.getRank() != 1)
    flat = type.getRank() == 0
               ? tensor::ExpandShapeOp::create(b, loc, flatType, input,
                                               reassociation(0))
                     .getResult()
               : tensor::CollapseShapeOp::create(b, loc, flatType, input,
                                                 reassociation(type.getRank()))
                     .getResult();
  if (target.getRank() == 1)
    return flat;
  if (target.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, target, flat,
                                           reassociation(0));
  return tensor::ExpandShapeOp::create(b, loc, target, flat,
                                       reassociation(target.getRank()));
}

Value castTensor(OpBuilder &b, Location loc, Value input, Type elementType) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == elementType)
    return input;
  Type from = type.getElementType();
  return elementwise(b, loc,
                     RankedTensorType::get(type.getShape(), elementType), input,
                     [&](OpBuilder &nb, Location nloc, ValueRange a) {
                       return convertScalar(nb, nloc, a[0], from, elementType);
                     });
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Elementwise ops whose scalar body depends only on the element type.
template <typename OpTy> struct ElementwisePattern : OpRewritePattern<OpTy> {
  using ScalarFn = Value (*)(OpBuilder &, Location, ValueRange, Type, OpTy);
  ElementwisePattern(MLIRContext *ctx, ScalarFn fn)
      : OpRewritePattern<OpTy>(ctx), fn(fn) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type operandType =
        cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
    Value result = elementwise(
        rewriter, op.getLoc(), cast<RankedTensorType>(op.getType()),
        op->getOperands(), [&](OpBuilder &b, Location loc, ValueRange args) {
          return fn(b, loc, args, operandType, op);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
  ScalarFn fn;
};

template <typename OpTy>
void addElementwise(RewritePatternSet &patterns,
                    typename ElementwisePattern<OpTy>::ScalarFn fn) {
  patterns.add<ElementwisePattern<OpTy>>(patterns.getContext(), fn);
}

/// Float ops computed in f32 for f16/bf16 inputs.
Value viaComputeType(OpBuilder &b, Location loc, ValueRange args, Type t,
                     function_ref<Value(OpBuilder &, Location, ValueRange)> f) {
  Type c = computeType(t);
  SmallVector<Value> widened = llvm::map_to_vector(
      args, [&](Value v) { return convertScalar(b, loc, v, t, c); });
  return convertScalar(b, loc, f(b, loc, widened), c, t);
}

template <typename FloatOp, typename IntOp, typename UIntOp = IntOp>
Value binaryArith(OpBuilder &b, Location loc, ValueRange a, Type t) {
  if (isFloat(t))
    return FloatOp::create(b, loc, a[0], a[1]);
  if (isUnsigned(t))
    return UIntOp::create(b, loc, a[0], a[1]);
  return IntOp::create(b, loc, a[0], a[1]);
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
              Value x = convertScalar(b, l, a[0], elementType, acc);
              Value y = convertScalar(b, l, a[1], elementType, acc);
              Value p = isFloat(acc)
                            ? arith::MulFOp::create(b, l, x, y).getResult()
                            : arith::MulIOp::create(b, l, x, y).getResult();
              Value s = isFloat(acc)
                            ? arith::AddFOp::create(b, l, a[2], p).getResult()
                            : arith::AddIOp::create(b, l, a[2], p).getResult();
              linalg::YieldOp::create(b, l, s);
            })
            .getResult(0);
    rewriter.replaceOp(
        op, castTensor(rewriter, loc, product, signlessType(elementType)));
    return success();
  }
};

using Combiner = Value (*)(OpBuilder &, Location, Value, Value);

template <typename OpTy>
Value combine(OpBuilder &b, Location l, Value a, Value x) {
  return OpTy::create(b, l, a, x);
}

/// The initial value and combiner of a reduction kind, in `acc`.
std::pair<double, Combiner> reduction(ReduceKind kind, Type acc) {
  bool f = isFloat(acc);
  double inf = std::numeric_limits<double>::infinity();
  double intMax = static_cast<double>(
      llvm::APInt::getSignedMaxValue(acc.getIntOrFloatBitWidth())
          .getSExtValue());
  switch (kind) {
  case ReduceKind::Mean:
  case ReduceKind::Sum:
    return {0, f ? combine<arith::AddFOp> : combine<arith::AddIOp>};
  case ReduceKind::Prod:
    return {1, f ? combine<arith::MulFOp> : combine<arith::MulIOp>};
  case ReduceKind::Max:
    return {f ? -inf : -intMax - 1,
            f ? combine<arith::MaximumFOp> : combine<arith::MaxSIOp>};
  case ReduceKind::Min:
    return {f ? inf : intMax,
            f ? combine<arith::MinimumFOp> : combine<arith::MinSIOp>};
  }
  llvm_unreachable("unknown reduction");
}

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

/// softmax over the last dimension of `input` (already moved there), in f32.
/// Softmax over the last dimension. With `zeroEmptyRows`, a row whose
/// entries are all -inf (attention with every key masked) gives zeros
/// instead of NaN.
Value softmaxLast(OpBuilder &b, Location loc, Value input,
                  bool zeroEmptyRows = false) {
  auto type = cast<RankedTensorType>(input.getType());
  Type t = type.getElementType();
  Type c = computeType(t);
  int64_t rank = type.getRank();
  Value max = reduceTrailing(b, loc, input, rank - 1, c,
                             -std::numeric_limits<double>::infinity(),
                             combine<arith::MaximumFOp>);
  auto computeTypeFull = RankedTensorType::get(type.getShape(), c);
  // Broadcast the per-row statistic back over the last dimension.
  auto rowMap = [&](Value stat) {
    auto statType = cast<RankedTensorType>(stat.getType());
    SmallVector<int64_t> shape(statType.getShape());
    shape.push_back(1);
    return reshapeTensor(b, loc, stat, shape);
  };
  Value shifted =
      elementwise(b, loc, computeTypeFull, ValueRange{input, rowMap(max)},
                  [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                    Value x = convertScalar(nb, l, a[0], t, c);
                    return math::ExpOp::create(
                        nb, l, arith::SubFOp::create(nb, l, x, a[1]));
                  });
  Value sum =
      reduceTrailing(b, loc, shifted, rank - 1, c, 0, combine<arith::AddFOp>);
  return elementwise(b, loc, type, ValueRange{shifted, rowMap(sum)},
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value p = arith::DivFOp::create(nb, l, a[0], a[1]);
                       if (zeroEmptyRows) {
                         // exp(-inf - -inf) is NaN, and so is the sum.
                         Value nonEmpty = arith::CmpFOp::create(
                             nb, l, arith::CmpFPredicate::OGT, a[1],
                             constantOf(nb, l, c, 0));
                         p = arith::SelectOp::create(nb, l, nonEmpty, p,
                                                     constantOf(nb, l, c, 0));
                       }
                       return convertScalar(nb, l, p, c, t);
                     });
}

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

struct TriluPattern : OpRewritePattern<TriluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TriluOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    bool upper = op.getUpper();
    int64_t k = op.getK();
    Type t = type.getElementType();
    Value result = elementwise(
        rewriter, op.getLoc(), type, op.getInput(),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value row = linalg::IndexOp::create(b, l, rank - 2);
          Value col = linalg::IndexOp::create(b, l, rank - 1);
          Value diff = arith::SubIOp::create(b, l, col, row);
          Value kv = arith::ConstantIndexOp::create(b, l, k);
          Value keep = arith::CmpIOp::create(b, l,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             diff, kv);
          return arith::SelectOp::create(b, l, keep, a[0],
                                         constantOf(b, l, t, 0));
        });
    rewriter.replaceOp(op, result);
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
      input = tensor::PadOp::create(
          rewriter, loc, RankedTensorType::get(shape, elementType), input, low,
          high, zero);
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
              Value x = convertScalar(b, l, a[0], elementType, acc);
              Value w = convertScalar(b, l, a[1], elementType, acc);
              linalg::YieldOp::create(
                  b, l,
                  arith::AddFOp::create(b, l, a[2],
                                        arith::MulFOp::create(b, l, x, w))
                      .getResult());
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

/// A transformer op whose results hold no elements computes nothing: each
/// result is an empty tensor. (Ahead of the op's own lowering, which may
/// index into a dimension of size zero.)
struct ZeroElementResultsPattern : RewritePattern {
  ZeroElementResultsPattern(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<TransformerDialect>(op->getDialect()) || op->getNumResults() == 0)
      return failure();
    SmallVector<Value> empties;
    for (Type type : op->getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape() || tensor.getNumElements() != 0)
        return failure();
      empties.push_back(emptyTensor(rewriter, op->getLoc(), tensor.getShape(),
                                    tensor.getElementType()));
    }
    rewriter.replaceOp(op, empties);
    return success();
  }
};

struct LinearPattern : OpRewritePattern<LinearOp> {
  LinearPattern(MLIRContext *ctx, bool namedMatmul)
      : OpRewritePattern(ctx), namedMatmul(namedMatmul) {}

  /// The product as linalg.matmul over the [M, K] view of the input,
  /// accumulated in f32; null unless input and weight are both f32, bf16 or
  /// f16 (the GEMMs the library runs).
  Value namedProduct(PatternRewriter &rewriter, LinearOp op) const {
    Location loc = op.getLoc();
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType weightType = op.getWeight().getType();
    Type elementType = inputType.getElementType();
    if (!isa<Float32Type, BFloat16Type, Float16Type>(elementType) ||
        weightType.getElementType() != elementType)
      return nullptr;
    int64_t k = inputType.getShape().back();
    int64_t m = 1;
    for (int64_t d : inputType.getShape().drop_back())
      m *= d;
    bool kn = op.getWeightLayout() == WeightLayout::KN;
    int64_t n = weightType.getDimSize(kn ? 1 : 0);
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
    SmallVector<int64_t> shape(op.getOutput().getType().getShape());
    return reshapeTensor(rewriter, loc, product, shape);
  }

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
    Type inElt = inputType.getElementType();
    Type wElt = op.getWeight().getType().getElementType();
    Type acc = rewriter.getF32Type();
    if (inElt.isF64())
      acc = inElt;
    Value product = namedMatmul ? namedProduct(rewriter, op) : Value();
    bool libraryProduct = static_cast<bool>(product);
    if (!product) {
      Value init = filledTensor(rewriter, loc, outType.getShape(), acc, 0);
      product =
          linalg::GenericOp::create(
              rewriter, loc, init.getType(),
              ValueRange{op.getInput(), op.getWeight()}, init, maps, iterators,
              [&](OpBuilder &b, Location l, ValueRange a) {
                Value x = convertScalar(b, l, a[0], inElt, acc);
                Value w = convertScalar(b, l, a[1], wElt, acc);
                linalg::YieldOp::create(
                    b, l,
                    arith::AddFOp::create(b, l, a[2],
                                          arith::MulFOp::create(b, l, x, w))
                        .getResult());
              })
              .getResult(0);
    }
    SmallVector<Value> epilogueInputs = {product};
    Value bias = op.getBias(), residual = op.getResidual();
    if (bias)
      epilogueInputs.push_back(bias);
    if (residual)
      epilogueInputs.push_back(residual);
    Type outElt = outType.getElementType();
    Activation act = op.getActivation();
    Value result = elementwise(
        rewriter, loc, outType, epilogueInputs,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value v = a[0];
          unsigned next = 1;
          if (bias)
            v = arith::AddFOp::create(
                b, l, v, convertScalar(b, l, a[next++], outElt, acc));
          v = applyActivation(b, l, v, act);
          if (residual)
            v = arith::AddFOp::create(
                b, l, v, convertScalar(b, l, a[next++], outElt, acc));
          return convertScalar(b, l, v, acc, outElt);
        });
    // A library GEMM can apply this epilogue itself (bias, activation,
    // residual as its C): say what it computes, so that
    // mte-matmul-to-library-call need not reverse-engineer the body.
    if (libraryProduct)
      if (Operation *epilogue = result.getDefiningOp()) {
        SmallVector<NamedAttribute> spec = {rewriter.getNamedAttr(
            "activation", ActivationAttr::get(rewriter.getContext(), act))};
        if (bias)
          spec.push_back(rewriter.getNamedAttr("bias", rewriter.getUnitAttr()));
        if (residual)
          spec.push_back(
              rewriter.getNamedAttr("residual", rewriter.getUnitAttr()));
        epilogue->setAttr(mte::kGemmEpilogueAttrName,
                          rewriter.getDictionaryAttr(spec));
      }
    rewriter.replaceOp(op, result);
    return success();
  }

  bool namedMatmul;
};

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

/// Attention's probabilities from its scores [B, H, Sq, Skv] (Q·Kᵀ, in the
/// compute type): scale, mask, causal mask and softmax, a query that sees no
/// key giving zeros.
Value scaleMaskSoftmax(OpBuilder &b, Location loc, AttentionOp op, Value scores,
                       Type /*probsType*/) {
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

struct AttentionPattern : OpRewritePattern<AttentionOp> {
  AttentionPattern(MLIRContext *ctx, bool namedMatmul,
                   mte::AttentionSoftmaxFn softmax = scaleMaskSoftmax)
      : OpRewritePattern(ctx), namedMatmul(namedMatmul),
        softmax(std::move(softmax)) {}
  bool namedMatmul;
  mte::AttentionSoftmaxFn softmax;

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
    int64_t d = qType.getDimSize(2) / heads;
    int64_t dv = vType.getDimSize(2) / kvHeads;
    int64_t group = heads / kvHeads;
    // Heads unpacked: [B, S, H, D].
    Value q =
        reshapeTensor(rewriter, loc, op.getQuery(), {batch, sq, heads, d});
    Value k =
        reshapeTensor(rewriter, loc, op.getKey(), {batch, skv, kvHeads, d});
    Value v =
        reshapeTensor(rewriter, loc, op.getValue(), {batch, skv, kvHeads, dv});

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
    // With named-matmul both products are batched GEMMs over (batch, kv
    // head), accumulating in f32; a kv head's query heads stack their rows,
    // so GQA needs no repeated K or V.
    bool batched =
        namedMatmul && isa<Float32Type, BFloat16Type, Float16Type>(t);
    Value vRows, scores;
    if (batched) {
      Value qRows = reshapeTensor(
          rewriter, loc, transposeTensor(rewriter, loc, q, {0, 2, 1, 3}),
          {batch * kvHeads, group * sq, d});
      Value kRows = reshapeTensor(
          rewriter, loc, transposeTensor(rewriter, loc, k, {0, 2, 1, 3}),
          {batch * kvHeads, skv, d});
      vRows = reshapeTensor(rewriter, loc,
                            transposeTensor(rewriter, loc, v, {0, 2, 1, 3}),
                            {batch * kvHeads, skv, dv});
      scores = reshapeTensor(
          rewriter, loc,
          batchMatmul(rewriter, loc, qRows, kRows, /*transposedB=*/true),
          scoreShape);
    } else {
      Value zeros = filledTensor(rewriter, loc, scoreShape, c, 0);
      scores = linalg::GenericOp::create(
                   rewriter, loc, zeros.getType(), ValueRange{q, k}, zeros,
                   scoreMaps, scoreIterators,
                   [&](OpBuilder &bb, Location l, ValueRange a) {
                     Value x = convertScalar(bb, l, a[0], t, c);
                     Value y = convertScalar(bb, l, a[1], t, c);
                     linalg::YieldOp::create(
                         bb, l,
                         arith::AddFOp::create(
                             bb, l, a[2], arith::MulFOp::create(bb, l, x, y))
                             .getResult());
                   })
                   .getResult(0);
    }

    // The batched product reads P in V's type; the loop nest in c.
    Value probs = softmax(rewriter, loc, op, scores, batched ? t : c);

    // out[b, i, h, e] = sum_j probs[b, h, i, j] * v[b, j, h / g, e].
    SmallVector<AffineMap> outMaps = {
        AffineMap::get(5, 0, {b0, h, i, j}, ctx),
        AffineMap::get(5, 0, {b0, j, h.floorDiv(group), e}, ctx),
        AffineMap::get(5, 0, {b0, i, h, e}, ctx)};
    SmallVector<utils::IteratorType> outIterators(
        5, utils::IteratorType::parallel);
    outIterators[3] = utils::IteratorType::reduction;
    Value out;
    if (batched) {
      // P is rounded to V's type, as the GEMM reads both in one type.
      Value rows =
          reshapeTensor(rewriter, loc, castTensor(rewriter, loc, probs, t),
                        {batch * kvHeads, group * sq, skv});
      Value product = reshapeTensor(
          rewriter, loc,
          batchMatmul(rewriter, loc, rows, vRows, /*transposedB=*/false),
          {batch, heads, sq, dv});
      out = transposeTensor(rewriter, loc, product, {0, 2, 1, 3});
    } else {
      // Loop order (b, h, i, j, e) with j reduced: shapes come from the maps.
      Value init = filledTensor(rewriter, loc, {batch, sq, heads, dv}, c, 0);
      out = linalg::GenericOp::create(
                rewriter, loc, init.getType(), ValueRange{probs, v}, init,
                outMaps, outIterators,
                [&](OpBuilder &bb, Location l, ValueRange a) {
                  Value y = convertScalar(bb, l, a[1], t, c);
                  linalg::YieldOp::create(
                      bb, l,
                      arith::AddFOp::create(
                          bb, l, a[2], arith::MulFOp::create(bb, l, a[0], y))
                          .getResult());
                })
                .getResult(0);
    }
    out = castTensor(rewriter, loc, out, t);
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, out, op.getType().getShape()));
    return success();
  }
};

/// `value`[..., offset : offset + size] along its last dimension.
Value sliceLast(OpBuilder &b, Location loc, Value value, int64_t offset,
                int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      strides(rank, b.getIndexAttr(1)), sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(d + 1 == rank ? size : type.getDimSize(d)));
  offsets.back() = b.getIndexAttr(offset);
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes, strides);
}

/// Rotate-half RoPE over whole heads of `x` ([B, H, S, D] or [B, S, H, D],
/// sequence at `seqDim`) as two elementwise ops on the halves, with no
/// index arithmetic: x1' = x1 * cos1 - x2 * sin1 into the first half of the
/// result, x2' = x2 * cos2 + x1 * sin2 into the second, the tables' columns
/// read as slices (the same for both halves when the tables are half
/// width). The host backend's (and the reference) lowering: the CUDA
/// pipeline gives these to its rotary row kernel first.
Value rotateHalves(OpBuilder &b, Location loc, Value x, int64_t seqDim,
                   Value cos, Value sin, bool fullWidth, Type computeType) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  Type t = xType.getElementType();
  int64_t half = xType.getDimSize(3) / 2;
  bool batched = cast<RankedTensorType>(cos.getType()).getRank() == 3;
  AffineExpr f = getAffineDimExpr(3, ctx), s = getAffineDimExpr(seqDim, ctx);
  SmallVector<AffineExpr> tableIndex = {s, f};
  if (batched)
    tableIndex.insert(tableIndex.begin(), getAffineDimExpr(0, ctx));
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap table = AffineMap::get(4, 0, tableIndex, ctx);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);

  Value x1 = sliceLast(b, loc, x, 0, half),
        x2 = sliceLast(b, loc, x, half, half);
  Value result = emptyTensor(b, loc, xType.getShape(), t);
  // (self, partner, cos, sin, sign of the partner's term) per half.
  for (int64_t second = 0; second < 2; ++second) {
    int64_t column = fullWidth && second ? half : 0;
    Value self = second ? x2 : x1, partner = second ? x1 : x2;
    Value init = sliceLast(b, loc, result, second * half, half);
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(),
        ValueRange{self, partner, sliceLast(b, loc, cos, column, half),
                   sliceLast(b, loc, sin, column, half)},
        init, {identity, identity, table, table, identity}, iterators,
        [&](OpBuilder &nb, Location l, ValueRange a) {
          auto in = [&](Value v) {
            return convertScalar(nb, l, v, t, computeType);
          };
          Value rotated = arith::MulFOp::create(nb, l, in(a[1]), in(a[3]));
          Value kept = arith::MulFOp::create(nb, l, in(a[0]), in(a[2]));
          Value v =
              second ? arith::AddFOp::create(nb, l, kept, rotated).getResult()
                     : arith::SubFOp::create(nb, l, kept, rotated).getResult();
          linalg::YieldOp::create(nb, l,
                                  convertScalar(nb, l, v, computeType, t));
        });
    auto resultType = cast<RankedTensorType>(result.getType());
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)),
        strides(4, b.getIndexAttr(1)), sizes;
    for (int64_t d = 0; d < 4; ++d)
      sizes.push_back(b.getIndexAttr(d == 3 ? half : resultType.getDimSize(d)));
    offsets.back() = b.getIndexAttr(second * half);
    result = tensor::InsertSliceOp::create(b, loc, generic.getResult(0), result,
                                           offsets, sizes, strides);
  }
  return result;
}

struct RotaryEmbeddingPattern : OpRewritePattern<RotaryEmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RotaryEmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getInput().getType();
    Type t = type.getElementType();
    Type c = computeType(t);
    // Work on [B, H, S, D] or [B, S, H, D]; seqDim says which.
    Value x = op.getInput();
    int64_t seqDim = 2;
    if (type.getRank() == 3) {
      int64_t heads = *op.getNumHeads();
      x = reshapeTensor(rewriter, loc, x,
                        {type.getDimSize(0), type.getDimSize(1), heads,
                         type.getDimSize(2) / heads});
      seqDim = 1;
    }
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t headDim = xType.getDimSize(3);
    int64_t rotary = op.getRotaryDim().value_or(headDim);
    int64_t half = rotary / 2;
    bool interleaved = op.getInterleaved();
    Value cos = op.getCos(), sin = op.getSin();
    bool batched = op.getCos().getType().getRank() == 3;
    // Full-width tables hold a column per feature, half-width ones per pair.
    bool fullWidth = op.getCos().getType().getShape().back() == rotary;
    if (!interleaved && rotary == headDim) {
      Value result =
          rotateHalves(rewriter, loc, x, seqDim, cos, sin, fullWidth, c);
      rewriter.replaceOp(op,
                         reshapeTensor(rewriter, loc, result, type.getShape()));
      return success();
    }
    Value result = elementwise(
        rewriter, loc, xType, x,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value bi = linalg::IndexOp::create(b, l, 0);
          Value s = linalg::IndexOp::create(b, l, seqDim);
          Value f = linalg::IndexOp::create(b, l, 3);
          // Partner feature and table column of feature f.
          Value halfV = arith::ConstantIndexOp::create(b, l, half);
          Value rotaryV = arith::ConstantIndexOp::create(b, l, rotary);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          Value two = arith::ConstantIndexOp::create(b, l, 2);
          Value column, partner, first;
          if (interleaved) {
            column = arith::DivUIOp::create(b, l, f, two);
            Value odd = arith::RemUIOp::create(b, l, f, two);
            first =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, odd,
                                      arith::ConstantIndexOp::create(b, l, 0));
            partner = arith::SelectOp::create(
                b, l, first, arith::AddIOp::create(b, l, f, one),
                arith::SubIOp::create(b, l, f, one));
          } else {
            first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, f,
                                          halfV);
            column = arith::SelectOp::create(
                b, l, first, f, arith::SubIOp::create(b, l, f, halfV));
            partner = arith::SelectOp::create(
                b, l, first, arith::AddIOp::create(b, l, f, halfV),
                arith::SubIOp::create(b, l, f, halfV));
          }
          if (fullWidth)
            column = f;
          Value rotated = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                                f, rotaryV);
          // Features past rotary_dim pass through; clamp the reads there.
          Value safeColumn = arith::SelectOp::create(
              b, l, rotated, column, arith::ConstantIndexOp::create(b, l, 0));
          Value safePartner =
              arith::SelectOp::create(b, l, rotated, partner, f);
          SmallVector<Value> tableIndex = {s, safeColumn};
          if (batched)
            tableIndex.insert(tableIndex.begin(), bi);
          Value cv = convertScalar(
              b, l, tensor::ExtractOp::create(b, l, cos, tableIndex), t, c);
          Value sv = convertScalar(
              b, l, tensor::ExtractOp::create(b, l, sin, tableIndex), t, c);
          SmallVector<Value> partnerIndex = {
              bi, linalg::IndexOp::create(b, l, 1),
              linalg::IndexOp::create(b, l, 2), safePartner};
          Value self = convertScalar(b, l, a[0], t, c);
          Value other = convertScalar(
              b, l, tensor::ExtractOp::create(b, l, x, partnerIndex), t, c);
          // first: x1*cos - x2*sin; second: x2*cos + x1*sin.
          Value signedSin = arith::SelectOp::create(
              b, l, first, arith::NegFOp::create(b, l, sv), sv);
          Value v = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, self, cv),
              arith::MulFOp::create(b, l, other, signedSin));
          Value out = convertScalar(b, l, v, c, t);
          return arith::SelectOp::create(b, l, rotated, out, a[0]);
        });
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, loc, result, type.getShape()));
    return success();
  }
};

struct AmaxPattern : OpRewritePattern<AmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getInput().getType();
    Value flat =
        reshapeTensor(rewriter, loc, op.getInput(), {type.getNumElements()});
    Value result = reduceTrailing(
        rewriter, loc, flat, 0, rewriter.getF32Type(), 0,
        combine<arith::MaximumFOp>, [](OpBuilder &b, Location l, Value x) {
          return math::AbsFOp::create(b, l, x).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// quantize: saturate(x / scale) in fp8; dequantize: f32(q) * scale.
struct QuantizePattern : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    Type in = op.getInput().getType().getElementType();
    Type out = op.getType().getElementType();
    bool saturate = op.getSaturate();
    Value result =
        elementwise(rewriter, op.getLoc(), op.getType(),
                    ValueRange{op.getInput(), op.getScale()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Type f32 = b.getF32Type();
                      Value x = arith::DivFOp::create(
                          b, l, convertScalar(b, l, a[0], in, f32), a[1]);
                      if (!saturate)
                        return arith::TruncFOp::create(b, l, out, x);
                      return convertScalar(b, l, x, f32, out);
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

struct ConvertTransformerToLinalgPass
    : mte::impl::ConvertTransformerToLinalgBase<
          ConvertTransformerToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Unsigned tensors need signless buffers through bufferization, which
    // the reference lowering does not do yet; say so instead of failing
    // somewhere downstream.
    WalkResult unsignedTypes = getOperation()->walk([](Operation *op) {
      if (!isa<TransformerDialect>(op->getDialect()))
        return WalkResult::advance();
      for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                             op->getResultTypes()))
        if (getElementTypeOrSelf(t).isUnsignedInteger()) {
          op->emitError("the host backend does not support unsigned integer "
                        "tensors (")
              << t << ")";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (unsignedTypes.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(ctx);
    mte::populateTransformerToLinalgPatterns(patterns, namedMatmul);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<TransformerDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           func::FuncDialect>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mte::populateTransformerToLinalgPatterns(RewritePatternSet &patterns,
                                              bool namedMatmul) {
  using T = Type;
  // Binary arithmetic.
  addElementwise<AddOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, AddOp) {
        return binaryArith<arith::AddFOp, arith::AddIOp>(b, l, a, t);
      });
  addElementwise<SubOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, SubOp) {
        return binaryArith<arith::SubFOp, arith::SubIOp>(b, l, a, t);
      });
  addElementwise<MulOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, MulOp) {
        return binaryArith<arith::MulFOp, arith::MulIOp>(b, l, a, t);
      });
  addElementwise<DivOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, DivOp) {
        return binaryArith<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(b, l,
                                                                          a, t);
      });
  addElementwise<MinOp>(patterns, [](OpBuilder &b, Location l, ValueRange a,
                                     T t, MinOp) {
    return binaryArith<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(b, l,
                                                                          a, t);
  });
  addElementwise<MaxOp>(patterns, [](OpBuilder &b, Location l, ValueRange a,
                                     T t, MaxOp) {
    return binaryArith<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(b, l,
                                                                          a, t);
  });
  addElementwise<PowOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, PowOp) -> Value {
        if (isFloat(t))
          return viaComputeType(
              b, l, a, t, [](OpBuilder &nb, Location nl, ValueRange w) {
                return math::PowFOp::create(nb, nl, w[0], w[1]).getResult();
              });
        return math::IPowIOp::create(b, l, a[0], a[1]);
      });
  addElementwise<AndOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T, AndOp) -> Value {
        return arith::AndIOp::create(b, l, a[0], a[1]);
      });
  addElementwise<OrOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T, OrOp) -> Value {
        return arith::OrIOp::create(b, l, a[0], a[1]);
      });
  addElementwise<CompareOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, CompareOp op) -> Value {
        ComparePredicate p = op.getPredicate();
        if (isFloat(t)) {
          arith::CmpFPredicate fp;
          switch (p) {
          case ComparePredicate::EQ:
            fp = arith::CmpFPredicate::OEQ;
            break;
          case ComparePredicate::NE:
            fp = arith::CmpFPredicate::UNE;
            break;
          case ComparePredicate::LT:
            fp = arith::CmpFPredicate::OLT;
            break;
          case ComparePredicate::LE:
            fp = arith::CmpFPredicate::OLE;
            break;
          case ComparePredicate::GT:
            fp = arith::CmpFPredicate::OGT;
            break;
          case ComparePredicate::GE:
            fp = arith::CmpFPredicate::OGE;
            break;
          }
          return arith::CmpFOp::create(b, l, fp, a[0], a[1]);
        }
        bool u = isUnsigned(t);
        arith::CmpIPredicate ip;
        switch (p) {
        case ComparePredicate::EQ:
          ip = arith::CmpIPredicate::eq;
          break;
        case ComparePredicate::NE:
          ip = arith::CmpIPredicate::ne;
          break;
        case ComparePredicate::LT:
          ip = u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
          break;
        case ComparePredicate::LE:
          ip = u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
          break;
        case ComparePredicate::GT:
          ip = u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
          break;
        case ComparePredicate::GE:
          ip = u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
          break;
        }
        return arith::CmpIOp::create(b, l, ip, a[0], a[1]);
      });
  addElementwise<WhereOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T, WhereOp) -> Value {
        return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
      });

  // Unary math, computed in f32 for half types.
#define MTE_UNARY_MATH(OP, BODY)                                               \
  addElementwise<OP>(                                                          \
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, OP) {          \
        return viaComputeType(                                                 \
            b, l, a, t,                                                        \
            [](OpBuilder &nb, Location nl, ValueRange w) -> Value { BODY; });  \
      })
  MTE_UNARY_MATH(SqrtOp, return math::SqrtOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(RsqrtOp, return math::RsqrtOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(ExpOp, return math::ExpOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(LogOp, return math::LogOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(ErfOp, return math::ErfOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(TanhOp, return math::TanhOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(SinOp, return math::SinOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(CosOp, return math::CosOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(FloorOp, return math::FloorOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(SigmoidOp, return sigmoid(nb, nl, w[0]));
  MTE_UNARY_MATH(SiluOp, return arith::MulFOp::create(nb, nl, w[0],
                                                      sigmoid(nb, nl, w[0])));
  MTE_UNARY_MATH(ReciprocalOp,
                 return arith::DivFOp::create(
                     nb, nl, constantOf(nb, nl, w[0].getType(), 1), w[0]));
#undef MTE_UNARY_MATH
  addElementwise<GeluOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, GeluOp op) {
        GeluApproximation approx = op.getApproximate();
        return viaComputeType(b, l, a, t,
                              [&](OpBuilder &nb, Location nl, ValueRange w) {
                                return gelu(nb, nl, w[0], approx);
                              });
      });
  addElementwise<SwigluOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, SwigluOp) {
        return viaComputeType(
            b, l, a, t, [](OpBuilder &nb, Location nl, ValueRange w) -> Value {
              Value silu =
                  arith::MulFOp::create(nb, nl, w[0], sigmoid(nb, nl, w[0]));
              return arith::MulFOp::create(nb, nl, silu, w[1]);
            });
      });
  addElementwise<NegOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, NegOp) -> Value {
        if (isFloat(t))
          return arith::NegFOp::create(b, l, a[0]);
        return arith::SubIOp::create(b, l, constantOf(b, l, t, 0), a[0]);
      });
  addElementwise<AbsOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, AbsOp) -> Value {
        if (isFloat(t))
          return math::AbsFOp::create(b, l, a[0]);
        return math::AbsIOp::create(b, l, a[0]);
      });
  addElementwise<SignOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, SignOp) -> Value {
        // x > 0 ? 1 : (x < 0 ? -1 : x): zeros and NaN pass through.
        Value zero = constantOf(b, l, t, 0);
        Value positive, negative;
        if (isFloat(t)) {
          positive = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                           a[0], zero);
          negative = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT,
                                           a[0], zero);
        } else {
          positive = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt,
                                           a[0], zero);
          negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                           a[0], zero);
        }
        Value inner = arith::SelectOp::create(
            b, l, negative, constantOf(b, l, t, -1), a[0]);
        return arith::SelectOp::create(b, l, positive, constantOf(b, l, t, 1),
                                       inner);
      });
  addElementwise<ModOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, ModOp op) -> Value {
        if (isFloat(t))
          return viaComputeType(
              b, l, a, t, [](OpBuilder &nb, Location nl, ValueRange w) {
                return arith::RemFOp::create(nb, nl, w[0], w[1]).getResult();
              });
        if (isUnsigned(t))
          return arith::RemUIOp::create(b, l, a[0], a[1]);
        Value rem = arith::RemSIOp::create(b, l, a[0], a[1]);
        if (op.getFmod())
          return rem;
        // Floored: a nonzero remainder whose sign differs from the
        // divisor's moves by one divisor.
        Value zero = constantOf(b, l, t, 0);
        Value nonzero =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, rem, zero);
        Value differ = arith::XOrIOp::create(
            b, l,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, rem, zero),
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[1], zero));
        Value adjust = arith::AndIOp::create(b, l, nonzero, differ);
        return arith::SelectOp::create(
            b, l, adjust, arith::AddIOp::create(b, l, rem, a[1]), rem);
      });
  addElementwise<ReluOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, ReluOp) -> Value {
        Value zero = constantOf(b, l, t, 0);
        if (isFloat(t))
          return arith::MaximumFOp::create(b, l, a[0], zero);
        return arith::MaxSIOp::create(b, l, a[0], zero);
      });
  addElementwise<NotOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T, NotOp) -> Value {
        return arith::XOrIOp::create(
            b, l, a[0], arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
      });
  addElementwise<IsNanOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T, IsNanOp) -> Value {
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, a[0],
                                     a[0]);
      });
  addElementwise<ClipOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, ClipOp op) -> Value {
        Value v = a[0];
        bool f = isFloat(t);
        if (std::optional<APFloat> lo = op.getMin()) {
          Value bound = constantOf(b, l, t, lo->convertToDouble());
          v = f ? arith::MaximumFOp::create(b, l, v, bound).getResult()
                : arith::MaxSIOp::create(b, l, v, bound).getResult();
        }
        if (std::optional<APFloat> hi = op.getMax()) {
          Value bound = constantOf(b, l, t, hi->convertToDouble());
          v = f ? arith::MinimumFOp::create(b, l, v, bound).getResult()
                : arith::MinSIOp::create(b, l, v, bound).getResult();
        }
        return v;
      });
  addElementwise<CastOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, CastOp op) {
        return convertScalar(b, l, a[0], t, op.getType().getElementType());
      });

  patterns.add<MatmulPattern, ReducePattern, SoftmaxPattern, TransposePattern,
               ReshapePattern, ExpandPattern, SlicePattern, ConcatPattern,
               SplitPattern, GatherPattern, GatherNDPattern, ScatterNDPattern,
               GatherElementsPattern, CheckIndicesPattern,
               TriluPattern,
               RangePattern, CumSumPattern, ConvPattern,
               StaticResultPattern<ShapeOp>,
               StaticResultPattern<SizeOp>,
               StaticResultPattern<ConstantOfShapeOp>, NormPattern<LayerNormOp>,
               NormPattern<RMSNormOp>, RotaryEmbeddingPattern, AmaxPattern,
               QuantizePattern, DequantizePattern>(patterns.getContext());
  patterns.add<LinearPattern, AttentionPattern>(patterns.getContext(),
                                                namedMatmul);
  patterns.add<ZeroElementResultsPattern>(patterns.getContext());
}

void mte::populateAttentionToLinalgPatterns(RewritePatternSet &patterns,
                                            bool namedMatmul,
                                            AttentionSoftmaxFn softmax) {
  patterns.add<AttentionPattern>(patterns.getContext(), namedMatmul,
                                 std::move(softmax));
}
