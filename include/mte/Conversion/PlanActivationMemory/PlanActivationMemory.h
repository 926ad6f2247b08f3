//===- PlanActivationMemory.h - one arena for the intermediates -*- C++ -*-===//

#ifndef MTE_CONVERSION_PLANACTIVATIONMEMORY_PLANACTIVATIONMEMORY_H
#define MTE_CONVERSION_PLANACTIVATIONMEMORY_PLANACTIVATIONMEMORY_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <optional>

namespace mte {

#define GEN_PASS_DECL_PLANACTIVATIONMEMORY
#include "mte/Conversion/Passes.h.inc"

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

} // namespace mte

#endif // MTE_CONVERSION_PLANACTIVATIONMEMORY_PLANACTIVATIONMEMORY_H
