//===- ModelDiagnostics.cpp - diagnostics about ONNX models ---------------===//

#include "mte/Tools/ModelDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
/// The ONNX nodes `loc` names, and the location they are in: one NameLoc,
/// or a fusion of several (the ops a fusion pass merged), each once.
void collectNodes(Location loc, SmallVectorImpl<std::string> &names,
                  Location &inner) {
  if (auto named = dyn_cast<NameLoc>(loc)) {
    std::string name = named.getName().str();
    if (!llvm::is_contained(names, name))
      names.push_back(name);
    if (isa<UnknownLoc>(inner))
      inner = named.getChildLoc();
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      collectNodes(part, names, inner);
    return;
  }
  if (isa<UnknownLoc>(inner))
    inner = loc;
}

/// Prints `file: node 'name': error: message`, the form every importer
/// diagnostic takes (the model file is binary, so there is no line to
/// show); an op fused from several nodes names them all (`nodes 'a', 'b'`).
void printDiagnostic(Diagnostic &diag) {
  llvm::raw_ostream &os = llvm::errs();
  SmallVector<std::string> names;
  Location loc = UnknownLoc::get(diag.getLocation().getContext());
  collectNodes(diag.getLocation(), names, loc);
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue();
    if (file.getLine() != 0)
      os << ':' << file.getLine() << ':' << file.getColumn();
    os << ": ";
  } else if (!isa<UnknownLoc>(loc)) {
    os << loc << ": ";
  }
  if (!names.empty()) {
    os << (names.size() == 1 ? "node " : "nodes ");
    llvm::interleaveComma(names, os,
                          [&](const std::string &n) { os << "'" << n << "'"; });
    os << ": ";
  }
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
