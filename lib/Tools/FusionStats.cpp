//===- FusionStats.cpp - the fusions visible in a module ------------------===//

#include "mte/Tools/FusionStats.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/DeviceGrid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mte::transformer;

/// The split along the last axis into `parts` that is the only user of
/// `linear`, as a horizontal fusion leaves it.
static SplitOp splitOfLinear(LinearOp linear, unsigned parts) {
  if (!linear->hasOneUse())
    return nullptr;
  Operation *user = *linear->user_begin();
  // Under tensor parallelism the split cuts a [..., ranks, N / ranks] view.
  if (auto view = dyn_cast<ReshapeOp>(user); view && view->hasOneUse())
    user = *view->user_begin();
  auto split = dyn_cast<SplitOp>(user);
  if (!split)
    return nullptr;
  int64_t rank = split.getInput().getType().getRank();
  if (split->getNumResults() != parts ||
      normalizeAxis(split.getAxis(), rank) != rank - 1)
    return nullptr;
  return split;
}

/// Whether both halves of `split` feed one gated activation (SwiGLU or
/// GeGLU): a merged gate/up projection.
/// The op defining `v`, seen through the reshape that tensor parallelism
/// puts after a split.
static Operation *definingOpThroughView(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto view = dyn_cast_if_present<ReshapeOp>(def))
    return view.getInput().getDefiningOp();
  return def;
}

static bool feedsGatedActivation(SplitOp split) {
  SmallVector<Operation *> users;
  for (Operation *user : split->getUsers())
    if (isa<ReshapeOp>(user) && user->hasOneUse())
      users.push_back(*user->user_begin());
    else
      users.push_back(user);
  return llvm::any_of(users, [&](Operation *user) {
    Value gate, up;
    if (auto swiglu = dyn_cast<SwigluOp>(user))
      gate = swiglu.getGate(), up = swiglu.getUp();
    else if (auto geglu = dyn_cast<GegluOp>(user))
      gate = geglu.getGate(), up = geglu.getUp();
    return gate && definingOpThroughView(gate) == split &&
           definingOpThroughView(up) == split;
  });
}

static bool writesOtherType(Value input, Value output) {
  return cast<RankedTensorType>(input.getType()).getElementType() !=
         cast<RankedTensorType>(output.getType()).getElementType();
}

llvm::SmallVector<mte::FusionCount> mte::countFusions(Operation *root) {
  llvm::StringMap<int64_t> counts;
  root->walk([&](Operation *op) {
    if (isa<LayerNormOp, RMSNormOp, AttentionOp, RotaryEmbeddingOp, GeluOp,
            SiluOp, SwigluOp, GegluOp>(op))
      ++counts[op->getName().stripDialect()];
    // Tensor parallelism: where the ranks meet (one sum per row-parallel
    // linear; under sequence parallelism a reduce-scatter, and an
    // all-gather before each column-parallel group).
    if (isa<shard::AllReduceOp>(op))
      ++counts["all_reduce"];
    if (isa<shard::ReduceScatterOp>(op))
      ++counts["reduce_scatter"];
    if (isa<shard::AllGatherOp>(op))
      ++counts["all_gather"];
    // Pipeline parallelism: stage functions, and their hand-offs (one per
    // value and micro-batch) and output broadcasts.
    if (isa<func::FuncOp>(op) &&
        op->hasAttr(transformer::kPipelineStageAttrName))
      ++counts["pipeline_stage"];
    if (isa<shard::SendOp>(op))
      ++counts["send"];
    if (isa<shard::BroadcastOp>(op))
      ++counts["broadcast"];
    if (auto linear = dyn_cast<LinearOp>(op)) {
      // Recognised patterns are counted where a fusion absorbed them too:
      // each projection of a horizontal group, each activation epilogue.
      ++counts["gemm"];
      SplitOp triple = splitOfLinear(linear, 3);
      SplitOp pair = splitOfLinear(linear, 2);
      counts["linear"] += triple ? 3 : pair ? 2 : 1;
      counts["qkv"] += static_cast<bool>(triple);
      counts["gate_up"] += pair && feedsGatedActivation(pair);
      Activation act = linear.getActivation();
      counts["bias_activation"] += act != Activation::None;
      counts["gelu"] += act == Activation::Gelu || act == Activation::GeluTanh;
      counts["silu"] += act == Activation::Silu;
      counts["residual"] += static_cast<bool>(linear.getResidual());
      counts["fp8_gemm"] +=
          isFp8Type(linear.getInput().getType().getElementType());
      counts["fp8_output"] += linear.hasFp8Output();
      counts["fp8_skipped"] += linear->hasAttr(
          TransformerDialect::getFp8SkippedAttrName());
    }
    auto countNorm = [&](auto norm) {
      counts["residual"] += static_cast<bool>(norm.getResidual());
      counts["norm_linear"] +=
          writesOtherType(norm.getInput(), norm.getOutput());
    };
    if (auto norm = dyn_cast<LayerNormOp>(op))
      countNorm(norm);
    else if (auto norm = dyn_cast<RMSNormOp>(op))
      countNorm(norm);
  });
  llvm::SmallVector<FusionCount> result;
  for (StringRef kind :
       {"layer_norm", "rms_norm", "linear", "attention", "rotary_embedding",
        "gelu", "silu", "swiglu", "geglu", "qkv", "gate_up", "bias_activation",
        "residual", "norm_linear", "gemm", "fp8_gemm", "fp8_skipped"})
    result.push_back({kind, counts.lookup(kind)});
  // Only delayed-scaling FP8 models have GEMMs writing E4M3, and only
  // sharded models collectives.
  for (StringRef kind : {"fp8_output", "all_reduce", "reduce_scatter", "all_gather",
                         "pipeline_stage", "send", "broadcast"})
    if (int64_t n = counts.lookup(kind))
      result.push_back({kind, n});
  return result;
}
