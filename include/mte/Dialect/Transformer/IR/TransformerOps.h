//===- TransformerOps.h - transformer dialect operations --------*- C++ -*-===//

#ifndef MTE_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_H
#define MTE_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_H

#include "mte/Dialect/Transformer/IR/TransformerDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mte/Dialect/Transformer/IR/TransformerEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mte/Dialect/Transformer/IR/TransformerAttrs.h.inc"

namespace mte::transformer {

/// Infers the result type of a binary elementwise op under numpy broadcasting.
/// The operand element types must agree; the result takes `resultElementType`
/// when given, the operands' otherwise.
llvm::LogicalResult
inferBroadcastBinaryType(std::optional<mlir::Location> loc, mlir::Type lhs,
                         mlir::Type rhs, mlir::Type resultElementType,
                         llvm::SmallVectorImpl<mlir::Type> &inferred);

/// Normalises `axis` (negative counts from the back) against `rank`; returns
/// std::nullopt when it is out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Whether `elementType` is one of the fp8 types the dialect takes
/// (Transformer_Fp8: E4M3FN, E5M2).
inline bool isFp8Type(mlir::Type elementType) {
  return llvm::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type>(elementType);
}

/// The block of FP8 block scaling: 1 x 128 values of an activation's rows,
/// 128 x 128 of a weight (cuBLASLt's VEC128 and BLK128x128 scale modes).
inline constexpr int64_t kFp8BlockSize = 128;

/// The shape of the 1 x kFp8BlockSize block scales of `shape` (its last
/// dimension divided by the block), or nothing when the last dimension is
/// not a multiple of the block.
std::optional<llvm::SmallVector<int64_t>>
fp8BlockScaleShape(llvm::ArrayRef<int64_t> shape);

} // namespace mte::transformer

#define GET_OP_CLASSES
#include "mte/Dialect/Transformer/IR/TransformerOps.h.inc"

#endif // MTE_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_H
