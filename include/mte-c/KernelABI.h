/*===- KernelABI.h - runtime functions that model code calls ------*- C -*-===*\
|*                                                                            *|
|* The entry points of libmte_runtime that the code mte-compile generates    *|
|* calls during a forward, besides the mgpu* functions of MLIR's GPU         *|
|* runtime ABI. The runtime's definitions include this header, so a change   *|
|* to a signature here is a compile error there, and the compiler derives    *|
|* the types of its calls from these declarations. Parameters are uint64_t   *|
|* (device addresses), int64_t, int32_t or float, and the functions return   *|
|* nothing: a failure is recorded and reported by the run that enqueued the  *|
|* work (Runtime.h). Each call enqueues on the stream the runtime set for    *|
|* the run, on the device the model was opened on.                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MTE_C_KERNELABI_H
#define MTE_C_KERNELABI_H

#include <stdint.h>

#if defined(MTE_RUNTIME_BUILD) && defined(__GNUC__)
#define MTE_KERNEL_API __attribute__((visibility("default")))
#else
#define MTE_KERNEL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A GEMM through cuBLASLt (mte-matmul-to-library-call):
 * out[b, m, n] = epilogue(alpha * x[b, m, k] . W[b] + beta * C) for b < batch, with
 * W[b] [k, n] (transB = 0) or [n, k] (transB = 1), and C = `residual` when
 * it is not 0, else `out`. x and W are of `dtype`, out and C of `outDtype`
 * (mte_dtype: f32, f16 or bf16), accumulated in f32. `epilogue` is an
 * mte_gemm_epilogue (a cublasLtEpilogue_t), one of DEFAULT, RELU, GELU,
 * BIAS, RELU | BIAS and GELU | BIAS (another value fails the run); with
 * the BIAS flag, `bias` is [n] of outDtype. Row-major, densely packed, device addresses.
 * With `dtype` f8e4m3fn (transB = 1, k and n multiples of 16; outDtype f32,
 * f16 or bf16, and a bias of bf16 when out is f32), the product is
 * multiplied by the f32 scalars at `xScale` and `wScale` (device addresses;
 * 0: 1) before the epilogue: cuBLASLt's B and A scale pointers. With
 * `scaleMode` MTE_GEMM_SCALE_BLOCK128 (batch 1, k a multiple of 128), they
 * are block scales instead (ModelABI.h says how they are laid out), both
 * given, and each block's partial product is scaled before it is summed;
 * with MTE_GEMM_SCALE_OUTER_VEC (batch 1) x's are [m], one per row, and
 * W's [n], one per output channel, both given.
 * `cDtype` is the type of C and the bias: `outDtype`, except for an FP8
 * GEMM with per-tensor scales writing `outDtype` f8e4m3fn, where C and the
 * bias are bf16 or f16 and `out` is saturate(e4m3(y * *outScale)) of the
 * f32 epilogue value y (cuBLASLt's D scale, an f32 device scalar), and
 * `outAmax`, when not 0, receives max |y| (AMAX_D, before the scale); C is
 * then `residual` or nothing (beta = 0). `outScale` and `outAmax` are 0
 * for any other output. */
MTE_KERNEL_API void mte_cuda_gemm(uint64_t x, uint64_t w, uint64_t out,
                                  int64_t batch, int64_t m, int64_t n,
                                  int64_t k, int32_t transB, float alpha,
                                  float beta,
                                  int32_t dtype, int32_t outDtype,
                                  int32_t epilogue, uint64_t bias,
                                  uint64_t residual, uint64_t xScale,
                                  uint64_t wScale, int32_t scaleMode,
                                  int32_t cDtype, uint64_t outScale,
                                  uint64_t outAmax);

/* Fused attention (FlashAttention.cu), for 16-bit Q/K/V and head dimension
 * 16, 32, 64 or 128:
 * out[b, i, h*D : (h+1)*D] = softmax(scale * q_h[b, i] . k_g[b]^T) . v_g[b]
 * with g = h / (heads / kvHeads), and keys j > i + (keys - queries) hidden
 * when `causal` is not 0. q, k, v and out are [batch, tokens, heads * D]
 * slices (kvHeads heads for k and v, D = headDim): device addresses of
 * their first element, and batch and row strides in elements. `dtype` is
 * an mte_dtype (f16 or bf16), the same for all four. A non-zero `keyBias`
 * is an f32 [*, keys] array added to the scaled scores of every head and
 * query (a key-padding mask: -inf hides a key), row b at b *
 * keyBiasBatchStride (0: one row for every batch). A non-zero `outScale`
 * (the device address of an f32) makes `out` E4M3 codes: each value
 * rounded to `dtype`, times the scale, cast with saturation. A non-zero
 * `rowMax` is an f32 [batch * queries * heads] array that gets each query
 * row's max |out| over each head (of the values rounded to `dtype`; NaN
 * if any is), index (b * queries + i) * heads + h: the first level of an
 * FP8 amax of the output. */
