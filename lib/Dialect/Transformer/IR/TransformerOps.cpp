//===- TransformerOps.cpp - verifiers and type inference ------------------===//
//
// Result type inference follows ONNX semantics (numpy broadcasting, numpy
// matmul, ONNX reduction/slicing rules). Folders and canonicalisation
// patterns live in TransformerFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

#include "mte/Support/CheckedShape.h"

using namespace mlir;
using namespace mte::transformer;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

std::optional<int64_t> mte::transformer::normalizeAxis(int64_t axis,
                                                       int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult mte::transformer::inferBroadcastBinaryType(
    std::optional<Location> loc, Type lhs, Type rhs, Type resultElementType,
    SmallVectorImpl<Type> &inferred) {
  auto lhsType = dyn_cast<RankedTensorType>(lhs);
  auto rhsType = dyn_cast<RankedTensorType>(rhs);
  if (!lhsType || !rhsType)
    return emitOptionalError(loc, "expected ranked tensor operands");
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(loc, "operand element types ",
                             lhsType.getElementType(), " and ",
                             rhsType.getElementType(), " differ");
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(lhsType.getShape(),
                                          rhsType.getShape(), shape))
    return emitOptionalError(loc, "operand types ", lhsType, " and ", rhsType,
                             " are not broadcast-compatible");
  inferred.push_back(RankedTensorType::get(
      shape, resultElementType ? resultElementType : lhsType.getElementType()));
  return success();
}

static bool isStaticDim(int64_t d) { return !ShapedType::isDynamic(d); }

/// True when two dimensions may be equal (one of them is unknown, or both
/// are the same size).
static bool dimsCompatible(int64_t a, int64_t b) {
  return !isStaticDim(a) || !isStaticDim(b) || a == b;
}

static bool shapesCompatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return a.size() == b.size() &&
         llvm::all_of(llvm::zip_equal(a, b), [](auto p) {
           return dimsCompatible(std::get<0>(p), std::get<1>(p));
         });
}

static RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult
CompareOp::inferReturnTypes(MLIRContext *context,
                            std::optional<Location> location, Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferBroadcastBinaryType(
      location, adaptor.getLhs().getType(), adaptor.getRhs().getType(),
      IntegerType::get(context, 1), inferredReturnTypes);
}

LogicalResult
WhereOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  SmallVector<Type> values;
  if (failed(inferBroadcastBinaryType(
          location, adaptor.getTrueValue().getType(),
          adaptor.getFalseValue().getType(), nullptr, values)))
    return failure();
  auto valueType = cast<RankedTensorType>(values.front());
  auto condType = cast<RankedTensorType>(adaptor.getCondition().getType());
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(condType.getShape(),
                                          valueType.getShape(), shape))
    return emitOptionalError(location, "condition type ", condType,
                             " is not broadcast-compatible with ", valueType);
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, valueType.getElementType()));
  return success();
}

LogicalResult ClipOp::verify() {
  if (getMin() && getMax() &&
      getMin()->convertToDouble() > getMax()->convertToDouble())
    return emitOpError("min ") << getMin()->convertToDouble() << " exceeds max "
                               << getMax()->convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

LogicalResult
MatmulOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  auto lhsType = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(location, "operand element types ",
                             lhsType.getElementType(), " and ",
                             rhsType.getElementType(), " differ");
  if (lhsType.getRank() == 0 || rhsType.getRank() == 0)
    return emitOptionalError(location, "operands must have rank >= 1");

  // numpy promotes a vector lhs to [1, K] and a vector rhs to [K, 1].
  bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
  SmallVector<int64_t> lhsShape(lhsType.getShape());
  SmallVector<int64_t> rhsShape(rhsType.getShape());
  if (lhsVector)
    lhsShape.insert(lhsShape.begin(), 1);
  if (rhsVector)
    rhsShape.push_back(1);

  int64_t k = lhsShape.back(), kRhs = rhsShape[rhsShape.size() - 2];
  if (!dimsCompatible(k, kRhs))
    return emitOptionalError(location, "contracting dimensions differ: lhs ",
                             lhsType, " has ", k, ", rhs ", rhsType, " has ",
                             kRhs);
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(ArrayRef(lhsShape).drop_back(2),
                                          ArrayRef(rhsShape).drop_back(2),
                                          shape))
    return emitOptionalError(location, "batch dimensions of ", lhsType, " and ",
                             rhsType, " are not broadcast-compatible");
  if (!lhsVector)
    shape.push_back(lhsShape[lhsShape.size() - 2]);
  if (!rhsVector)
    shape.push_back(rhsShape.back());
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

