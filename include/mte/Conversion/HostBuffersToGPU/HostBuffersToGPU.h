//===- HostBuffersToGPU.h - host buffers on the GPU ---*- C++ -*-===//

#ifndef MTE_CONVERSION_HOSTBUFFERSTOGPU_HOSTBUFFERSTOGPU_H
#define MTE_CONVERSION_HOSTBUFFERSTOGPU_HOSTBUFFERSTOGPU_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_HOSTBUFFERSTOGPU
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_HOSTBUFFERSTOGPU_HOSTBUFFERSTOGPU_H
