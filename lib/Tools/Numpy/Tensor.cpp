//===- Tensor.cpp - host tensors for mte tools ----------------------------===//

#include "mte/Tools/Numpy/Tensor.h"

#include "mte-c/Runtime.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

using namespace mte::numpy;

std::string mte::numpy::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string mte::numpy::dtypeName(int32_t dtype) {
  if (const char *name = mte_dtype_name(dtype))
    return name;
  return "dtype " + std::to_string(dtype);
}

size_t mte::numpy::numElements(const std::vector<int64_t> &shape) {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<size_t>(dim);
  return count;
}

bool Tensor::allocate(int32_t dtype, std::vector<int64_t> shape,
                      std::string &error) {
  size_t elementSize = mte_dtype_size(dtype);
  size_t count = 1;
  bool overflow = elementSize == 0;
  for (int64_t dim : shape) {
    if (dim < 0 ||
        (dim && count > SIZE_MAX / elementSize / static_cast<uint64_t>(dim))) {
      overflow = true;
      break;
    }
    count *= static_cast<size_t>(dim);
  }
  if (overflow) {
    error = "cannot hold a " + dtypeName(dtype) + " tensor of shape " +
            formatShape(shape);
    return false;
  }
  size_t bytes = count * elementSize;
  void *buffer = nullptr;
  if (::posix_memalign(&buffer, 64, bytes ? bytes : 1) != 0) {
    error = "out of memory for a " + dtypeName(dtype) + " tensor of shape " +
            formatShape(shape) + " (" + std::to_string(bytes) + " bytes)";
    return false;
  }
  elementType = dtype;
  dims = std::move(shape);
  elementCount = count;
  byteCount = bytes;
  storage.reset(buffer);
  return true;
}

//===----------------------------------------------------------------------===//
// Narrow float formats
//===----------------------------------------------------------------------===//

namespace {
/// A binary float format of at most 16 bits with an implicit leading one.
/// IEEE-like formats reserve the top exponent for infinities and NaNs;
/// "finite-only" formats (f8e4m3fn) use it for numbers except the all-ones
/// code, their NaN.
struct FloatFormat {
  int exponentBits;
  int mantissaBits;
  bool finiteOnly;

  uint32_t maxExponent() const { return (1u << exponentBits) - 1; }
  uint32_t mantissaMask() const { return (1u << mantissaBits) - 1; }
  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  uint32_t signBit() const { return 1u << (exponentBits + mantissaBits); }
  uint32_t maxFiniteCode() const {
    return finiteOnly ? (maxExponent() << mantissaBits) | (mantissaMask() - 1)
                      : ((maxExponent() - 1) << mantissaBits) | mantissaMask();
  }
};
} // namespace

static constexpr FloatFormat kF16{5, 10, false};
static constexpr FloatFormat kBF16{8, 7, false};
static constexpr FloatFormat kF8E4M3FN{4, 3, true};
static constexpr FloatFormat kF8E5M2{5, 2, false};

/// Returns the format of a float type narrower than f32, or null.
static const FloatFormat *narrowFormat(int32_t dtype) {
  switch (dtype) {
  case MTE_DTYPE_F16:
    return &kF16;
  case MTE_DTYPE_BF16:
    return &kBF16;
  case MTE_DTYPE_F8E4M3FN:
    return &kF8E4M3FN;
  case MTE_DTYPE_F8E5M2:
    return &kF8E5M2;
  default:
    return nullptr;
  }
}

/// Returns the value of `code` in `format`.
static double decodeFloat(const FloatFormat &format, uint32_t code) {
  bool negative = code & format.signBit();
  uint32_t exponent = (code >> format.mantissaBits) & format.maxExponent();
  uint32_t mantissa = code & format.mantissaMask();
  if (exponent == format.maxExponent()) {
    if (!format.finiteOnly)
      return mantissa ? std::numeric_limits<double>::quiet_NaN()
                      : (negative ? -HUGE_VAL : HUGE_VAL);
    if (mantissa == format.mantissaMask())
      return std::numeric_limits<double>::quiet_NaN();
  }
  double magnitude =
      exponent == 0
          ? std::ldexp(mantissa, 1 - format.bias() - format.mantissaBits)
          : std::ldexp(mantissa + (1u << format.mantissaBits),
                       static_cast<int>(exponent) - format.bias() -
                           format.mantissaBits);
  return negative ? -magnitude : magnitude;
}

