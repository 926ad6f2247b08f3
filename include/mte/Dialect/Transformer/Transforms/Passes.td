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
