//===- DType.h - the element types of the model ABI -------------*- C++ -*-===//
//
// Internal to libmte_runtime: the name and size of every mte_dtype (from
// include/mte-c/DTypes.def), for mte_dtype_name/mte_dtype_size, the checks
// of a model's tables and the messages that name element types and shapes.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_DTYPE_H
#define MTE_LIB_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace mte::runtime {

struct DTypeInfo {
  const char *name;
  size_t size;
};

/// Returns the name and size of `dtype`, or null when it is not an mte_dtype.
const DTypeInfo *lookupDType(int32_t dtype);

/// Formats a dtype for a message: its name, or "dtype N (unknown)".
std::string formatDType(int32_t dtype);

/// Formats a shape as "[2, 3]"; a scalar is "[]".
std::string formatShape(int32_t rank, const int64_t *shape);

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_DTYPE_H
