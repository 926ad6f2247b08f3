//===- NormKernel.cpp - the LayerNorm and RMSNorm row kernels -------------===//
//
// One row per normalised vector: the row (plus the residual, when the norm
// adds it, also written back) read once, the mean and variance reduced over
// the row's threads, the scale (and bias) applied on the way out; with
// `amax`, each row's max |y| too, for the FP8 quantization of the output;
// with `quantize_from`, the output itself in E4M3 (y rounded to that type,
// times a scale known before the run -- element `at` of a vector of them
// -- saturated: delayed scaling's cast,
// TransformerEngine's LayerNormLinear), the quantize pass saved.
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mte::cuda;

namespace {

struct NormKernel {
  bool isLayerNorm, hasBias, hasResidual, hasAmax;
  Type inputType, outputType;
  /// The type y is rounded to before it is quantized to `outputType`
  /// (E4M3); null when the output is y itself.
  Type quantizeFrom;
  /// The type y is rounded to, which the row maxima are of.
  Type roundedType() const { return quantizeFrom ? quantizeFrom : outputType; }
};

void buildNormBody(RowKernelBuilder &k, const NormKernel &kernel,
                   ValueRange args, ValueRange results) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const RowMapping &m = k.m;
  Value input = args[0], scale = args[1];
  unsigned next = 2;
  Value bias = kernel.hasBias ? args[next++] : Value();
  Value residual = kernel.hasResidual ? args[next++] : Value();
  Value epsilon = args[next++];
  Value output = results[0];
  Value fp8Scale;
  if (kernel.quantizeFrom) {
    Value at = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                          args[next + 1]);
    fp8Scale = memref::LoadOp::create(b, loc, args[next], ValueRange{at});
  }
  Value residualSum = kernel.hasResidual ? results[1] : Value();
  Value rowMaxima = kernel.hasAmax ? results.back() : Value();

  // The row, read once: x (+ residual, rounded to the input type as the
  // reference lowering does).
  SmallVector<SmallVector<Value>> values;
  SmallVector<Value> offsets, valid;
  Value sum = k.f32(0);
  for (int64_t v = 0; v < m.vectorsPerThread; ++v) {
    auto [offset, isValid] = k.vector(v);
    offsets.push_back(offset);
    valid.push_back(isValid);
    SmallVector<Value> x = k.loadF32(input, {k.row, offset}, isValid);
    if (residual) {
      SmallVector<Value> r = k.loadF32(residual, {k.row, offset}, isValid);
      for (auto [xi, ri] : llvm::zip(x, r)) {
        xi = arith::AddFOp::create(b, loc, xi, ri);
        if (!kernel.inputType.isF32())
          xi = arith::ExtFOp::create(
              b, loc, b.getF32Type(),
              arith::TruncFOp::create(b, loc, kernel.inputType, xi)
                  .getResult());
      }
      k.store(x, residualSum, {k.row, offset}, isValid);
    }
    if (kernel.isLayerNorm)
      sum = arith::AddFOp::create(b, loc, sum,
                                  k.reduceLanes(x, isValid, /*isMax=*/false));
    values.push_back(std::move(x));
  }

  Value length = k.f32(m.length);
  auto sumOfSquares = [&](Value shift) {
    Value squares = k.f32(0);
    for (auto [x, isValid] : llvm::zip(values, valid)) {
      SmallVector<Value> sq = llvm::map_to_vector(x, [&](Value xi) -> Value {
        Value d = shift ? arith::SubFOp::create(b, loc, xi, shift) : xi;
        return arith::MulFOp::create(b, loc, d, d);
      });
      squares = arith::AddFOp::create(b, loc, squares,
                                      k.reduceLanes(sq, isValid, false));
    }
    return squares;
  };
  Value variance, mean;
  if (!kernel.isLayerNorm) {
    variance = arith::DivFOp::create(
        b, loc, k.reduceRow(sumOfSquares({}), /*isMax=*/false, 0), length);
  } else if (hasEqualShares(m)) {
    // Each thread's mean and M2 over its own elements, merged in one
    // reduction.
    int64_t count = m.vectorsPerThread * m.lanes;
    Value threadMean = arith::MulFOp::create(b, loc, sum, k.f32(1.0 / count));
    // Chan et al.'s merge of the (mean, M2) of two disjoint parts of na and
    // nb elements: mean = ma + d * nb / n, M2 = M2a + M2b + d^2 * na * nb /
    // n, d = mb - ma; as stable as a second pass over the deviations.
    auto chan = [&](std::pair<Value, Value> x, std::pair<Value, Value> y,
                    int64_t threadsA, int64_t threadsB) {
      double na = threadsA * count, nb = threadsB * count, n = na + nb;
      Value delta = arith::SubFOp::create(b, loc, y.first, x.first);
      Value mean = arith::AddFOp::create(
          b, loc, x.first, arith::MulFOp::create(b, loc, delta, k.f32(nb / n)));
      Value spread = arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, delta, delta),
          k.f32(na * nb / n));
      Value m2 = arith::AddFOp::create(
          b, loc, arith::AddFOp::create(b, loc, x.second, y.second), spread);
      return std::pair<Value, Value>{mean, m2};
    };
    auto [rowMean, m2] =
        k.reducePair({threadMean, sumOfSquares(threadMean)}, chan, 0);
    mean = rowMean;
    variance = arith::DivFOp::create(b, loc, m2, length);
  } else {
    // Ragged rows: the mean, then the squared deviations from it.
    mean = arith::DivFOp::create(b, loc, k.reduceRow(sum, /*isMax=*/false, 0),
                                 length);
    variance = arith::DivFOp::create(
        b, loc, k.reduceRow(sumOfSquares(mean), /*isMax=*/false, 1), length);
  }
  if (mean)
    for (SmallVector<Value> &x : values)
      for (Value &xi : x)
        xi = arith::SubFOp::create(b, loc, xi, mean);
  Value inverse = math::RsqrtOp::create(
      b, loc, arith::AddFOp::create(b, loc, variance, epsilon));

  Value amax = rowMaxima ? k.f32(0) : Value();
  for (auto [x, offset, isValid] : llvm::zip(values, offsets, valid)) {
    SmallVector<Value> gamma = k.loadF32(scale, offset, isValid);
    SmallVector<Value> beta;
    if (bias)
      beta = k.loadF32(bias, offset, isValid);
    SmallVector<Value> y;
    for (int64_t l = 0; l < m.lanes; ++l) {
      Value yl = arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, x[l], inverse), gamma[l]);
      if (bias)
        yl = arith::AddFOp::create(b, loc, yl, beta[l]);
      y.push_back(yl);
    }
    amax = k.storeResult(y, output, {k.row, offset}, isValid,
                         kernel.roundedType(), fp8Scale, amax);
  }
  if (rowMaxima)
    k.storeRowAmax(amax, kernel.isLayerNorm ? 2 : 1, kernel.roundedType(),
                   rowMaxima);
}

} // namespace

