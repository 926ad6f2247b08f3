//===- ONNXOpHandlers.cpp - one handler per (op_type, opset) --------------===//
//
// Each handler translates one ONNX node into transformer ops with ONNX
// semantics. Inputs that ONNX passes as tensors but that decide shapes
// (Reshape's shape, Slice's starts, ReduceMean-18's axes, ...) must be
// compile-time constants once shape subgraphs have folded; a handler reports
// an error naming the input otherwise.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "mte/Support/CheckedShape.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;
using namespace mte;
using namespace mte::transformer;
using namespace mte::onnx_import;

namespace {

RankedTensorType withShape(RankedTensorType type, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, type.getElementType());
}

RankedTensorType withElementType(RankedTensorType type, Type elementType) {
  return RankedTensorType::get(type.getShape(), elementType);
}

NamedAttribute namedI64(NodeImporter &n, StringRef name, int64_t value) {
  return n.getBuilder().getNamedAttr(name,
                                     n.getBuilder().getI64IntegerAttr(value));
}

NamedAttribute namedF32(NodeImporter &n, StringRef name, float value) {
  return n.getBuilder().getNamedAttr(name,
                                     n.getBuilder().getF32FloatAttr(value));
}

NamedAttribute namedI64s(NodeImporter &n, StringRef name,
                         ArrayRef<int64_t> values) {
  return n.getBuilder().getNamedAttr(
      name, n.getBuilder().getDenseI64ArrayAttr(values));
}

NamedAttribute segmentSizes(NodeImporter &n, ArrayRef<int32_t> sizes) {
  return n.getBuilder().getNamedAttr(
      "operandSegmentSizes", n.getBuilder().getDenseI32ArrayAttr(sizes));
}

FailureOr<int64_t> normalizeAxisOrError(NodeImporter &n, int64_t axis,
                                        int64_t rank) {
  if (std::optional<int64_t> a = normalizeAxis(axis, rank))
    return *a;
  return n.emitError() << "axis " << axis << " is out of range for rank "
                       << rank;
}

/// Fails, naming `what`, unless `shape` has non-negative dimensions whose
/// product fits in int64_t: a shape computed from constants must be one a
/// tensor can have, as a runtime shape would be checked.
LogicalResult checkShape(NodeImporter &n, ArrayRef<int64_t> shape,
                         StringRef what) {
  if (mte::checkedElementCount(shape))
    return success();
  return n.emitError() << what << " ["
                       << llvm::make_range(shape.begin(), shape.end())
                       << "] has a negative dimension or more than 2^63 "
                          "elements";
}

LogicalResult forward(NodeImporter &n, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  return n.setOutput(*value);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpTy> LogicalResult importBinary(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  return forward(n, n.create<OpTy>({n.getInput(0), n.getInput(1)}));
}

template <typename OpTy> LogicalResult importUnary(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  return forward(n, n.createTyped<OpTy>(n.getInputType(0), n.getInput(0)));
}

template <ComparePredicate predicate>
LogicalResult importCompare(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  return forward(n, n.create<CompareOp>(
                        {n.getInput(0), n.getInput(1)},
                        {n.getBuilder().getNamedAttr(
                            "predicate", ComparePredicateAttr::get(
                                             n.getContext(), predicate))}));
}

/// ONNX Pow allows an exponent of another type (often an integer constant).
LogicalResult importPow(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  Value base = n.getInput(0), exponent = n.getInput(1);
  Type baseElement = n.getInputType(0).getElementType();
  if (n.getInputType(1).getElementType() != baseElement) {
    auto cast = n.createTyped<CastOp>(
        withElementType(n.getInputType(1), baseElement), exponent);
    if (failed(cast))
      return failure();
    exponent = *cast;
  }
  return forward(n, n.create<PowOp>({base, exponent}));
}

/// ONNX Min and Max are variadic; they chain pairwise.
template <typename OpTy> LogicalResult importVariadic(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, std::numeric_limits<int>::max())))
    return failure();
  Value result = n.getInput(0);
  for (size_t i = 1; i < n.getNumInputs(); ++i) {
    auto next = n.create<OpTy>({result, n.getInput(i)});
    if (failed(next))
      return failure();
    result = *next;
  }
  return n.setOutput(result);
}

/// Mod: the floored remainder (fmod = 0) is defined for integers only.
LogicalResult importMod(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto fmod = n.getInt("fmod", 0);
  if (failed(fmod))
    return failure();
  if (*fmod != 0 && *fmod != 1)
    return n.emitError() << "fmod must be 0 or 1, not " << *fmod;
  if (!*fmod && isa<FloatType>(n.getInputType(0).getElementType()))
    return n.emitError() << "fmod = 0 (the floored remainder) is defined "
                            "for integers only; floats need fmod = 1";
  SmallVector<NamedAttribute> attrs;
  if (*fmod)
    attrs.push_back(n.getBuilder().getNamedAttr("fmod",
                                                n.getBuilder().getUnitAttr()));
  return forward(n, n.create<ModOp>({n.getInput(0), n.getInput(1)}, attrs));
}

LogicalResult importIsNaN(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  return forward(
      n, n.createTyped<IsNanOp>(
             withElementType(n.getInputType(0), n.getBuilder().getI1Type()),
             n.getInput(0)));
}

LogicalResult importClip(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 3)))
    return failure();
  SmallVector<NamedAttribute> attrs;
  for (auto [index, name] :
       {std::pair<size_t, StringRef>{1, "min"}, {2, "max"}}) {
    if (!n.getInput(index))
      continue;
    auto bound = n.getConstantScalar(index);
    if (failed(bound))
      return failure();
    attrs.push_back(n.getBuilder().getNamedAttr(
        name, n.getBuilder().getF64FloatAttr(*bound)));
  }
  return forward(
      n, n.createTyped<ClipOp>(n.getInputType(0), n.getInput(0), attrs));
}

LogicalResult importCast(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto to = n.getInt("to", -1);
  if (failed(to))
    return failure();
  Type element = convertElementType(n.getContext(), *to);
  if (!element)
    return n.emitError() << "unsupported target element type " << *to;
  return forward(
      n, n.createTyped<CastOp>(withElementType(n.getInputType(0), element),
                               n.getInput(0)));
}

LogicalResult importCastLike(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  return forward(n, n.createTyped<CastOp>(
                        withElementType(n.getInputType(0),
                                        n.getInputType(1).getElementType()),
                        n.getInput(0)));
}

LogicalResult importWhere(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 3)))
    return failure();
  return forward(
      n, n.create<WhereOp>({n.getInput(0), n.getInput(1), n.getInput(2)}));
}

LogicalResult importSoftmax(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto axis = n.getInt("axis", -1);
  if (failed(axis))
    return failure();
  return forward(n, n.createTyped<SoftmaxOp>(n.getInputType(0), n.getInput(0),
                                             {namedI64(n, "axis", *axis)}));
}

/// Identity, and Dropout in inference mode (its mask is all true).
LogicalResult importIdentity(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 3)))
    return failure();
  if (n.getInput(2)) {
    auto training = n.getConstantScalar(2);
    if (failed(training))
      return failure();
    if (*training != 0)
      return n.emitError() << "training mode is not supported";
  }
  SmallVector<Value> outputs = {n.getInput(0)};
  if (n.hasOutput(1)) {
    auto maskType =
        withElementType(n.getInputType(0), n.getBuilder().getI1Type());
    outputs.push_back(n.constant(DenseElementsAttr::get(maskType, true)));
  }
  return n.setOutputs(outputs);
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

LogicalResult importConstant(NodeImporter &n) {
  if (failed(n.checkNumInputs(0, 0)))
    return failure();
  Builder &b = n.getBuilder();
  auto tensor = n.getTensor("value");
  if (failed(tensor))
    return failure();
  if (*tensor)
    return n.setOutput(n.constant(cast<TypedAttr>(*tensor)));
  for (const onnx::AttributeProto &attr : n.getNode().attribute()) {
    StringRef name = attr.name();
    if (name == "value_float" && attr.type() == onnx::AttributeProto::FLOAT)
      return n.setOutput(n.scalarConstant(b.getF32Type(), attr.f()));
    if (name == "value_int" && attr.type() == onnx::AttributeProto::INT)
      return n.setOutput(n.constant(
          DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                 b.getI64IntegerAttr(attr.i()))));
    if (name == "value_floats" && attr.type() == onnx::AttributeProto::FLOATS)
      return n.setOutput(n.constant(DenseElementsAttr::get(
          RankedTensorType::get({attr.floats_size()}, b.getF32Type()),
          ArrayRef<float>(attr.floats().data(), attr.floats_size()))));
    if (name == "value_ints" && attr.type() == onnx::AttributeProto::INTS)
      return n.setOutput(n.constant(DenseElementsAttr::get(
          RankedTensorType::get({attr.ints_size()}, b.getI64Type()),
          ArrayRef<int64_t>(attr.ints().data(), attr.ints_size()))));
  }
  return n.emitError()
         << "needs a 'value', 'value_float(s)' or 'value_int(s)' attribute of "
            "the matching type";
}

