//===- AmaxesParams.h - arguments of the amaxes kernel ----------*- C++ -*-===//
//
// Internal to libmte_runtime: the one by-value argument of the kernel in
// Amaxes.cu, filled by Amaxes.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_AMAXESPARAMS_H
#define MTE_LIB_RUNTIME_AMAXESPARAMS_H

#include <stdint.h>

namespace mte {

/// Inputs of one launch: what fits a kernel's 4 KiB of parameters.
constexpr int kAmaxesPerLaunch = 128;
/// Elements a block reads (a multiple of every vector width, so that each
/// block's first vector is as aligned as the input's first element).
constexpr int64_t kAmaxesChunk = 16384;
constexpr int kAmaxesThreads = 256;

enum class AmaxElement : int32_t { F32, BF16, F16 };

struct AmaxesParams {
  struct Input {
    const void *data;
    int64_t length;
    AmaxElement element;
    int32_t unused;
  } inputs[kAmaxesPerLaunch];
  /// out[i]'s bits, zero before the launch: each block takes the max with
  /// its own, as integers (the bits of |x| order as its value does, and a
  /// NaN's above infinity's).
  uint32_t *out;
};

} // namespace mte

#endif // MTE_LIB_RUNTIME_AMAXESPARAMS_H
