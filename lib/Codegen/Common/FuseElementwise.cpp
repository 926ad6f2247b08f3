//===- FuseElementwise.cpp - elementwise fusion, not into contractions ----===//

#include "mte/Codegen/Common/Passes.h"

#include "mte/Codegen/Common/GemmEpilogue.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
/// Fuses into `fusedOperand`'s owner only when it is elementwise, and only a
/// producer with no other user (a shared producer would be recomputed).
/// A tagged GEMM epilogue keeps its operands: the library call that takes
/// it over reads each one (an fp8 GEMM's scales as pointers), and folding a
/// constant scale into its body would hide it.
bool intoElementwiseConsumer(OpOperand *fusedOperand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(fusedOperand->getOwner());
  Operation *producer = fusedOperand->get().getDefiningOp();
  return consumer && producer && producer->hasOneUse() &&
         consumer.getNumLoops() == consumer.getNumParallelLoops() &&
         !consumer->hasAttr(mte::kGemmEpilogueAttrName);
}

struct FuseElementwisePass
    : mte::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 intoElementwiseConsumer);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                      intoElementwiseConsumer);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
