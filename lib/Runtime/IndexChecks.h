//===- IndexChecks.h - out-of-range indices a model reports -----*- C++ -*-===//
//
// Internal to libmte_runtime. A model's index checks (mte_index_check in
// ModelABI.h) clamp the indices of its Gathers and Scatters; its forward
// writes, per check, how many were out of range, the first one's position
// and its value, and the runtime turns a count that is not 0 into
// MTE_ERROR_INVALID_INPUT.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_INDEXCHECKS_H
#define MTE_LIB_RUNTIME_INDEXCHECKS_H

#include "mte-c/Runtime.h"

#include <cstddef>

namespace mte::runtime {

/// The size of the status table of a model's index checks.
size_t indexStatusBytes(const mte_model_abi *abi);

/// Checks the table of index checks of the model at `path`: every entry
/// names its op and has positive bounds.
mte_status readIndexChecks(const char *path, const mte_model_abi *abi);

/// Reports the first index check of `status` (3 values per check) that saw
/// an index out of range; `when` says which run, for reports made later.
mte_status checkIndexStatus(const char *path, const mte_model_abi *abi,
                            const int64_t *status, const char *when = "");

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_INDEXCHECKS_H
