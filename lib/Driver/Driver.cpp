//===- Driver.cpp - compile an ONNX model to a model library --------------===//

#include "mte/Driver/Driver.h"

#include "Calibration.h"
#include "ParallelPlanner.h"

#include "mte/Codegen/Common/Passes.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"
#include "mte/Pipelines/Pipelines.h"
#include "mte/Target/Host/ModelLibrary.h"
#include "mte/Tools/FusionStats.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mte::driver;

namespace {

/// The name of the model's forward function, the one the ABI table calls.
constexpr llvm::StringLiteral kEntryPoint = "mte_forward";

/// Whether LLVM's NVPTX backend generates code for `arch` (it would
/// otherwise fall back to a generic processor, or abort on a PTX version
/// the architecture needs).
bool isKnownGpu(StringRef arch) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *nvptx = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!nvptx)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      nvptx->createMCSubtargetInfo(triple, "", ""));
  return subtarget && subtarget->isCPUStringValid(arch);
}

/// The toolkit option, else $CUDA_HOME, else /usr/local/cuda.
std::string findCudaToolkit(const CompilerOptions &options) {
  if (!options.cudaPath.empty())
    return options.cudaPath;
  if (const char *home = std::getenv("CUDA_HOME"))
    return home;
  return "/usr/local/cuda";
}

bool hasPtxas(StringRef toolkit) {
  for (StringRef tool : {"ptxas", "fatbinary"}) {
    SmallString<256> path(toolkit);
    llvm::sys::path::append(path, "bin", tool);
    if (!llvm::sys::fs::can_execute(path))
      return false;
  }
  return true;
}

/// Prints the PTX of every kernel module, each under a comment naming it.
void printPTX(ModuleOp module, llvm::raw_ostream &os) {
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      os << "// kernel module " << binary.getSymName() << "\n"
         << object.getObject().getValue() << "\n";
    }
  });
}

/// Writes `print`'s text to `path`.
LogicalResult writeText(StringRef path,
                        function_ref<void(llvm::raw_ostream &)> print,
                        std::string &error) {
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(path, &error);
  if (!output)
    return failure();
  print(output->os());
  output->keep();
  return success();
}

/// The ONNX names now live in the signature, and with it the ABI table;
/// LLVM has no use for them.
void dropSignatureAttributes(func::FuncOp forward) {
  MLIRContext *context = forward.getContext();
  using mte::transformer::TransformerDialect;
  for (StringRef name : {StringRef("transformer.name"),
                         StringRef(TransformerDialect::getStateAttrName())})
    for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i)
      forward.removeArgAttr(i, StringAttr::get(context, name));
  for (StringRef name : {StringRef("transformer.name"),
                         StringRef("transformer.index_status"),
                         StringRef(TransformerDialect::getNextStateAttrName())})
    for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i)
      forward.removeResultAttr(i, StringAttr::get(context, name));
  forward->removeAttr("transformer.index_checks");
}

} // namespace

StringRef mte::driver::stringifyPrecision(Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return "fp32";
  case Precision::BF16:
    return "bf16";
  case Precision::FP16:
    return "fp16";
  case Precision::FP8:
    return "fp8";
  }
  llvm_unreachable("unknown precision");
}

StringRef mte::driver::getOutputExtension(Output output) {
  switch (output) {
  case Output::MLIR:
    return ".mlir";
  case Output::PTX:
    return ".ptx";
  case Output::LLVM:
    return ".ll";
  case Output::Object:
    return ".o";
  case Output::Library:
    return ".so";
  }
  llvm_unreachable("unknown output");
}

