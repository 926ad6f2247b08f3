//===- AnnotateTensorParallel.cpp - Megatron layout as shard annotations --===//
//
// Finds the blocks that tensor parallelism splits — column-parallel linears,
// the attention or activation between, a row-parallel linear — and writes
// the Megatron-LM layout as shard.shard annotations on a one-axis grid.
// Upstream shard-partition then derives each rank's program, with the ops'
// local forms from ShardingInterfaceImpl.cpp.
//
// Fused projections (one linear followed by a split into Q, K and V, or into
// gate and up) have their weight columns regrouped by rank at compile time,
// and the split rewritten to cut a [..., tp, N / tp] view of the output: the
// global program computes the same values, and a contiguous split of the
// last dimension gives each rank its share of every part.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "ConstantBytes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mte::transformer {
#define GEN_PASS_DEF_ANNOTATETENSORPARALLEL
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {

constexpr StringLiteral kGridName = "tp";

/// A block that tensor parallelism splits: column-parallel linears, the
/// ops between, and the row-parallel linears that read them (one, or two
/// when a fused projection feeds both halves of a parallel block, as in
/// Phi).
struct Block {
  llvm::SetVector<LinearOp> rows;
  llvm::SetVector<LinearOp> columns;
  /// The ops between the columns and the rows (attention, rotary, splits,
  /// views, elementwise), whose results are used only in the block.
  llvm::SetVector<Operation *> ops;
  /// The dimension each value of the block is split along.
  llvm::DenseMap<Value, int64_t> dims;

  bool contains(Operation *op) const {
    if (auto linear = dyn_cast<LinearOp>(op))
      return rows.contains(linear) || columns.contains(linear);
    return ops.contains(op);
  }
};

bool hasConstantParameters(LinearOp linear) {
  // An FP8 linear's scales are every rank's: the weight's a constant of the
  // whole weight (a scalar, or one per channel, split with the channels),
  // the input's computed from an amax (of the tensor, or of each row) that
  // is MAX-reduced over the ranks where the input is split. Block scales
  // (128 x 128 weight blocks) are not split: such a linear stays whole.
  return !linear.isBlockScaled() && constantOperand(linear.getWeight()) &&
         (!linear.getBias() || constantOperand(linear.getBias())) &&
         (!linear.getWeightScale() ||
          matchPattern(linear.getWeightScale(), m_Constant()));
}

int64_t lastDim(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape().back();
}

/// Whether `v` is a constant of one element.
bool isScalarConstant(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getNumElements() == 1 && matchPattern(v, m_Constant());
}

/// Adds the producers of `v`, a value the block reads, to `block`; false
/// when `v` comes from an op that cannot be split along heads or features.
bool collect(Value v, Block &block) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (block.contains(def))
    return true; // another result or user of a collected op
  if (auto linear = dyn_cast<LinearOp>(def)) {
    if (linear.getResidual() || !hasConstantParameters(linear))
      return false;
    block.columns.insert(linear);
    return true;
  }
  if (auto split = dyn_cast<SplitOp>(def)) {
    int64_t rank = split.getInput().getType().getRank();
    if (normalizeAxis(static_cast<int64_t>(split.getAxis()), rank) != rank - 1)
      return false;
    block.ops.insert(def);
    return collect(split.getInput(), block);
  }
  if (auto rotary = dyn_cast<RotaryEmbeddingOp>(def)) {
    block.ops.insert(def);
    return collect(rotary.getInput(), block);
  }
  if (auto attention = dyn_cast<AttentionOp>(def)) {
    // A mask with a head dimension (ALiBi, a relative position bias) has
    // one per query head; each rank slices its heads' part (the attention's
    // partition).
    if (Value mask = attention.getMask()) {
      auto type = cast<RankedTensorType>(mask.getType());
      if (type.getRank() == 4 && type.getDimSize(1) != 1 &&
          type.getDimSize(1) !=
              static_cast<int64_t>(attention.getNumHeads()))
        return false;
    }
    block.ops.insert(def);
    return collect(attention.getQuery(), block) &&
           collect(attention.getKey(), block) &&
           collect(attention.getValue(), block);
  }
  // Per-head norms (Qwen3's and OLMo 2's q/k norms on [B, S, H, D]): each
  // rank normalises its heads with gains every rank holds.
  if (isa<RMSNormOp, LayerNormOp>(def)) {
    // Without a residual, the operands after the input are the gain (and
    // the bias).
    bool residual = isa<RMSNormOp>(def)
                        ? static_cast<bool>(cast<RMSNormOp>(def).getResidual())
                        : static_cast<bool>(cast<LayerNormOp>(def).getResidual());
    if (residual || !llvm::all_of(def->getOperands().drop_front(), [](Value v) {
          return static_cast<bool>(constantOperand(v));
        }))
      return false;
    block.ops.insert(def);
    return collect(def->getOperand(0), block);
  }
  // Head views: [B, S, H * D] <-> [B, S, H, D] <-> [B, H, S, D], slices and
  // concatenations along D (a partial rotary embedding).
  if (isa<GeluOp, SiluOp, ReluOp, CastOp, QuantizeOp, ReshapeOp, TransposeOp,
          SliceOp>(def)) {
    block.ops.insert(def);
    return collect(def->getOperand(0), block);
  }
  // Gated activations, concatenations, and any elementwise op of operands
  // of its result's type (activations the recognizers leave decomposed:
  // CLIP's x * sigmoid(1.702 x), a squared ReLU).
  bool elementwise = def->hasTrait<OpTrait::Elementwise>() &&
                     def->getNumResults() == 1;
  if (elementwise ||
      isa<SwigluOp, GegluOp, MulOp, AddOp, SubOp, DivOp, ConcatOp>(def)) {
    // A scalar constant (Whisper's query scaled by d^-0.5) every rank holds.
    auto operands = llvm::make_filter_range(
        def->getOperands(), [](Value v) { return !isScalarConstant(v); });
    if (!isa<ConcatOp>(def) && llvm::any_of(operands, [&](Value operand) {
          return operand.getType() != def->getResult(0).getType();
        }))
      return false;
    block.ops.insert(def);
    return llvm::all_of(operands,
                        [&](Value operand) { return collect(operand, block); });
  }
  return false;
}

