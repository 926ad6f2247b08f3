//===- TransformerToRowKernels.cpp - norms and softmax as row kernels -----===//
//
// Chooses the CUDA backend's row kernels on tensors, where the norms and
// attention are still single ops: each becomes a call of a kernel
// declaration on buffers, which mte-build-row-kernels defines after
// bufferization. Attention that the runtime's fused kernels take becomes
// one such call; other attention keeps its GEMMs around a softmax kernel.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/CUDA/Passes.h"

#include "mte/Codegen/CUDA/LibraryContractions.h"
#include "mte/Codegen/CUDA/RowKernels.h"
#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Dialect/Kernel/IR/KernelOps.h"
#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

#include <limits>

namespace mte {
#define GEN_PASS_DEF_CONVERTTRANSFORMERTOROWKERNELS
#include "mte/Codegen/CUDA/Passes.h.inc"
} // namespace mte

using namespace mlir;
using mte::kernel::RowKernelAttr;
using mte::kernel::RowKernelKind;
using namespace mte::transformer;
using mte::lowering::reshapeTensor;

namespace {

bool isKernelFloat(Type t) { return t.isF16() || t.isBF16() || t.isF32(); }

/// `<d0>x<d1>...`, then `x<type>` if given: a kernel name's shape part.
std::string mangle(ArrayRef<int64_t> shape, Type elementType = {}) {
  std::string name;
  llvm::raw_string_ostream os(name);
  llvm::interleave(shape, os, "x");
  if (elementType)
    os << (shape.empty() ? "" : "x") << elementType;
  return name;
}

/// The argument type through which a kernel reads operand `value`: a
/// buffer of its shape in `layout` (identity when null) for a tensor, the
/// scalar's own type otherwise.
Type argumentType(Value value, MemRefLayoutAttrInterface layout = {}) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  if (!tensor)
    return value.getType();
  return MemRefType::get(tensor.getShape(), tensor.getElementType(), layout);
}

/// The parameters of a #kernel.row_kernel, filled in as a call is built.
struct KernelSpec {
  RowKernelKind kind;
  int64_t heads = 0, kvHeads = 0, seq = 0, queries = 0;
  std::optional<SmallVector<int64_t>> maskShape;
  bool bias = false, residual = false, causal = false, headsMajor = false,
       amax = false;
  Type quantizeFrom;

  RowKernelAttr get(MLIRContext *ctx) const {
    return RowKernelAttr::get(
        ctx, kind, heads, kvHeads, seq, queries,
        maskShape ? DenseI64ArrayAttr::get(ctx, *maskShape) : nullptr, bias,
        residual, causal, headsMajor, amax, quantizeFrom);
  }
};

/// Calls the kernel declaration `name` (declaring it with `spec` and
/// `arguments` on first use) on `inputs`, writing fresh tensors of
/// `resultTypes`, which it returns. The call is a kernel.call: its
/// operands are read, and its outputs written, where it runs.
SmallVector<Value> callKernel(OpBuilder &b, Location loc, StringRef name,
                              RowKernelAttr spec, ValueRange inputs,
                              ArrayRef<RankedTensorType> resultTypes,
                              ArrayRef<Type> arguments,
                              OpBuilder &moduleBuilder, SymbolTable &symbols,
                              bool writesInPlace = false) {
  auto func = symbols.lookup<func::FuncOp>(name);
  if (!func) {
    func = func::FuncOp::create(moduleBuilder, loc, name,
                                b.getFunctionType(arguments, {}));
    func.setPrivate();
    func->setAttr(mte::kRowKernelAttrName, spec);
    symbols.insert(func);
  }
  SmallVector<Value> outputs;
  SmallVector<Type> types;
  // A fresh buffer for each output: unlike tensor.empty, alloc_tensor is
  // not merged by CSE, which would make all kernels of a shape compete for
  // one buffer (and the ops around them take fresh ones instead). With
  // `writesInPlace`, tensor.empty: empty-tensor elimination may then give
  // the kernel the buffer its result is inserted into.
  for (RankedTensorType t : resultTypes) {
    outputs.push_back(writesInPlace
                          ? Value(tensor::EmptyOp::create(b, loc, t.getShape(),
                                                          t.getElementType()))
                          : Value(bufferization::AllocTensorOp::create(
                                b, loc, t, ValueRange())));
    types.push_back(t);
  }
  auto call = mte::kernel::CallOp::create(b, loc, types, func.getSymName(),
                                          inputs, outputs);
  return SmallVector<Value>(call.getResults());
}

/// Calls the row kernel `name` (declaring it with `spec` on first use) on
/// `inputs` (tensors read through buffers of their shapes, scalars passed
/// as they are); returns the tensors of `resultTypes` it writes, each
/// through its `rowsShape` view, into a buffer in the result's own shape: a
/// model output is written in place.
SmallVector<Value> callRowKernel(OpBuilder &b, Location loc, StringRef name,
                                 RowKernelAttr spec, ValueRange inputs,
                                 ArrayRef<RankedTensorType> resultTypes,
                                 ArrayRef<int64_t> rowsShape,
                                 OpBuilder &moduleBuilder,
                                 SymbolTable &symbols) {
  SmallVector<Type> arguments;
  for (Value input : inputs)
    arguments.push_back(argumentType(input));
  for (RankedTensorType t : resultTypes)
    arguments.push_back(MemRefType::get(rowsShape, t.getElementType()));
  return callKernel(b, loc, name, spec, inputs, resultTypes, arguments,
                    moduleBuilder, symbols);
}

//===----------------------------------------------------------------------===//
// LayerNorm and RMSNorm
//===----------------------------------------------------------------------===//

