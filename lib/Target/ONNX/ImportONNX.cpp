//===- ImportONNX.cpp - ONNX ModelProto to transformer dialect ------------===//
//
// Reads the model with libonnx's generated protobuf classes, orders the graph
// topologically, specialises input shapes, turns initializers into constants
// (weights as dense_resource blobs, moved rather than copied out of the
// protobuf) and dispatches every node to the handler registered for its
// (domain, op_type, opset). Each op is folded as it is created, so shape
// subgraphs collapse into constants while the graph is read.
//
//===----------------------------------------------------------------------===//

#include "mte/Target/ONNX/ImportONNX.h"

#include "NodeImporter.h"
#include "mte/Dialect/Transformer/IR/WeightProvenance.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Alignment.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mte;
using namespace mte::onnx_import;

namespace {
/// The newest default-domain opset the importer knows. Newer models are
/// rejected rather than imported with semantics that may have changed; older
/// ones are checked per node against the first version each handler covers.
constexpr int64_t kMaxOpset = 23;
/// Float tensors with more elements than this become dense_resource blobs.
constexpr int64_t kMaxInlineFloatElements = 64;

Location fileLoc(MLIRContext *context, StringRef path) {
  return FileLineColLoc::get(context, path, 0, 0);
}

StringRef dataTypeName(int32_t dataType) {
  if (onnx::TensorProto_DataType_IsValid(dataType))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(dataType));
  switch (dataType) {
  case 17:
    return "FLOAT8E4M3FN";
  case 18:
    return "FLOAT8E4M3FNUZ";
  case 19:
    return "FLOAT8E5M2";
  case 20:
    return "FLOAT8E5M2FNUZ";
  default:
    return "unknown";
  }
}
} // namespace

Type mte::onnx_import::convertElementType(MLIRContext *context,
                                          int32_t dataType) {
  Builder b(context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  case 17: // FLOAT8E4M3FN (onnx 1.14+)
    return b.getType<Float8E4M3FNType>();
  case 19: // FLOAT8E5M2
    return b.getType<Float8E5M2Type>();
  default:
    return nullptr;
  }
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

namespace {
/// Where an initializer's external data is: a file relative to the model's
/// directory and a byte offset in it.
struct ExternalDataRef {
  std::string location;
  int64_t offset = 0;
};

/// Reads external data: the file named by `location`, relative to the model's
/// directory, from `offset` for `length` bytes (the rest when -1).
FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readExternalData(const onnx::TensorProto &tensor, StringRef modelDir,
                 Location loc, ExternalDataRef &ref) {
  std::string &location = ref.location;
  int64_t &offset = ref.offset;
  int64_t length = -1;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      int64_t value;
      if (StringRef(entry.value()).getAsInteger(10, value) || value < 0)
        return emitError(loc) << "initializer '" << tensor.name()
                              << "': external data " << entry.key() << " '"
                              << entry.value() << "' is not a byte count";
      (entry.key() == "offset" ? offset : length) = value;
    }
  }
  if (location.empty())
    return emitError(loc) << "initializer '" << tensor.name()
                          << "': external data has no location";
  if (llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return emitError(loc) << "initializer '" << tensor.name()
                          << "': external data location '" << location
                          << "' must stay inside the model's directory";
  SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  // Without a length the tensor runs to the end of the file: map just that
  // slice rather than the whole file.
  if (length < 0) {
    uint64_t size;
    if (std::error_code ec = llvm::sys::fs::file_size(path, size))
      return emitError(loc) << "initializer '" << tensor.name()
                            << "': cannot read external data '" << path
                            << "': " << ec.message();
    if (static_cast<uint64_t>(offset) > size)
      return emitError(loc)
             << "initializer '" << tensor.name()
             << "': external data offset is past the end of '" << path << "'";
    length = size - offset;
  }
  auto buffer = llvm::MemoryBuffer::getFileSlice(path, length, offset);
  if (!buffer)
    return emitError(loc) << "initializer '" << tensor.name()
                          << "': cannot read external data '" << path
                          << "': " << buffer.getError().message();
  if ((*buffer)->getBufferSize() != static_cast<uint64_t>(length))
    return emitError(loc) << "initializer '" << tensor.name()
                          << "': external data '" << path << "' is too short";
  return std::move(*buffer);
}

/// Wraps bytes that stay alive as long as `owner` in a resource blob, copying
/// only when they are not aligned for the element type.
template <typename Owner>
AsmResourceBlob makeBlob(ArrayRef<char> bytes, size_t alignment, Owner owner) {
  if (!llvm::isAddrAligned(llvm::Align(alignment), bytes.data()))
    return HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignment);
  auto shared = std::make_shared<Owner>(std::move(owner));
  return AsmResourceBlob(
      bytes, alignment,
      [shared](void *, size_t, size_t) mutable { shared.reset(); },
      /*dataIsMutable=*/false);
}

