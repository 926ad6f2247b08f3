//===- CudaDriver.h - the CUDA driver API, opened at run time ---*- C++ -*-===//
//
// Internal to libmte_runtime. The driver (libcuda.so.1) is opened on first
// use with the prototypes below, so the runtime builds without the CUDA
// toolkit and loads without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_CUDADRIVER_H
#define MTE_LIB_RUNTIME_CUDADRIVER_H

#include "DynamicLibrary.h"

#include <cstddef>
#include <string>

namespace mte::cuda {

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

/// The driver's functions, each named once in CudaDriver.def.
struct Driver {
#define MTE_DYNAMIC_SYMBOL(name, type)                                         \
  mte::runtime::FunctionPointer<type> name = nullptr;
#include "CudaDriver.def"
};

/// Opens the driver and initialises it (cuInit), once per process. Returns
/// null with the reason in `error`, the same on every call after a failure.
const Driver *openDriver(std::string &error);

/// The driver opened by openDriver: every function is null before it
/// succeeded.
const Driver &driver();

/// Whether openDriver has succeeded, without opening the driver: only then
/// can there be memory, events, streams or modules to release.
bool driverOpen();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
std::string describe(CUresult result);

/// True for CUDA_SUCCESS; otherwise false with "`what` failed: ..." in
/// `error`.
bool check(CUresult result, const char *what, std::string &error);

} // namespace mte::cuda

#endif // MTE_LIB_RUNTIME_CUDADRIVER_H