/// The quantize of `output` the kernel of its `producer` (a norm, a SwiGLU)
/// can do as it stores the row: the only user of `output` besides amaxes,
/// a per-tensor E4M3 cast times a scale that does not depend on the
/// producer (delayed scaling's), whose definition moves above `producer`.
/// Null when there is none.
QuantizeOp fusibleQuantize(Operation *producer, Value output) {
  QuantizeOp quantize;
  for (Operation *user : output.getUsers()) {
    if (isa<AmaxOp>(user))
      continue;
    auto candidate = dyn_cast<QuantizeOp>(user);
    if (quantize || !candidate || !candidate.getMultiply() ||
        !candidate.getSaturate() || candidate.isBlockScaled() ||
        !isa<Float8E4M3FNType>(candidate.getType().getElementType()))
      return {};
    quantize = candidate;
  }
  if (!quantize)
    return {};
  IRRewriter rewriter(producer->getContext());
  if (failed(moveValueDefinitions(rewriter, quantize.getScale(), producer)))
    return {};
  return quantize;
}

/// An f32 vector and the index of `scale` (an f32 scalar tensor) in it:
/// the tensor a slice of one element was taken from, flattened, or `scale`
/// itself as a vector of one.
std::pair<Value, int64_t> scaleVector(OpBuilder &b, Location loc, Value scale) {
  if (auto reshape = scale.getDefiningOp<ReshapeOp>())
    if (auto slice = reshape.getInput().getDefiningOp<SliceOp>()) {
      auto whole = cast<RankedTensorType>(slice.getInput().getType());
      if (whole.hasStaticShape() &&
          llvm::all_of(slice.getSizes(), [](int64_t d) { return d == 1; }) &&
          llvm::all_of(slice.getStrides(), [](int64_t d) { return d == 1; })) {
        int64_t at = 0;
        for (auto [offset, size] :
             llvm::zip(slice.getOffsets(), whole.getShape()))
          at = at * size + offset;
        return {
            reshapeTensor(b, loc, slice.getInput(), {whole.getNumElements()}),
            at};
      }
    }
  return {reshapeTensor(b, loc, scale, {1}), 0};
}

/// What FP8 scaling reads of a row kernel's output (rows of `length`): its
/// amaxes, which then start from the rows' maxima the kernel writes; its
/// rows' maxima themselves (rowwise scaling's block_amax over whole rows),
/// which those are; and the quantize the kernel can do itself
/// (fusibleQuantize).
struct Fp8Readers {
  SmallVector<AmaxOp> amaxes;
  SmallVector<BlockAmaxOp> rowAmaxes;
  QuantizeOp quantize;

  Fp8Readers(Operation *producer, Value output, int64_t length) {
    for (Operation *user : output.getUsers()) {
      if (auto amax = dyn_cast<AmaxOp>(user))
        amaxes.push_back(amax);
      if (auto amax = dyn_cast<BlockAmaxOp>(user);
          amax && static_cast<int64_t>(amax.getBlockSize()) == length &&
          amax.getInput().getType().getShape().back() == length)
        rowAmaxes.push_back(amax);
    }
    quantize = fusibleQuantize(producer, output);
  }

  bool readsRowMaxima() const {
    return !amaxes.empty() || !rowAmaxes.empty();
  }

  /// Says so in the kernel's name and spec; `stored` is the type the
  /// output had, which the codes are cast from.
  void describe(std::string &name, KernelSpec &spec, Type stored) const {
    if (readsRowMaxima()) {
      name += "_amax";
      spec.amax = true;
    }
    if (quantize) {
      name += "_e4m3";
      spec.quantizeFrom = stored;
    }
  }

  /// The quantize's scale as the kernel's two inputs: the vector it is an
  /// element of, which every kernel reads in place, and its index (i64).
  void addScaleInputs(OpBuilder &b, Location loc,
                      SmallVectorImpl<Value> &inputs) {
    if (!quantize)
      return;
    auto [scales, at] = scaleVector(b, loc, quantize.getScale());
    inputs.push_back(scales);
    inputs.push_back(
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(at)));
  }

  /// After the call: the amaxes read `rowMaxima`, the rows' maxima are
  /// they, the quantize's users the kernel's `codes`.
  void rewire(Value rowMaxima, Value codes) {
    for (AmaxOp amax : amaxes)
      amax.getInputMutable().assign(rowMaxima);
    for (BlockAmaxOp amax : rowAmaxes) {
      OpBuilder b(amax);
      amax.replaceAllUsesWith(reshapeTensor(b, amax.getLoc(), rowMaxima,
                                            amax.getType().getShape()));
      amax->erase();
    }
    if (quantize) {
      quantize.replaceAllUsesWith(codes);
      quantize.erase();
    }
  }
};

