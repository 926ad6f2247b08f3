//===- ModelLoader.cpp - open and close model libraries -------------------===//

#include "ModelLoader.h"

#include "CommOptions.h"
#include "CudaDevice.h"
#include "DType.h"
#include "ElfCheck.h"
#include "HostCommunicator.h"
#include "IndexChecks.h"
#include "Model.h"
#include "ModelState.h"
#include "Status.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>

#include <dlfcn.h>
#include <sys/stat.h>

using namespace mte::runtime;

namespace {

/// The model libraries the runtime has loaded. Each has one run lock,
/// shared by every handle opened on it, so that runs respect the ABI's
/// one-thread-at-a-time rule even when a library is opened twice (dlopen
/// returns the same handle), and the device that was current when it
/// loaded: a CUDA model's constructors load its kernels into that device.
/// A library is forgotten once the loader has unloaded it rather than when
/// its last handle closes, since one that stays loaded (a library linked
/// with -z nodelete, say) keeps its kernels where they are. Loading and
/// unloading happen under the registry's mutex, so that no open sees a
/// library another thread is unloading.
class LoadedLibraries {
public:
  /// Loads `filePath` for a handle on `device` and returns the library, or
  /// null with the loader's reason in `error`. Sets `lock` to its run lock
  /// and `kernelDevice` to the device its constructors ran on.
  void *open(const std::string &filePath, int device,
             std::shared_ptr<std::mutex> &lock, int &kernelDevice,
             std::string &error) {
    std::lock_guard<std::mutex> guard(registryMutex);
    void *library = ::dlopen(filePath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      error = ::dlerror();
      return nullptr;
    }
    auto [it, loadedNow] = entries.try_emplace(library);
    Entry &entry = it->second;
    if (loadedNow)
      entry.device = device;
    lock = entry.lock.lock();
    if (!lock) {
      lock = std::make_shared<std::mutex>();
      entry.lock = lock;
    }
    kernelDevice = entry.device;
    return library;
  }

  /// Drops `lock`, the caller's reference, closes `library` (loaded from
  /// `filePath`) and forgets it if the loader unloaded it.
  void close(void *library, const std::string &filePath,
             std::shared_ptr<std::mutex> &lock) {
    std::lock_guard<std::mutex> guard(registryMutex);
    lock.reset();
    ::dlclose(library);
    auto it = entries.find(library);
    if (it == entries.end() || !it->second.lock.expired())
      return;
    // RTLD_NOLOAD finds the library only while it is loaded.
    if (void *loaded = ::dlopen(filePath.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      ::dlclose(loaded);
      return;
    }
    entries.erase(it);
  }

private:
  struct Entry {
    std::weak_ptr<std::mutex> lock;
    int device = 0;
  };
  std::mutex registryMutex;
  std::map<void *, Entry> entries;
};

} // namespace

/// The process-wide registry. Never destroyed, so that models closed from
/// exit handlers (Python's, for one) still find it.
static LoadedLibraries &loadedLibraries() {
  static LoadedLibraries *instance = new LoadedLibraries();
  return *instance;
}

/// The path dlopen gets for the model at `path`: dlopen searches the loader
/// path for names without a slash, and a model is always a file.
static std::string loaderPath(const std::string &path) {
  return path.find('/') == std::string::npos ? "./" + path : path;
}

mte_status mte::runtime::readTensorTable(const char *path, const char *kind,
                                         const mte_tensor_info *infos,
                                         uint32_t count,
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

/// The most axes a model's device grid may have.
static constexpr uint32_t kMaxGridAxes = 8;

/// Copies and checks the device grid of the model at `path`; a malformed
/// one is MTE_ERROR_NOT_A_MODEL.
static mte_status readGrid(const char *path, const mte_model_abi *abi,
                           std::vector<int64_t> &grid) {
  if (abi->num_grid_axes > kMaxGridAxes)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: a grid of %u axes (at most "
                "%u)",
                path, abi->num_grid_axes, kMaxGridAxes);
  if (abi->num_grid_axes && !abi->grid_shape)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: %u grid axes but no grid "
                "shape",
                path, abi->num_grid_axes);
  grid.assign(abi->grid_shape, abi->grid_shape + abi->num_grid_axes);
  int64_t ranks = 1;
  for (int64_t extent : grid) {
    if (extent < 1)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: grid %s has an extent "
                  "below 1",
                  path,
                  formatShape(abi->num_grid_axes, abi->grid_shape).c_str());
    // A world size is an int32_t.
    if (ranks > INT32_MAX / extent)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: grid %s has more than "
                  "%d ranks",
                  path,
                  formatShape(abi->num_grid_axes, abi->grid_shape).c_str(),
                  INT32_MAX);
    ranks *= extent;
  }
  return MTE_OK;
}

