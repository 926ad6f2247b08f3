//===- FlashAttention.cu - fused attention kernels of libmte_runtime ------===//
//
// softmax(scale * Q·Kᵀ (+ causal mask)) · V in one kernel, the scores kept in
// registers (the FlashAttention-2 scheme: online softmax over key blocks,
// one rescale of the output per block). Tensor-core products through
// mma.sync m16n8k16 with fp32 accumulation, operands staged in shared memory
// by cp.async (the next key block loads while this one is computed) and read
// with ldmatrix from an XOR-swizzled layout without bank conflicts.
//
// Q, K, V and O are [batch, tokens, heads * D] with any batch and token
// strides (Q, K and V usually are column slices of one packed projection),
// heads packed in the rows: no transposes around the kernel. Query head h
// reads key/value head h / (heads / kvHeads) (grouped-query attention).
// `causal` hides key j from query i when j > i + (Skv - Sq) (the diagonal
// aligned bottom right); a key bias (a padding mask: -inf hides a key) is
// added to every query's scores; a query that sees no key gets zeros.
//
// mte_attention_quantize_<type> writes FP8 scaling's E4M3 output and row
// maxima from a 16-bit output cuDNN's attention wrote (CudnnAttention.h), as
// the fused kernels do from their own.
//
// Compiled by nvcc into a fatbin embedded in libmte_runtime
// (FlashAttention.cpp loads it); mte-compile's output calls
// mte_cuda_attention for the attention ops it can give to these kernels.
//
//===----------------------------------------------------------------------===//

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include <type_traits>

#include "FlashAttentionParams.h"

namespace {

constexpr int kThreads = mte::kAttentionThreads;
constexpr int kWarps = kThreads / 32;
constexpr int kBlockN = mte::kAttentionKeyBlock;

/// 16-byte chunk `chunk` of row `row` in a swizzled [rows, D] tile: the
/// chunk index is XORed with the row, so that the eight rows one ldmatrix
/// phase reads fall into eight different bank groups.
template <int D> __device__ __forceinline__ int swizzle(int row, int chunk) {
  constexpr int chunks = D / 8;
  constexpr int mask = (chunks < 8 ? chunks : 8) - 1;
  return row * D + ((chunk ^ (row & mask)) * 8);
}

__device__ __forceinline__ uint32_t sharedAddress(const void *pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

/// 16 bytes global -> shared, zero-filled when `valid` is false.
__device__ __forceinline__ void copyAsync16(void *shared, const void *global,
                                            bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   sharedAddress(shared)),
               "l"(global), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void commitCopies() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int pending> __device__ __forceinline__ void waitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
}

__device__ __forceinline__ void loadMatrices(uint32_t (&r)[4],
                                             const void *shared) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(sharedAddress(shared)));
}
__device__ __forceinline__ void loadMatricesTransposed(uint32_t (&r)[4],
                                                       const void *shared) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, "
      "[%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(sharedAddress(shared)));
}

/// d += a . b on tensor cores: A 16x16 (row major), B 16x8 (column major),
/// both of T, fp32 accumulators.
#define MTE_MMA_M16N8K16(TYPE)                                                 \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE          \
               ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "           \
               "{%0, %1, %2, %3};\n"                                           \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))

template <typename T>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t *a,
                                    uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    MTE_MMA_M16N8K16("bf16");
  else
    MTE_MMA_M16N8K16("f16");
}

/// Two floats rounded to T, packed as an MMA operand register.
template <typename T>
__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  uint32_t packed;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    memcpy(&packed, &v, sizeof(packed));
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    memcpy(&packed, &v, sizeof(packed));
  }
  return packed;
}

/// The two values of a packed register of T.
template <typename T>
__device__ __forceinline__ float2 unpack(uint32_t packed) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __nv_bfloat162 v;
    memcpy(&v, &packed, sizeof(v));
    return __bfloat1622float2(v);
  } else {
    __half2 v;
    memcpy(&v, &packed, sizeof(v));
    return __half22float2(v);
  }
}

/// max(a, b), NaN when either is (fmaxf drops NaN).
__device__ __forceinline__ float maxPropagatingNaN(float a, float b) {
  return (a > b || a != a) ? a : b;
}

/// Copies rows [row0, row0 + rows) of one head's [tokens, D] slice into a
/// swizzled shared tile; rows at or past `valid` are zero-filled.
template <typename T, int D, int rows>
__device__ __forceinline__ void
loadTile(T *tile, const T *head, int64_t rowStride, int row0, int valid) {
  constexpr int chunks = D / 8;
  for (int i = threadIdx.x; i < rows * chunks; i += kThreads) {
    int row = i / chunks, chunk = i % chunks;
    int token = row0 + row;
    bool inside = token < valid;
    // A zero-filled copy reads nothing, but its address stays in bounds.
    const T *source = head + (inside ? token : 0) * rowStride + chunk * 8;
    copyAsync16(tile + swizzle<D>(row, chunk), source, inside);
  }
}