LogicalResult importConstantOfShape(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto shape = n.getConstantInts(0);
  if (failed(shape))
    return failure();
  if (failed(checkShape(n, *shape, "shape")))
    return failure();
  auto value = n.getTensor("value");
  if (failed(value))
    return failure();
  Attribute element = n.getBuilder().getF32FloatAttr(0);
  if (*value) {
    if (value->getNumElements() != 1)
      return n.emitError() << "'value' must hold exactly one element";
    element = *value->getValues<Attribute>().begin();
  }
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(element).getType());
  return n.setOutput(n.constant(DenseElementsAttr::get(type, element)));
}

LogicalResult importShape(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto start = n.getInt("start", 0);
  auto end = n.getOptionalInt("end");
  if (failed(start) || failed(end))
    return failure();
  SmallVector<NamedAttribute> attrs = {namedI64(n, "start", *start)};
  if (*end)
    attrs.push_back(namedI64(n, "end", **end));
  return forward(n, n.create<ShapeOp>(n.getInput(0), attrs));
}

LogicalResult importSize(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  return forward(n, n.createTyped<SizeOp>(
                        RankedTensorType::get({}, n.getBuilder().getI64Type()),
                        n.getInput(0)));
}

LogicalResult importRange(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 3)))
    return failure();
  auto start = n.getConstantScalar(0);
  auto limit = n.getConstantScalar(1);
  auto delta = n.getConstantScalar(2);
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (*delta == 0)
    return n.emitError() << "delta is zero";
  // A range is materialised: one of more than 2^40 elements (8 TiB of
  // i64) is a broken model.
  constexpr double kMaxLength = 1099511627776.0;
  std::optional<int64_t> length =
      mte::rangeLength(*start, *limit, *delta, kMaxLength);
  if (!length)
    return n.emitError() << "range from " << *start << " to " << *limit
                         << " by " << *delta << " has more than 2^40 elements";
  return forward(
      n, n.createTyped<RangeOp>(withShape(n.getInputType(0), {*length}),
                                {n.getInput(0), n.getInput(1), n.getInput(2)}));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

FailureOr<Value> reshapeTo(NodeImporter &n, Value value,
                           ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  return n.createTyped<ReshapeOp>(withShape(type, shape), value);
}

//===----------------------------------------------------------------------===//
// FP8 quantisation
//===----------------------------------------------------------------------===//

/// The per-tensor scale of a Q/DQ node (input 1) as the rank-0 f32 tensor
/// the transformer ops take. Per-axis and blocked scales are refused.
FailureOr<Value> importScale(NodeImporter &n) {
  RankedTensorType type = n.getInputType(1);
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return n.emitError() << "has a per-axis or blocked scale " << type
                         << "; mte imports per-tensor FP8 scales";
  if (!isa<Float32Type, Float16Type, BFloat16Type>(type.getElementType()))
    return n.emitError() << "has a scale of element type "
                         << type.getElementType()
                         << "; expected f32, f16 or bf16";
  Value scale = n.getInput(1);
  if (type.getRank() != 0) {
    auto reshaped = reshapeTo(n, scale, {});
    if (failed(reshaped))
      return failure();
    scale = *reshaped;
  }
  if (!type.getElementType().isF32()) {
    auto cast = n.createTyped<CastOp>(
        RankedTensorType::get({}, n.getBuilder().getF32Type()), scale);
    if (failed(cast))
      return failure();
    scale = *cast;
  }
  return scale;
}

/// Checks a Q/DQ node's optional zero point (input 2) is a constant zero:
/// FP8 quantisation has none, the input only names the type.
LogicalResult checkZeroPoint(NodeImporter &n) {
  if (!n.getInput(2))
    return success();
  auto zero = n.getConstantScalar(2);
  if (failed(zero))
    return failure();
  if (*zero != 0)
    return n.emitError() << "has a non-zero FP8 zero point " << *zero;
  return success();
}

/// Refuses the blocked form (opset 21's block_size), which the per-tensor
/// transformer ops do not express.
LogicalResult checkNotBlocked(NodeImporter &n) {
  auto blockSize = n.getInt("block_size", 0);
  if (failed(blockSize))
    return failure();
  if (*blockSize != 0)
    return n.emitError() << "block_size " << *blockSize
                         << " is not supported; mte imports per-tensor "
                            "FP8 scales";
  return success();
}

/// QuantizeLinear (opset 19+) to float8e4m3fn or float8e5m2, named by the
/// zero point's type or (opset 21+) output_dtype, with `saturate`.
LogicalResult importQuantizeLinear(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 3)) || failed(checkNotBlocked(n)))
    return failure();
  Type element;
  if (Value zeroPoint = n.getInput(2)) {
    element = n.getInputType(2).getElementType();
  } else {
    auto outputType = n.getInt("output_dtype", 0);
    if (failed(outputType))
      return failure();
    element = *outputType ? convertElementType(n.getContext(), *outputType)
                          : n.getBuilder().getIntegerType(8, false);
  }
  if (!element || !isFp8Type(element))
    return n.emitError() << "quantizes to "
                         << (element ? element : n.getBuilder().getNoneType())
                         << "; mte imports FP8 (float8e4m3fn, float8e5m2) "
                            "quantization only";
  auto saturate = n.getInt("saturate", 1);
  if (failed(saturate))
    return failure();
  auto scale = importScale(n);
  if (failed(scale) || failed(checkZeroPoint(n)))
    return failure();
  return forward(
      n, n.createTyped<QuantizeOp>(
             withElementType(n.getInputType(0), element),
             {n.getInput(0), *scale},
             {n.getBuilder().getNamedAttr(
                 "saturate", n.getBuilder().getBoolAttr(*saturate != 0))}));
}

/// DequantizeLinear (opset 19+) of float8e4m3fn or float8e5m2 data, to the
/// scale's type or (opset 23+) output_dtype.
LogicalResult importDequantizeLinear(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 3)) || failed(checkNotBlocked(n)))
    return failure();
  Type input = n.getInputType(0).getElementType();
  if (!isFp8Type(input))
    return n.emitError() << "dequantizes " << input
                         << "; mte imports FP8 (float8e4m3fn, float8e5m2) "
                            "dequantization only";
  Type element = n.getInputType(1).getElementType();
  auto outputType = n.getInt("output_dtype", 0);
  if (failed(outputType))
    return failure();
  if (*outputType)
    element = convertElementType(n.getContext(), *outputType);
  if (!element || !isa<Float32Type, Float16Type, BFloat16Type>(element))
    return n.emitError() << "dequantizes to an unsupported type";
  auto scale = importScale(n);
  if (failed(scale) || failed(checkZeroPoint(n)))
    return failure();
  return forward(n, n.createTyped<DequantizeOp>(
                        withElementType(n.getInputType(0), element),
                        {n.getInput(0), *scale}));
}

/// `value`, a uint8 tensor holding E4M3 codes, as f8E4M3FN: TensorRT's FP8
/// ops (TransformerEngine's and ModelOpt's exports) carry FP8 data in uint8.
/// A constant is retyped in place (same bytes); a value is an FP8 one only
/// when a TRT_FP8QuantizeLinear made it, and that import already typed it.
FailureOr<Value> asE4M3(NodeImporter &n, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (isa<Float8E4M3FNType>(type.getElementType()))
    return value;
  if (!type.getElementType().isUnsignedInteger(8))
    return n.emitError() << "reads " << type.getElementType()
                         << "; expected uint8 holding E4M3 codes";
  auto e4m3 = withElementType(type, n.getBuilder().getType<Float8E4M3FNType>());
  ElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return n.emitError() << "reads a uint8 value computed in the graph; only "
                            "constants and TRT_FP8QuantizeLinear results "
                            "are E4M3 data";
  TypedAttr retyped;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    retyped = DenseElementsAttr::getFromRawBuffer(e4m3, dense.getRawData());
  else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr))
    retyped = DenseResourceElementsAttr::get(e4m3, resource.getRawHandle());
  if (!retyped)
    return n.emitError() << "reads a constant of an unsupported kind";
  return arith::ConstantOp::create(n.getBuilder(), n.getLoc(), retyped)
      .getResult();
}