std::string mte::driver::validateOptions(const CompilerOptions &options) {
  bool cuda = options.target == Target::CUDA;
  if (options.weights == WeightStorage::External && !cuda)
    return "--weights=external needs --target=cuda (host models embed their "
           "weights)";
  if (options.output == Output::PTX && !cuda)
    return "--emit=ptx needs --target=cuda";
  if (options.printArenaStats && (!cuda || options.output == Output::MLIR))
    return "--arena-stats needs --target=cuda and a stage past --emit=mlir "
           "(the plan is made while lowering)";
  unsigned smVersion = 0;
  StringRef arch(options.gpuArch);
  if (!arch.consume_front("sm_") || arch.consumeInteger(10, smVersion) ||
      smVersion < 70 || !(arch.empty() || arch == "a"))
    return "--gpu=" + options.gpuArch +
           ": expected sm_<NN> (sm_70 or newer) or sm_<NN>a, such as sm_80, "
           "sm_89 or sm_90a";
  if (cuda && !isKnownGpu(options.gpuArch))
    return "--gpu=" + options.gpuArch +
           ": LLVM's NVPTX backend does not know this architecture";
  if (options.precision == Precision::FP8) {
    // FP8 tensor cores (and cuBLASLt's FP8 GEMMs) start with Ada, sm_89.
    if (cuda && smVersion < 89)
      return "--precision=fp8 needs a GPU with FP8 tensor cores (sm_89 or "
             "newer); --gpu=" +
             options.gpuArch + " has none";
    if (!options.fusion)
      return "--precision=fp8 needs --fusion: the FP8 GEMMs are the linears "
             "it recognises";
  }
  if (options.tensorParallel &&
      (*options.tensorParallel < 1 || *options.tensorParallel > 1024))
    return "--tp=" + std::to_string(*options.tensorParallel) +
           ": expected a number of ranks from 1 to 1024";
  if (options.dataParallel &&
      (*options.dataParallel < 1 || *options.dataParallel > 1024))
    return "--dp=" + std::to_string(*options.dataParallel) +
           ": expected a number of replicas from 1 to 1024";
  if (options.pipelineParallel &&
      (*options.pipelineParallel < 1 || *options.pipelineParallel > 1024))
    return "--pp=" + std::to_string(*options.pipelineParallel) +
           ": expected a number of stages from 1 to 1024";
  if (options.microBatches &&
      (*options.microBatches < 1 || *options.microBatches > 4096))
    return "--micro-batches=" + std::to_string(*options.microBatches) +
           ": expected a number from 1 to 4096";
  int64_t ranks = options.dataParallel.value_or(1) *
                  options.pipelineParallel.value_or(1) *
                  options.tensorParallel.value_or(1);
  if (ranks > 1024)
    return "--dp, --pp and --tp make " + std::to_string(ranks) +
           " ranks: a model runs on at most 1024";
  if (options.planGpus) {
    if (*options.planGpus < 1 || *options.planGpus > 1024)
      return "--gpus=" + std::to_string(*options.planGpus) +
             ": expected a number of GPUs from 1 to 1024";
    if (options.tensorParallel || options.dataParallel ||
        options.pipelineParallel || options.microBatches)
      return "--plan-parallel proposes --tp, --pp, --dp and "
             "--micro-batches: give it none of them";
    if (!(options.gpuMemoryGiB > 0) || !(options.nvlinkGBps > 0) ||
        !(options.networkGBps > 0) || options.gpusPerNode < 1)
      return "--gpu-memory, --nvlink-bw, --net-bw and --gpus-per-node must "
             "be positive";
  }
  if (options.vocabParallel && !options.tensorParallel)
    return "--tp-vocab splits the vocabulary among the --tp ranks: it needs "
           "--tp=N";
  if (options.sequenceParallel && !options.tensorParallel)
    return "--sp splits the tokens among the --tp ranks: it needs --tp=N";
  if (options.fp8MinMacs < 0)
    return "--fp8-min-macs must not be negative";
  if (options.fp8Recipe != "current" && options.fp8Recipe != "delayed" &&
      options.fp8Recipe != "block" && options.fp8Recipe != "rowwise")
    return "--fp8-recipe=" + options.fp8Recipe +
           ": expected current, delayed, block or rowwise";
  if (options.fp8Recipe != "current" && options.precision != Precision::FP8)
    return "--fp8-recipe=" + options.fp8Recipe + " needs --precision=fp8";
  bool vectorScales =
      options.fp8Recipe == "block" || options.fp8Recipe == "rowwise";
  if (options.fp8Recipe == "block" && options.tensorParallel)
    return "--fp8-recipe=block does not run under --tp yet (its 128x128 "
           "weight blocks are not split among the ranks); use "
           "--fp8-recipe=current, delayed or rowwise";
  // cuBLASLt's vector and block scale modes start with Hopper.
  if (vectorScales && cuda && smVersion < 90)
    return "--fp8-recipe=" + options.fp8Recipe +
           " needs an sm_90 GPU (cuBLASLt scales FP8 GEMMs per block or "
           "channel from Hopper on); --gpu=" +
           options.gpuArch + " takes --fp8-recipe=current or delayed";
  if (options.amaxAlgorithm != "max" && options.amaxAlgorithm != "most_recent")
    return "--amax-algo=" + options.amaxAlgorithm +
           ": expected max or most_recent";
  bool delayed = options.fp8Recipe == "delayed";
  bool delayedOptions = options.fp8Margin != 0 || options.amaxHistory != 1024 ||
                        options.amaxAlgorithm != "max";
  if (delayedOptions && !delayed)
    return "--fp8-margin, --amax-history and --amax-algo set delayed "
           "scaling: they need --fp8-recipe=delayed";
  if (!options.calibrationPath.empty() && !delayed)
    return "--calibration sets the initial amax history and scales of "
           "delayed scaling: it needs --fp8-recipe=delayed";
  if (options.amaxHistory < 1 || options.amaxHistory > (1 << 16))
    return "--amax-history must be in [1, 65536]";
  if (options.fp8Margin < 0 || options.fp8Margin > 64)
    return "--fp8-margin must be in [0, 64]";
  return {};
}

