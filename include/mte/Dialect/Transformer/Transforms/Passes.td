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

def RecognizePatchEmbedding
    : Pass<"mte-recognize-patch-embedding", "::mlir::func::FuncOp"> {
  let summary = "Form transformer.linear from a Conv whose kernel tiles its "
                "input";
  let description = [{
    A `conv` with stride = kernel in every spatial dimension, no padding,
    no dilation and one group, over an input its kernel tiles exactly
    (ViT's patch embedding), becomes a `linear` over the patches: the
    input reshaped to `[N, C, P1, K1, ..]`, transposed to
    `[N, P1, .., C, K1, ..]` and viewed as `[N, P, C * K]`, times the
    weight viewed as `[M, C * K]` (layout `nk`) plus the bias, then back to
    `[N, M, P1, ..]`.
  }];
  let statistics = [
    Statistic<"numPatch", "patch_embedding",
              "Number of convolutions formed into linears">
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
  let summary = "Form transformer.gelu from its erf and tanh spellings, and geglu";
  let description = [{
    Matches the product `0.5 * x * (1 + inner)`, its factors in any order
    and association, where `inner` is `erf(x / sqrt(2))` or
    `erf(x * (1 / sqrt(2)))` (exact GELU), or
    `tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))` with the cube as `pow(x, 3)`
    or `x * x * x` (the tanh approximation of GPT-2). Constants must match to
    a relative 1e-4 of the value the constant's type holds (a float16
    model's 0.044715 is 0.044708), and every intermediate must have no
    other user. Then `gelu(gate) * up` becomes `geglu(gate, up)`, the gated
    MLP of Gemma and T5 v1.1, when the gelu has no other user.
  }];
  let statistics = [
    Statistic<"numGelu", "gelu", "Number of GELUs formed">,
    Statistic<"numGeglu", "geglu", "Number of GeGLUs formed">
  ];
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

// Fusion

def FuseHorizontalLinear
    : Pass<"mte-fuse-horizontal-linear", "::mlir::func::FuncOp"> {
  let summary = "Merge linears that read the same input into one GEMM";
  let description = [{
    Two or more `linear` ops of one block that read the same `input`, with
    constant weights of the same layout and element type, all with a
    constant bias or all without, no activation and no residual, become one
    `linear` over the weights concatenated along N (rows for layout `nk`,
    columns for `kn`; the bytes are copied, so every element type
    concatenates exactly) and the biases likewise, followed by a `split`
    along the last axis that yields the original results. This is the QKV
    fusion (the widths may differ, as K and V are narrower under GQA) and
    Llama's gate/up pair: one GEMM reads the input once and fills the GPU
    better than several narrow ones.
  }];
  let statistics = [
    Statistic<"numGroups", "horizontal_groups",
              "Number of fused groups of linears">,
    Statistic<"numLinears", "horizontal_linears",
              "Number of linears merged into a group">
  ];
}

def FuseBiasActivation
    : Pass<"mte-fuse-bias-activation", "::mlir::func::FuncOp"> {
  let summary = "Fold an activation into the epilogue of its linear";
  let description = [{
    Rewrites `gelu(linear)` (exact or tanh), `silu(linear)` and
    `relu(linear)` into the linear with that `activation`, when the linear
    has none yet, no residual, and the activation is its only user. The
    GEMM then applies bias and activation in its epilogue (cuBLASLt's
    GELU_BIAS, for instance) instead of a second pass over the output.
    `swiglu` reads two GEMM outputs and stays a separate op.
  }];
  let statistics = [
    Statistic<"numActivation", "activation",
              "Number of activations folded into a linear">
  ];
}

def FuseResidual : Pass<"mte-fuse-residual", "::mlir::func::FuncOp"> {
  let summary = "Fold residual adds into a linear or into the next norm";
  let description = [{
    Rewrites `add(linear, r)` (either order), where the linear has no other
    user and no residual yet and `r` has its result type, into the linear
    with `residual` `r`: the GEMM adds it in its epilogue (C with beta = 1).
    Of the adds that remain, `layer_norm(add(a, b))` and
    `rms_norm(add(a, b))` with `a` and `b` of the add's type become the norm
    with `input = a, residual = b`, whose `residual_sum` result replaces the
    other uses of the add (pre-LN blocks add it to the next residual). A
    norm leaves an add alone that a linear can take, so the outcome does not
    depend on the order the ops are visited in.
  }];
  let statistics = [
    Statistic<"numLinearResidual", "residual_linear",
              "Number of residual adds folded into a linear">,
    Statistic<"numNormResidual", "residual_norm",
              "Number of residual adds folded into a norm">
  ];
}

def FuseLinearFP8Output
    : Pass<"mte-fuse-linear-fp8-output", "::mlir::func::FuncOp"> {
  let summary = "Make an FP8 GEMM write the E4M3 input of the next one";
  let description = [{
    Rewrites `q = quantize(linear(...), s) {multiply}` and `a = amax(linear(...))`
    into one linear with `output_scale s` writing `q` and its
    `output_amax` `a`: cuBLASLt's D scale and `AMAX_D`, where the 16-bit
    output was written, read again for the amax and read again for the
    cast (delayed scaling's FC1 -> GELU -> FC2; TransformerEngine's GEMM
    with an FP8 output). The linear must be one a cuBLASLt epilogue
    computes with an E4M3 D: fp8 operands with per-tensor scales, a bf16
    or f16 output, no activation but ReLU or tanh-GELU, and no activation
    together with a residual (cuBLASLt adds C before the activation). The
    quantize must multiply by a per-tensor scale computed before the linear
    (delayed scaling's; current scaling's comes from this amax) and
    saturate, and nothing else may read the 16-bit output. The output is
    then rounded once, from f32, instead of to 16 bits first.

    It runs after tensor and pipeline parallelism: an amax whose MAX
    all-reduce over the TP group follows keeps it, now reading the GEMM's.
  }];
  let statistics = [
    Statistic<"numFused", "fp8_output_gemm",
              "Number of linears that write E4M3 and their amax">
  ];
}

def FuseNormLinear : Pass<"mte-fuse-norm-linear", "::mlir::func::FuncOp"> {
  let summary = "Make a norm write the element type its GEMMs read";
  let description = [{
    When every user of a `layer_norm` or `rms_norm` output is a `cast` to
    one narrower float type T (bf16, f16 or fp8 from f32, say), and every
    user of those casts is a `linear` reading it as its `input`, the norm's
    output becomes T and the casts go away: the norm rounds once, in its
    epilogue, and writes half (or a quarter) of the bytes the GEMM then
    reads. The `residual_sum` result keeps the input type.
  }];
  let statistics = [
    Statistic<"numNormLinear", "norm_linear",
              "Number of norms that now write their GEMMs' input type">
  ];
}

def CheckIndices : Pass<"mte-check-indices", "::mlir::func::FuncOp"> {
  let summary = "Guard the indices of gathers and scatters against out-of-range values";
  let description = [{
    ONNX makes an out-of-range index an error, and an inference server must
    not read outside a table because a client sent a bad token id. For each
    `gather`, `gather_elements`, `gather_nd` and `scatter_nd`:

    * constant indices are checked here, and one out of range is an error
      at the op;
    * other indices go through a `transformer.check_indices`, whose clamped
      result the op reads, so no value makes it read or write outside its
      operand. Unless `clamp` is set, the function returns the checks'
      statuses as one more result, a `tensor<Nx3xi64>` marked
      `transformer.index_status`, and lists what each row checks in its
      `transformer.index_checks` attribute (`#transformer.index_check`: the
      ONNX op, its node, the graph input the indices come from); the runtime
      fails a run whose status has an invalid index, naming them.

    With `clamp`, out-of-range indices are clamped into range silently.
  }];
  let dependentDialects = ["::mte::transformer::TransformerDialect"];
  let options = [
    Option<"clamp", "clamp", "bool", "false",
           "Clamp out-of-range indices instead of reporting them">
  ];
  let statistics = [
    Statistic<"numChecks", "checks", "Number of index operands guarded">
  ];
}

def ConvertPrecision : Pass<"mte-convert-precision", "::mlir::func::FuncOp"> {
  let summary = "Run a float32 model in bf16 or f16, weights converted at compile time";
  let description = [{
    Converts the float32 weights of a function (constants a `linear` reads
    as weight or bias, a norm as gain or bias, a `gather` as its table) to
    `precision`, rounding to nearest even at compile time, and lets the
    narrow type flow: an op with a narrow float operand computes in the
    narrow type, its other f32 operands cast to it (constants converted in
    place) and its f32 results retyped; an explicit `cast` of a narrow value
    to f32 keeps it narrow. Values that meet no weight keep f32: index
    arithmetic, rotary tables and masks built from positions (whatever the
    size of their constants: positions past 256 are not integers in bf16)
    are computed in f32 and rounded only where they meet the activations,
    as PyTorch's bf16 models do. The function's signature does not change:
    f32 results are cast back at the return.

    The lowering computes normalisations, softmax, attention and GEMM
    accumulation in f32 internally whatever the storage type, so this
    changes the storage (and rounding between ops), not the reductions.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "The narrow float type: bf16 or f16">
  ];
  let statistics = [
    Statistic<"numWeights", "weights", "Number of weights converted">,
    Statistic<"numOps", "ops", "Number of ops that now compute narrow">
  ];
}

def InsertFP8Casts : Pass<"mte-insert-fp8-casts", "::mlir::func::FuncOp"> {
  let summary = "Run the linears where FP8 pays as E4M3 GEMMs";
  let description = [{
    For each `linear` on f32 or bf16 with a constant weight, K and N
    multiples of 16 (the 16-byte rows FP8 GEMMs need) and at least
    `min-macs` multiply-adds (M * N * K; below it the activation's amax and
    quantize passes cost more than the faster GEMM saves):

    * the weight is quantized at compile time to E4M3 with one scale,
      `amax(W) / 448` (1 when the amax is 0 or not finite), rounding to
      nearest even and saturating, and stored `[N, K]`;
    * the input is quantized on every run. With `recipe=current`, current
      scaling: `amax(x)` (`transformer.amax`), scale `amax / 448`, or 1
      when the amax is 0, infinite or NaN (TransformerEngine's
      Float8CurrentScaling). With `recipe=delayed`, delayed scaling
      (TransformerEngine's DelayedScaling): the function gains two model
      states, `fp8.amax_history` `[amax-history, T]` and `fp8.scale` `[T]`
      for its T quantised inputs (arguments marked `transformer.state`,
      their next values results marked `transformer.next_state`); each
      input is quantized times `fp8.scale[t]` (1 at first, as TE starts;
      the run's amax only updates it for the next run), and one
      `transformer.fp8_scale_update` records every amax of the run and
      computes the next scales with `margin` and `amax-algorithm`. The
      function must be public and not called (its signature changes);
    * the linear reads both with their scales (`input_scale`,
      `weight_scale`) and writes its output type as before.

    With `recipe=block` (TransformerEngine's Float8BlockScaling, on
    cuBLASLt's VEC128 and BLK128x128 scale modes), the scales are per block
    and powers of two: the weight gets one per 128 x 128 block
    (`[ceil(N / 128), K / 128]`), the input one per 1 x 128 block of its rows
    on every run (`transformer.block_amax`, then `transformer.fp8_scale
    {power_of_two}`: 448 / amax rounded down to a power of two, 1 for an
    amax of 0, inf or NaN). K must be a multiple of 128 (a linear whose K is
    not stays in its float type, `misaligned`). No state.

    A linear left in its float type carries `transformer.fp8_skipped`
    (`#transformer.fp8_skip<small|misaligned|dynamic_weight>`), which
    `mte-compile --fusion-stats` counts.

    With `calibrate` (and `recipe=delayed`) the function gets the same
    states, amaxes and scale update, but every linear keeps its float type:
    the calibration build (TransformerEngine's
    `fp8_autocast(calibrating=True)`), whose runs leave in the states the
    history and scales of unquantised activations, for `mte-compile
    --calibration` to compile into the FP8 build.
  }];
  let options = [
    Option<"minMacs", "min-macs", "int64_t", "int64_t(1) << 30",
           "The fewest multiply-adds (M * N * K) a GEMM needs to run in FP8">,
    Option<"recipe", "recipe", "::mte::transformer::Fp8Recipe",
           "::mte::transformer::Fp8Recipe::Current",
           "How activations get their scales",
           [{::llvm::cl::values(
             clEnumValN(::mte::transformer::Fp8Recipe::Current, "current",
                        "from this run's amax"),
             clEnumValN(::mte::transformer::Fp8Recipe::Delayed, "delayed",
                        "from the amax history of earlier runs"),
             clEnumValN(::mte::transformer::Fp8Recipe::Block, "block",
                        "per 1x128 input and 128x128 weight block, from "
                        "this run's amaxes"),
             clEnumValN(::mte::transformer::Fp8Recipe::Rowwise, "rowwise",
                        "per input row and weight output channel, from "
                        "this run's amaxes"))}]>,
    Option<"historyLength", "amax-history", "int64_t", "1024",
           "Delayed scaling: the rows of the amax history">,
    Option<"margin", "margin", "int64_t", "0",
           "Delayed scaling: the scale is (448 / amax) / 2^margin">,
    Option<"amaxAlgorithm", "amax-algorithm",
           "::mte::transformer::AmaxAlgorithm",
           "::mte::transformer::AmaxAlgorithm::Max",
           "Delayed scaling: which amax of the history sets the scale",
           [{::llvm::cl::values(
             clEnumValN(::mte::transformer::AmaxAlgorithm::Max, "max",
                        "the largest of the window"),
             clEnumValN(::mte::transformer::AmaxAlgorithm::MostRecent,
                        "most_recent", "this run's"))}]>,
    Option<"calibrate", "calibrate", "bool", "false",
           "Delayed scaling: record the amaxes and update the scales, but "
           "keep every linear in its float type">
  ];
  let statistics = [
    Statistic<"numFp8", "fp8_gemm", "Linears now run in FP8">,
    Statistic<"numSkipped", "fp8_skipped", "Linears kept in their float type">
  ];
}

def PropagateFP8Scales
    : Pass<"mte-propagate-fp8-scales", "::mlir::func::FuncOp"> {
  let summary = "Hand per-tensor fp8 scales to the GEMMs that read them";
  let description = [{
    Rewrites the FP8 forms that import (ONNX QuantizeLinear/DequantizeLinear,
    TensorRT's TRT_FP8 ops) and cast insertion produce into FP8 GEMMs:

    * `reshape`, `transpose`, `slice` and `split` of a `dequantize(q, s)`
      become the same op on `q`, dequantized after (the bytes move in fp8);
      a `concat` of dequantizations with one scale likewise;
    * `linear(dequantize(qx, sx), dequantize(qw, sw))` becomes
      `linear(qx, qw)` with `input_scale sx` and `weight_scale sw`: the GEMM
      scales its f32 product (cuBLASLt's A/B scale pointers), no operand is
      dequantized into memory;
    * `quantize(dequantize(q, s), s)` of q's type is `q`;
    * an fp8 linear's constant `[K, N]` weight is transposed at compile time
      to `[N, K]` (layout `nk`): FP8 GEMMs on sm_89 and sm_90 take both
      operands K-major.

    Scales count as equal when they are one value or equal constants; the
    imported scales are used as given.
  }];
  let statistics = [
    Statistic<"numMoved", "moved", "Dequantizations moved past data movement">,
    Statistic<"numLinear", "fp8_linear",
              "Linears that now read fp8 operands with their scales">,
    Statistic<"numRequantize", "requantize",
              "Quantizations of dequantized values removed">,
    Statistic<"numTransposed", "weights_nk",
              "fp8 weights transposed to [N, K]">
  ];
}

// Parallelism

def AnnotateTensorParallel
    : Pass<"mte-annotate-tensor-parallel", "::mlir::ModuleOp"> {
  let summary = "Annotate Megatron-style tensor parallelism for shard-partition";
  let description = [{
    Adds a one-axis device grid `shard.grid @tp(shape = tp-size)` and splits
    each block of the entry functions the way Megatron-LM does, by
    `shard.shard` annotations that upstream `shard-partition` then turns
    into one rank's program (tp-size 1: a grid of one rank, whose program
    is the sharded one with every collective over that rank):

    - a *row-parallel* linear (attention's output projection, the MLP's down
      projection) is one whose input comes, through attention, rotary
      embeddings, elementwise activations (gelu, silu, swiglu, geglu,
      casts, FP8 quantisation) and head views (reshapes, transposes, slices and
      concatenations that keep the heads whole: a partial rotary embedding
      in the [B, H, S, D] layout), from other linears, the
      *column-parallel* ones (QKV, FC1, gate/up); every value on the way is
      used only there. Blocks that share a fused projection (Phi's Q, K, V
      and FC1 in one GEMM) are split together;
    - column-parallel weights and biases are split along N, the values
      between along their last dimension (whole heads for attention and
      rotary embeddings), the row-parallel weight along K; its output is
      whole again after an all-reduce, before its bias, activation and
      residual;
    - a column-parallel linear whose output is `split` along its last axis
      (QKV or gate/up, as the exporter or mte-fuse-horizontal-linear wrote
      it) gets its weight columns regrouped by rank at compile time, so that
      each rank's contiguous slice holds its share of every part: the split
      then cuts a `[..., tp, N / tp]` view of the output, which is exact in
      the global program too;
    - key/value heads that are fewer than the ranks but divide them are
      replicated (vLLM's rule): each is repeated `tp / kv_heads` times in
      the weights, which leaves the attention unchanged.

    Everything else (embeddings, norms, residual adds, the LM head) is
    replicated: every rank computes it whole. Heads or widths that do not
    divide among the ranks are an error naming the op; a block whose values
    are used outside it stays replicated, except by `transformer.amax`: FP8
    scaling's amax of a split value is all-reduced by MAX, so every rank
    quantises with the whole tensor's scale (Megatron-LM's fix for ranks
    whose delayed-scaling histories diverged).

    With `sequence-parallel` (Megatron-LM's sequence parallelism) the values
    between the blocks are split too, along their tokens: a row-parallel
    linear's output is reduce-scattered over the token dimension (the one
    before the hidden one, or another leading one that divides when that
    does not), and the ops after it that work token by token (its bias and
    residual add, norms, elementwise ops) run on their rank's tokens, up to
    the next op that needs every token (a column-parallel linear, the LM
    head, a function result), which reads them all-gathered.

    With `vocab-parallel` the vocabulary is split too (Megatron-LM's
    VocabParallelEmbedding and parallel LM head): the vocabulary is the
    largest constant table `[V, H]` whose rows a graph input gathers (the
    token embedding); each rank holds `V / tp` of its rows and gathers the
    ids that fall in them (the others read zeros, and an all-reduce sums
    the ranks' rows), and each linear whose output the function returns
    with `V` columns (the LM head, tied to the table or not) is
    column-parallel, its logits all-gathered. A vocabulary that does not
    divide among the ranks is an error naming the op.
  }];
  let options = [
    Option<"tpSize", "tp-size", "int64_t", "1",
           "The number of ranks that split each block">,
    Option<"sequenceParallel", "sequence-parallel", "bool", "false",
           "Split the values between the blocks along their tokens">,
    Option<"vocabParallel", "vocab-parallel", "bool", "false",
           "Split the vocabulary: the token embedding's rows and the LM "
           "head's columns">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
  let statistics = [
    Statistic<"numBlocks", "tp_blocks",
              "Number of blocks split across the ranks">,
    Statistic<"numColumnLinears", "tp_column_linears",
              "Number of column-parallel linears">,
    Statistic<"numReplicatedKv", "tp_replicated_kv",
              "Number of attentions whose key/value heads were replicated">,
    Statistic<"numVocabSplit", "tp_vocab",
              "Number of embeddings and LM heads split along the vocabulary">,
    Statistic<"numSequenceSplit", "sp_values",
              "Number of values split along their tokens">
  ];
}

def DataParallel : Pass<"mte-data-parallel", "::mlir::ModuleOp"> {
  let summary = "Run dp-size replicas of the model, each on its part of the "
                "batch";
  let description = [{
    Data parallelism for inference. The entry functions were built for one
    replica's batch (the driver imports the model at it); this pass makes
    them take and return the whole batch: the device grid gains an
    outermost axis of dp-size ranks (DeviceGrid.h: `[dp, pp, tp]`), each
    graph input is sliced along its first dimension on it
    (`shard.all_slice`), each output all-gathered along it. Model states
    stay whole. What the replicas must agree on is reduced over the axis:
    every per-tensor FP8 amax of an activation by MAX (so every replica
    quantises with the whole batch's scale, and delayed scaling's history
    is the same on all), and the index-check status (the counts summed, the
    position and value of the first replica that found a bad index,
    counted in that replica's part of the batch). A graph input or output
    of rank 0 is an error naming the function.

    ```mlir
    %x = shard.all_slice %arg0 on @dp grid_axes = [0] slice_axis = 0 : tensor<4x8xi64> -> tensor<2x8xi64>
    ...
    %y = shard.all_gather %h on @dp grid_axes = [0] gather_axis = 0 : tensor<2x8x16xf32> -> tensor<4x8x16xf32>
    ```
  }];
  let options = [
    Option<"dpSize", "dp-size", "int64_t", "1",
           "The number of replicas, each running its part of the batch">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let statistics = [
    Statistic<"numReducedAmaxes", "dp_amaxes",
              "Number of FP8 amaxes MAX-reduced over the replicas">
  ];
}

def PipelineParallel : Pass<"mte-pipeline-parallel", "::mlir::ModuleOp"> {
  let summary = "Cut the model into pipeline stages run over micro-batches";
  let description = [{
    Pipeline parallelism for inference, after tensor and data parallelism.
    The entry function, built for one micro-batch, is cut into pp-size
    stages of consecutive ops, balanced by a cost model (CostModel.h: an
    op's time on one H200 under a roofline of its measured GEMM, attention
    and copy rates, plus a launch), and each cut goes, among the positions
    whose cumulative
    cost is within an eighth of a stage of its share, where the fewest
    bytes cross it. Each stage becomes a private function
    `@<entry>_stage<s>` taking the graph inputs it reads and what earlier
    stages made that it or a later stage reads, and returning what the
    next stage needs and the outputs it computes.

    The entry function then takes micro-batches times the batch (the first
    dimension of every graph input and output) and runs, on the device
    grid's new outermost axis (`[pp, dp, tp]`), the rank's stage once per
    micro-batch (`scf.index_switch` on the stage index): a slice of the
    inputs, `shard.recv` from the stage before, the call, `shard.send` to
    the next; the outputs are joined along the batch and broadcast from the
    stage that computed each (`shard.broadcast`), so every rank returns the
    whole result. Inference has no backward pass: this is GPipe's schedule,
    and 1F1B's. The index-check status of the micro-batches is joined (the
    counts summed, the first failing micro-batch's position counted in the
    whole batch). A model with state (FP8 delayed scaling), and graph
    inputs or outputs without a batch under micro-batches, are errors.

    pp-size 1 adds no grid axis: the micro-batches run one after another.
  }];
  let options = [
    Option<"ppSize", "pp-size", "int64_t", "1",
           "The number of pipeline stages">,
    Option<"microBatches", "micro-batches", "int64_t", "1",
           "The number of micro-batches the batch is run in">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let statistics = [
    Statistic<"numStages", "pp_stages", "Number of pipeline stages made">
  ];
}

#endif // MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
