//===- ImportONNX.h - ONNX model importer -----------------------*- C++ -*-===//
//
// Translates an ONNX ModelProto into a `func.func @main` in the transformer
// dialect with static shapes. Used by mte-translate and mte-compile.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_TARGET_ONNX_IMPORTONNX_H
#define MTE_TARGET_ONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mte {

struct ONNXImportOptions {
  /// Static shapes for graph inputs, overriding (and specialising the
  /// symbolic dimensions of) the shapes the model declares.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Every graph input's first dimension (the batch) is divided by this:
  /// the model is imported for one replica's or micro-batch's part of the
  /// batch the shapes give. The dimension must divide, and the model must
  /// not fix it.
  int64_t batchDivisor = 1;
  /// Name of the imported function.
  std::string functionName = "main";
};

/// Parses `spec` of the form `name=2x128` (a rank-0 shape is `name=`) into
/// `options`. Returns an error message on malformed input.
std::string parseInputShape(llvm::StringRef spec, ONNXImportOptions &options);

/// Imports the ONNX model at `path`. Errors are reported through the
/// context's diagnostic engine at the location of the offending node (its
/// name, within the model file) and yield a null module.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModel(llvm::StringRef path, mlir::MLIRContext *context,
                const ONNXImportOptions &options);

/// The operators the importer handles, as "domain::op_type" (the default
/// domain is written as "ai.onnx"), sorted.
std::vector<std::string> getSupportedONNXOperators();

} // namespace mte

#endif // MTE_TARGET_ONNX_IMPORTONNX_H
