//===- CudaModel.cpp - a CUDA model's state on the GPU --------------------===//

#include "CudaModel.h"

#include "Collectives.h"
#include "CudaDevice.h"
#include "DType.h"
#include "ExternalWeights.h"
#include "HostCommunicator.h"
#include "IndexChecks.h"
#include "Model.h"
#include "ModelState.h"
#include "NcclCommunicator.h"
#include "Status.h"

#include <cstdlib>
#include <cstring>

using namespace mte::runtime;

/// How many runDevice runs may be in flight before the next waits for the
/// oldest one's index status.
static constexpr size_t kIndexStatusSlots = 4;

CudaModel::CudaModel(mte_model &model) : model(model) {}

CudaModel::~CudaModel() {
  std::string ignored;
  if (device)
    device->makeCurrent(ignored);
  for (auto &[key, graph] : graphs)
    mte::cuda::destroyGraph(graph);
  mte::cuda::destroyStream(stream);
  mte::cuda::release(arena);
  for (auto [slot, event] : pendingIndexStatus)
    mte::cuda::destroyEvent(event);
  mte::cuda::release(deviceIndexStatus);
  for (int64_t *slot : indexStatusSlots)
    mte::cuda::releaseHost(slot);
  for (auto *list : {&deviceWeights, &deviceInputs, &deviceOutputs,
                     &deviceState[0], &deviceState[1]})
    for (void *pointer : *list)
      mte::cuda::release(pointer);
}

mte_status CudaModel::allocate(uint64_t bytes, const std::string &what,
                               void *&device) {
  std::string error;
  bool outOfMemory = false;
  device = mte::cuda::allocate(bytes, error, &outOfMemory);
  if (device)
    return MTE_OK;
  return fail(outOfMemory ? MTE_ERROR_OUT_OF_MEMORY : MTE_ERROR_DEVICE,
              "'%s': cannot allocate %s of %llu bytes on the GPU: %s",
              model.path.c_str(), what.c_str(),
              static_cast<unsigned long long>(bytes), error.c_str());
}

