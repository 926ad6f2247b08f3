//===- CudaDevice.cpp - the CUDA part of libmte_runtime -------------------===//
//
// The driver API is reached through dlopen/dlsym with the handful of
// prototypes below, so the runtime builds without the CUDA toolkit and
// loads without a GPU. The mgpu* functions are the entry points that MLIR's
// gpu-to-llvm lowering calls from a CUDA model's host code.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include <dlfcn.h>

#define MTE_GPU_ENTRY extern "C" __attribute__((visibility("default")))

namespace {
// The driver API subset mte uses (cuda.h, CUDA 11.2 and later).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
constexpr CUresult CUDA_SUCCESS = 0, CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuMemAllocHost)(void **, size_t);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, void **);
  CUresult (*cuGraphInstantiate)(void **, void *, unsigned long long);
  CUresult (*cuGraphLaunch)(void *, CUstream);
  CUresult (*cuGraphDestroy)(void *);
  CUresult (*cuGraphExecDestroy)(void *);
};

struct State {
  std::once_flag once;
  bool ready = false;
  std::string initError;
  Driver driver = {};
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

/// Resolves every driver function; false (with `error`) on the first
/// missing one.
bool loadDriver(Driver &d, std::string &error) {
  void *library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    error = std::string("the CUDA driver is not installed (cannot load "
                        "libcuda.so.1: ") +
            ::dlerror() + ")";
    return false;
  }
  struct Symbol {
    void *slot;
    const char *name;
  };
  const Symbol symbols[] = {
      {&d.cuInit, "cuInit"},
      {&d.cuDeviceGet, "cuDeviceGet"},
      {&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
      {&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
      {&d.cuModuleLoadData, "cuModuleLoadData"},
      {&d.cuModuleUnload, "cuModuleUnload"},
      {&d.cuModuleGetFunction, "cuModuleGetFunction"},
      {&d.cuFuncSetAttribute, "cuFuncSetAttribute"},
      {&d.cuLaunchKernel, "cuLaunchKernel"},
      {&d.cuMemAlloc, "cuMemAlloc_v2"},
      {&d.cuMemFree, "cuMemFree_v2"},
      {&d.cuMemAllocAsync, "cuMemAllocAsync"},
      {&d.cuMemFreeAsync, "cuMemFreeAsync"},
      {&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
      {&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
      {&d.cuMemcpyAsync, "cuMemcpyAsync"},
      {&d.cuMemsetD32Async, "cuMemsetD32Async"},
      {&d.cuMemsetD16Async, "cuMemsetD16Async"},
      {&d.cuStreamSynchronize, "cuStreamSynchronize"},
      {&d.cuStreamWaitEvent, "cuStreamWaitEvent"},
      {&d.cuEventCreate, "cuEventCreate"},
      {&d.cuEventDestroy, "cuEventDestroy_v2"},
      {&d.cuEventRecord, "cuEventRecord"},
      {&d.cuEventSynchronize, "cuEventSynchronize"},
      {&d.cuEventQuery, "cuEventQuery"},
      {&d.cuMemAllocHost, "cuMemAllocHost_v2"},
      {&d.cuMemFreeHost, "cuMemFreeHost"},
      {&d.cuGetErrorName, "cuGetErrorName"},
      {&d.cuGetErrorString, "cuGetErrorString"},
      {&d.cuStreamCreate, "cuStreamCreate"},
      {&d.cuStreamDestroy, "cuStreamDestroy_v2"},
      {&d.cuStreamBeginCapture, "cuStreamBeginCapture_v2"},
      {&d.cuStreamEndCapture, "cuStreamEndCapture"},
      {&d.cuGraphInstantiate, "cuGraphInstantiateWithFlags"},
      {&d.cuGraphLaunch, "cuGraphLaunch"},
      {&d.cuGraphDestroy, "cuGraphDestroy"},
      {&d.cuGraphExecDestroy, "cuGraphExecDestroy"},
  };
  for (const Symbol &symbol : symbols) {
    void *address = ::dlsym(library, symbol.name);
    if (!address) {
      error = std::string("the CUDA driver is too old: it lacks ") +
              symbol.name + " (mte needs CUDA 11.2 or newer)";
      return false;
    }
    std::memcpy(symbol.slot, &address, sizeof(address));
  }
  return true;
}

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
std::string describe(CUresult result) {
  const Driver &d = state().driver;
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(result, &name);
  if (d.cuGetErrorString)
    d.cuGetErrorString(result, &text);
  std::string message = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    message += std::string(" (") + text + ")";
  return message;
}

bool check(CUresult result, const char *what, std::string &error) {
  if (result == CUDA_SUCCESS)
    return true;
  error = std::string(what) + " failed: " + describe(result);
  return false;
}

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
  CUresult result = call(state().driver);
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
    Driver &d = s.driver;
    CUdevice device;
    int major = 0, minor = 0;
    if (!loadDriver(d, message) || !check(d.cuInit(0), "cuInit", message) ||
        !check(d.cuDeviceGet(&device, 0), "cuDeviceGet (no GPU?)", message) ||
        !check(d.cuDeviceGetAttribute(&major, kComputeCapabilityMajor, device),
               "cuDeviceGetAttribute", message) ||
        !check(d.cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, device),
               "cuDeviceGetAttribute", message) ||
        !check(d.cuDevicePrimaryCtxRetain(&s.context, device),
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
  return check(s.driver.cuCtxSetCurrent(s.context), "cuCtxSetCurrent", error);
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
  CUresult result = state().driver.cuMemAlloc(&pointer, bytes ? bytes : 1);
  if (outOfMemory)
    *outOfMemory = result == CUDA_ERROR_OUT_OF_MEMORY;
  if (!check(result, "cuMemAlloc", error))
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

void mte::cuda::release(void *pointer) {
  if (pointer && state().ready)
    state().driver.cuMemFree(reinterpret_cast<CUdeviceptr>(pointer));
}

void *mte::cuda::allocateHost(size_t bytes, std::string &error) {
  void *pointer = nullptr;
  if (!check(state().driver.cuMemAllocHost(&pointer, bytes ? bytes : 1),
             "cuMemAllocHost", error))
    return nullptr;
  return pointer;
}

void mte::cuda::releaseHost(void *pointer) {
  if (pointer && state().ready)
    state().driver.cuMemFreeHost(pointer);
}

void *mte::cuda::recordEvent(void *stream, std::string &error) {
  const Driver &d = state().driver;
  constexpr unsigned kDisableTiming = 2; // CU_EVENT_DISABLE_TIMING
  CUevent event = nullptr;
  if (!check(d.cuEventCreate(&event, kDisableTiming), "cuEventCreate", error))
    return nullptr;
  if (!check(d.cuEventRecord(event, stream), "cuEventRecord", error)) {
    d.cuEventDestroy(event);
    return nullptr;
  }
  return event;
}

bool mte::cuda::eventDone(void *event) {
  return state().driver.cuEventQuery(static_cast<CUevent>(event)) ==
         CUDA_SUCCESS;
}

bool mte::cuda::waitForEvent(void *event, std::string &error) {
  return check(state().driver.cuEventSynchronize(static_cast<CUevent>(event)),
               "cuEventSynchronize", error);
}

void mte::cuda::destroyEvent(void *event) {
  if (event && state().ready)
    state().driver.cuEventDestroy(static_cast<CUevent>(event));
}

bool mte::cuda::copyToDevice(void *device, const void *host, size_t bytes,
                             std::string &error) {
  return check(state().driver.cuMemcpyHtoD(
                   reinterpret_cast<CUdeviceptr>(device), host, bytes),
               "cuMemcpyHtoD", error);
}

bool mte::cuda::copyToHost(void *host, const void *device, size_t bytes,
                           std::string &error) {
  return check(state().driver.cuMemcpyDtoH(
                   host, reinterpret_cast<CUdeviceptr>(device), bytes),
               "cuMemcpyDtoH", error);
}

bool mte::cuda::copyOnDevice(void *to, const void *from, size_t bytes,
                             void *stream, std::string &error) {
  return check(state().driver.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                                            reinterpret_cast<CUdeviceptr>(from),
                                            bytes, stream),
               "cuMemcpyAsync", error);
}

bool mte::cuda::orderStreams(void *producer, void *waiting,
                             std::string &error) {
  const Driver &d = state().driver;
  constexpr unsigned kDisableTiming = 2; // CU_EVENT_DISABLE_TIMING
  CUevent event = nullptr;
  bool ok =
      check(d.cuEventCreate(&event, kDisableTiming), "cuEventCreate", error) &&
      check(d.cuEventRecord(event, producer), "cuEventRecord", error) &&
      check(d.cuStreamWaitEvent(waiting, event, 0), "cuStreamWaitEvent", error);
  // Destroying a recorded event is safe: its resources go once it completes.
  if (event)
    d.cuEventDestroy(event);
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
  const Driver &d = state().driver;
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
  return check(state().driver.cuLaunchKernel(
                   function, grid[0], grid[1], grid[2], threads, 1, 1,
                   sharedBytes, threadStream, params, nullptr),
               "cuLaunchKernel", error);
}

void mte::cuda::setStream(void *stream) { threadStream = stream; }

bool mte::cuda::synchronize(std::string &error) {
  return check(state().driver.cuStreamSynchronize(threadStream),
               "cuStreamSynchronize", error);
}

void mte::cuda::recordError(const std::string &error, bool outOfMemory) {
  record(error, outOfMemory);
}

bool mte::cuda::failed() { return !threadError.empty(); }

void *mte::cuda::currentStream() { return threadStream; }

void *mte::cuda::createStream(std::string &error) {
  CUstream stream = nullptr;
  if (!check(state().driver.cuStreamCreate(&stream, 0), "cuStreamCreate",
             error))
    return nullptr;
  return stream;
}

void mte::cuda::destroyStream(void *stream) {
  if (stream && state().ready)
    state().driver.cuStreamDestroy(stream);
}

bool mte::cuda::beginCapture(void *stream, std::string &error) {
  // Relaxed: the forward looks kernels up by name while it is captured.
  constexpr int kCaptureModeRelaxed = 2;
  return check(state().driver.cuStreamBeginCapture(stream, kCaptureModeRelaxed),
               "cuStreamBeginCapture", error);
}

void *mte::cuda::endCapture(void *stream, std::string &error) {
  const Driver &d = state().driver;
  void *graph = nullptr, *exec = nullptr;
  if (!check(d.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture", error))
    return nullptr;
  bool ok =
      check(d.cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate", error);
  d.cuGraphDestroy(graph);
  return ok ? exec : nullptr;
}

bool mte::cuda::launchGraph(void *graph, void *stream, std::string &error,
                            bool *outOfMemory) {
  CUresult result = state().driver.cuGraphLaunch(graph, stream);
  if (outOfMemory)
    *outOfMemory = result == CUDA_ERROR_OUT_OF_MEMORY;
  return check(result, "cuGraphLaunch", error);
}

void mte::cuda::destroyGraph(void *graph) {
  if (graph && state().ready)
    state().driver.cuGraphExecDestroy(graph);
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
    state().driver.cuModuleUnload(module);
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
    state().driver.cuEventDestroy(event);
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