/// Rounds `value` to the nearest code of `format`, ties to even. Positive
/// codes decode to increasing values, so the nearest one is found by binary
/// search, which keeps the rounding obviously right for every format.
static uint32_t encodeFloat(const FloatFormat &format, double value) {
  if (std::isnan(value))
    return format.finiteOnly ? (format.maxExponent() << format.mantissaBits) |
                                   format.mantissaMask()
                             : (format.maxExponent() << format.mantissaBits) |
                                   (1u << (format.mantissaBits - 1));
  uint32_t sign = std::signbit(value) ? format.signBit() : 0;
  double magnitude = std::fabs(value);
  uint32_t maxCode = format.maxFiniteCode();
  double maxValue = decodeFloat(format, maxCode);
  if (magnitude >= maxValue) {
    if (format.finiteOnly)
      return sign | maxCode;
    // IEEE rounding: halfway past the largest finite value goes to infinity.
    double halfStep = (maxValue - decodeFloat(format, maxCode - 1)) / 2;
    return sign | (magnitude >= maxValue + halfStep
                       ? format.maxExponent() << format.mantissaBits
                       : maxCode);
  }
  uint32_t below = 0, above = maxCode;
  while (above - below > 1) {
    uint32_t middle = below + (above - below) / 2;
    if (decodeFloat(format, middle) <= magnitude)
      below = middle;
    else
      above = middle;
  }
  double toBelow = magnitude - decodeFloat(format, below);
  double toAbove = decodeFloat(format, above) - magnitude;
  uint32_t code = toBelow < toAbove   ? below
                  : toAbove < toBelow ? above
                  : (below & 1)       ? above
                                      : below;
  return sign | code;
}

/// Returns element `index` of a buffer of `format` codes.
static uint32_t loadCode(const FloatFormat &format, const void *data,
                         size_t index) {
  if (format.exponentBits + format.mantissaBits < 8)
    return static_cast<const uint8_t *>(data)[index];
  uint16_t code;
  std::memcpy(&code, static_cast<const uint8_t *>(data) + 2 * index, 2);
  return code;
}

/// Stores `code` as element `index` of a buffer of `format` codes.
static void storeCode(const FloatFormat &format, void *data, size_t index,
                      uint32_t code) {
  if (format.exponentBits + format.mantissaBits < 8) {
    static_cast<uint8_t *>(data)[index] = static_cast<uint8_t>(code);
    return;
  }
  uint16_t code16 = static_cast<uint16_t>(code);
  std::memcpy(static_cast<uint8_t *>(data) + 2 * index, &code16, 2);
}

bool mte::numpy::isNarrowFloat(int32_t dtype) {
  return dtype == MTE_DTYPE_BF16 || dtype == MTE_DTYPE_F8E4M3FN ||
         dtype == MTE_DTYPE_F8E5M2;
}

bool mte::numpy::narrowFromF32(const TensorView &source, int32_t dtype,
                             Tensor &result, std::string &error) {
  const FloatFormat &format = *narrowFormat(dtype);
  if (!result.allocate(dtype, source.shape, error))
    return false;
  const float *values = static_cast<const float *>(source.data);
  for (size_t i = 0, e = result.numElements(); i < e; ++i)
    storeCode(format, result.data(), i, encodeFloat(format, values[i]));
  return true;
}

bool mte::numpy::widenToF32(const TensorView &source, Tensor &result,
                          std::string &error) {
  const FloatFormat &format = *narrowFormat(source.dtype);
  if (!result.allocate(MTE_DTYPE_F32, source.shape, error))
    return false;
  float *values = static_cast<float *>(result.data());
  for (size_t i = 0, e = result.numElements(); i < e; ++i)
    values[i] = static_cast<float>(
        decodeFloat(format, loadCode(format, source.data, i)));
  return true;
}

//===----------------------------------------------------------------------===//
// Random data
//===----------------------------------------------------------------------===//

namespace {
/// The limits of an integer element type.
struct IntLimits {
  int64_t min;
  uint64_t max;
};
} // namespace