namespace mte::driver {
/// What every build of a model starts with: simplification, index checks
/// and fusion.
static void buildFusedModelPipeline(OpPassManager &pm,
                                    const CompilerOptions &options) {
  buildSimplifyPipeline(pm, SimplifyPipelineOptions());
  transformer::CheckIndicesOptions checkIndices;
  checkIndices.clamp = options.indexCheck == IndexCheck::Clamp;
  pm.addNestedPass<func::FuncOp>(transformer::createCheckIndices(checkIndices));
  if (options.fusion)
    buildTransformerFusionPipeline(pm);
}
} // namespace mte::driver

void mte::driver::buildCalibrationPipeline(OpPassManager &pm,
                                           const CompilerOptions &options) {
  buildFusedModelPipeline(pm, options);
  transformer::InsertFP8CastsOptions casts;
  casts.minMacs = options.fp8MinMacs;
  casts.recipe = transformer::Fp8Recipe::Delayed;
  casts.margin = options.fp8Margin;
  casts.historyLength = options.amaxHistory;
  // validateOptions has checked the spelling.
  casts.amaxAlgorithm =
      *transformer::symbolizeAmaxAlgorithm(options.amaxAlgorithm);
  casts.calibrate = true;
  pm.addNestedPass<func::FuncOp>(transformer::createInsertFP8Casts(casts));
}

void mte::driver::buildModelPipeline(OpPassManager &pm,
                                     const CompilerOptions &options) {
  buildFusedModelPipeline(pm, options);
  if (options.precision != Precision::FP32) {
    PrecisionPipelineOptions precision;
    precision.precision = options.precision == Precision::BF16   ? "bf16"
                          : options.precision == Precision::FP16 ? "f16"
                                                                 : "fp8";
    precision.fp8MinMacs = options.fp8MinMacs;
    // validateOptions has checked both spellings.
    precision.fp8Recipe =
        *transformer::symbolizeFp8Recipe(options.fp8Recipe);
    precision.fp8Margin = options.fp8Margin;
    precision.amaxHistory = options.amaxHistory;
    precision.amaxAlgorithm =
        *transformer::symbolizeAmaxAlgorithm(options.amaxAlgorithm);
    buildPrecisionPipeline(pm, precision);
  }
  if (options.tensorParallel) {
    TensorParallelPipelineOptions parallel;
    parallel.tpSize = *options.tensorParallel;
    parallel.sequenceParallel = options.sequenceParallel;
    parallel.vocabParallel = options.vocabParallel;
    buildTensorParallelPipeline(pm, parallel);
  }
  // Replicas wrap the (tensor-parallel) program, stages cut the
  // replica's: the grid is [pp, dp, tp].
  if (options.dataParallel) {
    transformer::DataParallelOptions data;
    data.dpSize = *options.dataParallel;
    pm.addPass(transformer::createDataParallel(data));
  }
  if (options.pipelineParallel || options.microBatches) {
    transformer::PipelineParallelOptions pipeline;
    pipeline.ppSize = options.pipelineParallel.value_or(1);
    pipeline.microBatches = options.microBatches.value_or(1);
    pm.addPass(transformer::createPipelineParallel(pipeline));
  }
  if (options.dataParallel || options.pipelineParallel ||
      options.microBatches) {
    OpPassManager &funcPm = pm.nest<func::FuncOp>();
    funcPm.addPass(createCanonicalizerPass());
    funcPm.addPass(createCSEPass());
  }
  // Last: the collectives around an amax stay as the layouts put them.
  if (options.precision == Precision::FP8)
    pm.addNestedPass<func::FuncOp>(transformer::createFuseLinearFP8Output());
}

