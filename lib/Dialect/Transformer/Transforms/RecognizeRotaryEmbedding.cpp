//===- RecognizeRotaryEmbedding.cpp - rotate_half RoPE to rotary_embedding ===//
//
// Hugging Face models (Llama, Mistral, Qwen, GPT-NeoX) apply rotary position
// embeddings as
//
//     q * cos + rotate_half(q) * sin,  rotate_half(x) = cat(-x2, x1)
//
// with x1, x2 the two halves of the head dimension and cos/sin tables that
// broadcast over batch and heads. Both PyTorch exporters spell rotate_half as
// Slice, Slice, Neg, Concat. GPT-J (and GPT-NeoX-20B's predecessors) rotate
// every two features instead,
//
//     rotate_every_two(x) = stack(-x[..., 1::2], x[..., ::2], -1).flatten(-2)
//
// (strided Slices, Neg, Unsqueezes, Concat, Reshape), which becomes the
// op's interleaved form.
//
//===----------------------------------------------------------------------===//

#include "RecognitionUtils.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZEROTARYEMBEDDING
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;
using namespace mte::transformer::recognition;

namespace {
/// `slice(x)` taking `width` features from `begin` every `stride` of the last
/// dimension of `x` and everything of the others.
bool isLastDimSlice(SliceOp slice, Value x, int64_t begin, int64_t width,
                    int64_t stride = 1) {
  if (!slice || slice.getInput() != x)
    return false;
  ArrayRef<int64_t> shape = slice.getInput().getType().getShape();
  int64_t last = shape.size() - 1;
  for (int64_t d = 0; d <= last; ++d) {
    int64_t offset = d == last ? begin : 0, size = d == last ? width : shape[d];
    if (slice.getOffsets()[d] != offset || slice.getSizes()[d] != size ||
        slice.getStrides()[d] != (d == last ? stride : 1))
      return false;
  }
  return true;
}

/// Matches `rotated` as rotate_half(x) = concat(-x[.., h:], x[.., :h]) and
/// returns x.
Value matchRotateHalf(Value rotated) {
  auto concat = singleUseProducer<ConcatOp>(rotated);
  if (!concat || concat.getInputs().size() != 2)
    return nullptr;
  RankedTensorType type = concat.getType();
  int64_t rank = type.getRank();
  if (normalizeAxis(concat.getAxis(), rank) != rank - 1)
    return nullptr;
  auto neg = singleUseProducer<NegOp>(concat.getInputs()[0]);
  if (!neg)
    return nullptr;
  auto second = singleUseProducer<SliceOp>(neg.getInput());
  auto first = singleUseProducer<SliceOp>(concat.getInputs()[1]);
  if (!first || !second)
    return nullptr;
  Value x = first.getInput();
  int64_t dim = type.getShape().back();
  if (dim % 2 != 0 || x.getType() != type ||
      !isLastDimSlice(first, x, 0, dim / 2) ||
      !isLastDimSlice(second, x, dim / 2, dim / 2))
    return nullptr;
  return x;
}

/// `view` reshapes `value` by appending a dimension of 1 (an Unsqueeze(-1)).
bool appendsUnitDim(ReshapeOp view, Value value) {
  auto from = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> to = view.getType().getShape();
  return view && view.getInput() == value &&
         to.size() == from.getShape().size() + 1 && to.back() == 1 &&
         to.drop_back() == from.getShape();
}

/// Matches `rotated` as rotate_every_two(x) = reshape(concat(
/// reshape(-x[.., 1::2]), reshape(x[.., ::2]), axis = -1), x.shape) and
/// returns x.
Value matchRotateEveryTwo(Value rotated) {
  auto flatten = singleUseProducer<ReshapeOp>(rotated);
  if (!flatten)
    return nullptr;
  auto concat = singleUseProducer<ConcatOp>(flatten.getInput());
  if (!concat || concat.getInputs().size() != 2)
    return nullptr;
  RankedTensorType pairs = concat.getType();
  int64_t rank = pairs.getRank();
  if (normalizeAxis(concat.getAxis(), rank) != rank - 1 ||
      pairs.getShape().back() != 2)
    return nullptr;
  auto oddView = singleUseProducer<ReshapeOp>(concat.getInputs()[0]);
  auto evenView = singleUseProducer<ReshapeOp>(concat.getInputs()[1]);
  if (!oddView || !evenView)
    return nullptr;
  auto neg = singleUseProducer<NegOp>(oddView.getInput());
  if (!neg)
    return nullptr;
  auto odd = singleUseProducer<SliceOp>(neg.getInput());
  auto even = singleUseProducer<SliceOp>(evenView.getInput());
  if (!odd || !even || !appendsUnitDim(oddView, neg) ||
      !appendsUnitDim(evenView, even))
    return nullptr;
  Value x = even.getInput();
  auto type = cast<RankedTensorType>(rotated.getType());
  int64_t dim = type.getShape().back();
  if (dim % 2 != 0 || x.getType() != type ||
      !isLastDimSlice(even, x, 0, dim / 2, 2) ||
      !isLastDimSlice(odd, x, 1, dim / 2, 2))
    return nullptr;
  return x;
}

/// Where the sequence dimension of a rank-4 rotary input sits.
enum class HeadLayout { BHSD, BSHD };

/// Reshapes a cos/sin operand that broadcasts over the heads of a rank-4
/// input into the op's table form, `[S, D]` or `[B, S, D]`; fails when it
/// does not broadcast that way.
FailureOr<std::pair<HeadLayout, SmallVector<int64_t>>>
tableShape(RankedTensorType table, RankedTensorType input) {
  if (table.getRank() > 4 || table.getElementType() != input.getElementType())
    return failure();
  // Align to the input's rank, numpy style.
  SmallVector<int64_t> dims(4 - table.getRank(), 1);
  llvm::append_range(dims, table.getShape());
  int64_t batch = input.getDimSize(0), featureDim = input.getDimSize(3);
  if (dims[3] != featureDim || (dims[0] != 1 && dims[0] != batch))
    return failure();
  HeadLayout layout;
  int64_t seq;
  if (dims[1] == 1 && dims[2] == input.getDimSize(2)) {
    layout = HeadLayout::BHSD;
    seq = dims[2];
  } else if (dims[2] == 1 && dims[1] == input.getDimSize(1)) {
    layout = HeadLayout::BSHD;
    seq = dims[1];
  } else {
    return failure();
  }
  SmallVector<int64_t> shape = {seq, featureDim};
  if (dims[0] != 1)
    shape.insert(shape.begin(), batch);
  return std::make_pair(layout, shape);
}

struct RotateHalfPattern : OpRewritePattern<AddOp> {
  RotateHalfPattern(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numRotary(count) {}

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(add.getType());
    if (type.getRank() != 4 || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()))
      return failure();
    for (auto [cosTerm, sinTerm] : {std::pair(add.getLhs(), add.getRhs()),
                                    std::pair(add.getRhs(), add.getLhs())}) {
      auto mulCos = singleUseProducer<MulOp>(cosTerm);
      auto mulSin = singleUseProducer<MulOp>(sinTerm);
      if (!mulCos || !mulSin)
        continue;
      for (Value rotated : {mulSin.getLhs(), mulSin.getRhs()}) {
        bool interleaved = false;
        Value x = matchRotateHalf(rotated);
        if (!x) {
          x = matchRotateEveryTwo(rotated);
          interleaved = true;
        }
        if (!x || (mulCos.getLhs() != x && mulCos.getRhs() != x))
          continue;
        Value cos = otherOperand(mulCos, x);
        Value sin = otherOperand(mulSin, rotated);
        if (x.getType() != type || cos.getType() != sin.getType())
          continue;
        auto table = tableShape(cast<RankedTensorType>(cos.getType()), type);
        if (failed(table))
          continue;
        rewriter.replaceOp(add, createRotary(rewriter, add.getLoc(), x, cos,
                                             sin, table->first, table->second,
                                             interleaved));
        ++numRotary;
        return success();
      }
    }
    return failure();
  }

