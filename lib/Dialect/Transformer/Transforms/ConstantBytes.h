//===- ConstantBytes.h - weights rearranged at compile time -----*- C++ -*-===//
//
// Internal to lib/Dialect/Transformer/Transforms: building new weight
// constants from the bytes of others (horizontal fusion concatenates them,
// tensor parallelism regroups their columns by rank), exactly for every
// element type.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_CONSTANTBYTES_H
#define MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_CONSTANTBYTES_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <vector>

namespace mte::transformer {

/// The value of `v` when it is a constant of whole-byte elements (a weight
/// whose bytes can be rearranged), else null.
mlir::ElementsAttr constantOperand(mlir::Value v);

/// The row-major bytes of a constant, a splat expanded into `storage`; none
/// for a resource whose blob is not loaded.
std::optional<llvm::ArrayRef<char>> rawBytes(mlir::ElementsAttr attr,
                                             std::vector<char> &storage);

/// Concatenates constants along `axis` by copying bytes. The result is a
/// resource blob when a part is one (weights), and inline otherwise (small
/// biases).
mlir::FailureOr<mlir::ElementsAttr>
concatConstants(llvm::ArrayRef<mlir::ElementsAttr> parts, int64_t axis,
                llvm::StringRef blobName);

/// A range [offset, offset + size) of indices along one axis.
struct IndexRange {
  int64_t offset;
  int64_t size;
};

/// The slices of `value` along `axis` at `ranges`, one after another (a
/// range may repeat), as a new constant of the same kind.
mlir::FailureOr<mlir::ElementsAttr>
gatherSlices(mlir::ElementsAttr value, int64_t axis,
             llvm::ArrayRef<IndexRange> ranges, llvm::StringRef blobName);

} // namespace mte::transformer

#endif // MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_CONSTANTBYTES_H