MTE_KERNEL_API void
mte_cuda_attention(uint64_t q, uint64_t k, uint64_t v, uint64_t out,
                   int64_t batch, int64_t heads, int64_t kvHeads,
                   int64_t queries, int64_t keys, int64_t headDim,
                   int64_t qBatchStride, int64_t qRowStride,
                   int64_t kBatchStride, int64_t kRowStride,
                   int64_t vBatchStride, int64_t vRowStride,
                   int64_t oBatchStride, int64_t oRowStride, float scale,
                   int32_t causal, int32_t dtype, uint64_t keyBias,
                   int64_t keyBiasBatchStride, uint64_t outScale,
                   uint64_t rowMax);

/* The amaxes of delayed FP8 scaling (Amaxes.cu), all in one launch:
 * out[i] = max |x| over the elements of input i, for the `count` inputs
 * that `table` describes (the host address of int64_t [count][3]: each
 * input's device address, element count and mte_dtype, f32, bf16 or f16;
 * dense). `out` is the device address of f32 [count]; an input holding NaN
 * gives NaN, an empty one 0. Stream-ordered: the table is read before the
 * call returns. */
MTE_KERNEL_API void mte_cuda_amaxes(uint64_t table, int64_t count,
                                    uint64_t out);

/* Collectives of sharded models (mte-compile --tp). A sharded model runs
 * as one rank of the device grid it was compiled for (mte_model_abi's
 * grid_shape); each collective runs over the ranks that share every grid
 * coordinate except those of the axes in `gridAxes` (a bit mask: bit i is
 * axis i), ordered by their linear index. Every rank of such a group makes
 * the same calls in the same order (SPMD). Buffers hold dense elements of
 * `dtype` (an mte_dtype). The functions return nothing: a failure is
 * recorded and reported by the run that made the call (Runtime.h).
 *
 * Host models: host addresses; the collective has run when the call
 * returns. A reduction of f16 or bf16 accumulates in f32 over the ranks in
 * rank order and rounds once; every rank gets the same bits.
 *
 * CUDA models: device addresses on the model's device; the collective is
 * enqueued on the run's stream, ordered after the work enqueued before it
 * and before the work after, and the call returns without waiting for it
 * (the host code that calls it may be being captured into a CUDA graph).
 * Reductions are NCCL's (ncclAllReduce, ncclReduceScatter): every rank of
 * a group gets the same bits, but the order and precision of the
 * accumulation are NCCL's (f16 and bf16 may round at each step), not the
 * host's. Collectives over a group of one rank copy send to recv on the
 * stream. */
typedef enum mte_reduce_op {
  MTE_REDUCE_SUM = 0,
  MTE_REDUCE_MAX = 1,
  MTE_REDUCE_MIN = 2,
} mte_reduce_op;

/* This rank's linear index in the model's grid; 0 for an unsharded model. */
MTE_KERNEL_API int64_t mte_comm_rank(void);

/* recv[i] = op over the group's ranks of send[i], for i < count. `send`
 * and `recv` may be the same buffer. */
MTE_KERNEL_API void mte_comm_all_reduce(uint64_t send, uint64_t recv,
                                        int64_t count, int32_t dtype,
                                        int32_t op, int32_t gridAxes);

/* recv = the group's `sendCount`-element send buffers one after another,
 * in rank order (recv holds group size * sendCount elements). */
MTE_KERNEL_API void mte_comm_all_gather(uint64_t send, uint64_t recv,
                                        int64_t sendCount, int32_t dtype,
                                        int32_t gridAxes);

/* The all-reduce of `send` (group size * recvCount elements), of which
 * the rank with group index g keeps elements [g * recvCount, (g + 1) *
 * recvCount) in recv. */
MTE_KERNEL_API void mte_comm_reduce_scatter(uint64_t send, uint64_t recv,
                                            int64_t recvCount, int32_t dtype,
                                            int32_t op, int32_t gridAxes);

/* Pipeline parallelism's hand-offs, between two ranks of a group of
 * `gridAxes` (the pipeline axis): sends `count` elements of `send` to the
 * rank of group index `destination`, which receives them into `recv` by
 * the matching mte_comm_recv naming this rank's index as `source`. A host
 * send returns once the elements are staged (the receiver may not have
 * taken them yet). Host models only for now. */
MTE_KERNEL_API void mte_comm_send(uint64_t send, int64_t count, int32_t dtype,
                                  int64_t destination, int32_t gridAxes);
MTE_KERNEL_API void mte_comm_recv(uint64_t recv, int64_t count, int32_t dtype,
                                  int64_t source, int32_t gridAxes);

/* recv = the `count` elements of `send` of the group's rank of index `root`
 * (the others' send buffers are not read). Host models only for now. */
MTE_KERNEL_API void mte_comm_broadcast(uint64_t send, uint64_t recv,
                                       int64_t count, int32_t dtype,
                                       int64_t root, int32_t gridAxes);

#ifdef __cplusplus
}
#endif

#endif /* MTE_C_KERNELABI_H */
