//===- Status.h - mte_status results and their messages ---------*- C++ -*-===//
//
// Internal to libmte_runtime. Every function of Runtime.h that can fail
// returns an mte_status and leaves its message for mte_last_error() on the
// calling thread; these helpers set both in one return statement.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_STATUS_H
#define MTE_LIB_RUNTIME_STATUS_H

#include "mte-c/Runtime.h"

namespace mte::runtime {

/// Clears this thread's message and returns MTE_OK.
mte_status succeed();

/// Sets this thread's message from a printf-style format and returns
/// `status`.
__attribute__((format(printf, 2, 3))) mte_status fail(mte_status status,
                                                      const char *format, ...);

/// This thread's message: empty after succeed(), the reason after fail().
const char *lastError();

/// The description of mte_status_name, for any int a C caller passes.
const char *statusName(int status);

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_STATUS_H
