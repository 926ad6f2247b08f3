//===- TransformerDialect.cpp - transformer dialect -----------------------===//

#include "mte/Dialect/Transformer/IR/TransformerDialect.h"
#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
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
