//===- LoweringUtils.h - shared helpers of the reference lowering -*- C++ -*-===//
//
// Scalar and structured-op helpers that the lowering's op families
// (Elementwise.cpp, DataMovement.cpp, Reductions.cpp, Contractions.cpp,
// Quantization.cpp) share, and that a backend's own forms of some ops
// (lib/Codegen/CUDA/LibraryContractions.cpp) are built with, so that they
// compute what the reference lowering computes.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_CONVERSION_TRANSFORMERTOLINALG_LOWERINGUTILS_H
#define MTE_CONVERSION_TRANSFORMERTOLINALG_LOWERINGUTILS_H

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mte::lowering {

using namespace mlir;
using namespace mte::transformer;

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

using Combiner = Value (*)(OpBuilder &, Location, Value, Value);

template <typename OpTy>
Value combine(OpBuilder &b, Location l, Value a, Value x) {
  return OpTy::create(b, l, a, x);
}

bool isFloat(Type t);

bool isUnsigned(Type t);

/// The type f16/bf16 values are computed in: f32. Others compute as they are.
Type computeType(Type t);

/// Arithmetic on unsigned MLIR integers goes through signless values.
Type signlessType(Type t);

Value constantOf(OpBuilder &b, Location loc, Type t, double value);

/// Converts a scalar between element types with ONNX Cast semantics.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type from, Type to);

/// One element of an fp8 cast: the f32 `x` times (`multiply`) or divided
/// by `scale`, converted to `fp8` saturating (or, without `saturate`,
/// overflowing to NaN/inf). transformer.quantize's body, and that of the
/// cast a GEMM writing E4M3 takes over.
Value quantizeScalar(OpBuilder &b, Location loc, Value x, Value scale,
                     Type fp8, bool multiply, bool saturate);

Value sigmoid(OpBuilder &b, Location loc, Value x);

Value gelu(OpBuilder &b, Location loc, Value x, GeluApproximation approx);

Value applyActivation(OpBuilder &b, Location loc, Value x, Activation act);

/// The map reading `operandType` inside a loop nest of `numLoops` loops whose
/// trailing dimensions follow `resultShape`, with numpy broadcasting: the
/// operand aligns to the right and its size-1 dimensions read index 0.
AffineMap broadcastMap(MLIRContext *ctx, RankedTensorType operandType,
                       ArrayRef<int64_t> resultShape, unsigned numLoops);

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elementType, double value);

/// One linalg.generic computing `body` elementwise over broadcast `inputs`
/// into a fresh tensor of `resultType`. `body` receives the input scalars.
/// Reinterprets a tensor of unsigned integers as signless (arith only takes
/// signless integers), or back.
Value bitcastElements(OpBuilder &b, Location loc, Value v, Type elementType);

Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange originalInputs, BodyFn body);

/// Reduces `input` over its trailing dimensions from `firstReduced` with
/// `combine`, starting from `initValue`, in element type `accType` (the
/// input is converted on read). The result has the leading dimensions.
Value reduceTrailing(
    OpBuilder &b, Location loc, Value input, int64_t firstReduced, Type accType,
    double initValue,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine,
    function_ref<Value(OpBuilder &, Location, Value)> map = nullptr);

/// Reshapes a static tensor by collapsing to 1-D and expanding to `shape`.
Value reshapeTensor(OpBuilder &b, Location loc, Value input,
                    ArrayRef<int64_t> shape);

Value castTensor(OpBuilder &b, Location loc, Value input, Type elementType);

/// Float ops computed in f32 for f16/bf16 inputs.
Value viaComputeType(OpBuilder &b, Location loc, ValueRange args, Type t,
                     function_ref<Value(OpBuilder &, Location, ValueRange)> f);

/// The initial value and combiner of a reduction kind, in `acc`.
std::pair<double, Combiner> reduction(ReduceKind kind, Type acc);

/// softmax over the last dimension of `input` (already moved there), in f32.
/// Softmax over the last dimension. With `zeroEmptyRows`, a row whose
/// entries are all -inf (attention with every key masked) gives zeros
/// instead of NaN.
Value softmaxLast(OpBuilder &b, Location loc, Value input,
                  bool zeroEmptyRows = false);

} // namespace mte::lowering

#endif // MTE_CONVERSION_TRANSFORMERTOLINALG_LOWERINGUTILS_H
