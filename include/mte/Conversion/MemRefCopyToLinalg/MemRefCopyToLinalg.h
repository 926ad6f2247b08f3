//===- MemRefCopyToLinalg.h - memref.copy as linalg.copy --------*- C++ -*-===//

#ifndef MTE_CONVERSION_MEMREFCOPYTOLINALG_MEMREFCOPYTOLINALG_H
#define MTE_CONVERSION_MEMREFCOPYTOLINALG_MEMREFCOPYTOLINALG_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_CONVERTMEMREFCOPYTOLINALG
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_MEMREFCOPYTOLINALG_MEMREFCOPYTOLINALG_H
