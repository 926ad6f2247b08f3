//===- ExternalWeights.cpp - weights in files beside a model --------------===//

#include "ExternalWeights.h"

#include "Status.h"
#include "mte/Support/FloatBits.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

using namespace mte::runtime;

ExternalWeights::ExternalWeights(const std::string &modelPath)
    : modelPath(modelPath) {
  size_t slash = modelPath.rfind('/');
  directory = slash == std::string::npos ? "." : modelPath.substr(0, slash);
  if (directory.empty())
    directory = "/";
}

ExternalWeights::~ExternalWeights() {
  for (auto &entry : files)
    ::close(entry.second);
}

bool ExternalWeights::read(const std::string &location, uint64_t offset,
                           std::vector<char> &bytes, std::string &error) {
  std::string path = directory + "/" + location;
  auto it = files.find(location);
  if (it == files.end()) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = "cannot open its weights file '" + path +
              "': " + std::strerror(errno);
      return false;
    }
    it = files.emplace(location, fd).first;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pread(it->second, bytes.data() + done, bytes.size() - done,
                        static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = "weights file '" + path +
              "' is too short: " + std::to_string(bytes.size()) +
              " bytes needed at offset " + std::to_string(offset) +
              (n < 0 ? std::string(": ") + std::strerror(errno) : "");
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

/// Converts `count` elements from `from` to `to` (mte_dtype codes): a copy,
/// or f32 narrowed to bf16/f16 with the compiler's rounding.
static bool convertElements(const char *in, int32_t from, char *out, int32_t to,
                            uint64_t count) {
  if (from == to) {
    std::memcpy(out, in, count * mte_dtype_size(from));
    return true;
  }
  if (from != MTE_DTYPE_F32 || (to != MTE_DTYPE_BF16 && to != MTE_DTYPE_F16))
    return false;
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, in + 4 * i, sizeof(bits));
    uint16_t narrow = to == MTE_DTYPE_BF16 ? mte::f32BitsToBF16(bits)
                                           : mte::f32BitsToF16(bits);
    std::memcpy(out + 2 * i, &narrow, sizeof(narrow));
  }
  return true;
}

mte_status ExternalWeights::build(const mte_weight_info &weight, uint32_t index,
                                  std::vector<char> &bytes) {
  const char *path = modelPath.c_str();
  size_t elementSize = mte_dtype_size(weight.dtype);
  uint64_t chunkElements = 0;
  for (uint32_t s = 0; s < weight.num_sources; ++s)
    chunkElements += weight.sources[s].chunk_elements;
  if (!elementSize || !weight.sources ||
      weight.outer * chunkElements * elementSize != weight.num_bytes)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: external weight %u", path,
                index);
  bytes.resize(weight.num_bytes);
  uint64_t chunkOffset = 0; // elements into a chunk
  std::vector<char> raw;
  for (uint32_t s = 0; s < weight.num_sources; ++s) {
    const mte_weight_source &source = weight.sources[s];
    size_t sourceSize = mte_dtype_size(source.dtype);
    if (!source.location || !sourceSize)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: external weight %u", path,
                  index);
    raw.resize(weight.outer * source.chunk_elements * sourceSize);
    std::string error;
    if (!read(source.location, source.offset, raw, error))
      return fail(MTE_ERROR_IO, "'%s': %s", path, error.c_str());
    uint32_t crc = static_cast<uint32_t>(
        ::crc32(::crc32(0, nullptr, 0),
                reinterpret_cast<const Bytef *>(raw.data()), raw.size()));
    if (crc != source.crc32)
      return fail(MTE_ERROR_IO,
                  "'%s': the weights in '%s' at offset %llu are not the ones "
                  "the model was compiled with (CRC-32 %08x, expected %08x)",
                  path, source.location,
                  static_cast<unsigned long long>(source.offset), crc,
                  source.crc32);
    for (uint64_t o = 0; o < weight.outer; ++o)
      if (!convertElements(
              raw.data() + o * source.chunk_elements * sourceSize, source.dtype,
              bytes.data() + (o * chunkElements + chunkOffset) * elementSize,
              weight.dtype, source.chunk_elements))
        return fail(MTE_ERROR_NOT_A_MODEL,
                    "'%s': external weight %u converts %s to %s, which this "
                    "runtime cannot do",
                    path, index, mte_dtype_name(source.dtype),
                    mte_dtype_name(weight.dtype));
    chunkOffset += source.chunk_elements;
  }
  return MTE_OK;
}