/// Replaces a norm by a call of its kernel, when it has one. When an FP8
/// amax reads the norm's output, the kernel also writes each row's max |y|
/// and the amax reads those instead: one read of the output fewer. When the
/// output is only quantized, by a scale known before the norm runs, the
/// kernel writes the E4M3 codes instead of the output: no quantize pass.
template <typename NormOp>
void convertNorm(NormOp op, OpBuilder &moduleBuilder, SymbolTable &symbols) {
  constexpr bool isLayerNorm = std::is_same_v<NormOp, LayerNormOp>;
  RankedTensorType type = op.getInput().getType();
  Type inputType = type.getElementType();
  Type outputType = op.getOutput().getType().getElementType();
  if (!type.hasStaticShape() || type.getNumElements() == 0 ||
      !isKernelFloat(inputType) || !isKernelFloat(outputType))
    return;
  int64_t axis = *normalizeAxis(op.getAxis(), type.getRank());
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d)
    rows *= type.getDimSize(d);
  int64_t length = type.getNumElements() / rows;
  // The input type sets the vector width; an f32 output of a 16-bit input
  // stores 32-byte vectors, which LLVM splits.
  if (!mte::canBuildRowKernel(length, inputType))
    return;

  Value bias;
  if constexpr (isLayerNorm)
    bias = op.getBias();
  Value residual = op.getResidual();
  MLIRContext *ctx = op.getContext();
  KernelSpec spec{isLayerNorm ? RowKernelKind::LayerNorm
                              : RowKernelKind::RMSNorm};
  std::string name = isLayerNorm ? "mte_row_layer_norm_" : "mte_row_rms_norm_";
  name += mangle({rows, length}, inputType);
  if (outputType != inputType)
    name += "_to_" + mangle({}, outputType);
  if (bias) {
    name += "_bias";
    spec.bias = true;
  }
  if (residual) {
    name += "_residual";
    spec.residual = true;
  }
  Fp8Readers fp8(op, op.getOutput(), length);
  fp8.describe(name, spec, outputType);

  Location loc = op.getLoc();
  OpBuilder b(op);
  SmallVector<Value> inputs = {
      reshapeTensor(b, loc, op.getInput(), {rows, length}),
      reshapeTensor(b, loc, op.getScale(), {length})};
  if (bias)
    inputs.push_back(reshapeTensor(b, loc, bias, {length}));
  if (residual)
    inputs.push_back(reshapeTensor(b, loc, residual, {rows, length}));
  inputs.push_back(arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(op.getEpsilon().convertToFloat())));
  fp8.addScaleInputs(b, loc, inputs);
  SmallVector<RankedTensorType> resultTypes;
  SmallVector<Type> arguments;
  for (Value input : inputs)
    arguments.push_back(argumentType(input));
  for (Value result : op->getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    if (fp8.quantize && result == op.getOutput())
      type = fp8.quantize.getType();
    resultTypes.push_back(type);
    arguments.push_back(MemRefType::get({rows, length}, type.getElementType()));
  }
  if (spec.amax) {
    resultTypes.push_back(RankedTensorType::get({rows}, b.getF32Type()));
    arguments.push_back(MemRefType::get({rows}, b.getF32Type()));
  }
  SmallVector<Value> results =
      callKernel(b, loc, name, spec.get(ctx), inputs, resultTypes, arguments,
                 moduleBuilder, symbols);
  Value rowMaxima = spec.amax ? results.pop_back_val() : Value();
  fp8.rewire(rowMaxima, results.front());
  op->replaceAllUsesWith(results);
  op->erase();
}

//===----------------------------------------------------------------------===//
// SwiGLU and GeGLU feeding an FP8 GEMM
//===----------------------------------------------------------------------===//

/// Replaces a SwiGLU or GeGLU whose product an FP8 amax reads by a call of
/// its row kernel, which writes each row's max |y| with the product (and,
/// when the product is only quantized by a scale known before the run, the
/// E4M3 codes instead of it): the amax, and the quantize, read nothing
/// again. gate and up are read in place through [rows, length] views with
/// any row stride and offset (the column halves of the packed gate/up
/// projection); mte-build-row-kernels specialises the kernel on their
/// layouts.
void convertGated(Operation *op, Value gate, Value up, RowKernelKind kind,
                  OpBuilder &moduleBuilder, SymbolTable &symbols) {
  Value product = op->getResult(0);
  auto type = cast<RankedTensorType>(product.getType());
  Type element = type.getElementType();
  if (!type.hasStaticShape() || type.getRank() < 1 ||
      type.getNumElements() == 0 || !isKernelFloat(element))
    return;
  int64_t length = type.getShape().back();
  int64_t rows = type.getNumElements() / length;
  if (!mte::canBuildRowKernel(length, element))
    return;
  // Without an amax the elementwise kernel does as well.
  Fp8Readers fp8(op, product, length);
  if (!fp8.readsRowMaxima())
    return;
  MLIRContext *ctx = op->getContext();
  KernelSpec spec{kind};
  std::string name = ("mte_row_" + stringifyRowKernelKind(kind) + "_").str() +
                     mangle({rows, length}, element);
  fp8.describe(name, spec, element);

  Location loc = op->getLoc();
  OpBuilder b(op);
  int64_t dynamic = ShapedType::kDynamic;
  auto strided = StridedLayoutAttr::get(ctx, dynamic, {dynamic, 1});
  // [..., length] as [rows, length] by merging the leading dimensions
  // only, which keeps a column slice a view.
  auto rowsView = [&](Value v) -> Value {
    int64_t rank = type.getRank();
    if (rank == 2)
      return v;
    if (rank == 1)
      return reshapeTensor(b, loc, v, {1, length});
    SmallVector<ReassociationIndices> groups(2);
    for (int64_t d = 0; d + 1 < rank; ++d)
      groups[0].push_back(d);
    groups[1].push_back(rank - 1);
    return tensor::CollapseShapeOp::create(b, loc, v, groups);
  };
  SmallVector<Value> inputs = {rowsView(gate), rowsView(up)};
  SmallVector<Type> arguments = {argumentType(inputs[0], strided),
                                 argumentType(inputs[1], strided)};
  fp8.addScaleInputs(b, loc, inputs);
  for (Value input : ArrayRef(inputs).drop_front(2))
    arguments.push_back(argumentType(input));
  RankedTensorType outputType = fp8.quantize ? fp8.quantize.getType() : type;
  SmallVector<RankedTensorType> resultTypes = {
      outputType, RankedTensorType::get({rows}, b.getF32Type())};
  arguments.push_back(
      MemRefType::get({rows, length}, outputType.getElementType()));
  arguments.push_back(MemRefType::get({rows}, b.getF32Type()));
  SmallVector<Value> results =
      callKernel(b, loc, name, spec.get(ctx), inputs, resultTypes, arguments,
                 moduleBuilder, symbols);
  bool quantized = static_cast<bool>(fp8.quantize);
  fp8.rewire(results[1], results[0]);
  if (!quantized)
    product.replaceAllUsesWith(results[0]);
  op->erase();
}

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

