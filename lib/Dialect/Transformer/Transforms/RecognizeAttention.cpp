//===- RecognizeAttention.cpp - decomposed attention to transformer.attention //
//
// Matches, from the probabilities · V product upwards:
//
//     out    = matmul(P, V)          P = softmax(scores, -1), or
//                                    where(is_nan(P), 0, P) (dynamo's SDPA)
//     scores = matmul(Q, Kᵀ), then any of: * c, / c, + mask, where(m, s, -big)
//     Q, Kᵀ  = optionally * c each (SDPA pre-scales both by sqrt(scale))
//
// with Q, K, V in `[B, H, S, D]`. Kᵀ is a transpose of K's last two dims, or
// the transpose [0, 2, 3, 1] of the head split, or (dynamo) a transpose of
// [B * H, S, D] between reshapes; K and V may be repeated from fewer KV
// heads (GQA's Unsqueeze/Expand/Reshape). Masks that do not depend on the
// inputs and are exactly causal become the `causal` flag; any other mask
// stays an operand. The op takes Q, K, V packed as `[B, S, H * D]`, so the
// head splits after the projections cancel against it.
//
//===----------------------------------------------------------------------===//

#include "MaskAnalysis.h"
#include "RecognitionUtils.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZEATTENTION
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;
using namespace mte::transformer::recognition;

namespace {
/// What the chain between Q·Kᵀ and the softmax contributes.
struct Scores {
  MatmulOp qk;
  double scale = 1;
  /// A scale was met on the way down: masks below it apply before scaling.
  bool belowScale = false;
  bool causal = false;
  Value additiveMask;
  Value keepMask;
  bool keepMaskInverted = false;
  /// A keep mask given as the conjunction of these (splitCausalConjunct).
  SmallVector<Value> keepConjuncts;
  /// cap * tanh(s / cap) met on the way down (Gemma 2): below it only
  /// scales may follow (a mask there would be capped, not hiding).
  std::optional<double> softcap;
};

/// The query and key lengths of a `[B, H, Sq, Skv]` score tensor.
struct ScoreShape {
  RankedTensorType type;
  int64_t sq() const { return type.getDimSize(2); }
  int64_t skv() const { return type.getDimSize(3); }
};

/// Masks with -inf or torch.finfo(dtype).min: anything at most half the
/// lowest finite value of the type.
bool isHiddenFill(Value fill, Type elementType) {
  std::optional<double> value = constantScalar(fill);
  auto floatType = dyn_cast<FloatType>(elementType);
  if (!value || !floatType)
    return false;
  double lowest =
      APFloat::getLargest(floatType.getFloatSemantics(), /*Negative=*/true)
          .convertToDouble();
  return *value <= 0.5 * lowest;
}

bool broadcastsTo(Value mask, RankedTensorType scores) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (!type.hasStaticShape() || type.getRank() > scores.getRank())
    return false;
  int64_t offset = scores.getRank() - type.getRank();
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (size != 1 && size != scores.getDimSize(offset + d))
      return false;
  return true;
}

/// The leaves of an `and` tree.
void collectConjuncts(Value v, SmallVectorImpl<Value> &leaves) {
  if (auto conjunction = v.getDefiningOp<AndOp>()) {
    collectConjuncts(conjunction.getLhs(), leaves);
    collectConjuncts(conjunction.getRhs(), leaves);
    return;
  }
  leaves.push_back(v);
}

