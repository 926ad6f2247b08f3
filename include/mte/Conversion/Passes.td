//===- Passes.td - mte conversion passes -------------------*- tablegen -*-===//

#ifndef MTE_CONVERSION_PASSES_TD
#define MTE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTransformerToLinalg : Pass<"mte-convert-transformer-to-linalg"> {
  let summary = "Lower the transformer dialect to linalg, tensor, arith and math";
  let description = [{
    The reference semantics of every transformer op, on tensors:
    elementwise ops become linalg.generic with numpy broadcasting in the
    indexing maps, matmul/linear/attention become contractions (accumulating
    in f32 for f16/bf16), reductions run over trailing dimensions after a
    transpose, and normalisations, softmax and attention compute in f32.
    An op that cannot be lowered (a shape op on a dynamic shape) is reported
    at its location.
  }];
  let options = [
    Option<"namedMatmul", "named-matmul", "bool", "false",
           "Compute the product of an f32 linear with linalg.matmul on its "
           "[M, K] view, which the CUDA backend hands to cuBLASLt">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def ConvertMemRefCopyToLinalg : Pass<"mte-convert-memref-copy-to-linalg"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    Bufferization copies between strided views (slices, concatenations) with
    memref.copy, which the LLVM lowering turns into a call to the MLIR
    runner-utils library. Model libraries link nothing but libc, so the host
    pipeline turns every copy into a linalg.copy, and from there into loops.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ExpandFP8Conversions : Pass<"mte-expand-fp8-conversions"> {
  let summary = "Expand conversions to and from f8E4M3FN and f8E5M2 into "
                "integer code";
  let description = [{
    LLVM has no fp8 types and LLVM 22's arith does not expand fp8 truncation,
    so `arith.extf` from and `arith.truncf` to f8E4M3FN and f8E5M2 become
    integer arithmetic on the i8 encoding: exact decoding (subnormals, NaN,
    and E5M2's infinities) and round-to-nearest-even encoding through f32.
    Out-of-range values become infinity (E5M2) or NaN (E4M3FN, which has no
    infinity), as `arith.truncf` specifies; saturation is the caller's clamp.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def HoistConstantsToArguments
    : Pass<"mte-hoist-constants-to-arguments", "::mlir::ModuleOp"> {
  let summary = "Turn the tensor constants of public functions into arguments";
  let description = [{
    GPU kernels cannot read the host's read-only data, so the CUDA pipeline
    passes every constant tensor (weights, tables, masks) to the forward
    function as a device buffer the runtime uploads once. This pass replaces
    each `arith.constant` of tensor type in a public function by a new
    argument appended after the existing ones and records its value in a
    public, constant `memref.global` named `__mte_weight_<i>`; the argument
    carries `mte.weight = @__mte_weight_<i>`. mte-compile writes a weight
    table pointing at those globals into the model's ABI.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def HostBuffersToGPU : Pass<"mte-host-buffers-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Allocate the host code's buffers on the GPU";
  let description = [{
    After bufferization the host function allocates its intermediates with
    `memref.alloc`/`memref.alloca` and frees them with `memref.dealloc`. In
    a CUDA model every buffer lives on the device (the kernels are the only
    code touching them), so these become `gpu.alloc`/`gpu.dealloc`. Linalg
    ops without a parallel dimension (full reductions, rank-0 arithmetic),
    which would otherwise lower to host loops or bare loads and stores, are
    wrapped in a one-iteration `scf.parallel`, so that they too run on the
    device, as one thread. Runs before convert-linalg-to-parallel-loops.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def ParallelLoopsToGPU : Pass<"mte-parallel-loops-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Run every top-level scf.parallel as a one-dimensional kernel";
  let description = [{
    Each `scf.parallel` at the top level of a function (one per linalg op
    after `convert-linalg-to-parallel-loops`, with constant bounds) becomes a
    `gpu.launch` over its flattened iteration space: blocks of
    `block-size` threads, thread `i` of the launch running iteration `i` in
    row-major order, so neighbouring threads touch neighbouring elements of
    the innermost dimension (coalesced accesses). Sequential loops inside the
    body (reductions) stay loops in the thread.
  }];
  let options = [
    Option<"blockSize", "block-size", "unsigned", "256",
           "Threads per block">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def MatmulToLibraryCall
    : Pass<"mte-matmul-to-library-call", "::mlir::ModuleOp"> {
  let summary = "Hand linalg.matmul on device buffers to cuBLASLt";
  let description = [{
    Replaces every `linalg.matmul` and `linalg.batch_matmul` on dense
    buffers whose A and B share one type (f32, bf16 or f16) and whose output
    is f32 (B as `[K, N]`, or `[N, K]` through transposed indexing maps)
    with a call to `mte_cuda_gemm(x, w, out, batch, m, n, k, transB, beta,
    dtype)`, which libmte_runtime implements with (strided-batched) cuBLASLt
    on the model's stream, accumulating in f32 (`dtype` is the mte_dtype
    code of A and B). The pointers travel as i64 (one signature for every
    shape). A zero fill of the output right before the product is dropped
    (beta = 0); otherwise the product accumulates (beta = 1), as
    linalg.matmul does.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def FuseElementwise : Pass<"mte-fuse-elementwise"> {
  let summary = "Fuse linalg elementwise chains, never into contractions";
  let description = [{
    Upstream's elementwise fusion also fuses an elementwise producer into a
    reduction or contraction consumer, generalising a `linalg.matmul` and
    recomputing the producer once per output column (a LayerNorm fused into
    the following GEMM costs N times its arithmetic, and the GEMM can no
    longer go to cuBLASLt). This pass applies the same fusion and reshape
    propagation patterns, but only into consumers whose iterators are all
    parallel: every chain of elementwise ops becomes one loop nest, and
    reductions and GEMMs keep their operands.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // MTE_CONVERSION_PASSES_TD
