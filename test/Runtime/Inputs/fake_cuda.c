/*===- fake_cuda.c - a CUDA driver without a GPU ------------------*- C -*-===*\
|*                                                                            *|
|* libcuda.so.1 for devices.test: the driver functions libmte_runtime calls   *|
|* (lib/Runtime/CudaDriver.def) over two devices of sm_90 whose memory is     *|
|* the host's. Every object remembers the context it was made in, and using   *|
|* it while another context is current fails with CUDA_ERROR_INVALID_CONTEXT  *|
|* and a line on stderr, as a driver fails across devices. Nothing runs:      *|
|* launches, copies between streams and graphs only check contexts (copies    *|
|* and memsets write host memory at once). It serves fake_cublaslt.c and      *|
|* fake_nccl.c the current context and device, its checks of objects, and     *|
|* whether a stream is being captured. With MTE_FAKE_CUDA_UPLOADS set, the    *|
|* process prints at exit the bytes it copied from the host to devices        *|
|* (cuMemcpyHtoD), prefixed with $RANK when a launcher set it.                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
enum {
  kSuccess = 0,
  kOutOfMemory = 2,
  kInvalidDevice = 101,
  kInvalidContext = 201,
  kDevices = 2,
};

/* A context, and what every object and allocation starts with. */
typedef struct Context {
  int device;
} Context;
typedef struct Object {
  const Context *context;
  int capturing; /* a stream between begin and end of a capture */
} Object;

static Context contexts[kDevices];
static __thread const Context *current;

/* The current context, for fake_cublaslt.c. */
const void *fakeCudaCurrentContext(void) { return current; }

/* The current context's device, or -1, for fake_nccl.c. */
int fakeCudaCurrentDevice(void) { return current ? current->device : -1; }

/* Whether `stream` is being captured, for fake_nccl.c. */
int fakeCudaCapturing(const void *stream) {
  return stream && ((const Object *)stream)->capturing;
}

static CUresult inContext(const void *object, const char *what);

/* inContext for fake_nccl.c: 0 when `object` belongs to the current
 * context. */
int fakeCudaCheck(const void *object, const char *what) {
  return inContext(object, what);
}

static CUresult inContext(const void *object, const char *what) {
  const Context *context = ((const Object *)object)->context;
  if (context == current)
    return kSuccess;
  fprintf(stderr, "fake_cuda: %s: an object of device %d used on device %d\n",
          what, context->device, current ? current->device : -1);
  return kInvalidContext;
}

static void *make(size_t bytes) {
  Object *object = malloc(sizeof(Object) + 16 + bytes);
  object->context = current;
  object->capturing = 0;
  return object;
}

/* Device memory: 16 bytes after its Object, so allocations are aligned. */
static CUdeviceptr allocate(size_t bytes) {
  return (CUdeviceptr)(uintptr_t)((char *)make(bytes) + 16);
}
static void *header(CUdeviceptr pointer) {
  return (char *)(uintptr_t)pointer - 16;
}

CUresult cuInit(unsigned flags) { return kSuccess; }
CUresult cuDeviceGetCount(int *count) {
  *count = kDevices;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal >= 0 && ordinal < kDevices ? kSuccess : kInvalidDevice;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  *value = attribute == 75 ? 9 : 0; /* compute capability 9.0 */
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  contexts[device].device = device;
  *context = &contexts[device];
  return kSuccess;
}
CUresult cuCtxSetCurrent(void *context) {
  current = context;
  return kSuccess;
}
CUresult cuGetErrorName(CUresult result, const char **name) {
  *name = result == kInvalidContext ? "CUDA_ERROR_INVALID_CONTEXT"
                                    : "CUDA_ERROR_UNKNOWN";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult result, const char **text) {
  *text = "fake_cuda";
  return kSuccess;
}