/// trt::TRT_FP8QuantizeLinear(x, scale_inv): E4M3 codes of x / scale_inv,
/// saturated, typed f8E4M3FN rather than ONNX's uint8.
LogicalResult importTrtFp8Quantize(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto scale = importScale(n);
  if (failed(scale))
    return failure();
  return forward(n, n.createTyped<QuantizeOp>(
                        withElementType(n.getInputType(0),
                                        n.getBuilder().getType<Float8E4M3FNType>()),
                        {n.getInput(0), *scale}));
}

/// trt::TRT_FP8DequantizeLinear(q, scale_inv): q (uint8 E4M3 codes) times
/// scale_inv, in the scale's type.
LogicalResult importTrtFp8Dequantize(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto data = asE4M3(n, n.getInput(0));
  if (failed(data))
    return failure();
  Type element = n.getInputType(1).getElementType();
  auto scale = importScale(n);
  if (failed(scale))
    return failure();
  return forward(n, n.createTyped<DequantizeOp>(
                        withElementType(n.getInputType(0), element),
                        {*data, *scale}));
}

LogicalResult importReshape(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto target = n.getConstantInts(1);
  auto allowZero = n.getInt("allowzero", 0);
  if (failed(target) || failed(allowZero))
    return failure();
  RankedTensorType inputType = n.getInputType(0);
  SmallVector<int64_t> shape(*target);
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !*allowZero) {
      if (static_cast<int64_t>(i) >= inputType.getRank())
        return n.emitError()
               << "target dimension " << i
               << " copies an input dimension that does not exist";
      d = inputType.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return n.emitError() << "target shape has more than one -1";
      inferred = i;
      continue;
    }
    if (d < 0)
      return n.emitError() << "target dimension " << i << " is " << d;
    if (llvm::MulOverflow(known, d, known))
      return n.emitError() << "target shape ["
                           << llvm::make_range(target->begin(), target->end())
                           << "] has more than 2^63 elements";
  }
  int64_t count = inputType.getNumElements();
  if (inferred >= 0) {
    if (known == 0 || count % known != 0)
      return n.emitError() << "cannot infer the -1 dimension: " << count
                           << " elements do not divide into " << known;
    shape[inferred] = count / known;
  } else if (known != count) {
    return n.emitError() << "cannot reshape " << inputType << " (" << count
                         << " elements) to " << known << " elements";
  }
  return forward(n, reshapeTo(n, n.getInput(0), shape));
}

LogicalResult importFlatten(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  RankedTensorType type = n.getInputType(0);
  auto axisAttr = n.getInt("axis", 1);
  if (failed(axisAttr))
    return failure();
  int64_t rank = type.getRank(), axis = *axisAttr;
  if (axis < -rank || axis > rank)
    return n.emitError() << "axis " << axis << " is out of range for rank "
                         << rank;
  if (axis < 0)
    axis += rank;
  if (!type.hasStaticShape())
    return n.emitError() << "needs a static input shape, got " << type;
  // Each side's own product: with a zero dimension before the axis the
  // element count says nothing of the dimensions after it.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  return forward(n, reshapeTo(n, n.getInput(0), {outer, inner}));
}

/// Axes given as an input (from opset 13 for Squeeze/Unsqueeze, 18 for
/// reductions) or as an attribute before; std::nullopt when absent.
FailureOr<std::optional<SmallVector<int64_t>>>
getAxes(NodeImporter &n, bool fromInput, size_t inputIndex = 1) {
  if (!fromInput)
    return n.getOptionalInts("axes");
  if (!n.getInput(inputIndex))
    return std::optional<SmallVector<int64_t>>();
  auto axes = n.getConstantInts(inputIndex);
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

template <bool axesFromInput> LogicalResult importSqueeze(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, axesFromInput ? 2 : 1)))
    return failure();
  RankedTensorType type = n.getInputType(0);
  int64_t rank = type.getRank();
  llvm::SmallBitVector drop(rank);
  auto axes = getAxes(n, axesFromInput);
  if (failed(axes))
    return failure();
  if (*axes) {
    for (int64_t axis : **axes) {
      auto a = normalizeAxisOrError(n, axis, rank);
      if (failed(a))
        return failure();
      if (type.getDimSize(*a) != 1)
        return n.emitError() << "cannot squeeze dimension " << *a << " of size "
                             << type.getDimSize(*a);
      drop.set(*a);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      if (type.getDimSize(d) == 1)
        drop.set(d);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop.test(d))
      shape.push_back(type.getDimSize(d));
  return forward(n, reshapeTo(n, n.getInput(0), shape));
}

template <bool axesFromInput> LogicalResult importUnsqueeze(NodeImporter &n) {
  if (failed(n.checkNumInputs(axesFromInput ? 2 : 1, axesFromInput ? 2 : 1)))
    return failure();
  auto given = getAxes(n, axesFromInput);
  if (failed(given))
    return failure();
  if (!*given)
    return n.emitError() << "axes are required";
  SmallVector<int64_t> axes = **given;
  RankedTensorType type = n.getInputType(0);
  int64_t rank = type.getRank() + axes.size();
  llvm::SmallBitVector inserted(rank);
  for (int64_t axis : axes) {
    auto a = normalizeAxisOrError(n, axis, rank);
    if (failed(a))
      return failure();
    if (inserted.test(*a))
      return n.emitError() << "axis " << axis << " is repeated";
    inserted.set(*a);
  }
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted.test(d) ? 1 : type.getDimSize(next++));
  return forward(n, reshapeTo(n, n.getInput(0), shape));
}

LogicalResult importTranspose(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 1)))
    return failure();
  auto perm = n.getOptionalInts("perm");
  if (failed(perm))
    return failure();
  SmallVector<int64_t> permutation;
  if (*perm)
    permutation = **perm;
  else
    permutation = llvm::to_vector(
        llvm::reverse(llvm::seq<int64_t>(0, n.getInputType(0).getRank())));
  return forward(
      n, n.create<TransposeOp>(n.getInput(0),
                               {namedI64s(n, "permutation", permutation)}));
}

LogicalResult importExpand(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto target = n.getConstantInts(1);
  if (failed(target))
    return failure();
  SmallVector<int64_t> shape;
  RankedTensorType type = n.getInputType(0);
  if (failed(checkShape(n, *target, "target shape")))
    return failure();
  if (!OpTrait::util::getBroadcastedShape(type.getShape(), *target, shape))
    return n.emitError() << "cannot broadcast " << type << " to shape ["
                         << llvm::make_range(target->begin(), target->end())
                         << "]";
  return forward(
      n, n.createTyped<ExpandOp>(withShape(type, shape), n.getInput(0)));
}

LogicalResult importSlice(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 5)))
    return failure();
  RankedTensorType type = n.getInputType(0);
  int64_t rank = type.getRank();
  auto starts = n.getConstantInts(1);
  if (failed(starts))
    return failure();
  auto ends = n.getConstantInts(2);
  if (failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (n.getInput(3)) {
    auto given = n.getConstantInts(3);
    if (failed(given))
      return failure();
    axes = *given;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  }
  if (n.getInput(4)) {
    auto given = n.getConstantInts(4);
    if (failed(given))
      return failure();
    steps = *given;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return n.emitError() << "starts, ends, axes and steps differ in length";

  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  llvm::SmallBitVector seen(rank);
  for (size_t i = 0; i < starts->size(); ++i) {
    auto axis = normalizeAxisOrError(n, axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen.test(*axis))
      return n.emitError() << "axis " << axes[i] << " is repeated";
    seen.set(*axis);
    int64_t dim = type.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return n.emitError() << "step of axis " << axes[i] << " is zero";
    // ONNX: negative bounds count from the end, then clamp to the valid
    // range for the step's direction.
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start = start < -dim ? -1 : start + dim;
    if (end < 0)
      end = end < -dim ? -1 : end + dim;
    int64_t size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, -1, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      size = start > end ? (start - end - step - 1) / -step : 0;
    }
    offsets[*axis] = size > 0 ? start : 0;
    sizes[*axis] = size;
    strides[*axis] = step;
  }
  return forward(
      n, n.create<SliceOp>(n.getInput(0), {namedI64s(n, "offsets", offsets),
                                           namedI64s(n, "sizes", sizes),
                                           namedI64s(n, "strides", strides)}));
}

