//===- CudaModel.h - a CUDA model's state on the GPU ------------*- C++ -*-===//
//
// Internal to libmte_runtime. An open CUDA model owns device copies of its
// weights, staging buffers for runs on host buffers, the activation arena,
// a stream, the forward captured as a CUDA graph, the buffers its index
// statuses come back through and, for a sharded model, the ranks' NCCL
// communicator. It runs on host buffers (mte_model_run*) and on the
// caller's device buffers and stream (mte_model_run_device).
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_CUDAMODEL_H
#define MTE_LIB_RUNTIME_CUDAMODEL_H

#include "mte-c/ModelABI.h"
#include "mte-c/Runtime.h"
#include "mte/Support/WeightPieces.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mte::cuda {
class Device;
} // namespace mte::cuda

namespace mte::runtime {

class NcclCommunicator;

class CudaModel {
public:
  /// The GPU side of `model`, whose description is loaded; empty until
  /// open().
  explicit CudaModel(mte_model &model);
  CudaModel(const CudaModel &) = delete;
  CudaModel &operator=(const CudaModel &) = delete;
  /// Frees the device buffers, the stream and the graph, in the device's
  /// context whichever thread closes the model.
  ~CudaModel();

  /// Opens the model's device (mte_model::device), uploads its weights,
  /// allocates its staging buffers and its activation arena and, for a
  /// sharded model, makes its NCCL communicator (waiting for every rank).
  mte_status open();

  /// The NCCL communicator of a sharded model (null for an unsharded one),
  /// which its collectives run on during a forward.
  NcclCommunicator *communicator() const { return nccl.get(); }

  /// Runs the model on host buffers: inputs up, the forward on the model's
  /// stream, outputs down. Takes the library's lock; the forward's work goes
  /// to the model's device.
  mte_status run(const void *const *inputs, void *const *outputs);

  /// mte_model_run_device once its arguments are checked: the forward on
  /// device buffers, ordered on `stream`. Takes the library's lock.
  mte_status runDevice(const void *const *inputs, void *const *outputs,
                       void *stream);

  /// Copies the current value of state `index` to the host buffer `data`,
  /// once the runs enqueued before have finished. Takes the library's lock.
  mte_status getState(size_t index, void *data) {
    return copyState(index, data, nullptr, /*upload=*/false);
  }

  /// Makes `data` (host memory, already checked) the current value of
  /// state `index`, for the runs enqueued after. Takes the library's lock.
  mte_status setState(size_t index, const void *data) {
    return copyState(index, nullptr, data, /*upload=*/true);
  }

private:
  /// getState (`to`) or setState (`from`, with `upload`), once the runs
  /// enqueued before have finished.
  mte_status copyState(size_t index, void *to, const void *from, bool upload);

  /// Makes the model's device current on this thread for a run; a failure
  /// is MTE_ERROR_DEVICE.
  mte_status makeDeviceCurrent();

  /// Enqueues the forward on the model's stream, over `inputs` and
  /// `outputs` (device buffers: the staging ones, or runDevice's caller's):
  /// eagerly on the first run, after that captured as a CUDA graph for
  /// these buffers and the current state (if capture works) and replayed
  /// whenever they come again. Returns the run function's result; a driver
  /// failure is recorded (mte::cuda::takeError).
  int32_t enqueueForward(void *const *inputs, void *const *outputs);

  /// The buffers a captured forward holds: the inputs, the outputs and the
  /// current state buffer.
  using GraphKey = std::vector<void *>;

  /// The graph slot for `key`, most recently used first; a new key takes
  /// an empty slot, evicting the least recently used graph beyond
  /// kMaxGraphs.
  void *&graphFor(const GraphKey &key);

  /// Which part of weight `index` (sliced: mte_weight_info::slice_parts >
  /// 1) this rank holds, after checking the slices fit the weight and grid.
  mte_status weightPart(const mte_weight_info &weight, uint32_t index,
                        mte::WeightPart &part);
  /// Reports the index statuses of earlier runDevice runs, oldest first,
  /// that the GPU has finished; waits for those still in flight, or
  /// (`keep`) for all but that many.
  mte_status checkPendingIndexStatus(size_t keep);

  /// Device memory of `bytes` for `what`, or the error: the device running
  /// out of memory is MTE_ERROR_OUT_OF_MEMORY (naming the size), any other
  /// failure MTE_ERROR_DEVICE.
  mte_status allocate(uint64_t bytes, const std::string &what, void *&device);

  mte_model &model;
  /// The device everything below lives on; null until open() finds it.
  mte::cuda::Device *device = nullptr;
  /// Device copies of the weights, and device buffers the host-buffer API
  /// stages inputs and outputs through.
  std::vector<void *> deviceWeights, deviceInputs, deviceOutputs;
  /// The activation arena: allocated once, so its address, which the
  /// captured graph holds, never changes.
  void *arena = nullptr;
  /// The two device buffers of every state (mte_model::currentState says
  /// which one is current).
  std::vector<void *> deviceState[2];
  /// The model's stream, and the forward captured as CUDA graphs from the
  /// second run on (the first one warms up cuBLASLt's plans): one for each
  /// set of buffers it ran on (GraphKey), the kMaxGraphs most recent.
  static constexpr size_t kMaxGraphs = 8;
  void *stream = nullptr;
  std::list<std::pair<GraphKey, void *>> graphs;
  bool useGraph = true;
  uint64_t runs = 0;
  /// The statuses of the model's index checks (ModelABI.h), 3 per check:
  /// the device buffer the forward writes (`deviceIndexStatus`), copied on
  /// the stream after each run into page-locked slots. Synchronous runs use
  /// slot 0; runDevice runs the others in turn, each slot `pending` until
  /// the event recorded after its copy completes and a later call checks
  /// it.
  std::vector<int64_t *> indexStatusSlots;
  void *deviceIndexStatus = nullptr;
  std::deque<std::pair<int64_t *, void *>> pendingIndexStatus;
  /// Destroyed after the graphs, which hold its collectives.
  std::unique_ptr<NcclCommunicator> nccl;
};

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_CUDAMODEL_H
