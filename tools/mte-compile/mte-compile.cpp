//===- mte-compile.cpp - ONNX model to model.so ---------------------------===//
//
//   mte-compile model.onnx -o model.so [--target=host] [--precision=fp32]
//               [--input-shape name=2x128 ...] [--emit=mlir|llvm|obj|so]
//
// A thin shell over lib/Driver: the command line becomes CompilerOptions,
// which the driver validates and compiles with.
//
//===----------------------------------------------------------------------===//

#include "mte/Driver/Driver.h"
#include "mte/InitAll.h"
#include "mte/Tools/ModelDiagnostics.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mte::driver;

namespace {
namespace cl = llvm::cl;

cl::OptionCategory compilerOptions("mte-compile options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::cat(compilerOptions));
cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                cl::value_desc("filename"),
                                cl::cat(compilerOptions));
cl::opt<std::string> target("target", cl::desc("host (default) or cuda"),
                            cl::init("host"), cl::cat(compilerOptions));
cl::opt<Precision> precision(
    "precision",
    cl::desc("Storage type of weights and activations (weights converted at "
             "compile time; GEMMs accumulate, norms and softmax compute in "
             "f32; model inputs and outputs keep their types)"),
    cl::init(Precision::FP32),
    cl::values(clEnumValN(Precision::FP32, "fp32", "f32 (default)"),
               clEnumValN(Precision::BF16, "bf16", "bfloat16"),
               clEnumValN(Precision::FP16, "fp16", "IEEE half"),
               clEnumValN(Precision::FP8, "fp8",
                          "bfloat16, with E4M3 GEMMs (current scaling) "
                          "where they pay (docs/fp8.md)")),
    cl::cat(compilerOptions));
cl::opt<int64_t> fp8MinMacs(
    "fp8-min-macs",
    cl::desc("With --precision=fp8: the fewest multiply-adds (M * N * K) a "
             "GEMM needs to run in FP8 (default 2^30)"),
    cl::init(int64_t(1) << 30), cl::cat(compilerOptions));
cl::opt<std::string> fp8Recipe(
    "fp8-recipe",
    cl::desc("With --precision=fp8: current (default; each activation's "
             "scale from this run's amax) or delayed (TransformerEngine's "
             "delayed scaling: scales from an amax history the model keeps "
             "as state between runs) or block (TransformerEngine's block "
             "scaling: a power-of-two scale per 1x128 block of each "
             "activation row and per 128x128 block of each weight) or "
             "rowwise (torchao's rowwise recipe: a power-of-two scale per "
             "activation row and per weight output channel)"),
    cl::init("current"), cl::cat(compilerOptions));
cl::opt<int64_t> fp8Margin(
    "fp8-margin",
    cl::desc("With --fp8-recipe=delayed: scale = (448 / amax) / 2^margin "
             "(default 0)"),
    cl::init(0), cl::cat(compilerOptions));
cl::opt<int64_t> amaxHistory(
    "amax-history",
    cl::desc("With --fp8-recipe=delayed: the runs the amax history keeps "
             "(default 1024)"),
    cl::init(1024), cl::cat(compilerOptions));
cl::opt<std::string> amaxAlgo(
    "amax-algo",
    cl::desc("With --fp8-recipe=delayed: max (default; the largest amax of "
             "the history) or most_recent"),
    cl::init("max"), cl::cat(compilerOptions));
cl::opt<std::string> calibration(
    "calibration",
    cl::desc("With --fp8-recipe=delayed: a .npz file of sample inputs (one "
             "array per graph input, several samples stacked on a leading "
             "axis) that the fp32 model runs on at compile time; the amax "
             "history and scales they leave are the model's initial state"),
    cl::value_desc("calib.npz"), cl::init(""), cl::cat(compilerOptions));
cl::opt<int64_t> tensorParallel(
    "tp",
    cl::desc("Split each block over N ranks, Megatron-style (column- and "
             "row-parallel linears, heads split): one model.so that every "
             "rank opens (host: mte-run --world-size N; CUDA: one process "
             "per GPU, NCCL). --tp=1: the sharded model on one rank"),
    cl::init(1), cl::cat(compilerOptions));
cl::opt<bool> vocabParallel(
    "tp-vocab",
    cl::desc("With --tp: split the vocabulary too (Megatron-LM's): each rank "
             "holds 1/N of the token embedding's rows and of the LM head's "
             "columns; an all-reduce joins the embedding, an all-gather the "
             "logits"),
    cl::init(false), cl::cat(compilerOptions));
cl::opt<bool> sequenceParallel(
    "sp",
    cl::desc("With --tp: sequence parallelism (Megatron-LM's): norms, "
             "residual adds and elementwise ops between the blocks run on "
             "1/N of the tokens; reduce-scatter after the row-parallel "
             "linears, all-gather before the column-parallel ones"),
    cl::init(false), cl::cat(compilerOptions));
cl::opt<int64_t> dataParallel(
    "dp",
    cl::desc("Data parallelism: N replicas of the (--tp) model, each running "
             "1/N of the batch (the first dimension of every graph input "
             "and output); the grid is N x the --tp ranks, one model.so"),
    cl::init(1), cl::cat(compilerOptions));
cl::opt<int64_t> pipelineParallel(
    "pp",
    cl::desc("Pipeline parallelism: cut the model into N stages balanced by "
             "a cost model, each rank running its stage; the grid is N x "
             "--dp x --tp ranks"),
    cl::init(1), cl::cat(compilerOptions));
cl::opt<int64_t> microBatches(
    "micro-batches",
    cl::desc("Run the batch as K micro-batches through the pipeline "
             "stages (GPipe's schedule); K divides the batch"),
    cl::init(1), cl::cat(compilerOptions));
cl::opt<bool> planParallel(
    "plan-parallel",
    cl::desc("Print the parallel layouts (--tp x --pp x --dp, micro-batches) "
             "of --gpus GPUs with their predicted latency, throughput and "
             "memory per GPU, and the pick; compiles nothing"),
    cl::init(false), cl::cat(compilerOptions));
cl::opt<int64_t> planGpus("gpus",
                          cl::desc("With --plan-parallel: the GPUs to plan for"),
                          cl::init(1), cl::cat(compilerOptions));
cl::opt<double> gpuMemory(
    "gpu-memory", cl::desc("With --plan-parallel: GiB per GPU (141: H200)"),
    cl::init(141), cl::cat(compilerOptions));
cl::opt<int64_t> gpusPerNode(
    "gpus-per-node",
    cl::desc("With --plan-parallel: GPUs a node joins by NVLink"),
    cl::init(8), cl::cat(compilerOptions));
cl::opt<double> nvlinkBandwidth(
    "nvlink-bw",
    cl::desc("With --plan-parallel: GB/s a GPU sends within a node"),
    cl::init(450), cl::cat(compilerOptions));
cl::opt<double> networkBandwidth(
    "net-bw",
    cl::desc("With --plan-parallel: GB/s a GPU sends to another node"),
    cl::init(50), cl::cat(compilerOptions));
cl::opt<std::string> weights(
    "weights",
    cl::desc("embed (default): weights in model.so; external (with "
             "--target=cuda): model.so holds code only and reads the weights "
             "from the ONNX external-data files, beside model.so, when it "
             "opens"),
    cl::init("embed"), cl::cat(compilerOptions));
cl::opt<Output> emit(
    "emit", cl::desc("Stop after producing"), cl::init(Output::Library),
    cl::values(clEnumValN(Output::MLIR, "mlir",
                          "the transformer-dialect module after "
                          "simplification and fusion"),
               clEnumValN(Output::PTX, "ptx",
                          "the PTX of every kernel (--target=cuda)"),
               clEnumValN(Output::LLVM, "llvm", "optimised LLVM IR"),
               clEnumValN(Output::Object, "obj", "an object file"),
               clEnumValN(Output::Library, "so", "the model shared library")),
    cl::cat(compilerOptions));
cl::list<std::string> inputShapes("input-shape",
                                  cl::desc("Static shape of a graph input, "
                                           "NAME=2x128"),
                                  cl::value_desc("name=dims"),
                                  cl::cat(compilerOptions));
cl::opt<bool> fusion("fusion",
                     cl::desc("Run the transformer fusion pipeline "
                              "(recognition of norms, linears, activations, "
                              "and their fusion)"),
                     cl::init(true), cl::cat(compilerOptions));
cl::opt<IndexCheck> indexCheck(
    "index-check",
    cl::desc("What a run does with a gather or scatter index outside its "
             "range"),
    cl::init(IndexCheck::Error),
    cl::values(clEnumValN(IndexCheck::Error, "error",
                          "fails with MTE_ERROR_INVALID_INPUT, naming the "
                          "node, the input and the value (default)"),
               clEnumValN(IndexCheck::Clamp, "clamp", "clamps it into range")),
    cl::cat(compilerOptions));
cl::opt<bool> fusionStats("fusion-stats",
                          cl::desc("Print how many of each fused op, and of "
                                   "each fusion, the module holds"),
                          cl::cat(compilerOptions));
cl::opt<bool> arenaStats(
    "arena-stats",
    cl::desc("Print the size of the CUDA model's activation arena (the peak "
             "of its static memory plan) and what the buffers would take "
             "without reuse"),
    cl::cat(compilerOptions));
cl::opt<std::string> cpu("mcpu", cl::desc("Host CPU to tune for"),
                         cl::init("x86-64"), cl::cat(compilerOptions));
cl::opt<std::string>
    gpuArch("gpu",
            cl::desc("GPU architecture of --target=cuda: sm_90a "
                     "(H100/H200, default), sm_89, sm_80"),
            cl::init("sm_90a"), cl::cat(compilerOptions));
cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("CUDA toolkit for ptxas and fatbinary (default: "
             "$CUDA_HOME, else /usr/local/cuda); without ptxas the model "
             "carries PTX only, which the driver compiles at load time"),
    cl::init(""), cl::cat(compilerOptions));

