//===- FusionStats.h - the fusions visible in a module ----------*- C++ -*-===//

#ifndef MTE_TOOLS_FUSIONSTATS_H
#define MTE_TOOLS_FUSIONSTATS_H

#include "mlir/IR/Operation.h"

namespace mte {

/// A count of one kind of fused op or fusion.
struct FusionCount {
  llvm::StringRef kind;
  int64_t count;
};

/// Counts the recognised patterns under `root` (layer_norm, linear,
/// attention, ...; a horizontally fused linear counts each projection, an
/// activation in a linear's epilogue counts as that activation), then the
/// fusions visible in their form: `qkv` (a linear whose only user
/// splits it into 3 along the last axis), `gate_up` (one split into 2 that
/// feeds a swiglu or geglu), `bias_activation` (linears with an activation),
/// `residual` (linears and norms with a residual operand) and `norm_linear`
/// (norms whose output element type differs from their input's), and `gemm`,
/// the number of linear ops (GEMMs) left after fusion. Counted
/// from the IR, not from pass statistics, so that they describe the module
/// whichever pipeline produced it.
llvm::SmallVector<FusionCount> countFusions(mlir::Operation *root);

} // namespace mte

#endif // MTE_TOOLS_FUSIONSTATS_H
