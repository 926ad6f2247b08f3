//===- ParallelLoopsToGPU.h - parallel loops as kernels ----------------*- C++ -*-===//

#ifndef MTE_CONVERSION_PARALLELLOOPSTOGPU_PARALLELLOOPSTOGPU_H
#define MTE_CONVERSION_PARALLELLOOPSTOGPU_PARALLELLOOPSTOGPU_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_PARALLELLOOPSTOGPU
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_PARALLELLOOPSTOGPU_PARALLELLOOPSTOGPU_H
