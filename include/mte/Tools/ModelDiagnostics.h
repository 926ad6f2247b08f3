//===- ModelDiagnostics.h - diagnostics about ONNX models -------*- C++ -*-===//

#ifndef MTE_TOOLS_MODELDIAGNOSTICS_H
#define MTE_TOOLS_MODELDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

namespace mte {

/// Prints every diagnostic as `file: node 'name': error: message`: the form
/// importer locations (a node name within the model file) read best in, as
/// the model file is binary and has no line to show. Diagnostics do not dump
/// the IR around the failing op, which would not help the user of a model.
class ModelDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  explicit ModelDiagnosticHandler(mlir::MLIRContext *context);
};

} // namespace mte

#endif // MTE_TOOLS_MODELDIAGNOSTICS_H
