//===- Amaxes.cu - the amaxes of delayed FP8 scaling in one kernel --------===//
//
// max |x| of each of up to kAmaxesPerLaunch inputs, one launch for all: the
// blocks of grid row y read 16384-element chunks of input y (16-byte vector
// loads where the input is 16-byte aligned), reduce them with warp
// reductions and shared memory, and take the max with out[y] by an integer
// atomicMax on the bits of |x|. Bits of non-negative floats order as their
// values do and a NaN's lie above infinity's, so the result is exact,
// propagates NaN and does not depend on the blocks' order.
//
// Compiled by nvcc into a fatbin embedded in libmte_runtime (Amaxes.cpp
// launches it for mte_cuda_amaxes).
//
//===----------------------------------------------------------------------===//

#include <cuda_fp16.h>
#include <stdint.h>

#include "AmaxesParams.h"

namespace {

using mte::AmaxElement;

/// The f32 bits of |x| for x in `element`'s encoding.
template <AmaxElement element>
__device__ __forceinline__ uint32_t magnitudeBits(uint32_t raw) {
  if constexpr (element == AmaxElement::F32)
    return raw & 0x7fffffffu;
  else if constexpr (element == AmaxElement::BF16)
    return (raw & 0x7fffu) << 16; // bf16 is f32's upper half
  else
    return __float_as_uint(__half2float(__ushort_as_half(
               static_cast<unsigned short>(raw)))) &
           0x7fffffffu;
}

/// This thread's max of the magnitudes' bits in [begin, end) of `data`.
template <AmaxElement element, typename T>
__device__ __forceinline__ uint32_t threadMax(const T *data, int64_t begin,
                                              int64_t end) {
  constexpr int lanes = 16 / sizeof(T);
  uint32_t m = 0;
  int64_t vectorEnd = end;
  if (reinterpret_cast<uintptr_t>(data + begin) % 16 == 0) {
    vectorEnd = begin + (end - begin) / lanes * lanes;
    const uint4 *vectors = reinterpret_cast<const uint4 *>(data + begin);
    int64_t count = (vectorEnd - begin) / lanes;
#pragma unroll 4
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
      uint4 v = __ldg(vectors + i);
      const T *values = reinterpret_cast<const T *>(&v);
#pragma unroll
      for (int l = 0; l < lanes; ++l)
        m = max(m, magnitudeBits<element>(values[l]));
    }
  } else {
    vectorEnd = begin;
  }
  for (int64_t i = vectorEnd + threadIdx.x; i < end; i += blockDim.x)
    m = max(m, magnitudeBits<element>(data[i]));
  return m;
}

} // namespace

extern "C" __global__ void __launch_bounds__(mte::kAmaxesThreads)
    mte_amaxes(mte::AmaxesParams p) {
  const mte::AmaxesParams::Input input = p.inputs[blockIdx.y];
  const int64_t begin = blockIdx.x * mte::kAmaxesChunk;
  if (begin >= input.length)
    return;
  const int64_t end = min(begin + mte::kAmaxesChunk, input.length);
  uint32_t m;
  switch (input.element) {
  case AmaxElement::F32:
    m = threadMax<AmaxElement::F32>(static_cast<const uint32_t *>(input.data),
                                    begin, end);
    break;
  case AmaxElement::BF16:
    m = threadMax<AmaxElement::BF16>(static_cast<const uint16_t *>(input.data),
                                     begin, end);
    break;
  default:
    m = threadMax<AmaxElement::F16>(static_cast<const uint16_t *>(input.data),
                                    begin, end);
    break;
  }
  __shared__ uint32_t warpMax[mte::kAmaxesThreads / 32];
  m = __reduce_max_sync(0xffffffffu, m);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    warpMax[warp] = m;
  __syncthreads();
  if (warp == 0) {
    m = lane < mte::kAmaxesThreads / 32 ? warpMax[lane] : 0u;
    m = __reduce_max_sync(0xffffffffu, m);
    if (lane == 0 && m != 0)
      atomicMax(p.out + blockIdx.y, m);
  }
}
