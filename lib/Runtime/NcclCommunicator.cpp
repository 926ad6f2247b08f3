//===- NcclCommunicator.cpp - collectives of sharded CUDA models ----------===//

#include "NcclCommunicator.h"

#include "CommOptions.h"
#include "CudaDevice.h"
#include "DType.h"
#include "HostCommunicator.h"
#include "Model.h"
#include "Status.h"

#include "mte-c/KernelABI.h"

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <cstring>

using namespace mte::runtime;
namespace nccl = mte::nccl;

/// The unique id rank 0 of `model`'s world makes, sent to every rank
/// through the host communicator of the model's id (the ranks of one
/// machine): they join it, rank 0 gets the id, an all-gather of the ranks'
/// 128 bytes hands everyone rank 0's, and they leave it. `where` starts a
/// message ("'m.so' (rank 1 of 2)").
static mte_status shareUniqueId(const mte_model &model,
                                const nccl::Library &library,
                                const std::string &where, nccl::UniqueId &id) {
  CommLimits limits;
  if (mte_status status = readCommLimits(model.path.c_str(), limits))
    return status;
  std::string error;
  std::unique_ptr<HostCommunicator> host = HostCommunicator::join(
      model.commId, model.rank, {model.worldSize}, limits, error);
  if (!host)
    return fail(MTE_ERROR_IO, "%s: %s", where.c_str(), error.c_str());
  nccl::UniqueId mine = {};
  if (model.rank == 0 && !nccl::getUniqueId(library, mine, error)) {
    host->fail(error); // the other ranks wait for rank 0's id
    return fail(MTE_ERROR_IO, "%s: %s", where.c_str(), error.c_str());
  }
  CollectiveCall call;
  call.kind = CollectiveCall::AllGather;
  call.dtype = MTE_DTYPE_U8;
  call.gridAxes = 1;
  call.count = sizeof(mine);
  std::vector<char> all(sizeof(mine) * static_cast<size_t>(model.worldSize));
  if (!host->run(&mine, all.data(), call, error))
    return fail(MTE_ERROR_IO, "%s: cannot share rank 0's NCCL unique id: %s",
                where.c_str(), error.c_str());
  std::memcpy(&id, all.data(), sizeof(id));
  return MTE_OK;
}

mte_status NcclCommunicator::open(mte_model &model, mte::cuda::Device &device,
                                  std::unique_ptr<NcclCommunicator> &opened) {
  std::string where = "'" + model.path + "' (rank " +
                      std::to_string(model.rank) + " of " +
                      std::to_string(model.worldSize) + ")";
  std::string error;
  const nccl::Library *library = nccl::openLibrary(error);
  if (!library)
    return fail(MTE_ERROR_DEVICE,
                "%s is a sharded CUDA model, whose collectives need NCCL: %s",
                where.c_str(), error.c_str());
  // Where the ranks' unique id comes from (Runtime.h,
  // mte_open_options::nccl_unique_id).
  nccl::UniqueId id = {};
  const char *ncclCommId = std::getenv("NCCL_COMM_ID");
  bool fromEnvironment = ncclCommId && *ncclCommId;
  if (!fromEnvironment && !model.ncclUniqueId.empty()) {
    std::memcpy(&id, model.ncclUniqueId.data(), sizeof(id));
  } else if (fromEnvironment || model.worldSize == 1) {
    // NCCL encodes $NCCL_COMM_ID, which rank 0 then listens on.
    if (!nccl::getUniqueId(*library, id, error))
      return fail(MTE_ERROR_IO, "%s: %s", where.c_str(), error.c_str());
  } else if (mte_status status = shareUniqueId(model, *library, where, id)) {
    return status;
  }
  opened.reset(
      new NcclCommunicator(*library, device, model.rank, model.gridShape));
  nccl::Config config = nccl::kDefaultConfig;
  config.blocking = 1;
  config.commName = model.commId.c_str();
  nccl::Result result = library->ncclCommInitRankConfig(
      &opened->world, model.worldSize, id, model.rank, &config);
  if (result == nccl::kSuccess)
    return MTE_OK;
  error = nccl::describe(*library, "ncclCommInitRankConfig", result, nullptr);
  opened->failure = error;
  return fail(result == nccl::kUnhandledCudaError ? MTE_ERROR_DEVICE
                                                  : MTE_ERROR_IO,
              "%s cannot make its NCCL communicator on CUDA device %d: %s",
              where.c_str(), device.ordinal(), error.c_str());
}

NcclCommunicator::~NcclCommunicator() {
  std::string ignored;
  device.makeCurrent(ignored);
  // A failed communicator may wait for ranks that are gone: abort it.
  auto release =
      failure.empty() ? library.ncclCommDestroy : library.ncclCommAbort;
  for (auto &[axes, comm] : groups)
    if (comm)
      release(comm);
  if (world)
    release(world);
}

