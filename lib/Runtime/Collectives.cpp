//===- Collectives.cpp - the mte_comm_* entry points of model code --------===//

#include "Collectives.h"

#include "CommReduce.h"
#include "CudaDevice.h"
#include "DType.h"
#include "HostCommunicator.h"
#include "Model.h"
#include "NcclCommunicator.h"

#include "mte-c/KernelABI.h"

#include <algorithm>
#include <climits>
#include <cstdio>

using namespace mte::runtime;

/// The scope of the run in progress on this thread.
static thread_local CollectiveScope *currentScope = nullptr;

CollectiveScope::CollectiveScope(mte_model &model)
    : model(model), previous(currentScope) {
  currentScope = this;
}

CollectiveScope::~CollectiveScope() { currentScope = previous; }

/// The reason `call` (made by the model of `scope` with the arguments
/// given) cannot run, or empty.
static std::string checkCall(const mte_model &model,
                             const CollectiveCall &call, int32_t gridAxes,
                             uint64_t send, uint64_t recv) {
  if (call.count < 0)
    return "the count is negative";
  const DTypeInfo *dtype = lookupDType(call.dtype);
  if (!dtype)
    return "dtype " + std::to_string(call.dtype) + " is not an mte_dtype";
  if (call.kind == CollectiveCall::Broadcast) {
    // op: the root's index in the group (a send's peers are checked by
    // runPointToPoint, which knows which end it is).
    int64_t size = gridGroupSize(model.gridShape, call.gridAxes);
    if ((call.gridAxes >> model.gridShape.size()) == 0 &&
        (call.op < 0 || call.op >= size))
      return "the root " + std::to_string(call.op) +
             " is not a rank of a group of " + std::to_string(size);
  } else if (call.kind != CollectiveCall::AllGather &&
             call.kind != CollectiveCall::Send) {
    if (!isReduceOp(call.op))
      return "op " + std::to_string(call.op) + " is not an mte_reduce_op";
    if (!isReducibleDType(call.dtype))
      return "it reduces f32, f64, f16, bf16, i32 and i64, not " +
             formatDType(call.dtype);
  }
  size_t numAxes = model.gridShape.size();
  if (gridAxes < 0 || (call.gridAxes >> numAxes) != 0) {
    char axes[16];
    std::snprintf(axes, sizeof(axes), "0x%x", call.gridAxes);
    if (!numAxes)
      return std::string("grid axes ") + axes +
             " name an axis, but the model is not sharded";
    return std::string("grid axes ") + axes +
           " name an axis that the model's grid " +
           formatShape(static_cast<int32_t>(numAxes), model.gridShape.data()) +
           " does not have";
  }
  // all_gather's recv and reduce_scatter's send hold a part per rank.
  uint64_t elements = static_cast<uint64_t>(call.count);
  uint64_t parts =
      call.kind == CollectiveCall::AllReduce ||
              call.kind == CollectiveCall::Broadcast ||
              call.kind == CollectiveCall::Send
          ? 1
          : static_cast<uint64_t>(gridGroupSize(model.gridShape, call.gridAxes));
  if (elements && (elements > SIZE_MAX / dtype->size / parts))
    return "its buffers do not fit in memory";
  if (elements && (!send || !recv))
    return std::string(!send ? "the send" : "the receive") + " buffer is null";
  return std::string();
}

/// Enqueues `call` of `model`, a CUDA model, on the run's stream over device
/// buffers, or records why it cannot.
static void runDeviceCollective(const mte_model &model,
                                const CollectiveCall &call, int32_t gridAxes,
                                uint64_t send, uint64_t recv) {
  if (mte::cuda::failed())
    return; // an earlier call of this forward failed
  std::string error = checkCall(model, call, gridAxes, send, recv);
  if (error.empty()) {
    const void *from = reinterpret_cast<const void *>(send);
    void *to = reinterpret_cast<void *>(recv);
    void *stream = mte::cuda::currentStream();
    NcclCommunicator *nccl = model.cuda->communicator();
    // A group of one rank has nothing to exchange, unless it is the world:
    // a grid of one rank runs on NCCL too, as its larger grids do.
    if (nccl && (gridGroupSize(model.gridShape, call.gridAxes) > 1 ||
                 model.worldSize == 1))
      nccl->run(from, to, call, stream, error);
    else if (from != to && call.count > 0)
      mte::cuda::copyOnDevice(to, from,
                              static_cast<size_t>(call.count) *
                                  lookupDType(call.dtype)->size,
                              stream, error);
  }
  if (!error.empty())
    mte::cuda::recordError(call.describe() + ": " + error);
}

/// Runs the collective `call` of the model of this thread's scope, or
/// records why it cannot.
static void runCollective(CollectiveCall::Kind kind, uint64_t send,
                          uint64_t recv, int64_t count, int32_t dtype,
                          int32_t op, int32_t gridAxes) {
  CollectiveCall call;
  call.kind = kind;
  call.dtype = dtype;
  call.op = kind == CollectiveCall::AllGather ? 0 : op;
  call.gridAxes = static_cast<uint32_t>(gridAxes);
  call.count = count;
  CollectiveScope *scope = currentScope;
  if (!scope) {
    // Model code called it outside a run (which this thread's CUDA calls
    // would report, if any).
    mte::cuda::recordError(call.describe() + ": called outside a run");
    return;
  }
  if (scope->model.cuda)
    return runDeviceCollective(scope->model, call, gridAxes, send, recv);
  if (!scope->error.empty())
    return; // an earlier collective of this run failed
  HostCommunicator &comm = *scope->model.comm;
  std::string error = checkCall(scope->model, call, gridAxes, send, recv);
  if (!error.empty())
    comm.fail(call.describe() + ": " + error); // the others wait for it
  else if (comm.run(reinterpret_cast<const void *>(send),
                    reinterpret_cast<void *>(recv), call, error))
    return;
  scope->error = call.describe() + ": " + error;
}