/// Replaces a rotate-half rotary embedding over whole heads by a call of its
/// kernel, where a thread reads a vector of each half of a head and writes
/// both: x is read once. x is read in place through a [outer, mid, D] view
/// with any outer and mid strides, so the Q and K column slices of a packed
/// projection need no copy; mte-build-row-kernels specialises the kernel on
/// the layouts of its call sites.
void convertRotary(RotaryEmbeddingOp op, OpBuilder &moduleBuilder,
                   SymbolTable &symbols) {
  RankedTensorType type = op.getInput().getType();
  RankedTensorType tableType = op.getCos().getType();
  Type element = type.getElementType();
  if (op.getInterleaved() || !type.hasStaticShape() ||
      !tableType.hasStaticShape() || type.getNumElements() == 0 ||
      !isKernelFloat(element))
    return;
  // [B, S, H * D] is viewed as [B * S, H, D], [B, H, S, D] as [B * H, S, D].
  bool headsMajor = type.getRank() == 4;
  int64_t batch = type.getDimSize(0), heads, seq, headDim;
  if (headsMajor) {
    heads = type.getDimSize(1);
    seq = type.getDimSize(2);
    headDim = type.getDimSize(3);
  } else {
    heads = *op.getNumHeads();
    seq = type.getDimSize(1);
    headDim = type.getDimSize(2) / heads;
  }
  if (static_cast<int64_t>(op.getRotaryDim().value_or(headDim)) != headDim ||
      !mte::canBuildRowKernel(headDim / 2, element))
    return;
  int64_t tableRows = tableType.getNumElements() / tableType.getShape().back();
  int64_t width = tableType.getShape().back();

  MLIRContext *ctx = op.getContext();
  KernelSpec spec{RowKernelKind::Rotary};
  spec.heads = heads;
  spec.seq = seq;
  SmallVector<int64_t> view = {batch * (headsMajor ? heads : seq),
                               headsMajor ? seq : heads, headDim};
  std::string name = "mte_rotary_" + mangle(view, element) + "_table_" +
                     mangle({tableRows, width});
  if (headsMajor) {
    name += "_heads_major";
    spec.headsMajor = true;
  }

  Location loc = op.getLoc();
  OpBuilder b(op);
  // x viewed by reshapes that keep its innermost stride (a column slice
  // stays a view); the output is a fresh tensor in the op's shape (a model
  // output is written in place), which the declaration takes as its
  // [outer, mid, D] view.
  Value x = op.getInput();
  if (headsMajor) {
    x = tensor::CollapseShapeOp::create(
        b, loc, x, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  } else {
    x = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(view, element),
        tensor::CollapseShapeOp::create(
            b, loc, x, SmallVector<ReassociationIndices>{{0, 1}, {2}}),
        SmallVector<ReassociationIndices>{{0}, {1, 2}});
  }
  int64_t dynamic = ShapedType::kDynamic;
  auto strided = StridedLayoutAttr::get(ctx, dynamic, {dynamic, dynamic, 1});
  SmallVector<Value> inputs = {
      x, reshapeTensor(b, loc, op.getCos(), {tableRows, width}),
      reshapeTensor(b, loc, op.getSin(), {tableRows, width})};
  SmallVector<Type> arguments = {
      argumentType(inputs[0], strided), argumentType(inputs[1]),
      argumentType(inputs[2]), MemRefType::get(view, element)};
  Value result = callKernel(b, loc, name, spec.get(ctx), inputs, type,
                            arguments, moduleBuilder, symbols)
                     .front();
  op.getOutput().replaceAllUsesWith(result);
  op->erase();
}

//===----------------------------------------------------------------------===//
// FP8 scaling: amax
//===----------------------------------------------------------------------===//

/// Rows the amax kernel gives a tensor: the longest power-of-two row of at
/// most 16384 elements that divides it (one read, few row maxima left).
constexpr int64_t kMaxAmaxRow = 16384, kMinAmaxRow = 32;
/// The largest input (elements) the vector of amaxes reads in place of
/// its amax, which then waits until the end of the forward to read it,
/// and the most it reads so in all (16 MiB of f32 row maxima: GPT-2 small
/// at 8 x 1024 tokens defers 1.4M, a 32-layer 7B model at 4 x 2048 about
/// 8.6M). Past either, an input is first reduced where its amax was.
constexpr int64_t kMaxDeferredAmax = int64_t(1) << 18;
constexpr int64_t kMaxDeferredTotal = int64_t(1) << 22;

/// One pass of the amax row kernel over `values` viewed as [rows, length]
/// (the longest row of at most kMaxAmaxRow that a row kernel takes):
/// the rows' maxima, f32 [rows]; null when no row of at least kMinAmaxRow
/// divides it. A pass of one row writes where its value goes (an element
/// of the delayed update's vector: at any offset).
Value amaxRowPass(OpBuilder &b, Location loc, Value values,
                  OpBuilder &moduleBuilder, SymbolTable &symbols) {
  auto valuesType = cast<RankedTensorType>(values.getType());
  Type element = valuesType.getElementType();
  int64_t count = valuesType.getNumElements(), length = kMaxAmaxRow;
  while (length >= kMinAmaxRow &&
         (count % length != 0 || !mte::canBuildRowKernel(length, element)))
    length /= 2;
  if (length < kMinAmaxRow)
    return {};
  int64_t rows = count / length;
  Value input = reshapeTensor(b, loc, values, {rows, length});
  auto maximaType = RankedTensorType::get({rows}, b.getF32Type());
  std::string name = "mte_row_amax_" + mangle({rows, length}, element);
  MemRefLayoutAttrInterface layout;
  if (rows == 1)
    layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1});
  return callKernel(b, loc, name,
                    KernelSpec{RowKernelKind::Amax}.get(b.getContext()), input,
                    maximaType,
                    {argumentType(input),
                     MemRefType::get({rows}, b.getF32Type(), layout)},
                    moduleBuilder, symbols, /*writesInPlace=*/rows == 1)
      .front();
}

