//===- Passes.td - CUDA codegen passes ---------------------*- tablegen -*-===//

#ifndef MTE_CODEGEN_CUDA_PASSES_TD
#define MTE_CODEGEN_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTransformerToRowKernels
    : Pass<"mte-convert-transformer-to-row-kernels", "::mlir::ModuleOp"> {
  let summary = "Compute norms, rotary embeddings and attention with GPU row kernels";
  let description = [{
    The CUDA backend's row operations, chosen on tensors before the
    reference lowering. Each `transformer.layer_norm` and
    `transformer.rms_norm` becomes a call of a private function
    `@mte_row_{layer_norm,rms_norm}_<rows>x<length>x<type>...` on the
    [rows, length] view of its operands; each rotate-half
    `transformer.rotary_embedding` over whole heads a call of
    `@mte_rotary_<outer>x<mid>x<D>x<type>_table_<T>x<W>...` on x viewed as
    [B * S, H, D] (or [B * H, S, D]) with dynamic strides, so that the Q and
    K column slices of a packed projection are read in place; attention
    that the runtime's fused kernels take becomes a call of
    `@mte_flash_attention_...`; other `transformer.attention` is lowered as
    `mte-convert-transformer-to-linalg{named-matmul}` lowers it, except that
    its scale + mask + causal mask + softmax is a call of
    `@mte_attention_softmax_<B>x<H>x<Sq>x<Skv>...` on the f32 scores; a
    standalone `transformer.softmax` over the last axis is a call of the
    same kernel (`@mte_softmax_<rows>x<length>x<type>`: one head, a query
    per row, no mask, scale 1).

    The functions are declarations on buffers in destination-passing style
    (inputs, scalars, then outputs) carrying a `mte.row_kernel`
    `#kernel.row_kernel` attribute (a verified kind and its parameters)
    that `mte-build-row-kernels` turns into their bodies after
    bufferization: a kernel's `gpu.launch` cannot go through buffer
    deallocation. Each is called by a `kernel.call` on tensors, whose
    outputs are `bufferization.alloc_tensor`s in the results' shapes (fresh
    buffers, which CSE does not merge): bufferization then sees the kernel
    read its inputs where it runs (so no in-place write of another op can
    come between), copies nothing, and writes a model output in place.

    An op is left to the reference lowering when a shape is dynamic, an
    element type is not f16, bf16 or f32, or a row is longer than 1024
    threads keep in registers (8 vectors each).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
    "::mte::kernel::KernelDialect"
  ];
}

