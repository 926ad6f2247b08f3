//===- HostBuffersToGPU.cpp - host buffers allocated on the GPU -----------===//

#include "mte/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

namespace mte {
#define GEN_PASS_DEF_HOSTBUFFERSTOGPU
#include "mte/Codegen/CUDA/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
/// Wraps `op` in scf.parallel (%i) = (0) to (1) step (1).
void wrapInSingleIteration(Operation *op) {
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  auto parallel = scf::ParallelOp::create(builder, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
  op->moveBefore(parallel.getBody()->getTerminator());
}

struct HostBuffersToGPUPass
    : mte::impl::HostBuffersToGPUBase<HostBuffersToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Linalg ops on buffers without a parallel dimension (full reductions,
      // rank-0 arithmetic) would lower to host loops or to bare loads and
      // stores; they have no results, so they can move into a one-thread
      // launch.
      SmallVector<linalg::LinalgOp> serial;
      for (Operation &op : func.getBody().getOps())
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
          if (linalgOp.hasPureBufferSemantics() &&
              linalgOp.getNumParallelLoops() == 0)
            serial.push_back(linalgOp);
      for (linalg::LinalgOp op : serial)
        wrapInSingleIteration(op);

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
