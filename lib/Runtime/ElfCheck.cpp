//===- ElfCheck.cpp - a shared library's file covers what it maps ---------===//

#include "ElfCheck.h"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {
/// Reads `size` bytes at `offset`; false if the file ends first.
bool readAt(int fd, uint64_t offset, void *buffer, size_t size) {
  auto *bytes = static_cast<char *>(buffer);
  while (size > 0) {
    ssize_t got = ::pread(fd, bytes, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    bytes += got;
    offset += static_cast<uint64_t>(got);
    size -= static_cast<size_t>(got);
  }
  return true;
}

/// Whether [offset, offset + count * size) lies in a file of `fileSize`.
bool within(uint64_t offset, uint64_t count, uint64_t size,
            uint64_t fileSize) {
  if (count != 0 && size > UINT64_MAX / count)
    return false;
  uint64_t bytes = count * size;
  return offset <= fileSize && bytes <= fileSize - offset;
}
} // namespace

bool mte::runtime::checkSharedObjectFile(const char *path,
                                         std::string &error) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat status;
  if (::fstat(fd, &status) != 0) {
    error = std::strerror(errno);
    return false;
  }
  uint64_t fileSize = static_cast<uint64_t>(status.st_size);
  Elf64_Ehdr header;
  if (!readAt(fd, 0, &header, sizeof(header)) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    error = "it is not an ELF file";
    return false;
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_type != ET_DYN ||
      header.e_phentsize != sizeof(Elf64_Phdr)) {
    error = "it is not a 64-bit ELF shared library";
    return false;
  }
  if (!within(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr), fileSize) ||
      (header.e_shnum != 0 &&
       !within(header.e_shoff, header.e_shnum, header.e_shentsize, fileSize))) {
    error = "it is truncated (its headers lie past its " +
            std::to_string(fileSize) + " bytes)";
    return false;
  }
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (!readAt(fd, header.e_phoff + uint64_t(i) * sizeof(segment), &segment,
                sizeof(segment))) {
      error = "it is truncated";
      return false;
    }
    if (segment.p_type == PT_LOAD &&
        !within(segment.p_offset, 1, segment.p_filesz, fileSize)) {
      error = "it is truncated (segment " + std::to_string(i) + " ends at " +
              std::to_string(segment.p_offset + segment.p_filesz) +
              " of its " + std::to_string(fileSize) + " bytes)";
      return false;
    }
  }
  return true;
}
