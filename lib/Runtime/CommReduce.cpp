//===- CommReduce.cpp - the element-wise reductions of collectives --------===//

#include "CommReduce.h"

#include "mte-c/KernelABI.h"
#include "mte-c/ModelABI.h"
#include "mte/Support/FloatBits.h"

#include <cmath>
#include <cstring>
#include <type_traits>

using namespace mte::runtime;

bool mte::runtime::isReducibleDType(int32_t dtype) {
  switch (dtype) {
  case MTE_DTYPE_F32:
  case MTE_DTYPE_F64:
  case MTE_DTYPE_F16:
  case MTE_DTYPE_BF16:
  case MTE_DTYPE_I32:
  case MTE_DTYPE_I64:
    return true;
  default:
    return false;
  }
}

bool mte::runtime::isReduceOp(int32_t op) {
  return op == MTE_REDUCE_SUM || op == MTE_REDUCE_MAX || op == MTE_REDUCE_MIN;
}

const char *mte::runtime::reduceOpName(int32_t op) {
  switch (op) {
  case MTE_REDUCE_SUM:
    return "sum";
  case MTE_REDUCE_MAX:
    return "max";
  case MTE_REDUCE_MIN:
    return "min";
  default:
    return "an unknown op";
  }
}

/// The f32 value of an f16 bit pattern (exact: every f16 is an f32).
static float f16BitsToF32(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13); // infinity or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {
    // Zero or a subnormal, mantissa * 2^-24.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

static float bf16BitsToF32(uint16_t bf16) {
  uint32_t bits = static_cast<uint32_t>(bf16) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

namespace {
/// Combines an accumulator with the next rank's element under `Op`.
template <int32_t Op> struct Combine {
  template <typename T> T operator()(T acc, T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      if constexpr (Op == MTE_REDUCE_SUM)
        return acc + x;
      // A NaN wins: the first one in rank order, so that its bits are the
      // same on every rank.
      if (std::isnan(acc))
        return acc;
      if (std::isnan(x))
        return x;
      return (Op == MTE_REDUCE_MAX ? x > acc : x < acc) ? x : acc;
    } else {
      if constexpr (Op == MTE_REDUCE_SUM) {
        using Unsigned = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<Unsigned>(acc) +
                              static_cast<Unsigned>(x));
      }
      return (Op == MTE_REDUCE_MAX ? x > acc : x < acc) ? x : acc;
    }
  }
};
} // namespace

/// acc[i] = load(inputs[0], i) combined with load(inputs[k], i) for k = 1,
/// 2, ... in order.
template <typename Acc, typename Load, typename Op>
static void accumulate(Acc *acc, const void *const *inputs, size_t numInputs,
                       size_t count, Load load, Op combine) {
  for (size_t i = 0; i < count; ++i)
    acc[i] = load(inputs[0], i);
  for (size_t k = 1; k < numInputs; ++k)
    for (size_t i = 0; i < count; ++i)
      acc[i] = combine(acc[i], load(inputs[k], i));
}

template <int32_t Op>
static void reduceWith(int32_t dtype, const void *const *inputs,
                       size_t numInputs, size_t count, void *out,
                       float *scratch) {
  auto native = [&](auto *typedOut) {
    using T = std::remove_pointer_t<decltype(typedOut)>;
    accumulate(
        typedOut, inputs, numInputs, count,
        [](const void *input, size_t i) {
          return static_cast<const T *>(input)[i];
        },
        Combine<Op>());
  };
  // f16 and bf16 are accumulated in f32 and rounded once.
  auto narrow = [&](float (*widen)(uint16_t), uint16_t (*round)(uint32_t)) {
    accumulate(
        scratch, inputs, numInputs, count,
        [widen](const void *input, size_t i) {
          return widen(static_cast<const uint16_t *>(input)[i]);
        },
        Combine<Op>());
    uint16_t *typedOut = static_cast<uint16_t *>(out);
    for (size_t i = 0; i < count; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &scratch[i], sizeof(bits));
      typedOut[i] = round(bits);
    }
  };
  switch (dtype) {
  case MTE_DTYPE_F32:
    return native(static_cast<float *>(out));
  case MTE_DTYPE_F64:
    return native(static_cast<double *>(out));
  case MTE_DTYPE_I32:
    return native(static_cast<int32_t *>(out));
  case MTE_DTYPE_I64:
    return native(static_cast<int64_t *>(out));
  case MTE_DTYPE_F16:
    return narrow(f16BitsToF32, mte::f32BitsToF16);
  case MTE_DTYPE_BF16:
    return narrow(bf16BitsToF32, mte::f32BitsToBF16);
  }
}

void mte::runtime::reduceElements(int32_t dtype, int32_t op,
                                  const void *const *inputs, size_t numInputs,
                                  size_t count, void *out, float *scratch) {
  switch (op) {
  case MTE_REDUCE_SUM:
    return reduceWith<MTE_REDUCE_SUM>(dtype, inputs, numInputs, count, out,
                                      scratch);
  case MTE_REDUCE_MAX:
    return reduceWith<MTE_REDUCE_MAX>(dtype, inputs, numInputs, count, out,
                                      scratch);
  case MTE_REDUCE_MIN:
    return reduceWith<MTE_REDUCE_MIN>(dtype, inputs, numInputs, count, out,
                                      scratch);
  }
}
