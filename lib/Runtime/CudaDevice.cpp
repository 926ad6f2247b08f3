//===- CudaDevice.cpp - the CUDA part of libmte_runtime -------------------===//
//
// The driver API is reached through CudaDriver.h, opened on first use, so
// the runtime builds without the CUDA toolkit and loads without a GPU. The
// mgpu* functions are the entry points that MLIR's gpu-to-llvm lowering
// calls from a CUDA model's host code.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include "CudaDriver.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#define MTE_GPU_ENTRY extern "C" __attribute__((visibility("default")))

using namespace mte::cuda;

namespace {
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;

struct State {
  std::once_flag once;
  bool ready = false;
  std::string initError;
  CUcontext context = nullptr;
  int computeCapability = 0;
};

State &state() {
  static State s;
  return s;
}

thread_local void *threadStream = nullptr;

/// The first failure of an mgpu* entry point or library call on this
/// thread since the last takeError (models run their forwards on the
/// calling thread, so one model's failure is never another's), and whether
/// it was the device running out of memory.
thread_local std::string threadError;
thread_local bool threadErrorOutOfMemory = false;

/// Records the first failure of an mgpu* entry point on this thread.
void record(const std::string &error, bool outOfMemory = false) {
  if (threadError.empty()) {
    threadError = error;
    threadErrorOutOfMemory = outOfMemory;
  }
}

/// Runs `call` when the driver is ready, recording a failure.
template <typename Call> bool guarded(const char *what, Call call) {
  std::string error;
  if (!mte::cuda::initialize(error)) {
    record(error);
    return false;
  }
  CUresult result = call(driver());
  if (!check(result, what, error)) {
    record(error, result == CUDA_ERROR_OUT_OF_MEMORY);
    return false;
  }
  return true;
}

/// `guarded` for work a forward enqueues (launches, copies, allocations):
/// skipped once this thread has failed, so that nothing runs on buffers a
/// failed allocation left null (which would poison the context).
template <typename Call> bool enqueued(const char *what, Call call) {
  return threadError.empty() && guarded(what, call);
}
} // namespace

bool mte::cuda::initialize(std::string &error) {
  State &s = state();
  std::call_once(s.once, [&s] {
    std::string message;
    const Driver *d = openDriver(message);
    CUdevice device;
    int major = 0, minor = 0;
    if (!d ||
        !check(d->cuDeviceGet(&device, 0), "cuDeviceGet (no GPU?)", message) ||
        !check(d->cuDeviceGetAttribute(&major, kComputeCapabilityMajor, device),
               "cuDeviceGetAttribute", message) ||
        !check(d->cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, device),
               "cuDeviceGetAttribute", message) ||
        !check(d->cuDevicePrimaryCtxRetain(&s.context, device),
               "cuDevicePrimaryCtxRetain", message)) {
      s.initError = message;
      return;
    }
    s.computeCapability = major * 10 + minor;
    s.ready = true;
  });
  if (!s.ready) {
    error = s.initError;
    return false;
  }
  // The primary context on every thread that uses it.
  return check(driver().cuCtxSetCurrent(s.context), "cuCtxSetCurrent", error);
}

int mte::cuda::computeCapability() { return state().computeCapability; }

bool mte::cuda::supportsArch(const char *arch, std::string &error) {
  int wanted = 0;
  char suffix = 0;
  if (!arch || std::sscanf(arch, "sm_%d%c", &wanted, &suffix) < 1) {
    error = std::string("unknown GPU architecture '") + (arch ? arch : "") +
            "' in the model";
    return false;
  }
  int have = computeCapability();
  bool specific = suffix == 'a';
  if (specific ? have == wanted : have >= wanted)
    return true;
  error = "the model was compiled for " + std::string(arch) +
          " but the GPU is sm_" + std::to_string(have) +
          (specific ? " (arch-specific code runs on that GPU only)" : "") +
          "; compile it with --gpu=sm_" + std::to_string(have);
  return false;
}

