//===- DType.cpp - element types of the model ABI -------------------------===//

#include "mte/Support/DType.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

std::optional<mte_dtype> mte::getDType(Type type) {
  if (type.isF32())
    return MTE_DTYPE_F32;
  if (type.isF16())
    return MTE_DTYPE_F16;
  if (type.isBF16())
    return MTE_DTYPE_BF16;
  if (type.isF64())
    return MTE_DTYPE_F64;
  if (isa<Float8E4M3FNType>(type))
    return MTE_DTYPE_F8E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return MTE_DTYPE_F8E5M2;
  if (type.isInteger(1))
    return MTE_DTYPE_BOOL;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 8:
    return isUnsigned ? MTE_DTYPE_U8 : MTE_DTYPE_I8;
  case 16:
    return isUnsigned ? MTE_DTYPE_U16 : MTE_DTYPE_I16;
  case 32:
    return isUnsigned ? MTE_DTYPE_U32 : MTE_DTYPE_I32;
  case 64:
    return isUnsigned ? MTE_DTYPE_U64 : MTE_DTYPE_I64;
  default:
    return std::nullopt;
  }
}

llvm::StringRef mte::getDTypeEnumerator(mte_dtype dtype) {
  switch (dtype) {
#define MTE_DTYPE(SUFFIX, VALUE, NAME, SIZE)                                   \
  case MTE_DTYPE_##SUFFIX:                                                     \
    return "MTE_DTYPE_" #SUFFIX;
#include "mte-c/DTypes.def"
  }
  llvm_unreachable("not an mte_dtype");
}