LogicalResult mte::driver::compileModel(
    StringRef inputPath, StringRef outputPath, const CompilerOptions &options,
    MLIRContext &context, StringRef toolPath, llvm::raw_ostream &stats,
    SmallVectorImpl<std::string> &notes, std::string &error) {
  ONNXImportOptions importOptions = options.import;
  importOptions.functionName = kEntryPoint.str();
  // Each replica runs its part of the batch: the model is built for it.
  importOptions.batchDivisor =
      options.dataParallel.value_or(1) * options.microBatches.value_or(1);
  OwningOpRef<ModuleOp> module =
      importONNXModel(inputPath, &context, importOptions);
  if (!module || failed(verify(*module)))
    return failure();

  std::optional<FP8Calibration> calibration;
  if (!options.calibrationPath.empty()) {
    // The samples are whole batches: under --dp the calibration build is
    // imported for the whole batch, not a replica's.
    OwningOpRef<ModuleOp> copy;
    if (importOptions.batchDivisor > 1) {
      ONNXImportOptions whole = importOptions;
      whole.batchDivisor = 1;
      copy = importONNXModel(inputPath, &context, whole);
      if (!copy || failed(verify(*copy)))
        return failure();
    } else {
      copy = module->clone();
    }
    FailureOr<FP8Calibration> calibrated =
        calibrateFP8(*copy, options, toolPath, notes, error);
    if (failed(calibrated))
      return failure();
    calibration = std::move(*calibrated);
  }

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  buildModelPipeline(pm, options);
  if (failed(pm.run(*module)))
    return failure();
  if (options.planGpus) {
    Cluster cluster;
    cluster.gpus = *options.planGpus;
    cluster.gpusPerNode = options.gpusPerNode;
    cluster.gpuMemory = options.gpuMemoryGiB * double(1ull << 30);
    cluster.nvlinkBandwidth = options.nvlinkGBps * 1e9;
    cluster.networkBandwidth = options.networkGBps * 1e9;
    auto forward = module->lookupSymbol<func::FuncOp>(kEntryPoint);
    std::vector<LayoutPrediction> layouts = planLayouts(forward, cluster);
    int64_t batch = 0;
    if (auto first = forward.getNumArguments()
                         ? dyn_cast<RankedTensorType>(forward.getArgumentTypes()[0])
                         : RankedTensorType();
        first && first.getRank() > 0)
      batch = first.getDimSize(0);
    printPlan(layouts, cluster, batch, stats);
    return success();
  }
  if (calibration &&
      failed(applyCalibration(module->lookupSymbol<func::FuncOp>(kEntryPoint),
                              *calibration, error)))
    return failure();
  if (options.printFusionStats)
    for (const FusionCount &entry : countFusions(*module))
      stats << entry.kind << ": " << entry.count << '\n';
  return emitModel(*module, outputPath, options, toolPath, stats, notes, error);
}