LogicalResult importConcat(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, std::numeric_limits<int>::max())))
    return failure();
  auto axis = n.getInt("axis", std::numeric_limits<int64_t>::min());
  if (failed(axis))
    return failure();
  if (*axis == std::numeric_limits<int64_t>::min())
    return n.emitError() << "attribute 'axis' is required";
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.getNumInputs(); ++i) {
    auto input = n.getRequiredInput(i);
    if (failed(input))
      return failure();
    inputs.push_back(*input);
  }
  return forward(n, n.create<ConcatOp>(inputs, {namedI64(n, "axis", *axis)}));
}

LogicalResult importSplit(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  RankedTensorType type = n.getInputType(0);
  auto axisAttr = n.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  auto axis = normalizeAxisOrError(n, *axisAttr, type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  auto splitAttr = n.getOptionalInts("split");
  if (failed(splitAttr))
    return failure();
  if (n.getInput(1)) {
    auto given = n.getConstantInts(1);
    if (failed(given))
      return failure();
    sizes = *given;
  } else if (*splitAttr) {
    sizes = **splitAttr; // Split-2 and Split-11
  } else {
    auto numOutputs = n.getOptionalInt("num_outputs");
    if (failed(numOutputs))
      return failure();
    int64_t parts = numOutputs->value_or(n.getNode().output_size());
    if (parts <= 0)
      return n.emitError() << "cannot split into " << parts << " parts";
    if (*numOutputs) {
      // Split-18: chunks of ceil(dim / parts), the last one smaller.
      int64_t chunk = (dim + parts - 1) / parts;
      for (int64_t left = dim; left > 0; left -= chunk)
        sizes.push_back(std::min(chunk, left));
    } else {
      if (dim % parts != 0)
        return n.emitError() << "dimension " << *axis << " of size " << dim
                             << " does not split evenly into " << parts;
      sizes.assign(parts, dim / parts);
    }
  }
  if (static_cast<int>(sizes.size()) != n.getNode().output_size())
    return n.emitError() << "splits into " << sizes.size()
                         << " pieces but the node has "
                         << n.getNode().output_size() << " outputs";
  auto results =
      n.createInferred<SplitOp>(n.getInput(0), {namedI64(n, "axis", *axis),
                                                namedI64s(n, "sizes", sizes)});
  if (failed(results))
    return failure();
  return n.setOutputs(*results);
}

template <typename OpTy> LogicalResult importGather(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto axis = n.getInt("axis", 0);
  if (failed(axis))
    return failure();
  return forward(n, n.create<OpTy>({n.getInput(0), n.getInput(1)},
                                   {namedI64(n, "axis", *axis)}));
}

/// CumSum: the axis is a constant input; exclusive and reverse flags.
LogicalResult importCumSum(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto axis = n.getConstantInts(1);
  if (failed(axis))
    return failure();
  if (axis->size() != 1)
    return n.emitError() << "axis must hold one value, not " << axis->size();
  int64_t rank = n.getInputType(0).getRank();
  if ((*axis)[0] < -rank || (*axis)[0] >= rank)
    return n.emitError() << "axis " << (*axis)[0]
                         << " is out of range for rank " << rank;
  SmallVector<NamedAttribute> attrs = {namedI64(n, "axis", (*axis)[0])};
  for (StringRef flag : {"exclusive", "reverse"}) {
    auto value = n.getInt(flag, 0);
    if (failed(value))
      return failure();
    if (*value != 0 && *value != 1)
      return n.emitError() << flag << " must be 0 or 1, not " << *value;
    if (*value)
      attrs.push_back(
          n.getBuilder().getNamedAttr(flag, n.getBuilder().getUnitAttr()));
  }
  return forward(n, n.createTyped<CumSumOp>(n.getInputType(0), n.getInput(0),
                                            attrs));
}

/// TopK: k is an attribute (TopK-1) or a constant one-element input
/// (TopK-10); `largest` and `sorted` since TopK-11. The result is always
/// sorted, which `sorted = 0` (any order) allows.
template <bool kFromInput> LogicalResult importTopK(NodeImporter &n) {
  if (failed(n.checkNumInputs(kFromInput ? 2 : 1, kFromInput ? 2 : 1)))
    return failure();
  RankedTensorType type = n.getInputType(0);
  int64_t k;
  if constexpr (kFromInput) {
    auto given = n.getConstantInts(1);
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return n.emitError() << "K must hold one value, not " << given->size();
    k = (*given)[0];
  } else {
    auto given = n.getInt("k", -1);
    if (failed(given))
      return failure();
    k = *given;
  }
  auto axisAttr = n.getInt("axis", -1);
  auto largest = n.getInt("largest", 1);
  if (failed(axisAttr) || failed(largest))
    return failure();
  auto axis = normalizeAxisOrError(n, *axisAttr, type.getRank());
  if (failed(axis))
    return failure();
  int64_t length = type.getDimSize(*axis);
  if (k < 0 || (!ShapedType::isDynamic(length) && k > length))
    return n.emitError() << "k = " << k << " is not within [0, " << length
                         << "], the length of axis " << *axis;
  if (*largest != 0 && *largest != 1)
    return n.emitError() << "largest must be 0 or 1, not " << *largest;
  SmallVector<int64_t> shape(type.getShape());
  shape[*axis] = k;
  Builder &b = n.getBuilder();
  auto results = n.createMulti<TopKOp>(
      {withShape(type, shape),
       RankedTensorType::get(shape, b.getIntegerType(64))},
      n.getInput(0),
      {namedI64(n, "k", k), namedI64(n, "axis", *axis),
       b.getNamedAttr("largest", b.getBoolAttr(*largest))});
  if (failed(results))
    return failure();
  return n.setOutputs(*results);
}

/// Conv: explicit pads, or auto_pad SAME_UPPER / SAME_LOWER (the padding
/// that keeps ceil(D / stride) outputs, the odd one at the end or the
/// start) or VALID.
LogicalResult importConv(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 3)))
    return failure();
  RankedTensorType input = n.getInputType(0), weight = n.getInputType(1);
  int64_t spatial = input.getRank() - 2;
  if (input.getRank() < 3 || weight.getRank() != input.getRank() ||
      !input.hasStaticShape() || !weight.hasStaticShape())
    return n.emitError() << "needs static input and weight of one rank, 3 or "
                            "more (got "
                         << input << " and " << weight << ")";
  auto ints = [&](StringRef name, int64_t count,
                  int64_t fill) -> FailureOr<SmallVector<int64_t>> {
    auto given = n.getOptionalInts(name);
    if (failed(given))
      return failure();
    if (!*given)
      return SmallVector<int64_t>(count, fill);
    if (static_cast<int64_t>((*given)->size()) != count)
      return n.emitError() << "'" << name << "' has " << (*given)->size()
                           << " values, expected " << count;
    return **given;
  };
  auto strides = ints("strides", spatial, 1);
  auto dilations = ints("dilations", spatial, 1);
  auto pads = ints("pads", 2 * spatial, 0);
  auto kernel = ints("kernel_shape", spatial, 0);
  auto group = n.getInt("group", 1);
  auto autoPad = n.getString("auto_pad", "NOTSET");
  if (failed(strides) || failed(dilations) || failed(pads) || failed(kernel) ||
      failed(group) || failed(autoPad))
    return failure();
  for (int64_t i = 0; i < spatial; ++i)
    if ((*kernel)[i] != 0 && (*kernel)[i] != weight.getDimSize(2 + i))
      return n.emitError() << "kernel_shape does not match the weight "
                           << weight;
  if (*autoPad == "VALID") {
    pads->assign(2 * spatial, 0);
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t size = input.getDimSize(2 + i), stride = (*strides)[i];
      if (stride < 1)
        return n.emitError() << "strides must be positive";
      int64_t out = (size + stride - 1) / stride;
      int64_t span = (*dilations)[i] * (weight.getDimSize(2 + i) - 1) + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * stride + span - size);
      int64_t small = total / 2, large = total - small;
      (*pads)[i] = *autoPad == "SAME_UPPER" ? small : large;
      (*pads)[spatial + i] = *autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (*autoPad != "NOTSET") {
    return n.emitError() << "unknown auto_pad '" << *autoPad << "'";
  }
  OpBuilder &b = n.getBuilder();
  SmallVector<Value> operands = {n.getInput(0), n.getInput(1)};
  if (n.getInput(2))
    operands.push_back(n.getInput(2));
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("strides", b.getDenseI64ArrayAttr(*strides)),
      b.getNamedAttr("pads", b.getDenseI64ArrayAttr(*pads)),
      b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(*dilations)),
      namedI64(n, "group", *group)};
  return forward(n, n.create<ConvOp>(operands, attrs));
}

