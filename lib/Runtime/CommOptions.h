//===- CommOptions.h - rank, world size and comm id of an open --*- C++ -*-===//
//
// Internal to libmte_runtime. A model opens as one rank of a world of
// processes: mte_open_options names the rank, the world size and the
// communicator's name, or leaves them to the launcher's environment
// (torchrun, Open MPI, MPICH), as Runtime.h describes, and so may the CUDA
// device (the launcher's local rank). The communicator's timeout and
// staging buffer come from the environment too.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_COMMOPTIONS_H
#define MTE_LIB_RUNTIME_COMMOPTIONS_H

#include "mte-c/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace mte::runtime {

/// Where a process stands among the ranks: the resolved values, and for
/// messages, where each came from (" (from RANK)", or "" when the caller
/// gave it).
struct RankPlacement {
  int32_t rank = 0;
  int32_t worldSize = 1;
  std::string rankSource, worldSource;
};

/// Resolves the rank and world size of an open from mte_open_options'
/// `rank` and `worldSize` and the launcher's environment; `function` names
/// the entry point in messages. A malformed value is
/// MTE_ERROR_INVALID_ARGUMENT. Does not check rank < world size.
mte_status resolveRanks(const char *function, int32_t rank, int32_t worldSize,
                        RankPlacement &placement);

/// Resolves the CUDA device of an open from mte_open_options' `device`: the
/// one given (MTE_DEVICE_DEFAULT: the launcher's local rank, $LOCAL_RANK
/// (torchrun), else $OMPI_COMM_WORLD_LOCAL_RANK (Open MPI), else
/// $MPI_LOCALRANKID (MPICH), else 0). Sets `source` to the variable the
/// device came from, or empty. A malformed value is
/// MTE_ERROR_INVALID_ARGUMENT.
mte_status resolveDevice(const char *function, int32_t device,
                         int32_t &resolved, std::string &source);

/// Resolves the communicator's name from mte_open_options' `commId` (null:
/// $MTE_COMM_ID, $MASTER_ADDR:$MASTER_PORT, or the parent process).
mte_status resolveCommId(const char *function, const char *commId,
                         std::string &resolved);

/// What the ranks' communicator waits for at most, in seconds
/// ($MTE_COMM_TIMEOUT, default 60), and the bytes each rank stages a
/// collective through ($MTE_COMM_BUFFER_BYTES; 0: the communicator's
/// choice). `path` names the model in messages.
struct CommLimits {
  double timeoutSeconds = 60;
  size_t bufferBytes = 0;
};
mte_status readCommLimits(const char *path, CommLimits &limits);

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_COMMOPTIONS_H
