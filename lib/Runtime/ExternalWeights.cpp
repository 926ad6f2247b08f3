//===- ExternalWeights.cpp - weights in files beside a model --------------===//

#include "ExternalWeights.h"

#include "Status.h"
#include "mte/Support/FloatBits.h"
#include "mte/Support/WeightPieces.h"

#include <cerrno>
#include <cstring>
#include <optional>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
    if (entry.second.size)
      ::munmap(const_cast<char *>(entry.second.data), entry.second.size);
}

bool ExternalWeights::map(const std::string &location, uint64_t offset,
                          uint64_t bytes, const char *&data,
                          std::string &error) {
  std::string path = directory + "/" + location;
  auto it = files.find(location);
  if (it == files.end()) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = "cannot open its weights file '" + path +
              "': " + std::strerror(errno);
      return false;
    }
    struct stat info;
    Mapping mapping;
    if (::fstat(fd, &info) == 0 && info.st_size > 0) {
      void *address = ::mmap(nullptr, static_cast<size_t>(info.st_size),
                             PROT_READ, MAP_PRIVATE, fd, 0);
      if (address == MAP_FAILED) {
        error = "cannot map its weights file '" + path +
                "': " + std::strerror(errno);
        ::close(fd);
        return false;
      }
      mapping = {static_cast<const char *>(address),
                 static_cast<uint64_t>(info.st_size)};
    }
    ::close(fd); // the mapping stays
    it = files.emplace(location, mapping).first;
  }
  const Mapping &mapping = it->second;
  if (offset > mapping.size || bytes > mapping.size - offset) {
    error = "weights file '" + path + "' is too short: " +
            std::to_string(bytes) + " bytes needed at offset " +
            std::to_string(offset);
    return false;
  }
  data = mapping.data + offset;
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

/// Quantizes `count` elements from `from` (f32 or bf16) as mte-compile
/// does an FP8 weight: each rounded to `via` (bf16 or f32), divided by
/// `scale` in f32 and encoded as E4M3 to nearest even, saturating.
/// With `blocks` (block or rowwise scaling), element i divides by
/// blocks->at(i) instead: `first` is the weight-as-built index of element 0.
struct BlockFactors {
  const float *factors;
  uint64_t k, n;       // the stored weight is [n, k]
  bool transposed;     // built [k, n], stored transposed
  uint64_t rows, cols; // of a block of the stored weight
  float at(uint64_t built) const {
    uint64_t row = transposed ? built % n : built / k,
             col = transposed ? built / n : built % k;
    return factors[(row / rows) * (k / cols) + col / cols];
  }
};

static bool quantizeElements(const char *in, int32_t from, int32_t via,
                             float scale, char *out, uint64_t count,
                             const BlockFactors *blocks = nullptr,
                             uint64_t first = 0) {
  if ((from != MTE_DTYPE_F32 && from != MTE_DTYPE_BF16) ||
      (via != MTE_DTYPE_F32 && via != MTE_DTYPE_BF16) ||
      (from == MTE_DTYPE_BF16 && via == MTE_DTYPE_F32))
    return false;
  for (uint64_t i = 0; i < count; ++i) {
    if (blocks)
      scale = blocks->at(first + i);
    uint32_t bits;
    if (from == MTE_DTYPE_F32) {
      std::memcpy(&bits, in + 4 * i, sizeof(bits));
      if (via == MTE_DTYPE_BF16)
        bits = uint32_t(mte::f32BitsToBF16(bits)) << 16;
    } else {
      uint16_t narrow;
      std::memcpy(&narrow, in + 2 * i, sizeof(narrow));
      bits = uint32_t(narrow) << 16;
    }
    out[i] = static_cast<char>(mte::quantizeF32BitsToE4M3(bits, scale));
  }
  return true;
}