/// amax(x) becomes amax of row maxima of row maxima ... of x: each pass
/// one read by the amax row kernel, until one value is left, which is the
/// amax, or at most kMinAmaxRow for the reference lowering (whose last
/// level runs in one thread).
void convertAmax(AmaxOp op, OpBuilder &moduleBuilder, SymbolTable &symbols) {
  RankedTensorType type = op.getInput().getType();
  if (!type.hasStaticShape() || !isKernelFloat(type.getElementType()))
    return;
  Location loc = op.getLoc();
  OpBuilder b(op);
  Value values = op.getInput();
  while (cast<RankedTensorType>(values.getType()).getNumElements() >
         kMinAmaxRow) {
    Value maxima = amaxRowPass(b, loc, values, moduleBuilder, symbols);
    if (!maxima)
      break;
    values = maxima;
    // One row: its max |x| is the amax, which the kernel writes where it
    // goes (the delayed update's vector): no last level of one thread.
    if (cast<RankedTensorType>(values.getType()).getNumElements() == 1) {
      op.replaceAllUsesWith(reshapeTensor(b, loc, values, {}));
      op->erase();
      return;
    }
  }
  if (values != op.getInput())
    op.getInputMutable().assign(values);
}

/// block_amax(x) (block and rowwise scaling's maxima) is one pass of the
/// amax row kernel over x viewed as [blocks, block_size], when a row kernel
/// takes rows of block_size (else the reference lowering's loops, a thread
/// per block, stay).
void convertBlockAmax(BlockAmaxOp op, OpBuilder &moduleBuilder,
                      SymbolTable &symbols) {
  RankedTensorType type = op.getInput().getType();
  Type element = type.getElementType();
  int64_t length = op.getBlockSize();
  if (!type.hasStaticShape() || type.getNumElements() == 0 ||
      !isKernelFloat(element) || length < kMinAmaxRow ||
      !mte::canBuildRowKernel(length, element))
    return;
  int64_t rows = type.getNumElements() / length;
  Location loc = op.getLoc();
  OpBuilder b(op);
  Value input = reshapeTensor(b, loc, op.getInput(), {rows, length});
  std::string name = "mte_row_amax_" + mangle({rows, length}, element);
  RowKernelAttr spec = KernelSpec{RowKernelKind::Amax}.get(b.getContext());
  Value maxima =
      callKernel(b, loc, name, spec, input,
                 RankedTensorType::get({rows}, b.getF32Type()),
                 {argumentType(input), MemRefType::get({rows}, b.getF32Type())},
                 moduleBuilder, symbols)
          .front();
  op.replaceAllUsesWith(reshapeTensor(b, loc, maxima, op.getType().getShape()));
  op->erase();
}

/// Whether `scalar` is an amax (>= 0 or NaN, so that the amaxes kernel's
/// max |x| of it is itself): an amax's result, a linear's output amax, or
/// either MAX-reduced over a device group.
bool isAmaxValue(Value scalar) {
  if (auto reduce = scalar.getDefiningOp<shard::AllReduceOp>())
    return reduce.getReduction() == shard::ReductionKind::Max &&
           isAmaxValue(reduce.getInput());
  if (scalar.getDefiningOp<AmaxOp>())
    return true;
  auto linear = scalar.getDefiningOp<LinearOp>();
  return linear && linear.getOutputAmax() == scalar;
}

/// A vector of amaxes -- a concat of amaxes each reshaped to [1]:
/// delayed scaling's input to its update -- becomes one call of the
/// runtime's amaxes kernel, which writes every element in one launch: the
/// max |x| of an amax's input (the tensor, or the rows' maxima its producer
/// wrote) or of a scalar itself (an amax cuBLASLt wrote). That replaces a
/// row kernel (and a one-thread tail) per amax and a copy per scalar with
/// one launch. The amaxes taken over are erased and added to `merged`.
void convertAmaxVector(ConcatOp op, DenseSet<Operation *> &merged,
                       OpBuilder &moduleBuilder, SymbolTable &symbols) {
  auto type = cast<RankedTensorType>(op.getType());
  if (op.getAxis() != 0 || type.getRank() != 1 || !type.hasStaticShape() ||
      !type.getElementType().isF32() || op.getInputs().size() < 2)
    return;
  SmallVector<ReshapeOp> reshapes;
  for (Value element : op.getInputs()) {
    auto reshape = element.getDefiningOp<ReshapeOp>();
    auto scalar = reshape ? dyn_cast<RankedTensorType>(
                                reshape.getInput().getType())
                          : nullptr;
    if (!scalar || scalar.getRank() != 0 || !scalar.getElementType().isF32() ||
        cast<RankedTensorType>(element.getType()).getNumElements() != 1 ||
        !isAmaxValue(reshape.getInput()))
      return;
    reshapes.push_back(reshape);
  }
  SmallVector<Value> inputs;
  SmallVector<AmaxOp> amaxes;
  int64_t deferred = 0;
  for (ReshapeOp reshape : reshapes) {
    Value value = reshape.getInput();
    // An amax whose only use is this vector: the kernel reads its input,
    // or, past the limits on what waits for it, the rows' maxima of one
    // pass where the amax was.
    if (auto amax = value.getDefiningOp<AmaxOp>();
        amax && amax->hasOneUse() && reshape->hasOneUse() &&
        amax.getInput().getType().hasStaticShape() &&
        isKernelFloat(amax.getInput().getType().getElementType())) {
      Value input = amax.getInput();
      int64_t count = amax.getInput().getType().getNumElements();
      if (count > kMaxDeferredAmax || deferred + count > kMaxDeferredTotal) {
        OpBuilder b(amax);
        input = amaxRowPass(b, amax.getLoc(), input, moduleBuilder, symbols);
      }
      if (input) {
        amaxes.push_back(amax);
        value = input;
        deferred += cast<RankedTensorType>(input.getType()).getNumElements();
      }
    }
    inputs.push_back(value);
  }
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Type> arguments;
  std::string signature;
  llvm::raw_string_ostream os(signature);
  for (Value input : inputs) {
    arguments.push_back(argumentType(input));
    os << arguments.back() << ";";
  }
  arguments.push_back(MemRefType::get(type.getShape(), type.getElementType()));
  // One declaration per list of input types.
  std::string name = "mte_amaxes_" + std::to_string(inputs.size()) + "_" +
                     llvm::utohexstr(llvm::xxh3_64bits(signature));
  Value vector = callKernel(b, loc, name,
                            KernelSpec{RowKernelKind::Amaxes}.get(
                                b.getContext()),
                            inputs, type, arguments, moduleBuilder, symbols)
                     .front();
  op.replaceAllUsesWith(vector);
  op->erase();
  for (AmaxOp amax : amaxes) {
    Operation *reshape = *amax->user_begin();
    reshape->erase();
    merged.insert(amax);
    amax->erase();
  }
}

