//===- CheckedShape.h - element counts without overflow ---------*- C++ -*-===//
//
// Shapes that come from a model (folded shape inputs, attributes) may hold
// any 64-bit values. A shape is valid when every dimension is non-negative
// and the element count fits in int64_t; the importer and the verifiers
// ask this before building a type from it, so that no product wraps.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_SUPPORT_CHECKEDSHAPE_H
#define MTE_SUPPORT_CHECKEDSHAPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdint>
#include <optional>

namespace mte {

/// The number of elements of `shape`, or none when a dimension is negative
/// or the product overflows int64_t.
inline std::optional<int64_t> checkedElementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(count, d, count))
      return std::nullopt;
  return count;
}

/// The length of ONNX Range(start, limit, delta), max(ceil((limit - start) /
/// delta), 0), or none when it is not finite or above `maxLength`: the
/// doubles are compared before any conversion to an integer, which for a
/// value beyond int64_t would be undefined.
inline std::optional<int64_t> rangeLength(double start, double limit,
                                          double delta, double maxLength) {
  double steps = std::ceil((limit - start) / delta);
  if (std::isnan(steps) || steps > maxLength)
    return std::nullopt;
  return steps > 0 ? static_cast<int64_t>(steps) : 0;
}

} // namespace mte

#endif // MTE_SUPPORT_CHECKEDSHAPE_H
