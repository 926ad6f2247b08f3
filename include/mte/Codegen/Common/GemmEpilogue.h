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
/// epilogue reads in that order after the product.
constexpr llvm::StringLiteral kGemmEpilogueAttrName = "mte.gemm_epilogue";

/// The unit attribute with which a block-scaled fp8 linear's library form
/// tags its product (mte::buildBlockScaledProduct's linalg.generic), which
/// mte-matmul-to-library-call hands to cuBLASLt's VEC128 x BLK128x128 mode.
constexpr llvm::StringLiteral kBlockScaledGemmAttrName =
    "mte.block_scaled_gemm";

} // namespace mte

#endif // MTE_CODEGEN_COMMON_GEMMEPILOGUE_H