LogicalResult
ReduceOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = inputType.getRank();
  llvm::SmallBitVector reduced(rank, adaptor.getAxes().empty());
  for (int64_t axis : adaptor.getAxes()) {
    std::optional<int64_t> dim = normalizeAxis(axis, rank);
    if (!dim)
      return emitOptionalError(location, "axis ", axis,
                               " is out of range for rank ", rank);
    if (reduced.test(*dim))
      return emitOptionalError(location, "axis ", axis, " is repeated");
    reduced.set(*dim);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced.test(d))
      shape.push_back(inputType.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

LogicalResult
ConvOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         Adaptor adaptor,
                         SmallVectorImpl<Type> &inferredReturnTypes) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  int64_t rank = input.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> strides = adaptor.getStrides(), pads = adaptor.getPads(),
                    dilations = adaptor.getDilations();
  int64_t group = adaptor.getGroup();
  if (rank < 3 || weight.getRank() != rank || !input.hasStaticShape() ||
      !weight.hasStaticShape())
    return emitOptionalError(location, "needs static input [N, C, ...] and "
                                       "weight [M, C / group, ...] of one "
                                       "rank, 3 or more");
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return emitOptionalError(location, "needs ", spatial, " strides and "
                             "dilations and ", 2 * spatial, " pads");
  int64_t channels = input.getDimSize(1), filters = weight.getDimSize(0);
  if (group < 1 || channels % group != 0 || filters % group != 0 ||
      weight.getDimSize(1) * group != channels)
    return emitOptionalError(location, "group ", group, " does not divide ",
                             channels, " input channels into the weight's ",
                             weight.getDimSize(1), " per group (",
                             filters, " filters)");
  if (auto bias = adaptor.getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != filters)
      return emitOptionalError(location, "bias must be [", filters, "]");
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), filters};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t size = input.getDimSize(2 + i), kernel = weight.getDimSize(2 + i);
    if (strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 ||
        pads[spatial + i] < 0 || kernel < 1)
      return emitOptionalError(location, "spatial dimension ", i,
                               ": strides, dilations and kernel sizes must "
                               "be positive, pads not negative");
    int64_t padded = 0, span = 0;
    if (llvm::AddOverflow(size, pads[i], padded) ||
        llvm::AddOverflow(padded, pads[spatial + i], padded) ||
        llvm::MulOverflow(dilations[i], kernel - 1, span) || padded <= span)
      return emitOptionalError(location, "spatial dimension ", i, " of ",
                               size, " (padded ", padded,
                               ") is smaller than the kernel's span ",
                               span + 1);
    shape.push_back((padded - span - 1) / strides[i] + 1);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ScatterNDOp::verify() {
  RankedTensorType data = getData().getType(), indices = getIndices().getType(),
                   updates = getUpdates().getType();
  if (indices.getRank() < 1)
    return emitOpError("indices need rank 1 or more");
  int64_t k = indices.getShape().back();
  if (ShapedType::isDynamic(k) || k < 1 || k > data.getRank())
    return emitOpError("index tuples of ")
           << k << " values do not fit data of rank " << data.getRank();
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(k));
  if (updates.getShape() != ArrayRef<int64_t>(expected) ||
      updates.getElementType() != data.getElementType())
    return emitOpError("updates must be ")
           << RankedTensorType::get(expected, data.getElementType())
           << ", not " << updates;
  if (std::optional<ReduceKind> kind = getReduction())
    if (*kind == ReduceKind::Mean)
      return emitOpError("has no mean reduction");
  return success();
}

void CheckIndicesOp::build(OpBuilder &builder, OperationState &state,
                           Value indices, ArrayRef<int64_t> bounds) {
  build(builder, state, indices.getType(),
        RankedTensorType::get({3}, builder.getI64Type()), indices,
        builder.getDenseI64ArrayAttr(bounds));
}

LogicalResult CheckIndicesOp::verify() {
  ArrayRef<int64_t> bounds = getBounds();
  RankedTensorType indices = getIndices().getType();
  if (getStatus().getType().getShape() != ArrayRef<int64_t>{3})
    return emitOpError("status must be tensor<3xi64>, not ")
           << getStatus().getType();
  if (bounds.empty())
    return emitOpError("needs at least one bound");
  if (bounds.size() > 1 &&
      (indices.getRank() < 1 ||
       indices.getShape().back() != static_cast<int64_t>(bounds.size())))
    return emitOpError("has ")
           << bounds.size()
           << " bounds, which must be one or one per entry of the last "
              "dimension of "
           << indices;
  for (int64_t bound : bounds)
    if (bound < 1)
      return emitOpError("bound ") << bound << " admits no index";
  return success();
}

LogicalResult ModOp::verify() {
  if (!getFmod() && isa<FloatType>(getLhs().getType().getElementType()))
    return emitOpError("of floats needs fmod (ONNX defines the floored "
                       "remainder for integers only)");
  return success();
}

LogicalResult CumSumOp::verify() {
  int64_t axis = getAxis();
  if (!normalizeAxis(axis, getInput().getType().getRank()))
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << getInput().getType().getRank();
  return success();
}

