//===- Runtime.cpp - libmte_runtime: load and run model.so files ---------===//
//
// Implements include/mte-c/Runtime.h over the table a model.so exports
// (include/mte-c/ModelABI.h). The library is built without exceptions in
// mind: no function here throws, and failing to allocate a few bytes of
// metadata terminates the process as it does in LLVM. Output buffers and
// device memory, which can be large, report MTE_ERROR_OUT_OF_MEMORY.
//
//===----------------------------------------------------------------------===//

#include "mte-c/Runtime.h"

#include "CudaDevice.h"
#include "ElfCheck.h"
#include "mte/Support/FloatBits.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

//===----------------------------------------------------------------------===//
// Status and messages
//===----------------------------------------------------------------------===//

/// The message mte_last_error() returns on this thread.
static thread_local std::string lastError;

/// Clears the message and returns MTE_OK.
static mte_status succeed() {
  lastError.clear();
  return MTE_OK;
}

/// Sets the message from a printf-style format and returns `status`.
__attribute__((format(printf, 2, 3))) static mte_status
fail(mte_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  va_list argsCopy;
  va_copy(argsCopy, args);
  int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  lastError.assign(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0)
    std::vsnprintf(lastError.data(), lastError.size() + 1, format, argsCopy);
  va_end(argsCopy);
  return status;
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

namespace {
struct DTypeInfo {
  const char *name;
  size_t size;
};
} // namespace

/// Returns the name and size of `dtype`, or null when it is not an mte_dtype.
static const DTypeInfo *lookupDType(int32_t dtype) {
  static const DTypeInfo table[] = {
      {nullptr, 0},  {"f32", 4}, {"f16", 2},  {"bf16", 2},
      {"f64", 8},    {"i64", 8}, {"i32", 4},  {"i16", 2},
      {"i8", 1},     {"u8", 1},  {"bool", 1}, {"f8e4m3fn", 1},
      {"f8e5m2", 1}, {"u16", 2}, {"u32", 4},  {"u64", 8},
  };
  constexpr int32_t count = sizeof(table) / sizeof(table[0]);
  if (dtype <= 0 || dtype >= count)
    return nullptr;
  return &table[dtype];
}

/// Formats a dtype for a message: its name, or "dtype N (unknown)".
static std::string formatDType(int32_t dtype) {
  if (const DTypeInfo *info = lookupDType(dtype))
    return info->name;
  return "dtype " + std::to_string(dtype) + " (unknown)";
}

/// Formats a shape as "[2, 3]"; a scalar is "[]".
static std::string formatShape(int32_t rank, const int64_t *shape) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

//===----------------------------------------------------------------------===//
// Loaded libraries
//===----------------------------------------------------------------------===//

namespace {

/// One mutex per loaded library, shared by every handle opened on it, so
/// that runs respect the ABI's one-thread-at-a-time rule even when a library
/// is opened twice (dlopen returns the same handle).
class RunLocks {
public:
  std::shared_ptr<std::mutex> acquire(void *library) {
    std::lock_guard<std::mutex> guard(registryMutex);
    std::shared_ptr<std::mutex> lock = locks[library].lock();
    if (!lock) {
      lock = std::make_shared<std::mutex>();
      locks[library] = lock;
    }
    return lock;
  }

  /// Drops `lock`, the caller's reference for `library`, and forgets the
  /// library once no handle uses it.
  void release(void *library, std::shared_ptr<std::mutex> &lock) {
    std::lock_guard<std::mutex> guard(registryMutex);
    lock.reset();
    auto it = locks.find(library);
    if (it != locks.end() && it->second.expired())
      locks.erase(it);
  }

private:
  std::mutex registryMutex;
  std::map<void *, std::weak_ptr<std::mutex>> locks;
};

} // namespace

/// The process-wide registry. Never destroyed, so that models closed from
/// exit handlers (Python's, for one) still find it.
static RunLocks &runLocks() {
  static RunLocks *instance = new RunLocks();
  return *instance;
}

namespace {

/// A model input or output: a copy of the library's description that the
/// runtime owns and has checked.
struct TensorDesc {
  std::string name;
  std::vector<int64_t> shape;
  int32_t dtype = 0;
  size_t numBytes = 0;
  /// Points into `name` and `shape`; set once the vector holding this
  /// description no longer moves.
  mte_tensor_info info = {};
};

} // namespace

struct mte_model {
  std::string path;
  std::string target;
  void *library = nullptr;
  const mte_model_abi *abi = nullptr;
  std::shared_ptr<std::mutex> runLock;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  /// CUDA models: device copies of the weights, and device buffers the
  /// host-buffer API stages inputs and outputs through.
  bool cuda = false;
  std::vector<void *> deviceWeights, deviceInputs, deviceOutputs;
  /// The activation arena: allocated once, so its address, which the
  /// captured graph holds, never changes.
  void *arena = nullptr;
  /// The model's stream, and the forward captured as a CUDA graph on the
  /// second run (the first one warms up cuBLASLt's plans), replayed after.
  void *stream = nullptr;
  void *graph = nullptr;
  bool useGraph = true;
  uint64_t runs = 0;
  /// The statuses of the model's index checks (ModelABI.h), 3 per check:
  /// for host models the memory the forward writes; for CUDA models the
  /// device buffer it writes (`deviceIndexStatus`), copied on the stream
  /// after each run into page-locked slots. Synchronous runs use slot 0;
  /// run_device runs the others in turn, each slot `pending` until the
  /// event recorded after its copy completes and a later call checks it.
  std::vector<int64_t> hostIndexStatus;
  std::vector<int64_t *> indexStatusSlots;
  void *deviceIndexStatus = nullptr;
  std::deque<std::pair<int64_t *, void *>> pendingIndexStatus;
};

/// How many run_device runs may be in flight before the next waits for the
/// oldest one's index status.
static constexpr size_t kIndexStatusSlots = 4;

/// Frees a CUDA model's device buffers.
static void releaseDeviceBuffers(mte_model *model) {
  mte::cuda::destroyGraph(model->graph);
  model->graph = nullptr;
  mte::cuda::destroyStream(model->stream);
  model->stream = nullptr;
  mte::cuda::release(model->arena);
  model->arena = nullptr;
  for (auto [slot, event] : model->pendingIndexStatus)
    mte::cuda::destroyEvent(event);
  model->pendingIndexStatus.clear();
  mte::cuda::release(model->deviceIndexStatus);
  model->deviceIndexStatus = nullptr;
  for (int64_t *slot : model->indexStatusSlots)
    mte::cuda::releaseHost(slot);
  model->indexStatusSlots.clear();
  for (auto *list :
       {&model->deviceWeights, &model->deviceInputs, &model->deviceOutputs}) {
    for (void *pointer : *list)
      mte::cuda::release(pointer);
    list->clear();
  }
}

namespace {
/// The files external weights are read from, each opened once per model.
class WeightFiles {
public:
  explicit WeightFiles(std::string directory) : directory(std::move(directory)) {}
  WeightFiles(const WeightFiles &) = delete;
  WeightFiles &operator=(const WeightFiles &) = delete;
  ~WeightFiles() {
    for (auto &entry : files)
      ::close(entry.second);
  }

  /// Reads `bytes.size()` bytes of `location` from `offset`.
  bool read(const std::string &location, uint64_t offset,
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
        error = "weights file '" + path + "' is too short: " +
                std::to_string(bytes.size()) + " bytes needed at offset " +
                std::to_string(offset) +
                (n < 0 ? std::string(": ") + std::strerror(errno) : "");
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  }

private:
  std::string directory;
  std::map<std::string, int> files;
};

/// Converts `count` elements from `from` to `to` (mte_dtype codes): a copy,
/// or f32 narrowed to bf16/f16 with the compiler's rounding.
bool convertElements(const char *in, int32_t from, char *out, int32_t to,
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

/// Builds external weight `index` of `model` in `bytes`: its sources read,
/// checked against the CRC-32 the compiler recorded, converted and
/// interleaved in `outer` chunks.
mte_status buildExternalWeight(const char *path, const mte_weight_info &weight,
                               uint32_t index, WeightFiles &files,
                               std::vector<char> &bytes) {
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
    if (!files.read(source.location, source.offset, raw, error))
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
              raw.data() + o * source.chunk_elements * sourceSize,
              source.dtype,
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
} // namespace

/// Device memory of `bytes` for `what`, or the error: the device running
/// out of memory is MTE_ERROR_OUT_OF_MEMORY (naming the size), any other
/// failure MTE_ERROR_DEVICE.
static mte_status allocateOnDevice(const char *path, uint64_t bytes,
                                   const std::string &what, void *&device) {
  std::string error;
  bool outOfMemory = false;
  device = mte::cuda::allocate(bytes, error, &outOfMemory);
  if (device)
    return MTE_OK;
  return fail(outOfMemory ? MTE_ERROR_OUT_OF_MEMORY : MTE_ERROR_DEVICE,
              "'%s': cannot allocate %s of %llu bytes on the GPU: %s", path,
              what.c_str(), static_cast<unsigned long long>(bytes),
              error.c_str());
}

/// The size of the status table of a model's index checks.
static size_t indexStatusBytes(const mte_model_abi *abi) {
  return 3 * sizeof(int64_t) * abi->num_index_checks;
}

/// Checks the table of index checks: every entry names its op and has
/// positive bounds.
static mte_status readIndexChecks(const char *path, const mte_model_abi *abi) {
  if (abi->num_index_checks && !abi->index_checks)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: %u index checks but no "
                "array",
                path, abi->num_index_checks);
  for (uint32_t i = 0; i < abi->num_index_checks; ++i) {
    const mte_index_check &check = abi->index_checks[i];
    bool valid = check.op && check.node && check.source &&
                 check.num_bounds > 0 && check.bounds;
    for (uint32_t j = 0; valid && j < check.num_bounds; ++j)
      valid = check.bounds[j] > 0;
    if (!valid)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: index check %u", path, i);
  }
  return MTE_OK;
}

/// Reports the first index check of `status` (3 values per check) that saw
/// an index out of range; `when` says which run, for reports made later.
static mte_status checkIndexStatus(const mte_model *model,
                                   const int64_t *status,
                                   const char *when = "") {
  const mte_model_abi *abi = model->abi;
  for (uint32_t i = 0; i < abi->num_index_checks; ++i) {
    const int64_t *row = status + 3 * i;
    if (row[0] == 0)
      continue;
    const mte_index_check &check = abi->index_checks[i];
    int64_t position = row[1];
    int64_t bound =
        check.bounds[check.num_bounds == 1 || position < 0
                         ? 0
                         : position % check.num_bounds];
    std::string from = *check.source
                           ? std::string("from input '") + check.source + "'"
                           : std::string("computed in the model");
    return fail(MTE_ERROR_INVALID_INPUT,
                "'%s'%s: %s node '%s': index %lld %s (element %lld of its "
                "indices) is outside [%lld, %lld]; %lld of its indices are "
                "out of range",
                model->path.c_str(), when, check.op, check.node,
                static_cast<long long>(row[2]), from.c_str(),
                static_cast<long long>(position),
                static_cast<long long>(-bound),
                static_cast<long long>(bound - 1),
                static_cast<long long>(row[0]));
  }
  return MTE_OK;
}

/// For a CUDA model: reports the index statuses of earlier run_device runs,
/// oldest first, that the GPU has finished; waits for those still in
/// flight, or (`keep`) for all but that many.
static mte_status checkPendingIndexStatus(mte_model *model, size_t keep) {
  auto &pending = model->pendingIndexStatus;
  while (!pending.empty()) {
    auto [slot, event] = pending.front();
    if (!mte::cuda::eventDone(event)) {
      if (pending.size() <= keep)
        break;
      std::string error;
      if (!mte::cuda::waitForEvent(event, error))
        return fail(MTE_ERROR_DEVICE, "'%s': %s", model->path.c_str(),
                    error.c_str());
    }
    mte::cuda::destroyEvent(event);
    pending.pop_front();
    if (mte_status status = checkIndexStatus(
            model, slot, " (an earlier mte_model_run_device run)"))
      return status;
  }
  return MTE_OK;
}

/// Opens the GPU for a CUDA model, uploads its weights and allocates its
/// staging buffers and its activation arena.
static mte_status prepareDevice(mte_model *model) {
  const char *path = model->path.c_str();
  const mte_model_abi *abi = model->abi;
  // The model's kernels were loaded when the library was; take what that
  // recorded now, so that it never surfaces in another model's call.
  std::string loadError = mte::cuda::takeError();
  std::string error;
  if (!mte::cuda::initialize(error))
    return fail(MTE_ERROR_DEVICE, "'%s' is a CUDA model, but %s", path,
                error.c_str());
  if (!mte::cuda::supportsArch(abi->gpu_arch, error))
    return fail(MTE_ERROR_DEVICE, "'%s': %s", path, error.c_str());
  if (!loadError.empty())
    return fail(MTE_ERROR_DEVICE, "'%s': cannot load its kernels: %s", path,
                loadError.c_str());
  if (abi->num_weights && !abi->weights)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: %u weights but no weight "
                "array",
                path, abi->num_weights);
  // External weights come from files beside the model library.
  std::string directory = model->path;
  size_t slash = directory.rfind('/');
  directory = slash == std::string::npos ? "." : directory.substr(0, slash);
  WeightFiles files(directory.empty() ? "/" : directory);
  std::vector<char> external;
  for (uint32_t i = 0; i < abi->num_weights; ++i) {
    const mte_weight_info &weight = abi->weights[i];
    const void *data = weight.data;
    if (!data) {
      if (mte_status status =
              buildExternalWeight(path, weight, i, files, external))
        return status;
      data = external.data();
    }
    void *device = nullptr;
    if (mte_status status = allocateOnDevice(
            path, weight.num_bytes, "weight " + std::to_string(i), device))
      return status;
    model->deviceWeights.push_back(device);
    if (!mte::cuda::copyToDevice(device, data, weight.num_bytes, error))
      return fail(MTE_ERROR_DEVICE, "'%s': cannot upload weight %u: %s", path,
                  i, error.c_str());
  }
  model->stream = mte::cuda::createStream(error);
  if (!model->stream)
    return fail(MTE_ERROR_DEVICE, "'%s': %s", path, error.c_str());
  if (const char *graphs = std::getenv("MTE_CUDA_GRAPHS"))
    model->useGraph = std::strcmp(graphs, "0") != 0;
  for (auto [descs, buffers] :
       {std::pair(&model->inputs, &model->deviceInputs),
        std::pair(&model->outputs, &model->deviceOutputs)})
    for (const TensorDesc &desc : *descs) {
      void *device = nullptr;
      if (mte_status status = allocateOnDevice(path, desc.numBytes,
                                               "'" + desc.name + "'", device))
        return status;
      buffers->push_back(device);
    }
  if (abi->num_index_checks) {
    size_t bytes = indexStatusBytes(abi);
    if (mte_status status = allocateOnDevice(path, bytes, "its index status",
                                             model->deviceIndexStatus))
      return status;
    for (size_t i = 0; i < kIndexStatusSlots + 1; ++i) {
      void *slot = mte::cuda::allocateHost(bytes, error);
      if (!slot)
        return fail(MTE_ERROR_DEVICE, "'%s': %s", path, error.c_str());
      model->indexStatusSlots.push_back(static_cast<int64_t *>(slot));
    }
  }
  if (abi->arena_bytes)
    return allocateOnDevice(path, abi->arena_bytes, "its activation arena",
                            model->arena);
  return MTE_OK;
}

/// Copies and checks the `count` descriptions at `infos`, of the model's
/// inputs or outputs (`kind`). Reports a malformed table as
/// MTE_ERROR_NOT_A_MODEL.
static mte_status readTensorTable(const char *path, const char *kind,
                                  const mte_tensor_info *infos, uint32_t count,
                                  std::vector<TensorDesc> &descs) {
  if (count && !infos)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: %u %ss but no %s array",
                path, count, kind, kind);
  descs.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const mte_tensor_info &info = infos[i];
    TensorDesc &desc = descs[i];
    if (!info.name)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: %s %u has no name", path,
                  kind, i);
    desc.name = info.name;
    const DTypeInfo *dtype = lookupDType(info.dtype);
    if (!dtype)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: %s '%s' has unknown "
                  "dtype %d",
                  path, kind, info.name, info.dtype);
    if (info.rank < 0 || (info.rank > 0 && !info.shape))
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: %s '%s' has rank %d%s",
                  path, kind, info.name, info.rank,
                  info.rank > 0 ? " but no shape" : "");
    desc.dtype = info.dtype;
    desc.shape.assign(info.shape, info.shape + info.rank);
    size_t numBytes = dtype->size;
    for (int64_t dim : desc.shape) {
      if (dim < 0)
        return fail(MTE_ERROR_NOT_A_MODEL,
                    "'%s' has a malformed model table: %s '%s' has shape %s",
                    path, kind, info.name,
                    formatShape(info.rank, info.shape).c_str());
      if (dim && numBytes > SIZE_MAX / static_cast<uint64_t>(dim))
        return fail(MTE_ERROR_NOT_A_MODEL,
                    "'%s' has a malformed model table: %s '%s' of shape %s "
                    "does not fit in memory",
                    path, kind, info.name,
                    formatShape(info.rank, info.shape).c_str());
      numBytes *= static_cast<size_t>(dim);
    }
    desc.numBytes = numBytes;
    for (uint32_t j = 0; j < i; ++j)
      if (descs[j].name == desc.name)
        return fail(MTE_ERROR_NOT_A_MODEL,
                    "'%s' has a malformed model table: two %ss are named '%s'",
                    path, kind, info.name);
  }
  for (TensorDesc &desc : descs)
    desc.info = {desc.name.c_str(), desc.dtype,
                 static_cast<int32_t>(desc.shape.size()), desc.shape.data()};
  return MTE_OK;
}

