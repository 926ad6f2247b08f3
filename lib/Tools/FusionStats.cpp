//===- FusionStats.cpp - the fusions visible in a module ------------------===//

#include "mte/Tools/FusionStats.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mte::transformer;

/// The split along the last axis into `parts` that is the only user of
/// `linear`, as a horizontal fusion leaves it.
static SplitOp splitOfLinear(LinearOp linear, unsigned parts) {
  if (!linear->hasOneUse())
    return nullptr;
  auto split = dyn_cast<SplitOp>(*linear->user_begin());
  int64_t rank = linear.getOutput().getType().getRank();
  if (!split || split->getNumResults() != parts ||
      normalizeAxis(split.getAxis(), rank) != rank - 1)
    return nullptr;
  return split;
}

/// Whether both halves of `split` feed one gated activation (SwiGLU or
/// GeGLU): a merged gate/up projection.
static bool feedsGatedActivation(SplitOp split) {
  return llvm::any_of(split->getUsers(), [&](Operation *user) {
    Value gate, up;
    if (auto swiglu = dyn_cast<SwigluOp>(user))
      gate = swiglu.getGate(), up = swiglu.getUp();
    else if (auto geglu = dyn_cast<GegluOp>(user))
      gate = geglu.getGate(), up = geglu.getUp();
    return gate && gate.getDefiningOp() == split && up.getDefiningOp() == split;
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
  return result;
}
