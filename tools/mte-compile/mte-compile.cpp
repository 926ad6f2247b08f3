//===- mte-compile.cpp - ONNX model to model.so ---------------------------===//
//
//   mte-compile model.onnx -o model.so [--target=host] [--precision=fp32]
//               [--input-shape name=2x128 ...] [--emit=mlir|llvm|obj|so]
//
// A thin driver over the library: import (lib/Target/ONNX), the registered
// pipelines (lib/Pipelines), object emission and linking (lib/Target/Host).
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/PlanActivationMemory/PlanActivationMemory.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"
#include "mte/InitAll.h"
#include "mte/Pipelines/Pipelines.h"
#include "mte/Target/Host/ModelLibrary.h"
#include "mte/Target/ONNX/ImportONNX.h"
#include "mte/Tools/FusionStats.h"
#include "mte/Tools/ModelDiagnostics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace {
namespace cl = llvm::cl;

enum class Emit { MLIR, PTX, LLVM, Object, Library };

cl::OptionCategory compilerOptions("mte-compile options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::cat(compilerOptions));
cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                cl::value_desc("filename"),
                                cl::cat(compilerOptions));
cl::opt<std::string> target("target", cl::desc("host (default) or cuda"),
                            cl::init("host"), cl::cat(compilerOptions));
cl::opt<std::string>
    precision("precision",
              cl::desc("Storage type of weights and activations: fp32 "
                       "(default), bf16 or fp16 (weights converted at compile "
                       "time; GEMMs accumulate, norms and softmax compute in "
                       "f32; model inputs and outputs keep their types)"),
              cl::init("fp32"), cl::cat(compilerOptions));
cl::opt<std::string> weights(
    "weights",
    cl::desc("embed (default): weights in model.so; external (with "
             "--target=cuda): model.so holds code only and reads the weights "
             "from the ONNX external-data files, beside model.so, when it "
             "opens"),
    cl::init("embed"), cl::cat(compilerOptions));