/// Loads the library behind `model->path` and fills in `model`.
static mte_status loadModel(mte_model *model) {
  const char *path = model->path.c_str();
  struct stat status;
  if (::stat(path, &status) != 0)
    return fail(MTE_ERROR_IO, "cannot open '%s': %s", path,
                std::strerror(errno));
  if (S_ISDIR(status.st_mode))
    return fail(MTE_ERROR_IO, "cannot open '%s': it is a directory", path);

  // A file cut short would fault inside dlopen (SIGBUS), where no error
  // can be returned.
  std::string elfError;
  if (!mte::runtime::checkSharedObjectFile(path, elfError))
    return fail(MTE_ERROR_LOAD, "cannot load '%s': %s", path,
                elfError.c_str());

  // dlopen searches the loader path for names without a slash; a model is
  // always a file.
  std::string filePath = model->path;
  if (filePath.find('/') == std::string::npos)
    filePath = "./" + filePath;
  // A CUDA model loads its kernels while it is opened; start with no
  // failure recorded.
  mte::cuda::takeError();
  model->library = ::dlopen(filePath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!model->library) {
    // dlerror() starts with the file name, which the message already has.
    std::string reason = ::dlerror();
    std::string prefix = filePath + ": ";
    if (reason.compare(0, prefix.size(), prefix) == 0)
      reason.erase(0, prefix.size());
    return fail(MTE_ERROR_LOAD, "cannot load '%s': %s", path, reason.c_str());
  }

  using GetABI = const mte_model_abi *(*)();
  auto getABI =
      reinterpret_cast<GetABI>(::dlsym(model->library, "mte_model_get_abi"));
  if (!getABI)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' is not an mte model: it does not export "
                "mte_model_get_abi",
                path);
  const mte_model_abi *abi = getABI();
  if (!abi)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' is not an mte model: mte_model_get_abi returned null",
                path);
  // abi_version is the one field every version of the table shares; read
  // nothing else before it matches.
  if (abi->abi_version != MTE_MODEL_ABI_VERSION)
    return fail(MTE_ERROR_ABI_VERSION,
                "'%s' uses model ABI version %u but this runtime supports "
                "version %u; compile it again with a matching mte-compile",
                path, abi->abi_version, MTE_MODEL_ABI_VERSION);
  if (!abi->target)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: no target", path);
  if (!abi->run)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: no run function", path);
  if (mte_status status = readTensorTable(path, "input", abi->inputs,
                                          abi->num_inputs, model->inputs))
    return status;
  if (mte_status status = readTensorTable(path, "output", abi->outputs,
                                          abi->num_outputs, model->outputs))
    return status;
  if (mte_status status = readIndexChecks(path, abi))
    return status;
  model->abi = abi;
  model->target = abi->target;
  model->runLock = runLocks().acquire(model->library);
  if (model->target == "cuda") {
    model->cuda = true;
    if (mte_status status = prepareDevice(model))
      return status;
  } else if (model->target != "host") {
    return fail(MTE_ERROR_NOT_A_MODEL, "'%s' has unknown target '%s'", path,
                abi->target);
  } else {
    model->hostIndexStatus.resize(3 * abi->num_index_checks);
  }
  return succeed();
}

