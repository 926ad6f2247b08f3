//===- LibraryContractions.h - GEMMs a library runs -------------*- C++ -*-===//
//
// The CUDA backend's forms of transformer.linear and transformer.attention:
// their products as linalg.matmul / linalg.batch_matmul, which
// mte-matmul-to-library-call hands to cuBLASLt, around the reference
// lowering's epilogue and softmax. The patterns take precedence over the
// reference ones (benefit 2) and decline what a library GEMM cannot run.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_CODEGEN_CUDA_LIBRARYCONTRACTIONS_H
#define MTE_CODEGEN_CUDA_LIBRARYCONTRACTIONS_H

#include "mte/Codegen/Common/GemmEpilogue.h"
#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/PatternMatch.h"

#include <functional>

namespace mte {



/// Builds attention's probabilities [B, H, Sq, Skv] from its f32 scores Q·Kᵀ
/// (neither scaled nor masked), in `probsType` (the type the second product
/// reads, V's) or in f32.
using AttentionSoftmaxFn = std::function<mlir::Value(
    mlir::OpBuilder &, mlir::Location, transformer::AttentionOp, mlir::Value,
    mlir::Type probsType)>;

/// A linear on f32, bf16 or f16, or on E4M3 with an [N, K] weight and K and N
/// multiples of 16, computes its product with linalg.matmul on
/// the [M, K] view of its input, accumulated in f32; its epilogue is tagged
/// kGemmEpilogueAttrName.
void populateLinearToLibraryGemmPatterns(mlir::RewritePatternSet &patterns);

/// Attention on f32, bf16 or f16 computes its two products as batched GEMMs
/// over (batch, kv head), a kv head's query heads stacking their rows (GQA
/// repeats no K or V); the probabilities come from `softmax`, by default the
/// reference lowering's, rounded to V's type for the second product.
void populateAttentionToLibraryGemmPatterns(
    mlir::RewritePatternSet &patterns, AttentionSoftmaxFn softmax = nullptr);

/// Both of the above, with the reference softmax.
void populateLibraryContractionPatterns(mlir::RewritePatternSet &patterns);

} // namespace mte

#endif // MTE_CODEGEN_CUDA_LIBRARYCONTRACTIONS_H
