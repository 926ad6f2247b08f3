//===- CudnnAttention.h - attention through cuDNN ---------------*- C++ -*-===//
//
// Internal to libmte_runtime. mte_cuda_attention (FlashAttention.cpp) can
// offer each call without a key bias to cuDNN's fused flash attention, and
// runs its own kernel where cuDNN does not take it. MTE_ATTENTION chooses:
// unset or "kernel", mte's kernel always (until the cuDNN route has passed
// the GPU checks, docs/cuda.md); "auto", cuDNN where it opens and plans and
// enqueues the shape; "cudnn", cuDNN for every call it is offered, where a
// call it cannot plan or enqueue is an error (how the GPU checks prove the
// route); any other value is an error.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_CUDNNATTENTION_H
#define MTE_LIB_RUNTIME_CUDNNATTENTION_H

#include <cstdint>
#include <string>

namespace mte::cuda {

/// One attention of mte_cuda_attention: Q, K, V and O are [batch, tokens,
/// heads * headDim] with the given batch and row strides (in elements),
/// heads packed in the rows; `dtype` is MTE_DTYPE_BF16 or MTE_DTYPE_F16.
struct AttentionShape {
  int32_t dtype;
  int64_t batch, heads, kvHeads, queries, keys, headDim;
  int64_t qBatchStride, qRowStride, kBatchStride, kRowStride;
  int64_t vBatchStride, vRowStride, oBatchStride, oRowStride;
  /// The diagonal aligned bottom right: key j is hidden from query i when
  /// j > i + (keys - queries).
  bool causal;
};

/// "batch 2, 8/2 heads, 300x300 tokens, head dimension 128, causal".
std::string describeAttention(const AttentionShape &shape);

enum class CudnnAttention {
  Enqueued, // on this thread's stream
  NotTaken, // mte's kernel runs it (MTE_ATTENTION, cuDNN absent, no plan,
            // not enqueued)
  Failed,   // the reason is in `error`
};

/// Enqueues O = softmax(scale · Q·Kᵀ [+ causal mask]) · V through cuDNN.
/// With `toScratch`, O goes to a buffer of cuDNN's plan for this shape,
/// [batch, queries, heads * headDim] packed and kept for the process, whose
/// address `*scratch` receives, and the shape's O strides are not read.
CudnnAttention enqueueCudnnAttention(const AttentionShape &shape,
                                     const void *q, const void *k,
                                     const void *v, void *o, float scale,
                                     bool toScratch, void **scratch,
                                     std::string &error);

} // namespace mte::cuda

#endif // MTE_LIB_RUNTIME_CUDNNATTENTION_H
