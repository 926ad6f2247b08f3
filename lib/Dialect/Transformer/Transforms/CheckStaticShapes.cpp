//===- CheckStaticShapes.cpp - reject dynamic tensor shapes ---------------===//

#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mte::transformer {
#define GEN_PASS_DEF_CHECKSTATICSHAPES
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;

namespace {
bool isDynamicTensor(Type type) {
  auto shaped = dyn_cast<TensorType>(type);
  return shaped && !shaped.hasStaticShape();
}

struct CheckStaticShapesPass
    : mte::transformer::impl::CheckStaticShapesBase<CheckStaticShapesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool failed = false;
    for (BlockArgument arg : func.getArguments()) {
      if (!isDynamicTensor(arg.getType()))
        continue;
      emitError(func.getLoc())
          << "argument #" << arg.getArgNumber() << " of @" << func.getSymName()
          << " has type " << arg.getType()
          << ", which is not static; give its size "
             "with --input-shape";
      failed = true;
    }
    func.walk([&](Operation *op) {
      for (OpResult result : op->getResults()) {
        if (!isDynamicTensor(result.getType()))
          continue;
        op->emitError() << "result #" << result.getResultNumber()
                        << " has type " << result.getType()
                        << ", which is not static";
        failed = true;
      }
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
