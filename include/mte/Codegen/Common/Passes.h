//===- Passes.h - backend-neutral codegen passes ----------------*- C++ -*-===//
//
// Passes on linalg and memref IR that any backend's pipeline may use:
// fusion of elementwise ops, bufferization helpers, FP8 expansion and the
// activation arena.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_CODEGEN_COMMON_PASSES_H
#define MTE_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <optional>

namespace mte {

#define GEN_PASS_DECL
#include "mte/Codegen/Common/Passes.h.inc"

/// The static memory plan mte-plan-activation-memory made for a function.
struct ActivationArena {
  /// Buffers placed in the arena.
  int64_t buffers = 0;
  /// The arena's size: the peak of the plan.
  int64_t bytes = 0;
  /// What the buffers would take if none shared memory.
  int64_t bytesWithoutReuse = 0;
};

/// The plan recorded in `module` for `function`, if the pass planned it.
std::optional<ActivationArena> getActivationArena(mlir::ModuleOp module,
                                                  llvm::StringRef function);

/// The programs mte-split-pipeline-stages made of `function`, in stage
/// order; empty when it made none.
llvm::SmallVector<std::string> getStagePrograms(mlir::ModuleOp module,
                                                llvm::StringRef function);

#define GEN_PASS_REGISTRATION
#include "mte/Codegen/Common/Passes.h.inc"

} // namespace mte

#endif // MTE_CODEGEN_COMMON_PASSES_H