/// ScatterND; `reduction` (opset 16: none, add, mul; 18: max, min).
LogicalResult importScatterND(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 3)))
    return failure();
  auto reduction = n.getString("reduction", "none");
  if (failed(reduction))
    return failure();
  SmallVector<NamedAttribute> attrs;
  std::optional<ReduceKind> kind;
  if (*reduction == "add")
    kind = ReduceKind::Sum;
  else if (*reduction == "mul")
    kind = ReduceKind::Prod;
  else if (*reduction == "max")
    kind = ReduceKind::Max;
  else if (*reduction == "min")
    kind = ReduceKind::Min;
  else if (*reduction != "none")
    return n.emitError() << "unknown reduction '" << *reduction << "'";
  if (kind)
    attrs.push_back(n.getBuilder().getNamedAttr(
        "reduction", ReduceKindAttr::get(n.getContext(), *kind)));
  return forward(n, n.createTyped<ScatterNDOp>(
                        n.getInputType(0),
                        {n.getInput(0), n.getInput(1), n.getInput(2)}, attrs));
}

LogicalResult importGatherND(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)))
    return failure();
  auto batchDims = n.getInt("batch_dims", 0);
  if (failed(batchDims))
    return failure();
  return forward(n, n.create<GatherNDOp>({n.getInput(0), n.getInput(1)},
                                         {namedI64(n, "batch_dims",
                                                   *batchDims)}));
}

LogicalResult importTrilu(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  auto upper = n.getInt("upper", 1);
  if (failed(upper))
    return failure();
  int64_t k = 0;
  if (n.getInput(1)) {
    auto given = n.getConstantInts(1);
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return n.emitError() << "k must hold one value, not " << given->size();
    // Read exactly (a double loses k near 2^63), then clamped: beyond the
    // matrix's extent every k keeps (or drops) the same elements.
    RankedTensorType type = n.getInputType(0);
    int64_t extent = 0;
    if (type.getRank() >= 2)
      extent = type.getDimSize(type.getRank() - 2) +
               type.getDimSize(type.getRank() - 1);
    k = std::clamp<int64_t>((*given)[0], -extent, extent);
  }
  return forward(n, n.createTyped<TriluOp>(
                        n.getInputType(0), n.getInput(0),
                        {n.getBuilder().getNamedAttr(
                             "upper", n.getBuilder().getBoolAttr(*upper != 0)),
                         namedI64(n, "k", k)}));
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

LogicalResult importMatMul(NodeImporter &n) {
  return importBinary<MatmulOp>(n);
}

/// Einsum of one or two operands whose labels are letters, each at most once
/// per operand, with `...` for batch dimensions and an explicit or implicit
/// (numpy's: the labels seen once, sorted) output: a label only one
/// operand has and the output lacks is summed first; the others become one
/// matmul over [batch, kept-by-A, contracted] x [batch, contracted,
/// kept-by-B] between transposes and reshapes, which the fusion passes see
/// as they see an exported MatMul. Diagonals (a label twice in one operand)
/// are refused.
LogicalResult importEinsum(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  auto equation = n.getString("equation", "");
  if (failed(equation))
    return failure();
  std::string eq;
  for (char c : *equation)
    if (c != ' ')
      eq.push_back(c);
  size_t arrow = eq.find("->");
  SmallVector<StringRef> pieces;
  StringRef(eq).take_front(arrow).split(pieces, ',', /*MaxSplit=*/-1,
                                        /*KeepEmpty=*/true);
  SmallVector<std::string> terms(pieces.begin(), pieces.end());
  std::string outTerm;
  if (arrow != std::string::npos) {
    outTerm = eq.substr(arrow + 2);
  } else {
    // Implicit output: '...' if any operand has it, then the labels that
    // occur once, in alphabetical order.
    std::string all = StringRef(eq).take_front(arrow).str();
    if (all.find("...") != std::string::npos)
      outTerm = "...";
    for (char c = 'A'; c <= 'z'; ++c)
      if (std::isalpha(static_cast<unsigned char>(c)) &&
          llvm::count(all, c) == 1)
        outTerm.push_back(c);
  }
  for (size_t i = 0; i < outTerm.size(); ++i)
    if (outTerm[i] != '.' && outTerm.find(outTerm[i], i + 1) != std::string::npos)
      return n.emitError() << "output '" << outTerm << "' repeats a label";
  if (terms.size() != n.getNumInputs())
    return n.emitError() << "equation '" << *equation << "' has "
                         << terms.size() << " operands, the node "
                         << n.getNumInputs();
  // '...' becomes upper-case labels for the batch dimensions it covers
  // (the same count for every operand, aligned to the back).
  int64_t ellipsisRank = -1;
  SmallVector<std::string> labels;
  for (auto [i, term] : llvm::enumerate(terms)) {
    int64_t rank = n.getInputType(i).getRank();
    size_t dots = term.find("...");
    std::string expanded = term;
    if (dots != std::string::npos) {
      int64_t covered = rank - static_cast<int64_t>(term.size() - 3);
      if (covered < 0 || (ellipsisRank >= 0 && covered != ellipsisRank))
        return n.emitError() << "'...' covers a different number of "
                                "dimensions in operand "
                             << i;
      ellipsisRank = covered;
      std::string batch;
      for (int64_t d = 0; d < covered; ++d)
        batch.push_back(static_cast<char>('A' + d));
      expanded = term.substr(0, dots) + batch + term.substr(dots + 3);
    }
    if (static_cast<int64_t>(expanded.size()) != rank)
      return n.emitError() << "operand " << i << " has rank " << rank
                           << " but " << expanded.size() << " labels";
    for (size_t a = 0; a < expanded.size(); ++a)
      if (!std::isalpha(static_cast<unsigned char>(expanded[a])) ||
          expanded.find(expanded[a], a + 1) != std::string::npos)
        return n.emitError()
               << "operand " << i << " ('" << term
               << "'): only distinct letters are supported (no diagonals)";
    labels.push_back(expanded);
  }
  if (size_t dots = outTerm.find("..."); dots != std::string::npos) {
    std::string batch;
    for (int64_t d = 0; d < std::max<int64_t>(ellipsisRank, 0); ++d)
      batch.push_back(static_cast<char>('A' + d));
    outTerm = outTerm.substr(0, dots) + batch + outTerm.substr(dots + 3);
  }
  llvm::StringMap<int64_t> sizes;
  for (auto [i, term] : llvm::enumerate(labels))
    for (auto [d, c] : llvm::enumerate(term)) {
      int64_t size = n.getInputType(i).getDimSize(d);
      auto [it, inserted] = sizes.try_emplace(StringRef(&c, 1), size);
      if (!inserted && it->second != size)
        return n.emitError() << "label '" << c << "' has sizes "
                             << it->second << " and " << size;
    }
  for (char c : outTerm)
    if (!sizes.count(StringRef(&c, 1)))
      return n.emitError() << "output label '" << c
                           << "' is in no operand";

  OpBuilder &b = n.getBuilder();
  auto transposeTo = [&](Value v, StringRef from,
                         StringRef to) -> FailureOr<Value> {
    if (from == to)
      return v;
    SmallVector<int64_t> perm;
    for (char c : to)
      perm.push_back(from.find(c));
    return n.create<TransposeOp>(v, {namedI64s(n, "permutation", perm)});
  };
  // Sums the labels of `term` that neither `keep` nor `other` has.
  auto sumAlone = [&](Value v, std::string &term, StringRef other,
                      StringRef keep) -> FailureOr<Value> {
    SmallVector<int64_t> axes;
    std::string kept;
    for (auto [d, c] : llvm::enumerate(term)) {
      if (other.contains(c) || keep.contains(c))
        kept.push_back(c);
      else
        axes.push_back(d);
    }
    if (axes.empty())
      return v;
    term = kept;
    return n.create<ReduceOp>(
        v, {b.getNamedAttr("kind", ReduceKindAttr::get(n.getContext(),
                                                        ReduceKind::Sum)),
            namedI64s(n, "axes", axes),
            b.getNamedAttr("keepdims", b.getBoolAttr(false))});
  };
  auto sizeOf = [&](char c) { return sizes.lookup(StringRef(&c, 1)); };

  if (labels.size() == 1) {
    auto summed = sumAlone(n.getInput(0), labels[0], "", outTerm);
    if (failed(summed))
      return failure();
    return forward(n, transposeTo(*summed, labels[0], outTerm));
  }
  auto lhs = sumAlone(n.getInput(0), labels[0], labels[1], outTerm);
  if (failed(lhs))
    return failure();
  auto rhs = sumAlone(n.getInput(1), labels[1], labels[0], outTerm);
  if (failed(rhs))
    return failure();
  std::string batch, left, right, contracted;
  for (char c : labels[0]) {
    bool inB = StringRef(labels[1]).contains(c),
         inOut = StringRef(outTerm).contains(c);
    (inB ? (inOut ? batch : contracted) : left).push_back(c);
  }
  for (char c : labels[1])
    if (!StringRef(labels[0]).contains(c))
      right.push_back(c);
  auto product = [&](StringRef group) {
    int64_t p = 1;
    for (char c : group)
      p *= sizeOf(c);
    return p;
  };
  auto a = transposeTo(*lhs, labels[0], batch + left + contracted);
  auto bt = transposeTo(*rhs, labels[1], batch + contracted + right);
  if (failed(a) || failed(bt))
    return failure();
  int64_t nb = product(batch), m = product(left), k = product(contracted),
          nn = product(right);
  auto a3 = reshapeTo(n, *a, {nb, m, k});
  auto b3 = reshapeTo(n, *bt, {nb, k, nn});
  if (failed(a3) || failed(b3))
    return failure();
  auto mm = n.create<MatmulOp>({*a3, *b3});
  if (failed(mm))
    return failure();
  SmallVector<int64_t> shape;
  std::string resultTerm = batch + left + right;
  for (char c : resultTerm)
    shape.push_back(sizeOf(c));
  auto result = reshapeTo(n, *mm, shape);
  if (failed(result))
    return failure();
  return forward(n, transposeTo(*result, resultTerm, outTerm));
}

/// Gemm: alpha * A' * B' + beta * C, with the transposes made explicit so
/// that recognition sees the same MatMul(+Add) form as other exports.
LogicalResult importGemm(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 3)))
    return failure();
  auto transA = n.getInt("transA", 0);
  auto transB = n.getInt("transB", 0);
  auto alpha = n.getFloat("alpha", 1.0f);
  auto beta = n.getFloat("beta", 1.0f);
  if (failed(transA) || failed(transB) || failed(alpha) || failed(beta))
    return failure();
  for (size_t i : {0, 1})
    if (n.getInputType(i).getRank() != 2)
      return n.emitError() << "input #" << i << " must be a matrix, got "
                           << n.getInputType(i);
  auto transposed = [&](Value v, bool t) -> FailureOr<Value> {
    if (!t)
      return v;
    return n.create<TransposeOp>(v, {namedI64s(n, "permutation", {1, 0})});
  };
  auto a = transposed(n.getInput(0), *transA);
  auto b = transposed(n.getInput(1), *transB);
  if (failed(a) || failed(b))
    return failure();
  auto y = n.create<MatmulOp>({*a, *b});
  if (failed(y))
    return failure();
  Type element = n.getInputType(0).getElementType();
  if (*alpha != 1.0f) {
    y = n.create<MulOp>({*y, n.scalarConstant(element, *alpha)});
    if (failed(y))
      return failure();
  }
  if (Value c = n.getInput(2)) {
    if (*beta != 1.0f) {
      auto scaled = n.create<MulOp>({c, n.scalarConstant(element, *beta)});
      if (failed(scaled))
        return failure();
      c = *scaled;
    }
    y = n.create<AddOp>({*y, c});
  }
  return forward(n, y);
}

