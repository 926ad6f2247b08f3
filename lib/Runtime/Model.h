//===- Model.h - the mte_model handle ---------------------------*- C++ -*-===//
//
// Internal to libmte_runtime: what a handle of Runtime.h holds, and the
// checks of tensors given to a run against the model's descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_MODEL_H
#define MTE_LIB_RUNTIME_MODEL_H

#include "CudaModel.h"
#include "HostCommunicator.h"

#include "mte-c/Runtime.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mte::runtime {

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

/// A model state (mte_state_info): its description, kind and labels, and
/// the initial value in the library (null: zeros).
struct StateDesc {
  TensorDesc tensor;
  int32_t kind = 0;
  std::vector<std::string> labels;
  const void *initial = nullptr;
};

} // namespace mte::runtime

struct mte_model {
  std::string path;
  std::string target;
  /// The CUDA device the model runs on (mte_open_options::device; 0 for
  /// host models), and the launcher's variable it came from (LOCAL_RANK)
  /// when the options left it to the default, else empty.
  int32_t device = 0;
  std::string deviceSource;
  void *library = nullptr;
  const mte_model_abi *abi = nullptr;
  /// Shared by every handle on `library` (ModelLoader.cpp).
  std::shared_ptr<std::mutex> runLock;
  std::vector<mte::runtime::TensorDesc> inputs;
  std::vector<mte::runtime::TensorDesc> outputs;
  std::vector<mte::runtime::StateDesc> states;
  /// Which of the two buffers of every state holds its current value (the
  /// other receives the next one), and whether runs keep it there.
  unsigned currentState = 0;
  bool stateFrozen = false;
  /// Host models: the two buffers of each state.
  std::vector<std::vector<char>> hostState[2];
  /// Host models: the statuses the forward writes for the model's index
  /// checks, 3 per check (ModelABI.h).
  std::vector<int64_t> hostIndexStatus;
  /// CUDA models: the model's device buffers, stream and graph; null for
  /// host models.
  std::unique_ptr<mte::runtime::CudaModel> cuda;
  /// This process's rank among `worldSize` (mte_open_options), and the
  /// name the ranks meet under (for a sharded model opened on several).
  int32_t rank = 0;
  int32_t worldSize = 1;
  std::string commId;
  /// The device grid of a sharded model (mte_model_abi::grid_shape); empty
  /// for an unsharded one.
  std::vector<int64_t> gridShape;
  /// Sharded host models: the ranks' communicator, which the model's
  /// collectives (KernelABI.h) use during its runs. (A sharded CUDA
  /// model's is NCCL's, which its CudaModel holds.)
  std::unique_ptr<mte::runtime::HostCommunicator> comm;
  /// Sharded CUDA models: the NCCL unique id of mte_open_options (its
  /// MTE_NCCL_UNIQUE_ID_BYTES bytes), or empty when none was given.
  std::string ncclUniqueId;
};

namespace mte::runtime {

/// Copies and checks the `count` descriptions at `infos`, of the model's
/// inputs, outputs or states (`kind`). Reports a malformed table as
/// MTE_ERROR_NOT_A_MODEL.
mte_status readTensorTable(const char *path, const char *kind,
                           const mte_tensor_info *infos, uint32_t count,
                           std::vector<TensorDesc> &descs);

/// Returns the index of the description called `name`, or -1.
ptrdiff_t findTensor(const std::vector<TensorDesc> &descs, const char *name);

/// Reports that `model` has no input or output (`kind`) called `name`.
mte_status failUnknownName(const mte_model &model, const char *kind,
                           const char *name);

/// Checks that `tensor`'s element type and shape are those of `desc`, the
/// model's `kind` ("input" or "output") of the same name.
mte_status checkTensor(const mte_model &model, const char *kind,
                       const TensorDesc &desc, const mte_tensor &tensor);

/// Runs `model` once on host buffers whose counts and pointers are
/// checked: a host model's run function under the library's lock, or a
/// CUDA model's forward through its staging buffers.
mte_status runModel(mte_model &model, const void *const *inputs,
                    void *const *outputs);

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_MODEL_H