/// A visibility condition `cond` (true where a key is visible) that is the
/// conjunction of an exactly causal, input-independent part and others (a
/// padding mask from an input: transformers' and_masks of causal and
/// padding functions): sets the causal flag and records the others, whose
/// conjunction is the keep mask. False when no conjunct is causal.
bool splitCausalConjunct(Scores &m, const ScoreShape &shape, Value cond) {
  SmallVector<Value> leaves;
  collectConjuncts(cond, leaves);
  if (leaves.size() < 2)
    return false;
  auto causal = llvm::find_if(leaves, [&](Value leaf) {
    return broadcastsTo(leaf, shape.type) &&
           isCausalMask(leaf, MaskForm::Keep, shape.sq(), shape.skv());
  });
  if (causal == leaves.end())
    return false;
  leaves.erase(causal);
  if (!llvm::all_of(leaves, [&](Value leaf) {
        return broadcastsTo(leaf, shape.type);
      }))
    return false;
  m.causal = true;
  m.keepConjuncts = std::move(leaves);
  return true;
}

/// Records `mask` in `m`: as the causal flag when it is exactly causal, else
/// as the single mask operand of its kind. An additive mask
/// `where(cond, 0, -big)` whose condition is causal AND something else
/// becomes the causal flag and a keep mask of the rest, so that a padding
/// mask merged with the causal one still gives the fused kernels their
/// causal form. (The two differ only for a query that sees no key at all:
/// the additive form averages every value there, the op gives zeros; such
/// a query is itself padding.)
bool addMask(Scores &m, const ScoreShape &shape, Value mask, MaskForm form,
             bool inverted = false) {
  if (!broadcastsTo(mask, shape.type) || m.softcap)
    return false;
  MaskForm evaluated = inverted ? MaskForm::Hide : form;
  if (isCausalMask(mask, evaluated, shape.sq(), shape.skv())) {
    m.causal = true;
    return true;
  }
  if (form == MaskForm::Additive && !m.causal && !m.additiveMask &&
      !m.keepMask && !m.belowScale) {
    auto where = mask.getDefiningOp<WhereOp>();
    Type elt = cast<RankedTensorType>(mask.getType()).getElementType();
    if (where && constantScalar(where.getTrueValue()) == 0.0 &&
        isHiddenFill(where.getFalseValue(), elt) &&
        elt == shape.type.getElementType()) {
      if (splitCausalConjunct(m, shape, where.getCondition()))
        return true;
    }
  }
  if (m.additiveMask || m.keepMask || !m.keepConjuncts.empty())
    return false; // the op has one mask operand
  if (form == MaskForm::Additive) {
    // A mask added before the scale would need scaling too.
    if (m.belowScale ||
        cast<RankedTensorType>(mask.getType()).getElementType() !=
            shape.type.getElementType())
      return false;
    m.additiveMask = mask;
    return true;
  }
  m.keepMask = mask;
  m.keepMaskInverted = inverted;
  return true;
}

