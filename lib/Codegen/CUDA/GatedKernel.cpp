//===- GatedKernel.cpp - SwiGLU and GeGLU with their FP8 amax (and cast) --===//
//
// act(gate) · up over [rows, length] views of gate and up (the two column
// halves of a packed gate/up projection, read in place), act silu (SwiGLU:
// Llama, Mistral, Qwen) or GELU, exact or tanh (GeGLU: Gemma), computed in
// f32 and rounded to the output type as the elementwise lowering does, for
// a product that FP8 quantizes next: with `amax`, each row's max |y| too,
// so that the amax does not read the product again; with `quantize_from`,
// the E4M3 codes instead of the product (delayed scaling's cast, its scale
// known before the run), so that the quantize pass goes as well. The down
// projection's input is the widest activation of the layer.
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <numeric>

using namespace mlir;
using namespace mte::cuda;

namespace {

struct GatedKernel {
  mte::kernel::RowKernelKind kind;
  bool hasAmax;
  Type outputType, quantizeFrom;
  Type roundedType() const { return quantizeFrom ? quantizeFrom : outputType; }
};

/// The gate's activation, in f32.
Value activate(OpBuilder &b, Location loc, mte::kernel::RowKernelKind kind,
               Value gate) {
  using mte::transformer::GeluApproximation;
  switch (kind) {
  case mte::kernel::RowKernelKind::Geglu:
    return mte::lowering::gelu(b, loc, gate, GeluApproximation::None);
  case mte::kernel::RowKernelKind::GegluTanh:
    return mte::lowering::gelu(b, loc, gate, GeluApproximation::Tanh);
  default:
    return arith::MulFOp::create(b, loc, gate,
                                 mte::lowering::sigmoid(b, loc, gate));
  }
}

void buildGatedBody(RowKernelBuilder &k, const GatedKernel &kernel,
                    ValueRange args, ValueRange results) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  Value gate = args[0], up = args[1];
  Value scale;
  if (kernel.quantizeFrom) {
    Value at = arith::IndexCastOp::create(b, loc, b.getIndexType(), args[3]);
    scale = memref::LoadOp::create(b, loc, args[2], ValueRange{at});
  }
  Value output = results[0];
  Value rowMaxima = kernel.hasAmax ? results[1] : Value();
  Value amax = rowMaxima ? k.f32(0) : Value();
  for (int64_t v = 0; v < k.m.vectorsPerThread; ++v) {
    auto [offset, valid] = k.vector(v);
    SmallVector<Value> g = k.loadF32(gate, {k.row, offset}, valid);
    SmallVector<Value> u = k.loadF32(up, {k.row, offset}, valid);
    SmallVector<Value> y;
    for (auto [gl, ul] : llvm::zip(g, u))
      y.push_back(
          arith::MulFOp::create(b, loc, activate(b, loc, kernel.kind, gl), ul));
    amax = k.storeResult(y, output, {k.row, offset}, valid,
                         kernel.roundedType(), scale, amax);
  }
  if (rowMaxima)
    k.storeRowAmax(amax, 0, kernel.roundedType(), rowMaxima);
}

} // namespace

LogicalResult mte::cuda::defineGatedKernel(func::FuncOp func,
                                           kernel::RowKernelAttr spec) {
  auto fail = [&](const Twine &why) {
    return invalidKernel(
        func, mte::kernel::stringifyRowKernelKind(spec.getKind()), why);
  };
  GatedKernel kernel;
  kernel.kind = spec.getKind();
  kernel.hasAmax = spec.getAmax();
  kernel.quantizeFrom = spec.getQuantizeFrom();
  unsigned numInputs = kernel.quantizeFrom ? 4 : 2;
  ArrayRef<Type> types = func.getArgumentTypes();
  if (types.size() != numInputs + 1 + kernel.hasAmax)
    return fail("wrong number of arguments");
  // gate and up: [rows, length] views with static strides, the last 1.
  int64_t alignment = 0;
  MemRefType gate;
  for (Type type : types.take_front(2)) {
    auto view = dyn_cast<MemRefType>(type);
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!view || view.getRank() != 2 || !view.hasStaticShape() ||
        failed(view.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) ||
        llvm::any_of(strides, ShapedType::isDynamic) || strides[1] != 1 ||
        (gate && (view.getShape() != gate.getShape() ||
                  view.getElementType() != gate.getElementType())))
      return fail("gate and up must be [rows, length] views of one shape "
                  "and type with static strides, the last 1");
    gate = view;
    // Every vector starts a multiple of its lanes from the base.
    alignment = std::gcd(alignment, std::gcd(offset, strides[0]));
  }
  if (kernel.quantizeFrom) {
    auto scales = dyn_cast<MemRefType>(types[2]);
    if (!scales || scales.getRank() != 1 || !scales.getElementType().isF32() ||
        !types[3].isInteger(64))
      return fail("needs an f32 [T] vector of scales and an i64 index into "
                  "it to quantize its output");
  }
  auto output = dyn_cast<MemRefType>(types[numInputs]);
  if (!output || output.getShape() != gate.getShape() ||
      !output.getLayout().isIdentity())
    return fail("needs a dense output of the inputs' [rows, length] shape");
  kernel.outputType = output.getElementType();
  if (kernel.quantizeFrom && !isa<Float8E4M3FNType>(kernel.outputType))
    return fail("quantizes to an f8E4M3FN output");
  if (kernel.hasAmax) {
    auto maxima = dyn_cast<MemRefType>(types.back());
    if (!maxima || maxima.getRank() != 1 ||
        maxima.getDimSize(0) != gate.getDimSize(0) ||
        !maxima.getElementType().isF32())
      return fail("needs an f32 [rows] output for the rows' amaxes");
  }
  std::optional<RowMapping> mapping = planRows(
      gate.getDimSize(0), gate.getDimSize(1), gate.getElementType(), alignment);
  if (!mapping)
    return fail("rows too long");
  defineKernel(func, numInputs, *mapping, /*reductions=*/kernel.hasAmax,
               [&](RowKernelBuilder &k, ValueRange args, ValueRange results) {
                 buildGatedBody(k, kernel, args, results);
               });
  return success();
}