/// Checks that a sharded `model` is opened as one rank of its grid, and
/// for a host model joins the ranks' communicator. (A sharded CUDA model
/// makes its NCCL communicator once its device is open: CudaModel::open.)
static mte_status openRanks(mte_model &model, const RankPlacement &placement) {
  const char *path = model.path.c_str();
  int64_t ranks = 1;
  for (int64_t extent : model.gridShape)
    ranks *= extent;
  bool sharded = !model.gridShape.empty();
  if (sharded && ranks != model.worldSize)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "'%s' was compiled for %lld rank%s (a grid of %s); opened with "
                "world size %d%s",
                path, static_cast<long long>(ranks), ranks == 1 ? "" : "s",
                formatGrid(model.gridShape).c_str(), model.worldSize,
                placement.worldSource.c_str());
  if (model.cuda)
    return MTE_OK;
  CommLimits limits;
  if (sharded && model.worldSize > 1)
    if (mte_status status = readCommLimits(path, limits))
      return status;
  // Every host model gets a communicator: an unsharded one's (of one rank)
  // serves collectives over no grid axes.
  std::string error;
  model.comm = HostCommunicator::join(model.commId, sharded ? model.rank : 0,
                                      model.gridShape, limits, error);
  if (!model.comm)
    return fail(MTE_ERROR_IO, "'%s' (rank %d of %d): %s", path, model.rank,
                model.worldSize, error.c_str());
  return MTE_OK;
}

mte_status mte::runtime::loadModel(mte_model &model,
                                   const RankPlacement &placement) {
  const char *path = model.path.c_str();
  // A CUDA model loads its kernels into the current device when its library
  // loads.
  mte::cuda::DeviceScope deviceScope(model.device);
  struct stat status;
  if (::stat(path, &status) != 0)
    return fail(MTE_ERROR_IO, "cannot open '%s': %s", path,
                std::strerror(errno));
  if (S_ISDIR(status.st_mode))
    return fail(MTE_ERROR_IO, "cannot open '%s': it is a directory", path);

  // A file cut short would fault inside dlopen (SIGBUS), where no error
  // can be returned.
  std::string elfError;
  if (!checkSharedObjectFile(path, elfError))
    return fail(MTE_ERROR_LOAD, "cannot load '%s': %s", path, elfError.c_str());

  std::string filePath = loaderPath(model.path);
  // A CUDA model loads its kernels while it is opened; start with no
  // failure recorded.
  mte::cuda::takeError();
  int kernelDevice = 0;
  std::string reason;
  model.library = loadedLibraries().open(filePath, model.device, model.runLock,
                                         kernelDevice, reason);
  if (!model.library) {
    // dlerror() starts with the file name, which the message already has.
    std::string prefix = filePath + ": ";
    if (reason.compare(0, prefix.size(), prefix) == 0)
      reason.erase(0, prefix.size());
    return fail(MTE_ERROR_LOAD, "cannot load '%s': %s", path, reason.c_str());
  }

  using GetABI = const mte_model_abi *(*)();
  auto getABI =
      reinterpret_cast<GetABI>(::dlsym(model.library, "mte_model_get_abi"));
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
                                          abi->num_inputs, model.inputs))
    return status;
  if (mte_status status = readTensorTable(path, "output", abi->outputs,
                                          abi->num_outputs, model.outputs))
    return status;
  if (mte_status status = readIndexChecks(path, abi))
    return status;
  if (mte_status status = readStateTable(path, abi, model.states))
    return status;
  if (mte_status status = readGrid(path, abi, model.gridShape))
    return status;
  model.abi = abi;
  model.target = abi->target;
  if (model.target == "host") {
    // A launcher's local rank picks GPUs, not a host model's CPU.
    if (model.device != 0 && model.deviceSource.empty())
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s' is a host model, which runs on the CPU: it takes "
                  "device 0 or MTE_DEVICE_DEFAULT (-1), not %d",
                  path, model.device);
    model.device = 0;
    model.deviceSource.clear();
  }
  if (model.target == "cuda" && kernelDevice != model.device)
    return fail(MTE_ERROR_DEVICE,
                "'%s' is loaded for CUDA device %d, which holds its kernels: "
                "it cannot run on device %d in this process (open a copy of "
                "the file instead)",
                path, kernelDevice, model.device);
  if (model.target != "cuda" && model.target != "host")
    return fail(MTE_ERROR_NOT_A_MODEL, "'%s' has unknown target '%s'", path,
                abi->target);
  if (model.target == "cuda")
    model.cuda = std::make_unique<CudaModel>(model);
  if (mte_status status = openRanks(model, placement))
    return status;
  if (model.cuda) {
    if (mte_status status = model.cuda->open())
      return status;
  } else {
    model.hostIndexStatus.resize(3 * abi->num_index_checks);
    initHostState(model);
  }
  return succeed();
}

void mte::runtime::unloadModel(mte_model *model) {
  if (model->library) {
    {
      // A run in progress on another thread holds the lock: wait for it
      // before freeing what it uses. (Calls that start after close returns
      // use a freed handle; Runtime.h says so.) Releasing a CUDA model makes
      // its device current, where the library's kernels unload when dlclose
      // runs its destructors.
      std::lock_guard<std::mutex> guard(*model->runLock);
      model->cuda.reset();
      model->comm.reset();
    }
    loadedLibraries().close(model->library, loaderPath(model->path),
                            model->runLock);
  }
  delete model;
}