/// Walks from the softmax input down to Q·Kᵀ; every step must have one use.
bool matchScores(Value v, Scores &m, const ScoreShape &shape) {
  Operation *op = v.getDefiningOp();
  if (!op || !op->hasOneUse() || v.getType() != shape.type)
    return false;
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    m.qk = matmul;
    return true;
  }
  auto tryOperand = [&](Value next, auto record) {
    Scores saved = m;
    if (record() && matchScores(next, m, shape))
      return true;
    m = saved;
    return false;
  };
  // Softcapping: cap * tanh(s / cap) or cap * tanh(s * (1 / cap)), with no
  // scale above it (that would scale the capped scores).
  if (auto mul = dyn_cast<MulOp>(op); mul && !m.softcap && !m.belowScale) {
    for (Value x : {mul.getLhs(), mul.getRhs()}) {
      std::optional<double> cap = constantScalar(otherOperand(mul, x));
      auto tanh = x.getDefiningOp<TanhOp>();
      if (!cap || *cap <= 0 || !tanh || !tanh->hasOneUse())
        continue;
      Operation *inner = tanh.getInput().getDefiningOp();
      if (!inner || !inner->hasOneUse())
        continue;
      Value capped;
      std::optional<double> divisor;
      if (auto div = dyn_cast<DivOp>(inner)) {
        capped = div.getLhs();
        divisor = constantScalar(div.getRhs());
      } else if (auto by = dyn_cast<MulOp>(inner)) {
        for (Value y : {by.getLhs(), by.getRhs()})
          if (std::optional<double> c = constantScalar(otherOperand(by, y));
              c && *c != 0) {
            capped = y;
            divisor = 1 / *c;
          }
      }
      if (!divisor || std::abs(*divisor - *cap) > 1e-6 * *cap)
        continue;
      if (tryOperand(capped, [&] {
            m.softcap = *cap;
            return true;
          }))
        return true;
    }
  }
  if (auto mul = dyn_cast<MulOp>(op)) {
    for (Value x : {mul.getLhs(), mul.getRhs()}) {
      std::optional<double> c = constantScalar(otherOperand(mul, x));
      if (c && tryOperand(x, [&] {
            m.scale *= *c;
            m.belowScale = true;
            return true;
          }))
        return true;
    }
    return false;
  }
  if (auto div = dyn_cast<DivOp>(op)) {
    std::optional<double> c = constantScalar(div.getRhs());
    return c && *c != 0 && tryOperand(div.getLhs(), [&] {
             m.scale /= *c;
             m.belowScale = true;
             return true;
           });
  }
  if (auto add = dyn_cast<AddOp>(op)) {
    for (Value x : {add.getLhs(), add.getRhs()})
      if (tryOperand(x, [&] {
            return addMask(m, shape, otherOperand(add, x), MaskForm::Additive);
          }))
        return true;
    return false;
  }
  if (auto where = dyn_cast<WhereOp>(op)) {
    Type elt = shape.type.getElementType();
    if (isHiddenFill(where.getFalseValue(), elt) &&
        tryOperand(where.getTrueValue(), [&] {
          return addMask(m, shape, where.getCondition(), MaskForm::Keep);
        }))
      return true;
    return isHiddenFill(where.getTrueValue(), elt) &&
           tryOperand(where.getFalseValue(), [&] {
             return addMask(m, shape, where.getCondition(), MaskForm::Keep,
                            /*inverted=*/true);
           });
  }
  return false;
}

/// Peels single-use scalar scales off a Q or Kᵀ operand.
Value peelScale(Value v, double &scale) {
  while (Operation *op = v.getDefiningOp()) {
    if (!op->hasOneUse())
      break;
    if (auto mul = dyn_cast<MulOp>(op)) {
      Value x = mul.getLhs(), c = mul.getRhs();
      if (!constantScalar(c))
        std::swap(x, c);
      std::optional<double> value = constantScalar(c);
      if (!value || x.getType() != v.getType())
        break;
      scale *= *value;
      v = x;
      continue;
    }
    if (auto div = dyn_cast<DivOp>(op)) {
      std::optional<double> value = constantScalar(div.getRhs());
      if (!value || *value == 0 || div.getLhs().getType() != v.getType())
        break;
      scale /= *value;
      v = div.getLhs();
      continue;
    }
    break;
  }
  return v;
}

bool isPermutation(TransposeOp op, ArrayRef<int64_t> perm) {
  return op && llvm::equal(op.getPermutation(), perm);
}

Value transposeOf(PatternRewriter &rewriter, Location loc, Value v,
                  ArrayRef<int64_t> perm) {
  return TransposeOp::create(rewriter, loc, v,
                             rewriter.getDenseI64ArrayAttr(perm));
}