/// Typed-field data (float_data, int64_data, ...) as little-endian bytes.
FailureOr<std::vector<char>> typedFieldBytes(const onnx::TensorProto &tensor,
                                             Type elementType, int64_t count,
                                             Location loc) {
  std::vector<char> bytes;
  auto append = [&](auto value) {
    const char *p = reinterpret_cast<const char *>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(value));
  };
  int64_t have = 0;
  if (elementType.isF32()) {
    have = tensor.float_data_size();
    for (float v : tensor.float_data())
      append(v);
  } else if (elementType.isF64()) {
    have = tensor.double_data_size();
    for (double v : tensor.double_data())
      append(v);
  } else if (elementType.isUnsignedInteger(64) ||
             elementType.isUnsignedInteger(32)) {
    have = tensor.uint64_data_size();
    for (uint64_t v : tensor.uint64_data())
      elementType.isUnsignedInteger(64) ? append(v)
                                        : append(static_cast<uint32_t>(v));
  } else if (elementType.isInteger(64)) {
    have = tensor.int64_data_size();
    for (int64_t v : tensor.int64_data())
      append(v);
  } else if (elementType.isInteger(32)) {
    have = tensor.int32_data_size();
    for (int32_t v : tensor.int32_data())
      append(v);
  } else if (elementType.isF16() || elementType.isBF16() ||
             elementType.isInteger(16)) {
    have = tensor.int32_data_size();
    for (int32_t v : tensor.int32_data())
      append(static_cast<uint16_t>(v));
  } else if (elementType.isInteger(8) || elementType.isInteger(1) ||
             transformer::isFp8Type(elementType)) {
    have = tensor.int32_data_size();
    for (int32_t v : tensor.int32_data())
      append(static_cast<uint8_t>(v));
  }
  if (have != count)
    return emitError(loc) << "tensor '" << tensor.name() << "' holds " << have
                          << " values for a shape of " << count << " elements";
  return bytes;
}
} // namespace