nccl::Comm NcclCommunicator::groupCommunicator(uint32_t gridAxes,
                                               std::string &error) {
  // Axes of one rank change nothing: a group is known by the others.
  uint32_t spanned = 0, all = 0;
  for (size_t axis = 0; axis < grid.size(); ++axis)
    if (grid[axis] > 1) {
      all |= 1u << axis;
      spanned |= gridAxes & (1u << axis);
    }
  if (spanned == all)
    return world;
  if (groups.empty()) {
    // Every group of the grid (each set of its axes of more than one rank
    // but all of them), in the order of their axis masks, so that every
    // rank splits the world alike whichever group it needs first.
    for (uint32_t axes = 1; axes < all; ++axes) {
      if (axes & ~all)
        continue;
      // The ranks of one group share a color, their lowest rank, and are
      // keyed by their index in it.
      size_t index;
      std::vector<int32_t> members = gridGroup(grid, rank, axes, index);
      nccl::Comm &comm = groups[axes];
      nccl::Result result = library.ncclCommSplit(
          world, members.front(), static_cast<int>(index), &comm, nullptr);
      if (result == nccl::kSuccess && comm)
        continue;
      char mask[16];
      std::snprintf(mask, sizeof(mask), "0x%x", axes);
      error = std::string("cannot make the communicator of grid axes ") +
              mask + ": " +
              nccl::describe(library, "ncclCommSplit", result, world);
      return nullptr;
    }
  }
  auto it = groups.find(spanned);
  if (it != groups.end())
    return it->second;
  error = "no communicator was made for grid axes of this group";
  return nullptr;
}

/// The NCCL type of a reducible mte dtype, or -1.
static int ncclType(int32_t dtype) {
  switch (dtype) {
  case MTE_DTYPE_F32:
    return nccl::kFloat32;
  case MTE_DTYPE_F64:
    return nccl::kFloat64;
  case MTE_DTYPE_F16:
    return nccl::kFloat16;
  case MTE_DTYPE_BF16:
    return nccl::kBfloat16;
  case MTE_DTYPE_I32:
    return nccl::kInt32;
  case MTE_DTYPE_I64:
    return nccl::kInt64;
  default:
    return -1;
  }
}

nccl::Comm NcclCommunicator::prepare(const CollectiveCall &call,
                                    std::string &error) {
  if (!failure.empty()) {
    error = "the NCCL communicator failed before: " + failure;
    return nullptr;
  }
  // A failure NCCL found in the background (a rank gone, a network error)
  // fails every later call.
  nccl::Result pending = nccl::kSuccess;
  nccl::Result result = library.ncclCommGetAsyncError(world, &pending);
  if (result != nccl::kSuccess ||
      (pending != nccl::kSuccess && pending != nccl::kInProgress)) {
    error = failure = nccl::describe(library, "the NCCL communicator",
                                     result ? result : pending, world);
    return nullptr;
  }
  nccl::Comm comm = groupCommunicator(call.gridAxes, error);
  if (!comm)
    failure = error;
  return comm;
}

/// The NCCL type and count `call` moves its elements as: the types
/// collectives reduce are NCCL's; any other's elements move as bytes.
static std::pair<int, size_t> ncclElements(const CollectiveCall &call) {
  size_t count = static_cast<size_t>(call.count);
  int type = ncclType(call.dtype);
  if (type >= 0)
    return {type, count};
  return {nccl::kUint8, count * lookupDType(call.dtype)->size};
}

bool NcclCommunicator::run(const void *send, void *recv,
                           const CollectiveCall &call, void *stream,
                           std::string &error) {
  nccl::Comm comm = prepare(call, error);
  if (!comm)
    return false;
  if (call.count == 0)
    return true;
  auto [type, count] = ncclElements(call);
  int op = call.op == MTE_REDUCE_MAX   ? nccl::kMax
           : call.op == MTE_REDUCE_MIN ? nccl::kMin
                                       : nccl::kSum;
  const char *what;
  nccl::Result result;
  switch (call.kind) {
  case CollectiveCall::AllReduce:
    what = "ncclAllReduce";
    result = library.ncclAllReduce(send, recv, count, type, op, comm, stream);
    break;
  case CollectiveCall::AllGather:
    what = "ncclAllGather";
    result = library.ncclAllGather(send, recv, count, type, comm, stream);
    break;
  case CollectiveCall::Broadcast:
    what = "ncclBroadcast";
    result = library.ncclBroadcast(send, recv, count, type, call.op, comm,
                                   stream);
    break;
  default:
    what = "ncclReduceScatter";
    result =
        library.ncclReduceScatter(send, recv, count, type, op, comm, stream);
    break;
  }
  return finish(result, what, comm, error);
}

bool NcclCommunicator::pointToPoint(bool receiving, void *buffer,
                                    const CollectiveCall &call, int32_t peer,
                                    void *stream, std::string &error) {
  nccl::Comm comm = prepare(call, error);
  if (!comm)
    return false;
  if (call.count == 0)
    return true;
  auto [type, count] = ncclElements(call);
  // A group's communicator numbers its ranks by their index in the group
  // (the split's key), as the call does.
  nccl::Result result =
      receiving
          ? library.ncclRecv(buffer, count, type, peer, comm, stream)
          : library.ncclSend(buffer, count, type, call.op, comm, stream);
  return finish(result, receiving ? "ncclRecv" : "ncclSend", comm, error);
}

bool NcclCommunicator::finish(nccl::Result result, const char *what,
                              nccl::Comm comm, std::string &error) {
  if (result == nccl::kSuccess)
    return true;
  error = failure = nccl::describe(library, what, result, comm);
  return false;
}
