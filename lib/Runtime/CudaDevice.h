//===- CudaDevice.h - CUDA devices and the work on them ---------*- C++ -*-===//
//
// Internal to libmte_runtime. A Device is one GPU as the runtime uses it:
// its primary context, the kernels built into libmte_runtime loaded into
// it, and cuBLASLt's handle and plans. There is one per device ordinal,
// created on first use and kept for the life of the process.
//
// The work of a forward goes to the calling thread's device (DeviceScope)
// and stream (setStream), where the mgpu* entry points that MLIR's
// gpu-to-llvm lowering calls (CudaRuntimeWrappers.cpp) and the runtime's
// own kernels (mte_cuda_gemm, mte_cuda_attention) find them. They record
// the first failure instead of aborting, and the runtime turns it into a
// status. The driver is opened on first use (CudaDriver.h), so host models
// load and run where CUDA is absent.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_CUDADEVICE_H
#define MTE_LIB_RUNTIME_CUDADEVICE_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace mte::cuda {

struct CublasLt;

class Device {
public:
  /// Device `ordinal` (as the driver numbers the devices it sees), opening
  /// the driver and retaining the device's primary context on first use.
  /// Null with the reason in `error`; a device that failed to open fails
  /// the same way on every call.
  static Device *get(int ordinal, std::string &error);

  /// The calling thread's device (DeviceScope); device 0 outside a scope.
  static Device *current(std::string &error);

  int ordinal() const { return deviceOrdinal; }

  /// Makes the device's primary context current on this thread, where the
  /// driver calls that follow (memory, streams, kernels) then act.
  bool makeCurrent(std::string &error) const;

  /// Checks that code built for `arch` ("sm_90a", "sm_89", ...) runs on the
  /// device: an arch-specific target ('a' suffix) needs that exact GPU, a
  /// plain one that GPU or a newer one (the fatbin's PTX is JIT-compiled).
  bool supportsArch(const char *arch, std::string &error) const;

  /// Kernel `name` of `image`, a module built into libmte_runtime, loaded
  /// into this device on first use and allowed `sharedBytes` of dynamic
  /// shared memory; null with the reason in `error`.
  void *builtinKernel(const void *image, const char *name, int sharedBytes,
                      std::string &error);

  /// cuBLASLt's handle, workspace and plans on this device, created on
  /// first use (CublasLt.cpp); null with the reason in `error`.
  CublasLt *cublasLt(std::string &error);

private:
  Device(int ordinal, void *context, int capability)
      : deviceOrdinal(ordinal), context(context), capability(capability) {}

  /// Retains the primary context of device `ordinal`.
  static Device *open(int ordinal, std::string &error);

  const int deviceOrdinal;
  void *const context;
  /// The compute capability (e.g. 90 for sm_90).
  const int capability;

  std::mutex kernelsMutex;
  std::map<const void *, void *> modules;
  std::map<std::pair<const void *, std::string>, void *> kernels;

  std::once_flag cublasLtOnce;
  CublasLt *cublasLtState = nullptr;
  std::string cublasLtError;
};

/// Makes device `ordinal` the calling thread's (Device::current) while it
/// lives, and the previous one again after. Nothing is opened until the
/// device is asked for, so a scope costs a host model nothing.
class DeviceScope {
public:
  explicit DeviceScope(int ordinal);
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;
  ~DeviceScope();

private:
  int previousOrdinal;
  Device *previousDevice;
};

// Driver calls in the calling thread's current context
// (Device::makeCurrent), each returning false or null with the reason in
// `error`.

/// Device memory; sets `*outOfMemory` (when given) to whether the device
/// ran out of memory.
void *allocate(size_t bytes, std::string &error, bool *outOfMemory = nullptr);
void release(void *pointer);
bool copyToDevice(void *device, const void *host, size_t bytes,
                  std::string &error);
bool copyToHost(void *host, const void *device, size_t bytes,
                std::string &error);

/// Page-locked host memory, which copies on a stream can write without
/// blocking the host.
void *allocateHost(size_t bytes, std::string &error);
void releaseHost(void *pointer);

/// An event recorded on `stream` now.
void *recordEvent(void *stream, std::string &error);
/// Whether the work enqueued before `event` has finished; never blocks.
bool eventDone(void *event);
bool waitForEvent(void *event, std::string &error);
void destroyEvent(void *event);

/// Device-to-device copy enqueued on `stream`.
bool copyOnDevice(void *to, const void *from, size_t bytes, void *stream,
                  std::string &error);

/// `count` 32-bit words at `to` set to `value`, enqueued on `stream`.
bool fillOnDevice32(void *to, uint32_t value, size_t count, void *stream,
                    std::string &error);

/// Makes work enqueued on `waiting` from now on wait for what is enqueued on
/// `producer` so far (an event recorded on one, waited on by the other),
/// without blocking the host.
bool orderStreams(void *producer, void *waiting, std::string &error);

/// Enqueues `function` on this thread's stream: `grid` blocks of `threads`.
bool launch(void *function, const unsigned (&grid)[3], unsigned threads,
            unsigned sharedBytes, void **params, std::string &error);

/// The stream the mgpu* entry points enqueue on (null: the legacy default
/// stream), for the calling thread.
void setStream(void *stream);
bool synchronize(std::string &error);

/// The stream set for this thread.
void *currentStream();

/// A stream of the runtime's own.
void *createStream(std::string &error);
void destroyStream(void *stream);

/// CUDA graphs: everything enqueued on `stream` between beginCapture and
/// endCapture becomes one executable graph that launchGraph replays.
bool beginCapture(void *stream, std::string &error);
/// Returns the instantiated graph, or null (with `error`) when capturing or
/// instantiating failed; the stream is usable again either way.
void *endCapture(void *stream, std::string &error);
bool launchGraph(void *graph, void *stream, std::string &error,
                 bool *outOfMemory = nullptr);
void destroyGraph(void *graph);

// Failures of the work a forward enqueues, per thread (models run their
// forwards on the calling thread, so one model's failure is never
// another's).

/// Returns and clears the first failure the mgpu* entry points and library
/// calls recorded on this thread (empty when there was none), and whether
/// the device ran out of memory.
std::string takeError(bool *outOfMemory = nullptr);

/// Records a failure of an entry point called from model code (the first
/// one on this thread wins until takeError).
void recordError(const std::string &error, bool outOfMemory = false);

/// Whether this thread has recorded a failure since the last takeError:
/// entry points then enqueue nothing more.
bool failed();

} // namespace mte::cuda

#endif // MTE_LIB_RUNTIME_CUDADEVICE_H
