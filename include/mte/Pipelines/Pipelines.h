//===- Pipelines.h - mte pass pipelines -------------------------*- C++ -*-===//
//
// Pipelines are typed C++ functions over an OpPassManager. mte-opt exposes
// them as `--mte-<name>` pass pipelines; mte-compile calls them directly.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_PIPELINES_PIPELINES_H
#define MTE_PIPELINES_PIPELINES_H

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mte {

struct SimplifyPipelineOptions
    : mlir::PassPipelineOptions<SimplifyPipelineOptions> {
  Option<bool> requireStaticShapes{
      *this, "require-static-shapes",
      llvm::cl::desc("Fail unless every tensor has a static shape afterwards"),
      llvm::cl::init(true)};
};

/// Canonicalises primitive-level IR: folds shape arithmetic to constants,
/// removes identity reshapes/transposes/casts, composes reshape and
/// transpose chains, and deduplicates common subexpressions.
void buildSimplifyPipeline(mlir::OpPassManager &pm,
                           const SimplifyPipelineOptions &options);

/// Recognises the Transformer building blocks in primitive-level IR
/// (LayerNorm, RMSNorm, GELU, SiLU/SwiGLU, rotary embeddings, attention,
/// MatMul/Gemm + bias as linear) and cleans up.
/// Then fuses them: sibling linears into one GEMM, activations and residual
/// adds into GEMM epilogues, the remaining residual adds into the next norm,
/// and norms into writing their GEMMs' input type.
void buildTransformerFusionPipeline(mlir::OpPassManager &pm);

struct PrecisionPipelineOptions
    : mlir::PassPipelineOptions<PrecisionPipelineOptions> {
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("The storage type of weights and activations: bf16, "
                     "f16, or fp8 (bf16, with E4M3 GEMMs where they pay)"),
      llvm::cl::init("bf16")};
  Option<int64_t> fp8MinMacs{
      *this, "fp8-min-macs",
      llvm::cl::desc("With fp8: the fewest multiply-adds a GEMM needs to run "
                     "in FP8 (mte-insert-fp8-casts' min-macs)"),
      llvm::cl::init(int64_t(1) << 30)};
  Option<transformer::Fp8Recipe> fp8Recipe{
      *this, "fp8-recipe",
      llvm::cl::desc("With fp8: how activations are scaled "
                     "(mte-insert-fp8-casts' recipe)"),
      llvm::cl::init(transformer::Fp8Recipe::Current),
      llvm::cl::values(clEnumValN(transformer::Fp8Recipe::Current, "current",
                                  "from this run's amax"),
                       clEnumValN(transformer::Fp8Recipe::Delayed, "delayed",
                                  "from the amax history of earlier runs"),
                       clEnumValN(transformer::Fp8Recipe::Block, "block",
                                  "per 1x128 input and 128x128 weight block"),
                       clEnumValN(transformer::Fp8Recipe::Rowwise, "rowwise",
                                  "per input row and weight output channel"))};
  Option<int64_t> fp8Margin{
      *this, "fp8-margin",
      llvm::cl::desc("With the delayed recipe: the margin of the scales"),
      llvm::cl::init(0)};
  Option<int64_t> amaxHistory{
      *this, "amax-history",
      llvm::cl::desc("With the delayed recipe: the amax history's length"),
      llvm::cl::init(1024)};
  Option<transformer::AmaxAlgorithm> amaxAlgorithm{
      *this, "amax-algo",
      llvm::cl::desc("With the delayed recipe: which amax of the history "
                     "sets the scale"),
      llvm::cl::init(transformer::AmaxAlgorithm::Max),
      llvm::cl::values(
          clEnumValN(transformer::AmaxAlgorithm::Max, "max",
                     "the largest of the window"),
          clEnumValN(transformer::AmaxAlgorithm::MostRecent, "most_recent",
                     "this run's"))};
};

/// Converts f32 weights and activations to the options' precision (bf16 or
/// f16) with mte-convert-precision, then lets norms write their GEMMs'
/// input type. fp8 is bf16 whose large, aligned linears run as E4M3 GEMMs
/// (mte-insert-fp8-casts, current, delayed or block scaling;
/// docs/fp8.md).
void buildPrecisionPipeline(mlir::OpPassManager &pm,
                            const PrecisionPipelineOptions &options);

struct TensorParallelPipelineOptions
    : mlir::PassPipelineOptions<TensorParallelPipelineOptions> {
  Option<int64_t> tpSize{*this, "tp-size",
                         llvm::cl::desc("The number of ranks that split each "
                                        "block"),
                         llvm::cl::init(2)};
  Option<bool> vocabParallel{
      *this, "vocab-parallel",
      llvm::cl::desc("Split the vocabulary: the token embedding's rows and "
                     "the LM head's columns"),
      llvm::cl::init(false)};
  Option<bool> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("Split the values between the blocks along their "
                     "tokens (Megatron-LM's sequence parallelism)"),
      llvm::cl::init(false)};
};

/// Splits the model Megatron-style over `tp-size` ranks: the blocks are
/// annotated (mte-annotate-tensor-parallel) and upstream shard-partition
/// writes one rank's program, with shard collectives where the ranks meet.
void buildTensorParallelPipeline(mlir::OpPassManager &pm,
                                 const TensorParallelPipelineOptions &options);

struct HostPipelineOptions : mlir::PassPipelineOptions<HostPipelineOptions> {
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse producer/consumer linalg elementwise ops before "
                     "bufferization (fewer passes over memory)"),
      llvm::cl::init(true)};
};

/// Lowers a static-shaped transformer-dialect module to the LLVM dialect for
/// the host: reference lowering to linalg, bufferization with results as
/// out-parameters and buffer deallocation, loops, and LLVM conversion with
/// the bare-pointer calling convention (every argument is a dense buffer).
void buildHostPipeline(mlir::OpPassManager &pm,
                       const HostPipelineOptions &options);

struct CudaPipelineOptions : mlir::PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture: sm_80, sm_89, sm_90a"),
      llvm::cl::init("sm_90a")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary: fatbin (cubin by ptxas plus PTX), isa "
                     "(PTX only, JIT-compiled by the driver)"),
      llvm::cl::init("fatbin")};
  Option<std::string> toolkitPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit (ptxas, fatbinary, libdevice)"),
      llvm::cl::init("/usr/local/cuda")};
  Option<unsigned> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the generic elementwise kernels"),
      llvm::cl::init(256)};
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse producer/consumer linalg elementwise ops"),
      llvm::cl::init(true)};
};

/// Lowers a static-shaped transformer-dialect module for NVIDIA GPUs: the
/// reference lowering to linalg, constants hoisted to weight arguments,
/// bufferization with every buffer on the device, each loop nest a kernel
/// (gpu dialect, NVVM, PTX through LLVM's NVPTX backend, cubin with ptxas),
/// and host code that launches them through the mgpu* entry points of
/// libmte_runtime.
void buildCudaPipeline(mlir::OpPassManager &pm,
                       const CudaPipelineOptions &options);

/// Registers every mte pipeline with the global pass registry.
void registerPipelines();

} // namespace mte

#endif // MTE_PIPELINES_PIPELINES_H
