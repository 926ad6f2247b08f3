//===- TransformerToLinalg.h - reference lowering ---------------*- C++ -*-===//

#ifndef MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H
#define MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_CONVERTTRANSFORMERTOLINALG
#include "mte/Conversion/Passes.h.inc"

/// Patterns lowering every transformer op to linalg/tensor/arith/math: the
/// families below, and empty results as empty tensors.
void populateTransformerToLinalgPatterns(mlir::RewritePatternSet &patterns);

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
    mlir::RewritePatternSet &patterns);
/// quantize, dequantize, amax.
void populateTransformerQuantizationToLinalgPatterns(
    mlir::RewritePatternSet &patterns);

// The steps of the reference forms that a backend's own forms of an op
// reuse, so that they compute the same thing.

/// A linear's epilogue on its `product` (the output's shape, in the
/// accumulator type): times the fp8 operands' scales, + bias, the
/// activation, + residual, rounded to the output type. The elementwise op's
/// inputs are the product, the scales, the bias and the residual, in that
/// order, those the linear has. With `foldedScale`, the scales that are
/// constants are no inputs: their product, `*foldedScale`, is a constant of
/// the body (a library GEMM's alpha). The epilogue of a linear with an fp8
/// output stops at the f32 value, before the output scale (buildFp8Output
/// takes it from there).
mlir::Value buildLinearEpilogue(mlir::OpBuilder &b, transformer::LinearOp op,
                                mlir::Value product,
                                float *foldedScale = nullptr);

/// An E4M3-writing linear's results from its f32 epilogue value `y`: the
/// saturating cast of `y * output_scale` and, if the linear has one, the
/// amax of `y` (transformer.quantize and transformer.amax, which the
/// lowering then takes, so both are computed exactly as they would be
/// apart).
llvm::SmallVector<mlir::Value> buildFp8Output(mlir::OpBuilder &b,
                                              transformer::LinearOp op,
                                              mlir::Value y);

/// A block-scaled fp8 linear's product [M, N] in f32 over the [M, K] view of
/// its input: one linalg.generic over (m, n, k) reading the input [M, K],
/// the weight [N, K], the input's scales transposed to [K / 128, M] and the
/// weight's [ceil(N / 128), K / 128] scales with their rows padded to a
/// multiple of 4, accumulating `x * w * input_scale * weight_scale` (the
/// scale layouts are cuBLASLt's VEC128 and BLK128x128 ones, so that a
/// library call can take the operands as they are).
mlir::linalg::GenericOp buildBlockScaledProduct(mlir::OpBuilder &b,
                                                transformer::LinearOp op);

/// Attention's query, key and value with their heads unpacked:
/// [B, Sq, H, D], [B, Skv, KvH, D] and [B, Skv, KvH, Dv].
struct AttentionHeads {
  mlir::Value query, key, value;
};
AttentionHeads unpackAttentionHeads(mlir::OpBuilder &b,
                                    transformer::AttentionOp op);

/// Attention's probabilities [B, H, Sq, Skv] from its scores Q·Kᵀ (same
/// shape, f32 or f64, neither scaled nor masked): the op's scale, mask and
/// causal mask, then softmax over the keys, zeros for a query that sees no
/// key; in the scores' type.
mlir::Value buildAttentionProbabilities(mlir::OpBuilder &b, mlir::Location loc,
                                        transformer::AttentionOp op,
                                        mlir::Value scores);

} // namespace mte

#endif // MTE_CONVERSION_TRANSFORMERTOLINALG_TRANSFORMERTOLINALG_H