// Declared, and described, in KernelABI.h.

extern "C" int64_t mte_comm_rank(void) {
  CollectiveScope *scope = currentScope;
  return scope && !scope->model.gridShape.empty() ? scope->model.rank : 0;
}

extern "C" void mte_comm_all_reduce(uint64_t send, uint64_t recv, int64_t count,
                                    int32_t dtype, int32_t op,
                                    int32_t gridAxes) {
  runCollective(CollectiveCall::AllReduce, send, recv, count, dtype, op,
                gridAxes);
}

extern "C" void mte_comm_all_gather(uint64_t send, uint64_t recv,
                                    int64_t sendCount, int32_t dtype,
                                    int32_t gridAxes) {
  runCollective(CollectiveCall::AllGather, send, recv, sendCount, dtype, 0,
                gridAxes);
}

extern "C" void mte_comm_reduce_scatter(uint64_t send, uint64_t recv,
                                        int64_t recvCount, int32_t dtype,
                                        int32_t op, int32_t gridAxes) {
  runCollective(CollectiveCall::ReduceScatter, send, recv, recvCount, dtype, op,
                gridAxes);
}

extern "C" void mte_comm_broadcast(uint64_t send, uint64_t recv, int64_t count,
                                   int32_t dtype, int64_t root,
                                   int32_t gridAxes) {
  runCollective(CollectiveCall::Broadcast, send, recv, count, dtype,
                static_cast<int32_t>(std::clamp<int64_t>(root, -1, INT32_MAX)),
                gridAxes);
}

/// A send (`receiving` false: `buffer` is read, `peer` the receiver's group
/// index) or a receive (`buffer` written, `peer` the sender's).
static void runPointToPoint(bool receiving, uint64_t buffer, int64_t count,
                            int32_t dtype, int64_t peer, int32_t gridAxes) {
  CollectiveCall call;
  call.kind = CollectiveCall::Send;
  call.dtype = dtype;
  call.gridAxes = static_cast<uint32_t>(gridAxes);
  call.count = count;
  CollectiveScope *scope = currentScope;
  // How the reports name the call: a receive as its caller made it.
  std::string what = call.describe();
  if (receiving) {
    char axes[16];
    std::snprintf(axes, sizeof(axes), "0x%x", call.gridAxes);
    what = "mte_comm_recv(" + std::to_string(count) + " " +
           formatDType(dtype) + ", from " + std::to_string(peer) +
           ", grid axes " + axes + ")";
  }
  if (!scope) {
    mte::cuda::recordError(what + ": called outside a run");
    return;
  }
  if (!scope->error.empty())
    return; // an earlier collective of this run failed
  const mte_model &model = scope->model;
  int64_t size = gridGroupSize(model.gridShape, call.gridAxes);
  size_t index = 0;
  if ((call.gridAxes >> model.gridShape.size()) == 0)
    gridGroup(model.gridShape, model.rank, call.gridAxes, index);
  // Both ends describe the call as the sender makes it: op is the
  // receiver's index.
  int64_t receiver = receiving ? static_cast<int64_t>(index) : peer;
  call.op = static_cast<int32_t>(std::clamp<int64_t>(receiver, -1, INT32_MAX));
  if (!receiving)
    what = call.describe();
  std::string error = checkCall(model, call, gridAxes, buffer, buffer);
  if (error.empty() && (peer < 0 || peer >= size))
    error = (receiving ? "the sender " : "the receiver ") +
            std::to_string(peer) + " is not a rank of a group of " +
            std::to_string(size);
  if (error.empty() && peer == static_cast<int64_t>(index))
    error = "a rank does not send to itself";
  if (model.cuda) {
    if (mte::cuda::failed())
      return; // an earlier call of this forward failed
    NcclCommunicator *nccl = model.cuda->communicator();
    if (error.empty() && !nccl)
      error = "the model has no NCCL communicator";
    if (error.empty())
      nccl->pointToPoint(receiving, reinterpret_cast<void *>(buffer), call,
                         static_cast<int32_t>(peer),
                         mte::cuda::currentStream(), error);
    if (!error.empty())
      mte::cuda::recordError(what + ": " + error);
    return;
  }
  HostCommunicator &comm = *scope->model.comm;
  if (!error.empty()) {
    comm.fail(what + ": " + error);
  } else {
    bool done =
        receiving ? comm.receive(reinterpret_cast<void *>(buffer), call,
                                 static_cast<int32_t>(peer), error)
                  : comm.send(reinterpret_cast<const void *>(buffer), call,
                              error);
    if (done)
      return;
  }
  scope->error = what + ": " + error;
}

extern "C" void mte_comm_send(uint64_t send, int64_t count, int32_t dtype,
                              int64_t destination, int32_t gridAxes) {
  runPointToPoint(false, send, count, dtype, destination, gridAxes);
}

extern "C" void mte_comm_recv(uint64_t recv, int64_t count, int32_t dtype,
                              int64_t source, int32_t gridAxes) {
  runPointToPoint(true, recv, count, dtype, source, gridAxes);
}
