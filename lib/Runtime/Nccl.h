//===- Nccl.h - NCCL, opened at run time ------------------------*- C++ -*-===//
//
// Internal to libmte_runtime. The collectives of sharded CUDA models run on
// NCCL (libnccl.so.2), which the runtime opens with dlopen when it first
// needs it (opening a sharded CUDA model, mte_nccl_get_unique_id) with the
// nccl.h subset below, so that the runtime builds without NCCL's headers
// and host and unsharded models never load it.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_NCCL_H
#define MTE_LIB_RUNTIME_NCCL_H

#include "DynamicLibrary.h"

#include <climits>
#include <cstddef>
#include <string>

namespace mte::nccl {

// The nccl.h subset mte uses (NCCL 2.18 and later), transcribed; Nccl.cpp
// checks it against nccl.h where the build has it.
using Result = int;  // ncclResult_t
using Comm = void *; // ncclComm_t
constexpr Result kSuccess = 0, kUnhandledCudaError = 1, kInProgress = 7;
constexpr int kUniqueIdBytes = 128; // NCCL_UNIQUE_ID_BYTES
struct UniqueId {
  char internal[kUniqueIdBytes];
};
/// ncclConfig_t as NCCL 2.28 lays it out. NCCL reads `size` bytes of it and
/// the fields `version` says exist, so older and newer libraries take it.
struct Config {
  size_t size;
  unsigned magic;
  unsigned version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char *netName;
  int splitShare;
  int trafficClass;
  const char *commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
};
constexpr unsigned kConfigMagic = 0xcafebeef;
constexpr unsigned kConfigVersion = 22800; // NCCL_VERSION(2, 28, 0)
constexpr int kConfigUndefined = INT_MIN;  // NCCL_CONFIG_UNDEF_INT
/// NCCL_CONFIG_INITIALIZER: every attribute NCCL's default.
constexpr Config kDefaultConfig = {
    sizeof(Config),   kConfigMagic,     kConfigVersion,   kConfigUndefined,
    kConfigUndefined, kConfigUndefined, kConfigUndefined, nullptr,
    kConfigUndefined, kConfigUndefined, nullptr,          kConfigUndefined,
    kConfigUndefined, kConfigUndefined, kConfigUndefined, kConfigUndefined,
    kConfigUndefined};
// ncclRedOp_t
constexpr int kSum = 0, kMax = 2, kMin = 3;
// ncclDataType_t
constexpr int kUint8 = 1, kInt32 = 2, kInt64 = 4, kFloat16 = 6, kFloat32 = 7,
              kFloat64 = 8, kBfloat16 = 9;

/// NCCL's functions, each named once in Nccl.def, and its version
/// (NCCL_VERSION_CODE of the library: 22809 for 2.28.9).
struct Library {
#define MTE_DYNAMIC_SYMBOL(name, type)                                         \
  mte::runtime::FunctionPointer<type> name = nullptr;
#include "Nccl.def"
  int version = 0;
};

/// Opens NCCL ($MTE_NCCL_LIBRARY alone when set, else libnccl.so.2 on the
/// loader's path, else the CUDA toolkit's) and resolves its functions, once
/// per process.
/// Null with the reason in `error`, the same on every call after a failure.
const Library *openLibrary(std::string &error);

/// "`what` failed: ncclSystemError (unhandled system error): <NCCL's last
/// error>" for a failed call of `comm` (null: of none).
std::string describe(const Library &library, const char *what, Result result,
                     Comm comm);

/// Fills `id` with a new unique id (ncclGetUniqueId); false with the reason.
bool getUniqueId(const Library &library, UniqueId &id, std::string &error);

} // namespace mte::nccl

#endif // MTE_LIB_RUNTIME_NCCL_H
