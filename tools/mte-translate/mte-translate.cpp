//===- mte-translate.cpp - ONNX to transformer dialect --------------------===//
//
//   mte-translate --import-onnx model.onnx [-o out.mlir]
//                 [--input-shape name=2x128 ...]
//
// Prints the imported, verified `func.func @main`. Errors name the model file
// and the ONNX node, and exit with status 1.
//
//===----------------------------------------------------------------------===//

#include "mte/InitAll.h"
#include "mte/Target/ONNX/ImportONNX.h"
#include "mte/Tools/ModelDiagnostics.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<model.onnx>"));
llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("Output file"),
                                      llvm::cl::value_desc("filename"),
                                      llvm::cl::init("-"));
llvm::cl::opt<bool> importOnnx("import-onnx",
                               llvm::cl::desc("Import an ONNX model"),
                               llvm::cl::init(true));
llvm::cl::list<std::string>
    inputShapes("input-shape",
                llvm::cl::desc("Static shape of a graph input, NAME=2x128"),
                llvm::cl::value_desc("name=dims"));
llvm::cl::opt<bool>
    checkOnly("check", llvm::cl::desc("Import and verify the model, print "
                                      "nothing (exit status only)"));
llvm::cl::opt<bool>
    listOnnxOps("list-onnx-ops",
                llvm::cl::desc("Print the supported ONNX operators and exit"));
llvm::cl::opt<std::string> functionName("function-name",
                                        llvm::cl::desc("Imported function"),
                                        llvm::cl::init("main"));

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "mte ONNX to transformer-dialect importer\n");
  if (listOnnxOps) {
    for (const std::string &op : mte::getSupportedONNXOperators())
      llvm::outs() << op << '\n';
    return 0;
  }
  if (inputFile.empty()) {
    llvm::errs() << "mte-translate: no input model given\n";
    return 1;
  }
  if (!importOnnx) {
    llvm::errs() << "mte-translate: nothing to do without --import-onnx\n";
    return 1;
  }

  mte::ONNXImportOptions options;
  options.functionName = functionName;
  for (const std::string &spec : inputShapes) {
    std::string error = mte::parseInputShape(spec, options);
    if (!error.empty()) {
      llvm::errs() << "mte-translate: --input-shape: " << error << '\n';
      return 1;
    }
  }

  DialectRegistry registry;
  mte::registerAllDialects(registry);
  MLIRContext context(registry);
  mte::ModelDiagnosticHandler handler(&context);

  OwningOpRef<ModuleOp> module =
      mte::importONNXModel(inputFile, &context, options);
  if (!module || failed(verify(*module)))
    return 1;
  if (checkOnly)
    return 0;

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "mte-translate: " << error << '\n';
    return 1;
  }
  module->print(output->os(), OpPrintingFlags());
  output->os() << '\n';
  output->keep();
  return 0;
}