template <typename T, int D, bool Causal>
__device__ __forceinline__ void attentionBlock(const mte::AttentionParams &p) {
  // Query rows per warp, in 16-row MMA tiles.
  constexpr int MT = mte::kAttentionQueryBlock / (16 * kWarps);
  constexpr int BM = 16 * MT * kWarps; // query rows per block
  static_assert(BM == mte::kAttentionQueryBlock, "whole MMA tiles");
  constexpr int BN = kBlockN;
  constexpr int NT = BN / 8; // 8-key MMA tiles per key block
  constexpr int DT = D / 8;  // 8-feature MMA tiles of the output
  constexpr int KS = D / 16; // 16-feature steps of Q·Kᵀ

  extern __shared__ __align__(128) unsigned char shared[];
  T *tileQ = reinterpret_cast<T *>(shared);
  T *tileK = tileQ + BM * D;     // two buffers of [BN, D]
  T *tileV = tileK + 2 * BN * D; // two buffers of [BN, D]

  // Blocks start in launch order, x fastest: the query blocks are the
  // slowest dimension, last first, so that under a causal mask the blocks
  // that see the most keys all start before the short ones fill the tail.
  const int mBlock = gridDim.z - 1 - blockIdx.z;
  const int head = blockIdx.x, batch = blockIdx.y;
  const int kvHead = head / (p.heads / p.kvHeads);
  const int m0 = mBlock * BM;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / 4, quad = lane % 4;

  const T *q =
      static_cast<const T *>(p.q) + batch * p.qBatchStride + int64_t(head) * D;
  const T *k = static_cast<const T *>(p.k) + batch * p.kBatchStride +
               int64_t(kvHead) * D;
  const T *v = static_cast<const T *>(p.v) + batch * p.vBatchStride +
               int64_t(kvHead) * D;
  // The output's element: T, or one byte of E4M3 with p.outScale.
  const int outBytes = p.outScale ? 1 : int(sizeof(T));
  void *o = static_cast<char *>(p.o) +
            (batch * p.oBatchStride + int64_t(head) * D) * outBytes;

  const int offset = p.keys - p.queries; // causal diagonal shift
  int keyEnd = p.keys;
  if (Causal)
    keyEnd = min(keyEnd, m0 + BM + offset);
  const int numBlocks = keyEnd > 0 ? (keyEnd + BN - 1) / BN : 0;

  // This thread's rows: warp's first row + mt * 16 + group (+ 8).
  const int warpRow0 = m0 + warp * 16 * MT;

  float acc[MT][DT][4];
  float rowMax[MT][2], rowSum[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        acc[mt][dt][e] = 0.f;
    rowMax[mt][0] = rowMax[mt][1] = -INFINITY;
    rowSum[mt][0] = rowSum[mt][1] = 0.f;
  }

  if (numBlocks > 0) {
    loadTile<T, D, BM>(tileQ, q, p.qRowStride, m0, p.queries);
    loadTile<T, D, BN>(tileK, k, p.kRowStride, 0, p.keys);
    loadTile<T, D, BN>(tileV, v, p.vRowStride, 0, p.keys);
    commitCopies();
  }

  for (int j = 0; j < numBlocks; ++j) {
    const int n0 = j * BN;
    if (j + 1 < numBlocks) {
      int next = (j + 1) & 1;
      loadTile<T, D, BN>(tileK + next * BN * D, k, p.kRowStride, n0 + BN,
                         p.keys);
      loadTile<T, D, BN>(tileV + next * BN * D, v, p.vRowStride, n0 + BN,
                         p.keys);
      commitCopies();
      waitCopies<1>();
    } else {
      waitCopies<0>();
    }
    __syncthreads();
    const T *bufK = tileK + (j & 1) * BN * D;
    const T *bufV = tileV + (j & 1) * BN * D;

    // S = Q·Kᵀ for this warp's rows and the block's keys.
    float s[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[mt][nt][e] = 0.f;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        int row = warp * 16 * MT + mt * 16 + (lane & 15);
        loadMatrices(a[mt], tileQ + swizzle<D>(row, ks * 2 + (lane >> 4)));
      }
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        uint32_t b[4];
        int row = np * 16 + (lane & 7) + ((lane >> 4) << 3);
        loadMatrices(b, bufK + swizzle<D>(row, ks * 2 + ((lane >> 3) & 1)));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma<T>(s[mt][2 * np], a[mt], b[0], b[1]);
          mma<T>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }

    // The key bias in unscaled units, the same for all of this thread's
    // rows (its keys are n0 + nt * 8 + quad * 2 + e).
    if (p.keyBias) {
      const float *bias = p.keyBias + batch * p.keyBiasBatchStride;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          int key = n0 + nt * 8 + quad * 2 + e;
          float b = key < p.keys ? bias[key] * p.inverseScale : 0.f;
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            s[mt][nt][e] += b;
            s[mt][nt][2 + e] += b;
          }
        }
    }

    // Online softmax in base 2 on the unscaled scores (the scale is
    // positive, so their maximum is the scaled one's): one FMA and one exp2
    // a score. Masked scores are -inf.
    const bool edge =
        n0 + BN > p.keys || (Causal && n0 + BN - 1 > warpRow0 + offset);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warpRow0 + mt * 16 + group + half * 8;
        float blockMax = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float x = s[mt][nt][half * 2 + e];
            if (edge) {
              int key = n0 + nt * 8 + quad * 2 + e;
              if (key >= p.keys || (Causal && key > row + offset))
                x = -INFINITY;
            }
            s[mt][nt][half * 2 + e] = x;
            blockMax = fmaxf(blockMax, x);
          }
        blockMax = fmaxf(blockMax, __shfl_xor_sync(0xffffffff, blockMax, 1));
        blockMax = fmaxf(blockMax, __shfl_xor_sync(0xffffffff, blockMax, 2));
        const float newMax = fmaxf(rowMax[mt][half], blockMax);
        // A row that has seen only masked keys keeps a zero base (no NaN).
        const float base = newMax == -INFINITY ? 0.f : newMax * p.scaleLog2;
        const float rescale = exp2f(rowMax[mt][half] * p.scaleLog2 - base);
        rowMax[mt][half] = newMax;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float e2 = exp2f(fmaf(s[mt][nt][half * 2 + e], p.scaleLog2, -base));
            s[mt][nt][half * 2 + e] = e2;
            sum += e2;
          }
        rowSum[mt][half] = rowSum[mt][half] * rescale + sum;