/// Reductions; `axesFromInput` for the opsets that pass axes as an input.
template <ReduceKind kind, bool axesFromInput>
LogicalResult importReduce(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, axesFromInput ? 2 : 1)))
    return failure();
  auto keepdims = n.getInt("keepdims", 1);
  auto noop = n.getInt("noop_with_empty_axes", 0);
  if (failed(keepdims) || failed(noop))
    return failure();
  auto given = getAxes(n, axesFromInput);
  if (failed(given))
    return failure();
  SmallVector<int64_t> axes = given->value_or(SmallVector<int64_t>());
  if (axes.empty() && *noop)
    return n.setOutput(n.getInput(0));
  return forward(
      n, n.create<ReduceOp>(
             n.getInput(0),
             {n.getBuilder().getNamedAttr(
                  "kind", ReduceKindAttr::get(n.getContext(), kind)),
              namedI64s(n, "axes", axes),
              n.getBuilder().getNamedAttr(
                  "keepdims", n.getBuilder().getBoolAttr(*keepdims != 0))}));
}

//===----------------------------------------------------------------------===//
// Normalisation and fused forms
//===----------------------------------------------------------------------===//

/// Rejects the statistics outputs (mean, inverse std) that some norm ops
/// offer; inference graphs do not consume them.
LogicalResult checkNoStatistics(NodeImporter &n, ArrayRef<int> outputs) {
  for (int i : outputs)
    if (n.hasOutput(i))
      return n.emitError() << "output #" << i << " ('" << n.getNode().output(i)
                           << "', a normalisation statistic) is not supported";
  return success();
}

/// The Mean and InvStdDev outputs of LayerNormalization, from primitives
/// (training graphs and the ONNX node tests ask for them).
LogicalResult importNormStatistics(NodeImporter &n, int64_t axis, float epsilon,
                                   SmallVector<Value> &outputs) {
  if (!n.hasOutput(1) && !n.hasOutput(2))
    return success();
  RankedTensorType type = n.getInputType(0);
  auto first = normalizeAxisOrError(n, axis, type.getRank());
  if (failed(first))
    return failure();
  SmallVector<NamedAttribute> attrs = {
      n.getBuilder().getNamedAttr(
          "kind", ReduceKindAttr::get(n.getContext(), ReduceKind::Mean)),
      namedI64s(n, "axes",
                llvm::to_vector(llvm::seq<int64_t>(*first, type.getRank())))};
  Value x = n.getInput(0);
  auto mean = n.create<ReduceOp>(x, attrs);
  if (failed(mean))
    return failure();
  auto centered = n.create<SubOp>({x, *mean});
  if (failed(centered))
    return failure();
  auto squared = n.create<MulOp>({*centered, *centered});
  if (failed(squared))
    return failure();
  auto variance = n.create<ReduceOp>(*squared, attrs);
  if (failed(variance))
    return failure();
  auto shifted = n.create<AddOp>(
      {*variance, n.scalarConstant(type.getElementType(), epsilon)});
  if (failed(shifted))
    return failure();
  auto invStd = n.createTyped<RsqrtOp>(shifted->getType(), *shifted);
  if (failed(invStd))
    return failure();
  outputs.append({*mean, *invStd});
  return success();
}

LogicalResult importLayerNormalization(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 3)))
    return failure();
  auto axis = n.getInt("axis", -1);
  auto epsilon = n.getFloat("epsilon", 1e-5f);
  if (failed(axis) || failed(epsilon))
    return failure();
  SmallVector<Value> operands = {n.getInput(0), n.getInput(1)};
  if (n.getInput(2))
    operands.push_back(n.getInput(2));
  auto y = n.createTyped<LayerNormOp>(
      n.getInputType(0), operands,
      {namedI64(n, "axis", *axis), namedF32(n, "epsilon", *epsilon),
       segmentSizes(n, {1, 1, n.getInput(2) ? 1 : 0, 0})});
  if (failed(y))
    return failure();
  SmallVector<Value> outputs = {*y};
  if (failed(importNormStatistics(n, *axis, *epsilon, outputs)))
    return failure();
  return n.setOutputs(outputs);
}

