//===- Runtime.cpp - libmte_runtime's C API -------------------------------===//
//
// Implements include/mte-c/Runtime.h: the argument checks of every entry
// point, over the model handle (Model.h) that ModelLoader.cpp fills in. The
// library is built without exceptions in mind: no function here throws,
// and failing to allocate a few bytes of metadata terminates the process as
// it does in LLVM. Output buffers and device memory, which can be large,
// report MTE_ERROR_OUT_OF_MEMORY.
//
//===----------------------------------------------------------------------===//

#include "mte-c/Runtime.h"

#include "CommOptions.h"
#include "DType.h"
#include "Model.h"
#include "ModelLoader.h"
#include "ModelState.h"
#include "Nccl.h"
#include "Status.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace mte::runtime;

#define MTE_STRINGIFY_IMPL(x) #x
#define MTE_STRINGIFY(x) MTE_STRINGIFY_IMPL(x)

const char *mte_runtime_version(void) {
  return MTE_STRINGIFY(MTE_RUNTIME_VERSION_MAJOR) "." MTE_STRINGIFY(
      MTE_RUNTIME_VERSION_MINOR) "." MTE_STRINGIFY(MTE_RUNTIME_VERSION_PATCH);
}

uint32_t mte_runtime_model_abi_version(void) { return MTE_MODEL_ABI_VERSION; }

const char *mte_status_name(mte_status status) {
  // C callers may pass any int. Reading one outside the enumerators' range
  // as an mte_status is undefined in C++ (even to pass it on), so take the
  // parameter's bytes.
  static_assert(sizeof(mte_status) == sizeof(int), "mte_status is an int");
  int value;
  std::memcpy(&value, &status, sizeof(value));
  return statusName(value);
}

const char *mte_last_error(void) { return lastError(); }

const char *mte_dtype_name(int32_t dtype) {
  const DTypeInfo *info = lookupDType(dtype);
  return info ? info->name : nullptr;
}

size_t mte_dtype_size(int32_t dtype) {
  const DTypeInfo *info = lookupDType(dtype);
  return info ? info->size : 0;
}

//===----------------------------------------------------------------------===//
// Opening and describing models
//===----------------------------------------------------------------------===//

/// The size of the first version of mte_open_options, which ends with
/// `device`.
static constexpr size_t kFirstOpenOptionsSize =
    offsetof(mte_open_options, device) + sizeof(int32_t);

/// mte_model_open_with_options, for the entry point `function`.
static mte_status openModel(const char *function, const char *path,
                            const mte_open_options *options,
                            mte_model **model) {
  if (!model)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "%s: model is null", function);
  *model = nullptr;
  if (!path)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "%s: path is null", function);
  int32_t device = MTE_DEVICE_DEFAULT;
  int32_t rank = MTE_RANK_DEFAULT;
  int32_t worldSize = MTE_WORLD_SIZE_DEFAULT;
  const char *commId = nullptr;
  const void *ncclUniqueId = nullptr;
  if (options) {
    if (options->struct_size < kFirstOpenOptionsSize)
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "%s: options->struct_size is %u, smaller than the first "
                  "mte_open_options (%zu bytes); set it to "
                  "sizeof(mte_open_options)",
                  function, options->struct_size, kFirstOpenOptionsSize);
    if (options->struct_size > sizeof(mte_open_options))
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "%s: options->struct_size is %u, larger than this "
                  "runtime's mte_open_options (%zu bytes): the program was "
                  "built with a newer Runtime.h than libmte_runtime %s",
                  function, options->struct_size, sizeof(mte_open_options),
                  mte_runtime_version());
    device = options->device;
    // Fields past struct_size keep their defaults.
    auto given = [&](size_t offset, size_t size) {
      return options->struct_size >= offset + size;
    };
    if (given(offsetof(mte_open_options, rank), sizeof(options->rank)))
      rank = options->rank;
    if (given(offsetof(mte_open_options, world_size),
              sizeof(options->world_size)))
      worldSize = options->world_size;
    if (given(offsetof(mte_open_options, comm_id), sizeof(options->comm_id)))
      commId = options->comm_id;
    if (given(offsetof(mte_open_options, nccl_unique_id),
              sizeof(options->nccl_unique_id)))
      ncclUniqueId = options->nccl_unique_id;
  }
  if (device < MTE_DEVICE_DEFAULT)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "%s: device %d is not a device ordinal (0, 1, ... or "
                "MTE_DEVICE_DEFAULT, -1)",
                function, device);
  RankPlacement placement;
  if (mte_status status = resolveRanks(function, rank, worldSize, placement))
    return status;
  if (placement.rank >= placement.worldSize)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "'%s': rank %d%s is outside a world of %d rank%s%s", path,
                placement.rank, placement.rankSource.c_str(),
                placement.worldSize, placement.worldSize == 1 ? "" : "s",
                placement.worldSource.c_str());
  std::string resolvedCommId;
  if (mte_status status = resolveCommId(function, commId, resolvedCommId))
    return status;
  auto loaded = std::make_unique<mte_model>();
  if (mte_status status = resolveDevice(function, device, loaded->device,
                                        loaded->deviceSource))
    return status;
  loaded->path = path;
  loaded->commId = std::move(resolvedCommId);
  if (ncclUniqueId) {
    const char *bytes = static_cast<const char *>(ncclUniqueId);
    loaded->ncclUniqueId.assign(bytes, bytes + MTE_NCCL_UNIQUE_ID_BYTES);
  }
  loaded->rank = placement.rank;
  loaded->worldSize = placement.worldSize;
  if (mte_status status = loadModel(*loaded, placement)) {
    unloadModel(loaded.release());
    return status;
  }
  *model = loaded.release();
  return MTE_OK;
}