/// The block whose row-parallel linear is `row`, if it has one.
std::optional<Block> findBlock(LinearOp row) {
  if (!hasConstantParameters(row))
    return std::nullopt;
  Block block;
  block.rows.insert(row);
  if (!collect(row.getInput(), block) || block.columns.empty())
    return std::nullopt;
  return block;
}

/// Whether every value the block computes stays in it.
bool isClosed(const Block &block) {
  // FP8's amax of a split value reduces over the ranks (MAX): every rank
  // gets the whole tensor's (or each whole row's), so its scales stay the
  // same across them.
  auto staysIn = [&](Operation *op) {
    return llvm::all_of(op->getUsers(), [&](Operation *user) {
      return block.contains(user) || isa<AmaxOp, BlockAmaxOp>(user);
    });
  };
  return llvm::all_of(block.ops, staysIn) &&
         llvm::all_of(block.columns,
                      [&](LinearOp column) { return staysIn(column); });
}

/// Blocks that share a column or an op (a fused projection feeding two
/// rows) become one; a linear that is one block's row and another's column
/// leaves the latter replicated; a block whose values escape is dropped.
SmallVector<Block> mergeBlocks(SmallVector<Block> found) {
  SmallVector<Block> merged;
  for (Block &block : found) {
    Block group = std::move(block);
    for (auto it = merged.begin(); it != merged.end();) {
      bool shares =
          llvm::any_of(group.columns,
                       [&](LinearOp c) { return it->columns.contains(c); }) ||
          llvm::any_of(group.ops,
                       [&](Operation *op) { return it->ops.contains(op); });
      if (!shares) {
        ++it;
        continue;
      }
      group.rows.insert_range(it->rows);
      group.columns.insert_range(it->columns);
      group.ops.insert_range(it->ops);
      it = merged.erase(it);
    }
    merged.push_back(std::move(group));
  }
  llvm::DenseSet<Operation *> rows;
  for (Block &block : merged)
    for (LinearOp row : block.rows)
      rows.insert(row);
  SmallVector<Block> result;
  for (Block &block : merged)
    if (isClosed(block) && llvm::none_of(block.columns, [&](LinearOp c) {
          return rows.contains(c);
        }))
      result.push_back(std::move(block));
  return result;
}

/// The dimension each value of `block` is split along, from the columns'
/// outputs (their last) forward through the ops in program order; none when
/// an op cannot keep the split (the block stays replicated).
std::optional<llvm::DenseMap<Value, int64_t>> splitDims(const Block &block) {
  llvm::DenseMap<Value, int64_t> dims;
  auto rankOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank();
  };
  for (LinearOp column : block.columns)
    dims[column.getOutput()] = rankOf(column.getOutput()) - 1;
  SmallVector<Operation *> ops(block.ops.begin(), block.ops.end());
  llvm::sort(ops, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  auto dimOf = [&](Value v) -> std::optional<int64_t> {
    auto it = dims.find(v);
    if (it == dims.end())
      return std::nullopt;
    return it->second;
  };
  for (Operation *op : ops) {
    std::optional<int64_t> in = dimOf(op->getOperand(0));
    if (!in)
      return std::nullopt;
    int64_t rank = rankOf(op->getResult(0));
    std::optional<int64_t> out;
    if (auto split = dyn_cast<SplitOp>(op)) {
      // A split of each head's features (GPT-NeoX's query_key_value viewed
      // [B, H, S, 3 * D]) keeps the heads split; a split of a column's
      // output has its weight regrouped by rank.
      if (normalizeAxis(static_cast<int64_t>(split.getAxis()), rank) != *in)
        out = *in;
      else if (isa_and_present<LinearOp>(split.getInput().getDefiningOp()))
        out = rank - 1;
    } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      // The split dimension keeps what precedes it: its rows of elements
      // stay whole, so a rank's share stays contiguous.
      ArrayRef<int64_t> from = reshape.getInput().getType().getShape();
      ArrayRef<int64_t> to = reshape.getType().getShape();
      int64_t before = 1;
      for (int64_t d = 0; d < *in; ++d)
        before *= from[d];
      int64_t prefix = 1;
      for (int64_t d = 0; d < static_cast<int64_t>(to.size()); ++d) {
        if (prefix == before && to[d] > 1) {
          out = d;
          break;
        }
        prefix *= to[d];
      }
    } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      for (int64_t d = 0; d < static_cast<int64_t>(permutation.size()); ++d)
        if (permutation[d] == *in)
          out = d;
    } else if (auto slice = dyn_cast<SliceOp>(op)) {
      if (slice.getOffsets()[*in] == 0 && slice.getStrides()[*in] == 1 &&
          slice.getSizes()[*in] ==
              slice.getInput().getType().getDimSize(*in))
        out = *in;
    } else if (auto concat = dyn_cast<ConcatOp>(op)) {
      if (normalizeAxis(concat.getAxis(), rank) != *in &&
          llvm::all_of(concat.getInputs(),
                       [&](Value v) { return dimOf(v) == in; }))
        out = *in;
    } else if (auto rotary = dyn_cast<RotaryEmbeddingOp>(op)) {
      // Packed heads in the last dimension, or [B, H, S, D].
      if (*in == (rotary.getNumHeads() ? rank - 1 : 1))
        out = *in;
    } else if (auto attention = dyn_cast<AttentionOp>(op)) {
      if (dimOf(attention.getKey()) == rank - 1 &&
          dimOf(attention.getValue()) == rank - 1 && *in == rank - 1)
        out = *in;
    } else if (isa<RMSNormOp, LayerNormOp>(op)) {
      int64_t axis = isa<RMSNormOp>(op) ? cast<RMSNormOp>(op).getAxis()
                                        : cast<LayerNormOp>(op).getAxis();
      if (*in < normalizeAxis(axis, rank).value_or(rank - 1))
        out = *in; // a head's features stay on its rank
    } else if (auto quantize = dyn_cast<QuantizeOp>(op)) {
      // Its scale is a scalar, or one per row of rows split along their
      // length: every rank holds it whole.
      if (!quantize.isBlockScaled() ||
          (*in == rank - 1 &&
           quantize.getBlockLength() == lastDim(quantize.getInput())))
        out = *in;
    } else if (llvm::all_of(op->getOperands(), [&](Value v) {
                 return dimOf(v) == in || isScalarConstant(v);
               })) {
      out = *in; // elementwise
    }
    if (!out)
      return std::nullopt;
    for (Value result : op->getResults())
      dims[result] = *out;
  }
  for (LinearOp row : block.rows)
    if (dimOf(row.getInput()) != rankOf(row.getInput()) - 1)
      return std::nullopt;
  return dims;
}

