//===- CudaDriver.cpp - the CUDA driver API, opened at run time -----------===//

#include "CudaDriver.h"

#include "DynamicLibrary.h"

#include <atomic>
#include <mutex>

using namespace mte::cuda;

namespace {
struct DriverState {
  std::once_flag once;
  std::string error;
  Driver driver;
  std::atomic<bool> open{false};
};

/// Never destroyed, so that models closed from exit handlers still find
/// the driver.
DriverState &state() {
  static DriverState *instance = new DriverState();
  return *instance;
}
} // namespace

const Driver *mte::cuda::openDriver(std::string &error) {
  DriverState &s = state();
  std::call_once(s.once, [&s] {
    Driver &d = s.driver;
    mte::runtime::DynamicLibrary library;
    std::string reason;
    if (!library.open(nullptr, {"libcuda.so.1"}, reason)) {
      s.error = "the CUDA driver is not installed (cannot load libcuda.so.1: " +
                reason + ")";
      return;
    }
    const mte::runtime::DynamicSymbol symbols[] = {
#define MTE_DYNAMIC_SYMBOL(name, type) {#name, &d.name},
#include "CudaDriver.def"
    };
    if (const char *missing = library.resolve(symbols)) {
      s.error = std::string("the CUDA driver is too old: it lacks ") + missing +
                " (mte needs CUDA 11.2 or newer)";
      return;
    }
    if (check(d.cuInit(0), "cuInit", s.error))
      s.open.store(true, std::memory_order_release);
  });
  if (!s.open) {
    error = s.error;
    return nullptr;
  }
  return &s.driver;
}

const Driver &mte::cuda::driver() { return state().driver; }

bool mte::cuda::driverOpen() {
  return state().open.load(std::memory_order_acquire);
}

std::string mte::cuda::describe(CUresult result) {
  const Driver &d = driver();
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

bool mte::cuda::check(CUresult result, const char *what, std::string &error) {
  if (result == CUDA_SUCCESS)
    return true;
  error = std::string(what) + " failed: " + describe(result);
  return false;
}