mte_status CudaModel::open() {
  const char *path = model.path.c_str();
  const mte_model_abi *abi = model.abi;
  // The model's kernels were loaded when the library was; take what that
  // recorded now, so that it never surfaces in another model's call.
  std::string loadError = mte::cuda::takeError();
  std::string error;
  device = mte::cuda::Device::get(model.device, error);
  if (!device || !device->makeCurrent(error)) {
    // "... (the driver sees 1); device 1 is LOCAL_RANK's"
    if (!model.deviceSource.empty())
      error += "; device " + std::to_string(model.device) + " is " +
               model.deviceSource + "'s";
    return fail(MTE_ERROR_DEVICE, "'%s' is a CUDA model, but %s", path,
                error.c_str());
  }
  if (!device->supportsArch(abi->gpu_arch, error))
    return fail(MTE_ERROR_DEVICE, "'%s': %s", path, error.c_str());
  if (!loadError.empty())
    return fail(MTE_ERROR_DEVICE, "'%s': cannot load its kernels: %s", path,
                loadError.c_str());
  if (abi->num_weights && !abi->weights)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: %u weights but no weight "
                "array",
                path, abi->num_weights);
  ExternalWeights externalWeights(model.path);
  std::vector<char> external;
  // A pipeline-parallel model's rank holds only its stage's weights (the
  // grid's first axis is the pipeline's).
  int64_t ranksPerStage = 1;
  for (size_t axis = 1; axis < model.gridShape.size(); ++axis)
    ranksPerStage *= model.gridShape[axis];
  uint64_t stage = static_cast<uint64_t>(model.rank / ranksPerStage);
  for (uint32_t i = 0; i < abi->num_weights; ++i) {
    const mte_weight_info &weight = abi->weights[i];
    if (weight.pipeline_stage) {
      if (model.gridShape.empty() ||
          weight.pipeline_stage > static_cast<uint64_t>(model.gridShape[0]))
        return fail(MTE_ERROR_NOT_A_MODEL,
                    "'%s' has a malformed model table: weight %u belongs to "
                    "pipeline stage %u, which the grid %s does not have",
                    path, i, weight.pipeline_stage - 1,
                    formatShape(static_cast<int32_t>(model.gridShape.size()),
                                model.gridShape.data())
                        .c_str());
      if (weight.pipeline_stage != stage + 1) {
        deviceWeights.push_back(nullptr);
        continue;
      }
    }
    // A sharded model's rank holds only its part of a sliced weight: cut
    // from the library's copy, or read alone from an external file.
    mte::WeightPart part;
    if (weight.slice_parts > 1)
      if (mte_status status = weightPart(weight, i, part))
        return status;
    const void *data = weight.data;
    uint64_t deviceBytes = weight.num_bytes / part.parts;
    if (!data) {
      if (mte_status status = externalWeights.build(weight, i, part, external))
        return status;
      data = external.data();
    } else if (part.parts > 1) {
      uint64_t chunk = weight.num_bytes / part.sliceOuter,
               bytes = chunk / part.parts;
      external.resize(deviceBytes);
      const char *from = static_cast<const char *>(data) + part.group * bytes;
      for (uint64_t c = 0; c < part.sliceOuter; ++c)
        std::memcpy(external.data() + c * bytes, from + c * chunk, bytes);
      data = external.data();
    }
    void *device = nullptr;
    if (mte_status status =
            allocate(deviceBytes, "weight " + std::to_string(i), device))
      return status;
    deviceWeights.push_back(device);
    if (!mte::cuda::copyToDevice(device, data, deviceBytes, error))
      return fail(MTE_ERROR_DEVICE, "'%s': cannot upload weight %u: %s", path,
                  i, error.c_str());
  }
  stream = mte::cuda::createStream(error);
  if (!stream)
    return fail(MTE_ERROR_DEVICE, "'%s': %s", path, error.c_str());
  if (const char *graphs = std::getenv("MTE_CUDA_GRAPHS"))
    useGraph = std::strcmp(graphs, "0") != 0;
  for (auto [descs, buffers] : {std::pair(&model.inputs, &deviceInputs),
                                std::pair(&model.outputs, &deviceOutputs)})
    for (const TensorDesc &desc : *descs) {
      void *device = nullptr;
      if (mte_status status =
              allocate(desc.numBytes, "'" + desc.name + "'", device))
        return status;
      buffers->push_back(device);
    }
  std::vector<char> initial;
  for (const StateDesc &state : model.states) {
    for (int buffer = 0; buffer < 2; ++buffer) {
      void *device = nullptr;
      if (mte_status status = allocate(state.tensor.numBytes,
                                       "state '" + state.tensor.name + "'",
                                       device))
        return status;
      deviceState[buffer].push_back(device);
    }
    initial.resize(state.tensor.numBytes);
    copyInitialState(state, initial.data());
    if (!mte::cuda::copyToDevice(deviceState[model.currentState].back(),
                                 initial.data(), initial.size(), error))
      return fail(MTE_ERROR_DEVICE, "'%s': cannot upload state '%s': %s", path,
                  state.tensor.name.c_str(), error.c_str());
  }
  if (abi->num_index_checks) {
    size_t bytes = indexStatusBytes(abi);
    if (mte_status status =
            allocate(bytes, "its index status", deviceIndexStatus))
      return status;
    for (size_t i = 0; i < kIndexStatusSlots + 1; ++i) {
      void *slot = mte::cuda::allocateHost(bytes, error);
      if (!slot)
        return fail(MTE_ERROR_DEVICE, "'%s': %s", path, error.c_str());
      indexStatusSlots.push_back(static_cast<int64_t *>(slot));
    }
  }
  if (abi->arena_bytes)
    if (mte_status status =
            allocate(abi->arena_bytes, "its activation arena", arena))
      return status;
  if (model.gridShape.empty())
    return MTE_OK;
  return NcclCommunicator::open(model, *device, nccl);
}

mte_status CudaModel::weightPart(const mte_weight_info &weight,
                                 uint32_t index, mte::WeightPart &part) {
  const char *path = model.path.c_str();
  uint64_t outer = weight.slice_outer, parts = weight.slice_parts;
  uint32_t allAxes = model.gridShape.size() >= 32
                         ? ~0u
                         : (1u << model.gridShape.size()) - 1;
  if (outer == 0 || weight.num_bytes % (outer * parts) != 0 ||
      (weight.slice_grid_axes & ~allAxes) != 0 ||
      gridGroupSize(model.gridShape, weight.slice_grid_axes) !=
          static_cast<int64_t>(parts))
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: weight %u is cut into %u "
                "parts of %llu chunks over grid axes 0x%x, which do not fit "
                "its %llu bytes and the grid %s",
                path, index, weight.slice_parts,
                static_cast<unsigned long long>(outer), weight.slice_grid_axes,
                static_cast<unsigned long long>(weight.num_bytes),
                formatGrid(model.gridShape).c_str());
  size_t group;
  gridGroup(model.gridShape, model.rank, weight.slice_grid_axes, group);
  part = {outer, parts, group};
  return MTE_OK;
}

