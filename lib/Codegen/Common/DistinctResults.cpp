//===- DistinctResults.cpp - a buffer of its own for every result ---------===//
//
// ONNX lets two graph outputs name one value (an output listed twice, or
// an Identity between them), so a forward may return one buffer twice.
// buffer-results-to-out-params gives every result an out-parameter and
// cannot make one buffer two of them; a copy for each repeat can.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseSet.h"

namespace mte {
#define GEN_PASS_DEF_DISTINCTRESULTS
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
struct DistinctResultsPass
    : mte::impl::DistinctResultsBase<DistinctResultsPass> {
  void runOnOperation() override {
    WalkResult walk = getOperation().walk([&](func::ReturnOp ret) {
      llvm::SmallDenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        if (seen.insert(value).second)
          continue;
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type || !type.hasStaticShape()) {
          ret.emitError("returns ")
              << value.getType() << " twice; only static buffers can be copied";
          return WalkResult::interrupt();
        }
        Value copy = memref::AllocOp::create(
            b, ret.getLoc(),
            MemRefType::get(type.getShape(), type.getElementType()));
        memref::CopyOp::create(b, ret.getLoc(), value, copy);
        Value result = copy;
        if (copy.getType() != type)
          result = memref::CastOp::create(b, ret.getLoc(), type, copy);
        operand.set(result);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
