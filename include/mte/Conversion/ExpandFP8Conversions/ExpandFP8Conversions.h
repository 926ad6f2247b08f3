//===- ExpandFP8Conversions.h - fp8 conversions as integer code -*- C++ -*-===//

#ifndef MTE_CONVERSION_EXPANDFP8CONVERSIONS_EXPANDFP8CONVERSIONS_H
#define MTE_CONVERSION_EXPANDFP8CONVERSIONS_EXPANDFP8CONVERSIONS_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_EXPANDFP8CONVERSIONS
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_EXPANDFP8CONVERSIONS_EXPANDFP8CONVERSIONS_H