/// Returns the index of the description called `name`, or -1.
static ptrdiff_t findTensor(const std::vector<TensorDesc> &descs,
                            const char *name) {
  for (size_t i = 0; i < descs.size(); ++i)
    if (descs[i].name == name)
      return static_cast<ptrdiff_t>(i);
  return -1;
}

/// Reports that `model` has no input or output (`kind`) called `name`.
static mte_status failUnknownName(const mte_model *model, const char *kind,
                                  const char *name) {
  bool isInput = std::strcmp(kind, "input") == 0;
  const std::vector<TensorDesc> &descs =
      isInput ? model->inputs : model->outputs;
  std::string known;
  for (const TensorDesc &desc : descs)
    known += (known.empty() ? "'" : ", '") + desc.name + "'";
  if (known.empty())
    known = "none";
  std::string hint;
  if (findTensor(isInput ? model->outputs : model->inputs, name) >= 0)
    hint =
        std::string("; '") + name + "' is an " + (isInput ? "output" : "input");
  return fail(MTE_ERROR_UNKNOWN_NAME, "'%s' has no %s named '%s' (%ss: %s)%s",
              model->path.c_str(), kind, name, kind, known.c_str(),
              hint.c_str());
}

/// Checks that `tensor`'s element type and shape are those of `desc`, the
/// model's `kind` ("input" or "output") of the same name.
static mte_status checkTensor(const mte_model *model, const char *kind,
                              const TensorDesc &desc,
                              const mte_tensor &tensor) {
  const char *path = model->path.c_str();
  if (tensor.dtype != desc.dtype)
    return fail(MTE_ERROR_DTYPE_MISMATCH,
                "'%s': %s '%s' has element type %s, given %s", path, kind,
                desc.name.c_str(), formatDType(desc.dtype).c_str(),
                formatDType(tensor.dtype).c_str());
  if (tensor.rank < 0 || (tensor.rank > 0 && !tensor.shape))
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "'%s': %s '%s' given with rank %d%s", path, kind,
                desc.name.c_str(), tensor.rank,
                tensor.rank > 0 ? " but no shape" : "");
  bool sameShape = static_cast<size_t>(tensor.rank) == desc.shape.size();
  for (int32_t i = 0; sameShape && i < tensor.rank; ++i)
    sameShape = tensor.shape[i] == desc.shape[i];
  if (!sameShape)
    return fail(MTE_ERROR_SHAPE_MISMATCH,
                "'%s': %s '%s' has shape %s, given %s", path, kind,
                desc.name.c_str(),
                formatShape(desc.info.rank, desc.info.shape).c_str(),
                formatShape(tensor.rank, tensor.shape).c_str());
  return MTE_OK;
}

