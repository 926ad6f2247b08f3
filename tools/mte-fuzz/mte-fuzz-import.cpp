//===- mte-fuzz-import.cpp - libFuzzer target for the ONNX importer -------===//
//
// Imports the fuzzer's bytes as an ONNX model, verifies the module and runs
// the pipeline mte-compile runs before it lowers (simplification, index
// checks, fusion). Any error is an acceptable outcome; a crash, an abort (an
// assert) or a sanitizer report is a bug.
//
//===----------------------------------------------------------------------===//

#include "mte/Driver/Driver.h"
#include "mte/InitAll.h"
#include "mte/Target/ONNX/ImportONNX.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

using namespace mlir;

namespace {
/// The importer reads a file (it maps it, and resolves external data beside
/// it), so each input is written to one file in a fresh directory under
/// $TMPDIR.
std::string modelPath;

/// The size given to every symbolic dimension of a graph input, so that
/// models in the exporters' form (dims "batch", "sequence") import with
/// static shapes and reach the pipelines.
constexpr int64_t kSymbolicDimSize = 2;
/// Inputs declaring more dimensions than this are left to the importer's
/// own checks rather than specialised.
constexpr int kMaxSpecialisedRank = 8;

/// Gives every graph input with a symbolic dimension a static shape, as
/// `mte-compile --input-shape` would.
void specialiseSymbolicInputs(const uint8_t *data, size_t size,
                              mte::ONNXImportOptions &options) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    return;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    if (!input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape())
      continue;
    const onnx::TensorShapeProto &shape = input.type().tensor_type().shape();
    if (shape.dim_size() > kMaxSpecialisedRank)
      continue;
    llvm::SmallVector<int64_t> dims;
    bool symbolic = false;
    for (const onnx::TensorShapeProto::Dimension &dim : shape.dim()) {
      bool isStatic = dim.has_dim_value() && dim.dim_value() >= 0;
      symbolic |= !isStatic;
      dims.push_back(isStatic ? dim.dim_value() : kSymbolicDimSize);
    }
    if (symbolic)
      options.inputShapes[input.name()] = dims;
  }
}
/// The context and the pass pipeline the inputs go through. Building them
/// costs more than importing a small model, so they are kept across inputs
/// and rebuilt after every kInputsPerContext of them: a context never frees
/// the types and attributes it uniques, and the constants of many inputs
/// would otherwise grow it without bound.
class FuzzSession {
public:
  static FuzzSession &get() {
    static FuzzSession session;
    return session;
  }

  MLIRContext &context() {
    if (!state)
      state = std::make_unique<State>();
    return state->context;
  }
  PassManager &pipeline() {
    context();
    return state->pipeline;
  }
  void inputDone() {
    if (++inputs % kInputsPerContext == 0)
      state.reset();
  }

private:
  static constexpr unsigned kInputsPerContext = 2000;

  struct State {
    State()
        : context(makeRegistry(), MLIRContext::Threading::DISABLED),
          // Errors are expected; printing each would slow the fuzzer down.
          swallow(&context, [](Diagnostic &) { return success(); }),
          pipeline(&context) {
      context.loadAllAvailableDialects();
      mte::driver::buildModelPipeline(pipeline, mte::driver::CompilerOptions());
    }
    static DialectRegistry makeRegistry() {
      DialectRegistry registry;
      mte::registerAllDialects(registry);
      return registry;
    }
    MLIRContext context;
    ScopedDiagnosticHandler swallow;
    PassManager pipeline;
  };
  std::unique_ptr<State> state;
  unsigned inputs = 0;
};
} // namespace

/// LLVM's BumpPtrAllocator poisons its free space when compiled with ASan,
/// as mte's code is, but not in the prebuilt libMLIR.so, which allocates
/// from the same allocators: user poisoning would report libMLIR's own
/// allocations.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("mte-fuzz-import", dir))
    llvm::report_fatal_error("cannot create a directory for the inputs");
  modelPath = (dir + "/model.onnx").str();
  std::atexit([] {
    llvm::sys::fs::remove(modelPath);
    llvm::sys::fs::remove(llvm::sys::path::parent_path(modelPath));
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // protobuf takes the size as an int; the importer rejects larger files.
  if (size > (1u << 20))
    return -1;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(modelPath, ec);
    if (ec)
      llvm::report_fatal_error(llvm::Twine("cannot write ") + modelPath);
    os.write(reinterpret_cast<const char *>(data), size);
  }

  mte::ONNXImportOptions options;
  specialiseSymbolicInputs(data, size, options);

  FuzzSession &session = FuzzSession::get();
  {
    OwningOpRef<ModuleOp> module =
        mte::importONNXModel(modelPath, &session.context(), options);
    if (module && succeeded(verify(*module)))
      (void)session.pipeline().run(*module);
  }
  session.inputDone();
  return 0;
}