mte_status mte_model_open(const char *path, mte_model **model) {
  return openModel("mte_model_open", path, nullptr, model);
}

mte_status mte_model_open_with_options(const char *path,
                                       const mte_open_options *options,
                                       mte_model **model) {
  return openModel("mte_model_open_with_options", path, options, model);
}

mte_status mte_nccl_get_unique_id(void *id) {
  if (!id)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "mte_nccl_get_unique_id: id is null");
  static_assert(MTE_NCCL_UNIQUE_ID_BYTES == sizeof(mte::nccl::UniqueId));
  std::string error;
  const mte::nccl::Library *library = mte::nccl::openLibrary(error);
  if (!library)
    return fail(MTE_ERROR_DEVICE, "mte_nccl_get_unique_id: %s", error.c_str());
  mte::nccl::UniqueId unique;
  if (!mte::nccl::getUniqueId(*library, unique, error))
    return fail(MTE_ERROR_IO, "mte_nccl_get_unique_id: %s", error.c_str());
  std::memcpy(id, &unique, sizeof(unique));
  return succeed();
}

void mte_model_close(mte_model *model) {
  if (model)
    unloadModel(model);
}

const char *mte_model_path(const mte_model *model) {
  return model ? model->path.c_str() : nullptr;
}

const char *mte_model_target(const mte_model *model) {
  return model ? model->target.c_str() : nullptr;
}

int32_t mte_model_rank(const mte_model *model) {
  return model ? model->rank : 0;
}

int32_t mte_model_world_size(const mte_model *model) {
  return model ? model->worldSize : 0;
}

size_t mte_model_num_grid_axes(const mte_model *model) {
  return model ? model->gridShape.size() : 0;
}

int64_t mte_model_grid_axis(const mte_model *model, size_t axis) {
  if (!model || axis >= model->gridShape.size())
    return 0;
  return model->gridShape[axis];
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
    return failUnknownName(*model, kind, name);
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

//===----------------------------------------------------------------------===//
// Model state
//===----------------------------------------------------------------------===//

size_t mte_model_num_states(const mte_model *model) {
  return model ? model->states.size() : 0;
}

const mte_tensor_info *mte_model_state(const mte_model *model, size_t index) {
  if (!model || index >= model->states.size())
    return nullptr;
  return &model->states[index].tensor.info;
}

int32_t mte_model_state_kind(const mte_model *model, size_t index) {
  if (!model || index >= model->states.size())
    return 0;
  return model->states[index].kind;
}

size_t mte_model_state_num_labels(const mte_model *model, size_t index) {
  if (!model || index >= model->states.size())
    return 0;
  return model->states[index].labels.size();
}

const char *mte_model_state_label(const mte_model *model, size_t index,
                                  size_t label) {
  if (!model || index >= model->states.size() ||
      label >= model->states[index].labels.size())
    return nullptr;
  return model->states[index].labels[label].c_str();
}

mte_status mte_model_find_state(const mte_model *model, const char *name,
                                size_t *index) {
  if (!model || !name || !index)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "mte_model_find_state: %s is null",
                !model ? "model" : !name ? "name" : "index");
  std::string known;
  for (size_t i = 0; i < model->states.size(); ++i) {
    const std::string &candidate = model->states[i].tensor.name;
    if (candidate == name) {
      *index = i;
      return succeed();
    }
    known += (known.empty() ? "'" : ", '") + candidate + "'";
  }
  return fail(MTE_ERROR_UNKNOWN_NAME, "'%s' has no state named '%s' (states: %s)",
              model->path.c_str(), name, known.empty() ? "none" : known.c_str());
}

