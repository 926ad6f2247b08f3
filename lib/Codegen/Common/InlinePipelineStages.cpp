//===- InlinePipelineStages.cpp - stage bodies in place of their calls ----===//
//
// Pipeline parallelism leaves each stage a private function that the entry
// calls once per micro-batch. The CUDA pipeline plans one program per
// public function -- its weights hoisted to arguments, its intermediates
// in one arena, straight-line host code launching its kernels -- so every
// call of a stage becomes a copy of the stage's body, and the stage
// functions go. Each copy keeps its own values, so the activation plan
// still sees one micro-batch's intermediates die before the next begins.
//
// The stages' ops are tensor ops of several dialects (transformer, shard,
// tensor, arith), not all of which declare an inliner interface; a stage
// is one block by construction, so a clone with a value mapping is the
// whole of inlining here.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/Common/Passes.h"
#include "mte/Dialect/Transformer/Transforms/DeviceGrid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mte {
#define GEN_PASS_DEF_INLINEPIPELINESTAGES
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {

bool isStage(func::FuncOp func) {
  return func && func->hasAttr(mte::transformer::kPipelineStageAttrName);
}

struct InlinePipelineStagesPass
    : mte::impl::InlinePipelineStagesBase<InlinePipelineStagesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> stages;
    for (auto func : module.getOps<func::FuncOp>())
      if (isStage(func))
        stages.push_back(func);
    if (stages.empty())
      return;
    for (func::FuncOp stage : stages)
      if (!stage.getBody().hasOneBlock()) {
        stage.emitError("pipeline stage '")
            << stage.getSymName()
            << "' has more than one block; only a straight-line stage can "
               "be inlined";
        return signalPassFailure();
      }

    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (isStage(symbols.lookup<func::FuncOp>(call.getCallee())))
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      auto stage = symbols.lookup<func::FuncOp>(call.getCallee());
      Block &body = stage.front();
      IRMapping mapping;
      mapping.map(body.getArguments(), call.getOperands());
      OpBuilder b(call);
      for (Operation &op : body.without_terminator())
        b.clone(op, mapping);
      for (auto [result, returned] :
           llvm::zip_equal(call.getResults(),
                           body.getTerminator()->getOperands()))
        result.replaceAllUsesWith(mapping.lookupOrDefault(returned));
      call.erase();
    }
    for (func::FuncOp stage : stages)
      stage.erase();
  }
};

} // namespace
