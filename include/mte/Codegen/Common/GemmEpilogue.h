//===- GemmEpilogue.h - the tag of a GEMM epilogue a library runs -*- C++ -*-===//
//
// A backend that hands GEMMs to a library (CUDA: cuBLASLt) tags the
// elementwise op after each product with what it computes, so that the
// library call can take it over. Passes between the tagging and the call
// (elementwise fusion) keep a tagged op's operands as they are.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_CODEGEN_COMMON_GEMMEPILOGUE_H
#define MTE_CODEGEN_COMMON_GEMMEPILOGUE_H

#include "llvm/ADT/StringRef.h"

namespace mte {

/// The attribute with which a linear's library form tags its epilogue, for
/// mte-matmul-to-library-call: a dictionary of `activation` (a
/// transformer::ActivationAttr), `alpha` (an f32 the product is multiplied
/// by first: the fp8 operands' constant scales; absent: 1) and the unit
/// entries `input_scale`, `weight_scale` (an fp8 operand's dequantisation
/// factor computed on the run), `bias` and `residual`, whose values the
/// epilogue reads in that order after the product, `row_scales` (the two
/// scales are vectors, per row of the input and per output channel, and
/// both are read: cuBLASLt's outer-vector scale mode), and `fp8_output`: the
/// epilogue writes f32 that only ops tagged kGemmFp8OutputAttrName and
/// kGemmOutputAmaxAttrName read (a linear writing E4M3).
constexpr llvm::StringLiteral kGemmEpilogueAttrName = "mte.gemm_epilogue";

/// The unit attribute with which a block-scaled fp8 linear's library form
/// tags its product (mte::buildBlockScaledProduct's linalg.generic), which
/// mte-matmul-to-library-call hands to cuBLASLt's VEC128 x BLK128x128 mode.
constexpr llvm::StringLiteral kBlockScaledGemmAttrName =
    "mte.block_scaled_gemm";

/// The unit attribute of the elementwise op that casts an `fp8_output`
/// epilogue's f32 value times the output scale (its second input, an f32
/// scalar) to E4M3: cuBLASLt's D scale.
constexpr llvm::StringLiteral kGemmFp8OutputAttrName = "mte.gemm_fp8_output";

/// The unit attribute of the reduction that takes an `fp8_output`
/// epilogue's max |y| into a rank-0 f32: cuBLASLt's AMAX_D.
constexpr llvm::StringLiteral kGemmOutputAmaxAttrName = "mte.gemm_output_amax";

} // namespace mte

#endif // MTE_CODEGEN_COMMON_GEMMEPILOGUE_H