/// SimplifiedLayerNormalization (ONNX Runtime) and RMSNormalization-23.
LogicalResult importRMSNormalization(NodeImporter &n) {
  if (failed(n.checkNumInputs(2, 2)) || failed(checkNoStatistics(n, {1, 2})))
    return failure();
  auto axis = n.getInt("axis", -1);
  auto epsilon = n.getFloat("epsilon", 1e-5f);
  if (failed(axis) || failed(epsilon))
    return failure();
  return forward(
      n, n.createTyped<RMSNormOp>(
             n.getInputType(0), {n.getInput(0), n.getInput(1)},
             {namedI64(n, "axis", *axis), namedF32(n, "epsilon", *epsilon)}));
}

/// SkipLayerNormalization and SkipSimplifiedLayerNormalization (ONNX
/// Runtime): norm(input + skip + bias), with the sum as output 3.
template <bool simplified>
LogicalResult importSkipNormalization(NodeImporter &n) {
  size_t biasIndex = simplified ? 3 : 4;
  if (failed(n.checkNumInputs(3, biasIndex + 1)) ||
      failed(checkNoStatistics(n, {1, 2})))
    return failure();
  auto epsilon = n.getFloat("epsilon", 1e-12f);
  if (failed(epsilon))
    return failure();
  Value input = n.getInput(0), skip = n.getInput(1);
  if (Value bias = n.getInput(biasIndex)) {
    auto withBias = n.create<AddOp>({input, bias});
    if (failed(withBias))
      return failure();
    input = *withBias;
  }
  if (skip.getType() != input.getType()) {
    auto broadcast = n.createTyped<ExpandOp>(input.getType(), skip);
    if (failed(broadcast))
      return failure();
    skip = *broadcast;
  }
  Type type = input.getType();
  SmallVector<NamedAttribute> attrs = {namedF32(n, "epsilon", *epsilon)};
  FailureOr<SmallVector<Value>> results;
  if (simplified) {
    results = n.createMulti<RMSNormOp>(TypeRange{type, type},
                                       {input, n.getInput(2), skip}, attrs);
  } else {
    Value beta = n.getInput(3);
    attrs.push_back(segmentSizes(n, {1, 1, beta ? 1 : 0, 1}));
    SmallVector<Value> operands = {input, n.getInput(2)};
    if (beta)
      operands.push_back(beta);
    operands.push_back(skip);
    results =
        n.createMulti<LayerNormOp>(TypeRange{type, type}, operands, attrs);
  }
  if (failed(results))
    return failure();
  Value y = (*results)[0], sum = (*results)[1];
  return n.setOutputs({y, Value(), Value(), sum});
}

/// Gelu-20 (approximate = "none" | "tanh") and ONNX Runtime's Gelu/FastGelu.
template <GeluApproximation fixed, bool fromAttribute>
LogicalResult importGelu(NodeImporter &n) {
  if (failed(n.checkNumInputs(1, 2)))
    return failure();
  GeluApproximation approximation = fixed;
  if (fromAttribute) {
    auto approximate = n.getString("approximate", "none");
    if (failed(approximate))
      return failure();
    std::optional<GeluApproximation> parsed =
        symbolizeGeluApproximation(*approximate);
    if (!parsed)
      return n.emitError() << "unknown approximation '" << *approximate << "'";
    approximation = *parsed;
  }
  Value x = n.getInput(0);
  if (Value bias = n.getInput(1)) { // FastGelu's optional bias
    auto sum = n.create<AddOp>({x, bias});
    if (failed(sum))
      return failure();
    x = *sum;
  }
  return forward(
      n, n.createTyped<GeluOp>(
             x.getType(), x,
             {n.getBuilder().getNamedAttr(
                 "approximate",
                 GeluApproximationAttr::get(n.getContext(), approximation))}));
}

/// RotaryEmbedding-23: X is [B, H, S, D] or [B, S, H*D]; the caches are
/// [max_position, R/2] indexed by position_ids, or [B, S, R/2] without them.
LogicalResult importRotaryEmbedding(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 4)))
    return failure();
  auto interleaved = n.getInt("interleaved", 0);
  auto numHeads = n.getInt("num_heads", 0);
  auto rotaryDim = n.getInt("rotary_embedding_dim", 0);
  if (failed(interleaved) || failed(numHeads) || failed(rotaryDim))
    return failure();
  Value cos = n.getInput(1), sin = n.getInput(2);
  if (Value positions = n.getInput(3)) {
    auto c = n.create<GatherOp>({cos, positions}, {namedI64(n, "axis", 0)});
    auto s = n.create<GatherOp>({sin, positions}, {namedI64(n, "axis", 0)});
    if (failed(c) || failed(s))
      return failure();
    cos = *c;
    sin = *s;
  }
  SmallVector<NamedAttribute> attrs;
  if (*numHeads > 0 && n.getInputType(0).getRank() == 3)
    attrs.push_back(namedI64(n, "num_heads", *numHeads));
  if (*rotaryDim > 0)
    attrs.push_back(namedI64(n, "rotary_dim", *rotaryDim));
  if (*interleaved)
    attrs.push_back(n.getBuilder().getNamedAttr("interleaved",
                                                n.getBuilder().getUnitAttr()));
  return forward(n, n.createTyped<RotaryEmbeddingOp>(
                        n.getInputType(0), {n.getInput(0), cos, sin}, attrs));
}

/// Attention-23 without a KV cache. 4-D inputs [B, H, S, D] are packed to
/// [B, S, H*D] around the fused op.
LogicalResult importAttention(NodeImporter &n) {
  if (failed(n.checkNumInputs(3, 6)))
    return failure();
  if (n.getInput(4) || n.getInput(5))
    return n.emitError() << "past_key/past_value (KV cache) are not supported";
  for (int i : {1, 2, 3})
    if (n.hasOutput(i))
      return n.emitError() << "output #" << i << " ('" << n.getNode().output(i)
                           << "') is not supported";
  auto causal = n.getInt("is_causal", 0);
  auto qHeads = n.getInt("q_num_heads", 0);
  auto kvHeads = n.getInt("kv_num_heads", 0);
  auto softcap = n.getFloat("softcap", 0.0f);
  const onnx::AttributeProto *scaleAttr = n.findAttribute("scale");
  if (failed(causal) || failed(qHeads) || failed(kvHeads) || failed(softcap))
    return failure();
  if (*softcap != 0.0f)
    return n.emitError() << "softcap is not supported";

  RankedTensorType qType = n.getInputType(0), kType = n.getInputType(1),
                   vType = n.getInputType(2);
  bool fourD = qType.getRank() == 4;
  int64_t heads = *qHeads, kvh = *kvHeads, headDim;
  Value q = n.getInput(0), k = n.getInput(1), v = n.getInput(2);
  auto pack = [&](Value x) -> FailureOr<Value> {
    auto type = cast<RankedTensorType>(x.getType());
    auto t =
        n.create<TransposeOp>(x, {namedI64s(n, "permutation", {0, 2, 1, 3})});
    if (failed(t))
      return failure();
    return reshapeTo(n, *t,
                     {type.getDimSize(0), type.getDimSize(2),
                      type.getDimSize(1) * type.getDimSize(3)});
  };
  if (fourD) {
    if (kType.getRank() != 4 || vType.getRank() != 4)
      return n.emitError() << "Q, K and V must all be 4-D or all 3-D";
    heads = qType.getDimSize(1);
    kvh = kType.getDimSize(1);
    headDim = qType.getDimSize(3);
    auto pq = pack(q), pk = pack(k), pv = pack(v);
    if (failed(pq) || failed(pk) || failed(pv))
      return failure();
    q = *pq;
    k = *pk;
    v = *pv;
  } else {
    if (qType.getRank() != 3 || kType.getRank() != 3 || vType.getRank() != 3)
      return n.emitError() << "Q, K and V must all be 4-D or all 3-D";
    if (heads <= 0 || kvh <= 0)
      return n.emitError()
             << "3-D inputs need the q_num_heads and kv_num_heads attributes";
    if (qType.getDimSize(2) % heads != 0)
      return n.emitError() << "Q's hidden size " << qType.getDimSize(2)
                           << " is not a multiple of q_num_heads " << heads;
    headDim = qType.getDimSize(2) / heads;
  }
  float scale = 1.0f / std::sqrt(static_cast<float>(headDim));
  if (scaleAttr) {
    auto given = n.getFloat("scale", scale);
    if (failed(given))
      return failure();
    scale = *given;
  }
  int64_t qSeq = cast<RankedTensorType>(q.getType()).getDimSize(1);
  int64_t kvSeq = cast<RankedTensorType>(k.getType()).getDimSize(1);
  if (*causal && qSeq != kvSeq)
    return n.emitError() << "is_causal with query length " << qSeq
                         << " and key length " << kvSeq << " is not supported";
  SmallVector<Value> operands = {q, k, v};
  if (Value mask = n.getInput(3))
    operands.push_back(mask);
  SmallVector<NamedAttribute> attrs = {namedI64(n, "num_heads", heads),
                                       namedI64(n, "num_kv_heads", kvh),
                                       namedF32(n, "scale", scale)};
  if (*causal)
    attrs.push_back(
        n.getBuilder().getNamedAttr("causal", n.getBuilder().getUnitAttr()));
  int64_t valueDim = cast<RankedTensorType>(v.getType()).getDimSize(2) / kvh;
  auto qPacked = cast<RankedTensorType>(q.getType());
  auto outType =
      withShape(qPacked, {qPacked.getDimSize(0), qSeq, heads * valueDim});
  auto out = n.createTyped<AttentionOp>(outType, operands, attrs);
  if (failed(out))
    return failure();
  if (!fourD)
    return n.setOutput(*out);
  auto unpacked =
      reshapeTo(n, *out, {qType.getDimSize(0), qSeq, heads, valueDim});
  if (failed(unpacked))
    return failure();
  return forward(
      n, n.create<TransposeOp>(*unpacked,
                               {namedI64s(n, "permutation", {0, 2, 1, 3})}));
}