/// Sets `limits` to those of `dtype`; false when it is not an integer type.
static bool intLimits(int32_t dtype, IntLimits &limits) {
  switch (dtype) {
  case MTE_DTYPE_I8:
    limits = {INT8_MIN, INT8_MAX};
    return true;
  case MTE_DTYPE_I16:
    limits = {INT16_MIN, INT16_MAX};
    return true;
  case MTE_DTYPE_I32:
    limits = {INT32_MIN, INT32_MAX};
    return true;
  case MTE_DTYPE_I64:
    limits = {INT64_MIN, INT64_MAX};
    return true;
  case MTE_DTYPE_U8:
    limits = {0, UINT8_MAX};
    return true;
  case MTE_DTYPE_U16:
    limits = {0, UINT16_MAX};
    return true;
  case MTE_DTYPE_U32:
    limits = {0, UINT32_MAX};
    return true;
  case MTE_DTYPE_U64:
    limits = {0, UINT64_MAX};
    return true;
  default:
    return false;
  }
}

bool mte::numpy::checkIntRange(const IntRange &range, int32_t dtype,
                             std::string &error) {
  IntLimits limits;
  if (!intLimits(dtype, limits))
    return true;
  if (range.lo < limits.min ||
      (range.hi > 0 && static_cast<uint64_t>(range.hi - 1) > limits.max)) {
    error = "values in [" + std::to_string(range.lo) + ", " +
            std::to_string(range.hi) + ") do not fit " + dtypeName(dtype);
    return false;
  }
  return true;
}

/// Returns a value uniform in [0, span), span > 0, without modulo bias.
static uint64_t uniformBelow(std::mt19937_64 &engine, uint64_t span) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  uint64_t draw;
  do
    draw = engine();
  while (draw >= limit);
  return draw % span;
}

/// Fills `tensor`, of element type T, with integers uniform in `range`.
template <typename T>
static void fillIntegers(Tensor &tensor, std::mt19937_64 &engine,
                         const IntRange &range) {
  uint64_t span =
      static_cast<uint64_t>(range.hi) - static_cast<uint64_t>(range.lo);
  T *values = static_cast<T *>(tensor.data());
  for (size_t i = 0, e = tensor.numElements(); i < e; ++i)
    values[i] = static_cast<T>(static_cast<uint64_t>(range.lo) +
                               uniformBelow(engine, span));
}

void mte::numpy::fillRandom(Tensor &tensor, uint64_t seed, uint64_t stream,
                          const IntRange &range) {
  std::seed_seq seeds{
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
      static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)};
  std::mt19937_64 engine(seeds);
  // 24 random bits scaled to [-1, 1): every value is exact in f32.
  auto nextFloat = [&engine] {
    return static_cast<float>(engine() >> 40) * 0x1p-23f - 1.0f;
  };
  size_t count = tensor.numElements();
  void *data = tensor.data();
  switch (tensor.dtype()) {
  case MTE_DTYPE_F32:
    for (size_t i = 0; i < count; ++i)
      static_cast<float *>(data)[i] = nextFloat();
    return;
  case MTE_DTYPE_F64:
    for (size_t i = 0; i < count; ++i)
      static_cast<double *>(data)[i] =
          static_cast<double>(engine() >> 11) * 0x1p-52 - 1.0;
    return;
  case MTE_DTYPE_F16:
  case MTE_DTYPE_BF16:
  case MTE_DTYPE_F8E4M3FN:
  case MTE_DTYPE_F8E5M2: {
    const FloatFormat &format = *narrowFormat(tensor.dtype());
    // Values that round up to 1 take the largest code below it instead.
    uint32_t one = encodeFloat(format, 1.0);
    for (size_t i = 0; i < count; ++i) {
      uint32_t code = encodeFloat(format, nextFloat());
      storeCode(format, data, i, code == one ? one - 1 : code);
    }
    return;
  }
  case MTE_DTYPE_BOOL:
    for (size_t i = 0; i < count; ++i)
      static_cast<uint8_t *>(data)[i] = static_cast<uint8_t>(engine() >> 63);
    return;
  case MTE_DTYPE_I8:
    return fillIntegers<int8_t>(tensor, engine, range);
  case MTE_DTYPE_I16:
    return fillIntegers<int16_t>(tensor, engine, range);
  case MTE_DTYPE_I32:
    return fillIntegers<int32_t>(tensor, engine, range);
  case MTE_DTYPE_I64:
    return fillIntegers<int64_t>(tensor, engine, range);
  case MTE_DTYPE_U8:
    return fillIntegers<uint8_t>(tensor, engine, range);
  case MTE_DTYPE_U16:
    return fillIntegers<uint16_t>(tensor, engine, range);
  case MTE_DTYPE_U32:
    return fillIntegers<uint32_t>(tensor, engine, range);
  case MTE_DTYPE_U64:
    return fillIntegers<uint64_t>(tensor, engine, range);
  }
}

