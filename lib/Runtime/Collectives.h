//===- Collectives.h - the mte_comm_* entry points of models ----*- C++ -*-===//
//
// Internal to libmte_runtime. A sharded host model calls mte_comm_rank and
// the collectives of KernelABI.h during its run, on the thread that runs
// it: the runtime makes that model the thread's for the call
// (CollectiveScope), the entry points check their arguments and run the
// collective through the model's HostCommunicator, and the first failure
// is recorded for the run to report, the later collectives of that run
// then doing nothing. Without a scope (a CUDA model's forward) they fail
// the forward: collectives of CUDA models (NCCL) are not built yet.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_COLLECTIVES_H
#define MTE_LIB_RUNTIME_COLLECTIVES_H

#include "mte-c/Runtime.h"

#include <string>

namespace mte::runtime {

/// Makes `model`, a host model, the one this thread's mte_comm_* calls act
/// for while the scope lives.
struct CollectiveScope {
  explicit CollectiveScope(mte_model &model);
  CollectiveScope(const CollectiveScope &) = delete;
  CollectiveScope &operator=(const CollectiveScope &) = delete;
  ~CollectiveScope();

  mte_model &model;
  /// The first failure of a collective in the scope ("mte_comm_all_reduce(
  /// ...): rank 1 (process 7) exited"), or empty.
  std::string error;
  CollectiveScope *previous;
};

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_COLLECTIVES_H