/// K as `[B, H, S, D]` from the Kᵀ operand `[B, H, D, S]`.
Value keyFromTransposed(PatternRewriter &rewriter, Location loc, Value kT) {
  if (auto t = kT.getDefiningOp<TransposeOp>()) {
    if (isPermutation(t, {0, 1, 3, 2}))
      return t.getInput();
    // The head split transposed straight to [B, H, D, S].
    if (isPermutation(t, {0, 2, 3, 1}) && t.getInput().getType().getRank() == 4)
      return transposeOf(rewriter, loc, t.getInput(), {0, 2, 1, 3});
  }
  // dynamo: reshape(transpose(reshape(K, [B*H, S, D]), [0, 2, 1]), Kᵀ shape).
  if (auto outer = kT.getDefiningOp<ReshapeOp>()) {
    auto t = outer.getInput().getDefiningOp<TransposeOp>();
    auto inner = t ? t.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
    if (isPermutation(t, {0, 2, 1}) && inner) {
      auto k = cast<RankedTensorType>(inner.getInput().getType());
      ArrayRef<int64_t> kTShape = outer.getType().getShape();
      if (k.getRank() == 4 && k.getDimSize(0) == kTShape[0] &&
          k.getDimSize(1) == kTShape[1] && k.getDimSize(2) == kTShape[3] &&
          k.getDimSize(3) == kTShape[2])
        return inner.getInput();
    }
  }
  return transposeOf(rewriter, loc, kT, {0, 1, 3, 2});
}

/// `[B, Hkv, S, D]` and the repeat count when `x` (`[B, H, S, D]`) repeats
/// fewer KV heads: reshape(expand(reshape(x0, [B, Hkv, 1, S, D]),
/// [B, Hkv, n, S, D]), [B, Hkv * n, S, D]). The unsqueeze may read any
/// value with x0's elements in order: with one KV head (multi-query
/// attention) canonicalization folds the head view [B, S, D] -> [B, 1, S,
/// D] into it.
std::pair<Value, int64_t> peelRepeatedHeads(PatternRewriter &rewriter,
                                            Location loc, Value x) {
  auto merge = x.getDefiningOp<ReshapeOp>();
  auto expand = merge ? merge.getInput().getDefiningOp<ExpandOp>() : ExpandOp();
  auto unsqueeze =
      expand ? expand.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
  if (!unsqueeze)
    return {x, 1};
  ArrayRef<int64_t> inserted = unsqueeze.getType().getShape();
  ArrayRef<int64_t> expanded = expand.getType().getShape();
  if (inserted.size() != 5 || inserted[2] != 1 || expanded.size() != 5 ||
      expanded[0] != inserted[0] || expanded[1] != inserted[1] ||
      expanded[3] != inserted[3] || expanded[4] != inserted[4])
    return {x, 1};
  SmallVector<int64_t> heads = {inserted[0], inserted[1], inserted[3],
                                inserted[4]};
  return {reshapeTo(rewriter, loc, unsqueeze.getInput(), heads), expanded[2]};
}

/// `[B, S, H * D]` for a `[B, H, S, D]` value.
Value packHeads(PatternRewriter &rewriter, Location loc, Value x) {
  if (Value packed = packedSource(x))
    return packed;
  ArrayRef<int64_t> s = cast<RankedTensorType>(x.getType()).getShape();
  return reshapeTo(rewriter, loc, transposeOf(rewriter, loc, x, {0, 2, 1, 3}),
                   {s[0], s[2], s[1] * s[3]});
}

/// The probabilities of `probs`: softmax over the last axis, optionally
/// behind dynamo's where(is_nan(p), 0, p) guard for fully masked rows.
SoftmaxOp matchProbabilities(Value probs) {
  if (auto guard = probs.getDefiningOp<WhereOp>()) {
    auto isNan = guard.getCondition().getDefiningOp<IsNanOp>();
    std::optional<double> zero = constantScalar(guard.getTrueValue());
    auto softmax = guard.getFalseValue().getDefiningOp<SoftmaxOp>();
    if (!guard->hasOneUse() || !isNan || !isNan->hasOneUse() || zero != 0.0 ||
        !softmax || isNan.getInput() != softmax.getResult() ||
        !llvm::all_of(softmax->getUsers(), [&](Operation *user) {
          return user == guard || user == isNan;
        }))
      return {};
    return softmax;
  }
  auto softmax = singleUseProducer<SoftmaxOp>(probs);
  return softmax;
}