FailureOr<ElementsAttr>
mte::onnx_import::convertTensor(onnx::TensorProto &tensor, StringRef modelDir,
                                Location loc) {
  MLIRContext *context = loc.getContext();
  Type elementType = convertElementType(context, tensor.data_type());
  if (!elementType)
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has unsupported element type "
                          << dataTypeName(tensor.data_type());
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d > 0 && count > (int64_t(1) << 40) / d))
      return emitError(loc) << "tensor '" << tensor.name()
                            << "' has an invalid dimension " << d;
    shape.push_back(d);
    count *= d;
  }
  auto type = RankedTensorType::get(shape, elementType);
  // i1 is stored as one byte per element.
  int64_t elementBytes =
      elementType.isInteger(1) ? 1 : elementType.getIntOrFloatBitWidth() / 8;
  int64_t byteSize = count * elementBytes;
  size_t alignment = std::max<int64_t>(elementBytes, 1);

  // Where the bytes are, and what keeps them alive.
  ArrayRef<char> bytes;
  std::unique_ptr<std::string> rawOwner;
  std::unique_ptr<llvm::MemoryBuffer> externalOwner;
  ExternalDataRef externalRef;
  std::vector<char> typedOwner;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto buffer = readExternalData(tensor, modelDir, loc, externalRef);
    if (failed(buffer))
      return failure();
    externalOwner = std::move(*buffer);
    bytes = ArrayRef<char>(externalOwner->getBufferStart(),
                           externalOwner->getBufferSize());
  } else if (tensor.has_raw_data()) {
    rawOwner.reset(tensor.release_raw_data());
    bytes = ArrayRef<char>(rawOwner->data(), rawOwner->size());
  } else {
    auto typed = typedFieldBytes(tensor, elementType, count, loc);
    if (failed(typed))
      return failure();
    typedOwner = std::move(*typed);
    bytes = typedOwner;
  }
  if (static_cast<int64_t>(bytes.size()) != byteSize)
    return emitError(loc) << "tensor '" << tensor.name() << "' has "
                          << bytes.size() << " bytes of data for type " << type
                          << " (" << byteSize << " bytes)";

  // Integers (shapes, indices, masks) and small tensors stay inline so that
  // folding can read them; weights become resource blobs.
  if (elementType.isInteger(1)) {
    SmallVector<bool> values(
        llvm::map_range(bytes, [](char c) { return c != 0; }));
    return cast<ElementsAttr>(DenseElementsAttr::get(type, values));
  }
  if (isa<IntegerType>(elementType) || count <= kMaxInlineFloatElements) {
    bool splat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, bytes, splat))
      return emitError(loc)
             << "tensor '" << tensor.name() << "' has malformed data";
    return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, bytes));
  }
  std::string blobName = tensor.name().empty() ? "tensor" : tensor.name();
  AsmResourceBlob blob =
      externalOwner ? makeBlob(bytes, alignment, std::move(externalOwner))
      : rawOwner
          ? makeBlob(bytes, alignment, std::move(rawOwner))
          : HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignment);
  // --weights=external reads these bytes from the same place at run time.
  if (!externalRef.location.empty())
    transformer::WeightProvenance::get(type.getContext())
        .recordExternal(blob.getData().data(), externalRef.location,
                        externalRef.offset, count, elementType);
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, blobName, std::move(blob)));
}

//===----------------------------------------------------------------------===//
// NodeImporter
//===----------------------------------------------------------------------===//

InFlightDiagnostic NodeImporter::emitError() {
  InFlightDiagnostic diag = mlir::emitError(loc);
  diag << node.op_type() << ": ";
  return diag;
}

FailureOr<Value> NodeImporter::getRequiredInput(size_t i) {
  if (Value v = getInput(i))
    return v;
  return emitError() << "input #" << i << " is required";
}

LogicalResult NodeImporter::checkNumInputs(size_t min, size_t max) {
  size_t n = node.input_size();
  if (n < min || n > max)
    return emitError() << "expects " << min
                       << (min == max ? "" : (" to " + std::to_string(max)))
                       << " inputs, got " << n;
  for (size_t i = 0; i < min; ++i)
    if (!getInput(i))
      return emitError() << "input #" << i << " is required";
  return success();
}

FailureOr<SmallVector<int64_t>> NodeImporter::getConstantInts(size_t i) {
  Value v = getInput(i);
  DenseIntElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return emitError() << "input #" << i << " ('"
                       << (static_cast<int>(i) < node.input_size()
                               ? node.input(i)
                               : std::string())
                       << "') must be a compile-time constant";
  return llvm::map_to_vector(attr.getValues<APInt>(),
                             [](const APInt &v) { return v.getSExtValue(); });
}

