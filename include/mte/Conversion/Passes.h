//===- Passes.h - mte conversion passes -------------------------*- C++ -*-===//

#ifndef MTE_CONVERSION_PASSES_H
#define MTE_CONVERSION_PASSES_H

#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

namespace mte {

#define GEN_PASS_REGISTRATION
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_PASSES_H
