//===- ElfCheck.h - a shared library's file covers what it maps -*- C++ -*-===//
//
// dlopen maps a library's segments and the loader touches them: a file cut
// short (a partial copy, a full disk) then faults with SIGBUS inside
// dlopen, where no error can be returned. Before opening a model, the
// runtime checks that the file is a 64-bit ELF shared object whose program
// and section headers, and every segment's file bytes, lie inside it.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_RUNTIME_ELFCHECK_H
#define MTE_RUNTIME_ELFCHECK_H

#include <string>

namespace mte::runtime {

/// True when the file at `path` is a complete ELF64 shared object of this
/// machine; otherwise false, with what is wrong in `error`.
bool checkSharedObjectFile(const char *path, std::string &error);

} // namespace mte::runtime

#endif // MTE_RUNTIME_ELFCHECK_H
