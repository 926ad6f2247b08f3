//===- Amaxes.cpp - mte_cuda_amaxes ---------------------------------------===//
//
// CUDA models built with delayed FP8 scaling call mte_cuda_amaxes once per
// forward for the update's vector of amaxes (mte-convert-transformer-to-
// row-kernels): out is zeroed, then the kernel of Amaxes.cu takes every
// input's max |x| into it, kAmaxesPerLaunch inputs a launch. The kernel's
// fatbin is built by nvcc with the runtime, as the attention kernels' is.
//
//===----------------------------------------------------------------------===//

#include "AmaxesParams.h"
#include "CudaDevice.h"

#include "mte-c/KernelABI.h"
#include "mte-c/ModelABI.h"

#include <algorithm>
#include <cstdint>
#include <string>

#ifdef MTE_HAVE_RUNTIME_KERNELS
extern "C" const unsigned char mteAmaxesFatbin[];
#endif

namespace {
#ifdef MTE_HAVE_RUNTIME_KERNELS
const void *const kKernelImage = mteAmaxesFatbin;
constexpr bool kHaveKernels = true;
#else
const void *const kKernelImage = nullptr;
constexpr bool kHaveKernels = false;
#endif

/// The kernel on the calling thread's device, loaded on first use and kept
/// for the device this thread last used (no lock on the next call).
void *amaxesKernel(std::string &error) {
  thread_local const mte::cuda::Device *cachedDevice = nullptr;
  thread_local void *cachedKernel = nullptr;
  mte::cuda::Device *device = mte::cuda::Device::current(error);
  if (!device)
    return nullptr;
  if (device != cachedDevice || !cachedKernel) {
    cachedKernel = device->builtinKernel(kKernelImage, "mte_amaxes", 0, error);
    cachedDevice = cachedKernel ? device : nullptr;
  }
  return cachedKernel;
}
} // namespace

// Declared, and described, in KernelABI.h.
extern "C" void mte_cuda_amaxes(uint64_t table, int64_t count, uint64_t out) {
  if (mte::cuda::failed())
    return; // an earlier step of this forward failed
  auto fail = [](const std::string &why) {
    mte::cuda::recordError("mte_cuda_amaxes: " + why);
  };
  if (!table || count <= 0 || !out || out % alignof(float) != 0)
    return fail("needs a table of inputs and a 4-byte aligned f32 output");
  const int64_t *entries = reinterpret_cast<const int64_t *>(table);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t *entry = entries + 3 * i;
    int64_t bytes = 0;
    if (entry[2] == MTE_DTYPE_F32)
      bytes = 4;
    else if (entry[2] == MTE_DTYPE_BF16 || entry[2] == MTE_DTYPE_F16)
      bytes = 2;
    if (!bytes || entry[1] < 0 ||
        (entry[1] && (!entry[0] || entry[0] % bytes != 0)))
      return fail("input " + std::to_string(i) +
                  " is not an aligned f32, bf16 or f16 array (type " +
                  std::to_string(entry[2]) + ", " + std::to_string(entry[1]) +
                  " elements)");
  }
  // After the checks of the arguments, which hold without the kernel too.
  if (!kHaveKernels)
    return fail("this libmte_runtime was built without nvcc and has no amax "
                "kernel; rebuild it where the CUDA toolkit is installed");
  std::string error;
  void *function = amaxesKernel(error);
  if (!function)
    return fail(error);
  float *amaxes = reinterpret_cast<float *>(out);
  if (!mte::cuda::fillOnDevice32(amaxes, 0, static_cast<size_t>(count),
                                 mte::cuda::currentStream(), error))
    return fail(error);
  mte::AmaxesParams params = {};
  for (int64_t first = 0; first < count; first += mte::kAmaxesPerLaunch) {
    int64_t inputs = std::min<int64_t>(count - first, mte::kAmaxesPerLaunch);
    int64_t longest = 1;
    for (int64_t i = 0; i < inputs; ++i) {
      const int64_t *entry = entries + 3 * (first + i);
      params.inputs[i] = {
          reinterpret_cast<const void *>(entry[0]), entry[1],
          entry[2] == MTE_DTYPE_F32    ? mte::AmaxElement::F32
          : entry[2] == MTE_DTYPE_BF16 ? mte::AmaxElement::BF16
                                       : mte::AmaxElement::F16,
          0};
      longest = std::max(longest, entry[1]);
    }
    params.out = reinterpret_cast<uint32_t *>(amaxes + first);
    int64_t chunks = (longest + mte::kAmaxesChunk - 1) / mte::kAmaxesChunk;
    if (chunks > INT32_MAX)
      return fail("an input of " + std::to_string(longest) +
                  " elements is too long");
    unsigned grid[3] = {static_cast<unsigned>(chunks),
                        static_cast<unsigned>(inputs), 1};
    void *args[] = {&params};
    if (!mte::cuda::launch(function, grid, mte::kAmaxesThreads, 0, args,
                           error))
      return fail(error);
  }
}
