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
  auto [it, added] = groups.try_emplace(spanned, nullptr);
  if (!added)
    return it->second;
  // The ranks of one group share a color, their lowest rank, and are keyed
  // by their index in it.
  size_t index;
  std::vector<int32_t> members = gridGroup(grid, rank, spanned, index);
  nccl::Result result = library.ncclCommSplit(
      world, members.front(), static_cast<int>(index), &it->second, nullptr);
  if (result == nccl::kSuccess && it->second)
    return it->second;
  if (it->second)
    library.ncclCommAbort(it->second);
  groups.erase(it);
  char axes[16];
  std::snprintf(axes, sizeof(axes), "0x%x", gridAxes);
  error = std::string("cannot make the communicator of grid axes ") + axes +
          ": " + nccl::describe(library, "ncclCommSplit", result, world);
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

bool NcclCommunicator::run(const void *send, void *recv,
                           const CollectiveCall &call, void *stream,
                           std::string &error) {
  if (!failure.empty()) {
    error = "the NCCL communicator failed before: " + failure;
    return false;
  }
  // A failure NCCL found in the background (a rank gone, a network error)
  // fails every later call.
  nccl::Result pending = nccl::kSuccess;
  nccl::Result result = library.ncclCommGetAsyncError(world, &pending);
  if (result != nccl::kSuccess ||
      (pending != nccl::kSuccess && pending != nccl::kInProgress)) {
    error = failure = nccl::describe(library, "the NCCL communicator",
                                     result ? result : pending, world);
    return false;
  }
  nccl::Comm comm = groupCommunicator(call.gridAxes, error);
  if (!comm) {
    failure = error;
    return false;
  }
  size_t count = static_cast<size_t>(call.count);
  if (count == 0)
    return true;
  // The types collectives reduce are NCCL's; a gather moves any other's
  // elements as bytes.
  int type = ncclType(call.dtype);
  if (type < 0) {
    type = nccl::kUint8;
    count *= lookupDType(call.dtype)->size;
  }
  int op = call.op == MTE_REDUCE_MAX   ? nccl::kMax
           : call.op == MTE_REDUCE_MIN ? nccl::kMin
                                       : nccl::kSum;
  const char *what;
  switch (call.kind) {
  case CollectiveCall::AllReduce:
    what = "ncclAllReduce";
    result = library.ncclAllReduce(send, recv, count, type, op, comm, stream);
    break;
  case CollectiveCall::AllGather:
    what = "ncclAllGather";
    result = library.ncclAllGather(send, recv, count, type, comm, stream);
    break;
  default:
    what = "ncclReduceScatter";
    result =
        library.ncclReduceScatter(send, recv, count, type, op, comm, stream);
    break;
  }
  if (result == nccl::kSuccess)
    return true;
  error = failure = nccl::describe(library, what, result, comm);
  return false;
}