//===----------------------------------------------------------------------===//
// Masks built at the scores' shape from smaller ones
//===----------------------------------------------------------------------===//
//
// Exporters often expand a padding mask to [B, 1, Sq, Skv] before the
// arithmetic that makes it additive (transformers' _expand_mask under
// dynamo). The op broadcasts its mask, so the same values computed before
// the expand serve: a [B, 1, 1, Skv] mask is a key-padding mask the fused
// kernels take.

/// Ops that apply elementwise under numpy broadcasting.
bool isPointwise(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() ||
         isa<AddOp, SubOp, MulOp, DivOp, MinOp, MaxOp, AndOp, OrOp, CompareOp,
             WhereOp>(op);
}

/// The smallest shape (of rank `rank`, right-aligned) from which `v` is a
/// broadcast through expands and pointwise ops; `v`'s own shape otherwise.
SmallVector<int64_t> unbroadcastShape(Value v, int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(rank - type.getRank(), 1);
  llvm::append_range(shape, type.getShape());
  Operation *op = v.getDefiningOp();
  if (auto expand = dyn_cast_if_present<ExpandOp>(op))
    return unbroadcastShape(expand.getInput(), rank);
  if (!op || !isPointwise(op) || op->getNumResults() != 1)
    return shape;
  SmallVector<int64_t> reduced(rank, 1);
  for (Value operand : op->getOperands()) {
    auto operandType = dyn_cast<RankedTensorType>(operand.getType());
    if (!operandType || operandType.getRank() > rank)
      return shape;
    SmallVector<int64_t> s = unbroadcastShape(operand, rank);
    for (int64_t d = 0; d < rank; ++d)
      reduced[d] = std::max(reduced[d], s[d]);
  }
  return reduced;
}

/// `v` computed at `shape` (which unbroadcastShape gave, right-aligned;
/// the value may come out of a lower rank): expands dropped, pointwise ops
/// recreated on the smaller operands.
Value unbroadcast(PatternRewriter &rewriter, Value v, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  if (unbroadcastShape(v, shape.size()) != shape)
    return {};
  Operation *op = v.getDefiningOp();
  if (auto expand = dyn_cast_if_present<ExpandOp>(op))
    return unbroadcast(rewriter, expand.getInput(), shape);
  if (!op || !isPointwise(op))
    return v; // at its smallest, of the same or a lower rank (it broadcasts)
  SmallVector<Value> operands;
  // The result: the numpy broadcast of the new operands' shapes.
  SmallVector<int64_t> result;
  for (Value operand : op->getOperands()) {
    Value smaller =
        unbroadcast(rewriter, operand, unbroadcastShape(operand, shape.size()));
    if (!smaller)
      return {};
    operands.push_back(smaller);
    SmallVector<int64_t> broadcast;
    if (!OpTrait::util::getBroadcastedShape(
            result, cast<RankedTensorType>(smaller.getType()).getShape(),
            broadcast))
      return {};
    result = std::move(broadcast);
  }
  OperationState state(
      op->getLoc(), op->getName(), operands,
      {RankedTensorType::get(result, type.getElementType())}, op->getAttrs());
  return rewriter.create(state)->getResult(0);
}

/// The mask operand for the op: `mask` computed at its smallest broadcast
/// shape when that is smaller than its own.
Value shrinkMask(PatternRewriter &rewriter, Value mask) {
  if (!mask)
    return mask;
  auto type = cast<RankedTensorType>(mask.getType());
  SmallVector<int64_t> shape = unbroadcastShape(mask, type.getRank());
  if (ArrayRef<int64_t>(shape) == type.getShape())
    return mask;
  Value smaller = unbroadcast(rewriter, mask, shape);
  return smaller ? smaller : mask;
}

//===----------------------------------------------------------------------===//
// Attention on [B * H, S, D]
//===----------------------------------------------------------------------===//
//
// BART-era eager attention (BART, Whisper, Marian, Pegasus under
// TorchScript) runs on heads merged into the batch: Q, K and V reshaped to
// [B * H, S, D], bmm, softmax, bmm (a mask added between views to
// [B, H, Sq, Skv] and back). These patterns move the merge past each
// product and the softmax, so that the reshapes cancel and the chain is
// the [B, H, S, D] form AttentionPattern matches.