/// Allocates an output buffer of `numBytes`, 64-byte aligned; never returns
/// null for a successful zero-byte request.
static void *allocateBuffer(size_t numBytes) {
  void *data = nullptr;
  if (::posix_memalign(&data, 64, numBytes ? numBytes : 1) != 0)
    return nullptr;
  return data;
}

/// Enqueues a CUDA model's forward on its stream, over its staging buffers:
/// eagerly on the first run, captured as a CUDA graph on the second (if
/// capture works), replayed after. Returns the run function's result; a
/// driver failure is recorded (mte::cuda::takeError).
static int32_t enqueueCudaForward(mte_model *model) {
  mte::cuda::setStream(model->stream);
  auto forward = [&] {
    return model->abi->run(
        model->deviceInputs.data(), model->deviceOutputs.data(),
        model->deviceWeights.data(), model->arena,
        static_cast<int64_t *>(model->deviceIndexStatus));
  };
  int32_t result = 0;
  // A graph's stream-ordered allocations happen at launch: its failure is
  // recorded like the eager entry points' (running out of memory included).
  auto launchGraph = [&] {
    std::string launchError;
    bool outOfMemory = false;
    if (!mte::cuda::launchGraph(model->graph, model->stream, launchError,
                                &outOfMemory))
      mte::cuda::recordError(launchError, outOfMemory);
  };
  if (model->graph) {
    launchGraph();
  } else if (model->useGraph && model->runs > 0) {
    // Capture once; if the forward cannot be captured, run it eagerly from
    // now on (the outputs of this run are computed either way).
    std::string captureError;
    if (mte::cuda::beginCapture(model->stream, captureError)) {
      result = forward();
      model->graph = mte::cuda::endCapture(model->stream, captureError);
    }
    std::string capturedError = mte::cuda::takeError();
    if (!model->graph || !capturedError.empty()) {
      mte::cuda::destroyGraph(model->graph);
      model->graph = nullptr;
      model->useGraph = false;
      result = forward();
    } else {
      launchGraph();
    }
  } else {
    result = forward();
  }
  ++model->runs;
  return result;
}

