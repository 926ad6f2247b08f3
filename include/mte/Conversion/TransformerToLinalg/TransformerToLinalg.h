//===- TransformerToLinalg.h - reference lowering ---------------*- C++ -*-===//

#ifndef MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H
#define MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_CONVERTTRANSFORMERTOLINALG
#include "mte/Conversion/Passes.h.inc"

/// Patterns lowering every transformer op to linalg/tensor/arith/math.
/// `namedMatmul`: f32 linears compute their product with linalg.matmul on
/// the [M, K] view of the input (a library call for the CUDA backend).
void populateTransformerToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                         bool namedMatmul = false);

} // namespace mte

#endif // MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H
