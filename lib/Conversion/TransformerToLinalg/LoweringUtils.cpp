//===- LoweringUtils.cpp - shared helpers of the reference lowering -------===//

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"

#include <cmath>

using namespace mlir;
using namespace mte::transformer;

namespace {
/// The largest finite value of an fp8 type.
std::optional<double> fp8Max(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return 448.0;
  if (isa<Float8E5M2Type>(t))
    return 57344.0;
  return std::nullopt;
}
} // namespace

namespace mte::lowering {

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
    function_ref<Value(OpBuilder &, Location, Value)> map) {
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

/// Float ops computed in f32 for f16/bf16 inputs.
Value viaComputeType(OpBuilder &b, Location loc, ValueRange args, Type t,
                     function_ref<Value(OpBuilder &, Location, ValueRange)> f) {
  Type c = computeType(t);
  SmallVector<Value> widened = llvm::map_to_vector(
      args, [&](Value v) { return convertScalar(b, loc, v, t, c); });
  return convertScalar(b, loc, f(b, loc, widened), c, t);
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

/// softmax over the last dimension of `input` (already moved there), in f32.
/// Softmax over the last dimension. With `zeroEmptyRows`, a row whose
/// entries are all -inf (attention with every key masked) gives zeros
/// instead of NaN.
Value softmaxLast(OpBuilder &b, Location loc, Value input,
                  bool zeroEmptyRows) {
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

Value quantizeScalar(OpBuilder &b, Location loc, Value x, Value scale,
                     Type fp8, bool multiply, bool saturate) {
  Value scaled = multiply ? arith::MulFOp::create(b, loc, x, scale).getResult()
                          : arith::DivFOp::create(b, loc, x, scale).getResult();
  if (!saturate)
    return arith::TruncFOp::create(b, loc, fp8, scaled);
  return convertScalar(b, loc, scaled, b.getF32Type(), fp8);
}

} // namespace mte::lowering