int fail(const llvm::Twine &message) {
  llvm::errs() << "mte-compile: " << message << '\n';
  return 1;
}

/// The options of the command line, or the reason they make no compilation.
std::string readOptions(CompilerOptions &options) {
  if (target != "host" && target != "cuda")
    return "--target=" + target + ": unknown target (host, cuda)";
  options.target = target == "cuda" ? Target::CUDA : Target::Host;
  if (weights != "embed" && weights != "external")
    return "--weights=" + weights + ": expected embed or external";
  options.weights =
      weights == "external" ? WeightStorage::External : WeightStorage::Embedded;
  options.precision = precision;
  options.fp8MinMacs = fp8MinMacs;
  options.fp8Recipe = fp8Recipe;
  options.fp8Margin = fp8Margin;
  options.amaxHistory = amaxHistory;
  options.amaxAlgorithm = amaxAlgo;
  options.calibrationPath = calibration;
  if (tensorParallel.getNumOccurrences())
    options.tensorParallel = tensorParallel;
  options.sequenceParallel = sequenceParallel;
  options.vocabParallel = vocabParallel;
  if (dataParallel.getNumOccurrences())
    options.dataParallel = dataParallel;
  if (pipelineParallel.getNumOccurrences())
    options.pipelineParallel = pipelineParallel;
  if (microBatches.getNumOccurrences())
    options.microBatches = microBatches;
  if (planParallel)
    options.planGpus = planGpus;
  options.gpuMemoryGiB = gpuMemory;
  options.gpusPerNode = gpusPerNode;
  options.nvlinkGBps = nvlinkBandwidth;
  options.networkGBps = networkBandwidth;
  options.indexCheck = indexCheck;
  options.output = emit;
  options.fusion = fusion;
  options.printFusionStats = fusionStats;
  options.printArenaStats = arenaStats;
  options.hostCpu = cpu;
  options.gpuArch = gpuArch;
  options.cudaPath = cudaPath;
  for (const std::string &spec : inputShapes) {
    std::string error = mte::parseInputShape(spec, options.import);
    if (!error.empty())
      return "--input-shape: " + error;
  }
  return validateOptions(options);
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  // LLVM's and MLIR's own options still parse (--help-hidden lists them);
  // --help shows mte-compile's.
  cl::HideUnrelatedOptions(compilerOptions);
  cl::ParseCommandLineOptions(argc, argv, "mte ONNX model compiler\n");

  CompilerOptions options;
  if (std::string error = readOptions(options); !error.empty())
    return fail(error);
  if (outputFile.empty()) {
    SmallString<256> path(llvm::sys::path::filename(inputFile));
    llvm::sys::path::replace_extension(path,
                                       getOutputExtension(options.output));
    outputFile = path.str().str();
  }

  DialectRegistry registry;
  mte::registerAllDialects(registry);
  MLIRContext context(registry);
  mte::ModelDiagnosticHandler handler(&context);
  std::string toolPath = llvm::sys::fs::getMainExecutable(
      argv[0], reinterpret_cast<void *>(&fail));
  SmallVector<std::string> notes;
  std::string error;
  LogicalResult compiled = compileModel(inputFile, outputFile, options, context,
                                        toolPath, llvm::outs(), notes, error);
  for (const std::string &note : notes)
    llvm::errs() << "mte-compile: note: " << note << '\n';
  if (failed(compiled))
    return error.empty() ? 1 : fail(error);
  return 0;
}