/// The [B, H, X, Y] tensor that `v` ([B * H, X, Y]) merges, or null.
Value unmergedHeads(Value v) {
  auto reshape = v.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {};
  auto from = cast<RankedTensorType>(reshape.getInput().getType());
  auto to = cast<RankedTensorType>(reshape.getType());
  if (from.getRank() != 4 || to.getRank() != 3 || !from.hasStaticShape() ||
      to.getDimSize(0) != from.getDimSize(0) * from.getDimSize(1) ||
      to.getDimSize(1) != from.getDimSize(2) ||
      to.getDimSize(2) != from.getDimSize(3))
    return {};
  return reshape.getInput();
}

/// matmul(merge(a4), merge(b4)) -> merge(matmul(a4, b4)), where a merged
/// Kᵀ may be written transpose(merge(k4), [0, 2, 1]).
struct LiftMergedMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value a4 = unmergedHeads(op.getLhs());
    if (type.getRank() != 3 || !a4)
      return failure();
    auto aType = cast<RankedTensorType>(a4.getType());
    Value b4 = unmergedHeads(op.getRhs());
    bool transposed = !b4;
    if (transposed) {
      auto t = op.getRhs().getDefiningOp<TransposeOp>();
      if (!t || !isPermutation(t, {0, 2, 1}))
        return failure();
      b4 = unmergedHeads(t.getInput());
    }
    if (!b4)
      return failure();
    auto bType = cast<RankedTensorType>(b4.getType());
    if (aType.getDimSize(0) != bType.getDimSize(0) ||
        aType.getDimSize(1) != bType.getDimSize(1))
      return failure();
    if (transposed)
      b4 = transposeOf(rewriter, op.getLoc(), b4, {0, 1, 3, 2});
    auto product = RankedTensorType::get(
        {aType.getDimSize(0), aType.getDimSize(1), type.getDimSize(1),
         type.getDimSize(2)},
        type.getElementType());
    Value lifted = MatmulOp::create(rewriter, op.getLoc(), product, a4, b4);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, lifted);
    return success();
  }
};

/// softmax(merge(x4), -1) -> merge(softmax(x4, -1)). (The eager code adds
/// masks between views to 4-D and back, which cancel.)
struct LiftMergedSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    Value x4 = unmergedHeads(op.getInput());
    if (!x4 || normalizeAxis(op.getAxis(), 3) != 2)
      return failure();
    Value lifted = SoftmaxOp::create(rewriter, op.getLoc(), x4.getType(), x4,
                                     rewriter.getI64IntegerAttr(3));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), lifted);
    return success();
  }
};

struct AttentionPattern : OpRewritePattern<MatmulOp> {
  AttentionPattern(MLIRContext *ctx, llvm::Statistic &attention,
                   llvm::Statistic &causal, llvm::Statistic &gqa)
      : OpRewritePattern(ctx), numAttention(attention), numCausal(causal),
        numGroupedQuery(gqa) {}