//===----------------------------------------------------------------------===//
// Summaries
//===----------------------------------------------------------------------===//

/// Returns element `index` of a buffer of T, whatever its alignment.
template <typename T> static T load(const void *data, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const uint8_t *>(data) + sizeof(T) * index,
              sizeof(T));
  return value;
}

/// Returns element `index` of `tensor` as a double (rounded for 64-bit
/// integers beyond 2^53).
static double elementAsDouble(const TensorView &tensor, size_t index) {
  switch (tensor.dtype) {
  case MTE_DTYPE_F32:
    return load<float>(tensor.data, index);
  case MTE_DTYPE_F64:
    return load<double>(tensor.data, index);
  case MTE_DTYPE_I64:
    return static_cast<double>(load<int64_t>(tensor.data, index));
  case MTE_DTYPE_I32:
    return load<int32_t>(tensor.data, index);
  case MTE_DTYPE_I16:
    return load<int16_t>(tensor.data, index);
  case MTE_DTYPE_I8:
    return load<int8_t>(tensor.data, index);
  case MTE_DTYPE_U64:
    return static_cast<double>(load<uint64_t>(tensor.data, index));
  case MTE_DTYPE_U32:
    return load<uint32_t>(tensor.data, index);
  case MTE_DTYPE_U16:
    return load<uint16_t>(tensor.data, index);
  case MTE_DTYPE_U8:
  case MTE_DTYPE_BOOL:
    return load<uint8_t>(tensor.data, index);
  default: {
    const FloatFormat &format = *narrowFormat(tensor.dtype);
    return decodeFloat(format, loadCode(format, tensor.data, index));
  }
  }
}

/// Formats a value with six significant digits.
static std::string formatDouble(double value) {
  if (std::isnan(value))
    return "nan"; // printf may write "-nan"
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

/// Formats element `index` of `tensor`: integers exactly, bools as
/// true/false, floats with six significant digits.
static std::string formatElement(const TensorView &tensor, size_t index) {
  switch (tensor.dtype) {
  case MTE_DTYPE_BOOL:
    return load<uint8_t>(tensor.data, index) ? "true" : "false";
  case MTE_DTYPE_I64:
    return std::to_string(load<int64_t>(tensor.data, index));
  case MTE_DTYPE_U64:
    return std::to_string(load<uint64_t>(tensor.data, index));
  case MTE_DTYPE_I32:
  case MTE_DTYPE_I16:
  case MTE_DTYPE_I8:
  case MTE_DTYPE_U32:
  case MTE_DTYPE_U16:
  case MTE_DTYPE_U8:
    return std::to_string(static_cast<int64_t>(elementAsDouble(tensor, index)));
  default:
    return formatDouble(elementAsDouble(tensor, index));
  }
}

Summary mte::numpy::summarize(const TensorView &tensor, size_t maxValues) {
  Summary summary;
  size_t count = numElements(tensor.shape);
  size_t minIndex = count, maxIndex = count;
  double minValue = 0, maxValue = 0, sum = 0;
  for (size_t i = 0; i < count; ++i) {
    double value = elementAsDouble(tensor, i);
    if (std::isnan(value)) {
      ++summary.nanCount;
      continue;
    }
    sum += value;
    if (minIndex == count || value < minValue) {
      minIndex = i;
      minValue = value;
    }
    if (maxIndex == count || value > maxValue) {
      maxIndex = i;
      maxValue = value;
    }
  }
  if (minIndex != count) {
    summary.min = formatElement(tensor, minIndex);
    summary.max = formatElement(tensor, maxIndex);
    summary.mean = formatDouble(sum / (count - summary.nanCount));
  }
  for (size_t i = 0; i < count && i < maxValues; ++i)
    summary.firstValues.push_back(formatElement(tensor, i));
  return summary;
}