cl::opt<Emit> emit(
    "emit", cl::desc("Stop after producing"), cl::init(Emit::Library),
    cl::values(clEnumValN(Emit::MLIR, "mlir",
                          "the transformer-dialect module after "
                          "simplification and fusion"),
               clEnumValN(Emit::PTX, "ptx",
                          "the PTX of every kernel (--target=cuda)"),
               clEnumValN(Emit::LLVM, "llvm", "optimised LLVM IR"),
               clEnumValN(Emit::Object, "obj", "an object file"),
               clEnumValN(Emit::Library, "so", "the model shared library")),
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
enum class IndexCheck { Error, Clamp };
cl::opt<IndexCheck> indexCheck(
    "index-check",
    cl::desc("What a run does with a gather or scatter index outside its "
             "range"),
    cl::init(IndexCheck::Error),
    cl::values(clEnumValN(IndexCheck::Error, "error",
                          "fails with MTE_ERROR_INVALID_INPUT, naming the "
                          "node, the input and the value (default)"),
               clEnumValN(IndexCheck::Clamp, "clamp",
                          "clamps it into range")),
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

std::string defaultOutput() {
  StringRef ext = emit == Emit::MLIR     ? ".mlir"
                  : emit == Emit::PTX    ? ".ptx"
                  : emit == Emit::LLVM   ? ".ll"
                  : emit == Emit::Object ? ".o"
                                         : ".so";
  SmallString<256> path(llvm::sys::path::filename(inputFile));
  llvm::sys::path::replace_extension(path, ext);
  return path.str().str();
}

int fail(const Twine &message) {
  llvm::errs() << "mte-compile: " << message << '\n';
  return 1;
}

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

/// --cuda-path, else $CUDA_HOME, else /usr/local/cuda.
std::string findCudaToolkit() {
  if (!cudaPath.empty())
    return cudaPath;
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

  if (target != "host" && target != "cuda")
    return fail("--target=" + target + ": unknown target (host, cuda)");
  if (precision != "fp32" && precision != "bf16" && precision != "fp16")
    return fail("--precision=" + precision +
                ": unknown precision (fp32, bf16, fp16)");
  if (weights != "embed" && weights != "external")
    return fail("--weights=" + weights + ": expected embed or external");
  if (weights == "external" && target != "cuda")
    return fail("--weights=external needs --target=cuda (host models embed "
                "their weights)");
  if (emit == Emit::PTX && target != "cuda")
    return fail("--emit=ptx needs --target=cuda");
  if (arenaStats && (target != "cuda" || emit == Emit::MLIR))
    return fail("--arena-stats needs --target=cuda and a stage past "
                "--emit=mlir (the plan is made while lowering)");
  unsigned smVersion = 0;
  StringRef arch(gpuArch);
  if (!arch.consume_front("sm_") || arch.consumeInteger(10, smVersion) ||
      smVersion < 70 || !(arch.empty() || arch == "a"))
    return fail("--gpu=" + gpuArch +
                ": expected sm_<NN> (sm_70 or newer) or sm_<NN>a, such as "
                "sm_80, sm_89 or sm_90a");
  if (target == "cuda" && !isKnownGpu(gpuArch))
    return fail("--gpu=" + gpuArch +
                ": LLVM's NVPTX backend does not know this architecture");
  if (outputFile.empty())
    outputFile = defaultOutput();

  mte::ONNXImportOptions importOptions;
  importOptions.functionName = "mte_forward";
  for (const std::string &spec : inputShapes) {
    std::string error = mte::parseInputShape(spec, importOptions);
    if (!error.empty())
      return fail("--input-shape: " + error);
  }

  DialectRegistry registry;
  mte::registerAllDialects(registry);
  MLIRContext context(registry);
  mte::ModelDiagnosticHandler handler(&context);
  OwningOpRef<ModuleOp> module =
      mte::importONNXModel(inputFile, &context, importOptions);
  if (!module || failed(verify(*module)))
    return 1;

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  mte::buildSimplifyPipeline(pm, mte::SimplifyPipelineOptions());
  mte::transformer::CheckIndicesOptions checkIndices;
  checkIndices.clamp = indexCheck == IndexCheck::Clamp;
  pm.addNestedPass<func::FuncOp>(
      mte::transformer::createCheckIndices(checkIndices));
  if (fusion)
    mte::buildTransformerFusionPipeline(pm);
  if (precision != "fp32")
    mte::buildPrecisionPipeline(pm, precision == "bf16" ? "bf16" : "f16");
  if (failed(pm.run(*module)))
    return 1;
  if (fusionStats)
    for (const mte::FusionCount &entry : mte::countFusions(*module))
      llvm::outs() << entry.kind << ": " << entry.count << '\n';

  auto emitText = [&](auto print) {
    std::string error;
    auto output = openOutputFile(outputFile, &error);
    if (!output)
      return fail(error);
    print(output->os());
    output->keep();
    return 0;
  };
  if (emit == Emit::MLIR)
    return emitText([&](llvm::raw_ostream &os) { module->print(os); });

  auto forward = module->lookupSymbol<func::FuncOp>("mte_forward");
  FailureOr<mte::ModelSignature> signature = mte::getModelSignature(forward);
  if (failed(signature))
    return 1;
  // The ONNX names now live in the ABI table; LLVM has no use for them.
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i)
    forward.removeArgAttr(i, "transformer.name");
  for (StringRef name : {"transformer.name", "transformer.index_status"})
    for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i)
      forward.removeResultAttr(i, StringAttr::get(&context, name));
  forward->removeAttr("transformer.index_checks");

  PassManager lower(&context);
  if (failed(applyPassManagerCLOptions(lower)))
    return 1;
  if (target == "cuda") {
    mte::CudaPipelineOptions cuda;
    cuda.chip = gpuArch;
    std::string toolkit = findCudaToolkit();
    bool assemble = emit != Emit::PTX && hasPtxas(toolkit);
    if (!assemble && emit != Emit::PTX)
      llvm::errs() << "mte-compile: note: no ptxas/fatbinary in '" << toolkit
                   << "/bin'; the model carries PTX, which the driver "
                      "compiles when it loads\n";
    // Kernels also link the toolkit's libdevice for their math functions
    // (exp, tanh, erf, ...); without a toolkit here, MLIR looks in the CUDA
    // path it was built with.
    cuda.toolkitPath = llvm::sys::fs::is_directory(toolkit) ? toolkit : "";
    cuda.format = assemble ? "fatbin" : "isa";
    mte::buildCudaPipeline(lower, cuda);
    signature->target = "cuda";
    signature->gpuArch = gpuArch;
  } else {
    mte::buildHostPipeline(lower, mte::HostPipelineOptions());
  }
  if (failed(lower.run(*module)))
    return 1;
  if (std::optional<mte::ActivationArena> arena =
          mte::getActivationArena(*module, signature->entryPoint)) {
    signature->arenaBytes = arena->bytes;
    if (arenaStats)
      llvm::outs() << "activation arena: " << arena->bytes << " bytes (peak of "
                   << arena->buffers << " buffers; " << arena->bytesWithoutReuse
                   << " bytes without reuse)\n";
  }
  if (emit == Emit::PTX)
    return emitText([&](llvm::raw_ostream &os) { printPTX(*module, os); });

  if (weights == "external") {
    uint64_t embedded = mte::externalizeWeights(*module, *signature);
    // Weights computed at compile time from other constants, and weights
    // the ONNX file holds inline, have no file to come from.
    if (embedded > (1u << 20))
      llvm::errs() << "mte-compile: note: " << embedded
                   << " bytes of weights are not in an external-data file "
                      "and stay in the model library\n";
  }

  llvm::LLVMContext llvmContext;
  std::string error;
  std::unique_ptr<llvm::Module> llvmModule =
      mte::translateToOptimizedLLVMIR(*module, llvmContext, cpu, error);
  if (!llvmModule)
    return fail(error);
  if (signature->target == "cuda" &&
      failed(mte::collectWeights(*module, *llvmModule, *signature, error)))
    return fail(error);
  if (emit == Emit::LLVM)
    return emitText(
        [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });

  if (emit == Emit::Object)
    return failed(mte::emitObjectFile(*llvmModule, cpu, outputFile, error))
               ? fail(error)
               : 0;

  SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("mte-model", "o", objectPath))
    return fail("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeObject(objectPath);
  if (failed(mte::emitObjectFile(*llvmModule, cpu, objectPath, error)))
    return fail(error);
  std::string toolPath = llvm::sys::fs::getMainExecutable(
      argv[0], reinterpret_cast<void *>(&fail));
  if (failed(mte::linkModelLibrary(*signature, objectPath, outputFile, toolPath,
                                   error)))
    return fail(error);
  return 0;
}
