//===- Collectives.h - the mte_comm_* entry points of models ----*- C++ -*-===//
//
// Internal to libmte_runtime. A sharded model calls mte_comm_rank and the
// collectives of KernelABI.h during its run, on the thread that runs it:
// the runtime makes that model the thread's for the call (CollectiveScope),
// and the entry points check their arguments and run the collective: a
// host model's through its HostCommunicator, a CUDA model's on the run's
// stream through its NcclCommunicator (a group of one rank, as in an
// unsharded model, copies on the stream). The first failure is recorded
// for the run to report (a CUDA model's with mte::cuda::recordError), the
// later collectives of that run then doing nothing.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_COLLECTIVES_H
#define MTE_LIB_RUNTIME_COLLECTIVES_H

#include "mte-c/Runtime.h"

#include <string>

namespace mte::runtime {

/// Makes `model` the one this thread's mte_comm_* calls act for while the
/// scope lives (a CUDA model's forward, eager or captured, included).
struct CollectiveScope {
  explicit CollectiveScope(mte_model &model);
  CollectiveScope(const CollectiveScope &) = delete;
  CollectiveScope &operator=(const CollectiveScope &) = delete;
  ~CollectiveScope();

  mte_model &model;
  /// The first failure of a host model's collective in the scope
  /// ("mte_comm_all_reduce(...): rank 1 (process 7) exited"), or empty.
  std::string error;
  CollectiveScope *previous;
};

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_COLLECTIVES_H