mte_status ExternalWeights::build(const mte_weight_info &weight, uint32_t index,
                                  const WeightPart &part,
                                  std::vector<char> &bytes) {
  const char *path = modelPath.c_str();
  size_t elementSize = mte_dtype_size(weight.dtype);
  uint64_t chunkElements = 0;
  for (uint32_t s = 0; s < weight.num_sources; ++s)
    chunkElements += weight.sources[s].chunk_elements;
  bool sliced = part.parts > 1;
  auto malformed = [&] {
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: external weight %u", path,
                index);
  };
  if (!elementSize || !weight.sources || !weight.outer ||
      weight.outer * chunkElements * elementSize != weight.num_bytes)
    return malformed();
  bool quantized = weight.quantize_scale != 0;
  uint64_t rows = weight.transpose_rows;
  uint64_t numElements = weight.outer * chunkElements;
  // A transposed weight's part is cut from the weight as built, then
  // transposed (mte/Support/WeightPieces.h).
  WeightPart builtPart = part;
  uint64_t builtRows = rows;
  if ((quantized && weight.dtype != MTE_DTYPE_F8E4M3FN) ||
      (rows && (!quantized ||
                !mte::transposedWeightPart(numElements, rows, part,
                                           builtPart, builtRows))))
    return malformed();
  std::optional<BlockFactors> blocks;
  if (weight.quantize_blocks) {
    uint64_t k = weight.quantize_block_k;
    uint64_t blockRows = weight.quantize_block_rows,
             blockCols = weight.quantize_block_cols;
    if (!quantized || sliced || !k || !blockRows || !blockCols ||
        k % blockCols != 0 || numElements % k != 0 || (rows && rows != k))
      return malformed();
    blocks = BlockFactors{weight.quantize_blocks, k, numElements / k,
                          rows != 0, blockRows, blockCols};
  }
  bytes.resize(weight.num_bytes / part.parts);
  // A transposed weight is built as the sources give it, then transposed.
  std::vector<char> staged(rows ? bytes.size() : 0);
  char *built = rows ? staged.data() : bytes.data();
  uint64_t begin = 0; // of the source's elements in a chunk
  for (uint32_t s = 0; s < weight.num_sources; ++s) {
    const mte_weight_source &source = weight.sources[s];
    size_t sourceSize = mte_dtype_size(source.dtype);
    uint64_t stride = source.chunk_stride;
    if (!source.location || !sourceSize ||
        (weight.outer > 1 && stride < source.chunk_elements) ||
        (sliced && !source.part_crc32))
      return malformed();
    // Only the pages of the pieces this part reads are read from disk.
    uint64_t span = (weight.outer - 1) * stride + source.chunk_elements;
    const char *file = nullptr;
    std::string error;
    if (!map(source.location, source.offset, span * sourceSize, file, error))
      return fail(MTE_ERROR_IO, "'%s': %s", path, error.c_str());
    uLong crc = ::crc32_z(0, nullptr, 0);
    bool converted = true;
    mte::forEachWeightPiece(
        numElements, weight.outer, chunkElements, begin,
        source.chunk_elements, stride, builtPart,
        [&](uint64_t element, uint64_t count, uint64_t to) {
          const char *from = file + element * sourceSize;
          crc = ::crc32_z(crc, reinterpret_cast<const Bytef *>(from),
                          count * sourceSize);
          char *into = built + to * elementSize;
          converted =
              converted &&
              (quantized ? quantizeElements(from, source.dtype,
                                            weight.quantize_from,
                                            weight.quantize_scale, into, count,
                                            blocks ? &*blocks : nullptr, to)
                         : convertElements(from, source.dtype, into,
                                           weight.dtype, count));
        });
    uint32_t expected = sliced ? source.part_crc32[part.group] : source.crc32;
    if (static_cast<uint32_t>(crc) != expected)
      return fail(MTE_ERROR_IO,
                  "'%s': the weights in '%s' at offset %llu are not the ones "
                  "the model was compiled with (CRC-32 %08x, expected %08x)",
                  path, source.location,
                  static_cast<unsigned long long>(source.offset),
                  static_cast<uint32_t>(crc), expected);
    if (!converted)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s': external weight %u converts %s to %s, which this "
                  "runtime cannot do",
                  path, index, mte_dtype_name(source.dtype),
                  mte_dtype_name(weight.dtype));
    begin += source.chunk_elements;
  }
  if (rows) {
    uint64_t cols = bytes.size() / builtRows;
    for (uint64_t r = 0; r < builtRows; ++r)
      for (uint64_t c = 0; c < cols; ++c)
        bytes[c * builtRows + r] = staged[r * cols + c];
  }
  return MTE_OK;
}
