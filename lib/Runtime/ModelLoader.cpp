//===- ModelLoader.cpp - open and close model libraries -------------------===//

#include "ModelLoader.h"

#include "CudaDevice.h"
#include "DType.h"
#include "ElfCheck.h"
#include "IndexChecks.h"
#include "Model.h"
#include "Status.h"

#include <cerrno>
#include <cstring>
#include <map>

#include <dlfcn.h>
#include <sys/stat.h>

using namespace mte::runtime;

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

mte_status mte::runtime::loadModel(mte_model &model) {
  const char *path = model.path.c_str();
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

  // dlopen searches the loader path for names without a slash; a model is
  // always a file.
  std::string filePath = model.path;
  if (filePath.find('/') == std::string::npos)
    filePath = "./" + filePath;
  // A CUDA model loads its kernels while it is opened; start with no
  // failure recorded.
  mte::cuda::takeError();
  model.library = ::dlopen(filePath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!model.library) {
    // dlerror() starts with the file name, which the message already has.
    std::string reason = ::dlerror();
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
  model.abi = abi;
  model.target = abi->target;
  model.runLock = runLocks().acquire(model.library);
  if (model.target == "cuda") {
    model.cuda = std::make_unique<CudaModel>(model);
    if (mte_status status = model.cuda->open())
      return status;
  } else if (model.target != "host") {
    return fail(MTE_ERROR_NOT_A_MODEL, "'%s' has unknown target '%s'", path,
                abi->target);
  } else {
    model.hostIndexStatus.resize(3 * abi->num_index_checks);
  }
  return succeed();
}

void mte::runtime::unloadModel(mte_model *model) {
  // A run in progress on another thread holds the lock: wait for it before
  // freeing what it uses. (Calls that start after close returns use a freed
  // handle; Runtime.h says so.)
  if (std::shared_ptr<std::mutex> lock = model->runLock) {
    std::lock_guard<std::mutex> guard(*lock);
    model->cuda.reset();
  } else {
    model->cuda.reset();
  }
  if (model->runLock)
    runLocks().release(model->library, model->runLock);
  if (model->library)
    ::dlclose(model->library);
  delete model;
}