void *mte::cuda::allocate(size_t bytes, std::string &error, bool *outOfMemory) {
  CUdeviceptr pointer = 0;
  CUresult result = driver().cuMemAlloc_v2(&pointer, bytes ? bytes : 1);
  if (outOfMemory)
    *outOfMemory = result == CUDA_ERROR_OUT_OF_MEMORY;
  if (!check(result, "cuMemAlloc", error))
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

void mte::cuda::release(void *pointer) {
  if (pointer && state().ready)
    driver().cuMemFree_v2(reinterpret_cast<CUdeviceptr>(pointer));
}

void *mte::cuda::allocateHost(size_t bytes, std::string &error) {
  void *pointer = nullptr;
  if (!check(driver().cuMemAllocHost_v2(&pointer, bytes ? bytes : 1),
             "cuMemAllocHost", error))
    return nullptr;
  return pointer;
}

void mte::cuda::releaseHost(void *pointer) {
  if (pointer && state().ready)
    driver().cuMemFreeHost(pointer);
}

void *mte::cuda::recordEvent(void *stream, std::string &error) {
  const Driver &d = driver();
  constexpr unsigned kDisableTiming = 2; // CU_EVENT_DISABLE_TIMING
  CUevent event = nullptr;
  if (!check(d.cuEventCreate(&event, kDisableTiming), "cuEventCreate", error))
    return nullptr;
  if (!check(d.cuEventRecord(event, stream), "cuEventRecord", error)) {
    d.cuEventDestroy_v2(event);
    return nullptr;
  }
  return event;
}

bool mte::cuda::eventDone(void *event) {
  return driver().cuEventQuery(static_cast<CUevent>(event)) == CUDA_SUCCESS;
}

bool mte::cuda::waitForEvent(void *event, std::string &error) {
  return check(driver().cuEventSynchronize(static_cast<CUevent>(event)),
               "cuEventSynchronize", error);
}

void mte::cuda::destroyEvent(void *event) {
  if (event && state().ready)
    driver().cuEventDestroy_v2(static_cast<CUevent>(event));
}

bool mte::cuda::copyToDevice(void *device, const void *host, size_t bytes,
                             std::string &error) {
  return check(driver().cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(device),
                                        host, bytes),
               "cuMemcpyHtoD", error);
}

bool mte::cuda::copyToHost(void *host, const void *device, size_t bytes,
                           std::string &error) {
  return check(driver().cuMemcpyDtoH_v2(
                   host, reinterpret_cast<CUdeviceptr>(device), bytes),
               "cuMemcpyDtoH", error);
}

bool mte::cuda::copyOnDevice(void *to, const void *from, size_t bytes,
                             void *stream, std::string &error) {
  return check(driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                                      reinterpret_cast<CUdeviceptr>(from),
                                      bytes, stream),
               "cuMemcpyAsync", error);
}

bool mte::cuda::orderStreams(void *producer, void *waiting,
                             std::string &error) {
  const Driver &d = driver();
  constexpr unsigned kDisableTiming = 2; // CU_EVENT_DISABLE_TIMING
  CUevent event = nullptr;
  bool ok =
      check(d.cuEventCreate(&event, kDisableTiming), "cuEventCreate", error) &&
      check(d.cuEventRecord(event, producer), "cuEventRecord", error) &&
      check(d.cuStreamWaitEvent(waiting, event, 0), "cuStreamWaitEvent", error);
  // Destroying a recorded event is safe: its resources go once it completes.
  if (event)
    d.cuEventDestroy_v2(event);
  return ok;
}

void *mte::cuda::builtinKernel(const void *image, const char *name,
                               int sharedBytes, std::string &error) {
  // One module per image and one function per name, for the process (the
  // primary context lives as long).
  static std::mutex mutex;
  static std::map<const void *, CUmodule> modules;
  static std::map<std::pair<const void *, std::string>, CUfunction> functions;
  constexpr int kMaxDynamicShared = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_...
  constexpr int kDefaultSharedLimit = 48 << 10;
  std::lock_guard<std::mutex> guard(mutex);
  auto known = functions.find({image, name});
  if (known != functions.end())
    return known->second;
  if (!initialize(error))
    return nullptr;
  const Driver &d = driver();
  CUmodule &module = modules[image];
  if (!module && !check(d.cuModuleLoadData(&module, image),
                        "cuModuleLoadData (libmte_runtime's kernels)", error))
    return nullptr;
  CUfunction function = nullptr;
  if (!check(d.cuModuleGetFunction(&function, module, name),
             "cuModuleGetFunction", error))
    return nullptr;
  if (sharedBytes > kDefaultSharedLimit &&
      !check(d.cuFuncSetAttribute(function, kMaxDynamicShared, sharedBytes),
             "cuFuncSetAttribute (shared memory)", error))
    return nullptr;
  functions[{image, name}] = function;
  return function;
}

