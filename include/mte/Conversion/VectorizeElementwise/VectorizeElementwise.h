//===- VectorizeElementwise.h - 16-byte vectors for elementwise ops -*- C++
//-*-===//

#ifndef MTE_CONVERSION_VECTORIZEELEMENTWISE_VECTORIZEELEMENTWISE_H
#define MTE_CONVERSION_VECTORIZEELEMENTWISE_VECTORIZEELEMENTWISE_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_VECTORIZEELEMENTWISE
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_VECTORIZEELEMENTWISE_VECTORIZEELEMENTWISE_H