LogicalResult mte::driver::emitModel(ModuleOp module, StringRef outputPath,
                                     const CompilerOptions &options,
                                     StringRef toolPath,
                                     llvm::raw_ostream &stats,
                                     SmallVectorImpl<std::string> &notes,
                                     std::string &error) {
  MLIRContext &context = *module.getContext();
  if (options.output == Output::MLIR)
    return writeText(
        outputPath, [&](llvm::raw_ostream &os) { module.print(os); }, error);

  auto forward = module.lookupSymbol<func::FuncOp>(kEntryPoint);
  FailureOr<ModelSignature> signature = getModelSignature(forward);
  if (failed(signature))
    return failure();
  dropSignatureAttributes(forward);

  PassManager lower(&context);
  if (failed(applyPassManagerCLOptions(lower)))
    return failure();
  if (options.target == Target::CUDA) {
    CudaPipelineOptions cuda;
    cuda.chip = options.gpuArch;
    std::string toolkit = findCudaToolkit(options);
    bool assemble = options.output != Output::PTX && hasPtxas(toolkit);
    if (!assemble && options.output != Output::PTX)
      notes.push_back("no ptxas/fatbinary in '" + toolkit +
                      "/bin'; the model carries PTX, which the driver "
                      "compiles when it loads");
    // Kernels also link the toolkit's libdevice for their math functions
    // (exp, tanh, erf, ...); without a toolkit here, MLIR looks in the CUDA
    // path it was built with.
    cuda.toolkitPath = llvm::sys::fs::is_directory(toolkit) ? toolkit : "";
    cuda.format = assemble ? "fatbin" : "isa";
    buildCudaPipeline(lower, cuda);
    signature->target = "cuda";
    signature->gpuArch = options.gpuArch;
  } else {
    buildHostPipeline(lower, HostPipelineOptions());
  }
  if (failed(lower.run(module)))
    return failure();
  // A pipeline's stages are programs of their own (CUDA), which share the
  // one arena the runtime allocates: it is the largest of their plans.
  for (std::string &program : getStagePrograms(module, signature->entryPoint))
    signature->stagePrograms.push_back({std::move(program), {}, false});
  SmallVector<std::string> programs;
  for (const StageProgram &program : signature->stagePrograms)
    programs.push_back(program.symbol);
  if (programs.empty())
    programs.push_back(signature->entryPoint);
  std::optional<ActivationArena> largest;
  for (auto [i, program] : llvm::enumerate(programs)) {
    std::optional<ActivationArena> arena = getActivationArena(module, program);
    if (!arena)
      continue;
    if (!signature->stagePrograms.empty())
      signature->stagePrograms[i].takesArena = arena->buffers > 0;
    if (!largest || arena->bytes > largest->bytes)
      largest = arena;
  }
  if (largest) {
    signature->arenaBytes = largest->bytes;
    if (options.printArenaStats)
      stats << "activation arena: " << largest->bytes << " bytes (peak of "
            << largest->buffers << " buffers; " << largest->bytesWithoutReuse
            << " bytes without reuse)"
            << (programs.size() > 1 ? ", the largest of the stages'" : "")
            << "\n";
  }
  if (options.output == Output::PTX)
    return writeText(
        outputPath, [&](llvm::raw_ostream &os) { printPTX(module, os); },
        error);

  if (options.weights == WeightStorage::External) {
    uint64_t embedded = externalizeWeights(module, *signature);
    // Weights computed at compile time from other constants, and weights
    // the ONNX file holds inline, have no file to come from.
    if (embedded > (1u << 20))
      notes.push_back(std::to_string(embedded) +
                      " bytes of weights are not in an external-data file "
                      "and stay in the model library");
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateToOptimizedLLVMIR(module, llvmContext, options.hostCpu, error);
  if (!llvmModule)
    return failure();
  if (signature->target == "cuda" &&
      failed(collectWeights(module, *llvmModule, *signature, error)))
    return failure();
  if (options.output == Output::LLVM)
    return writeText(
        outputPath,
        [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); }, error);
  if (options.output == Output::Object)
    return emitObjectFile(*llvmModule, options.hostCpu, outputPath, error);

  SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("mte-model", "o", objectPath)) {
    error = "cannot create a temporary file: " + ec.message();
    return failure();
  }
  llvm::FileRemover removeObject(objectPath);
  if (failed(emitObjectFile(*llvmModule, options.hostCpu, objectPath, error)))
    return failure();
  return linkModelLibrary(*signature, objectPath, outputPath, toolPath, error);
}