/// Reports how enqueueing a forward went: a driver failure (in `error` or
/// recorded by the mgpu* entry points; running out of device memory is
/// MTE_ERROR_OUT_OF_MEMORY) or a non-zero run result.
static mte_status checkForward(const char *path, int32_t result,
                               std::string &error) {
  bool outOfMemory = false;
  std::string recorded = mte::cuda::takeError(&outOfMemory);
  if (error.empty())
    error = recorded;
  if (!error.empty())
    return fail(outOfMemory ? MTE_ERROR_OUT_OF_MEMORY : MTE_ERROR_RUN_FAILED,
                "'%s' failed to run on the GPU: %s", path, error.c_str());
  if (result != 0)
    return fail(MTE_ERROR_RUN_FAILED,
                "'%s' failed to run: its run function returned %d", path,
                result);
  return MTE_OK;
}

/// Runs a CUDA model on host buffers: inputs up, the forward on the model's
/// stream, outputs down.
static mte_status invokeCudaRun(mte_model *model, const void *const *inputs,
                                void *const *outputs) {
  const char *path = model->path.c_str();
  std::lock_guard<std::mutex> guard(*model->runLock);
  std::string error;
  if (!mte::cuda::initialize(error))
    return fail(MTE_ERROR_DEVICE, "'%s': %s", path, error.c_str());
  // This run waits for the GPU anyway: report earlier runs first.
  if (mte_status status = checkPendingIndexStatus(model, 0))
    return status;
  for (size_t i = 0; i < model->inputs.size(); ++i)
    if (!mte::cuda::copyToDevice(model->deviceInputs[i], inputs[i],
                                 model->inputs[i].numBytes, error))
      return fail(MTE_ERROR_DEVICE, "'%s': input '%s': %s", path,
                  model->inputs[i].name.c_str(), error.c_str());
  int32_t result = enqueueCudaForward(model);
  if (mte_status status = checkForward(path, result, error)) {
    // Let what the failed forward enqueued before it failed finish before
    // the caller reuses the model.
    std::string ignored;
    mte::cuda::synchronize(ignored);
    return status;
  }
  // The statuses come down with the forward, in the same wait.
  int64_t *indexStatus = model->indexStatusSlots.empty()
                             ? nullptr
                             : model->indexStatusSlots.front();
  if (indexStatus &&
      !mte::cuda::copyOnDevice(indexStatus, model->deviceIndexStatus,
                               indexStatusBytes(model->abi), model->stream,
                               error))
    return fail(MTE_ERROR_DEVICE, "'%s': index status: %s", path,
                error.c_str());
  if (!mte::cuda::synchronize(error))
    return fail(MTE_ERROR_RUN_FAILED, "'%s' failed to run on the GPU: %s", path,
                error.c_str());
  if (indexStatus)
    if (mte_status status = checkIndexStatus(model, indexStatus))
      return status;
  for (size_t i = 0; i < model->outputs.size(); ++i)
    if (!mte::cuda::copyToHost(outputs[i], model->deviceOutputs[i],
                               model->outputs[i].numBytes, error))
      return fail(MTE_ERROR_DEVICE, "'%s': output '%s': %s", path,
                  model->outputs[i].name.c_str(), error.c_str());
  return succeed();
}

