//===- Npz.cpp - NumPy .npz archives for mte tools ------------------------===//
//
// The zip container (PKWARE's APPNOTE) over zlib: the central directory
// gives each member's sizes, method and CRC-32 (numpy writes zip64 markers
// into the local headers, never into the central directory of small
// files), the local header where its data starts.
//
//===----------------------------------------------------------------------===//

#include "mte/Tools/Numpy/Npz.h"

#include "mte/Tools/Numpy/Npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <zlib.h>

using namespace mte::numpy;

namespace {
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46,
                 kEndOfDirectorySize = 22;

uint32_t read16(const std::string &b, size_t at) {
  return uint8_t(b[at]) | uint32_t(uint8_t(b[at + 1])) << 8;
}
uint32_t read32(const std::string &b, size_t at) {
  return read16(b, at) | read16(b, at + 2) << 16;
}
void put16(std::string &b, uint32_t v) {
  b += char(v & 0xff);
  b += char((v >> 8) & 0xff);
}
void put32(std::string &b, uint32_t v) {
  put16(b, v & 0xffff);
  put16(b, v >> 16);
}

/// Inflates the raw deflate stream `in` into `out`, `size` bytes.
bool inflateRaw(const std::string &in, size_t size, std::string &out) {
  out.assign(size, '\0');
  z_stream stream = {};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
    return false;
  stream.next_in =
      reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());
  stream.next_out = reinterpret_cast<Bytef *>(out.data());
  stream.avail_out = static_cast<uInt>(size);
  int result = inflate(&stream, Z_FINISH);
  bool ok = result == Z_STREAM_END && stream.total_out == size;
  inflateEnd(&stream);
  return ok;
}
} // namespace

bool mte::numpy::readNpz(const std::string &path,
                       std::vector<std::pair<std::string, Tensor>> &arrays,
                       std::string &error) {
  auto fail = [&](const std::string &reason) {
    error = "'" + path + "': " + reason;
    return false;
  };
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::string bytes;
  char chunk[65536];
  for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0;)
    bytes.append(chunk, n);
  bool readError = std::ferror(file);
  std::fclose(file);
  if (readError)
    return fail("read error");

  // The end-of-directory record, behind a comment of up to 64 KiB.
  size_t end = std::string::npos;
  for (size_t at = bytes.size() >= kEndOfDirectorySize
                       ? bytes.size() - kEndOfDirectorySize + 1
                       : 0;
       at-- > 0 && bytes.size() - at <= kEndOfDirectorySize + 0xffff;)
    if (read32(bytes, at) == kEndOfDirectory) {
      end = at;
      break;
    }
  if (end == std::string::npos)
    return fail("not a .npz file (no zip directory)");
  uint32_t count = read16(bytes, end + 10);
  uint64_t offset = read32(bytes, end + 16);
  if (count == 0xffff || offset == 0xffffffff)
    return fail("zip64 archives are not supported");
  for (uint32_t i = 0; i < count; ++i) {
    if (offset + kCentralHeaderSize > end ||
        read32(bytes, offset) != kCentralHeader)
      return fail("malformed zip directory");
    uint32_t method = read16(bytes, offset + 10);
    uint32_t crc = read32(bytes, offset + 16);
    uint64_t packed = read32(bytes, offset + 20);
    uint64_t size = read32(bytes, offset + 24);
    uint32_t nameLength = read16(bytes, offset + 28);
    uint32_t extraLength = read16(bytes, offset + 30);
    uint32_t commentLength = read16(bytes, offset + 32);
    uint64_t local = read32(bytes, offset + 42);
    if (offset + kCentralHeaderSize + nameLength > end)
      return fail("malformed zip directory");
    std::string name =
        bytes.substr(offset + kCentralHeaderSize, nameLength);
    offset += kCentralHeaderSize + nameLength + extraLength + commentLength;
    if (packed == 0xffffffff || size == 0xffffffff || local == 0xffffffff)
      return fail("member '" + name + "' needs zip64, which is not supported");
    if (local + kLocalHeaderSize > bytes.size() ||
        read32(bytes, local) != kLocalHeader)
      return fail("member '" + name + "' has no local header");
    uint64_t data = local + kLocalHeaderSize + read16(bytes, local + 26) +
                    read16(bytes, local + 28);
    if (data + packed > bytes.size())
      return fail("member '" + name + "' is cut short");
    std::string stored = bytes.substr(data, packed), contents;
    if (method == 0)
      contents = std::move(stored);
    else if (method != 8 || !inflateRaw(stored, size, contents))
      return fail("member '" + name + "' is " +
                  (method == 8 ? "corrupt" : "compressed with method " +
                                                 std::to_string(method) +
                                                 " (stored and deflate "
                                                 "are read)"));
    if (contents.size() != size ||
        crc32(0, reinterpret_cast<const Bytef *>(contents.data()),
              static_cast<uInt>(contents.size())) != crc)
      return fail("member '" + name + "' fails its CRC-32 check");
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      return fail("member '" + name + "' is not a .npy file");
    Tensor tensor;
    std::string reason;
    if (!parseNpy(contents, tensor, reason))
      return fail("member '" + name + "': " + reason);
    arrays.emplace_back(name.substr(0, name.size() - 4), std::move(tensor));
  }
  return true;
}

bool mte::numpy::writeNpz(
    const std::string &path,
    const std::vector<std::pair<std::string, TensorView>> &arrays,
    std::string &error) {
  std::string archive, directory;
  for (const auto &[key, tensor] : arrays) {
    std::string name = key + ".npy";
    std::string contents = formatNpy(tensor);
    if (contents.size() >= 0xffffffffu || archive.size() >= 0xffffffffu) {
      error = "cannot write '" + path + "': array '" + key +
              "' needs zip64, which mte-run does not write";
      return false;
    }
    uint32_t crc = crc32(0, reinterpret_cast<const Bytef *>(contents.data()),
                         static_cast<uInt>(contents.size()));
    uint32_t offset = static_cast<uint32_t>(archive.size());
    uint32_t size = static_cast<uint32_t>(contents.size());
    // Version 2.0, no flags, stored, 1980-01-01 00:00.
    put32(archive, kLocalHeader);
    for (uint32_t field : {20u, 0u, 0u, 0u, 0x21u})
      put16(archive, field);
    put32(archive, crc);
    put32(archive, size);
    put32(archive, size);
    put16(archive, static_cast<uint32_t>(name.size()));
    put16(archive, 0);
    archive += name;
    archive += contents;

    put32(directory, kCentralHeader);
    for (uint32_t field : {20u, 20u, 0u, 0u, 0u, 0x21u})
      put16(directory, field);
    put32(directory, crc);
    put32(directory, size);
    put32(directory, size);
    for (uint32_t field :
         {static_cast<uint32_t>(name.size()), 0u, 0u, 0u, 0u})
      put16(directory, field);
    put32(directory, 0);
    put32(directory, offset);
    directory += name;
  }
  uint32_t directoryOffset = static_cast<uint32_t>(archive.size());
  archive += directory;
  put32(archive, kEndOfDirectory);
  put16(archive, 0);
  put16(archive, 0);
  put16(archive, static_cast<uint32_t>(arrays.size()));
  put16(archive, static_cast<uint32_t>(arrays.size()));
  put32(archive, static_cast<uint32_t>(directory.size()));
  put32(archive, directoryOffset);
  put16(archive, 0);
  return writeFile(path, archive, error);
}
