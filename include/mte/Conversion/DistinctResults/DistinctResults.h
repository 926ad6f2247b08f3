//===- DistinctResults.h - a buffer of its own for every result -*- C++ -*-===//

#ifndef MTE_CONVERSION_DISTINCTRESULTS_DISTINCTRESULTS_H
#define MTE_CONVERSION_DISTINCTRESULTS_DISTINCTRESULTS_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_DISTINCTRESULTS
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_DISTINCTRESULTS_DISTINCTRESULTS_H