/// Calls the model's run function under the library's lock.
static mte_status invokeRun(mte_model *model, const void *const *inputs,
                            void *const *outputs) {
  int32_t result;
  if (model->cuda)
    return invokeCudaRun(model, inputs, outputs);
  {
    std::lock_guard<std::mutex> guard(*model->runLock);
    // The model reads inputs and never writes them (ModelABI.h takes them
    // as void *const * for symmetry with outputs).
    result = model->abi->run(const_cast<void *const *>(inputs), outputs,
                             nullptr, nullptr, model->hostIndexStatus.data());
    if (result == 0)
      if (mte_status status =
              checkIndexStatus(model, model->hostIndexStatus.data()))
        return status;
  }
  if (result != 0)
    return fail(MTE_ERROR_RUN_FAILED,
                "'%s' failed to run: its run function returned %d",
                model->path.c_str(), result);
  return succeed();
}

namespace {

/// Frees the buffers it holds on destruction unless released.
class BufferList {
public:
  BufferList() = default;
  BufferList(const BufferList &) = delete;
  BufferList &operator=(const BufferList &) = delete;
  ~BufferList() {
    for (void *buffer : buffers)
      std::free(buffer);
  }
  void add(void *buffer) { buffers.push_back(buffer); }
  void release() { buffers.clear(); }

private:
  std::vector<void *> buffers;
};

} // namespace

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

#define MTE_STRINGIFY_IMPL(x) #x
#define MTE_STRINGIFY(x) MTE_STRINGIFY_IMPL(x)

const char *mte_runtime_version(void) {
  return MTE_STRINGIFY(MTE_RUNTIME_VERSION_MAJOR) "." MTE_STRINGIFY(
      MTE_RUNTIME_VERSION_MINOR) "." MTE_STRINGIFY(MTE_RUNTIME_VERSION_PATCH);
}

uint32_t mte_runtime_model_abi_version(void) { return MTE_MODEL_ABI_VERSION; }

const char *mte_status_name(mte_status status) {
  // C callers may pass any int. Reading one outside the enumerators' range
  // as an mte_status is undefined in C++, so switch over the integer.
  static_assert(sizeof(mte_status) == sizeof(int), "mte_status is an int");
  int value;
  std::memcpy(&value, &status, sizeof(value));
  switch (value) {
  case MTE_OK:
    return "ok";
  case MTE_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case MTE_ERROR_IO:
    return "i/o error";
  case MTE_ERROR_LOAD:
    return "load error";
  case MTE_ERROR_NOT_A_MODEL:
    return "not an mte model";
  case MTE_ERROR_ABI_VERSION:
    return "model ABI version mismatch";
  case MTE_ERROR_UNKNOWN_NAME:
    return "unknown name";
  case MTE_ERROR_DTYPE_MISMATCH:
    return "dtype mismatch";
  case MTE_ERROR_SHAPE_MISMATCH:
    return "shape mismatch";
  case MTE_ERROR_RUN_FAILED:
    return "run failed";
  case MTE_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case MTE_ERROR_DEVICE:
    return "device error";
  case MTE_ERROR_INVALID_INPUT:
    return "invalid input";
  }
  return "unknown status";
}

const char *mte_last_error(void) { return lastError.c_str(); }

const char *mte_dtype_name(int32_t dtype) {
  const DTypeInfo *info = lookupDType(dtype);
  return info ? info->name : nullptr;
}

