//===- FlashAttention.cpp - mte_cuda_attention ----------------------------===//
//
// CUDA models call mte_cuda_attention for the attention ops that
// mte-convert-transformer-to-row-kernels gives to the fused kernels of
// FlashAttention.cu: 16-bit Q/K/V, head dimension 16, 32, 64 or 128, the causal
// mask or none, and optionally a key-padding bias; the output in the
// inputs' type or, under FP8 delayed scaling, E4M3 codes, and optionally
// each row's and head's max |o| for the output's amax. Under MTE_ATTENTION
// (CudnnAttention.h) a call without a key bias goes to cuDNN's fused
// attention where cuDNN takes it; an E4M3 output and the row maxima are then
// computed from cuDNN's 16-bit output by mte_attention_quantize_<type>. The
// kernels' fatbin (sm_80 and sm_90 code, compute_90 PTX for newer GPUs) is compiled by
// nvcc when libmte_runtime is built and embedded in the library.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "CudnnAttention.h"
#include "FlashAttentionParams.h"

#include "mte-c/KernelABI.h"
#include "mte-c/ModelABI.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#ifdef MTE_HAVE_RUNTIME_KERNELS
extern "C" const unsigned char mteFlashAttentionFatbin[];
#endif

namespace {
/// The kernels' fatbin, or null in a runtime built without nvcc.
#ifdef MTE_HAVE_RUNTIME_KERNELS
const void *const kKernelImage = mteFlashAttentionFatbin;
constexpr bool kHaveKernels = true;
#else
const void *const kKernelImage = nullptr;
constexpr bool kHaveKernels = false;
#endif

/// The kernel for (type, head dimension, causal) on the calling thread's
/// device, loaded on first use. The kernels of the device the thread last
/// ran attention on are kept here, so that a call takes no lock and builds
/// no name (a forward replayed from a CUDA graph does not call at all, an
/// eager one once per attention op). Null with the reason in `error`.
void *attentionKernel(int32_t dtype, int64_t headDim, bool causal,
                      int sharedBytes, std::string &error) {
  thread_local const mte::cuda::Device *cachedDevice = nullptr;
  thread_local void *cachedKernels[2][4][2];
  mte::cuda::Device *device = mte::cuda::Device::current(error);
  if (!device)
    return nullptr;
  if (device != cachedDevice) {
    std::memset(cachedKernels, 0, sizeof(cachedKernels));
    cachedDevice = device;
  }
  int headDims = headDim == 16 ? 0 : headDim == 32 ? 1 : headDim == 64 ? 2 : 3;
  void *&slot = cachedKernels[dtype == MTE_DTYPE_BF16][headDims][causal];
  if (slot)
    return slot;
  std::string name = std::string("mte_flash_attention_") +
                     (dtype == MTE_DTYPE_BF16 ? "bf16" : "f16") + "_d" +
                     std::to_string(headDim) + (causal ? "_causal" : "");
  slot = device->builtinKernel(kKernelImage, name.c_str(), sharedBytes, error);
  return slot;
}

/// mte_attention_quantize_<type> on the calling thread's device; null with
/// the reason in `error`.
void *quantizeKernel(int32_t dtype, std::string &error) {
  mte::cuda::Device *device = mte::cuda::Device::current(error);
  if (!device)
    return nullptr;
  return device->builtinKernel(kKernelImage,
                               dtype == MTE_DTYPE_BF16
                                   ? "mte_attention_quantize_bf16"
                                   : "mte_attention_quantize_f16",
                               0, error);
}

/// Runs the call through cuDNN when it takes it: true when it is enqueued
/// or failed (recorded), false for mte's kernel. An E4M3 output (`outScale`)
/// is then written from cuDNN's 16-bit one, which goes to a scratch buffer
/// of cuDNN's plan, and row maxima are read from the 16-bit output.
bool enqueueThroughCudnn(const mte::cuda::AttentionShape &shape, uint64_t q,
                         uint64_t k, uint64_t v, uint64_t out, float scale,
                         uint64_t outScale, uint64_t rowMax) {
  std::string error;
  void *scratch = nullptr;
  switch (mte::cuda::enqueueCudnnAttention(
      shape, reinterpret_cast<const void *>(q),
      reinterpret_cast<const void *>(k), reinterpret_cast<const void *>(v),
      reinterpret_cast<void *>(out), scale, /*toScratch=*/outScale != 0,
      &scratch, error)) {
  case mte::cuda::CudnnAttention::NotTaken:
    return false;
  case mte::cuda::CudnnAttention::Failed:
    mte::cuda::recordError(error);
    return true;
  case mte::cuda::CudnnAttention::Enqueued:
    break;
  }
  if (!outScale && !rowMax)
    return true;
  void *function = quantizeKernel(shape.dtype, error);
  if (!function) {
    mte::cuda::recordError("mte_cuda_attention: " + error);
    return true;
  }
  const int64_t rowElements = shape.heads * shape.headDim;
  mte::AttentionQuantizeParams params = {
      outScale ? scratch : reinterpret_cast<void *>(out),
      outScale ? shape.queries * rowElements : shape.oBatchStride,
      outScale ? rowElements : shape.oRowStride,
      reinterpret_cast<void *>(out),
      shape.oBatchStride,
      shape.oRowStride,
      static_cast<int32_t>(shape.heads),
      static_cast<int32_t>(shape.queries),
      static_cast<int32_t>(shape.headDim),
      shape.batch * shape.queries * rowElements / 8,
      reinterpret_cast<const float *>(outScale),
      reinterpret_cast<float *>(rowMax),
  };
  constexpr int64_t threads = mte::kAttentionQuantizeThreads;
  unsigned grid[3] = {
      static_cast<unsigned>((params.chunks + threads - 1) / threads), 1, 1};
  void *args[] = {&params};
  if (!mte::cuda::launch(function, grid, threads, 0, args, error))
    mte::cuda::recordError("mte_cuda_attention (" +
                           mte::cuda::describeAttention(shape) +
                           "): " + error);
  return true;
}

/// The kernels use 16-byte vector copies: every row of every head starts at
/// a 16-byte boundary.
bool aligned16(uint64_t pointer, int64_t batchStride, int64_t rowStride,
               int elementBytes) {
  return pointer % 16 == 0 && (batchStride * elementBytes) % 16 == 0 &&
         (rowStride * elementBytes) % 16 == 0;
}
} // namespace