#pragma unroll
        for (int dt = 0; dt < DT; ++dt) {
          acc[mt][dt][half * 2] *= rescale;
          acc[mt][dt][half * 2 + 1] *= rescale;
        }
      }
    }

    // O += P·V: the accumulators of two adjacent key tiles are the A
    // fragment of one 16-key step.
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        a[mt][0] = pack<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        a[mt][1] = pack<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        a[mt][2] = pack<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        a[mt][3] = pack<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        uint32_t b[4];
        int row = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
        loadMatricesTransposed(b, bufV + swizzle<D>(row, dp * 2 + (lane >> 4)));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma<T>(acc[mt][2 * dp], a[mt], b[0], b[1]);
          mma<T>(acc[mt][2 * dp + 1], a[mt], b[2], b[3]);
        }
      }
    }
    // The next iteration's copies overwrite the buffers read here.
    __syncthreads();
  }

  // Normalise and store; rows past the end are not written. A value is
  // rounded to T as stored; with p.outScale it is then cast to E4M3 times
  // the scale (saturated, as mte's quantize of the stored output), and with
  // p.rowMax each row's max |o| over this head goes to rowMax[(batch *
  // queries + row) * heads + head] (NaN propagates, as amax's does).
  const float outScale = p.outScale ? *p.outScale : 0.f;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = rowSum[mt][half];
      sum += __shfl_xor_sync(0xffffffff, sum, 1);
      sum += __shfl_xor_sync(0xffffffff, sum, 2);
      const float inverse = sum > 0.f ? 1.f / sum : 0.f;
      const int row = warpRow0 + mt * 16 + group + half * 8;
      const bool inside = row < p.queries;
      const int64_t at = int64_t(row) * p.oRowStride + quad * 2;
      float rowMax = 0.f;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt) {
        uint32_t packed = pack<T>(acc[mt][dt][half * 2] * inverse,
                                  acc[mt][dt][half * 2 + 1] * inverse);
        float2 stored = unpack<T>(packed);
        rowMax = maxPropagatingNaN(
            rowMax, maxPropagatingNaN(fabsf(stored.x), fabsf(stored.y)));
        if (!inside)
          continue;
        if (p.outScale)
          *reinterpret_cast<__nv_fp8x2_storage_t *>(static_cast<uint8_t *>(o) +
                                                    at + dt * 8) =
              __nv_cvt_float2_to_fp8x2(
                  make_float2(stored.x * outScale, stored.y * outScale),
                  __NV_SATFINITE, __NV_E4M3);
        else
          *reinterpret_cast<uint32_t *>(static_cast<T *>(o) + at + dt * 8) =
              packed;
      }
      if (p.rowMax) {
        // The four threads of a row hold its D values between them.
        rowMax =
            maxPropagatingNaN(rowMax, __shfl_xor_sync(0xffffffff, rowMax, 1));
        rowMax =
            maxPropagatingNaN(rowMax, __shfl_xor_sync(0xffffffff, rowMax, 2));
        if (inside && quad == 0)
          p.rowMax[(int64_t(batch) * p.queries + row) * p.heads + head] =
              rowMax;
      }
    }
  }
}

