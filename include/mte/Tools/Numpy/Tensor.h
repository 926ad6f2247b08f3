//===- Tensor.h - host tensors for mte tools --------------------*- C++ -*-===//
//
// The dense tensors mte-run reads, generates, prints and writes (and
// mte-compile --calibration reads), and the element conversions they
// need: the narrow float formats (f16, bf16, f8) to and from double,
// seeded random data, and summaries.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_TOOLS_NUMPY_TENSOR_H
#define MTE_TOOLS_NUMPY_TENSOR_H

#include "mte-c/ModelABI.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace mte::numpy {

/// Formats a shape as "[2, 3]"; a scalar is "[]".
std::string formatShape(const std::vector<int64_t> &shape);

/// Returns the name of `dtype` ("f32", "i64", ...), or "dtype N".
std::string dtypeName(int32_t dtype);

/// Returns the number of elements of `shape`.
size_t numElements(const std::vector<int64_t> &shape);

/// A dense, row-major buffer that someone else owns.
struct TensorView {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  const void *data = nullptr;
};

/// A dense, row-major, 64-byte aligned host tensor that owns its buffer.
class Tensor {
public:
  /// Allocates an uninitialised tensor. Returns false and sets `error` when
  /// the size overflows or memory runs out.
  bool allocate(int32_t dtype, std::vector<int64_t> shape, std::string &error);

  int32_t dtype() const { return elementType; }
  const std::vector<int64_t> &shape() const { return dims; }
  size_t numElements() const { return elementCount; }
  size_t numBytes() const { return byteCount; }
  void *data() { return storage.get(); }
  const void *data() const { return storage.get(); }
  TensorView view() const { return {elementType, dims, storage.get()}; }

private:
  struct Free {
    void operator()(void *data) const { std::free(data); }
  };

  int32_t elementType = 0;
  std::vector<int64_t> dims;
  size_t elementCount = 0;
  size_t byteCount = 0;
  std::unique_ptr<void, Free> storage;
};

/// True for the float types numpy lacks (bf16, f8e4m3fn, f8e5m2), which
/// mte-run reads from and writes to .npy files as f32.
bool isNarrowFloat(int32_t dtype);

/// Stores in `result` the f32 tensor `source` converted to `dtype` (bf16,
/// f8e4m3fn or f8e5m2) with round-to-nearest-even. f8e4m3fn has no
/// infinity: values beyond its range saturate to +-448. Returns false and
/// sets `error` when memory runs out.
bool narrowFromF32(const TensorView &source, int32_t dtype, Tensor &result,
                   std::string &error);

/// Stores in `result` the narrow float tensor `source` converted to f32,
/// which is exact. Returns false and sets `error` when memory runs out.
bool widenToF32(const TensorView &source, Tensor &result, std::string &error);

/// A half-open integer range [lo, hi) for random integer inputs.
struct IntRange {
  int64_t lo = 0;
  int64_t hi = 100;
};

/// Checks that every value of `range` fits `dtype`, an integer type. Returns
/// false and sets `error` otherwise.
bool checkIntRange(const IntRange &range, int32_t dtype, std::string &error);

/// Fills `tensor` with random data that depends only on `seed` and
/// `stream`: floats uniform in [-1, 1) (rounded to the element type, never
/// reaching 1), integers uniform in `range`, bools 0 or 1 with equal odds.
void fillRandom(Tensor &tensor, uint64_t seed, uint64_t stream,
                const IntRange &range);

/// What mte-run prints about a tensor's values: minimum, maximum and mean of
/// the non-NaN values, how many are NaN, and the first few values.
struct Summary {
  std::string min, max, mean;
  size_t nanCount = 0;
  std::vector<std::string> firstValues;
};

/// Summarises `tensor`, keeping its first `maxValues` values.
Summary summarize(const TensorView &tensor, size_t maxValues);

} // namespace mte::numpy

#endif // MTE_TOOLS_NUMPY_TENSOR_H