FailureOr<double> NodeImporter::getConstantScalar(size_t i) {
  Value v = getInput(i);
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1)
    return emitError() << "input #" << i
                       << " must be a compile-time constant scalar";
  if (isa<FloatType>(attr.getElementType()))
    return (*attr.value_begin<APFloat>()).convertToDouble();
  return static_cast<double>((*attr.value_begin<APInt>()).getSExtValue());
}

const onnx::AttributeProto *NodeImporter::findAttribute(StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

namespace {
InFlightDiagnostic wrongAttributeType(NodeImporter &node,
                                      const onnx::AttributeProto &attr,
                                      StringRef expected) {
  return node.emitError() << "attribute '" << attr.name() << "' has type "
                          << onnx::AttributeProto_AttributeType_Name(
                                 attr.type())
                          << ", expected " << expected;
}
} // namespace

FailureOr<std::optional<int64_t>> NodeImporter::getOptionalInt(StringRef name) {
  const onnx::AttributeProto *attr = findAttribute(name);
  if (!attr)
    return std::optional<int64_t>();
  if (attr->type() != onnx::AttributeProto::INT)
    return wrongAttributeType(*this, *attr, "INT");
  return std::optional<int64_t>(attr->i());
}

FailureOr<int64_t> NodeImporter::getInt(StringRef name, int64_t defaultValue) {
  auto value = getOptionalInt(name);
  if (failed(value))
    return failure();
  return value->value_or(defaultValue);
}

FailureOr<float> NodeImporter::getFloat(StringRef name, float defaultValue) {
  const onnx::AttributeProto *attr = findAttribute(name);
  if (!attr)
    return defaultValue;
  if (attr->type() != onnx::AttributeProto::FLOAT)
    return wrongAttributeType(*this, *attr, "FLOAT");
  return attr->f();
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeImporter::getOptionalInts(StringRef name) {
  const onnx::AttributeProto *attr = findAttribute(name);
  if (!attr)
    return std::optional<SmallVector<int64_t>>();
  if (attr->type() != onnx::AttributeProto::INTS)
    return wrongAttributeType(*this, *attr, "INTS");
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(attr->ints().begin(), attr->ints().end()));
}

FailureOr<std::string> NodeImporter::getString(StringRef name,
                                               StringRef defaultValue) {
  const onnx::AttributeProto *attr = findAttribute(name);
  if (!attr)
    return defaultValue.str();
  if (attr->type() != onnx::AttributeProto::STRING)
    return wrongAttributeType(*this, *attr, "STRING");
  return attr->s();
}

FailureOr<ElementsAttr> NodeImporter::getTensor(StringRef name) {
  const onnx::AttributeProto *attr = findAttribute(name);
  if (!attr)
    return ElementsAttr();
  if (attr->type() != onnx::AttributeProto::TENSOR)
    return wrongAttributeType(*this, *attr, "TENSOR");
  onnx::TensorProto tensor = attr->t();
  return convertTensor(tensor, modelDir, loc);
}

LogicalResult NodeImporter::setOutputs(ValueRange values) {
  for (int i = values.size(); i < node.output_size(); ++i)
    if (!node.output(i).empty())
      return emitError() << "output #" << i << " ('" << node.output(i)
                         << "') is not supported";
  // Results past the node's output list (trailing optional outputs it leaves
  // out, or no outputs at all) have no name to bind.
  size_t bound = std::min<size_t>(values.size(), node.output_size());
  results.assign(values.begin(), values.begin() + bound);
  return success();
}

Value NodeImporter::constant(TypedAttr value) {
  return arith::ConstantOp::create(builder, loc, value);
}

Value NodeImporter::scalarConstant(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  if (isa<FloatType>(elementType))
    return constant(
        DenseElementsAttr::get(type, builder.getFloatAttr(elementType, value)));
  // Through APFloat: a value beyond the integer type (or NaN) converts to
  // its saturated bound rather than to undefined behaviour.
  llvm::APSInt integer(elementType.getIntOrFloatBitWidth(),
                       elementType.isUnsignedInteger());
  bool exact;
  llvm::APFloat(value).convertToInteger(integer, llvm::APFloat::rmTowardZero,
                                        &exact);
  return constant(DenseElementsAttr::get(
      type, builder.getIntegerAttr(elementType, integer)));
}

FailureOr<SmallVector<Value>> NodeImporter::finish(Operation *op) {
  if (failed(mlir::verify(op))) {
    op->erase();
    return failure();
  }
  SmallVector<Value> folded;
  if (succeeded(builder.tryFold(op, folded)) && !folded.empty()) {
    op->erase();
    return folded;
  }
  return SmallVector<Value>(op->getResults());
}

//===----------------------------------------------------------------------===//
// Graph import
//===----------------------------------------------------------------------===//

namespace {
class GraphImporter {
public:
  GraphImporter(MLIRContext *context, StringRef path,
                const ONNXImportOptions &options)
      : context(context), path(path), options(options), builder(context),
        modelDir(llvm::sys::path::parent_path(path).str()) {
    if (modelDir.empty())
      modelDir = ".";
  }

  OwningOpRef<ModuleOp> run();

private:
  LogicalResult readModel();
  LogicalResult readOpsets();
  LogicalResult importInitializers();
  FailureOr<SmallVector<Type>> importInputTypes();
  FailureOr<SmallVector<int>> topologicalOrder();
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  Location nodeLoc(const onnx::NodeProto &node, int index);

  MLIRContext *context;
  std::string path;
  const ONNXImportOptions &options;
  OpBuilder builder;
  std::string modelDir;
  onnx::ModelProto model;
  llvm::StringMap<int64_t> opsets;
  llvm::StringMap<Value> values;
  llvm::StringMap<std::pair<Location, onnx::TensorProto *>> initializers;
  llvm::DenseMap<std::pair<StringRef, StringRef>,
                 SmallVector<const OpHandlerEntry *>>
      handlers;
};

StringRef normalizeDomain(StringRef domain) {
  return domain == "ai.onnx" ? "" : domain;
}

LogicalResult GraphImporter::readModel() {
  Location loc = fileLoc(context, path);
  // Parse from a mapping of the whole file: protobuf then allocates each
  // initializer's bytes once, at its final size, instead of growing it from
  // a stream. Protobuf messages are limited to 2 GiB; larger weights must be
  // external data, which is mapped separately.
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(loc) << "cannot open the model: "
                          << buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return emitError(loc) << "the model file is " << bytes.size()
                          << " bytes; protobuf limits a ModelProto to 2 GiB, "
                             "so larger weights must be stored as external "
                             "data";
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return emitError(loc)
           << "cannot parse the file as an ONNX ModelProto (truncated, "
              "corrupted or not an ONNX model)";
  if (!model.has_graph())
    return emitError(loc) << "the model has no graph";
  return success();
}

LogicalResult GraphImporter::readOpsets() {
  Location loc = fileLoc(context, path);
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    opsets[normalizeDomain(opset.domain())] = opset.version();
  auto it = opsets.find("");
  if (it == opsets.end())
    return emitError(loc) << "the model imports no default-domain opset";
  if (it->second > kMaxOpset)
    return emitError(loc) << "default-domain opset " << it->second
                          << " is newer than the newest mte knows ("
                          << kMaxOpset << ")";
  for (const OpHandlerEntry &entry : getOpHandlers())
    handlers[{entry.domain, entry.opType}].push_back(&entry);
  for (auto &[key, list] : handlers)
    llvm::sort(list, [](auto *a, auto *b) {
      return a->sinceVersion > b->sinceVersion;
    });
  return success();
}

Location GraphImporter::nodeLoc(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty()
                         ? node.op_type() + "_" + std::to_string(index)
                         : node.name();
  return NameLoc::get(StringAttr::get(context, name), fileLoc(context, path));
}

LogicalResult GraphImporter::importInitializers() {
  onnx::GraphProto *graph = model.mutable_graph();
  for (onnx::TensorProto &tensor : *graph->mutable_initializer()) {
    Location loc = NameLoc::get(StringAttr::get(context, tensor.name()),
                                fileLoc(context, path));
    if (tensor.name().empty())
      return emitError(fileLoc(context, path)) << "an initializer has no name";
    initializers.insert({tensor.name(), {loc, &tensor}});
  }
  return success();
}

FailureOr<SmallVector<Type>> GraphImporter::importInputTypes() {
  SmallVector<Type> types;
  bool symbolic = false;
  llvm::StringSet<> seen;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    if (initializers.count(input.name()))
      continue; // an initializer given a default value: a weight
    // Errors about graph inputs name them in the message; the location is
    // the file (a NameLoc would read as a node).
    Location loc = fileLoc(context, path);
    if (!seen.insert(input.name()).second)
      return emitError(loc)
             << "graph input '" << input.name() << "' is declared twice";
    if (!input.type().has_tensor_type())
      return emitError(loc)
             << "graph input '" << input.name() << "' is not a tensor";
    const onnx::TypeProto::Tensor &tensorType = input.type().tensor_type();
    Type elementType = convertElementType(context, tensorType.elem_type());
    if (!elementType)
      return emitError(loc) << "graph input '" << input.name()
                            << "' has unsupported element type "
                            << dataTypeName(tensorType.elem_type());
    SmallVector<int64_t> shape;
    auto given = options.inputShapes.find(input.name());
    if (given != options.inputShapes.end()) {
      shape = given->second;
      if (tensorType.has_shape() &&
          tensorType.shape().dim_size() != static_cast<int>(shape.size()))
        return emitError(loc)
               << "--input-shape gives graph input '" << input.name()
               << "' rank " << shape.size() << ", the model declares rank "
               << tensorType.shape().dim_size();
      if (tensorType.has_shape())
        for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim()))
          if (dim.has_dim_value() && dim.dim_value() != shape[i])
            return emitError(loc)
                   << "--input-shape gives graph input '" << input.name()
                   << "' size " << shape[i] << " in dimension " << i
                   << ", the model fixes it to " << dim.dim_value();
    } else {
      if (!tensorType.has_shape())
        return emitError(loc) << "graph input '" << input.name()
                              << "' has no shape; give it with --input-shape "
                              << input.name() << "=...";
      // Every symbolic input is reported, so that one run lists all the
      // --input-shape options the model needs.
      bool isSymbolic = false;
      for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim())) {
        if (!dim.has_dim_value() || dim.dim_value() < 0) {
          emitError(loc) << "dimension " << i << " of graph input '"
                         << input.name() << "' is symbolic ('"
                         << dim.dim_param() << "'); give its size with "
                         << "--input-shape " << input.name() << "=...";
          isSymbolic = true;
          break;
        }
        shape.push_back(dim.dim_value());
      }
      if (isSymbolic) {
        symbolic = true;
        continue;
      }
    }
    if (options.batchDivisor > 1) {
      int64_t parts = options.batchDivisor;
      if (shape.empty())
        return emitError(loc)
               << "graph input '" << input.name() << "' is a scalar: --dp "
               << "and --micro-batches split the batch (first dimension) of "
               << "every graph input";
      if (shape[0] % parts != 0)
        return emitError(loc)
               << "the batch (first dimension) " << shape[0]
               << " of graph input '" << input.name()
               << "' does not divide into " << parts
               << " parts (--dp times --micro-batches)";
      if (tensorType.has_shape() && tensorType.shape().dim_size() > 0 &&
          tensorType.shape().dim(0).has_dim_value())
        return emitError(loc)
               << "the model fixes the batch (first dimension) of graph "
               << "input '" << input.name() << "' to " << shape[0]
               << "; --dp and --micro-batches run it on parts of "
               << shape[0] / parts << ": export it with a dynamic batch";
      shape[0] /= parts;
    }
    types.push_back(RankedTensorType::get(shape, elementType));
  }
  if (symbolic)
    return failure();
  for (const auto &entry : options.inputShapes)
    if (!seen.contains(entry.getKey()))
      return emitError(fileLoc(context, path))
             << "--input-shape names '" << entry.getKey()
             << "', which is not a graph input";
  return types;
}

