//===- ModelDiagnostics.cpp - diagnostics about ONNX models ---------------===//

#include "mte/Tools/ModelDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
/// Prints `file: node 'name': error: message`, the form every importer
/// diagnostic takes (the model file is binary, so there is no line to show).
void printDiagnostic(Diagnostic &diag) {
  llvm::raw_ostream &os = llvm::errs();
  Location loc = diag.getLocation();
  std::string name;
  if (auto named = dyn_cast<NameLoc>(loc)) {
    name = named.getName().str();
    loc = named.getChildLoc();
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue();
    if (file.getLine() != 0)
      os << ':' << file.getLine() << ':' << file.getColumn();
    os << ": ";
  } else if (!isa<UnknownLoc>(loc)) {
    os << loc << ": ";
  }
  if (!name.empty())
    os << "node '" << name << "': ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  os << diag << '\n';
  for (Diagnostic &note : diag.getNotes())
    printDiagnostic(note);
}
} // namespace

mte::ModelDiagnosticHandler::ModelDiagnosticHandler(MLIRContext *context)
    : ScopedDiagnosticHandler(context, [](Diagnostic &diag) {
        printDiagnostic(diag);
        return success();
      }) {
  context->printOpOnDiagnostic(false);
}
