//===- FuseNormLinear.cpp - norms write their GEMMs' input type -----------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_FUSENORMLINEAR
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {
/// True when every user of `cast` is a linear that reads it as its input.
bool feedsOnlyGemmInputs(CastOp cast) {
  return llvm::all_of(cast->getUses(), [](OpOperand &use) {
    auto linear = dyn_cast<LinearOp>(use.getOwner());
    return linear && &use == &linear.getInputMutable();
  });
}

template <typename NormOp>
struct NormWritesGemmInput : OpRewritePattern<NormOp> {
  NormWritesGemmInput(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern<NormOp>(ctx), numNormLinear(count) {}

  LogicalResult matchAndRewrite(NormOp norm,
                                PatternRewriter &rewriter) const override {
    TypedValue<RankedTensorType> output = norm.getOutput();
    SmallVector<CastOp> casts;
    for (Operation *user : output.getUsers()) {
      auto cast = dyn_cast<CastOp>(user);
      if (!cast || !feedsOnlyGemmInputs(cast) ||
          (!casts.empty() && cast.getType() != casts.front().getType()))
        return failure();
      casts.push_back(cast);
    }
    if (casts.empty())
      return failure();
    // Only a narrowing cast: the norm then rounds its f32 statistics once,
    // to the type the GEMM reads, and writes fewer bytes. Widening would
    // write more and change what the GEMM sees.
    RankedTensorType gemmType = casts.front().getType();
    auto from = cast<FloatType>(output.getType().getElementType());
    auto to = dyn_cast<FloatType>(gemmType.getElementType());
    if (!to || to.getWidth() >= from.getWidth() ||
        gemmType != output.getType().clone(to))
      return failure();
    rewriter.modifyOpInPlace(norm, [&] { output.setType(gemmType); });
    for (CastOp cast : casts)
      rewriter.replaceOp(cast, output);
    ++numNormLinear;
    return success();
  }

  llvm::Statistic &numNormLinear;
};

struct FuseNormLinearPass
    : mte::transformer::impl::FuseNormLinearBase<FuseNormLinearPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns
        .add<NormWritesGemmInput<LayerNormOp>, NormWritesGemmInput<RMSNormOp>>(
            &getContext(), numNormLinear);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