/// Orders the nodes so that every input is produced before it is used,
/// reporting values nobody produces and cycles.
FailureOr<SmallVector<int>> GraphImporter::topologicalOrder() {
  const onnx::GraphProto &graph = model.graph();
  llvm::StringMap<int> producer;
  for (auto [i, node] : llvm::enumerate(graph.node()))
    for (const std::string &output : node.output())
      if (!output.empty() && !producer.insert({output, i}).second)
        return emitError(nodeLoc(node, i))
               << node.op_type() << ": output '" << output
               << "' is already produced by another node";
  int n = graph.node_size();
  SmallVector<int> pending(n, 0);
  SmallVector<SmallVector<int>> users(n);
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    for (const std::string &input : node.input()) {
      if (input.empty() || values.count(input) || initializers.count(input))
        continue;
      auto it = producer.find(input);
      if (it == producer.end())
        return emitError(nodeLoc(node, i))
               << node.op_type() << ": input '" << input
               << "' is not a graph input, an initializer or any node's output";
      users[it->second].push_back(i);
      ++pending[i];
    }
  }
  SmallVector<int> order, ready;
  for (int i = n - 1; i >= 0; --i)
    if (pending[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    int i = ready.pop_back_val();
    order.push_back(i);
    for (int user : llvm::reverse(users[i]))
      if (--pending[user] == 0)
        ready.push_back(user);
  }
  if (static_cast<int>(order.size()) != n) {
    int stuck =
        llvm::find_if(pending, [](int p) { return p > 0; }) - pending.begin();
    return emitError(nodeLoc(graph.node(stuck), stuck))
           << graph.node(stuck).op_type()
           << ": the graph has a cycle through this node";
  }
  return order;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        int index) {
  Location loc = nodeLoc(node, index);
  StringRef domain = normalizeDomain(node.domain());
  auto opsetIt = opsets.find(domain);
  if (opsetIt == opsets.end())
    return emitError(loc) << node.op_type() << ": domain '" << domain
                          << "' is not imported by the model";
  int64_t opset = opsetIt->second;
  auto it = handlers.find({domain, node.op_type()});
  if (it == handlers.end())
    return emitError(loc) << "unsupported operator '"
                          << (domain.empty() ? "" : (domain + "::").str())
                          << node.op_type() << "'";
  const OpHandlerEntry *entry = nullptr;
  for (const OpHandlerEntry *candidate : it->second)
    if (candidate->sinceVersion <= opset) {
      entry = candidate;
      break;
    }
  if (!entry)
    return emitError(loc) << node.op_type() << ": opset " << opset
                          << " predates the first supported version ("
                          << it->second.back()->sinceVersion << ")";

  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto valueIt = values.find(name);
    if (valueIt != values.end()) {
      inputs.push_back(valueIt->second);
      continue;
    }
    // Initializers become constants where they are first used.
    auto init = initializers.find(name);
    assert(init != initializers.end() && "checked by topologicalOrder");
    auto attr =
        convertTensor(*init->second.second, modelDir, fileLoc(context, path));
    if (failed(attr))
      return failure();
    Value value = arith::ConstantOp::create(builder, init->second.first,
                                            cast<TypedAttr>(*attr));
    values[name] = value;
    inputs.push_back(value);
  }

  NodeImporter importer(builder, node, loc, std::move(inputs), opset, modelDir);
  if (failed(entry->handler(importer)))
    return failure();
  for (auto [i, value] : llvm::enumerate(importer.getResults()))
    if (!node.output(i).empty())
      values[node.output(i)] = value;
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  if (failed(readModel()) || failed(readOpsets()) ||
      failed(importInitializers()))
    return nullptr;
  auto inputTypes = importInputTypes();
  if (failed(inputTypes))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc(context, path));
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc(context, path),
                                   options.functionName,
                                   builder.getFunctionType(*inputTypes, {}));
  Block *body = func.addEntryBlock();
  int argIndex = 0;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    if (initializers.count(input.name()))
      continue;
    BlockArgument arg = body->getArgument(argIndex);
    arg.setLoc(NameLoc::get(StringAttr::get(context, input.name()),
                            fileLoc(context, path)));
    func.setArgAttr(argIndex, "transformer.name",
                    builder.getStringAttr(input.name()));
    values[input.name()] = arg;
    ++argIndex;
  }
  builder.setInsertionPointToEnd(body);

  auto order = topologicalOrder();
  if (failed(order))
    return nullptr;
  for (int index : *order)
    if (failed(importNode(model.graph().node(index), index)))
      return nullptr;

  SmallVector<Value> results;
  SmallVector<StringRef> resultNames;
  llvm::StringSet<> listed;
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    // Outputs are looked up by name, so a name listed again is the same
    // output: the model returns it once.
    if (!listed.insert(output.name()).second) {
      emitWarning(fileLoc(context, path))
          << "graph output '" << output.name()
          << "' is listed more than once; the model returns it once";
      continue;
    }
    Value value = values.lookup(output.name());
    if (!value && initializers.count(output.name())) {
      auto &[loc, tensor] = initializers.find(output.name())->second;
      auto attr = convertTensor(*tensor, modelDir, fileLoc(context, path));
      if (failed(attr))
        return nullptr;
      value = arith::ConstantOp::create(builder, loc, cast<TypedAttr>(*attr));
    }
    if (!value) {
      emitError(fileLoc(context, path))
          << "graph output '" << output.name() << "' is never produced";
      return nullptr;
    }
    results.push_back(value);
    resultNames.push_back(output.name());
  }
  func::ReturnOp::create(builder, fileLoc(context, path), results);
  func.setType(
      builder.getFunctionType(*inputTypes, ValueRange(results).getTypes()));
  for (auto [i, name] : llvm::enumerate(resultNames))
    func.setResultAttr(i, "transformer.name", builder.getStringAttr(name));
  // Folding shape subgraphs leaves their inputs (constants, shape reads)
  // without users; drop them so the function holds only what computes.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return module;
}
} // namespace

