//===- FuseElementwise.h - elementwise fusion ------------------------*- C++ -*-===//

#ifndef MTE_CONVERSION_FUSEELEMENTWISE_FUSEELEMENTWISE_H
#define MTE_CONVERSION_FUSEELEMENTWISE_FUSEELEMENTWISE_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_FUSEELEMENTWISE
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_FUSEELEMENTWISE_FUSEELEMENTWISE_H