bool mte::cuda::launch(void *function, const unsigned (&grid)[3],
                       unsigned threads, unsigned sharedBytes, void **params,
                       std::string &error) {
  return check(driver().cuLaunchKernel(function, grid[0], grid[1], grid[2],
                                       threads, 1, 1, sharedBytes, threadStream,
                                       params, nullptr),
               "cuLaunchKernel", error);
}

void mte::cuda::setStream(void *stream) { threadStream = stream; }

bool mte::cuda::synchronize(std::string &error) {
  return check(driver().cuStreamSynchronize(threadStream),
               "cuStreamSynchronize", error);
}

void mte::cuda::recordError(const std::string &error, bool outOfMemory) {
  record(error, outOfMemory);
}

bool mte::cuda::failed() { return !threadError.empty(); }

void *mte::cuda::currentStream() { return threadStream; }

void *mte::cuda::createStream(std::string &error) {
  CUstream stream = nullptr;
  if (!check(driver().cuStreamCreate(&stream, 0), "cuStreamCreate", error))
    return nullptr;
  return stream;
}

void mte::cuda::destroyStream(void *stream) {
  if (stream && state().ready)
    driver().cuStreamDestroy_v2(stream);
}

bool mte::cuda::beginCapture(void *stream, std::string &error) {
  // Relaxed: the forward looks kernels up by name while it is captured.
  constexpr int kCaptureModeRelaxed = 2;
  return check(driver().cuStreamBeginCapture_v2(stream, kCaptureModeRelaxed),
               "cuStreamBeginCapture", error);
}

void *mte::cuda::endCapture(void *stream, std::string &error) {
  const Driver &d = driver();
  void *graph = nullptr, *exec = nullptr;
  if (!check(d.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture", error))
    return nullptr;
  bool ok = check(d.cuGraphInstantiateWithFlags(&exec, graph, 0),
                  "cuGraphInstantiate", error);
  d.cuGraphDestroy(graph);
  return ok ? exec : nullptr;
}

bool mte::cuda::launchGraph(void *graph, void *stream, std::string &error,
                            bool *outOfMemory) {
  CUresult result = driver().cuGraphLaunch(graph, stream);
  if (outOfMemory)
    *outOfMemory = result == CUDA_ERROR_OUT_OF_MEMORY;
  return check(result, "cuGraphLaunch", error);
}

void mte::cuda::destroyGraph(void *graph) {
  if (graph && state().ready)
    driver().cuGraphExecDestroy(graph);
}

std::string mte::cuda::takeError(bool *outOfMemory) {
  std::string error;
  error.swap(threadError);
  if (outOfMemory)
    *outOfMemory = threadErrorOutOfMemory;
  threadErrorOutOfMemory = false;
  return error;
}

//===----------------------------------------------------------------------===//
// mgpu* entry points (called by CUDA models)
//===----------------------------------------------------------------------===//

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
  if (module && state().ready)
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
MTE_GPU_ENTRY void *mgpuStreamCreate() { return threadStream; }
MTE_GPU_ENTRY void mgpuStreamDestroy(void *) {}

/// Every kernel, GEMM and copy of a model goes to the one stream in order,
/// and host code never reads device memory, so the waits that
/// gpu-async-region places around library calls are not needed: the
/// runtime synchronises once, after the forward (and reports kernel
/// failures there).
MTE_GPU_ENTRY void mgpuStreamSynchronize(void *stream) {
  if (stream == threadStream)
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
  if (event && state().ready)
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