mte_status CudaModel::checkPendingIndexStatus(size_t keep) {
  auto &pending = pendingIndexStatus;
  while (!pending.empty()) {
    auto [slot, event] = pending.front();
    if (!mte::cuda::eventDone(event)) {
      if (pending.size() <= keep)
        break;
      std::string error;
      if (!mte::cuda::waitForEvent(event, error))
        return fail(MTE_ERROR_DEVICE, "'%s': %s", model.path.c_str(),
                    error.c_str());
    }
    mte::cuda::destroyEvent(event);
    pending.pop_front();
    if (mte_status status =
            checkIndexStatus(model.path.c_str(), model.abi, slot,
                             " (an earlier mte_model_run_device run)"))
      return status;
  }
  return MTE_OK;
}

void *&CudaModel::graphFor(const GraphKey &key) {
  for (auto it = graphs.begin(); it != graphs.end(); ++it)
    if (it->first == key) {
      graphs.splice(graphs.begin(), graphs, it);
      return graphs.front().second;
    }
  if (graphs.size() == kMaxGraphs) {
    mte::cuda::destroyGraph(graphs.back().second);
    graphs.pop_back();
  }
  graphs.emplace_front(key, nullptr);
  return graphs.front().second;
}

int32_t CudaModel::enqueueForward(void *const *inputs, void *const *outputs) {
  mte::cuda::setStream(stream);
  // The model's collectives (Collectives.h) act for it, on this stream.
  CollectiveScope collectives(model);
  unsigned current = model.currentState;
  GraphKey key(inputs, inputs + model.inputs.size());
  key.insert(key.end(), outputs, outputs + model.outputs.size());
  key.push_back(deviceState[current].empty() ? nullptr
                                             : deviceState[current].front());
  void *&graph = graphFor(key);
  auto forward = [&] {
    return model.abi->run(inputs, outputs, deviceWeights.data(), arena,
                          static_cast<int64_t *>(deviceIndexStatus),
                          deviceState[current].data(),
                          deviceState[current ^ 1].data());
  };
  int32_t result = 0;
  // A graph's stream-ordered allocations happen at launch: its failure is
  // recorded like the eager entry points' (running out of memory included).
  auto launchGraph = [&] {
    std::string launchError;
    bool outOfMemory = false;
    if (!mte::cuda::launchGraph(graph, stream, launchError, &outOfMemory))
      mte::cuda::recordError(launchError, outOfMemory);
  };
  if (graph) {
    launchGraph();
  } else if (useGraph && runs > 0) {
    // Capture once; if the forward cannot be captured, run it eagerly from
    // now on (the outputs of this run are computed either way).
    std::string captureError;
    if (mte::cuda::beginCapture(stream, captureError)) {
      result = forward();
      graph = mte::cuda::endCapture(stream, captureError);
    }
    std::string capturedError = mte::cuda::takeError();
    if (!graph || !capturedError.empty()) {
      mte::cuda::destroyGraph(graph);
      graph = nullptr;
      useGraph = false;
      result = forward();
    } else {
      launchGraph();
    }
  } else {
    result = forward();
  }
  ++runs;
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

namespace {
/// What a run holds from start to end: the library's lock, and the model's
/// device as the calling thread's.
class RunScope {
public:
  RunScope(std::mutex &runLock, const mte::cuda::Device &device)
      : guard(runLock), scope(device.ordinal()) {}

private:
  std::lock_guard<std::mutex> guard;
  mte::cuda::DeviceScope scope;
};
} // namespace

mte_status CudaModel::makeDeviceCurrent() {
  std::string error;
  if (!device->makeCurrent(error))
    return fail(MTE_ERROR_DEVICE, "'%s': %s", model.path.c_str(),
                error.c_str());
  return MTE_OK;
}

mte_status CudaModel::run(const void *const *inputs, void *const *outputs) {
  RunScope scope(*model.runLock, *device);
  if (mte_status status = makeDeviceCurrent())
    return status;
  const char *path = model.path.c_str();
  std::string error;
  // This run waits for the GPU anyway: report earlier runs first.
  if (mte_status status = checkPendingIndexStatus(0))
    return status;
  for (size_t i = 0; i < model.inputs.size(); ++i)
    if (!mte::cuda::copyToDevice(deviceInputs[i], inputs[i],
                                 model.inputs[i].numBytes, error))
      return fail(MTE_ERROR_DEVICE, "'%s': input '%s': %s", path,
                  model.inputs[i].name.c_str(), error.c_str());
  int32_t result = enqueueForward(deviceInputs.data(), deviceOutputs.data());
  if (mte_status status = checkForward(path, result, error)) {
    // Let what the failed forward enqueued before it failed finish before
    // the caller reuses the model.
    std::string ignored;
    mte::cuda::synchronize(ignored);
    return status;
  }
  // The statuses come down with the forward, in the same wait.
  int64_t *indexStatus =
      indexStatusSlots.empty() ? nullptr : indexStatusSlots.front();
  if (indexStatus &&
      !mte::cuda::copyOnDevice(indexStatus, deviceIndexStatus,
                               indexStatusBytes(model.abi), stream, error))
    return fail(MTE_ERROR_DEVICE, "'%s': index status: %s", path,
                error.c_str());
  if (!mte::cuda::synchronize(error))
    return fail(MTE_ERROR_RUN_FAILED, "'%s' failed to run on the GPU: %s", path,
                error.c_str());
  if (indexStatus)
    if (mte_status status = checkIndexStatus(path, model.abi, indexStatus))
      return status;
  advanceState(model);
  for (size_t i = 0; i < model.outputs.size(); ++i)
    if (!mte::cuda::copyToHost(outputs[i], deviceOutputs[i],
                               model.outputs[i].numBytes, error))
      return fail(MTE_ERROR_DEVICE, "'%s': output '%s': %s", path,
                  model.outputs[i].name.c_str(), error.c_str());
  return succeed();
}

mte_status CudaModel::runDevice(const void *const *inputs, void *const *outputs,
                                void *callerStream) {
  RunScope scope(*model.runLock, *device);
  if (mte_status status = makeDeviceCurrent())
    return status;
  const char *path = model.path.c_str();
  std::string error;
  // Report the earlier runs that have finished, and keep a slot free for
  // this one's statuses.
  if (mte_status status = checkPendingIndexStatus(kIndexStatusSlots - 1))
    return status;
  // The caller's stream -> the model's stream -> the caller's stream.
  bool ok = mte::cuda::orderStreams(callerStream, stream, error);
  // The forward reads and writes the caller's buffers, unless an output
  // overlaps an input (the forward may write it before it has read the
  // input): then the inputs go through the model's own buffers.
  bool staged = false;
  for (size_t i = 0; i < model.outputs.size(); ++i)
    for (size_t j = 0; j < model.inputs.size(); ++j) {
      auto out = reinterpret_cast<uintptr_t>(outputs[i]);
      auto in = reinterpret_cast<uintptr_t>(inputs[j]);
      staged |= out < in + model.inputs[j].numBytes &&
                in < out + model.outputs[i].numBytes;
    }
  for (size_t i = 0; ok && staged && i < model.inputs.size(); ++i)
    ok = mte::cuda::copyOnDevice(deviceInputs[i], inputs[i],
                                 model.inputs[i].numBytes, stream, error);
  int32_t result =
      ok ? enqueueForward(staged ? deviceInputs.data()
                                 : const_cast<void *const *>(inputs),
                          outputs)
         : 0;
  if (mte_status status = checkForward(path, result, error))
    return status;
  if (ok && !indexStatusSlots.empty()) {
    // Slot 0 is the synchronous runs'; take one no pending run holds.
    int64_t *slot = nullptr;
    for (size_t i = 1; !slot && i < indexStatusSlots.size(); ++i) {
      slot = indexStatusSlots[i];
      for (auto [held, event] : pendingIndexStatus)
        if (held == slot)
          slot = nullptr;
    }
    ok = mte::cuda::copyOnDevice(slot, deviceIndexStatus,
                                 indexStatusBytes(model.abi), stream, error);
    void *event = ok ? mte::cuda::recordEvent(stream, error) : nullptr;
    if (event)
      pendingIndexStatus.push_back({slot, event});
    ok = event != nullptr;
  }
  if (ok)
    ok = mte::cuda::orderStreams(stream, callerStream, error);
  if (!ok)
    return fail(MTE_ERROR_RUN_FAILED, "'%s' failed to run on the GPU: %s", path,
                error.c_str());
  // The forward is enqueued: the runs after it read what it writes.
  advanceState(model);
  return succeed();
}

mte_status CudaModel::copyState(size_t index, void *to, const void *from,
                                bool upload) {
  RunScope scope(*model.runLock, *device);
  if (mte_status status = makeDeviceCurrent())
    return status;
  const StateDesc &state = model.states[index];
  void *current = deviceState[model.currentState][index];
  std::string error;
  // The model's stream holds every run enqueued so far, runDevice's too.
  mte::cuda::setStream(stream);
  bool ok = mte::cuda::synchronize(error) &&
            (upload ? mte::cuda::copyToDevice(current, from,
                                              state.tensor.numBytes, error)
                    : mte::cuda::copyToHost(to, current, state.tensor.numBytes,
                                            error));
  if (!ok)
    return fail(MTE_ERROR_DEVICE, "'%s': cannot %s state '%s': %s",
                model.path.c_str(), upload ? "write" : "read",
                state.tensor.name.c_str(), error.c_str());
  return succeed();
}
