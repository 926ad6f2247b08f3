//===- TransformerToLinalgPass.cpp - the reference lowering pass ----------===//
//
// Lowers every transformer op to linalg, tensor, arith and math on tensors.
// This is the dialect's reference semantics: the host backend runs it, and a
// fusion is correct when the fused and the unfused graph agree through it.
// The patterns live with their op family (Elementwise.cpp, DataMovement.cpp,
// Reductions.cpp, Contractions.cpp, Quantization.cpp; shared helpers in
// LoweringUtils.h).
//
// Conventions: elementwise ops become one linalg.generic with numpy
// broadcasting in the indexing maps; contractions and reductions over f16 and
// bf16 accumulate in f32; normalisations, softmax and attention compute in f32
// and round once at the end.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/CUDA/LibraryContractions.h"
#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mte {
#define GEN_PASS_DEF_CONVERTTRANSFORMERTOLINALG
#include "mte/Conversion/Passes.h.inc"
} // namespace mte

using namespace mlir;
using namespace mte::lowering;
using namespace mte::transformer;

namespace {

/// A transformer op whose results hold no elements computes nothing: each
/// result is an empty tensor. (Ahead of the op's own lowering, which may
/// index into a dimension of size zero, and of a backend's forms, which
/// have benefit 2.)
struct ZeroElementResultsPattern : RewritePattern {
  ZeroElementResultsPattern(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/3, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<TransformerDialect>(op->getDialect()) || op->getNumResults() == 0)
      return failure();
    SmallVector<Value> empties;
    for (Type type : op->getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape() || tensor.getNumElements() != 0)
        return failure();
      empties.push_back(emptyTensor(rewriter, op->getLoc(), tensor.getShape(),
                                    tensor.getElementType()));
    }
    rewriter.replaceOp(op, empties);
    return success();
  }
};

struct ConvertTransformerToLinalgPass
    : mte::impl::ConvertTransformerToLinalgBase<
          ConvertTransformerToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Unsigned tensors need signless buffers through bufferization, which
    // the reference lowering does not do yet; say so instead of failing
    // somewhere downstream.
    WalkResult unsignedTypes = getOperation()->walk([](Operation *op) {
      if (!isa<TransformerDialect>(op->getDialect()))
        return WalkResult::advance();
      for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                             op->getResultTypes()))
        if (getElementTypeOrSelf(t).isUnsignedInteger()) {
          op->emitError("the host backend does not support unsigned integer "
                        "tensors (")
              << t << ")";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (unsignedTypes.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(ctx);
    mte::populateTransformerToLinalgPatterns(patterns);
    if (namedMatmul)
      mte::populateLibraryContractionPatterns(patterns);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<TransformerDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           func::FuncDialect>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mte::populateTransformerToLinalgPatterns(RewritePatternSet &patterns) {
  populateTransformerElementwiseToLinalgPatterns(patterns);
  populateTransformerDataMovementToLinalgPatterns(patterns);
  populateTransformerReductionToLinalgPatterns(patterns);
  populateTransformerContractionToLinalgPatterns(patterns);
  populateTransformerQuantizationToLinalgPatterns(patterns);
  patterns.add<ZeroElementResultsPattern>(patterns.getContext());
}