/// Checks the arguments of a state access (`function` names it).
static mte_status checkStateAccess(const char *function,
                                   const mte_model *model, size_t index,
                                   const void *data, size_t numBytes) {
  if (!model)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "%s: model is null", function);
  if (index >= model->states.size())
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "%s: '%s' has %zu states, no state %zu", function,
                model->path.c_str(), model->states.size(), index);
  const TensorDesc &tensor = model->states[index].tensor;
  if (!data)
    return fail(MTE_ERROR_INVALID_ARGUMENT, "%s: the buffer is null",
                function);
  if (numBytes != tensor.numBytes)
    return fail(MTE_ERROR_SHAPE_MISMATCH,
                "'%s': state '%s' (%s %s) has %zu bytes, given %zu",
                model->path.c_str(), tensor.name.c_str(),
                formatDType(tensor.dtype).c_str(),
                formatShape(tensor.info.rank, tensor.info.shape).c_str(),
                tensor.numBytes, numBytes);
  return MTE_OK;
}

mte_status mte_model_get_state(mte_model *model, size_t index, void *data,
                               size_t num_bytes) {
  if (mte_status status = checkStateAccess("mte_model_get_state", model,
                                           index, data, num_bytes))
    return status;
  if (model->cuda)
    return model->cuda->getState(index, data);
  std::lock_guard<std::mutex> guard(*model->runLock);
  std::memcpy(data, model->hostState[model->currentState][index].data(),
              num_bytes);
  return succeed();
}

mte_status mte_model_set_state(mte_model *model, size_t index,
                               const void *data, size_t num_bytes) {
  if (mte_status status = checkStateAccess("mte_model_set_state", model,
                                           index, data, num_bytes))
    return status;
  if (mte_status status =
          checkStateValue(*model, model->states[index], data))
    return status;
  if (model->cuda)
    return model->cuda->setState(index, data);
  std::lock_guard<std::mutex> guard(*model->runLock);
  std::memcpy(model->hostState[model->currentState][index].data(), data,
              num_bytes);
  return succeed();
}

mte_status mte_model_reset_state(mte_model *model) {
  if (!model)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "mte_model_reset_state: model is null");
  std::vector<char> initial;
  for (size_t i = 0; i < model->states.size(); ++i) {
    const StateDesc &state = model->states[i];
    initial.resize(state.tensor.numBytes);
    copyInitialState(state, initial.data());
    if (model->cuda) {
      if (mte_status status = model->cuda->setState(i, initial.data()))
        return status;
      continue;
    }
    std::lock_guard<std::mutex> guard(*model->runLock);
    std::memcpy(model->hostState[model->currentState][i].data(),
                initial.data(), initial.size());
  }
  return succeed();
}

mte_status mte_model_freeze_state(mte_model *model, int frozen) {
  if (!model)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "mte_model_freeze_state: model is null");
  std::lock_guard<std::mutex> guard(*model->runLock);
  model->stateFrozen = frozen != 0;
  return succeed();
}

int mte_model_state_frozen(const mte_model *model) {
  return model && model->stateFrozen ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// Running models
//===----------------------------------------------------------------------===//

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
  if (mte_status status = checkPositionalRun("mte_model_run", model, num_inputs,
                                             inputs, num_outputs, outputs))
    return status;
  return runModel(*model, inputs, outputs);
}

mte_status mte_model_run_device(mte_model *model, size_t num_inputs,
                                const void *const *inputs, size_t num_outputs,
                                void *const *outputs, void *stream) {
  if (mte_status status =
          checkPositionalRun("mte_model_run_device", model, num_inputs, inputs,
                             num_outputs, outputs))
    return status;
  if (!model->cuda)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "'%s' is a host model; mte_model_run_device runs CUDA models",
                model->path.c_str());
  return model->cuda->runDevice(inputs, outputs, stream);
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

/// Allocates an output buffer of `numBytes`, 64-byte aligned; never returns
/// null for a successful zero-byte request.
static void *allocateBuffer(size_t numBytes) {
  void *data = nullptr;
  if (::posix_memalign(&data, 64, numBytes ? numBytes : 1) != 0)
    return nullptr;
  return data;
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
      return failUnknownName(*model, "input", tensor.name);
    if (inputBuffers[index])
      return fail(MTE_ERROR_INVALID_ARGUMENT, "'%s': input '%s' given twice",
                  path, tensor.name);
    if (mte_status status =
            checkTensor(*model, "input", model->inputs[index], tensor))
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
      return failUnknownName(*model, "output", tensor.name);
    if (requested[index])
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': output '%s' requested twice", path, tensor.name);
    if (tensor.data)
      if (mte_status status =
              checkTensor(*model, "output", model->outputs[index], tensor))
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
          runModel(*model, inputBuffers.data(), outputBuffers.data()))
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