/// Columns [begin, end) of a list of weight ranges, as ranges.
SmallVector<IndexRange> subRanges(ArrayRef<IndexRange> ranges, int64_t begin,
                                  int64_t end) {
  SmallVector<IndexRange> result;
  int64_t position = 0;
  for (IndexRange range : ranges) {
    int64_t lo = std::max(begin, position);
    int64_t hi = std::min(end, position + range.size);
    if (lo < hi)
      result.push_back({range.offset + lo - position, hi - lo});
    position += range.size;
  }
  return result;
}

int64_t totalSize(ArrayRef<IndexRange> ranges) {
  int64_t size = 0;
  for (IndexRange range : ranges)
    size += range.size;
  return size;
}

RankedTensorType withLastDim(Type type, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape.back() = size;
  return RankedTensorType::get(shape, tensor.getElementType());
}

struct AnnotateTensorParallelPass
    : mte::transformer::impl::AnnotateTensorParallelBase<
          AnnotateTensorParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (tpSize < 1) {
      module.emitError("tp-size must be at least 1, not ")
          << static_cast<int64_t>(tpSize);
      return signalPassFailure();
    }
    if (module.lookupSymbol(kGridName)) {
      module.emitError("the module already has a symbol '")
          << kGridName << "'";
      return signalPassFailure();
    }
    OpBuilder builder(module.getBodyRegion());
    shard::GridOp::create(builder, module.getLoc(), kGridName,
                          ArrayRef<int64_t>{tpSize});

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<Block> found;
      func.walk([&](LinearOp row) {
        if (std::optional<Block> block = findBlock(row))
          found.push_back(std::move(*block));
      });
      SmallVector<Block> blocks;
      for (Block &block : mergeBlocks(std::move(found)))
        if (std::optional<llvm::DenseMap<Value, int64_t>> dims =
                splitDims(block)) {
          block.dims = std::move(*dims);
          blocks.push_back(std::move(block));
        }
      for (Block &block : blocks)
        if (failed(splitBlock(block)))
          return signalPassFailure();
      numBlocks += blocks.size();
      FailureOr<bool> vocabulary =
          vocabParallel ? splitVocabulary(func) : FailureOr<bool>(false);
      if (failed(vocabulary))
        return signalPassFailure();
      if (vocabParallel && !*vocabulary && !blocks.empty())
        func.emitWarning("--tp-vocab: no embedding table gathered by a graph "
                         "input, and no LM head; the vocabulary stays whole");
      if (blocks.empty() && !*vocabulary) {
        func.emitWarning("--tp=")
            << static_cast<int64_t>(tpSize)
            << ": no block to split (column-parallel linears, attention or "
               "an activation, a row-parallel linear); every rank computes "
               "the whole model";
        continue;
      }
      if (sequenceParallel && failed(splitSequence(blocks)))
        return signalPassFailure();
      completeAnnotations(func);
    }
  }

  Value sharding(OpBuilder &builder, Location loc,
                 ArrayRef<SmallVector<shard::GridAxis>> splitAxes) {
    SmallVector<shard::GridAxesAttr> axes;
    for (ArrayRef<shard::GridAxis> dim : splitAxes)
      axes.push_back(builder.getDenseI16ArrayAttr(dim));
    return shard::ShardingOp::create(
        builder, loc, FlatSymbolRefAttr::get(builder.getContext(), kGridName),
        axes);
  }

  /// Split axes splitting dimension `dim` of a tensor over the grid.
  static SmallVector<SmallVector<shard::GridAxis>> splitDim(int64_t dim) {
    SmallVector<SmallVector<shard::GridAxis>> axes(dim + 1);
    axes[dim] = {0};
    return axes;
  }

  /// Annotates `v`, a value produced and read split along `dim`: its
  /// producer writes it split, its user reads it split.
  void annotateValue(Value v, int64_t dim) {
    OpBuilder builder(v.getContext());
    builder.setInsertionPointAfterValue(v);
    Location loc = v.getLoc();
    Value split = sharding(builder, loc, splitDim(dim));
    auto produced = shard::ShardOp::create(builder, loc, v, split);
    auto read = shard::ShardOp::create(builder, loc, produced, split,
                                       /*annotate_for_users=*/true);
    v.replaceAllUsesExcept(read, produced);
  }

  /// Annotates operand `operand` as read split along `dim`; its producer
  /// (a replicated constant) keeps it whole, so each rank slices it.
  void annotateOperand(OpOperand &operand, int64_t dim) {
    Operation *user = operand.getOwner();
    OpBuilder builder(user);
    Location loc = user->getLoc();
    Value split = sharding(builder, loc, splitDim(dim));
    auto read = shard::ShardOp::create(builder, loc, operand.get(), split,
                                       /*annotate_for_users=*/true);
    operand.set(read);
  }


  /// Whether `v` is one of `func`'s arguments, directly or through the
  /// index check mte-check-indices puts before a gather.
  static bool isGraphInput(Value v) {
    if (auto check = v.getDefiningOp<CheckIndicesOp>())
      v = check.getIndices();
    return isa<BlockArgument>(v);
  }

  /// --tp-vocab: the vocabulary split among the ranks. The vocabulary is
  /// the largest constant table [V, H] that a graph input (the token ids)
  /// gathers rows of: each of its gathers reads the rank's V / tp rows
  /// (Megatron's VocabParallelEmbedding: ids outside them read zeros, and
  /// an all-reduce sums the ranks' rows); each linear whose output the
  /// function returns with V columns (an LM head, tied to the table or
  /// not) is column-parallel over them, its logits all-gathered.
  /// Whether it split any; failure after an error.
  FailureOr<bool> splitVocabulary(func::FuncOp func) {
    int64_t tp = tpSize;
    SmallVector<GatherOp> embeddings;
    int64_t vocab = 0;
    func.walk([&](GatherOp gather) {
      auto type = cast<RankedTensorType>(gather.getData().getType());
      if (gather.getAxis() != 0 || type.getRank() != 2 ||
          !constantOperand(gather.getData()) ||
          !isGraphInput(gather.getIndices()))
        return;
      if (type.getDimSize(0) > vocab) {
        vocab = type.getDimSize(0);
        embeddings.clear();
      }
      if (type.getDimSize(0) == vocab)
        embeddings.push_back(gather);
    });
    // The LM heads, each with the casts between it and the return (a
    // narrow model's logits returned as f32).
    SmallVector<std::pair<LinearOp, SmallVector<Value>>> heads;
    func.walk([&](LinearOp linear) {
      // A linear of a split block reads an annotated weight.
      if (linear.getResidual() || !hasConstantParameters(linear) ||
          linear.getWeight().getDefiningOp<shard::ShardOp>() ||
          lastDim(linear.getOutput()) != vocab)
        return;
      SmallVector<Value> chain = {linear.getOutput()};
      while (chain.back().hasOneUse())
        if (auto cast = dyn_cast<CastOp>(*chain.back().getUsers().begin()))
          chain.push_back(cast.getResult());
        else
          break;
      if (llvm::all_of(chain.back().getUsers(), [](Operation *user) {
            return isa<func::ReturnOp>(user);
          }))
        heads.push_back({linear, std::move(chain)});
    });
    if (embeddings.empty() && heads.empty())
      return false;
    if (vocab % tp) {
      Operation *op = embeddings.empty()
                          ? heads.front().first.getOperation()
                          : embeddings.front().getOperation();
      op->emitError("tensor parallelism: a vocabulary of ")
          << vocab << " does not divide among --tp=" << tp << " ranks";
      return failure();
    }
    for (GatherOp gather : embeddings)
      annotateOperand(gather.getDataMutable(), 0);
    // Each head writes its columns, cast by column; the function returns
    // them all-gathered.
    for (auto &[head, chain] : heads) {
      annotateParameters(head);
      int64_t dim = head.getType().getRank() - 1;
      for (Value v : ArrayRef<Value>(chain).drop_back())
        annotateValue(v, dim);
      Value logits = chain.back();
      OpBuilder builder(head.getContext());
      builder.setInsertionPointAfterValue(logits);
      Location loc = logits.getLoc();
      auto produced = shard::ShardOp::create(
          builder, loc, logits, sharding(builder, loc, splitDim(dim)));
      auto read = shard::ShardOp::create(builder, loc, produced,
                                         sharding(builder, loc, {{}}),
                                         /*annotate_for_users=*/true);
      logits.replaceAllUsesExcept(read, produced);
    }
    numVocabSplit += embeddings.size() + heads.size();
    return true;
  }

  /// Whether `op` computes each token from the same token of its operands,
  /// so that it runs on a rank's tokens: elementwise ops, norms (whose
  /// normalised dimensions must not hold the tokens), and rowwise FP8's
  /// row maxima and their scales.
  static bool isTokenwise(Operation *op, int64_t dim) {
    if (isa<AddOp, SubOp, MulOp, DivOp, CastOp, QuantizeOp, GeluOp, SiluOp,
            ReluOp, TanhOp, SigmoidOp, ExpOp, NegOp>(op))
      return true;
    if (isa<BlockAmaxOp>(op))
      return dim < resultRankOf(op) - 1;
    if (auto scale = dyn_cast<Fp8ScaleOp>(op))
      return static_cast<bool>(scale.getAmax());
    int64_t axis;
    if (auto norm = dyn_cast<LayerNormOp>(op))
      axis = norm.getAxis();
    else if (auto norm = dyn_cast<RMSNormOp>(op))
      axis = norm.getAxis();
    else
      return false;
    int64_t rank = resultRankOf(op);
    return dim < normalizeAxis(axis, rank).value_or(rank - 1);
  }

  static int64_t resultRankOf(Operation *op) {
    return cast<RankedTensorType>(op->getResult(0).getType()).getRank();
  }

  /// The dimension of `operand` (read by an op of result rank `rank`, numpy
  /// broadcasting) that holds result dimension `dim`, if it has one of
  /// more than one element.
  static std::optional<int64_t> operandDim(Value operand, int64_t rank,
                                           int64_t dim) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return std::nullopt;
    int64_t d = dim - (rank - type.getRank());
    if (d < 0 || type.getDimSize(d) == 1)
      return std::nullopt;
    return d;
  }

  /// The token dimension a row-parallel output of `type` is split along:
  /// the one before the hidden dimension when it divides, else the last
  /// other leading one that does.
  std::optional<int64_t> tokenDim(RankedTensorType type) {
    int64_t tp = tpSize;
    for (int64_t d = type.getRank() - 2; d >= 0; --d)
      if (type.getDimSize(d) % tp == 0)
        return d;
    return std::nullopt;
  }

  /// Sequence parallelism: from each block's output, the values that ops
  /// working token by token compute are split along the tokens. Their
  /// readers get them split when they work token by token too, else whole
  /// (an all-gather); the other operands of a token-wise op that have
  /// every token are read as the rank's tokens (a slice).
  LogicalResult splitSequence(ArrayRef<Block> blocks) {
    llvm::MapVector<Value, int64_t> dims;
    // A row's output is reduce-scattered; its residual is read split.
    llvm::DenseSet<Operation *> tokenwise;
    for (const Block &block : blocks)
      for (LinearOp row : block.rows) {
        RankedTensorType type = row.getType();
        std::optional<int64_t> dim = tokenDim(type);
        if (!dim || type.getRank() < 2)
          return row.emitError("sequence parallelism: no dimension of the "
                               "output ")
                 << type << " but the hidden one divides among --tp="
                 << static_cast<int64_t>(tpSize) << " ranks";
        dims.insert({row.getOutput(), *dim});
        tokenwise.insert(row);
      }
    // Forward, in program order within each function: an op joins when
    // one of its operands is split, every split operand along the result
    // dimension `dim` with the result's rank and extent there (a row's
    // scale [..., 1] is broadcast along the others), and it works token by
    // token along `dim`.
    SmallVector<Value> worklist;
    for (auto &entry : dims)
      worklist.push_back(entry.first);
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      int64_t dim = dims.lookup(v);
      for (Operation *user : v.getUsers()) {
        if (tokenwise.contains(user) || !isTokenwise(user, dim))
          continue;
        int64_t rank = resultRankOf(user);
        auto resultType = cast<RankedTensorType>(user->getResult(0).getType());
        bool consistent = llvm::all_of(user->getOperands(), [&](Value operand) {
          auto it = dims.find(operand);
          if (it == dims.end())
            return true;
          auto type = cast<RankedTensorType>(operand.getType());
          return it->second == dim &&
                 type.getRank() == resultType.getRank() &&
                 type.getDimSize(dim) == resultType.getDimSize(dim);
        });
        if (!consistent || rank != resultType.getRank())
          continue;
        tokenwise.insert(user);
        for (Value result : user->getResults())
          if (isa<RankedTensorType>(result.getType()) &&
              dims.insert({result, dim}).second)
            worklist.push_back(result);
      }
    }

    // The producers write their values split; each reader reads them as
    // it runs.
    for (auto [v, dim] : dims) {
      OpBuilder builder(v.getContext());
      builder.setInsertionPointAfterValue(v);
      Location loc = v.getLoc();
      Value split = sharding(builder, loc, splitDim(dim));
      auto produced = shard::ShardOp::create(builder, loc, v, split);
      for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
        Operation *user = use.getOwner();
        if (user == produced)
          continue;
        // A row reads only its residual by tokens; an FP8 amax reads the
        // rank's tokens and MAX-reduces over the ranks.
        auto row = dyn_cast<LinearOp>(user);
        bool reads = (tokenwise.contains(user) &&
                      (!row || (row.getResidual() == v &&
                                &use == &row.getResidualMutable()[0]))) ||
                     isa<AmaxOp>(user);
        OpBuilder at(user);
        Value how = reads ? split : sharding(at, loc, {{}});
        use.set(shard::ShardOp::create(at, loc, produced, how,
                                       /*annotate_for_users=*/true));
      }
    }
    // The operands of token-wise ops that have every token, not split
    // yet: each rank reads its tokens.
    for (Operation *op : tokenwise) {
      int64_t rank = resultRankOf(op);
      Value result = op->getResult(0);
      int64_t dim = dims.lookup(result);
      for (OpOperand &operand : op->getOpOperands()) {
        Value value = operand.get();
        if (value.getDefiningOp<shard::ShardOp>())
          continue; // read split above
        if (auto linear = dyn_cast<LinearOp>(op))
          if (value != linear.getResidual())
            continue; // a row reads its input and weight as the block does
        std::optional<int64_t> d = operandDim(value, rank, dim);
        if (!d)
          continue;
        OpBuilder builder(op);
        Value split = sharding(builder, op->getLoc(), splitDim(*d));
        operand.set(shard::ShardOp::create(builder, op->getLoc(), value, split,
                                           /*annotate_for_users=*/true));
      }
    }
    numSequenceSplit += dims.size();
    return success();
  }

  /// shard-partition reads every tensor value through annotations: its
  /// producer's (the value's only use) and each user's. The values the
  /// blocks do not split are whole on every rank.
  void completeAnnotations(func::FuncOp func) {
    auto needs = [](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return type && type.getRank() > 0;
    };
    auto isShardOp = [](Operation *op) {
      return isa<shard::ShardDialect>(op->getDialect());
    };
    SmallVector<Value> values(func.getArguments());
    func.walk([&](Operation *op) {
      if (!isShardOp(op))
        llvm::append_range(values, op->getResults());
    });
    for (Value v : values) {
      if (!needs(v))
        continue;
      if (v.hasOneUse()) {
        auto shardOp = dyn_cast<shard::ShardOp>(*v.getUsers().begin());
        if (shardOp && !shardOp.getAnnotateForUsers())
          continue;
      }
      OpBuilder builder(v.getContext());
      builder.setInsertionPointAfterValue(v);
      Value whole = sharding(builder, v.getLoc(), {{}});
      auto produced = shard::ShardOp::create(builder, v.getLoc(), v, whole);
      v.replaceAllUsesExcept(produced, produced);
    }
    SmallVector<Operation *> users;
    func.walk([&](Operation *op) {
      if (!isShardOp(op) && !op->hasTrait<OpTrait::ConstantLike>())
        users.push_back(op);
    });
    for (Operation *op : users)
      for (OpOperand &operand : op->getOpOperands()) {
        if (!needs(operand.get()))
          continue;
        auto source = operand.get().getDefiningOp<shard::ShardOp>();
        if (source && source.getAnnotateForUsers())
          continue;
        OpBuilder builder(op);
        auto read = shard::ShardOp::create(builder, op->getLoc(),
                                           operand.get(), source.getSharding(),
                                           /*annotate_for_users=*/true);
        operand.set(read);
      }
  }

  /// A column-parallel linear reads its weight, its bias and its channels'
  /// FP8 scales split along N.
  void annotateParameters(LinearOp column) {
    bool kn = column.getWeightLayout() == WeightLayout::KN;
    annotateOperand(column.getWeightMutable(), kn ? 1 : 0);
    if (column.getBias())
      annotateOperand(column.getBiasMutable()[0], 0);
    if (column.isRowScaled())
      annotateOperand(column.getWeightScaleMutable()[0], 0);
  }

  /// Rebuilds `column` with its weight (and bias) columns taken from
  /// `parts`' ranges, regrouped by rank when there is more than one part,
  /// and replaces `split` (its user, when it has parts) by the exact split
  /// of the regrouped output. Returns the ops that now compute the
  /// column's parts.
  FailureOr<SmallVector<Operation *>>
  regroup(LinearOp column, SplitOp split,
          ArrayRef<SmallVector<IndexRange>> parts) {
    int64_t tp = tpSize;
    SmallVector<IndexRange> order;
    if (parts.size() == 1) {
      order.append(parts[0].begin(), parts[0].end());
    } else {
      for (int64_t r = 0; r < tp; ++r)
        for (ArrayRef<IndexRange> part : parts) {
          int64_t share = totalSize(part) / tp;
          llvm::append_range(order, subRanges(part, r * share, (r + 1) * share));
        }
    }
    bool kn = column.getWeightLayout() == WeightLayout::KN;
    int64_t rank = column.getType().getRank();
    ++numColumnLinears;
    if (!split && order.size() == 1 && order[0].offset == 0 &&
        order[0].size == lastDim(column.getOutput())) {
      annotateParameters(column);
      annotateValue(column.getOutput(), rank - 1);
      return SmallVector<Operation *>{column};
    }
    FailureOr<ElementsAttr> weight = gatherSlices(
        constantOperand(column.getWeight()), kn ? 1 : 0, order, "tp_weight");
    if (failed(weight))
      return column.emitError("tensor parallelism: the weight's data is not "
                              "loaded"),
             failure();
    FailureOr<ElementsAttr> bias;
    if (column.getBias()) {
      bias = gatherSlices(constantOperand(column.getBias()), 0, order, "tp_bias");
      if (failed(bias))
        return column.emitError("tensor parallelism: the bias's data is not "
                                "loaded"),
               failure();
    }
    // Rowwise FP8: the channels' scales follow their columns.
    Value weightScale = column.getWeightScale();
    if (column.isRowScaled()) {
      ElementsAttr scales;
      FailureOr<ElementsAttr> gathered = failure();
      if (matchPattern(weightScale, m_Constant(&scales)))
        gathered = gatherSlices(scales, 0, order, "tp_weight_scale");
      if (failed(gathered))
        return column.emitError("tensor parallelism: the weight's channel "
                                "scales are not a constant"),
               failure();
      OpBuilder builder(column);
      weightScale = arith::ConstantOp::create(builder, column.getLoc(),
                                              cast<TypedAttr>(*gathered));
    }
    OpBuilder builder(column);
    Location loc = column.getLoc();
    int64_t width = totalSize(order);
    RankedTensorType outType = withLastDim(column.getType(), width);
    Value newWeight =
        arith::ConstantOp::create(builder, loc, cast<TypedAttr>(*weight));
    Value newBias =
        column.getBias() ? Value(arith::ConstantOp::create(builder, loc,
                                               cast<TypedAttr>(*bias)))
             : Value();
    auto linear = LinearOp::create(
        builder, loc, outType, column.getInput(), newWeight, newBias,
        /*residual=*/nullptr, column.getInputScale(), weightScale,
        column.getWeightLayout(), column.getActivation());
    annotateParameters(linear);
    if (!split) {
      column.getOutput().replaceAllUsesWith(linear.getOutput());
      column.erase();
      annotateValue(linear.getOutput(), rank - 1);
      return SmallVector<Operation *>{linear};
    }

    // [..., width] -> [..., tp, width / tp] -> split -> [..., part].
    builder.setInsertionPoint(split);
    SmallVector<int64_t> viewShape(outType.getShape().drop_back());
    viewShape.push_back(tp);
    viewShape.push_back(width / tp);
    auto viewType = RankedTensorType::get(viewShape, outType.getElementType());
    Value view = ReshapeOp::create(builder, loc, viewType, linear.getOutput());
    SmallVector<int64_t> sizes;
    SmallVector<Type> pieceTypes;
    for (ArrayRef<IndexRange> part : parts) {
      sizes.push_back(totalSize(part) / tp);
      pieceTypes.push_back(withLastDim(viewType, sizes.back()));
    }
    auto pieces =
        SplitOp::create(builder, loc, pieceTypes, view, /*axis=*/rank, sizes);
    SmallVector<Operation *> ops = {linear, view.getDefiningOp(), pieces};
    SmallVector<Value> results;
    for (auto [piece, part] : llvm::zip_equal(pieces.getResults(), parts)) {
      auto whole = ReshapeOp::create(
          builder, loc, withLastDim(outType, totalSize(part)), piece);
      results.push_back(whole);
      ops.push_back(whole);
    }
    for (auto [old, replacement] :
         llvm::zip_equal(split.getResults(), results))
      old.replaceAllUsesWith(replacement);
    split.erase();
    column.erase();
    annotateValue(linear.getOutput(), rank - 1);
    annotateValue(view, rank - 1);
    for (Value piece : pieces.getResults())
      annotateValue(piece, rank - 1);
    for (Value result : results)
      annotateValue(result, rank - 1);
    return ops;
  }

  /// The columns of the weight of `column` that each part of its output
  /// (the results of its split user, or the whole output) comes from.
  static SmallVector<SmallVector<IndexRange>> columnParts(LinearOp column,
                                                          SplitOp split) {
    SmallVector<SmallVector<IndexRange>> parts;
    if (!split) {
      parts.push_back({{0, lastDim(column.getOutput())}});
      return parts;
    }
    int64_t offset = 0;
    for (int64_t size : split.getSizes()) {
      parts.push_back({{offset, size}});
      offset += size;
    }
    return parts;
  }

  /// Where a key or value the attention reads comes from: a part of a
  /// column's output, through `ops` (the block's ops between: rotary
  /// embeddings, per-head norms, head views, slices and concatenations of
  /// a partial rotary embedding, casts), in program order.
  struct Source {
    LinearOp column;
    unsigned part = 0;
    SmallVector<Operation *> ops;
  };

  /// The source of `v`, or an error at the op that keeps its heads from
  /// being replicated.
  static FailureOr<Source> traceSource(Value v, const Block &block,
                                       Operation *attention) {
    Source source;
    std::optional<std::pair<Operation *, unsigned>> root;
    llvm::SetVector<Operation *> ops;
    SmallVector<Value> worklist = {v};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      Operation *def = value.getDefiningOp();
      std::pair<Operation *, unsigned> here;
      auto split = dyn_cast_if_present<SplitOp>(def);
      if (split && split.getInput().getDefiningOp<LinearOp>()) {
        here = {split.getInput().getDefiningOp(),
                cast<OpResult>(value).getResultNumber()};
      } else if (auto linear = dyn_cast_if_present<LinearOp>(def)) {
        here = {linear, 0};
      } else if (isa_and_present<CastOp, RotaryEmbeddingOp, ReshapeOp,
                                 TransposeOp, RMSNormOp, LayerNormOp, SliceOp,
                                 ConcatOp>(def) &&
                 block.ops.contains(def)) {
        if (ops.insert(def)) {
          if (isa<ConcatOp>(def))
            llvm::append_range(worklist, def->getOperands());
          else
            worklist.push_back(def->getOperand(0));
        }
        continue;
      } else {
        return (def ? def : attention)->emitError(
                   "tensor parallelism: cannot replicate key/value heads "
                   "computed by this op"),
               failure();
      }
      if (root && *root != here)
        return attention->emitError("tensor parallelism: cannot replicate "
                                    "key/value heads joined from two "
                                    "projected parts"),
               failure();
      root = here;
    }
    source.column = cast<LinearOp>(root->first);
    source.part = root->second;
    source.ops.assign(ops.begin(), ops.end());
    llvm::sort(source.ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return source;
  }

  LogicalResult splitBlock(Block &block) {
    int64_t tp = tpSize;
    // Which parts of which column need key/value heads replicated.
    llvm::DenseMap<Operation *, SmallVector<SmallVector<IndexRange>>> plans;
    auto planFor = [&](LinearOp column) -> SmallVector<SmallVector<IndexRange>> & {
      auto it = plans.find(column);
      if (it == plans.end()) {
        SplitOp split = column->hasOneUse()
                            ? dyn_cast<SplitOp>(*column->getUsers().begin())
                            : SplitOp();
        it = plans.try_emplace(column, columnParts(column, split)).first;
      }
      return it->second;
    };
    for (LinearOp column : block.columns)
      planFor(column);

    for (Operation *op : block.ops) {
      auto attention = dyn_cast<AttentionOp>(op);
      if (!attention)
        continue;
      int64_t heads = attention.getNumHeads();
      int64_t kvHeads = attention.getNumKvHeads();
      if (heads % tp)
        return attention.emitError("tensor parallelism: ")
               << heads << " attention heads do not divide among --tp=" << tp
               << " ranks";
      if (kvHeads % tp == 0)
        continue;
      if (tp % kvHeads)
        return attention.emitError("tensor parallelism: ")
               << kvHeads << " key/value heads neither divide among nor "
               << "divide --tp=" << tp << " ranks";
      // Replicate each key/value head tp / kvHeads times (vLLM): head j of
      // the result is head j / factor, which query head h, j = h * tp /
      // heads, reads in both layouts. The values between the column and
      // the attention (rotary embeddings, per-head norms, head views,
      // casts) grow along their split dimension: the heads of a view, the
      // packed features of a [B, S, H * D] value.
      int64_t factor = tp / kvHeads;
      for (Value operand : {attention.getKey(), attention.getValue()}) {
        FailureOr<Source> source = traceSource(operand, block, attention);
        if (failed(source))
          return failure();
        SmallVector<IndexRange> &ranges = planFor(source->column)[source->part];
        int64_t width = totalSize(ranges);
        int64_t headDim = width / kvHeads;
        // Each value must hold the heads along its split dimension: a
        // view's heads, or a packed [B, S, H * D] value's features (with
        // one head, a [B, S, 1, D] view splits D and cannot grow).
        for (Operation *op : source->ops) {
          Value result = op->getResult(0);
          auto type = cast<RankedTensorType>(result.getType());
          int64_t dim = block.dims.lookup(result);
          bool packed = dim == type.getRank() - 1 && type.getRank() <= 3;
          if (type.getDimSize(dim) != (packed ? width : kvHeads))
            return op->emitError("tensor parallelism: cannot replicate the ")
                   << kvHeads << " key/value heads of " << type
                   << " (split along dimension " << dim << ")";
        }
        SmallVector<IndexRange> replicated;
        for (int64_t g = 0; g < kvHeads; ++g)
          for (int64_t i = 0; i < factor; ++i)
            llvm::append_range(replicated, subRanges(ranges, g * headDim,
                                                     (g + 1) * headDim));
        ranges = std::move(replicated);
        for (Operation *op : source->ops) {
          Value result = op->getResult(0);
          int64_t dim = block.dims.lookup(result);
          auto type = cast<RankedTensorType>(result.getType());
          SmallVector<int64_t> shape(type.getShape());
          shape[dim] *= factor;
          result.setType(type.clone(shape));
          if (auto rotary = dyn_cast<RotaryEmbeddingOp>(op)) {
            if (std::optional<uint64_t> heads = rotary.getNumHeads())
              rotary.setNumHeads(*heads * factor);
          } else if (auto slice = dyn_cast<SliceOp>(op)) {
            // Whole along the split dimension (splitDims).
            SmallVector<int64_t> sizes(slice.getSizes());
            sizes[dim] = shape[dim];
            slice.setSizes(sizes);
          }
        }
      }
      attention.setNumKvHeads(tp);
      ++numReplicatedKv;
    }

    // Every width must divide among the ranks.
    for (LinearOp column : block.columns)
      for (ArrayRef<IndexRange> part : planFor(column))
        if (totalSize(part) % tp)
          return column.emitError("tensor parallelism: an output of ")
                 << totalSize(part) << " columns does not divide among --tp="
                 << tp << " ranks";
    for (Operation *op : block.ops) {
      if (auto rotary = dyn_cast<RotaryEmbeddingOp>(op)) {
        int64_t heads = rotary.getNumHeads()
                            ? *rotary.getNumHeads()
                            : rotary.getInput().getType().getDimSize(1);
        if (heads % tp)
          return rotary.emitError("tensor parallelism: ")
                 << heads << " heads do not divide among --tp=" << tp
                 << " ranks";
      }
      // A view's split dimension (heads) must divide too.
      if (isa<ReshapeOp, TransposeOp>(op)) {
        Value result = op->getResult(0);
        int64_t size = cast<RankedTensorType>(result.getType())
                           .getDimSize(block.dims.lookup(result));
        if (size % tp)
          return op->emitError("tensor parallelism: a dimension of ")
                 << size << " (heads) does not divide among --tp=" << tp
                 << " ranks";
      }
    }

    // Rebuild the columns (replacing their splits), then annotate the
    // values between and the row's operands.
    for (LinearOp column : block.columns) {
      SplitOp split = column->hasOneUse()
                          ? dyn_cast<SplitOp>(*column->getUsers().begin())
                          : SplitOp();
      SmallVector<SmallVector<IndexRange>> parts = plans.lookup(column);
      if (split)
        block.ops.remove(split);
      if (failed(regroup(column, split, parts)))
        return failure();
    }
    for (Operation *op : block.ops)
      for (Value result : op->getResults())
        annotateValue(result, block.dims.lookup(result));
    for (LinearOp row : block.rows) {
      bool kn = row.getWeightLayout() == WeightLayout::KN;
      annotateOperand(row.getWeightMutable(), kn ? 0 : 1);
    }
    return success();
  }
};

} // namespace
