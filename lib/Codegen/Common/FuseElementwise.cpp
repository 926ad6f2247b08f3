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
/// producer into its body would hide it. The E4M3 cast and the amax of a
/// GEMM writing E4M3 are the library's too: neither fuses either way.
bool intoElementwiseConsumer(OpOperand *fusedOperand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(fusedOperand->getOwner());
  Operation *producer = fusedOperand->get().getDefiningOp();
  auto libraryOwned = [](Operation *op) {
    return op->hasAttr(mte::kGemmFp8OutputAttrName) ||
           op->hasAttr(mte::kGemmOutputAmaxAttrName);
  };
  return consumer && producer && producer->hasOneUse() &&
         consumer.getNumLoops() == consumer.getNumParallelLoops() &&
         !consumer->hasAttr(mte::kGemmEpilogueAttrName) &&
         !libraryOwned(consumer) && !libraryOwned(producer);
}

/// Runs `inner` on every op but block-scaled products and row-scaled GEMM
/// epilogues (and an E4M3-writing GEMM's cast and amax, for the same
/// reason): the library call
/// reads their operands (the scales as cuBLASLt's pointers) and their tag,
/// and upstream's splat-constant folding, which takes no control function,
/// would rebuild one with a splat weight scale (power-of-two scales often
/// are) folded into its body and the tag dropped: it then ran as a loop
/// nest on the GPU.
class SparingLibraryOps : public RewritePattern {
  /// A GEMM epilogue whose row scales cuBLASLt reads as vectors, a splat
  /// per-channel scale among them.
  static bool readsRowScales(Operation *op) {
    auto spec = op->getAttrOfType<DictionaryAttr>(mte::kGemmEpilogueAttrName);
    return spec && spec.contains("row_scales");
  }

public:
  explicit SparingLibraryOps(std::unique_ptr<RewritePattern> inner)
      : RewritePattern(*inner), inner(std::move(inner)) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr(mte::kBlockScaledGemmAttrName) ||
        op->hasAttr(mte::kGemmFp8OutputAttrName) ||
        op->hasAttr(mte::kGemmOutputAmaxAttrName) || readsRowScales(op))
      return failure();
    return inner->matchAndRewrite(op, rewriter);
  }

private:
  std::unique_ptr<RewritePattern> inner;
};

struct FuseElementwisePass
    : mte::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet upstream(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(upstream,
                                                 intoElementwiseConsumer);
    linalg::populateFoldReshapeOpsByExpansionPatterns(upstream,
                                                      intoElementwiseConsumer);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(upstream);
    RewritePatternSet patterns(&getContext());
    for (std::unique_ptr<RewritePattern> &pattern :
         upstream.getNativePatterns())
      patterns.add(std::make_unique<SparingLibraryOps>(std::move(pattern)));
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
