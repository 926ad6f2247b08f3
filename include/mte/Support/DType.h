//===- DType.h - element types of the model ABI -----------------*- C++ -*-===//
//
// The compiler's side of include/mte-c/DTypes.def: which MLIR element type
// each mte_dtype is, and the enumerator's name for generated C. The runtime
// reads the same list for names and sizes.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_SUPPORT_DTYPE_H
#define MTE_SUPPORT_DTYPE_H

#include "mte-c/ModelABI.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mte {

/// The model ABI's element type for `type`, or nothing when it has none.
std::optional<mte_dtype> getDType(mlir::Type type);

/// The enumerator of `dtype` in ModelABI.h ("MTE_DTYPE_F32").
llvm::StringRef getDTypeEnumerator(mte_dtype dtype);

} // namespace mte

#endif // MTE_SUPPORT_DTYPE_H