size_t mte_dtype_size(int32_t dtype) {
  const DTypeInfo *info = lookupDType(dtype);
  return info ? info->size : 0;
}

mte_status mte_model_open(const char *path, mte_model **model) {
  if (!model)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "mte_model_open: model is null");
  *model = nullptr;
  if (!path)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "mte_model_open: path is null");
  auto loaded = std::make_unique<mte_model>();
  loaded->path = path;
  if (mte_status status = loadModel(loaded.get())) {
    mte_model_close(loaded.release());
    return status;
  }
  *model = loaded.release();
  return MTE_OK;
}

void mte_model_close(mte_model *model) {
  if (!model)
    return;
  // A run in progress on another thread holds the lock: wait for it before
  // freeing what it uses. (Calls that start after close returns use a freed
  // handle; Runtime.h says so.)
  if (std::shared_ptr<std::mutex> lock = model->runLock) {
    std::lock_guard<std::mutex> guard(*lock);
    releaseDeviceBuffers(model);
  } else {
    releaseDeviceBuffers(model);
  }
  if (model->runLock)
    runLocks().release(model->library, model->runLock);
  if (model->library)
    ::dlclose(model->library);
  delete model;
}

const char *mte_model_path(const mte_model *model) {
  return model ? model->path.c_str() : nullptr;
}

const char *mte_model_target(const mte_model *model) {
  return model ? model->target.c_str() : nullptr;
}

size_t mte_model_num_inputs(const mte_model *model) {
  return model ? model->inputs.size() : 0;
}

size_t mte_model_num_outputs(const mte_model *model) {
  return model ? model->outputs.size() : 0;
}

const mte_tensor_info *mte_model_input(const mte_model *model, size_t index) {
  if (!model || index >= model->inputs.size())
    return nullptr;
  return &model->inputs[index].info;
}

const mte_tensor_info *mte_model_output(const mte_model *model, size_t index) {
  if (!model || index >= model->outputs.size())
    return nullptr;
  return &model->outputs[index].info;
}

static mte_status findByName(const mte_model *model, const char *kind,
                             const char *name, size_t *index) {
  if (!model)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "mte_model_find_%s: model is null",
                kind);
  if (!name || !index)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "mte_model_find_%s: %s is null",
                kind, name ? "index" : "name");
  bool isInput = std::strcmp(kind, "input") == 0;
  ptrdiff_t found = findTensor(isInput ? model->inputs : model->outputs, name);
  if (found < 0)
    return failUnknownName(model, kind, name);
  *index = static_cast<size_t>(found);
  return succeed();
}

mte_status mte_model_find_input(const mte_model *model, const char *name,
                                size_t *index) {
  return findByName(model, "input", name, index);
}

mte_status mte_model_find_output(const mte_model *model, const char *name,
                                 size_t *index) {
  return findByName(model, "output", name, index);
}

/// Checks the arguments of a positional run (`function` names the entry
/// point in messages): counts that match the model, no null pointer.
static mte_status checkPositionalRun(const char *function,
                                     const mte_model *model, size_t num_inputs,
                                     const void *const *inputs,
                                     size_t num_outputs, void *const *outputs) {
  if (!model)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "%s: model is null", function);
  const char *path = model->path.c_str();
  if (num_inputs != model->inputs.size())
    return fail(MTE_ERROR_INVALID_ARGUMENT, "'%s' takes %zu inputs, %zu given",
                path, model->inputs.size(), num_inputs);
  if (num_outputs != model->outputs.size())
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "'%s' produces %zu outputs, %zu buffers given", path,
                model->outputs.size(), num_outputs);
  if ((num_inputs && !inputs) || (num_outputs && !outputs))
    return fail(MTE_ERROR_INVALID_ARGUMENT, "%s: the %s array is null",
                function, num_inputs && !inputs ? "input" : "output");
  for (size_t i = 0; i < num_inputs; ++i)
    if (!inputs[i])
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': the buffer of input %zu ('%s') is null", path, i,
                  model->inputs[i].name.c_str());
  for (size_t i = 0; i < num_outputs; ++i)
    if (!outputs[i])
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': the buffer of output %zu ('%s') is null", path, i,
                  model->outputs[i].name.c_str());
  return MTE_OK;
}

mte_status mte_model_run(mte_model *model, size_t num_inputs,
                         const void *const *inputs, size_t num_outputs,
                         void *const *outputs) {
  if (mte_status status = checkPositionalRun("mte_model_run", model,
                                             num_inputs, inputs, num_outputs,
                                             outputs))
    return status;
  return invokeRun(model, inputs, outputs);
}

