//===- Npy.cpp - NumPy .npy files for mte tools ---------------------------===//

#include "mte/Tools/Numpy/Npy.h"

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

#include <sys/stat.h>

using namespace mte::numpy;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".npy data is read and written in host byte order");

namespace {
/// A numpy element type mte-run reads and writes: its kind character and
/// size in the descr string ("<f4" is kind 'f', size 4).
struct NpyType {
  char kind;
  size_t size;
  int32_t dtype;
};

/// Closes a FILE on destruction.
struct FileCloser {
  void operator()(std::FILE *file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

/// The dictionary at the start of a .npy file.
struct Header {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the header dictionary, a Python literal such as
/// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// Fills `header`; on failure returns false and sets `error`.
  bool parse(Header &header, std::string &error);

private:
  void skipSpace() {
    while (pos < text.size() &&
           (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  bool parseString(std::string &value);
  bool parseBool(bool &value);
  bool parseShape(std::vector<int64_t> &shape);

  std::string_view text;
  size_t pos = 0;
};
} // namespace

static const NpyType kNpyTypes[] = {
    {'b', 1, MTE_DTYPE_BOOL}, {'i', 1, MTE_DTYPE_I8},  {'i', 2, MTE_DTYPE_I16},
    {'i', 4, MTE_DTYPE_I32},  {'i', 8, MTE_DTYPE_I64}, {'u', 1, MTE_DTYPE_U8},
    {'u', 2, MTE_DTYPE_U16},  {'u', 4, MTE_DTYPE_U32}, {'u', 8, MTE_DTYPE_U64},
    {'f', 2, MTE_DTYPE_F16},  {'f', 4, MTE_DTYPE_F32}, {'f', 8, MTE_DTYPE_F64},
};

static const char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

/// Parses a quoted string without escapes, as numpy writes them.
bool HeaderParser::parseString(std::string &value) {
  skipSpace();
  if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
    return false;
  char quote = text[pos++];
  size_t end = text.find(quote, pos);
  if (end == std::string_view::npos)
    return false;
  value = std::string(text.substr(pos, end - pos));
  pos = end + 1;
  return true;
}

/// Parses True or False.
bool HeaderParser::parseBool(bool &value) {
  skipSpace();
  for (bool candidate : {false, true}) {
    std::string_view word = candidate ? "True" : "False";
    if (text.substr(pos, word.size()) == word) {
      pos += word.size();
      value = candidate;
      return true;
    }
  }
  return false;
}

/// Parses a tuple of non-negative integers: (), (3,), (2, 3).
bool HeaderParser::parseShape(std::vector<int64_t> &shape) {
  if (!consume('('))
    return false;
  while (!consume(')')) {
    skipSpace();
    size_t start = pos;
    int64_t dim = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      int digit = text[pos++] - '0';
      if (dim > (INT64_MAX - digit) / 10)
        return false;
      dim = dim * 10 + digit;
    }
    if (pos == start)
      return false;
    // Python 2 numpy wrote long integers as 3L.
    if (pos < text.size() && text[pos] == 'L')
      ++pos;
    shape.push_back(dim);
    if (!consume(',') && !peek(')'))
      return false;
  }
  return true;
}

bool HeaderParser::parse(Header &header, std::string &error) {
  bool seenDescr = false, seenOrder = false, seenShape = false;
  if (!consume('{')) {
    error = "malformed header: expected '{'";
    return false;
  }
  while (!consume('}')) {
    std::string key;
    if (!parseString(key) || !consume(':')) {
      error = "malformed header: expected a quoted key and ':'";
      return false;
    }
    bool parsed;
    if (key == "descr") {
      if (peek('[')) {
        error = "structured arrays are not supported";
        return false;
      }
      parsed = parseString(header.descr);
      seenDescr = true;
    } else if (key == "fortran_order") {
      parsed = parseBool(header.fortranOrder);
      seenOrder = true;
    } else if (key == "shape") {
      parsed = parseShape(header.shape);
      seenShape = true;
    } else {
      error = "malformed header: unexpected key '" + key + "'";
      return false;
    }
    if (!parsed) {
      error = "malformed header: bad value for '" + key + "'";
      return false;
    }
    if (!consume(',') && !peek('}')) {
      error = "malformed header: expected ',' or '}'";
      return false;
    }
  }
  for (auto [seen, key] :
       {std::pair(seenDescr, "descr"), std::pair(seenOrder, "fortran_order"),
        std::pair(seenShape, "shape")}) {
    if (!seen) {
      error = std::string("malformed header: no '") + key + "' key";
      return false;
    }
  }
  return true;
}

/// Maps a descr string such as "<f4" to an mte dtype.
static bool parseDescr(const std::string &descr, int32_t &dtype,
                       std::string &error) {
  std::string_view rest = descr;
  char order = '|';
  if (!rest.empty() && std::strchr("<>|=", rest[0])) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  if (rest == "O" || rest == "O8") {
    error = "object arrays are not supported";
    return false;
  }
  if (rest.size() >= 2) {
    std::string sizeText(rest.substr(1));
    for (const NpyType &type : kNpyTypes) {
      if (rest[0] != type.kind || sizeText != std::to_string(type.size))
        continue;
      if (order == '>' && type.size > 1) {
        error = "big-endian arrays ('" + descr +
                "') are not supported; save it with dtype '<" +
                std::string(rest) + "'";
        return false;
      }
      dtype = type.dtype;
      return true;
    }
  }
  error = "dtype '" + descr +
          "' is not supported (use bool, int8-64, uint8-64 or float16/32/64)";
  return false;
}

bool mte::numpy::parseNpy(const std::string &bytes, Tensor &tensor,
                        std::string &error) {
  auto fail = [&](const std::string &reason) {
    error = reason;
    return false;
  };
  uint64_t size = bytes.size();
  const auto *data = reinterpret_cast<const unsigned char *>(bytes.data());
  if (size < kMagicSize + 2 || std::memcmp(data, kMagic, kMagicSize) != 0)
    return fail("not a .npy file");
  unsigned major = data[kMagicSize], minor = data[kMagicSize + 1];
  if (major < 1 || major > 3 || minor != 0)
    return fail("unsupported .npy format version " + std::to_string(major) +
                "." + std::to_string(minor));
  size_t lengthSize = major == 1 ? 2 : 4;
  uint64_t lengthOffset = kMagicSize + 2;
  if (size < lengthOffset + lengthSize)
    return fail("truncated header");
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthSize; ++i)
    headerLength |= uint64_t(data[lengthOffset + i]) << (8 * i);
  uint64_t dataOffset = lengthOffset + lengthSize + headerLength;
  if (dataOffset > size)
    return fail("truncated header");
  std::string headerText = bytes.substr(lengthOffset + lengthSize, headerLength);

  Header header;
  std::string reason;
  if (!HeaderParser(headerText).parse(header, reason))
    return fail(reason);
  int32_t dtype;
  if (!parseDescr(header.descr, dtype, reason))
    return fail(reason);
  if (header.fortranOrder)
    return fail("Fortran-ordered arrays are not supported; save "
                "numpy.ascontiguousarray(array)");
  if (!tensor.allocate(dtype, header.shape, reason))
    return fail(reason);
  uint64_t dataSize = size - dataOffset;
  if (dataSize != tensor.numBytes())
    return fail("holds " + std::to_string(dataSize) + " bytes of data, but " +
                dtypeName(dtype) + " " + formatShape(header.shape) + " takes " +
                std::to_string(tensor.numBytes()));
  std::memcpy(tensor.data(), data + dataOffset, dataSize);
  return true;
}

bool mte::numpy::readNpy(const std::string &path, Tensor &tensor,
                       std::string &error) {
  auto fail = [&](const std::string &reason) {
    error = "'" + path + "': " + reason;
    return false;
  };
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  struct stat status;
  if (::fstat(::fileno(file.get()), &status) != 0)
    return fail(std::strerror(errno));
  if (S_ISDIR(status.st_mode))
    return fail("is a directory");
  std::string bytes(static_cast<size_t>(status.st_size), '\0');
  if (std::fread(bytes.data(), 1, bytes.size(), file.get()) != bytes.size())
    return fail(std::string("read error: ") + std::strerror(errno));
  std::string reason;
  if (!parseNpy(bytes, tensor, reason))
    return fail(reason);
  return true;
}

std::string mte::numpy::formatNpy(const TensorView &tensor) {
  const NpyType *npyType = nullptr;
  for (const NpyType &type : kNpyTypes)
    if (type.dtype == tensor.dtype)
      npyType = &type;
  assert(npyType && "numpy has no type for this dtype; widen it first");
  std::string header = "{'descr': '";
  header += npyType->size == 1 ? '|' : '<';
  header += npyType->kind;
  header += std::to_string(npyType->size);
  header += "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : tensor.shape)
    header += std::to_string(dim) + (tensor.shape.size() == 1 ? "," : ", ");
  if (tensor.shape.size() > 1)
    header.resize(header.size() - 2);
  header += "), }";

  // Pad with spaces and a newline so that the data starts 64-byte aligned.
  size_t lengthSize = 2;
  size_t unpadded = kMagicSize + 2 + lengthSize + header.size() + 1;
  if ((unpadded + 63) / 64 * 64 - kMagicSize - 2 - lengthSize > 0xffff) {
    lengthSize = 4;
    unpadded += 2;
  }
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';

  std::string bytes(kMagic, kMagicSize);
  bytes += static_cast<char>(lengthSize == 2 ? 1 : 2);
  bytes += '\0';
  for (size_t i = 0; i < lengthSize; ++i)
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header;
  size_t dataSize = numElements(tensor.shape) * npyType->size;
  bytes.append(static_cast<const char *>(tensor.data), dataSize);
  return bytes;
}

bool mte::numpy::writeFile(const std::string &path, const std::string &bytes,
                         std::string &error) {
  File file(std::fopen(path.c_str(), "wb"));
  if (!file) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool written =
      std::fwrite(bytes.data(), 1, bytes.size(), file.get()) == bytes.size();
  if (std::fclose(file.release()) != 0)
    written = false;
  if (!written) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

bool mte::numpy::writeNpy(const std::string &path, const TensorView &tensor,
                        std::string &error) {
  return writeFile(path, formatNpy(tensor), error);
}