  LogicalResult matchAndRewrite(MatmulOp pv,
                                PatternRewriter &rewriter) const override {
    RankedTensorType probsType = pv.getLhs().getType();
    RankedTensorType vType = pv.getRhs().getType();
    if (probsType.getRank() != 4 || vType.getRank() != 4 ||
        !probsType.hasStaticShape() || !vType.hasStaticShape() ||
        !isa<FloatType>(probsType.getElementType()))
      return rewriter.notifyMatchFailure(pv, "not a rank-4 float product");
    SoftmaxOp softmax = matchProbabilities(pv.getLhs());
    if (!softmax || normalizeAxis(softmax.getAxis(), 4) != 3)
      return rewriter.notifyMatchFailure(pv, "not softmax(scores, -1) · V");

    ScoreShape shape{probsType};
    Scores m;
    if (!matchScores(softmax.getInput(), m, shape))
      return rewriter.notifyMatchFailure(pv, "scores are not scaled Q·Kᵀ");
    Value q4 = peelScale(m.qk.getLhs(), m.scale);
    Value kT = peelScale(m.qk.getRhs(), m.scale);
    if (m.scale <= 0)
      return rewriter.notifyMatchFailure(pv, "non-positive scale");
    auto qType = cast<RankedTensorType>(q4.getType());
    auto kTType = cast<RankedTensorType>(kT.getType());
    int64_t batch = probsType.getDimSize(0), heads = probsType.getDimSize(1);
    if (qType.getRank() != 4 || kTType.getRank() != 4 ||
        qType.getDimSize(0) != batch || qType.getDimSize(1) != heads ||
        kTType.getDimSize(0) != batch || kTType.getDimSize(1) != heads ||
        vType.getDimSize(0) != batch || vType.getDimSize(1) != heads ||
        vType.getDimSize(2) != shape.skv() ||
        kTType.getElementType() != qType.getElementType() ||
        vType.getElementType() != qType.getElementType())
      return rewriter.notifyMatchFailure(pv, "Q, K and V are not [B, H, S, D]");

    Location loc = pv.getLoc();
    Value k4 = keyFromTransposed(rewriter, loc, kT);
    auto [k0, kRepeat] = peelRepeatedHeads(rewriter, loc, k4);
    auto [v0, vRepeat] = peelRepeatedHeads(rewriter, loc, pv.getRhs());
    int64_t kvHeads = heads;
    if (kRepeat == vRepeat && kRepeat > 1) {
      kvHeads = heads / kRepeat;
      k4 = k0;
    }
    Value v4 = kvHeads != heads ? v0 : pv.getRhs();

    Value mask = m.additiveMask;
    if (m.keepMask)
      mask = m.keepMaskInverted ? NotOp::create(rewriter, loc, m.keepMask)
                                : m.keepMask;
    for (Value conjunct : m.keepConjuncts)
      mask = mask ? AndOp::create(rewriter, loc, mask, conjunct).getResult()
                  : conjunct;
    mask = shrinkMask(rewriter, mask);
    int64_t sq = shape.sq(), dv = vType.getDimSize(3);
    auto outType = RankedTensorType::get({batch, sq, heads * dv},
                                         probsType.getElementType());
    // Named first: argument evaluation order is unspecified, and the IR
    // must not depend on the host compiler.
    Value q = packHeads(rewriter, loc, q4);
    Value k = packHeads(rewriter, loc, k4);
    Value v = packHeads(rewriter, loc, v4);
    auto attention = AttentionOp::create(
        rewriter, loc, outType, q, k, v, mask,
        rewriter.getI64IntegerAttr(heads), rewriter.getI64IntegerAttr(kvHeads),
        rewriter.getF32FloatAttr(m.scale),
        m.causal ? rewriter.getUnitAttr() : nullptr,
        m.softcap ? rewriter.getF32FloatAttr(*m.softcap) : nullptr);
    // Back to [B, H, Sq, Dv]; the head merge that follows cancels this.
    Value split = reshapeTo(rewriter, loc, attention, {batch, sq, heads, dv});
    rewriter.replaceOp(pv, transposeOf(rewriter, loc, split, {0, 2, 1, 3}));
    ++numAttention;
    if (m.causal)
      ++numCausal;
    if (kvHeads != heads)
      ++numGroupedQuery;
    return success();
  }

  llvm::Statistic &numAttention, &numCausal, &numGroupedQuery;
};

struct RecognizeAttentionPass
    : mte::transformer::impl::RecognizeAttentionBase<RecognizeAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<AttentionPattern>(&getContext(), numAttention, numCausal,
                                   numGroupedQuery);
    patterns.add<LiftMergedMatmul, LiftMergedSoftmax>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