//===----------------------------------------------------------------------===//
// Attention in one fused kernel
//===----------------------------------------------------------------------===//

/// The `[B | 1, Skv]` shape of `op`'s mask when it hides the same keys from
/// every head and query (a key-padding mask: `[B, 1, 1, Skv]` and the like),
/// which the fused kernels take as a per-key bias; nothing otherwise.
std::optional<SmallVector<int64_t>> keyMaskShape(AttentionOp op) {
  auto type = cast<RankedTensorType>(op.getMask().getType());
  int64_t batch = op.getQuery().getType().getDimSize(0);
  int64_t keys = op.getKey().getType().getDimSize(1);
  if (!type.hasStaticShape() || type.getRank() > 4 || type.getRank() == 0)
    return std::nullopt;
  // Aligned to the right of [B, H, Sq, Skv], as it broadcasts.
  SmallVector<int64_t> full(4 - type.getRank(), 1);
  llvm::append_range(full, type.getShape());
  if (full[1] != 1 || full[2] != 1 || full[3] != keys ||
      (full[0] != 1 && full[0] != batch))
    return std::nullopt;
  return SmallVector<int64_t>{full[0], keys};
}

/// Whether the runtime's fused attention kernels (mte_cuda_attention) take
/// `op`: Q, K, V and the output of one 16-bit type, head dimension 16, 32,
/// 64 or 128 for both products, and no mask or a key-padding one (the
/// causal mask is built in), no softcap. (The kernels take the maximum of
/// unscaled scores: the verifier makes the scale positive.)
bool hasFlashAttentionKernel(AttentionOp op) {
  RankedTensorType q = op.getQuery().getType(), k = op.getKey().getType(),
                   v = op.getValue().getType(), out = op.getOutput().getType();
  Type element = q.getElementType();
  if (!(element.isBF16() || element.isF16()))
    return false;
  for (RankedTensorType t : {q, k, v, out})
    if (t.getElementType() != element || !t.hasStaticShape() ||
        t.getRank() != 3 || t.getNumElements() == 0)
      return false;
  if ((op.getMask() && !keyMaskShape(op)) || op.getSoftcap())
    return false;
  int64_t headDim = q.getDimSize(2) / op.getNumHeads();
  int64_t kvWidth = headDim * static_cast<int64_t>(op.getNumKvHeads());
  return llvm::is_contained({16, 32, 64, 128}, headDim) &&
         k.getDimSize(2) == kvWidth && v.getDimSize(2) == kvWidth;
}

Value scalarF32(OpBuilder &b, Location loc, float value) {
  return arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()), value));
}

/// A key mask as the f32 `[B | 1, Skv]` bias added to the scaled scores:
/// 0 or -inf from a keep mask, the values of an additive one, of which
/// those at most half the type's lowest (torch.finfo(dtype).min fills)
/// become -inf, as the recognizer reads them.
Value keyBias(OpBuilder &b, Location loc, Value mask, ArrayRef<int64_t> shape) {
  Type element = cast<RankedTensorType>(mask.getType()).getElementType();
  auto biasType = RankedTensorType::get(shape, b.getF32Type());
  auto flagType = RankedTensorType::get(shape, b.getI1Type());
  float inf = std::numeric_limits<float>::infinity();
  mask = reshapeTensor(b, loc, mask, shape);
  if (element.isInteger(1))
    return WhereOp::create(b, loc, biasType, mask, scalarF32(b, loc, 0.0f),
                           scalarF32(b, loc, -inf));
  Value bias = element.isF32() ? mask : CastOp::create(b, loc, biasType, mask);
  double hidden =
      0.5 * APFloat::getLargest(cast<FloatType>(element).getFloatSemantics(),
                                /*Negative=*/true)
                .convertToDouble();
  Value isHidden =
      CompareOp::create(b, loc, flagType, ComparePredicate::LE, bias,
                        scalarF32(b, loc, static_cast<float>(hidden)));
  return WhereOp::create(b, loc, biasType, isHidden, scalarF32(b, loc, -inf),
                         bias);
}