/// AttentionQuantizeParams: each thread reads 8 elements (16 bytes) and
/// writes 8 codes; the D / 8 threads of one row and head are adjacent lanes
/// of a warp (D / 8 divides 32) and combine their maxima with shuffles.
template <typename T>
__device__ void quantizeOutput(const mte::AttentionQuantizeParams &p) {
  const int64_t chunk = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool inside = chunk < p.chunks;
  const int perHead = p.headDim / 8;
  const int64_t at = inside ? chunk : p.chunks - 1;
  const int64_t headRow = at / perHead; // row * heads + head
  const int part = int(at % perHead);
  const int64_t row = headRow / p.heads;
  const int head = int(headRow % p.heads);
  const int64_t batch = row / p.queries, query = row % p.queries;
  const int64_t column = int64_t(head) * p.headDim + part * 8;
  const uint4 loaded = *reinterpret_cast<const uint4 *>(
      static_cast<const T *>(p.source) + batch * p.sourceBatchStride +
      query * p.sourceRowStride + column);
  const uint32_t words[4] = {loaded.x, loaded.y, loaded.z, loaded.w};
  const float outScale = p.outScale ? *p.outScale : 0.f;
  float maximum = 0.f;
  uint16_t codes[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 value = unpack<T>(words[i]);
    maximum = maxPropagatingNaN(
        maximum, maxPropagatingNaN(fabsf(value.x), fabsf(value.y)));
    codes[i] = __nv_cvt_float2_to_fp8x2(
        make_float2(value.x * outScale, value.y * outScale), __NV_SATFINITE,
        __NV_E4M3);
  }
  if (inside && p.outScale)
    *reinterpret_cast<uint2 *>(static_cast<uint8_t *>(p.o) +
                               batch * p.oBatchStride +
                               query * p.oRowStride + column) =
        make_uint2(uint32_t(codes[0]) | uint32_t(codes[1]) << 16,
                   uint32_t(codes[2]) | uint32_t(codes[3]) << 16);
  for (int offset = 1; offset < perHead; offset *= 2)
    maximum = maxPropagatingNaN(maximum,
                                __shfl_xor_sync(0xffffffff, maximum, offset));
  if (inside && p.rowMax && part == 0)
    p.rowMax[headRow] = maximum;
}

} // namespace

// One entry point per element type, head dimension and mask; the names are
// what FlashAttention.cpp looks up (mte_flash_attention_<type>_d<D>[_causal]).
#define MTE_ATTENTION_KERNEL(TYPE, NAME, D)                                    \
  extern "C" __global__ void __launch_bounds__(kThreads)                       \
      mte_flash_attention_##NAME##_d##D(mte::AttentionParams p) {              \
    attentionBlock<TYPE, D, false>(p);                                         \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(kThreads)                       \
      mte_flash_attention_##NAME##_d##D##_causal(mte::AttentionParams p) {     \
    attentionBlock<TYPE, D, true>(p);                                          \
  }

MTE_ATTENTION_KERNEL(__nv_bfloat16, bf16, 16)
MTE_ATTENTION_KERNEL(__nv_bfloat16, bf16, 32)
MTE_ATTENTION_KERNEL(__nv_bfloat16, bf16, 64)
MTE_ATTENTION_KERNEL(__nv_bfloat16, bf16, 128)
MTE_ATTENTION_KERNEL(__half, f16, 16)
MTE_ATTENTION_KERNEL(__half, f16, 32)
MTE_ATTENTION_KERNEL(__half, f16, 64)
MTE_ATTENTION_KERNEL(__half, f16, 128)

extern "C" __global__ void __launch_bounds__(mte::kAttentionQuantizeThreads)
    mte_attention_quantize_bf16(mte::AttentionQuantizeParams p) {
  quantizeOutput<__nv_bfloat16>(p);
}
extern "C" __global__ void __launch_bounds__(mte::kAttentionQuantizeThreads)
    mte_attention_quantize_f16(mte::AttentionQuantizeParams p) {
  quantizeOutput<__half>(p);
}
