//===- TransformerToLinalg.h - reference lowering ---------------*- C++ -*-===//

#ifndef MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H
#define MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace mte {

#define GEN_PASS_DECL_CONVERTTRANSFORMERTOLINALG
#include "mte/Conversion/Passes.h.inc"

/// The attribute with which the lowering (`named-matmul`) tags a linear's
/// epilogue after its product, for mte-matmul-to-library-call: a dictionary
/// of `activation` (a transformer::ActivationAttr) and the unit entries
/// `bias` and `residual`.
constexpr llvm::StringLiteral kGemmEpilogueAttrName = "mte.gemm_epilogue";

/// Patterns lowering every transformer op to linalg/tensor/arith/math: the
/// families below, and empty results as empty tensors.
/// `namedMatmul`: f32 linears compute their product with linalg.matmul on
/// the [M, K] view of the input (a library call for the CUDA backend).
void populateTransformerToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                         bool namedMatmul = false);

/// Elementwise arithmetic, math, comparisons, casts, activations; trilu and
/// the rotary embedding.
void populateTransformerElementwiseToLinalgPatterns(
    mlir::RewritePatternSet &patterns);
/// Transpose, reshape, expand, slice, concat, split, gathers, ScatterND,
/// index checks, range and the shape ops.
void populateTransformerDataMovementToLinalgPatterns(
    mlir::RewritePatternSet &patterns);
/// Reductions, softmax, cumsum, layer_norm and rms_norm.
void populateTransformerReductionToLinalgPatterns(
    mlir::RewritePatternSet &patterns);
/// matmul, linear, attention, conv.
void populateTransformerContractionToLinalgPatterns(
    mlir::RewritePatternSet &patterns, bool namedMatmul = false);
/// quantize, dequantize, amax.
void populateTransformerQuantizationToLinalgPatterns(
    mlir::RewritePatternSet &patterns);

/// Builds attention's probabilities [B, H, Sq, Skv] from its scores Q·Kᵀ
/// (same shape, f32 or f64, neither scaled nor masked): the op's scale, mask
/// and causal mask, then softmax over the keys, zeros for a query that sees
/// no key. The last argument is the element type the second product reads
/// (V's); a builder may return the probabilities in it, rounded once, or in
/// the scores' type (the lowering then casts them).
using AttentionSoftmaxFn = std::function<mlir::Value(
    mlir::OpBuilder &, mlir::Location, transformer::AttentionOp, mlir::Value,
    mlir::Type)>;

/// The lowering of transformer.attention alone, as
/// populateTransformerToLinalgPatterns does it, with the softmax step built
/// by `softmax` (the CUDA backend's row kernel).
void populateAttentionToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                       bool namedMatmul,
                                       AttentionSoftmaxFn softmax);

} // namespace mte

#endif // MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H