LogicalResult TopKOp::verify() {
  RankedTensorType input = getInput().getType();
  std::optional<int64_t> axis = normalizeAxis(getAxis(), input.getRank());
  if (!axis)
    return emitOpError("axis ")
           << getAxis() << " is out of range for rank " << input.getRank();
  int64_t length = input.getDimSize(*axis);
  if (!ShapedType::isDynamic(length) && getK() > static_cast<uint64_t>(length))
    return emitOpError("k = ")
           << getK() << " exceeds the axis length " << length;
  SmallVector<int64_t> shape(input.getShape());
  shape[*axis] = getK();
  for (auto [name, type] :
       {std::pair<StringRef, RankedTensorType>{"values", getValues().getType()},
        {"indices", getIndices().getType()}})
    if (failed(verifyCompatibleShape(type.getShape(), shape)))
      return emitOpError() << name << " must have the input's shape with k "
                           << "along the axis";
  if (getValues().getType().getElementType() != input.getElementType())
    return emitOpError("values must have the input's element type");
  return success();
}

LogicalResult SoftmaxOp::verify() {
  int64_t axis = getAxis();
  if (!normalizeAxis(axis, getInput().getType().getRank()))
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << getInput().getType().getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult
TransposeOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != inputType.getRank())
    return emitOptionalError(location, "permutation has ", perm.size(),
                             " entries for an input of rank ",
                             inputType.getRank());
  llvm::SmallBitVector seen(perm.size());
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= inputType.getRank() || seen.test(p))
      return emitOptionalError(location,
                               "permutation is not a permutation of "
                               "[0, ",
                               inputType.getRank(), ")");
    seen.set(p);
    shape.push_back(inputType.getDimSize(p));
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getResult().getType();
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("element type changes from ")
           << inputType.getElementType() << " to "
           << resultType.getElementType();
  if (!inputType.hasStaticShape() || !resultType.hasStaticShape())
    return emitOpError("requires static shapes");
  // Counted without wrapping: 2^32 x 2^32 is not 0 elements.
  std::optional<int64_t> from = mte::checkedElementCount(inputType.getShape());
  std::optional<int64_t> to = mte::checkedElementCount(resultType.getShape());
  if (!from || !to)
    return emitOpError("has a shape of more than 2^63 elements");
  if (*from != *to)
    return emitOpError("cannot reshape ")
           << *from << " elements into " << *to;
  return success();
}

LogicalResult ExpandOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getResult().getType();
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("element type changes from ")
           << inputType.getElementType() << " to "
           << resultType.getElementType();
  int64_t offset = resultType.getRank() - inputType.getRank();
  if (offset < 0)
    return emitOpError("cannot expand rank ")
           << inputType.getRank() << " to rank " << resultType.getRank();
  for (auto [i, dim] : llvm::enumerate(inputType.getShape())) {
    int64_t target = resultType.getDimSize(offset + i);
    if (dim != 1 && !dimsCompatible(dim, target))
      return emitOpError("input dimension ")
             << i << " of size " << dim << " cannot broadcast to " << target;
  }
  return success();
}

LogicalResult
SliceOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  int64_t rank = inputType.getRank();
  if (static_cast<int64_t>(offsets.size()) != rank ||
      static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return emitOptionalError(location,
                             "offsets, sizes and strides need one entry per "
                             "dimension of the rank-",
                             rank, " input");
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] == 0)
      return emitOptionalError(location, "stride of dimension ", d, " is zero");
    if (sizes[d] < 0)
      return emitOptionalError(location, "size of dimension ", d,
                               " is negative");
    int64_t dim = inputType.getDimSize(d);
    if (sizes[d] == 0 || !isStaticDim(dim))
      continue;
    int64_t span = 0, last = 0;
    bool overflow = llvm::MulOverflow(sizes[d] - 1, strides[d], span) ||
                    llvm::AddOverflow(offsets[d], span, last);
    if (overflow || offsets[d] < 0 || offsets[d] >= dim || last < 0 ||
        last >= dim)
      return emitOptionalError(location, "dimension ", d, " slice [",
                               offsets[d], " : ", sizes[d], " x ", strides[d],
                               "] is out of bounds for size ", dim);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(sizes, inputType.getElementType()));
  return success();
}

LogicalResult
ConcatOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(location, "requires at least one input");
  auto firstType = cast<RankedTensorType>(adaptor.getInputs()[0].getType());
  std::optional<int64_t> axis = normalizeAxis(
      static_cast<int64_t>(adaptor.getAxis()), firstType.getRank());
  if (!axis)
    return emitOptionalError(location, "axis ",
                             static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for rank ", firstType.getRank());
  SmallVector<int64_t> shape(firstType.getShape());
  for (Value input : adaptor.getInputs().drop_front()) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != firstType.getElementType() ||
        type.getRank() != firstType.getRank())
      return emitOptionalError(location, "input ", type,
                               " does not match the first input ", firstType);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d == *axis) {
        shape[d] = isStaticDim(shape[d]) && isStaticDim(type.getDimSize(d))
                       ? shape[d] + type.getDimSize(d)
                       : ShapedType::kDynamic;
      } else if (!dimsCompatible(shape[d], type.getDimSize(d))) {
        return emitOptionalError(location, "input ", type,
                                 " differs from the first input ", firstType,
                                 " outside the concatenation axis");
      }
    }
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, firstType.getElementType()));
  return success();
}

