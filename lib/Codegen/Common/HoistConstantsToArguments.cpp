//===- HoistConstantsToArguments.cpp - tensor constants as arguments ------===//

#include "mte/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace mte {
#define GEN_PASS_DEF_HOISTCONSTANTSTOARGUMENTS
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
struct HoistConstantsToArgumentsPass
    : mte::impl::HoistConstantsToArgumentsBase<HoistConstantsToArgumentsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder builder(module.getBodyRegion());
    unsigned next = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      SmallVector<arith::ConstantOp> constants;
      func.walk([&](arith::ConstantOp op) {
        if (isa<RankedTensorType>(op.getType()))
          constants.push_back(op);
      });
      for (arith::ConstantOp constant : constants) {
        auto type = cast<RankedTensorType>(constant.getType());
        auto value = cast<ElementsAttr>(constant.getValue());
        std::string name = "__mte_weight_" + std::to_string(next++);
        builder.setInsertionPoint(func);
        memref::GlobalOp::create(
            builder, constant.getLoc(), name, builder.getStringAttr("public"),
            MemRefType::get(type.getShape(), type.getElementType()), value,
            /*constant=*/true, /*alignment=*/builder.getI64IntegerAttr(64));
        unsigned index = func.getNumArguments();
        if (failed(func.insertArgument(
                index, type,
                builder.getDictionaryAttr(builder.getNamedAttr(
                    "mte.weight",
                    FlatSymbolRefAttr::get(builder.getContext(), name))),
                constant.getLoc())))
          return signalPassFailure();
        constant.replaceAllUsesWith(func.getArgument(index));
        constant.erase();
      }
    }
  }
};
} // namespace
