//===- DynamicLibrary.cpp - libraries opened at run time ------------------===//

#include "DynamicLibrary.h"

#include <cstdlib>
#include <cstring>

#include <dlfcn.h>

using namespace mte::runtime;

bool DynamicLibrary::open(const char *overrideVariable,
                          const std::vector<std::string> &candidates,
                          std::string &error) {
  const char *override =
      overrideVariable ? std::getenv(overrideVariable) : nullptr;
  std::vector<std::string> names;
  if (override && *override)
    names.push_back(override);
  names.insert(names.end(), candidates.begin(), candidates.end());
  for (const std::string &name : names) {
    handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle)
      return true;
    error = ::dlerror();
  }
  return false;
}

const char *DynamicLibrary::resolve(const DynamicSymbol *symbols,
                                    size_t count) const {
  for (size_t i = 0; i < count; ++i) {
    void *address = ::dlsym(handle, symbols[i].name);
    if (!address)
      return symbols[i].name;
    // Function pointers are not object pointers in C++: copy the bits.
    std::memcpy(symbols[i].slot, &address, sizeof(address));
  }
  return nullptr;
}

std::string mte::runtime::openAndResolve(
    const char *overrideVariable, const std::vector<std::string> &candidates,
    const DynamicSymbol *symbols, size_t count, const std::string &cannotOpen,
    const std::string &lacks) {
  DynamicLibrary library;
  std::string reason;
  if (!library.open(overrideVariable, candidates, reason))
    return cannotOpen;
  if (const char *missing = library.resolve(symbols, count))
    return lacks + missing;
  return std::string();
}

std::string mte::runtime::toolkitLibrary(const char *file) {
  const char *cudaHome = std::getenv("CUDA_HOME");
  return std::string(cudaHome ? cudaHome : "/usr/local/cuda") + "/lib64/" +
         file;
}
