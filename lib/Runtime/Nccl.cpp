//===- Nccl.cpp - NCCL, opened at run time --------------------------------===//

#include "Nccl.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef MTE_HAVE_NCCL_H
// Only to check the values transcribed in Nccl.h: NCCL is opened at run
// time, never linked.
#include <nccl.h>
#endif

using namespace mte::nccl;

#ifdef MTE_HAVE_NCCL_H
// Built with NCCL's header: every value above is its.
static_assert(sizeof(Result) == sizeof(ncclResult_t) &&
              sizeof(int) == sizeof(ncclDataType_t) &&
              sizeof(int) == sizeof(ncclRedOp_t) &&
              sizeof(Comm) == sizeof(ncclComm_t));
static_assert(kSuccess == ncclSuccess &&
              kUnhandledCudaError == ncclUnhandledCudaError &&
              kInProgress == ncclInProgress);
static_assert(kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES &&
              sizeof(UniqueId) == sizeof(ncclUniqueId));
static_assert(kSum == ncclSum && kMax == ncclMax && kMin == ncclMin);
static_assert(kUint8 == ncclUint8 && kInt32 == ncclInt32 &&
              kInt64 == ncclInt64 && kFloat16 == ncclFloat16 &&
              kFloat32 == ncclFloat32 && kFloat64 == ncclFloat64 &&
              kBfloat16 == ncclBfloat16);
static_assert(kConfigUndefined == NCCL_CONFIG_UNDEF_INT);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
// The 2.28 layout, which later versions extend at the end.
#define MTE_SAME_FIELD(field)                                                  \
  static_assert(offsetof(Config, field) == offsetof(ncclConfig_t, field) &&    \
                sizeof(Config::field) == sizeof(ncclConfig_t::field))
MTE_SAME_FIELD(size);
MTE_SAME_FIELD(magic);
MTE_SAME_FIELD(version);
MTE_SAME_FIELD(blocking);
MTE_SAME_FIELD(cgaClusterSize);
MTE_SAME_FIELD(minCTAs);
MTE_SAME_FIELD(maxCTAs);
MTE_SAME_FIELD(netName);
MTE_SAME_FIELD(splitShare);
MTE_SAME_FIELD(trafficClass);
MTE_SAME_FIELD(commName);
MTE_SAME_FIELD(collnetEnable);
MTE_SAME_FIELD(CTAPolicy);
MTE_SAME_FIELD(shrinkShare);
MTE_SAME_FIELD(nvlsCTAs);
MTE_SAME_FIELD(nChannelsPerNetPeer);
MTE_SAME_FIELD(nvlinkCentricSched);
#undef MTE_SAME_FIELD
static_assert(sizeof(Config) <= sizeof(ncclConfig_t));
#endif
#endif

const Library *mte::nccl::openLibrary(std::string &error) {
  return mte::runtime::openOnce<Library>(
      [](Library &l) -> std::string {
        // $MTE_NCCL_LIBRARY names the one library to use.
        const char *override = std::getenv("MTE_NCCL_LIBRARY");
        const char *cudaHome = std::getenv("CUDA_HOME");
        std::string toolkit = cudaHome ? cudaHome : "/usr/local/cuda";
        std::vector<std::string> candidates = {"libnccl.so.2",
                                               toolkit + "/lib/libnccl.so.2",
                                               toolkit + "/lib64/libnccl.so.2"};
        if (override && *override)
          candidates = {override};
        mte::runtime::DynamicLibrary library;
        std::string reason;
        if (!library.open(nullptr, candidates, reason))
          return override && *override
                     ? "cannot load NCCL from MTE_NCCL_LIBRARY: " + reason
                     : "cannot load NCCL (libnccl.so.2 is neither on the "
                       "loader's path nor in " +
                           toolkit +
                           "/lib or lib64; set MTE_NCCL_LIBRARY to its path)";
        const mte::runtime::DynamicSymbol symbols[] = {
#define MTE_DYNAMIC_SYMBOL(name, type) {#name, &l.name},
#include "Nccl.def"
        };
        if (const char *missing = library.resolve(symbols))
          return std::string("NCCL is too old: it lacks ") + missing +
                 " (mte needs NCCL 2.18 or newer)";
        if (l.ncclGetVersion(&l.version) != kSuccess || l.version < 21800)
          return "NCCL is too old: it is version " + std::to_string(l.version) +
                 " (mte needs NCCL 2.18 or newer)";
        return std::string();
      },
      error);
}

std::string mte::nccl::describe(const Library &library, const char *what,
                                Result result, Comm comm) {
  std::string message = std::string(what) + " failed: ";
  const char *name = library.ncclGetErrorString(result);
  message += name ? name : "NCCL error " + std::to_string(result);
  // The last error is the thread's most recent, whichever call made it.
  const char *detail = library.ncclGetLastError(comm);
  if (detail && *detail)
    message += std::string(" (") + detail + ")";
  return message;
}

bool mte::nccl::getUniqueId(const Library &library, UniqueId &id,
                            std::string &error) {
  std::memset(&id, 0, sizeof(id));
  Result result = library.ncclGetUniqueId(&id);
  if (result == kSuccess)
    return true;
  error = describe(library, "ncclGetUniqueId", result, nullptr);
  return false;
}
