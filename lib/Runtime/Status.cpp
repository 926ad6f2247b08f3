//===- Status.cpp - mte_status results and their messages -----------------===//

#include "Status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

/// The message mte_last_error() returns on this thread.
static thread_local std::string lastErrorMessage;

mte_status mte::runtime::succeed() {
  lastErrorMessage.clear();
  return MTE_OK;
}

mte_status mte::runtime::fail(mte_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  va_list argsCopy;
  va_copy(argsCopy, args);
  int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  lastErrorMessage.assign(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0)
    std::vsnprintf(lastErrorMessage.data(), lastErrorMessage.size() + 1, format,
                   argsCopy);
  va_end(argsCopy);
  return status;
}

const char *mte::runtime::lastError() { return lastErrorMessage.c_str(); }

const char *mte::runtime::statusName(int value) {
  switch (value) {
  case MTE_OK:
    return "ok";
  case MTE_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case MTE_ERROR_IO:
    return "i/o error";
  case MTE_ERROR_LOAD:
    return "load error";
  case MTE_ERROR_NOT_A_MODEL:
    return "not an mte model";
  case MTE_ERROR_ABI_VERSION:
    return "model ABI version mismatch";
  case MTE_ERROR_UNKNOWN_NAME:
    return "unknown name";
  case MTE_ERROR_DTYPE_MISMATCH:
    return "dtype mismatch";
  case MTE_ERROR_SHAPE_MISMATCH:
    return "shape mismatch";
  case MTE_ERROR_RUN_FAILED:
    return "run failed";
  case MTE_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case MTE_ERROR_DEVICE:
    return "device error";
  case MTE_ERROR_INVALID_INPUT:
    return "invalid input";
  }
  return "unknown status";
}
