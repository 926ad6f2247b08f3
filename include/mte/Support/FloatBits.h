//===- FloatBits.h - f32 to bf16 / f16 / e4m3 rounding on bit patterns ----===//
//
// Round-to-nearest-even narrowing of f32 bit patterns, shared by the
// compiler (weights converted at compile time) and the runtime (external
// weights converted when a model opens), so both give the same bits. NaNs
// stay quiet NaNs; overflow rounds to infinity, as IEEE narrowing does,
// except for E4M3, which has none and saturates (cvt.rn.satfinite, ONNX's
// saturate = 1).
//
//===----------------------------------------------------------------------===//

#ifndef MTE_SUPPORT_FLOATBITS_H
#define MTE_SUPPORT_FLOATBITS_H

#include <cstdint>
#include <cstring>

namespace mte {

inline uint16_t f32BitsToBF16(uint32_t bits) {
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign, quiet
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  uint32_t roundingBias = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

inline uint16_t f32BitsToF16(uint32_t bits) {
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (magnitude >= 0x477ff000u) // rounds to or past 65520: infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x38800000u) { // below 2^-14: an f16 subnormal or zero
    if (magnitude < 0x33000000u) // below half the smallest subnormal
      return static_cast<uint16_t>(sign);
    uint32_t exponent = magnitude >> 23;
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent; // 14..24 for this range
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  // Normal: rebias the exponent (127 -> 15) and round 13 mantissa bits.
  uint32_t rebased = magnitude - 0x38000000u;
  uint32_t roundingBias = 0xfffu + ((rebased >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rebased + roundingBias) >> 13));
}

/// The f8E4M3FN code nearest an f32 (ties to even), saturated to +-448;
/// NaN gives the NaN code of its sign.
inline uint8_t f32BitsToE4M3(uint32_t bits) {
  uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN
    return sign | 0x7fu;
  if (magnitude >= 0x43e00000u) // 448 (the largest finite value) and up
    return sign | 0x7eu;
  if (magnitude < 0x3c800000u) { // below 2^-6: a subnormal m * 2^-9, or 0
    if (magnitude <= 0x3a800000u) // at most half of 2^-9: rounds to zero
      return sign;
    uint32_t exponent = magnitude >> 23; // 117..120
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 141 - exponent; // to units of 2^-9: 21..24
    uint32_t code = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (code & 1u)))
      ++code;
    return sign | static_cast<uint8_t>(code);
  }
  // Normal: rebias the exponent (127 -> 7) and round 20 mantissa bits; a
  // carry moves into the exponent, and below 448 the result stays finite.
  uint32_t rebased = magnitude - 0x3c000000u;
  uint32_t roundingBias = 0x7ffffu + ((rebased >> 20) & 1u);
  return sign | static_cast<uint8_t>((rebased + roundingBias) >> 20);
}

/// The E4M3 code of the f32 `bits` divided by `scale` in f32: how an FP8
/// weight is quantized, by mte-compile and, for an external weight, again
/// by the runtime when the model opens.
inline uint8_t quantizeF32BitsToE4M3(uint32_t bits, float scale) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  value /= scale;
  std::memcpy(&bits, &value, sizeof(bits));
  return f32BitsToE4M3(bits);
}

} // namespace mte

#endif // MTE_SUPPORT_FLOATBITS_H
