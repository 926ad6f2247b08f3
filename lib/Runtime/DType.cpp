//===- DType.cpp - the element types of the model ABI ---------------------===//

#include "DType.h"

using namespace mte::runtime;

const DTypeInfo *mte::runtime::lookupDType(int32_t dtype) {
  static const DTypeInfo table[] = {
      {nullptr, 0},  {"f32", 4}, {"f16", 2},  {"bf16", 2},
      {"f64", 8},    {"i64", 8}, {"i32", 4},  {"i16", 2},
      {"i8", 1},     {"u8", 1},  {"bool", 1}, {"f8e4m3fn", 1},
      {"f8e5m2", 1}, {"u16", 2}, {"u32", 4},  {"u64", 8},
  };
  constexpr int32_t count = sizeof(table) / sizeof(table[0]);
  if (dtype <= 0 || dtype >= count)
    return nullptr;
  return &table[dtype];
}

std::string mte::runtime::formatDType(int32_t dtype) {
  if (const DTypeInfo *info = lookupDType(dtype))
    return info->name;
  return "dtype " + std::to_string(dtype) + " (unknown)";
}

std::string mte::runtime::formatShape(int32_t rank, const int64_t *shape) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}
