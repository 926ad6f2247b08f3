//===- CudaDevice.h - the CUDA part of libmte_runtime -------------*- C++
//-*-===//
//
// Internal to libmte_runtime. The CUDA driver (libcuda.so.1) is opened on
// first use, so host models load and run where CUDA is absent. CUDA models
// call the mgpu* entry points (the ABI MLIR's gpu-to-llvm lowering emits)
// that CudaDevice.cpp defines; they record the first failure instead of
// aborting, and the runtime turns it into a status.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_CUDADEVICE_H
#define MTE_LIB_RUNTIME_CUDADEVICE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace mte::cuda {

/// Opens the driver and makes the primary context of device 0 current on
/// this thread. Returns false with the reason in `error`.
bool initialize(std::string &error);

/// The compute capability of the device (e.g. 90 for sm_90).
int computeCapability();

/// Checks that code built for `arch` ("sm_90a", "sm_89", ...) runs on the
/// device: an arch-specific target ('a' suffix) needs that exact GPU, a
/// plain one that GPU or a newer one (the fatbin's PTX is JIT-compiled).
bool supportsArch(const char *arch, std::string &error);

/// Device memory; returns null with the reason in `error`, and sets
/// `*outOfMemory` (when given) to whether the device ran out of memory.
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

/// An event recorded on `stream` now; null (with `error`) on failure.
void *recordEvent(void *stream, std::string &error);
/// Whether the work enqueued before `event` has finished; never blocks.
bool eventDone(void *event);
bool waitForEvent(void *event, std::string &error);
void destroyEvent(void *event);

/// Device-to-device copy enqueued on `stream`.
bool copyOnDevice(void *to, const void *from, size_t bytes, void *stream,
                  std::string &error);

/// Makes work enqueued on `waiting` from now on wait for what is enqueued on
/// `producer` so far (an event recorded on one, waited on by the other),
/// without blocking the host.
bool orderStreams(void *producer, void *waiting, std::string &error);

/// Kernel `name` of `image`, a module built into libmte_runtime, loaded on
/// first use and allowed `sharedBytes` of dynamic shared memory; null with
/// the reason in `error`.
void *builtinKernel(const void *image, const char *name, int sharedBytes,
                    std::string &error);

/// Enqueues `function` on this thread's stream: `grid` blocks of `threads`.
bool launch(void *function, const unsigned (&grid)[3], unsigned threads,
            unsigned sharedBytes, void **params, std::string &error);

/// The stream the mgpu* entry points enqueue on (null: the legacy default
/// stream), for the calling thread.
void setStream(void *stream);
bool synchronize(std::string &error);

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

/// The stream set for this thread.
void *currentStream();

/// A stream of the runtime's own (null on failure, with `error`).
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

} // namespace mte::cuda

#endif // MTE_LIB_RUNTIME_CUDADEVICE_H
