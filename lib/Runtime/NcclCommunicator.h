//===- NcclCommunicator.h - collectives of sharded CUDA models --*- C++ -*-===//
//
// Internal to libmte_runtime. The ranks of a sharded CUDA model are
// processes, one per GPU, whose collectives run on NCCL: opening the model
// makes the world communicator on its device from a unique id (NCCL's own
// with $NCCL_COMM_ID, the caller's, or one rank 0 makes and sends to the
// others through the host communicator), and each group of grid axes a
// collective names gets a communicator of its own, split from the world's
// on first use, its ranks in the host communicator's order (gridGroup).
// The collectives are enqueued on the run's stream without waiting, so a
// CUDA graph can capture them.
//
// ncclCommSplit is a collective of the whole world, which every rank must
// call in the same order; the ranks of a pipeline-parallel model run
// different programs (a stage receives before its first tensor-parallel
// all-reduce, the stage before it after), so the first group a rank needs
// makes every group of the grid, in one order.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_NCCLCOMMUNICATOR_H
#define MTE_LIB_RUNTIME_NCCLCOMMUNICATOR_H

#include "Nccl.h"

#include "mte-c/Runtime.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mte::cuda {
class Device;
} // namespace mte::cuda

namespace mte::runtime {

struct CollectiveCall;

class NcclCommunicator {
public:
  /// Makes the world communicator of `model`, a sharded CUDA model whose
  /// `device` is open and current, as Runtime.h says
  /// (mte_open_options::nccl_unique_id): blocks until every rank has. The
  /// status of the failure otherwise: NCCL missing is MTE_ERROR_DEVICE,
  /// ranks that do not meet MTE_ERROR_IO.
  static mte_status open(mte_model &model, mte::cuda::Device &device,
                         std::unique_ptr<NcclCommunicator> &opened);

  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;
  /// Destroys the communicators (aborts them once one failed). A CUDA
  /// graph that holds their collectives must be destroyed first: NCCL
  /// waits for it.
  ~NcclCommunicator();

  /// Enqueues `call`, checked (KernelABI.h), on `stream` over the device
  /// buffers `send` and `recv`, among the ranks of the group of
  /// `call.gridAxes`. False with the reason in `error`; after a failure,
  /// every later call fails at once.
  bool run(const void *send, void *recv, const CollectiveCall &call,
           void *stream, std::string &error);

  /// Enqueues a send of `call` (a Send call: `call.op` the receiver's
  /// index in the group) from `buffer`, or when `receiving`, a receive
  /// into `buffer` from the rank of index `peer` in the group. False with
  /// the reason in `error`, as run.
  bool pointToPoint(bool receiving, void *buffer, const CollectiveCall &call,
                    int32_t peer, void *stream, std::string &error);

private:
  NcclCommunicator(const mte::nccl::Library &library, mte::cuda::Device &device,
                   int32_t rank, const std::vector<int64_t> &grid)
      : library(library), device(device), rank(rank), grid(grid) {}

  /// The communicator of this rank's group for `gridAxes`: the world's
  /// when the group is the world, else split from it (on the first group
  /// any call needs, every group at once); null with the reason in `error`.
  mte::nccl::Comm groupCommunicator(uint32_t gridAxes, std::string &error);

  /// Checks the world for an error NCCL found in the background and finds
  /// the communicator of `call`'s group; null with the reason in `error`
  /// (and every later call failing).
  mte::nccl::Comm prepare(const CollectiveCall &call, std::string &error);

  /// True when NCCL's `what` on `comm` returned success; else records
  /// its failure in `error` and fails every later call.
  bool finish(mte::nccl::Result result, const char *what, mte::nccl::Comm comm,
              std::string &error);

  const mte::nccl::Library &library;
  mte::cuda::Device &device;
  int32_t rank;
  std::vector<int64_t> grid;
  mte::nccl::Comm world = nullptr;
  /// The split communicators, by the grid axes of more than one rank that
  /// their groups span.
  std::map<uint32_t, mte::nccl::Comm> groups;
  /// The first failure, or empty.
  std::string failure;
};

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_NCCLCOMMUNICATOR_H