/// Replaces `op` by a call of a fused-attention declaration, which
/// mte-build-row-kernels turns into a call of mte_cuda_attention. Q, K and V
/// are read in place, with any batch and token strides: column slices of a
/// packed projection need no copy. A key-padding mask becomes a fifth
/// input, its f32 bias; an FP8 quantize of the output, its scale vector
/// and index after that (Fp8Readers).
void convertToFlashAttention(AttentionOp op, OpBuilder &moduleBuilder,
                             SymbolTable &symbols) {
  MLIRContext *ctx = op.getContext();
  RankedTensorType q = op.getQuery().getType(), k = op.getKey().getType();
  KernelSpec spec{RowKernelKind::FlashAttention};
  spec.heads = op.getNumHeads();
  spec.kvHeads = op.getNumKvHeads();
  std::string name = "mte_flash_attention_" + mangle(q.getShape()) + "_" +
                     mangle(k.getShape(), q.getElementType()) + "_h" +
                     std::to_string(op.getNumHeads()) + "_kv" +
                     std::to_string(op.getNumKvHeads());
  if (op.getCausal()) {
    name += "_causal";
    spec.causal = true;
  }

  Location loc = op.getLoc();
  OpBuilder b(op);
  int64_t dynamic = ShapedType::kDynamic;
  auto rows = StridedLayoutAttr::get(ctx, dynamic, {dynamic, dynamic, 1});
  SmallVector<Value> inputs = {
      op.getQuery(), op.getKey(), op.getValue(),
      arith::ConstantOp::create(b, loc, op.getScaleAttr())};
  SmallVector<Type> arguments = {
      argumentType(inputs[0], rows), argumentType(inputs[1], rows),
      argumentType(inputs[2], rows), argumentType(inputs[3])};
  if (Value mask = op.getMask()) {
    SmallVector<int64_t> shape = *keyMaskShape(op);
    name += "_keys" + mangle(shape);
    spec.maskShape = shape;
    inputs.push_back(keyBias(b, loc, mask, shape));
    arguments.push_back(argumentType(inputs.back()));
  }
  // Under FP8 scaling the kernel writes each row's and head's max |o| for
  // the output's amaxes and, when the output is only quantized by a scale
  // known before the run (delayed scaling), the E4M3 codes instead of it.
  // (Its maxima are per row and head: no block_amax is taken over.)
  Fp8Readers fp8(op, op.getOutput(), /*length=*/0);
  fp8.describe(name, spec, q.getElementType());
  fp8.addScaleInputs(b, loc, inputs);
  for (Value input : ArrayRef(inputs).drop_front(arguments.size()))
    arguments.push_back(argumentType(input));
  SmallVector<RankedTensorType> resultTypes = {
      fp8.quantize ? fp8.quantize.getType() : op.getOutput().getType()};
  if (spec.amax) {
    int64_t rows = q.getDimSize(0) * q.getDimSize(1) * op.getNumHeads();
    resultTypes.push_back(RankedTensorType::get({rows}, b.getF32Type()));
  }
  for (RankedTensorType type : resultTypes)
    arguments.push_back(
        MemRefType::get(type.getShape(), type.getElementType()));
  SmallVector<Value> results =
      callKernel(b, loc, name, spec.get(ctx), inputs, resultTypes, arguments,
                 moduleBuilder, symbols);
  fp8.rewire(spec.amax ? results.back() : Value(), results.front());
  if (!fp8.quantize)
    op.getOutput().replaceAllUsesWith(results.front());
  op->erase();
}

//===----------------------------------------------------------------------===//
// Attention's scale + mask + softmax
//===----------------------------------------------------------------------===//

bool hasSoftmaxKernel(AttentionOp op) {
  RankedTensorType q = op.getQuery().getType(), k = op.getKey().getType();
  Value mask = op.getMask();
  // The kernel scales, masks and normalises; a softcap is left to the
  // elementwise lowering (buildAttentionProbabilities).
  return !op.getSoftcap() && q.hasStaticShape() && k.hasStaticShape() &&
         q.getNumElements() != 0 && k.getNumElements() != 0 &&
         isKernelFloat(q.getElementType()) &&
         (!mask || cast<RankedTensorType>(mask.getType()).hasStaticShape()) &&
         mte::canBuildRowKernel(k.getDimSize(1),
                                Float32Type::get(op.getContext()));
}

/// The softmax step of attention's lowering, on its f32 scores
/// [B, H, Sq, Skv], as a call of a row kernel that writes the probabilities
/// in `probsType` (V's type: rounded once, half the bytes for bf16).
Value callSoftmaxKernel(OpBuilder &b, Location loc, AttentionOp op,
                        Value scores, Type probsType, OpBuilder &moduleBuilder,
                        SymbolTable &symbols) {
  auto scoresType = cast<RankedTensorType>(scores.getType());
  ArrayRef<int64_t> shape = scoresType.getShape();
  int64_t rows = shape[0] * shape[1] * shape[2], keys = shape[3];
  MLIRContext *ctx = op.getContext();
  KernelSpec spec{RowKernelKind::AttentionSoftmax};
  spec.heads = shape[1];
  spec.queries = shape[2];
  std::string name = "mte_attention_softmax_" + mangle(shape, probsType);
  SmallVector<Value> inputs = {reshapeTensor(b, loc, scores, {rows, keys})};
  if (op.getCausal()) {
    name += "_causal";
    spec.causal = true;
  }
  if (Value mask = op.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    name += "_mask_" + mangle(maskType.getShape(), maskType.getElementType());
    spec.maskShape = SmallVector<int64_t>(maskType.getShape());
    inputs.push_back(reshapeTensor(b, loc, mask, {maskType.getNumElements()}));
  }
  inputs.push_back(arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(op.getScale().convertToFloat())));
  return callRowKernel(b, loc, name, spec.get(ctx), inputs,
                       {RankedTensorType::get(shape, probsType)}, {rows, keys},
                       moduleBuilder, symbols)
      .front();
}

