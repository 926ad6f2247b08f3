//===- HostBuffersToGPU.cpp - host buffers allocated on the GPU -----------===//

#include "mte/Conversion/HostBuffersToGPU/HostBuffersToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

namespace mte {
#define GEN_PASS_DEF_HOSTBUFFERSTOGPU
#include "mte/Conversion/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
/// Wraps `loop` in scf.parallel (%i) = (0) to (1) step (1).
void wrapInSingleIteration(scf::ForOp loop) {
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  auto parallel = scf::ParallelOp::create(builder, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
  Block *body = parallel.getBody();
  loop->moveBefore(body->getTerminator());
}

struct HostBuffersToGPUPass
    : mte::impl::HostBuffersToGPUBase<HostBuffersToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Sequential top-level nests: results of loops are not used at this
      // level (everything is in memory), so moving them is safe.
      SmallVector<scf::ForOp> serial;
      for (Operation &op : func.getBody().getOps())
        if (auto loop = dyn_cast<scf::ForOp>(op))
          if (loop->getNumResults() == 0)
            serial.push_back(loop);
      for (scf::ForOp loop : serial)
        wrapInSingleIteration(loop);

      IRRewriter rewriter(&getContext());
      SmallVector<Operation *> allocs;
      func.walk([&](Operation *op) {
        if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op))
          allocs.push_back(op);
      });
      for (Operation *op : allocs) {
        rewriter.setInsertionPoint(op);
        if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
          gpu::DeallocOp::create(rewriter, op->getLoc(), TypeRange(),
                                 ValueRange(), dealloc.getMemref());
          rewriter.eraseOp(op);
          continue;
        }
        auto type = cast<MemRefType>(op->getResult(0).getType());
        if (!type.getLayout().isIdentity()) {
          op->emitOpError("is not a dense buffer; the CUDA backend allocates "
                          "identity-layout buffers only");
          return signalPassFailure();
        }
        auto alloc = gpu::AllocOp::create(
            rewriter, op->getLoc(), type, /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange(), op->getOperands(),
            /*symbolOperands=*/ValueRange(), /*hostShared=*/false);
        if (isa<memref::AllocaOp>(op)) {
          // An alloca dies at the end of its block; the device buffer too.
          rewriter.setInsertionPoint(op->getBlock()->getTerminator());
          gpu::DeallocOp::create(rewriter, op->getLoc(), TypeRange(),
                                 ValueRange(), alloc.getMemref());
        }
        rewriter.replaceOp(op, alloc.getMemref());
      }
    }
  }
};
} // namespace