LogicalResult
SplitOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  std::optional<int64_t> axis = normalizeAxis(
      static_cast<int64_t>(adaptor.getAxis()), inputType.getRank());
  if (!axis)
    return emitOptionalError(location, "axis ",
                             static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for rank ", inputType.getRank());
  int64_t total = 0;
  for (int64_t size : adaptor.getSizes()) {
    if (size < 0)
      return emitOptionalError(location, "split size ", size, " is negative");
    total += size;
  }
  int64_t dim = inputType.getDimSize(*axis);
  if (isStaticDim(dim) && total != dim)
    return emitOptionalError(location, "split sizes add up to ", total,
                             " but dimension ", *axis, " has size ", dim);
  for (int64_t size : adaptor.getSizes()) {
    SmallVector<int64_t> shape(inputType.getShape());
    shape[*axis] = size;
    inferredReturnTypes.push_back(
        RankedTensorType::get(shape, inputType.getElementType()));
  }
  return success();
}

LogicalResult
GatherOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  std::optional<int64_t> axis = normalizeAxis(
      static_cast<int64_t>(adaptor.getAxis()), dataType.getRank());
  if (!axis)
    return emitOptionalError(location, "axis ",
                             static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for rank ", dataType.getRank());
  SmallVector<int64_t> shape(dataType.getShape().take_front(*axis));
  llvm::append_range(shape, indicesType.getShape());
  llvm::append_range(shape, dataType.getShape().drop_front(*axis + 1));
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, dataType.getElementType()));
  return success();
}

LogicalResult GatherNDOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t r = dataType.getRank(), q = indicesType.getRank();
  int64_t b = static_cast<int64_t>(adaptor.getBatchDims());
  if (q < 1 || r < 1)
    return emitOptionalError(location, "data and indices need rank 1 or more");
  if (b < 0 || b >= std::min(r, q))
    return emitOptionalError(location, "batch_dims ", b,
                             " must be below both ranks (", r, ", ", q, ")");
  int64_t k = indicesType.getShape().back();
  if (ShapedType::isDynamic(k) || k < 1 || k > r - b)
    return emitOptionalError(location, "index tuples of ", k,
                             " values do not fit data of rank ", r,
                             " after ", b, " batch dimensions");
  for (int64_t d = 0; d < b; ++d)
    if (dataType.getDimSize(d) != indicesType.getDimSize(d))
      return emitOptionalError(location, "batch dimension ", d, " differs: ",
                               dataType.getDimSize(d), " in data, ",
                               indicesType.getDimSize(d), " in indices");
  SmallVector<int64_t> shape(indicesType.getShape().drop_back());
  llvm::append_range(shape, dataType.getShape().drop_front(b + k));
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, dataType.getElementType()));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (dataType.getRank() != indicesType.getRank())
    return emitOptionalError(location, "indices rank ", indicesType.getRank(),
                             " differs from data rank ", dataType.getRank());
  if (!normalizeAxis(static_cast<int64_t>(adaptor.getAxis()),
                     dataType.getRank()))
    return emitOptionalError(location, "axis ",
                             static_cast<int64_t>(adaptor.getAxis()),
                             " is out of range for rank ", dataType.getRank());
  inferredReturnTypes.push_back(
      RankedTensorType::get(indicesType.getShape(), dataType.getElementType()));
  return success();
}

LogicalResult TriluOp::verify() {
  if (getInput().getType().getRank() < 2)
    return emitOpError("requires an input of rank >= 2");
  return success();
}

//===----------------------------------------------------------------------===//
// Shape-computing primitives
//===----------------------------------------------------------------------===//

std::pair<int64_t, int64_t> ShapeOp::getDimRange(int64_t rank, int64_t start,
                                                 std::optional<int64_t> end) {
  // ONNX Shape adds rank to negative bounds, then clamps them into [0, rank].
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t first = clampIndex(start);
  return {first, std::max(first, end ? clampIndex(*end) : rank)};
}

LogicalResult
ShapeOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  int64_t rank = cast<RankedTensorType>(adaptor.getInput().getType()).getRank();
  std::optional<int64_t> end;
  if (adaptor.getEnd())
    end = static_cast<int64_t>(*adaptor.getEnd());
  auto [first, last] =
      getDimRange(rank, static_cast<int64_t>(adaptor.getStart()), end);
  inferredReturnTypes.push_back(
      RankedTensorType::get({last - first}, IntegerType::get(context, 64)));
  return success();
}

/// Reads a constant scalar tensor as a double.
static std::optional<double> getConstantScalar(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(attr.getElementType()))
    return (*attr.value_begin<APFloat>()).convertToDouble();
  return static_cast<double>((*attr.value_begin<APInt>()).getSExtValue());
}

