//===- CommOptions.cpp - the rank, world and communicator of an open ------===//

#include "CommOptions.h"

#include "Status.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

#include <unistd.h>

using namespace mte::runtime;

namespace {
/// The variables a launcher sets for each process it starts.
struct Launcher {
  const char *rankVariable;
  const char *worldVariable;
};
} // namespace

/// In the order they are looked for.
static constexpr Launcher kLaunchers[] = {
    {"RANK", "WORLD_SIZE"},                           // torchrun
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, // Open MPI
    {"PMI_RANK", "PMI_SIZE"},                         // MPICH, Intel MPI
};

/// The variables that name a process's rank among those of its machine, in
/// the order they are looked for: torchrun's, Open MPI's, MPICH's.
static constexpr const char *kLocalRankVariables[] = {
    "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"};

/// The value of environment variable `name`, or null when it is unset or
/// empty.
static const char *environmentValue(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

/// Parses a decimal integer in [minimum, INT32_MAX] that fills `text`.
static bool parseInt32(const char *text, int32_t minimum, int32_t &value) {
  if (*text < '0' || *text > '9')
    return false;
  errno = 0;
  char *end;
  long long parsed = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || parsed < minimum || parsed > INT32_MAX)
    return false;
  value = static_cast<int32_t>(parsed);
  return true;
}

/// Reads the rank or world size a launcher set in `variable`.
static mte_status readLauncherValue(const char *function, const char *variable,
                                    bool isWorld, int32_t &value) {
  const char *text = environmentValue(variable);
  if (parseInt32(text, isWorld ? 1 : 0, value))
    return MTE_OK;
  return fail(MTE_ERROR_INVALID_ARGUMENT,
              "%s: the environment variable %s is '%s', not %s", function,
              variable, text,
              isWorld ? "a number of ranks (1, 2, ...)" : "a rank (0, 1, ...)");
}

mte_status mte::runtime::resolveRanks(const char *function, int32_t rank,
                                      int32_t worldSize,
                                      RankPlacement &placement) {
  placement = RankPlacement();
  if (worldSize <= 0 && rank > 0)
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "%s: rank %d given without a world size; set world_size too "
                "(or rank to MTE_RANK_DEFAULT for the launcher's)",
                function, rank);
  bool rankFromLauncher = worldSize <= 0 || rank < 0;
  const Launcher *launcher = nullptr;
  for (const Launcher &candidate : kLaunchers) {
    const char *wanted =
        worldSize <= 0 ? candidate.worldVariable : candidate.rankVariable;
    if (environmentValue(wanted)) {
      launcher = &candidate;
      break;
    }
  }
  if (worldSize > 0) {
    placement.worldSize = worldSize;
  } else if (launcher) {
    if (mte_status status = readLauncherValue(function, launcher->worldVariable,
                                              true, placement.worldSize))
      return status;
    placement.worldSource =
        std::string(" (from ") + launcher->worldVariable + ")";
  }
  if (!rankFromLauncher) {
    placement.rank = rank;
  } else if (launcher) {
    if (!environmentValue(launcher->rankVariable))
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "%s: the environment sets %s but not %s", function,
                  launcher->worldVariable, launcher->rankVariable);
    if (mte_status status = readLauncherValue(function, launcher->rankVariable,
                                              false, placement.rank))
      return status;
    placement.rankSource =
        std::string(" (from ") + launcher->rankVariable + ")";
  }
  return MTE_OK;
}

mte_status mte::runtime::resolveDevice(const char *function, int32_t device,
                                       int32_t &resolved, std::string &source) {
  resolved = device == MTE_DEVICE_DEFAULT ? 0 : device;
  source.clear();
  if (device != MTE_DEVICE_DEFAULT)
    return MTE_OK;
  for (const char *variable : kLocalRankVariables) {
    if (!environmentValue(variable))
      continue;
    if (mte_status status =
            readLauncherValue(function, variable, false, resolved))
      return status;
    source = variable;
    return MTE_OK;
  }
  return MTE_OK;
}

mte_status mte::runtime::resolveCommId(const char *function, const char *commId,
                                       std::string &resolved) {
  if (commId) {
    if (!*commId)
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "%s: comm_id is empty (NULL takes the environment's)",
                  function);
    resolved = commId;
  } else if (const char *fromEnvironment = environmentValue("MTE_COMM_ID")) {
    resolved = fromEnvironment;
  } else if (environmentValue("MASTER_ADDR") &&
             environmentValue("MASTER_PORT")) {
    resolved = std::string(environmentValue("MASTER_ADDR")) + ":" +
               environmentValue("MASTER_PORT");
  } else {
    // The processes a launcher starts on one machine are its children.
    resolved = "parent-" + std::to_string(::getppid());
  }
  return MTE_OK;
}

mte_status mte::runtime::readCommLimits(const char *path, CommLimits &limits) {
  limits = CommLimits();
  if (const char *text = environmentValue("MTE_COMM_TIMEOUT")) {
    errno = 0;
    char *end;
    double seconds = std::strtod(text, &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(seconds) || seconds <= 0)
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': MTE_COMM_TIMEOUT is '%s', not a positive number of "
                  "seconds",
                  path, text);
    limits.timeoutSeconds = seconds;
  }
  if (const char *text = environmentValue("MTE_COMM_BUFFER_BYTES")) {
    int32_t bytes;
    if (!parseInt32(text, 4096, bytes))
      return fail(MTE_ERROR_INVALID_ARGUMENT,
                  "'%s': MTE_COMM_BUFFER_BYTES is '%s', not a number of bytes "
                  "from 4096 to %d",
                  path, text, INT32_MAX);
    limits.bufferBytes = static_cast<size_t>(bytes);
  }
  return MTE_OK;
}