def BuildRowKernels : Pass<"mte-build-row-kernels", "::mlir::ModuleOp"> {
  let summary = "Give the row kernels' declarations their gpu.launch bodies";
  let description = [{
    Defines every private function declaration carrying `mte.row_kernel`
    (as mte-convert-transformer-to-row-kernels creates them) as one
    `gpu.launch`, which gpu-kernel-outlining then outlines like every other
    kernel (one kernel per distinct shape). The `#kernel.row_kernel`'s
    `kind` selects the kernel and its operands:

    - `layer_norm` (`bias`, `residual`), `rms_norm` (`residual`): input [R, N], scale [N], (bias [N]), (residual [R, N]),
      epsilon (f32), output [R, N], (the residual sum [R, N], in the input
      type). f16/bf16 inputs round the residual sum to their type before
      the statistics, as the reference lowering does.
    - `attention_softmax` (`heads`, `queries`, `causal`, `mask_shape`):
      scores [R = B * H * Sq, Skv] (f32, bf16 or f16), (the mask, flattened; it
      broadcasts from `mask_shape` to [B, H, Sq, Skv]), scale (f32),
      probabilities [R, Skv] (f32, bf16 or f16; their type sets the vector
      width). Causal masking keeps key j for query i iff j <= i + Skv - Sq;
      a query that sees no key gets zeros.
    - `rotary` (`heads`, `seq`, `heads_major`): x [B * S, H, D] (or
      [B * H, S, D] with `heads_major`), cos and sin [S or B * S, D or
      D / 2], output like x; a thread reads a vector of each half of a head
      and writes both.
    - `flash_attention` (`heads`, `kv_heads`, `causal`): q [B, Sq, H * D],
      k and v [B, Skv, Hkv * D] (16-bit, any batch and row strides), scale
      (f32), output [B, Sq, H * D]. Not a gpu.launch: every call becomes a
      call of the runtime's `mte_cuda_attention` (libmte_runtime's fused
      kernels) with the buffers' addresses and strides.
    - `amaxes`: inputs of any shape (f32, bf16 or f16, dense), output
      f32 [T] (T inputs). Not a gpu.launch either: every call becomes a
      call of the runtime's `mte_cuda_amaxes` with a table of the inputs
      (address, element count, type) on the host stack (`llvm.alloca` at
      the function's entry: a `memref.alloca` would become device memory).

    Each row gets a group of threads: a power of two up to a warp for rows
    of up to 32 vectors (several rows to a 128-thread block), a warp for up
    to 128 vectors, else a block of up to 1024 threads (one row each). A
    thread loads its vectors of the row once (16-byte `vector.load`s where
    the row length allows: 4 lanes of f32, 8 of f16/bf16), keeps them in
    registers and stores each output vector once. Partial results combine
    with `gpu.shuffle xor` butterflies and, across the warps of a block,
    through workgroup memory and one `gpu.barrier` per reduction: RMSNorm
    reduces the sum of squares; LayerNorm merges each thread's (mean, sum
    of squared deviations) pairwise (Chan et al.) in one reduction when
    every thread holds the same number of elements (else the mean, then the
    deviations); the softmax is online: each thread's exponentials against
    its own maximum, one reduction of (maximum, sum) that rescales the sums
    it merges.

    A declaration whose buffers have dynamic layouts (the rotary kernel's x)
    is first specialised on its call sites: each distinct set of static
    layouts behind the calls' `memref.cast`s gets a declaration of its own
    (`<name>_v<k>` when there are several), whose vectors are as wide as
    the views' offsets and strides allow; an operand with no static layout
    behind it is copied into a fresh buffer for its call.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FP8ConversionsToNVVM
    : Pass<"mte-fp8-conversions-to-nvvm", "::mlir::func::FuncOp"> {
  let summary = "Saturating f32 to E4M3 truncations as cvt.rn.satfinite";
  let description = [{
    Inside the `gpu.launch` bodies of a function (before kernel outlining,
    while the clamp's bounds are still visible constants), for sm_90 or
    newer, an `arith.truncf` from f32 (or a
    1-D vector of it) to f8E4M3FN whose operand is clamped to [-448, 448]
    (`maximumf(minimumf(x, 448), -448)`, the saturating conversion that
    quantize lowers to) becomes `nvvm.convert.f32x2.to.f8x2` with RN
    rounding and SATFINITE, one per pair of elements: PTX's
    `cvt.rn.satfinite.e4m3x2.f32`. For clamped values it computes what the
    truncation does (nearest even, NaN kept), in one instruction instead of
    mte-expand-fp8-conversions' integer code. Other fp8 conversions are
    left to that pass.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
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

def VectorizeElementwise
    : Pass<"mte-vectorize-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Elementwise linalg.generic ops on buffers as loops over "
                "16-byte vectors";
  let description = [{
    Rewrites a `linalg.generic` on buffers whose iterators are all parallel
    into an `scf.parallel` whose innermost loop steps by a vector of `V`
    elements, `V` being 16 bytes of the narrowest operand (8 for bf16/f16,
    4 for f32): each operand that varies along the innermost dimension (as
    its last index) is read or written with one `vector.load` /
    `vector.store` of `V` elements, aligned to 16 bytes; an operand that
    does not vary along it is read once and broadcast; the body's
    arithmetic runs on vectors. mte-parallel-loops-to-gpu then gives each
    thread one vector, so that an elementwise chain reads and writes memory
    once with 16-byte accesses. `linalg.copy` ops are generalised first and
    take the same path.

    Applies when the innermost extent is a multiple of `V`, every operand's
    indices are loops or constants, the innermost loop last or absent
    (outputs: last), every operand that varies along it has a
    static layout with unit innermost stride and offset and other strides
    multiples of `V` (so every vector is 16-byte aligned, buffers being),
    no operand is `i1`, and the body holds only elementwise-mappable ops
    without regions, and gathers of rows: a `memref.load` from a buffer
    the op does not write, whose last index is the innermost loop's
    (`linalg.index`, used nowhere else) and whose other indices do not
    vary along it, reads one vector of a row (16-byte aligned rows, as for
    operands); one whose indices do not vary reads a scalar. Values that
    do not vary along the vector (an embedding row's index from a token
    id) stay scalars. Others are left to convert-linalg-to-parallel-loops.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
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

#endif // MTE_CODEGEN_CUDA_PASSES_TD