  /// Builds the op on the packed `[B, S, H * D]` form when the input is a
  /// head split of it (the attention recognizer then finds the projection
  /// directly), else on the rank-4 input.
  static Value createRotary(PatternRewriter &rewriter, Location loc, Value x,
                            Value cos, Value sin, HeadLayout layout,
                            ArrayRef<int64_t> tableShape, bool interleaved) {
    UnitAttr interleavedAttr = interleaved ? rewriter.getUnitAttr() : nullptr;
    auto type = cast<RankedTensorType>(x.getType());
    int64_t b = type.getDimSize(0), d = type.getDimSize(3);
    int64_t h = type.getDimSize(layout == HeadLayout::BHSD ? 1 : 2);
    int64_t s = type.getDimSize(layout == HeadLayout::BHSD ? 2 : 1);
    cos = reshapeTo(rewriter, loc, cos, tableShape);
    sin = reshapeTo(rewriter, loc, sin, tableShape);
    IntegerAttr heads = rewriter.getI64IntegerAttr(h);
    Value packed = layout == HeadLayout::BHSD
                       ? packedSource(x)
                       : reshapeTo(rewriter, loc, x, {b, s, h * d});
    if (!packed)
      return RotaryEmbeddingOp::create(rewriter, loc, type, x, cos, sin,
                                       /*num_heads=*/nullptr,
                                       /*rotary_dim=*/nullptr, interleavedAttr);
    Value rotary = RotaryEmbeddingOp::create(rewriter, loc, packed.getType(),
                                             packed, cos, sin, heads,
                                             /*rotary_dim=*/nullptr,
                                             interleavedAttr);
    Value split = reshapeTo(rewriter, loc, rotary, {b, s, h, d});
    if (layout == HeadLayout::BSHD)
      return split;
    return TransposeOp::create(rewriter, loc, split,
                               rewriter.getDenseI64ArrayAttr({0, 2, 1, 3}));
  }

  llvm::Statistic &numRotary;
};

struct RecognizeRotaryEmbeddingPass
    : mte::transformer::impl::RecognizeRotaryEmbeddingBase<
          RecognizeRotaryEmbeddingPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RotateHalfPattern>(&getContext(), numRotary);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