// Declared, and described, in KernelABI.h.
extern "C" void mte_cuda_attention(
    uint64_t q, uint64_t k, uint64_t v, uint64_t out, int64_t batch,
    int64_t heads, int64_t kvHeads, int64_t queries, int64_t keys,
    int64_t headDim, int64_t qBatchStride, int64_t qRowStride,
    int64_t kBatchStride, int64_t kRowStride, int64_t vBatchStride,
    int64_t vRowStride, int64_t oBatchStride, int64_t oRowStride, float scale,
    int32_t causal, int32_t dtype, uint64_t keyBias, int64_t keyBiasBatchStride,
    uint64_t outScale, uint64_t rowMax) {
  if (mte::cuda::failed())
    return; // an earlier step of this forward failed
  const mte::cuda::AttentionShape attention = {
      dtype,        batch,        heads,        kvHeads,      queries,
      keys,         headDim,      qBatchStride, qRowStride,   kBatchStride,
      kRowStride,   vBatchStride, vRowStride,   oBatchStride, oRowStride,
      causal != 0};
  auto shape = [&] { return mte::cuda::describeAttention(attention); };
  if (!kHaveKernels) {
    mte::cuda::recordError("mte_cuda_attention (" + shape() +
                           "): this libmte_runtime was built without nvcc and "
                           "has no attention kernels; rebuild it where the "
                           "CUDA toolkit is installed");
    return;
  }
  if (dtype != MTE_DTYPE_F16 && dtype != MTE_DTYPE_BF16) {
    mte::cuda::recordError("mte_cuda_attention: unsupported element type " +
                           std::to_string(dtype) + " (f16 or bf16 only)");
    return;
  }
  if ((headDim != 16 && headDim != 32 && headDim != 64 && headDim != 128) ||
      batch <= 0 || heads <= 0 || kvHeads <= 0 || heads % kvHeads != 0 ||
      queries <= 0 || keys <= 0 || heads > INT32_MAX || batch > 65535 ||
      queries > 65535 * int64_t(mte::kAttentionQueryBlock) ||
      keys > INT32_MAX) {
    mte::cuda::recordError("mte_cuda_attention: unsupported shape (" + shape() +
                           ")");
    return;
  }
  // The kernels take the softmax's maximum on unscaled scores.
  if (!(scale > 0.f) || !std::isfinite(scale)) {
    mte::cuda::recordError("mte_cuda_attention: the scale must be positive, "
                           "not " +
                           std::to_string(scale));
    return;
  }
  constexpr int elementBytes = 2;
  if (!aligned16(q, qBatchStride, qRowStride, elementBytes) ||
      !aligned16(k, kBatchStride, kRowStride, elementBytes) ||
      !aligned16(v, vBatchStride, vRowStride, elementBytes) ||
      !aligned16(out, oBatchStride, oRowStride, outScale ? 1 : elementBytes)) {
    mte::cuda::recordError("mte_cuda_attention (" + shape() +
                           "): rows not 16-byte aligned");
    return;
  }
  if (keyBias && (keyBias % alignof(float) != 0 || keyBiasBatchStride < 0)) {
    mte::cuda::recordError("mte_cuda_attention (" + shape() +
                           "): the key bias must be a 4-byte aligned f32 "
                           "array with a non-negative batch stride");
    return;
  }

  if ((outScale && outScale % alignof(float) != 0) ||
      (rowMax && rowMax % alignof(float) != 0)) {
    mte::cuda::recordError("mte_cuda_attention (" + shape() +
                           "): the output scale and the row maxima must be "
                           "4-byte aligned f32");
    return;
  }

  if (!keyBias && enqueueThroughCudnn(attention, q, k, v, out, scale,
                                      outScale, rowMax))
    return;

  int sharedBytes =
      mte::attentionSharedBytes(static_cast<int>(headDim), elementBytes);
  std::string error;
  void *function =
      attentionKernel(dtype, headDim, causal != 0, sharedBytes, error);
  if (!function) {
    mte::cuda::recordError("mte_cuda_attention: " + error);
    return;
  }

  mte::AttentionParams params = {
      reinterpret_cast<const void *>(q),
      reinterpret_cast<const void *>(k),
      reinterpret_cast<const void *>(v),
      reinterpret_cast<void *>(out),
      qBatchStride,
      qRowStride,
      kBatchStride,
      kRowStride,
      vBatchStride,
      vRowStride,
      oBatchStride,
      oRowStride,
      static_cast<int32_t>(heads),
      static_cast<int32_t>(kvHeads),
      static_cast<int32_t>(queries),
      static_cast<int32_t>(keys),
      scale * static_cast<float>(M_LOG2E),
      reinterpret_cast<const float *>(keyBias),
      keyBiasBatchStride,
      1.0f / scale,
      reinterpret_cast<const float *>(outScale),
      reinterpret_cast<float *>(rowMax),
  };
  constexpr int blockRows = mte::kAttentionQueryBlock;
  unsigned grid[3] = {
      static_cast<unsigned>(heads), static_cast<unsigned>(batch),
      static_cast<unsigned>((queries + blockRows - 1) / blockRows)};
  void *args[] = {&params};
  if (!mte::cuda::launch(function, grid, mte::kAttentionThreads, sharedBytes,
                         args, error))
    mte::cuda::recordError("mte_cuda_attention (" + shape() + "): " + error);
}
