//===- Passes.h - CUDA codegen passes ---------------------------*- C++ -*-===//
//
// The CUDA backend's passes: row kernels for norms, rotary embeddings and
// attention, library calls for GEMMs and attention, and the mapping of the
// remaining loop nests onto GPU kernels.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_CODEGEN_CUDA_PASSES_H
#define MTE_CODEGEN_CUDA_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL
#include "mte/Codegen/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mte/Codegen/CUDA/Passes.h.inc"

} // namespace mte

#endif // MTE_CODEGEN_CUDA_PASSES_H
