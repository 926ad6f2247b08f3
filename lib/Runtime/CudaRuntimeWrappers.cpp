//===- CudaRuntimeWrappers.cpp - the mgpu* entry points of CUDA models ----===//
//
// The functions MLIR's gpu-to-llvm lowering calls from a CUDA model's host
// code (the ABI of MLIR's CudaRuntimeWrappers), over the driver. They act
// on the calling thread's device and stream, which the runtime sets around
// every call into a model (CudaDevice.h), and record a failure instead of
// aborting.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "CudaDriver.h"

#include <cstdint>
#include <string>

#define MTE_GPU_ENTRY extern "C" __attribute__((visibility("default")))

using namespace mte::cuda;

namespace {
/// Runs `call` in the current device's context, recording a failure.
template <typename Call> bool guarded(const char *what, Call call) {
  std::string error;
  Device *device = Device::current(error);
  if (!device || !device->makeCurrent(error)) {
    recordError(error);
    return false;
  }
  CUresult result = call(driver());
  if (!check(result, what, error)) {
    recordError(error, result == CUDA_ERROR_OUT_OF_MEMORY);
    return false;
  }
  return true;
}

/// `guarded` for work a forward enqueues (launches, copies, allocations):
/// skipped once this thread has failed, so that nothing runs on buffers a
/// failed allocation left null (which would poison the context).
template <typename Call> bool enqueued(const char *what, Call call) {
  return !failed() && guarded(what, call);
}
} // namespace

MTE_GPU_ENTRY void *mgpuModuleLoad(void *data, size_t /*size*/) {
  CUmodule module = nullptr;
  guarded("cuModuleLoadData (kernels)",
          [&](const Driver &d) { return d.cuModuleLoadData(&module, data); });
  return module;
}

/// PTX-only models: the driver JIT-compiles at its default optimisation
/// level.
MTE_GPU_ENTRY void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return mgpuModuleLoad(data, 0);
}

MTE_GPU_ENTRY void mgpuModuleUnload(void *module) {
  if (module && driverOpen())
    driver().cuModuleUnload(module);
}

MTE_GPU_ENTRY void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = nullptr;
  if (!module)
    return nullptr; // the load failure is recorded already
  guarded("cuModuleGetFunction", [&](const Driver &d) {
    return d.cuModuleGetFunction(&function, module, name);
  });
  return function;
}

MTE_GPU_ENTRY void mgpuLaunchKernel(void *function, intptr_t gridX,
                                    intptr_t gridY, intptr_t gridZ,
                                    intptr_t blockX, intptr_t blockY,
                                    intptr_t blockZ, int32_t sharedMemory,
                                    void *stream, void **params,
                                    void ** /*extra*/, size_t /*count*/) {
  if (!function)
    return;
  enqueued("cuLaunchKernel", [&](const Driver &d) {
    return d.cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                            blockZ, sharedMemory, stream, params, nullptr);
  });
}

/// Models enqueue on the stream the runtime chose, not a stream of their
/// own.
MTE_GPU_ENTRY void *mgpuStreamCreate() { return currentStream(); }
MTE_GPU_ENTRY void mgpuStreamDestroy(void *) {}

/// Every kernel, GEMM and copy of a model goes to the one stream in order,
/// and host code never reads device memory, so the waits that
/// gpu-async-region places around library calls are not needed: the
/// runtime synchronises once, after the forward (and reports kernel
/// failures there).
MTE_GPU_ENTRY void mgpuStreamSynchronize(void *stream) {
  if (stream == currentStream())
    return;
  guarded("cuStreamSynchronize (a kernel failed)",
          [&](const Driver &d) { return d.cuStreamSynchronize(stream); });
}

MTE_GPU_ENTRY void mgpuStreamWaitEvent(void *stream, void *event) {
  guarded("cuStreamWaitEvent", [&](const Driver &d) {
    return d.cuStreamWaitEvent(stream, event, 0);
  });
}

MTE_GPU_ENTRY void *mgpuEventCreate() {
  CUevent event = nullptr;
  guarded("cuEventCreate", [&](const Driver &d) {
    return d.cuEventCreate(&event, /*CU_EVENT_DISABLE_TIMING=*/2);
  });
  return event;
}

MTE_GPU_ENTRY void mgpuEventDestroy(void *event) {
  if (event && driverOpen())
    driver().cuEventDestroy_v2(event);
}

MTE_GPU_ENTRY void mgpuEventSynchronize(void *event) {
  guarded("cuEventSynchronize",
          [&](const Driver &d) { return d.cuEventSynchronize(event); });
}

MTE_GPU_ENTRY void mgpuEventRecord(void *event, void *stream) {
  guarded("cuEventRecord",
          [&](const Driver &d) { return d.cuEventRecord(event, stream); });
}

/// Stream-ordered allocation, for the intermediates the static memory plan
/// leaves out (the activation arena holds the others).
MTE_GPU_ENTRY void *mgpuMemAlloc(uint64_t bytes, void *stream,
                                 bool /*isHostShared*/) {
  CUdeviceptr pointer = 0;
  enqueued("cuMemAllocAsync", [&](const Driver &d) {
    return d.cuMemAllocAsync(&pointer, bytes ? bytes : 1, stream);
  });
  return reinterpret_cast<void *>(pointer);
}

MTE_GPU_ENTRY void mgpuMemFree(void *pointer, void *stream) {
  if (!pointer)
    return;
  guarded("cuMemFreeAsync", [&](const Driver &d) {
    return d.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), stream);
  });
}

MTE_GPU_ENTRY void mgpuMemcpy(void *dst, void *src, size_t bytes,
                              void *stream) {
  enqueued("cuMemcpyAsync", [&](const Driver &d) {
    return d.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), bytes, stream);
  });
}

MTE_GPU_ENTRY void mgpuMemset32(void *dst, unsigned value, size_t count,
                                void *stream) {
  enqueued("cuMemsetD32Async", [&](const Driver &d) {
    return d.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream);
  });
}

MTE_GPU_ENTRY void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                void *stream) {
  enqueued("cuMemsetD16Async", [&](const Driver &d) {
    return d.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream);
  });
}
