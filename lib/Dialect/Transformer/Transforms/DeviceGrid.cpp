//===- DeviceGrid.cpp - the device grid the parallel passes share ---------===//

#include "mte/Dialect/Transformer/Transforms/DeviceGrid.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"

using namespace mlir;

FailureOr<shard::GridOp>
mte::transformer::prependGridAxis(ModuleOp module, int64_t extent,
                                  StringRef soloName) {
  SmallVector<shard::GridOp> grids(module.getOps<shard::GridOp>());
  OpBuilder builder(module.getBodyRegion());
  if (grids.empty()) {
    if (module.lookupSymbol(soloName))
      return module.emitError("the module already has a symbol '")
             << soloName << "'";
    return shard::GridOp::create(builder, module.getLoc(), soloName,
                                 ArrayRef<int64_t>{extent});
  }
  if (grids.size() > 1)
    return grids[1].emitError("is a second device grid; a parallel model "
                              "runs on one");
  shard::GridOp old = grids.front();
  if (ShapedType::isDynamicShape(old.getShape()))
    return old.emitError("has a dynamic shape");
  if (old.getSymName() != kComposedGridName &&
      module.lookupSymbol(kComposedGridName))
    return module.emitError("the module already has a symbol '")
           << kComposedGridName << "'";

  // Every op on the old grid is checked before any is changed.
  FlatSymbolRefAttr oldRef = FlatSymbolRefAttr::get(old.getSymNameAttr());
  SmallVector<Operation *> users;
  WalkResult walk = module.walk([&](Operation *op) {
    if (op == old || !isa_and_nonnull<shard::ShardDialect>(op->getDialect()))
      return WalkResult::advance();
    if (isa<shard::ShardingOp, shard::ShardOp>(op)) {
      op->emitOpError("is not partitioned yet: the grid takes another axis "
                      "after shard-partition");
      return WalkResult::interrupt();
    }
    auto ref = op->getAttrOfType<FlatSymbolRefAttr>("grid");
    if (!ref)
      return WalkResult::advance();
    if (ref != oldRef) {
      op->emitOpError("names ") << ref << ", not the module's grid " << oldRef;
      return WalkResult::interrupt();
    }
    if (isa<shard::ProcessLinearIndexOp>(op)) {
      // Its value would change meaning: the new axis is the outermost.
      op->emitOpError("reads a linear index of the grid that takes another "
                      "axis");
      return WalkResult::interrupt();
    }
    users.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  FlatSymbolRefAttr newRef = FlatSymbolRefAttr::get(
      StringAttr::get(module.getContext(), kComposedGridName));
  auto shifted = [&](ArrayRef<int16_t> axes) {
    SmallVector<int16_t> result;
    for (int16_t axis : axes)
      result.push_back(axis + 1);
    return builder.getDenseI16ArrayAttr(result);
  };
  int64_t oldRank = old.getRank();
  for (Operation *op : users) {
    op->setAttr("grid", newRef);
    if (auto index = dyn_cast<shard::ProcessMultiIndexOp>(op)) {
      SmallVector<int16_t> axes(index.getAxes());
      if (axes.empty())
        for (int64_t a = 0; a < oldRank; ++a)
          axes.push_back(a);
      op->setAttr("axes", shifted(axes));
    } else if (auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes")) {
      op->setAttr("grid_axes", shifted(axes.asArrayRef()));
    }
  }
  SmallVector<int64_t> shape = {extent};
  llvm::append_range(shape, old.getShape());
  builder.setInsertionPoint(old);
  auto grid =
      shard::GridOp::create(builder, old.getLoc(), kComposedGridName, shape);
  old.erase();
  return grid;
}

SmallVector<int64_t> mte::transformer::indexCheckElements(func::FuncOp func) {
  SmallVector<int64_t> elements;
  auto checks = func->getAttrOfType<ArrayAttr>("transformer.index_checks");
  if (!checks)
    return elements;
  for (Attribute attr : checks) {
    auto check = dyn_cast<IndexCheckAttr>(attr);
    int64_t count = 0;
    for (unsigned i = 0, e = func.getNumArguments(); check && i < e; ++i) {
      auto name = func.getArgAttrOfType<StringAttr>(i, "transformer.name");
      auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      if (name && type && type.hasStaticShape() &&
          name.getValue() == check.getSource().getValue())
        count = type.getNumElements();
    }
    elements.push_back(count);
  }
  return elements;
}

FailureOr<RankedTensorType> mte::transformer::wholeBatchType(Type type,
                                                            int64_t parts) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0 || !tensor.hasStaticShape())
    return failure();
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] *= parts;
  return tensor.clone(shape);
}