/// Replaces a softmax over the last axis (not attention's: that one is
/// inside transformer.attention) by a call of the attention softmax kernel
/// as one head with one query per row, no mask and a scale of 1.
void convertSoftmax(SoftmaxOp op, OpBuilder &moduleBuilder,
                    SymbolTable &symbols) {
  RankedTensorType type = op.getResult().getType();
  Type element = type.getElementType();
  if (!type.hasStaticShape() || type.getNumElements() == 0 ||
      type.getRank() == 0 || !isKernelFloat(element) ||
      *normalizeAxis(op.getAxis(), type.getRank()) != type.getRank() - 1)
    return;
  int64_t keys = type.getShape().back(), rows = type.getNumElements() / keys;
  if (!mte::canBuildRowKernel(keys, Float32Type::get(op.getContext())))
    return;
  MLIRContext *ctx = op.getContext();
  KernelSpec spec{RowKernelKind::AttentionSoftmax};
  spec.heads = 1;
  spec.queries = rows;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value probs =
      callRowKernel(b, loc, "mte_softmax_" + mangle({rows, keys}, element),
                    spec.get(ctx),
                    {reshapeTensor(b, loc, op.getInput(), {rows, keys}),
                     arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1))},
                    {type}, {rows, keys}, moduleBuilder, symbols)
          .front();
  op.getResult().replaceAllUsesWith(probs);
  op->erase();
}

struct ConvertTransformerToRowKernelsPass
    : mte::impl::ConvertTransformerToRowKernelsBase<
          ConvertTransformerToRowKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Kernel declarations go after the model's functions.
    auto moduleBuilder = OpBuilder::atBlockEnd(module.getBody());

    SmallVector<Operation *> norms, attentions;
    SmallVector<AttentionOp> fused;
    SmallVector<RotaryEmbeddingOp> rotaries;
    SmallVector<SoftmaxOp> softmaxes;
    SmallVector<AmaxOp> amaxes;
    SmallVector<Operation *> gated;
    module.walk([&](Operation *op) {
      if (auto amax = dyn_cast<AmaxOp>(op))
        amaxes.push_back(amax);
      if (isa<SwigluOp, GegluOp>(op))
        gated.push_back(op);
      if (isa<LayerNormOp, RMSNormOp>(op))
        norms.push_back(op);
      else if (auto rotary = dyn_cast<RotaryEmbeddingOp>(op))
        rotaries.push_back(rotary);
      else if (auto softmax = dyn_cast<SoftmaxOp>(op))
        softmaxes.push_back(softmax);
      else if (auto attention = dyn_cast<AttentionOp>(op)) {
        if (hasFlashAttentionKernel(attention))
          fused.push_back(attention);
        else if (hasSoftmaxKernel(attention))
          attentions.push_back(op);
      }
    });
    for (AttentionOp op : fused)
      convertToFlashAttention(op, moduleBuilder, symbols);
    // Norms and gated units first: their kernels take over the first level of
    // the amaxes of their outputs.
    for (Operation *op : norms) {
      if (auto layerNorm = dyn_cast<LayerNormOp>(op))
        convertNorm(layerNorm, moduleBuilder, symbols);
      else
        convertNorm(cast<RMSNormOp>(op), moduleBuilder, symbols);
    }
    for (Operation *op : gated) {
      if (auto swiglu = dyn_cast<SwigluOp>(op)) {
        convertGated(op, swiglu.getGate(), swiglu.getUp(),
                     RowKernelKind::Swiglu, moduleBuilder, symbols);
        continue;
      }
      auto geglu = cast<GegluOp>(op);
      convertGated(op, geglu.getGate(), geglu.getUp(),
                   geglu.getApproximate() == GeluApproximation::Tanh
                       ? RowKernelKind::GegluTanh
                       : RowKernelKind::Geglu,
                   moduleBuilder, symbols);
    }
    // The amax vectors of delayed scaling first: one kernel each.
    DenseSet<Operation *> merged;
    SmallVector<ConcatOp> vectors;
    module.walk([&](ConcatOp op) { vectors.push_back(op); });
    for (ConcatOp op : vectors)
      convertAmaxVector(op, merged, moduleBuilder, symbols);
    for (AmaxOp op : amaxes)
      if (!merged.contains(op))
        convertAmax(op, moduleBuilder, symbols);
    // After the norms and gated units, which take over the rows' maxima of
    // their outputs.
    SmallVector<BlockAmaxOp> blockAmaxes;
    module.walk([&](BlockAmaxOp op) { blockAmaxes.push_back(op); });
    for (BlockAmaxOp op : blockAmaxes)
      convertBlockAmax(op, moduleBuilder, symbols);
    for (RotaryEmbeddingOp op : rotaries)
      convertRotary(op, moduleBuilder, symbols);
    for (SoftmaxOp op : softmaxes)
      convertSoftmax(op, moduleBuilder, symbols);

    RewritePatternSet patterns(&getContext());
    mte::populateAttentionToLibraryGemmPatterns(
        patterns, [&](OpBuilder &b, Location loc, AttentionOp op, Value scores,
                      Type probsType) {
          return callSoftmaxKernel(b, loc, op, scores, probsType, moduleBuilder,
                                   symbols);
        });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    bool allRewritten = false;
    if (failed(applyOpPatternsGreedily(attentions, std::move(patterns), config,
                                       /*changed=*/nullptr, &allRewritten)) ||
        !allRewritten)
      return signalPassFailure();
  }
};

} // namespace
