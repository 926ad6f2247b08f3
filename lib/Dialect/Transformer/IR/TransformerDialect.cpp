//===- TransformerDialect.cpp - transformer dialect -----------------------===//

#include "mte/Dialect/Transformer/IR/TransformerDialect.h"
#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mte::transformer;

#include "mte/Dialect/Transformer/IR/TransformerDialect.cpp.inc"
#include "mte/Dialect/Transformer/IR/TransformerEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mte/Dialect/Transformer/IR/TransformerAttrs.cpp.inc"

void TransformerDialect::initialize() {
  weightProvenance = std::make_unique<WeightProvenance>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mte/Dialect/Transformer/IR/TransformerAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mte/Dialect/Transformer/IR/TransformerOps.cpp.inc"
      >();
}

/// Folded constants become `arith.constant`, the same op the importer uses
/// for initializers, so constant-aware patterns need to know only one form.
Operation *TransformerDialect::materializeConstant(OpBuilder &builder,
                                                   Attribute value, Type type,
                                                   Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

LogicalResult
IndexCheckAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringAttr op, StringAttr node, StringAttr source,
                       ArrayRef<int64_t> bounds) {
  if (!op || op.getValue().empty())
    return emitError() << "an index check names the op it guards";
  if (bounds.empty())
    return emitError() << "an index check needs at least one bound";
  for (int64_t bound : bounds)
    if (bound < 1)
      return emitError() << "index-check bound " << bound
                         << " admits no index";
  return success();
}

LogicalResult
WeightSliceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t axis, int64_t outer, int64_t parts,
                        ArrayRef<int16_t> gridAxes) {
  if (axis < 0)
    return emitError() << "a weight slice's axis must not be negative";
  if (outer < 1)
    return emitError() << "a weight slice needs outer >= 1, not " << outer;
  if (parts < 2)
    return emitError() << "a weight slice is one of 2 or more parts, not "
                       << parts;
  if (gridAxes.empty())
    return emitError() << "a weight slice names the grid axes it is split "
                          "over";
  for (auto [i, gridAxis] : llvm::enumerate(gridAxes))
    if (gridAxis < 0 || gridAxis >= 31 ||
        llvm::is_contained(gridAxes.take_front(i), gridAxis))
      return emitError() << "weight slice grid axes must be distinct axes "
                            "from 0 to 30";
  return success();
}

LogicalResult
ModelStateAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringAttr name, StateKindAttr kind,
                       ElementsAttr initial, ArrayAttr labels) {
  if (!name || name.getValue().empty())
    return emitError() << "a model state needs a name";
  auto type = dyn_cast<RankedTensorType>(initial.getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0)
    return emitError() << "model state '" << name.getValue()
                       << "' needs a statically shaped initial value of "
                          "rank 1 or more";
  if (!llvm::all_of(labels, [](Attribute a) { return isa<StringAttr>(a); }))
    return emitError() << "model state '" << name.getValue()
                       << "' has a label that is not a string";
  if (!labels.empty() &&
      static_cast<int64_t>(labels.size()) != type.getShape().back())
    return emitError() << "model state '" << name.getValue() << "' has "
                       << labels.size() << " labels for a last dimension of "
                       << type.getShape().back();
  if (!type.getElementType().isF32())
    return emitError() << "FP8 state '" << name.getValue()
                       << "' must be f32, not " << type.getElementType();
  bool history = kind.getValue() == StateKind::Fp8AmaxHistory;
  if (type.getRank() != (history ? 2 : 1))
    return emitError() << "FP8 state '" << name.getValue() << "' ("
                       << stringifyStateKind(kind.getValue())
                       << ") must have rank " << (history ? 2 : 1);
  return success();
}

/// `transformer.state` on an argument of a function-like op.
LogicalResult TransformerDialect::verifyRegionArgAttribute(
    Operation *op, unsigned regionIndex, unsigned argIndex,
    NamedAttribute attribute) {
  if (attribute.getName() != getStateAttrName())
    return success();
  auto state = dyn_cast<ModelStateAttr>(attribute.getValue());
  if (!state)
    return op->emitOpError() << getStateAttrName() << " on argument "
                             << argIndex << " must be a "
                             << "#transformer.model_state";
  // A tensor, or the buffer bufferization made of it; once the function is
  // lowered to another function-like op (llvm.func), a pointer to it.
  Type type = op->getRegion(regionIndex).getArgument(argIndex).getType();
  auto shaped = dyn_cast<ShapedType>(type);
  bool buffer = isa<TensorType, BaseMemRefType>(type);
  if (!buffer && !isa<func::FuncOp>(op))
    return success();
  auto initial = cast<ShapedType>(state.getInitial().getType());
  if (!buffer || !shaped.hasRank() || shaped.getShape() != initial.getShape() ||
      shaped.getElementType() != initial.getElementType())
    return op->emitOpError() << "state '" << state.getName().getValue()
                             << "' is argument " << argIndex << " of type "
                             << type << " but its initial value has type "
                             << state.getInitial().getType();
  return success();
}

/// `transformer.next_state` on a result of a function-like op: it names a
/// state argument of the same type.
LogicalResult TransformerDialect::verifyRegionResultAttribute(
    Operation *op, unsigned regionIndex, unsigned resultIndex,
    NamedAttribute attribute) {
  if (attribute.getName() != getNextStateAttrName())
    return success();
  auto name = dyn_cast<StringAttr>(attribute.getValue());
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!name || !function)
    return op->emitOpError() << getNextStateAttrName()
                             << " must be a string on a function result";
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    auto state = function.getArgAttrOfType<ModelStateAttr>(i, getStateAttrName());
    if (!state || state.getName() != name)
      continue;
    if (function.getResultTypes()[resultIndex] != function.getArgumentTypes()[i])
      return op->emitOpError()
             << "result " << resultIndex << ", the next value of state '"
             << name.getValue() << "', has type "
             << function.getResultTypes()[resultIndex] << ", not the state's "
             << function.getArgumentTypes()[i];
    return success();
  }
  return op->emitOpError() << "result " << resultIndex
                           << " is the next value of state '"
                           << name.getValue() << "', which no argument is";
}
