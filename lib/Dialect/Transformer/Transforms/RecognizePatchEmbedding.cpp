//===- RecognizePatchEmbedding.cpp - stride = kernel Conv as a linear -----===//
//
// A convolution whose kernel tiles its input (stride = kernel, no padding
// or dilation, one group: ViT's patch embedding, Whisper-style frame
// stems) reads every input element once. It is a GEMM over the patches:
//
//     x [N, C, P1*K1, ..]  -> [N, C, P1, K1, ..] -> [N, P1, .., C, K1, ..]
//                          -> [N, P, C*K]  . W[M, C*K]^T + b -> [N, P, M]
//                          -> [N, P1, .., M] -> [N, M, P1, ..]
//
// a linear the fusion passes and the CUDA backend's cuBLASLt GEMMs take,
// between reshapes and transposes that are copies at most.
//
//===----------------------------------------------------------------------===//

#include "RecognitionUtils.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZEPATCHEMBEDDING
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;
using namespace mte::transformer::recognition;

namespace {
struct PatchConvToLinear : OpRewritePattern<ConvOp> {
  PatchConvToLinear(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numPatch(count) {}

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    RankedTensorType inputType = conv.getInput().getType();
    RankedTensorType weightType = conv.getWeight().getType();
    RankedTensorType type = conv.getType();
    int64_t spatial = inputType.getRank() - 2;
    if (conv.getGroup() != 1 ||
        llvm::any_of(conv.getPads(), [](int64_t p) { return p != 0; }) ||
        llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }))
      return rewriter.notifyMatchFailure(conv, "padded, dilated or grouped");
    for (int64_t i = 0; i < spatial; ++i)
      if (conv.getStrides()[i] != weightType.getDimSize(2 + i) ||
          inputType.getDimSize(2 + i) % weightType.getDimSize(2 + i) != 0)
        return rewriter.notifyMatchFailure(
            conv, "the kernel does not tile the input");

    Location loc = conv.getLoc();
    int64_t batch = inputType.getDimSize(0),
            channels = inputType.getDimSize(1),
            filters = weightType.getDimSize(0);
    // [N, C, P1, K1, ..., Pn, Kn]
    SmallVector<int64_t> tiled = {batch, channels};
    int64_t patches = 1, patchSize = channels;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t kernel = weightType.getDimSize(2 + i);
      tiled.append({type.getDimSize(2 + i), kernel});
      patches *= type.getDimSize(2 + i);
      patchSize *= kernel;
    }
    Value x = reshapeTo(rewriter, loc, conv.getInput(), tiled);
    // [N, P1, ..., Pn, C, K1, ..., Kn]
    SmallVector<int64_t> toPatches = {0};
    for (int64_t i = 0; i < spatial; ++i)
      toPatches.push_back(2 + 2 * i);
    toPatches.push_back(1);
    for (int64_t i = 0; i < spatial; ++i)
      toPatches.push_back(3 + 2 * i);
    x = TransposeOp::create(rewriter, loc, x,
                            rewriter.getDenseI64ArrayAttr(toPatches));
    x = reshapeTo(rewriter, loc, x, {batch, patches, patchSize});
    Value weight =
        reshapeTo(rewriter, loc, conv.getWeight(), {filters, patchSize});
    Value product = LinearOp::create(
        rewriter, loc,
        RankedTensorType::get({batch, patches, filters},
                              type.getElementType()),
        x, weight, conv.getBias(), /*residual=*/nullptr,
        /*input_scale=*/nullptr, /*weight_scale=*/nullptr,
        WeightLayoutAttr::get(rewriter.getContext(), WeightLayout::NK),
        ActivationAttr::get(rewriter.getContext(), Activation::None)).getOutput();
    // [N, P1, ..., Pn, M] -> [N, M, P1, ..., Pn]
    SmallVector<int64_t> grid = {batch};
    for (int64_t i = 0; i < spatial; ++i)
      grid.push_back(type.getDimSize(2 + i));
    grid.push_back(filters);
    Value y = reshapeTo(rewriter, loc, product, grid);
    SmallVector<int64_t> channelsFirst = {0, spatial + 1};
    for (int64_t i = 0; i < spatial; ++i)
      channelsFirst.push_back(1 + i);
    rewriter.replaceOpWithNewOp<TransposeOp>(
        conv, y, rewriter.getDenseI64ArrayAttr(channelsFirst));
    ++numPatch;
    return success();
  }

  llvm::Statistic &numPatch;
};

struct RecognizePatchEmbeddingPass
    : mte::transformer::impl::RecognizePatchEmbeddingBase<
          RecognizePatchEmbeddingPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PatchConvToLinear>(&getContext(), numPatch);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
