//===- TransformerToRowKernels.h - norms, softmax as kernels ----*- C++ -*-===//

#ifndef MTE_CONVERSION_TRANSFORMERTOROWKERNELS_TRANSFORMERTOROWKERNELS_H
#define MTE_CONVERSION_TRANSFORMERTOROWKERNELS_TRANSFORMERTOROWKERNELS_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_CONVERTTRANSFORMERTOROWKERNELS
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_TRANSFORMERTOROWKERNELS_TRANSFORMERTOROWKERNELS_H