LogicalResult RangeOp::verify() {
  Type elementType = getResult().getType().getElementType();
  for (Value operand : {getStart(), getLimit(), getDelta()})
    if (rankedType(operand).getElementType() != elementType)
      return emitOpError("operand type ")
             << operand.getType() << " does not match the result element type "
             << elementType;
  std::optional<double> start = getConstantScalar(getStart());
  std::optional<double> limit = getConstantScalar(getLimit());
  std::optional<double> delta = getConstantScalar(getDelta());
  if (delta && *delta == 0)
    return emitOpError("delta is zero");
  int64_t size = getResult().getType().getDimSize(0);
  if (start && limit && delta && isStaticDim(size)) {
    // Compared as doubles first: a count beyond int64_t cannot convert.
    std::optional<int64_t> expected = mte::rangeLength(
        *start, *limit, *delta, static_cast<double>(size));
    if (!expected || *expected != size)
      return emitOpError("range from ")
             << *start << " to " << *limit << " by " << *delta
             << " does not have the " << size
             << " elements the result type holds";
  }
  return success();
}

LogicalResult ConstantOfShapeOp::verify() {
  RankedTensorType resultType = getResult().getType();
  if (getValue().getType() != resultType.getElementType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from the result element type "
           << resultType.getElementType();
  int64_t shapeLength = getShape().getType().getDimSize(0);
  if (isStaticDim(shapeLength) && shapeLength != resultType.getRank())
    return emitOpError("shape operand has ")
           << shapeLength << " entries for a result of rank "
           << resultType.getRank();
  DenseIntElementsAttr shape;
  if (matchPattern(getShape(), m_Constant(&shape))) {
    SmallVector<int64_t> dims;
    for (const APInt &d : shape.getValues<APInt>())
      dims.push_back(d.getSExtValue());
    if (!shapesCompatible(dims, resultType.getShape()))
      return emitOpError("shape operand does not match the result type ")
             << resultType;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Fused operations
//===----------------------------------------------------------------------===//

/// Checks what layer_norm and rms_norm share: the normalised axis, the
/// parameter shapes, the residual operand/result pairing and epsilon.
static LogicalResult verifyNorm(Operation *op, Value input,
                                ArrayRef<Value> params, Value residual,
                                Value output, Value residualSum, int64_t axis,
                                APFloat epsilon) {
  RankedTensorType inputType = rankedType(input);
  std::optional<int64_t> dim = normalizeAxis(axis, inputType.getRank());
  if (!dim)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << inputType.getRank();
  ArrayRef<int64_t> normalized = inputType.getShape().drop_front(*dim);
  for (Value param : params) {
    if (!param)
      continue;
    RankedTensorType type = rankedType(param);
    if (!shapesCompatible(type.getShape(), normalized))
      return op->emitOpError("parameter type ")
             << type << " does not match the normalized shape of " << inputType;
    if (type.getElementType() != inputType.getElementType())
      return op->emitOpError("parameter element type ")
             << type.getElementType() << " differs from the input's "
             << inputType.getElementType();
  }
  if (!shapesCompatible(rankedType(output).getShape(), inputType.getShape()))
    return op->emitOpError("output shape differs from the input type ")
           << inputType;
  if (static_cast<bool>(residual) != static_cast<bool>(residualSum))
    return op->emitOpError(
        "has a residual operand iff it has a residual_sum result");
  if (residual && residual.getType() != inputType)
    return op->emitOpError("residual type ")
           << residual.getType() << " differs from the input type "
           << inputType;
  if (residualSum && residualSum.getType() != inputType)
    return op->emitOpError("residual_sum type ")
           << residualSum.getType() << " differs from the input type "
           << inputType;
  if (!epsilon.isFiniteNonZero() || epsilon.isNegative())
    return op->emitOpError("epsilon must be positive and finite");
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput(), {getScale(), getBias()}, getResidual(),
                    getOutput(), getResidualSum(), getAxis(), getEpsilon());
}

LogicalResult RMSNormOp::verify() {
  return verifyNorm(*this, getInput(), {getScale()}, getResidual(), getOutput(),
                    getResidualSum(), getAxis(), getEpsilon());
}

LogicalResult LinearOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType weightType = getWeight().getType();
  RankedTensorType outputType = getOutput().getType();
  Type inElt = inputType.getElementType(), wElt = weightType.getElementType();
  bool fp8 = isFp8Type(inElt);
  if (fp8 != isFp8Type(wElt) ||
      (!fp8 && inElt != wElt))
    return emitOpError("input element type ")
           << inElt << " and weight element type " << wElt
           << " are not a supported GEMM pair";
  if (inputType.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  if (weightType.getRank() != 2)
    return emitOpError("weight must have rank 2, got ") << weightType;
  bool kn = getWeightLayout() == WeightLayout::KN;
  int64_t k = weightType.getDimSize(kn ? 0 : 1);
  int64_t n = weightType.getDimSize(kn ? 1 : 0);
  if (!dimsCompatible(inputType.getShape().back(), k))
    return emitOpError("input feature size ")
           << inputType.getShape().back()
           << " differs from the weight's K = " << k << " (layout "
           << stringifyWeightLayout(getWeightLayout()) << ")";
  SmallVector<int64_t> expected(inputType.getShape().drop_back());
  expected.push_back(n);
  if (!shapesCompatible(outputType.getShape(), expected))
    return emitOpError("output type ")
           << outputType << " does not have shape [..., N = " << n << "]";
  Type outElt = outputType.getElementType();
  if (getOutputScale()) {
    if (!isa<Float8E4M3FNType>(outElt))
      return emitOpError("has an output_scale but its output is ")
             << outElt << ", not f8E4M3FN";
    if (!fp8 || !hasTensorScales())
      return emitOpError("writes fp8 but its operands are not fp8 with "
                         "per-tensor scales");
  } else {
    if (isFp8Type(outElt))
      return emitOpError("writes fp8 without an output_scale");
    if (getOutputAmax())
      return emitOpError("has an output_amax but no output_scale");
  }
  if (Value bias = getBias()) {
    RankedTensorType biasType = rankedType(bias);
    if (biasType.getRank() != 1 || !dimsCompatible(biasType.getDimSize(0), n))
      return emitOpError("bias type ")
             << biasType << " is not [N = " << n << "]";
    // An fp8 output's bias and residual stay 16-bit: cuBLASLt's bias and C
    // types with an E4M3 D.
    if (getOutputScale()) {
      if (!isa<BFloat16Type, Float16Type>(biasType.getElementType()))
        return emitOpError("bias of an fp8 output must be bf16 or f16");
    } else if (biasType.getElementType() != outElt) {
      return emitOpError("bias element type differs from the output's");
    }
  }
  if (Value residual = getResidual(); residual && getOutputScale()) {
    auto residualType = cast<RankedTensorType>(residual.getType());
    if (residualType.getShape() != outputType.getShape() ||
        !isa<BFloat16Type, Float16Type>(residualType.getElementType()))
      return emitOpError("residual of an fp8 output must be bf16 or f16 of "
                         "the output's shape");
  } else if (residual) {
    if (residual.getType() != outputType)
      return emitOpError("residual type ")
             << residual.getType() << " differs from the output type "
             << outputType;
  }
  if (getOutputScale() && getBias() && getResidual() &&
      getElementTypeOrSelf(getBias().getType()) !=
          getElementTypeOrSelf(getResidual().getType()))
    return emitOpError("bias and residual of an fp8 output differ in type");
  if (getInputScale() && !fp8)
    return emitOpError("has an input_scale but its input is not fp8");
  if (getWeightScale() && !fp8)
    return emitOpError("has a weight_scale but its weight is not fp8");
  auto rank = [](Value scale) {
    return scale ? cast<RankedTensorType>(scale.getType()).getRank() : 0;
  };
  if (rank(getInputScale()) == 0 && rank(getWeightScale()) == 0)
    return success();
  // Per-row or per-block scaling: both scales, W laid out nk.
  if (!getInputScale() || !getWeightScale() || rank(getInputScale()) == 0 ||
      rank(getWeightScale()) == 0 || rank(getWeightScale()) > 2)
    return emitOpError("row or block scaling needs both input_scale (one "
                       "per row or per 1x")
           << kFp8BlockSize << " block) and weight_scale (one per channel "
           << "or per " << kFp8BlockSize << "x" << kFp8BlockSize << " block)";
  if (kn)
    return emitOpError("row or block scaling needs the weight laid out nk");
  auto inputScaleType = cast<RankedTensorType>(getInputScale().getType());
  auto weightScaleType = cast<RankedTensorType>(getWeightScale().getType());
  if (isRowScaled()) {
    SmallVector<int64_t> rows(inputType.getShape().drop_back());
    rows.push_back(1);
    if (!shapesCompatible(inputScaleType.getShape(), rows))
      return emitOpError("input_scale type ")
             << inputScaleType << " is not one scale per row of the input";
    if (!shapesCompatible(weightScaleType.getShape(), {n}))
      return emitOpError("weight_scale type ")
             << weightScaleType
             << " is not one scale per output channel (N = " << n << ")";
    return success();
  }
  std::optional<SmallVector<int64_t>> inputBlocks =
      fp8BlockScaleShape(inputType.getShape());
  if (!inputBlocks)
    return emitOpError("block scaling needs K = ")
           << k << " to be a multiple of " << kFp8BlockSize;
  if (!shapesCompatible(inputScaleType.getShape(), *inputBlocks))
    return emitOpError("input_scale type ")
           << inputScaleType << " is not one scale per 1x" << kFp8BlockSize
           << " block of the input";
  SmallVector<int64_t> weightBlocks = {
      ShapedType::isDynamic(n) ? n
                               : int64_t(llvm::divideCeil(n, kFp8BlockSize)),
      (*inputBlocks).back()};
  if (!shapesCompatible(weightScaleType.getShape(), weightBlocks))
    return emitOpError("weight_scale type ")
           << weightScaleType << " is not one scale per " << kFp8BlockSize
           << "x" << kFp8BlockSize << " block of the weight";
  return success();
}

std::optional<SmallVector<int64_t>>
mte::transformer::fp8BlockScaleShape(ArrayRef<int64_t> shape) {
  if (shape.empty() || ShapedType::isDynamic(shape.back()) ||
      shape.back() % kFp8BlockSize != 0)
    return std::nullopt;
  SmallVector<int64_t> blocks(shape);
  blocks.back() /= kFp8BlockSize;
  return blocks;
}

LogicalResult QuantizeOp::verify() {
  if (!isBlockScaled())
    return success();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> scale = getScale().getType().getShape();
  // One factor per 1 x (K / G) block of the rows: [..., G], K % G == 0.
  if (scale.size() != input.size() ||
      !shapesCompatible(scale.drop_back(), input.drop_back()) ||
      ShapedType::isDynamic(input.back()) ||
      ShapedType::isDynamic(scale.back()) || scale.back() < 1 ||
      input.back() % scale.back() != 0)
    return emitOpError("scale type ")
           << getScale().getType() << " is neither one scale (rank 0) nor "
           << "one per block of the rows of the input " << getInput().getType()
           << " ([..., G] with G dividing the last dimension)";
  return success();
}

LogicalResult BlockAmaxOp::verify() {
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  int64_t block = getBlockSize();
  if (shape.empty() || ShapedType::isDynamic(shape.back()) ||
      shape.back() % block != 0)
    return emitOpError("needs a last dimension that is a multiple of the "
                       "block size ")
           << block << ", not " << getInput().getType();
  SmallVector<int64_t> expected(shape);
  expected.back() /= block;
  if (!shapesCompatible(getType().getShape(), expected))
    return emitOpError("result type ")
           << getType() << " is not one value per block of the input";
  return success();
}

LogicalResult AttentionOp::verify() {
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType(), out = getOutput().getType();
  for (RankedTensorType t : {q, k, v})
    if (t.getRank() != 3)
      return emitOpError("query, key and value must be [batch, sequence, "
                         "heads * head_dim], got ")
             << t;
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType() ||
      out.getElementType() != q.getElementType())
    return emitOpError("query, key, value and output element types differ");
  if (!dimsCompatible(q.getDimSize(0), k.getDimSize(0)) ||
      !dimsCompatible(q.getDimSize(0), v.getDimSize(0)))
    return emitOpError("batch sizes of query, key and value differ");
  if (!dimsCompatible(k.getDimSize(1), v.getDimSize(1)))
    return emitOpError("key and value sequence lengths differ");

  int64_t heads = getNumHeads(), kvHeads = getNumKvHeads();
  if (heads % kvHeads != 0)
    return emitOpError("num_heads ")
           << heads << " is not a multiple of num_kv_heads " << kvHeads;
  int64_t qHidden = q.getDimSize(2);
  if (isStaticDim(qHidden) && qHidden % heads != 0)
    return emitOpError("query hidden size ")
           << qHidden << " is not divisible by num_heads " << heads;
  int64_t headDim =
      isStaticDim(qHidden) ? qHidden / heads : ShapedType::kDynamic;
  if (isStaticDim(headDim) &&
      !dimsCompatible(k.getDimSize(2), kvHeads * headDim))
    return emitOpError("key hidden size ")
           << k.getDimSize(2)
           << " is not num_kv_heads * head_dim = " << kvHeads * headDim;
  int64_t vHidden = v.getDimSize(2);
  if (isStaticDim(vHidden) && vHidden % kvHeads != 0)
    return emitOpError("value hidden size ")
           << vHidden << " is not divisible by num_kv_heads " << kvHeads;
  SmallVector<int64_t> expected = {
      q.getDimSize(0), q.getDimSize(1),
      isStaticDim(vHidden) ? vHidden / kvHeads * heads : ShapedType::kDynamic};
  if (!shapesCompatible(out.getShape(), expected))
    return emitOpError("output type ")
           << out << " is not [batch, query sequence, num_heads * value_dim]";

  if (Value mask = getMask()) {
    RankedTensorType maskType = rankedType(mask);
    Type maskElt = maskType.getElementType();
    if (!maskElt.isInteger(1) && maskElt != q.getElementType())
      return emitOpError("mask element type ")
             << maskElt << " is neither i1 nor the query's "
             << q.getElementType();
    SmallVector<int64_t> scores = {q.getDimSize(0), heads, q.getDimSize(1),
                                   k.getDimSize(1)};
    SmallVector<int64_t> broadcast;
    if (maskType.getRank() > 4 ||
        !OpTrait::util::getBroadcastedShape(maskType.getShape(), scores,
                                            broadcast) ||
        !shapesCompatible(broadcast, scores))
      return emitOpError("mask type ")
             << maskType << " does not broadcast to the scores [" << scores[0]
             << ", " << scores[1] << ", " << scores[2] << ", " << scores[3]
             << "]";
  }
  APFloat scale = getScale();
  if (!scale.isFiniteNonZero() || scale.isNegative())
    return emitOpError("scale must be positive and finite");
  if (std::optional<APFloat> softcap = getSoftcap();
      softcap && (!softcap->isFiniteNonZero() || softcap->isNegative()))
    return emitOpError("softcap must be positive and finite");
  return success();
}

LogicalResult RotaryEmbeddingOp::verify() {
  RankedTensorType input = getInput().getType();
  if (getOutput().getType() != input)
    return emitOpError("output type differs from the input type ") << input;
  int64_t seq, headDim, batch = input.getRank() > 0 ? input.getDimSize(0) : 0;
  if (input.getRank() == 4) {
    if (getNumHeads())
      return emitOpError("num_heads is only meaningful for a rank-3 input");
    seq = input.getDimSize(2);
    headDim = input.getDimSize(3);
  } else if (input.getRank() == 3) {
    if (!getNumHeads())
      return emitOpError("a rank-3 input [batch, sequence, heads * head_dim] "
                         "needs num_heads");
    int64_t hidden = input.getDimSize(2);
    if (isStaticDim(hidden) && hidden % *getNumHeads() != 0)
      return emitOpError("hidden size ")
             << hidden << " is not divisible by num_heads " << *getNumHeads();
    seq = input.getDimSize(1);
    headDim =
        isStaticDim(hidden) ? hidden / *getNumHeads() : ShapedType::kDynamic;
  } else {
    return emitOpError("input must be [batch, heads, sequence, head_dim] or "
                       "[batch, sequence, heads * head_dim], got ")
           << input;
  }
  int64_t rotaryDim = getRotaryDim().value_or(headDim);
  if (isStaticDim(rotaryDim) &&
      (rotaryDim % 2 != 0 || (isStaticDim(headDim) && rotaryDim > headDim)))
    return emitOpError("rotary_dim ")
           << rotaryDim << " must be even and at most the head dimension "
           << headDim;
  RankedTensorType cos = getCos().getType();
  if (getSin().getType() != cos)
    return emitOpError("cos and sin types differ");
  if (cos.getElementType() != input.getElementType())
    return emitOpError("cos/sin element type differs from the input's");
  SmallVector<int64_t> expected = {seq, ShapedType::kDynamic};
  if (cos.getRank() == 3)
    expected.insert(expected.begin(), batch);
  int64_t width = cos.getRank() > 0 ? cos.getShape().back() : 0;
  if (!shapesCompatible(cos.getShape(), expected) ||
      (isStaticDim(rotaryDim) && isStaticDim(width) &&
       width != rotaryDim / 2 && width != rotaryDim))
    return emitOpError("cos/sin type ")
           << cos
           << " is not [sequence, width] or [batch, sequence, width] with "
              "width rotary_dim / 2 or rotary_dim";
  return success();
}

#define GET_OP_CLASSES
#include "mte/Dialect/Transformer/IR/TransformerOps.cpp.inc"

LogicalResult Fp8ScaleOp::verify() {
  float fp8Max = getFp8Max().convertToFloat();
  if (!(fp8Max > 0) || !std::isfinite(fp8Max))
    return emitOpError("fp8_max must be positive and finite, not ")
           << fp8Max;
  if (!getAmax() == !getDelayed())
    return emitOpError("takes either an amax (current scaling) or a delayed "
                       "scale, not ")
           << (getAmax() ? "both" : "neither");
  Type source = getAmax() ? getAmax().getType() : getDelayed().getType();
  if (getScale().getType() != source || getScaleInv().getType() != source)
    return emitOpError("scale and scale_inv must have the type of its ")
           << (getAmax() ? "amax " : "delayed scale ") << source;
  if (getDelayed() && getPowerOfTwo())
    return emitOpError("power_of_two rounds block scaling's scales, not a "
                       "delayed scale");
  return success();
}

LogicalResult Fp8ScaleUpdateOp::verify() {
  ArrayRef<int64_t> history = getHistory().getType().getShape();
  int64_t tensors = history[1];
  if (history[0] < 1)
    return emitOpError("the amax history needs at least one row");
  for (auto [name, type] : {std::pair<StringRef, RankedTensorType>{
                                "amax", getAmax().getType()},
                            {"scale", getScale().getType()},
                            {"next_scale", getNextScale().getType()}})
    if (type.getDimSize(0) != tensors)
      return emitOpError() << name << " must hold one value per tensor ("
                           << tensors << "), not " << type.getDimSize(0);
  if (getNextHistory().getType() != getHistory().getType())
    return emitOpError("next_history must have the history's type");
  float fp8Max = getFp8Max().convertToFloat();
  if (!(fp8Max > 0) || !std::isfinite(fp8Max))
    return emitOpError("fp8_max must be positive and finite, not ")
           << fp8Max;
  int64_t margin = getMarginAttr().getInt();
  if (margin < 0 || margin > 64)
    return emitOpError("margin must be in [0, 64], not ") << margin;
  return success();
}
