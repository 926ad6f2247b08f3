//===- IndexChecks.cpp - out-of-range indices a model reports -------------===//

#include "IndexChecks.h"

#include "Status.h"

#include <string>

using namespace mte::runtime;

size_t mte::runtime::indexStatusBytes(const mte_model_abi *abi) {
  return 3 * sizeof(int64_t) * abi->num_index_checks;
}

mte_status mte::runtime::readIndexChecks(const char *path,
                                         const mte_model_abi *abi) {
  if (abi->num_index_checks && !abi->index_checks)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: %u index checks but no "
                "array",
                path, abi->num_index_checks);
  for (uint32_t i = 0; i < abi->num_index_checks; ++i) {
    const mte_index_check &check = abi->index_checks[i];
    bool valid = check.op && check.node && check.source &&
                 check.num_bounds > 0 && check.bounds;
    for (uint32_t j = 0; valid && j < check.num_bounds; ++j)
      valid = check.bounds[j] > 0;
    if (!valid)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: index check %u", path, i);
  }
  return MTE_OK;
}

mte_status mte::runtime::checkIndexStatus(const char *path,
                                          const mte_model_abi *abi,
                                          const int64_t *status,
                                          const char *when) {
  for (uint32_t i = 0; i < abi->num_index_checks; ++i) {
    const int64_t *row = status + 3 * i;
    if (row[0] == 0)
      continue;
    const mte_index_check &check = abi->index_checks[i];
    int64_t position = row[1];
    int64_t bound = check.bounds[check.num_bounds == 1 || position < 0
                                     ? 0
                                     : position % check.num_bounds];
    std::string from = *check.source
                           ? std::string("from input '") + check.source + "'"
                           : std::string("computed in the model");
    return fail(
        MTE_ERROR_INVALID_INPUT,
        "'%s'%s: %s node '%s': index %lld %s (element %lld of its "
        "indices) is outside [%lld, %lld]; %lld of its indices are "
        "out of range",
        path, when, check.op, check.node, static_cast<long long>(row[2]),
        from.c_str(), static_cast<long long>(position),
        static_cast<long long>(-bound), static_cast<long long>(bound - 1),
        static_cast<long long>(row[0]));
  }
  return MTE_OK;
}