LogicalResult mte::cuda::defineNormKernel(func::FuncOp func,
                                          kernel::RowKernelAttr spec) {
  FailureOr<MemRefType> rowsBuffer = getRowsBuffer(func);
  if (failed(rowsBuffer))
    return failure();
  MemRefType rows = *rowsBuffer;
  auto fail = [&](const Twine &why) { return invalidKernel(func, "row", why); };
  ArrayRef<Type> types = func.getArgumentTypes();
  NormKernel kernel;
  kernel.isLayerNorm = spec.getKind() == kernel::RowKernelKind::LayerNorm;
  kernel.hasBias = spec.getBias();
  kernel.hasResidual = spec.getResidual();
  kernel.hasAmax = spec.getAmax();
  kernel.quantizeFrom = spec.getQuantizeFrom();
  kernel.inputType = rows.getElementType();
  // Quantizing, the scale is element `at` (i64) of an f32 [T] vector.
  unsigned scaleInputs = kernel.quantizeFrom ? 2 : 0;
  unsigned numInputs = 3 + kernel.hasBias + kernel.hasResidual + scaleInputs;
  if (types.size() != numInputs + 1 + kernel.hasResidual + kernel.hasAmax ||
      !types[numInputs - 1 - scaleInputs].isF32())
    return fail("wrong number of arguments or no f32 epsilon");
  if (scaleInputs) {
    auto scales = dyn_cast<MemRefType>(types[numInputs - 2]);
    if (!scales || scales.getRank() != 1 ||
        !scales.getElementType().isF32() || !types[numInputs - 1].isInteger(64))
      return fail("needs an f32 [T] vector of scales and an i64 index into "
                  "it to quantize its output");
  }
  auto output = dyn_cast<MemRefType>(types[numInputs]);
  if (!output || output.getShape() != rows.getShape())
    return fail("needs an output of the input's [rows, length] shape");
  kernel.outputType = output.getElementType();
  if (scaleInputs && !isa<Float8E4M3FNType>(kernel.outputType))
    return fail("quantizes to an f8E4M3FN output");
  if (kernel.hasAmax) {
    auto maxima = dyn_cast<MemRefType>(types.back());
    if (!maxima || maxima.getRank() != 1 ||
        maxima.getDimSize(0) != rows.getDimSize(0) ||
        !maxima.getElementType().isF32())
      return fail("needs an f32 [rows] output for the rows' amaxes");
  }
  std::optional<RowMapping> mapping =
      planRows(rows.getDimSize(0), rows.getDimSize(1), kernel.inputType);
  if (!mapping)
    return fail("rows too long");
  defineKernel(func, numInputs, *mapping,
               (kernel.isLayerNorm ? 2 : 1) + kernel.hasAmax,
               [&](RowKernelBuilder &k, ValueRange args, ValueRange results) {
                 buildNormBody(k, kernel, args, results);
               });
  return success();
}
