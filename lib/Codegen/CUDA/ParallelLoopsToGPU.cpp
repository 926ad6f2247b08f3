//===- ParallelLoopsToGPU.cpp - top-level parallel loops as kernels -------===//

#include "mte/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mte {
#define GEN_PASS_DEF_PARALLELLOOPSTOGPU
#include "mte/Codegen/CUDA/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
struct ParallelLoopsToGPUPass
    : mte::impl::ParallelLoopsToGPUBase<ParallelLoopsToGPUPass> {
  using Base::Base;

  LogicalResult convert(scf::ParallelOp loop) {
    SmallVector<int64_t> lower, steps, trips;
    int64_t total = 1;
    for (auto [lb, ub, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> l = getConstantIntValue(lb);
      std::optional<int64_t> u = getConstantIntValue(ub);
      std::optional<int64_t> s = getConstantIntValue(step);
      if (!l || !u || !s || *s <= 0)
        return loop.emitOpError("has non-constant bounds; the CUDA backend "
                                "needs static shapes");
      lower.push_back(*l);
      steps.push_back(*s);
      trips.push_back(std::max<int64_t>(0, (*u - *l + *s - 1) / *s));
      total *= trips.back();
    }
    if (!loop.getInitVals().empty())
      return loop.emitOpError("reduces into a value; the CUDA backend expects "
                              "loops over buffers");
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    auto constant = [&](OpBuilder &builder, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(builder, loc, v);
    };
    int64_t block = blockSize;
    // Created in a fixed order: argument evaluation order is unspecified,
    // and the IR must not depend on the host compiler.
    Value one = constant(b, 1);
    Value numThreads = constant(b, block);
    Value numBlocks =
        constant(b, std::max<int64_t>(1, (total + block - 1) / block));
    auto launch = gpu::LaunchOp::create(b, loc, numBlocks, one, one,
                                        numThreads, one, one);
    OpBuilder inner = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value id = arith::AddIOp::create(
        inner, loc,
        arith::MulIOp::create(inner, loc, launch.getBlockIds().x,
                              constant(inner, block)),
        launch.getThreadIds().x);
    Value inRange = arith::CmpIOp::create(inner, loc, arith::CmpIPredicate::ult,
                                          id, constant(inner, total));
    auto guard = scf::IfOp::create(inner, loc, inRange, /*withElse=*/false);
    gpu::TerminatorOp::create(inner, loc);

    // Row-major delinearisation: the last dimension varies fastest.
    OpBuilder body = guard.getThenBodyBuilder();
    IRMapping mapping;
    Value rest = id;
    for (int64_t d = static_cast<int64_t>(trips.size()) - 1; d >= 0; --d) {
      Value trip = constant(body, trips[d]);
      Value index =
          d == 0 ? rest : arith::RemUIOp::create(body, loc, rest, trip);
      if (d > 0)
        rest = arith::DivUIOp::create(body, loc, rest, trip);
      Value iv = arith::AddIOp::create(
          body, loc, constant(body, lower[d]),
          arith::MulIOp::create(body, loc, index, constant(body, steps[d])));
      mapping.map(loop.getInductionVars()[d], iv);
    }
    for (Operation &op : loop.getBody()->without_terminator())
      body.clone(op, mapping);
    loop.erase();
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<scf::ParallelOp> loops(
          func.getBody().getOps<scf::ParallelOp>());
      for (scf::ParallelOp loop : loops)
        if (failed(convert(loop)))
          return signalPassFailure();
    }
  }
};
} // namespace
