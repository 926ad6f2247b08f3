//===- FlashAttentionParams.h - arguments of the attention kernels -*- C++
//-*-===//
//
// Internal to libmte_runtime: the one by-value argument of the kernels in
// FlashAttention.cu, filled by FlashAttention.cpp. Strides count elements.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_FLASHATTENTIONPARAMS_H
#define MTE_LIB_RUNTIME_FLASHATTENTIONPARAMS_H

#include <stdint.h>

#ifdef __CUDACC__
#define MTE_HOST_DEVICE __host__ __device__
#else
#define MTE_HOST_DEVICE
#endif

namespace mte {

struct AttentionParams {
  const void *q, *k, *v;
  void *o;
  int64_t qBatchStride, qRowStride;
  int64_t kBatchStride, kRowStride;
  int64_t vBatchStride, vRowStride;
  int64_t oBatchStride, oRowStride;
  int32_t heads, kvHeads;
  int32_t queries, keys;
  float scaleLog2; // the softmax scale times log2(e)
  // Null, or the f32 bias of each key, added to the scaled scores (row
  // `batch * keyBiasBatchStride`); the kernels add keyBias / scale to the
  // unscaled ones.
  const float *keyBias;
  int64_t keyBiasBatchStride;
  float inverseScale;
  // Null, or the FP8 scale: the output is then E4M3 codes, each value
  // rounded to the input type, times *outScale, saturated.
  const float *outScale;
  // Null, or [batch * queries * heads]: each query row's max |o| over a
  // head, of the values as stored (rounded to the input type).
  float *rowMax;
};

/// The argument of mte_attention_quantize_<type>: FP8 scaling's outputs
/// from a 16-bit attention output that another kernel (cuDNN's) wrote, the
/// same as AttentionParams::outScale and rowMax give: with `outScale`, the
/// E4M3 codes in `o`; with `rowMax`, each row's and head's max |o|.
struct AttentionQuantizeParams {
  const void *source; // [batch, queries, heads * headDim] with the strides
  int64_t sourceBatchStride, sourceRowStride;
  void *o; // E4M3 codes, the same shape with its strides
  int64_t oBatchStride, oRowStride;
  int32_t heads, queries, headDim;
  int64_t chunks; // of 8 elements: batch * queries * heads * headDim / 8
  const float *outScale;
  float *rowMax; // null, or [batch * queries * heads]
};
constexpr int kAttentionQuantizeThreads = 256;

/// Launch shape of the kernels: 4 warps of 32 query rows each, blocks of
/// 64 keys. (Measured on the H200 against 64-row query blocks and 128-key
/// blocks: as fast at head dimension 64, 1.2-1.3x faster at 128.)
constexpr int kAttentionThreads = 128;
constexpr int kAttentionQueryBlock = 128;
constexpr int kAttentionKeyBlock = 64;
/// Shared memory of one block: the Q tile and two buffers each of K and V.
MTE_HOST_DEVICE constexpr int attentionSharedBytes(int headDim,
                                                   int elementBytes) {
  return (kAttentionQueryBlock + 4 * kAttentionKeyBlock) * headDim *
         elementBytes;
}

} // namespace mte

#endif // MTE_LIB_RUNTIME_FLASHATTENTIONPARAMS_H