mte_status mte_model_run_device(mte_model *model, size_t num_inputs,
                                const void *const *inputs, size_t num_outputs,
                                void *const *outputs, void *stream) {
  if (mte_status status =
          checkPositionalRun("mte_model_run_device", model, num_inputs, inputs,
                             num_outputs, outputs))
    return status;
  const char *path = model->path.c_str();
  if (!model->cuda)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "'%s' is a host model; mte_model_run_device runs CUDA models",
                path);
  std::lock_guard<std::mutex> guard(*model->runLock);
  std::string error;
  if (!mte::cuda::initialize(error))
    return fail(MTE_ERROR_DEVICE, "'%s': %s", path, error.c_str());
  // Report the earlier runs that have finished, and keep a slot free for
  // this one's statuses.
  if (mte_status status =
          checkPendingIndexStatus(model, kIndexStatusSlots - 1))
    return status;
  // The caller's stream -> the model's stream -> the caller's stream.
  bool ok = mte::cuda::orderStreams(stream, model->stream, error);
  for (size_t i = 0; ok && i < num_inputs; ++i)
    ok = mte::cuda::copyOnDevice(model->deviceInputs[i], inputs[i],
                                 model->inputs[i].numBytes, model->stream,
                                 error);
  int32_t result = ok ? enqueueCudaForward(model) : 0;
  if (mte_status status = checkForward(path, result, error))
    return status;
  for (size_t i = 0; ok && i < num_outputs; ++i)
    ok = mte::cuda::copyOnDevice(outputs[i], model->deviceOutputs[i],
                                 model->outputs[i].numBytes, model->stream,
                                 error);
  if (ok && !model->indexStatusSlots.empty()) {
    // Slot 0 is the synchronous runs'; take one no pending run holds.
    int64_t *slot = nullptr;
    for (size_t i = 1; !slot && i < model->indexStatusSlots.size(); ++i) {
      slot = model->indexStatusSlots[i];
      for (auto [held, event] : model->pendingIndexStatus)
        if (held == slot)
          slot = nullptr;
    }
    ok = mte::cuda::copyOnDevice(slot, model->deviceIndexStatus,
                                 indexStatusBytes(model->abi), model->stream,
                                 error);
    void *event = ok ? mte::cuda::recordEvent(model->stream, error) : nullptr;
    if (event)
      model->pendingIndexStatus.push_back({slot, event});
    ok = event != nullptr;
  }
  if (ok)
    ok = mte::cuda::orderStreams(model->stream, stream, error);
  if (!ok)
    return fail(MTE_ERROR_RUN_FAILED, "'%s' failed to run on the GPU: %s", path,
                error.c_str());
  return succeed();
}

mte_status mte_model_run_tensors(mte_model *model, size_t num_inputs,
                                 const mte_tensor *inputs, size_t num_outputs,
                                 mte_tensor *outputs) {
  if (!model)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "mte_model_run_tensors: model is null");
  if ((num_inputs && !inputs) || (num_outputs && !outputs))
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "mte_model_run_tensors: the %s array is null",
                num_inputs && !inputs ? "input" : "output");
  const char *path = model->path.c_str();

  std::vector<const void *> inputBuffers(model->inputs.size(), nullptr);
  for (size_t i = 0; i < num_inputs; ++i) {
    const mte_tensor &tensor = inputs[i];
    if (!tensor.name)
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': input tensor %zu has no name", path, i);
    ptrdiff_t index = findTensor(model->inputs, tensor.name);
    if (index < 0)
      return failUnknownName(model, "input", tensor.name);
    if (inputBuffers[index])
      return fail(MTE_ERROR_INVALID_ARGUMENT, "'%s': input '%s' given twice",
                  path, tensor.name);
    if (mte_status status =
            checkTensor(model, "input", model->inputs[index], tensor))
      return status;
    if (!tensor.data)
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': the buffer of input '%s' is null", path, tensor.name);
    inputBuffers[index] = tensor.data;
  }
  std::string missing;
  size_t numMissing = 0;
  for (size_t i = 0; i < inputBuffers.size(); ++i)
    if (!inputBuffers[i])
      missing += (numMissing++ ? ", '" : "'") + model->inputs[i].name + "'";
  if (numMissing)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "'%s': input%s %s not given", path,
                numMissing > 1 ? "s" : "", missing.c_str());

  // Check every output before allocating any buffer.
  std::vector<mte_tensor *> requested(model->outputs.size(), nullptr);
  for (size_t i = 0; i < num_outputs; ++i) {
    mte_tensor &tensor = outputs[i];
    if (!tensor.name)
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': output tensor %zu has no name", path, i);
    ptrdiff_t index = findTensor(model->outputs, tensor.name);
    if (index < 0)
      return failUnknownName(model, "output", tensor.name);
    if (requested[index])
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': output '%s' requested twice", path, tensor.name);
    if (tensor.data)
      if (mte_status status =
              checkTensor(model, "output", model->outputs[index], tensor))
        return status;
    requested[index] = &tensor;
  }

  // Buffers this call allocates: `allocated` go to the caller on success,
  // `scratch` never do.
  BufferList allocated, scratch;
  std::vector<void *> outputBuffers(model->outputs.size(), nullptr);
  for (size_t i = 0; i < outputBuffers.size(); ++i) {
    if (requested[i] && requested[i]->data) {
      outputBuffers[i] = requested[i]->data;
      continue;
    }
    const TensorDesc &desc = model->outputs[i];
    void *buffer = allocateBuffer(desc.numBytes);
    if (!buffer)
      return fail(MTE_ERROR_OUT_OF_MEMORY,
                  "'%s': cannot allocate %zu bytes for output '%s'", path,
                  desc.numBytes, desc.name.c_str());
    (requested[i] ? allocated : scratch).add(buffer);
    outputBuffers[i] = buffer;
  }

  if (mte_status status =
          invokeRun(model, inputBuffers.data(), outputBuffers.data()))
    return status;

  for (size_t i = 0; i < requested.size(); ++i) {
    mte_tensor *tensor = requested[i];
    if (!tensor || tensor->data)
      continue;
    const TensorDesc &desc = model->outputs[i];
    tensor->data = outputBuffers[i];
    tensor->dtype = desc.dtype;
    tensor->rank = desc.info.rank;
    tensor->shape = desc.info.shape;
  }
  allocated.release();
  return succeed();
}

void mte_free(void *data) { std::free(data); }