constexpr StringLiteral kMicrosoft = "com.microsoft";
/// TensorRT's custom domain, in which TransformerEngine and ModelOpt export
/// FP8 quantisation.
constexpr StringLiteral kTensorRT = "trt";

const OpHandlerEntry kHandlers[] = {
    // Elementwise. The version is the first opset whose semantics the
    // handler implements; later versions only widened the type lists.
    {"", "Add", 7, importBinary<AddOp>},
    {"", "Sub", 7, importBinary<SubOp>},
    {"", "Mul", 7, importBinary<MulOp>},
    {"", "Div", 7, importBinary<DivOp>},
    {"", "Pow", 7, importPow},
    {"", "And", 7, importBinary<AndOp>},
    {"", "Or", 7, importBinary<OrOp>},
    {"", "Min", 8, importVariadic<MinOp>},
    {"", "Max", 8, importVariadic<MaxOp>},
    {"", "Equal", 7, importCompare<ComparePredicate::EQ>},
    {"", "Greater", 7, importCompare<ComparePredicate::GT>},
    {"", "Less", 7, importCompare<ComparePredicate::LT>},
    {"", "GreaterOrEqual", 12, importCompare<ComparePredicate::GE>},
    {"", "LessOrEqual", 12, importCompare<ComparePredicate::LE>},
    {"", "Where", 9, importWhere},
    {"", "Sqrt", 6, importUnary<SqrtOp>},
    {"", "Reciprocal", 6, importUnary<ReciprocalOp>},
    {"", "Neg", 6, importUnary<NegOp>},
    {"", "Abs", 6, importUnary<AbsOp>},
    {"", "Sign", 9, importUnary<SignOp>},
    {"", "Mod", 10, importMod},
    {"", "Exp", 6, importUnary<ExpOp>},
    {"", "Log", 6, importUnary<LogOp>},
    {"", "Erf", 9, importUnary<ErfOp>},
    {"", "Tanh", 6, importUnary<TanhOp>},
    {"", "Sigmoid", 6, importUnary<SigmoidOp>},
    {"", "Relu", 6, importUnary<ReluOp>},
    {"", "Sin", 7, importUnary<SinOp>},
    {"", "Cos", 7, importUnary<CosOp>},
    {"", "Floor", 6, importUnary<FloorOp>},
    {"", "Not", 1, importUnary<NotOp>},
    {"", "IsNaN", 9, importIsNaN},
    {"", "Clip", 11, importClip},
    {"", "Cast", 6, importCast},
    {"", "CastLike", 15, importCastLike},
    {"", "QuantizeLinear", 19, importQuantizeLinear},
    {"", "DequantizeLinear", 19, importDequantizeLinear},
    {"", "Softmax", 13, importSoftmax},
    {"", "Identity", 1, importIdentity},
    {"", "Dropout", 7, importIdentity},
    // Constants and shapes.
    {"", "Constant", 1, importConstant},
    {"", "ConstantOfShape", 9, importConstantOfShape},
    {"", "Shape", 1, importShape},
    {"", "Size", 1, importSize},
    {"", "Range", 11, importRange},
    // Data movement.
    {"", "Reshape", 5, importReshape},
    {"", "Flatten", 11, importFlatten},
    {"", "Squeeze", 1, importSqueeze<false>},
    {"", "Squeeze", 13, importSqueeze<true>},
    {"", "Unsqueeze", 1, importUnsqueeze<false>},
    {"", "Unsqueeze", 13, importUnsqueeze<true>},
    {"", "Transpose", 1, importTranspose},
    {"", "Expand", 8, importExpand},
    {"", "Slice", 10, importSlice},
    {"", "Concat", 4, importConcat},
    {"", "Split", 2, importSplit},
    {"", "Gather", 1, importGather<GatherOp>},
    {"", "GatherElements", 11, importGather<GatherElementsOp>},
    {"", "GatherND", 11, importGatherND},
    {"", "ScatterND", 11, importScatterND},
    {"", "Trilu", 14, importTrilu},
    {"", "CumSum", 11, importCumSum},
    {"", "TopK", 1, importTopK<false>},
    {"", "TopK", 10, importTopK<true>},
    // Contractions and reductions.
    {"", "MatMul", 1, importMatMul},
    {"", "Conv", 11, importConv},
    {"", "Einsum", 12, importEinsum},
    {"", "Gemm", 11, importGemm},
    {"", "ReduceMean", 1, importReduce<ReduceKind::Mean, false>},
    {"", "ReduceMean", 18, importReduce<ReduceKind::Mean, true>},
    {"", "ReduceMax", 1, importReduce<ReduceKind::Max, false>},
    {"", "ReduceMax", 18, importReduce<ReduceKind::Max, true>},
    {"", "ReduceMin", 1, importReduce<ReduceKind::Min, false>},
    {"", "ReduceMin", 18, importReduce<ReduceKind::Min, true>},
    {"", "ReduceProd", 1, importReduce<ReduceKind::Prod, false>},
    {"", "ReduceProd", 18, importReduce<ReduceKind::Prod, true>},
    {"", "ReduceSum", 1, importReduce<ReduceKind::Sum, false>},
    {"", "ReduceSum", 13, importReduce<ReduceKind::Sum, true>},
    // Normalisation and fused forms.
    {"", "LayerNormalization", 17, importLayerNormalization},
    {"", "SimplifiedLayerNormalization", 1, importRMSNormalization},
    {"", "RMSNormalization", 23, importRMSNormalization},
    {"", "Gelu", 20, importGelu<GeluApproximation::None, true>},
    {"", "RotaryEmbedding", 23, importRotaryEmbedding},
    {"", "Attention", 23, importAttention},
    {kMicrosoft, "SimplifiedLayerNormalization", 1, importRMSNormalization},
    {kMicrosoft, "SkipLayerNormalization", 1, importSkipNormalization<false>},
    {kMicrosoft, "SkipSimplifiedLayerNormalization", 1,
     importSkipNormalization<true>},
    {kMicrosoft, "Gelu", 1, importGelu<GeluApproximation::None, false>},
    {kMicrosoft, "FastGelu", 1, importGelu<GeluApproximation::Tanh, false>},
    {kTensorRT, "TRT_FP8QuantizeLinear", 1, importTrtFp8Quantize},
    {kTensorRT, "TRT_FP8DequantizeLinear", 1, importTrtFp8Dequantize},
};
} // namespace

ArrayRef<OpHandlerEntry> mte::onnx_import::getOpHandlers() { return kHandlers; }
