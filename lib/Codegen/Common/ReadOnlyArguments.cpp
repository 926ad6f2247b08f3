//===- ReadOnlyArguments.cpp - a model never writes its arguments ---------===//
//
// One-shot bufferization treats a function argument as writable unless it
// says `bufferization.writable = false`; a model's arguments (inputs,
// states, weights) belong to the caller or the runtime and are read only.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mte {
#define GEN_PASS_DEF_READONLYARGUMENTS
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
struct ReadOnlyArgumentsPass
    : mte::impl::ReadOnlyArgumentsBase<ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isDeclaration())
        continue;
      for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<TensorType>(type))
          func.setArgAttr(index,
                          bufferization::BufferizationDialect::kWritableAttrName,
                          b.getBoolAttr(false));
    }
  }
};
} // namespace