OwningOpRef<ModuleOp> mte::importONNXModel(StringRef path, MLIRContext *context,
                                           const ONNXImportOptions &options) {
  context->loadDialect<transformer::TransformerDialect, arith::ArithDialect,
                       func::FuncDialect>();
  return GraphImporter(context, path, options).run();
}

std::string mte::parseInputShape(StringRef spec, ONNXImportOptions &options) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || !spec.contains('='))
    return "expected NAME=D0xD1x..., got '" + spec.str() + "'";
  SmallVector<int64_t> shape;
  if (!dims.empty()) {
    SmallVector<StringRef> parts;
    dims.split(parts, 'x');
    for (StringRef part : parts) {
      int64_t d;
      if (part.getAsInteger(10, d) || d < 0)
        return "dimension '" + part.str() + "' in '" + spec.str() +
               "' is not a non-negative integer";
      shape.push_back(d);
    }
  }
  options.inputShapes[name] = shape;
  return "";
}

std::vector<std::string> mte::getSupportedONNXOperators() {
  std::set<std::string> names;
  for (const OpHandlerEntry &entry : getOpHandlers())
    names.insert((entry.domain.empty() ? "ai.onnx" : entry.domain).str() +
                 "::" + entry.opType.str());
  return {names.begin(), names.end()};
}
