//===- DType.cpp - the element types of the model ABI ---------------------===//

#include "DType.h"

#include "mte-c/ModelABI.h"

using namespace mte::runtime;

// The values of mte_dtype are part of the model ABI: DTypes.def must not
// renumber them.
static_assert(MTE_DTYPE_F32 == 1 && MTE_DTYPE_F16 == 2 && MTE_DTYPE_BF16 == 3 &&
                  MTE_DTYPE_F64 == 4 && MTE_DTYPE_I64 == 5 &&
                  MTE_DTYPE_I32 == 6 && MTE_DTYPE_I16 == 7 &&
                  MTE_DTYPE_I8 == 8 && MTE_DTYPE_U8 == 9 &&
                  MTE_DTYPE_BOOL == 10 && MTE_DTYPE_F8E4M3FN == 11 &&
                  MTE_DTYPE_F8E5M2 == 12 && MTE_DTYPE_U16 == 13 &&
                  MTE_DTYPE_U32 == 14 && MTE_DTYPE_U64 == 15,
              "an mte_dtype value changed: that breaks every compiled model");

/// The entries of DTypes.def, indexed by value (0 is no mte_dtype).
static constexpr DTypeInfo kDTypes[] = {
    {nullptr, 0},
#define MTE_DTYPE(SUFFIX, VALUE, NAME, SIZE) {NAME, SIZE},
#include "mte-c/DTypes.def"
};

/// Whether DTypes.def lists the values 1, 2, ... in order, as indexing
/// kDTypes by value needs.
static constexpr bool valuesAreIndices() {
  int32_t index = 0;
  bool inOrder = true;
#define MTE_DTYPE(SUFFIX, VALUE, NAME, SIZE)                                   \
  inOrder = inOrder && VALUE == ++index;
#include "mte-c/DTypes.def"
  return inOrder;
}
static_assert(valuesAreIndices(), "DTypes.def lists the values 1, 2, ...");

const DTypeInfo *mte::runtime::lookupDType(int32_t dtype) {
  constexpr int32_t count = sizeof(kDTypes) / sizeof(kDTypes[0]);
  if (dtype <= 0 || dtype >= count)
    return nullptr;
  return &kDTypes[dtype];
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
