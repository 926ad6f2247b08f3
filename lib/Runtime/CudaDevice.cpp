//===- CudaDevice.cpp - CUDA devices and the work on them -----------------===//

#include "CudaDevice.h"

#include "CudaDriver.h"

#include <cstdio>
#include <cstring>

using namespace mte::cuda;

namespace {
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;
constexpr unsigned kDisableTiming = 2; // CU_EVENT_DISABLE_TIMING

/// A device, opened once.
struct DeviceSlot {
  std::once_flag once;
  Device *device = nullptr;
  std::string error;
};

/// The devices the driver sees, each opened on first use.
struct Devices {
  std::once_flag once;
  std::string error;
  int count = 0;
  DeviceSlot *slots = nullptr;
};

/// Never destroyed, like everything a Device holds, so that models closed
/// from exit handlers (Python's, for one) still find their device.
Devices &devices() {
  static Devices *instance = new Devices();
  return *instance;
}

/// The calling thread's device (DeviceScope): its ordinal, and the Device
/// once something asked for it.
thread_local int threadOrdinal = 0;
thread_local Device *threadDevice = nullptr;

thread_local void *threadStream = nullptr;

/// The first failure of an mgpu* entry point or library call on this
/// thread since the last takeError, and whether it was the device running
/// out of memory.
thread_local std::string threadError;
thread_local bool threadErrorOutOfMemory = false;
} // namespace

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

Device *Device::get(int ordinal, std::string &error) {
  Devices &all = devices();
  std::call_once(all.once, [&all] {
    const Driver *d = openDriver(all.error);
    if (d &&
        check(d->cuDeviceGetCount(&all.count), "cuDeviceGetCount", all.error))
      all.slots = new DeviceSlot[all.count];
  });
  if (!all.slots) {
    error = all.error;
    return nullptr;
  }
  if (ordinal < 0 || ordinal >= all.count) {
    error = "there is no CUDA device " + std::to_string(ordinal) +
            " (the driver sees " + std::to_string(all.count) + ")";
    return nullptr;
  }
  DeviceSlot &slot = all.slots[ordinal];
  std::call_once(slot.once,
                 [&slot, ordinal] { slot.device = open(ordinal, slot.error); });
  if (!slot.device)
    error = slot.error;
  return slot.device;
}

Device *Device::open(int ordinal, std::string &error) {
  const Driver &d = driver();
  CUdevice device;
  CUcontext context = nullptr;
  int major = 0, minor = 0;
  if (!check(d.cuDeviceGet(&device, ordinal), "cuDeviceGet", error) ||
      !check(d.cuDeviceGetAttribute(&major, kComputeCapabilityMajor, device),
             "cuDeviceGetAttribute", error) ||
      !check(d.cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, device),
             "cuDeviceGetAttribute", error) ||
      !check(d.cuDevicePrimaryCtxRetain(&context, device),
             "cuDevicePrimaryCtxRetain", error))
    return nullptr;
  return new Device(ordinal, context, major * 10 + minor);
}

Device *Device::current(std::string &error) {
  if (!threadDevice)
    threadDevice = get(threadOrdinal, error);
  return threadDevice;
}

bool Device::makeCurrent(std::string &error) const {
  return check(driver().cuCtxSetCurrent(context), "cuCtxSetCurrent", error);
}

bool Device::supportsArch(const char *arch, std::string &error) const {
  int wanted = 0;
  char suffix = 0;
  if (!arch || std::sscanf(arch, "sm_%d%c", &wanted, &suffix) < 1) {
    error = std::string("unknown GPU architecture '") + (arch ? arch : "") +
            "' in the model";
    return false;
  }
  int have = capability;
  bool specific = suffix == 'a';
  if (specific ? have == wanted : have >= wanted)
    return true;
  error = "the model was compiled for " + std::string(arch) +
          " but the GPU is sm_" + std::to_string(have) +
          (specific ? " (arch-specific code runs on that GPU only)" : "") +
          "; compile it with --gpu=sm_" + std::to_string(have);
  return false;
}

void *Device::builtinKernel(const void *image, const char *name,
                            int sharedBytes, std::string &error) {
  // One module per image and one function per name, for the life of the
  // device's primary context.
  constexpr int kMaxDynamicShared = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_...
  constexpr int kDefaultSharedLimit = 48 << 10;
  std::lock_guard<std::mutex> guard(kernelsMutex);
  auto known = kernels.find({image, name});
  if (known != kernels.end())
    return known->second;
  if (!makeCurrent(error))
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
  kernels[{image, name}] = function;
  return function;
}

DeviceScope::DeviceScope(int ordinal)
    : previousOrdinal(threadOrdinal), previousDevice(threadDevice) {
  if (ordinal != threadOrdinal) {
    threadOrdinal = ordinal;
    threadDevice = nullptr;
  }
}

DeviceScope::~DeviceScope() {
  threadOrdinal = previousOrdinal;
  threadDevice = previousDevice;
}

//===----------------------------------------------------------------------===//
// Driver calls
//===----------------------------------------------------------------------===//

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
  if (pointer && driverOpen())
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
  if (pointer && driverOpen())
    driver().cuMemFreeHost(pointer);
}

void *mte::cuda::recordEvent(void *stream, std::string &error) {
  const Driver &d = driver();
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
  if (event && driverOpen())
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

bool mte::cuda::fillOnDevice32(void *to, uint32_t value, size_t count,
                               void *stream, std::string &error) {
  return check(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(to),
                                         value, count, stream),
               "cuMemsetD32Async", error);
}

bool mte::cuda::orderStreams(void *producer, void *waiting,
                             std::string &error) {
  const Driver &d = driver();
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

void *mte::cuda::currentStream() { return threadStream; }

void *mte::cuda::createStream(std::string &error) {
  CUstream stream = nullptr;
  if (!check(driver().cuStreamCreate(&stream, 0), "cuStreamCreate", error))
    return nullptr;
  return stream;
}

void mte::cuda::destroyStream(void *stream) {
  if (stream && driverOpen())
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
  if (graph && driverOpen())
    driver().cuGraphExecDestroy(graph);
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

std::string mte::cuda::takeError(bool *outOfMemory) {
  std::string error;
  error.swap(threadError);
  if (outOfMemory)
    *outOfMemory = threadErrorOutOfMemory;
  threadErrorOutOfMemory = false;
  return error;
}

void mte::cuda::recordError(const std::string &error, bool outOfMemory) {
  if (threadError.empty()) {
    threadError = error;
    threadErrorOutOfMemory = outOfMemory;
  }
}

bool mte::cuda::failed() { return !threadError.empty(); }
