//===- Driver.h - compile an ONNX model to a model library ------*- C++ -*-===//
//
// What mte-compile does, as a library: the options a compilation takes,
// their validation, the pipeline from the imported transformer module to
// the chosen output, and the output itself (MLIR, PTX, LLVM IR, an object
// file or the model shared library). mte-compile parses a command line into
// CompilerOptions and calls compileModel.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_DRIVER_DRIVER_H
#define MTE_DRIVER_DRIVER_H

#include "mte/Target/ONNX/ImportONNX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mte::driver {

enum class Target { Host, CUDA };

/// The storage type of weights and activations. Model inputs and outputs
/// keep their types; GEMMs accumulate, norms and softmax compute in f32.
/// FP8 is BF16 whose large, aligned linears run as E4M3 GEMMs (docs/fp8.md).
enum class Precision { FP32, BF16, FP16, FP8 };

enum class WeightStorage {
  /// In the model library's read-only data.
  Embedded,
  /// Read from the ONNX external-data files when the model opens.
  External,
};

enum class IndexCheck {
  /// A run with an out-of-range gather or scatter index fails with
  /// MTE_ERROR_INVALID_INPUT.
  Error,
  /// Out-of-range indices are clamped into range.
  Clamp,
};

/// Where compilation stops and what it writes.
enum class Output {
  /// The transformer-dialect module after simplification and fusion.
  MLIR,
  /// The PTX of every kernel (CUDA).
  PTX,
  /// Optimised LLVM IR.
  LLVM,
  Object,
  /// The model shared library.
  Library,
};

struct CompilerOptions {
  Target target = Target::Host;
  Precision precision = Precision::FP32;
  WeightStorage weights = WeightStorage::Embedded;
  IndexCheck indexCheck = IndexCheck::Error;
  Output output = Output::Library;
  /// Recognition of norms, linears, activations and attention, and their
  /// fusion.
  bool fusion = true;
  /// Print the fused ops and fusions the module holds to `stats`.
  bool printFusionStats = false;
  /// Print the CUDA model's activation arena to `stats`.
  bool printArenaStats = false;
  std::string hostCpu = "x86-64";
  /// The GPU of Target::CUDA: sm_<NN> or sm_<NN>a.
  std::string gpuArch = "sm_90a";
  /// The CUDA toolkit (ptxas, fatbinary, libdevice); empty: $CUDA_HOME,
  /// else /usr/local/cuda.
  std::string cudaPath;
  /// With Precision::FP8: the fewest multiply-adds (M * N * K) a GEMM needs
  /// to run in FP8.
  int64_t fp8MinMacs = int64_t(1) << 30;
  /// With Precision::FP8: how activations are scaled, and delayed scaling's
  /// margin, amax history length and amax algorithm (docs/fp8.md).
  std::string fp8Recipe = "current";
  int64_t fp8Margin = 0;
  int64_t amaxHistory = 1024;
  std::string amaxAlgorithm = "max";
  /// With fp8Recipe "delayed": a .npz file of sample inputs that the fp32
  /// model runs on at compile time; the amax history and scales they leave
  /// become the model's initial state (docs/fp8.md, "Calibration").
  std::string calibrationPath;
  /// Ranks that split each block (--tp); none: an unsharded model. 1 is a
  /// sharded model on a grid of one rank: the sharded program, each
  /// collective over that rank (NCCL's on a GPU), which one GPU can check.
  std::optional<int64_t> tensorParallel;
  /// With tensorParallel: split the values between the blocks along their
  /// tokens too (--sp, Megatron-LM's sequence parallelism).
  bool sequenceParallel = false;
  /// With tensorParallel: split the token embedding's rows and the LM
  /// head's columns (--tp-vocab).
  bool vocabParallel = false;
  /// Replicas that each run their part of the batch (--dp); none: one.
  std::optional<int64_t> dataParallel;
  /// Pipeline stages (--pp), and the micro-batches the batch runs in
  /// (--micro-batches); none: one stage, one batch.
  std::optional<int64_t> pipelineParallel;
  std::optional<int64_t> microBatches;
  /// --plan-parallel: print the parallel layouts of this many GPUs, their
  /// predicted latency and memory, and the pick, instead of compiling;
  /// with the machines' memory per GPU (GiB), GPUs per node and the
  /// bandwidth (GB/s, one direction) within a node and between nodes.
  std::optional<int64_t> planGpus;
  double gpuMemoryGiB = 141;
  int64_t gpusPerNode = 8;
  double nvlinkGBps = 450, networkGBps = 50;
  /// Static shapes of graph inputs.
  ONNXImportOptions import;
};

/// The spelling of a precision on the command line (fp32, bf16, fp16, fp8).
llvm::StringRef stringifyPrecision(Precision precision);

/// The file extension of an output (".so", ".mlir", ...).
llvm::StringRef getOutputExtension(Output output);

/// Checks that the options go together and name a GPU LLVM generates code
/// for; returns why not, or an empty string.
std::string validateOptions(const CompilerOptions &options);

/// Adds the passes that take an imported module to the optimised
/// transformer-dialect module: simplification, index checks, fusion and
/// the precision conversion.
void buildModelPipeline(mlir::OpPassManager &pm,
                        const CompilerOptions &options);

/// Lowers `module`, which buildModelPipeline has run on, to
/// `options.output` at `outputPath`, with the diagnostics, `error`,
/// `stats` and `notes` of compileModel.
mlir::LogicalResult emitModel(mlir::ModuleOp module, llvm::StringRef outputPath,
                              const CompilerOptions &options,
                              llvm::StringRef toolPath,
                              llvm::raw_ostream &stats,
                              llvm::SmallVectorImpl<std::string> &notes,
                              std::string &error);

/// Compiles the ONNX model at `inputPath` into `outputPath`. Errors in the
/// model are reported through `context`'s diagnostics; other errors (files,
/// tools) are returned in `error`, which stays empty when the diagnostics
/// said it all. Statistics go to `stats`; notes (what the compilation did
/// differently from what was asked, and why) are appended to `notes`.
/// `toolPath` is the running executable, beside which the linker is looked
/// for.
mlir::LogicalResult
compileModel(llvm::StringRef inputPath, llvm::StringRef outputPath,
             const CompilerOptions &options, mlir::MLIRContext &context,
             llvm::StringRef toolPath, llvm::raw_ostream &stats,
             llvm::SmallVectorImpl<std::string> &notes, std::string &error);

} // namespace mte::driver

#endif // MTE_DRIVER_DRIVER_H
