//===- DynamicLibrary.h - libraries opened at run time ----------*- C++ -*-===//
//
// Internal to libmte_runtime. The GPU libraries (the CUDA driver, cuBLASLt)
// are opened with dlopen when a CUDA model first needs them, so that the
// runtime builds without their headers and host models load where they are
// absent. Each library names its functions once, in a .def file of
// MTE_DYNAMIC_SYMBOL(name, type) entries that builds both its table of
// function pointers and the DynamicSymbol list that fills it:
//
//   struct Functions {
//   #define MTE_DYNAMIC_SYMBOL(name, type) FunctionPointer<type> name;
//   #include "Library.def"
//   };
//   Functions functions;
//   const DynamicSymbol symbols[] = {
//   #define MTE_DYNAMIC_SYMBOL(name, type) {#name, &functions.name},
//   #include "Library.def"
//   };
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_DYNAMICLIBRARY_H
#define MTE_LIB_RUNTIME_DYNAMICLIBRARY_H

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace mte::runtime {

/// A pointer to a function of type `Function`, as a .def list writes it:
/// FunctionPointer<CUresult(CUdevice *, int)>.
template <typename Function> using FunctionPointer = Function *;

/// A function to resolve: its exported name and the function pointer that
/// receives its address.
struct DynamicSymbol {
  const char *name;
  void *slot; // a pointer to a function pointer of the symbol's type
};

/// A shared library opened with dlopen and never closed, so that the
/// functions resolved from it stay valid for the life of the process.
class DynamicLibrary {
public:
  /// Opens the first library that the dynamic loader accepts: the path in
  /// environment variable `overrideVariable` when it is given and set, then
  /// `candidates` in order (names the loader searches its path for, or
  /// paths). False when none opens, with the loader's reason for the last
  /// one tried in `error`.
  bool open(const char *overrideVariable,
            const std::vector<std::string> &candidates, std::string &error);

  /// Resolves every entry of `symbols` (once open succeeded). Returns the name
  /// of the first one the library lacks, leaving the slots from there on unset,
  /// or null once every slot holds its function.
  const char *resolve(const DynamicSymbol *symbols, size_t count) const;
  template <size_t N>
  const char *resolve(const DynamicSymbol (&symbols)[N]) const {
    return resolve(symbols, N);
  }

private:
  void *handle = nullptr;
};

/// Opens the first library of `candidates` the loader accepts (after the
/// path in `overrideVariable`, as DynamicLibrary::open) and resolves
/// `symbols` from it: empty on success, else `cannotOpen`, or `lacks`
/// followed by the first function the library lacks.
std::string openAndResolve(const char *overrideVariable,
                           const std::vector<std::string> &candidates,
                           const DynamicSymbol *symbols, size_t count,
                           const std::string &cannotOpen,
                           const std::string &lacks);

/// `file` in the CUDA toolkit's lib64 ($CUDA_HOME, else /usr/local/cuda).
std::string toolkitLibrary(const char *file);

/// The `Library` (a struct of function pointers) that `open(library)` fills
/// in, returning the reason it cannot (empty on success), opened once per
/// process and call site: null with that reason in `error`, the same on
/// every call after a failure. Never destroyed, so that models closed from
/// exit handlers still find it.
template <typename Library, typename Open>
const Library *openOnce(Open open, std::string &error) {
  struct Opened {
    std::once_flag once;
    std::string error;
    Library library;
  };
  static Opened *opened = new Opened();
  std::call_once(opened->once,
                 [&] { opened->error = open(opened->library); });
  error = opened->error;
  return error.empty() ? &opened->library : nullptr;
}

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_DYNAMICLIBRARY_H
