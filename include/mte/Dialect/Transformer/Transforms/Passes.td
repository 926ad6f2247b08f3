//===- Passes.td - transformer dialect passes --------------*- tablegen -*-===//

#ifndef MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
#define MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckStaticShapes : Pass<"mte-check-static-shapes", "::mlir::func::FuncOp"> {
  let summary = "Rejects functions whose tensors are not fully static";
  let description = [{
    mte plans memory and picks kernels at compile time, so every tensor in a
    function must have a static shape once import and shape folding are done.
    This pass reports each value that does not, at the location of the op
    that defines it (the ONNX node, for imported models), with a hint to
    specialise the symbolic input dimensions.
  }];
}

def RecognizeRotaryEmbedding
    : Pass<"mte-recognize-rotary-embedding", "::mlir::func::FuncOp"> {
  let summary = "Form transformer.rotary_embedding from x*cos + rotate_half(x)*sin";
  let description = [{
    Matches `x * cos + rotate_half(x) * sin` (either order of every sum and
    product) on a rank-4 `x`, where `rotate_half(x)` is
    `concat(-x[..., D/2:], x[..., :D/2])` along the last axis (the
    Slice/Neg/Concat of both PyTorch exporters) and `cos`/`sin` broadcast
    over batch and heads as `[B or 1, 1, S, D]` (heads before the sequence)
    or `[B or 1, S, 1, D]`. The tables become full-width operands of the op.
    When `x` is the head split `transpose(reshape(p), [0, 2, 1, 3])` of a
    packed projection `p`, the op is applied to `p` with `num_heads`, so the
    attention recognizer sees the projection. The slices, the negation and
    the concat must have no other user.
  }];
  let statistics = [
    Statistic<"numRotary", "rotary_embedding",
              "Number of rotary embeddings formed">
  ];
}

def RecognizeAttention
    : Pass<"mte-recognize-attention", "::mlir::func::FuncOp"> {
  let summary = "Form transformer.attention from Q·Kᵀ, scale, mask, softmax, ·V";
  let description = [{
    Matches `softmax(scores, -1) · V` (also behind the `where(is_nan(p), 0,
    p)` guard of PyTorch's SDPA export) where `scores` is `Q · Kᵀ` followed
    by any of a constant scale (`*` or `/`), an additive mask and a
    `where(mask, s, -big)` / `where(mask, -big, s)` mask, and `Q` and `Kᵀ`
    may each be pre-multiplied by a constant (the SDPA form). `Kᵀ` may be
    `transpose(K, [0, 1, 3, 2])`, the head split transposed by
    `[0, 2, 3, 1]`, or the `[B*H, S, D]` transpose of the dynamo exporter;
    `K` and `V` may repeat fewer KV heads through Unsqueeze/Expand/Reshape
    (GQA). A mask that does not depend on the model's inputs and hides
    exactly the keys after the (bottom-right aligned) diagonal becomes the
    `causal` flag, however it was built (constant, Trilu, Range + compare,
    slices of a buffer); other masks become the op's mask operand. Every
    value between Q·Kᵀ and the output must have no other user.
  }];
  let statistics = [
    Statistic<"numAttention", "attention", "Number of attentions formed">,
    Statistic<"numCausal", "causal", "Number with a causal mask recognised">,
    Statistic<"numGroupedQuery", "gqa",
              "Number with fewer key/value heads than query heads">
  ];
}

def RecognizeLinear : Pass<"mte-recognize-linear", "::mlir::func::FuncOp"> {
  let summary = "Form transformer.linear from MatMul (+ bias Add) and Gemm";
  let description = [{
    Rewrites `matmul(x, W)` with a rank-2 `W` into `linear` with weight
    layout `kn`, and `matmul(x, transpose(W, [1, 0]))` (Gemm with transB, as
    the importer spells it) into layout `nk`. A following `add` of a bias
    that broadcasts as `[N]` is folded into the linear when the product has
    no other user.
  }];
  let statistics = [
    Statistic<"numLinear", "linear", "Number of linear ops formed">,
    Statistic<"numBias", "linear_bias", "Number of bias adds folded in">
  ];
}

def RecognizeLayerNorm
    : Pass<"mte-recognize-layer-norm", "::mlir::func::FuncOp"> {
  let summary = "Form transformer.layer_norm from its decomposed form";
  let description = [{
    Matches `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma +
    beta` over the trailing dimensions, with the square as `pow(d, 2)` or
    `mul(d, d)` and the normalisation as `div` by the root, `mul` by its
    reciprocal or `mul` by `rsqrt`. The means must reduce the same trailing
    axes with keepdims, `eps` must be a constant scalar, `gamma` and `beta`
    constants of the normalised shape, and every intermediate must have no
    other user.
  }];
  let statistics = [
    Statistic<"numLayerNorm", "layer_norm", "Number of layer norms formed">
  ];
}

def RecognizeRMSNorm : Pass<"mte-recognize-rms-norm", "::mlir::func::FuncOp"> {
  let summary = "Form transformer.rms_norm from its decomposed form";
  let description = [{
    Matches `x / sqrt(mean(x^2) + eps) * weight` over the trailing
    dimensions, with the square as `pow(x, 2)` or `mul(x, x)` and the
    normalisation as `div` by the root, or `mul` by `reciprocal(sqrt)`,
    `div(1, sqrt)` (the TorchScript export of rsqrt) or `rsqrt`. `eps` must
    be a constant scalar, `weight` a constant of the normalised shape, and
    every intermediate must have no other user (the input may have many).
  }];
  let statistics = [
    Statistic<"numRMSNorm", "rms_norm", "Number of RMS norms formed">
  ];
}

def RecognizeGelu : Pass<"mte-recognize-gelu", "::mlir::func::FuncOp"> {
  let summary = "Form transformer.gelu from its erf and tanh spellings";
  let description = [{
    Matches the product `0.5 * x * (1 + inner)`, its factors in any order
    and association, where `inner` is `erf(x / sqrt(2))` or
    `erf(x * (1 / sqrt(2)))` (exact GELU), or
    `tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))` with the cube as `pow(x, 3)`
    or `x * x * x` (the tanh approximation of GPT-2). Constants must match to
    a relative 1e-4, and every intermediate must have no other user.
  }];
  let statistics = [Statistic<"numGelu", "gelu", "Number of GELUs formed">];
}

def RecognizeSilu : Pass<"mte-recognize-silu", "::mlir::func::FuncOp"> {
  let summary = "Form transformer.silu and transformer.swiglu";
  let description = [{
    Rewrites `x * sigmoid(x)` (either order) into `silu(x)`, and then
    `silu(gate) * up` into `swiglu(gate, up)`, the gated MLP of Llama. The
    sigmoid and the silu must have no other user.
  }];
  let statistics = [
    Statistic<"numSilu", "silu", "Number of SiLUs formed">,
    Statistic<"numSwiglu", "swiglu", "Number of SwiGLUs formed">
  ];
}

#endif // MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
