//===- Passes.td - backend-neutral codegen passes ----------*- tablegen -*-===//

#ifndef MTE_CODEGEN_COMMON_PASSES_TD
#define MTE_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistinctResults : Pass<"mte-distinct-results", "::mlir::ModuleOp"> {
  let summary = "Give every result of a function a buffer of its own";
  let description = [{
    After bufferization, a `func.return` that returns one buffer more than
    once (ONNX lets two graph outputs name one value: an output listed
    twice, or one behind an Identity) returns a copy of it for every repeat,
    so that `buffer-results-to-out-params` gives each result its own
    out-parameter.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ReadOnlyArguments : Pass<"mte-read-only-arguments", "::mlir::ModuleOp"> {
  let summary = "Mark the tensor arguments of public functions read-only";
  let description = [{
    A model reads its inputs, its states and (on CUDA) its weights, and
    never writes them: the caller owns the input buffers, a state's
    current value must survive a frozen run, and weights are shared by
    every run. One-shot bufferization may otherwise write into a function
    argument's buffer in place (an insert_slice into an input, a scatter
    into its data); this pass sets `bufferization.writable = false` on
    every tensor argument of every public function, so that such an op
    writes into a copy.
  }];
}

def InsertSlicesAtSources
    : Pass<"mte-insert-slices-at-sources", "::mlir::func::FuncOp"> {
  let summary = "Move a chain of slice insertions up to the values inserted";
  let description = [{
    A concatenation lowers to a chain of `tensor.insert_slice`s into a
    `tensor.empty`, placed where the concatenation was; empty-tensor
    elimination can make the producer of an inserted value write into its
    slice only when the slice's destination is defined before that
    producer. This pass moves each insertion of such a chain right after
    the later of its source and the previous insertion (the chain's empty
    to the top of the block), and folds an `expand_shape` that only adds
    unit dimensions into a rank-reducing insertion of its source. FP8
    delayed scaling gathers one amax per quantised tensor into the
    update's vector this way: each amax is then written into its slot,
    not copied there by a kernel of its own.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
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

def InlinePipelineStages
    : Pass<"mte-inline-pipeline-stages", "::mlir::ModuleOp"> {
  let summary = "Copy each pipeline stage's body into the calls of it";
  let description = [{
    `mte-pipeline-parallel` makes each stage a private function
    (`transformer.pipeline_stage`) that the entry calls once per
    micro-batch. A backend that plans one program per public function
    (the CUDA pipeline: weights hoisted to its arguments, intermediates in
    one arena, straight-line host code launching kernels) needs the stages'
    ops in the entry: this pass clones a stage's body in place of every
    call of it and then erases the stage functions. A stage whose body has
    more than one block is an error.
  }];
}

def SplitPipelineStages
    : Pass<"mte-split-pipeline-stages", "::mlir::ModuleOp"> {
  let summary = "Make a pipeline-parallel entry one program per stage";
  let description = [{
    A pipeline-parallel entry runs its rank's stage through the
    `scf.index_switch` that `mte-pipeline-parallel` marks
    `transformer.pipeline_dispatch`. The stage is the rank's, known only
    when the model opens, but a backend that plans one straight-line
    program per public function (the CUDA pipeline) cannot plan a branch
    between stages. This pass replaces each such entry `@f` by one public
    function per stage, `@f_pp<s>`: `@f` with the dispatch replaced by the
    ops of stage `s`'s region. The module's `mte.stage_programs`
    dictionary maps `f` to the programs in stage order, for the model's
    `run` to pick one by its rank. An entry with more than one dispatch is
    an error.
  }];
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

def ConvertShardToRuntimeCalls
    : Pass<"mte-convert-shard-to-runtime-calls", "::mlir::ModuleOp"> {
  let summary = "Lower shard collectives to libmte_runtime's mte_comm_* calls";
  let description = [{
    The collectives that shard-partition leaves in one rank's program,
    lowered for the runtime that runs the ranks (include/mte-c/
    KernelABI.h):

    - `shard.all_slice` (a rank's slice of a value every rank holds whole,
      such as a weight) becomes a `tensor.extract_slice` at the rank's
      offset: no communication, and after bufferization a view of the
      constant, so no rank copies the weights it does not use;
    - `shard.all_reduce`, `shard.all_gather` and `shard.reduce_scatter`
      become `mte_comm_all_reduce`, `mte_comm_all_gather` and
      `mte_comm_reduce_scatter` on the buffer of their input, writing a new
      buffer. The runtime joins and cuts buffers in contiguous parts, one
      per rank; a gather or scatter along a dimension after others of more
      than one element (the tokens of `[B, S, H]`) goes through a
      rank-major view and a `linalg.transpose`;
    - `shard.process_linear_index` and `shard.process_multi_index` become
      `mte_comm_rank()` and its coordinates in the grid.

    The grid axes of a collective become the bit mask the runtime takes. The
    pass runs on tensors, before bufferization, and removes the grid once
    nothing refers to it. Other collectives (all_to_all, send/recv, ...)
    are an error naming the op, as are groups over a grid the module does
    not define statically.

    With `dense-slices` (CUDA models, whose kernels take dense buffers;
    after mte-hoist-constants-to-arguments) no slice is a view. A slice of
    a weight argument (`mte.weight`) becomes a new weight argument of the
    local type: the same `mte.weight` symbol and a
    `#transformer.weight_slice` that tells the runtime which part each rank
    uploads, so that a device holds only its rank's weights; the whole
    weight's argument goes once nothing else reads it. A slice of any other
    value (sequence parallelism's tokens of a replicated activation) is
    copied into a new tensor, element by element at the rank's offset.
    A slice over a group of one rank is its input.
  }];
  let options = [
    Option<"denseSlices", "dense-slices", "bool", "false",
           "Slices of weight arguments become weight arguments the runtime "
           "slices when it uploads them; other slices are copies">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mte::transformer::TransformerDialect"];
}

def PlanActivationMemory
    : Pass<"mte-plan-activation-memory", "::mlir::ModuleOp"> {
  let summary = "Place the intermediates of public functions in one arena";
  let description = [{
    A static memory plan for the buffers a forward function allocates after
    bufferization and buffer deallocation. In each public function whose
    body is one block (block order is then execution order), every
    `memref.alloc` of that block with a static shape, identity layout,
    default memory space and a fixed-size element type, freed by exactly
    one `memref.dealloc` in the same block (the function owns it), lives
    from its allocation to its last use: the last op of the block that uses
    it or any value computed from it (views, casts, extracted pointers,
    results of ops taking it). Buffer deallocation frees everything at the
    end of the block, so the deallocation itself says nothing about the
    lifetime. Each buffer gets a byte offset in one arena: largest first,
    into the smallest gap left between the already placed buffers whose
    lifetimes overlap its own, else above them, every offset aligned to 256
    bytes (the arena's own alignment; an allocation asking for more stays
    one). Buffers with disjoint lifetimes share memory; live ones never do.

    The arena becomes a new last argument of the function,
    `memref<Nxi8> {mte.arena}` with N the plan's peak; every planned
    allocation becomes a `memref.view` of it at its offset and its
    deallocation disappears. The argument exists only when something was
    planned (N > 0). The module records each plan in its
    `mte.activation_arena` dictionary, keyed by function name:
    `{buffers, bytes, bytes_without_reuse}` (the last: the arena's size if
    no buffer shared memory).

    What the plan cannot bound stays an allocation: dynamic shapes,
    allocations in nested regions, buffers without a deallocation in the
    block or with several, buffers stored as values, and buffers used
    after their deallocation. As buffer deallocation does, calls are
    assumed not to keep their operands. Every later access is stream
    ordered on the device, so a buffer that reuses a dead one's bytes
    never races with it.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
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

def PromoteLoopAccumulators
    : Pass<"mte-promote-loop-accumulators", "::mlir::ModuleOp"> {
  let summary = "Keep a loop's read-modify-write accumulators in registers";
  let description = [{
    Upstream's lowering of a linalg reduction to loops reads and writes its
    output element in every step of the reduction loop:

        scf.for %r = ... {
          %acc = memref.load %out[%c]
          %x = memref.load %in[%r, %c]
          memref.store (max %acc, %x), %out[%c]
        }

    LLVM keeps the element in memory (it cannot prove `%out` and `%in`
    disjoint), so on a GPU each step waits for the last one's store to come
    back from L2: a column maximum over FP8 delayed scaling's 1024-entry
    amax history is a chain of 1024 such round trips in every thread. This
    pass makes such an element an `iter_args` value of the `scf.for`: one
    load before the loop, one store after it, loads in the loop free to
    overlap; a loop of 8 steps or more is then unrolled by 8 (the
    accumulation one chain in the same order, so the same result), so that
    eight steps' loads are in flight together.

    An element qualifies when the loop body reads it once, then writes it
    once, at the same loop-invariant indices of the same memref, and no
    other access in the loop may touch it. Accesses are told apart by their
    origin: distinct arguments of an entry point (a public function that
    nothing in the module calls; a module pass, since that depends on every
    function) or distinct allocations are disjoint buffers, `memref.view`s
    of one buffer at constant offsets are disjoint where their bytes are,
    and constant
    indices into one memref name distinct elements. A loop holding any op
    with other memory effects (a call, a nested kernel) is left alone.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // MTE_CODEGEN_COMMON_PASSES_TD
