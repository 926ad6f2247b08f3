//===- SplitPipelineStages.cpp - a program per pipeline stage -------------===//
//
// A pipeline-parallel entry runs the stage of its rank through an
// scf.index_switch (`transformer.pipeline_dispatch`): one artifact serves
// every rank. Which stage a rank runs is known only when the model opens,
// and the CUDA pipeline plans one straight-line program per public
// function -- its weights, one activation arena, one stream of launches --
// so the entry becomes a program per stage, each the entry with the
// dispatch replaced by that stage's ops. `run` picks the rank's program
// (mte::generateABISource), and each program names only its stage's
// weights.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/Common/Passes.h"
#include "mte/Dialect/Transformer/Transforms/DeviceGrid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

namespace mte {
#define GEN_PASS_DEF_SPLITPIPELINESTAGES
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

/// The module attribute listing each entry's programs.
static constexpr llvm::StringLiteral kStageProgramsAttrName =
    "mte.stage_programs";

llvm::SmallVector<std::string> mte::getStagePrograms(ModuleOp module,
                                                     StringRef function) {
  llvm::SmallVector<std::string> programs;
  auto all = module->getAttrOfType<DictionaryAttr>(kStageProgramsAttrName);
  if (auto list = all ? all.getAs<ArrayAttr>(function) : ArrayAttr())
    for (auto symbol : list.getAsRange<FlatSymbolRefAttr>())
      programs.push_back(symbol.getValue().str());
  return programs;
}

namespace {

/// The dispatches of `func`.
SmallVector<scf::IndexSwitchOp> dispatchesOf(func::FuncOp func) {
  SmallVector<scf::IndexSwitchOp> dispatches;
  func.walk([&](scf::IndexSwitchOp op) {
    if (op->hasAttr(mte::transformer::kPipelineDispatchAttrName))
      dispatches.push_back(op);
  });
  return dispatches;
}

/// Replaces `dispatch` by the ops of the region that runs stage `stage`.
void keepStage(scf::IndexSwitchOp dispatch, int64_t stage) {
  Region *region = &dispatch.getDefaultRegion();
  for (auto [i, value] : llvm::enumerate(dispatch.getCases()))
    if (value == stage)
      region = &dispatch.getCaseRegions()[i];
  Block &body = region->front();
  auto yield = cast<scf::YieldOp>(body.getTerminator());
  dispatch->getBlock()->getOperations().splice(
      Block::iterator(dispatch), body.getOperations(), body.begin(),
      Block::iterator(yield));
  dispatch.replaceAllUsesWith(yield.getOperands());
  dispatch.erase();
}

struct SplitPipelineStagesPass
    : mte::impl::SplitPipelineStagesBase<SplitPipelineStagesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    NamedAttrList programsByEntry;
    if (auto existing =
            module->getAttrOfType<DictionaryAttr>(kStageProgramsAttrName))
      programsByEntry.append(existing.getValue());
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    for (func::FuncOp entry : entries) {
      SmallVector<scf::IndexSwitchOp> dispatches = dispatchesOf(entry);
      if (dispatches.empty())
        continue;
      if (dispatches.size() > 1) {
        dispatches[1].emitError("'")
            << entry.getSymName()
            << "' has more than one pipeline dispatch; a program per stage "
               "needs exactly one";
        return signalPassFailure();
      }
      int64_t stages = dispatches.front().getNumCases() + 1;
      SmallVector<Attribute> programs;
      for (int64_t stage = 0; stage < stages; ++stage) {
        func::FuncOp program = entry.clone();
        program.setSymName(
            (entry.getSymName() + "_pp" + Twine(stage)).str());
        // Inserted before the entry, renamed if the name is taken.
        symbols.insert(program, Block::iterator(entry));
        keepStage(dispatchesOf(program).front(), stage);
        programs.push_back(FlatSymbolRefAttr::get(program.getSymNameAttr()));
      }
      programsByEntry.set(entry.getSymNameAttr(),
                          ArrayAttr::get(&getContext(), programs));
      symbols.erase(entry);
    }
    if (!programsByEntry.empty())
      module->setAttr(kStageProgramsAttrName,
                      programsByEntry.getDictionary(&getContext()));
  }
};

} // namespace