#define USE(name, ...)                                                         \
  CUresult name(void *object, ##__VA_ARGS__) {                                 \
    return inContext(object, #name);                                           \
  }
#define DESTROY(name)                                                          \
  CUresult name(void *object) {                                                \
    CUresult result = inContext(object, #name);                                \
    free(object);                                                              \
    return result;                                                             \
  }

/* A new object of the current context. */
static CUresult create(void **object) {
  if (!current)
    return kInvalidContext;
  *object = make(0);
  return kSuccess;
}

CUresult cuModuleLoadData(void **module, const void *image) {
  return create(module);
}
DESTROY(cuModuleUnload)
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  *function = make(0);
  return inContext(module, "cuModuleGetFunction");
}
USE(cuFuncSetAttribute, int attribute, int value)
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  CUresult result = inContext(function, "cuLaunchKernel");
  return result || !stream ? result : inContext(stream, "cuLaunchKernel");
}

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  if (!current)
    return kInvalidContext;
  *pointer = allocate(bytes);
  return kSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  CUresult result = inContext(header(pointer), "cuMemFree");
  free(header(pointer));
  return result;
}
CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t bytes, void *stream) {
  *pointer = allocate(bytes);
  return inContext(stream, "cuMemAllocAsync");
}
CUresult cuMemFreeAsync(CUdeviceptr pointer, void *stream) {
  CUresult result = inContext(header(pointer), "cuMemFreeAsync");
  free(header(pointer));
  return result ? result : inContext(stream, "cuMemFreeAsync");
}
/* Host-to-device copies: what a process uploads (weights, staged inputs). */
static size_t uploadedBytes, uploads;
__attribute__((destructor)) static void reportUploads(void) {
  const char *rank = getenv("RANK");
  if (getenv("MTE_FAKE_CUDA_UPLOADS"))
    fprintf(stderr, "fake_cuda: rank %s uploaded %zu bytes in %zu copies\n",
            rank ? rank : "-", uploadedBytes, uploads);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void *from, size_t bytes) {
  uploadedBytes += bytes;
  ++uploads;
  memcpy((void *)(uintptr_t)to, from, bytes);
  return inContext(header(to), "cuMemcpyHtoD");
}
CUresult cuMemcpyDtoH_v2(void *to, CUdeviceptr from, size_t bytes) {
  memcpy(to, (const void *)(uintptr_t)from, bytes);
  return inContext(header(from), "cuMemcpyDtoH");
}
CUresult cuMemcpyAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                       void *stream) {
  memcpy((void *)(uintptr_t)to, (const void *)(uintptr_t)from, bytes);
  return inContext(stream, "cuMemcpyAsync");
}
CUresult cuMemsetD32Async(CUdeviceptr to, unsigned value, size_t count,
                          void *stream) {
  size_t i;
  for (i = 0; i < count; ++i)
    memcpy((char *)(uintptr_t)to + 4 * i, &value, 4);
  return inContext(stream, "cuMemsetD32Async");
}
CUresult cuMemsetD16Async(CUdeviceptr to, unsigned short value, size_t count,
                          void *stream) {
  size_t i;
  for (i = 0; i < count; ++i)
    memcpy((char *)(uintptr_t)to + 2 * i, &value, 2);
  return inContext(stream, "cuMemsetD16Async");
}
CUresult cuMemAllocHost_v2(void **pointer, size_t bytes) {
  *pointer = malloc(bytes);
  return current ? kSuccess : kInvalidContext;
}
CUresult cuMemFreeHost(void *pointer) {
  free(pointer);
  return kSuccess;
}

CUresult cuStreamCreate(void **stream, unsigned flags) {
  return create(stream);
}
DESTROY(cuStreamDestroy_v2)
CUresult cuStreamSynchronize(void *stream) {
  return stream ? inContext(stream, "cuStreamSynchronize") : kSuccess;
}
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  CUresult result = inContext(event, "cuStreamWaitEvent");
  return result || !stream ? result : inContext(stream, "cuStreamWaitEvent");
}
CUresult cuEventCreate(void **event, unsigned flags) { return create(event); }
DESTROY(cuEventDestroy_v2)
CUresult cuEventRecord(void *event, void *stream) {
  CUresult result = inContext(event, "cuEventRecord");
  return result || !stream ? result : inContext(stream, "cuEventRecord");
}
USE(cuEventSynchronize)
USE(cuEventQuery)

CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  ((Object *)stream)->capturing = 1;
  return inContext(stream, "cuStreamBeginCapture");
}
CUresult cuStreamEndCapture(void *stream, void **graph) {
  ((Object *)stream)->capturing = 0;
  *graph = make(0);
  return inContext(stream, "cuStreamEndCapture");
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags) {
  *exec = make(0);
  return inContext(graph, "cuGraphInstantiate");
}
CUresult cuGraphLaunch(void *exec, void *stream) {
  CUresult result = inContext(exec, "cuGraphLaunch");
  return result ? result : inContext(stream, "cuGraphLaunch");
}
DESTROY(cuGraphDestroy)
DESTROY(cuGraphExecDestroy)
