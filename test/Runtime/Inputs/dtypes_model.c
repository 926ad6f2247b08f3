/*===- dtypes_model.c - an identity model over every element type ---------===*\
|*                                                                            *|
|* For each mte_dtype, input "in_<dtype>" of shape [256] is copied to output  *|
|* "out_<dtype>"; "in_empty" (f32 [0, 3]) to "out_empty". The tests use it    *|
|* to check mte-run's .npy reading and writing, random data and summaries     *|
|* for every type.                                                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/ModelABI.h"

#include <string.h>

static const int64_t shape[] = {256};
static const int64_t emptyShape[] = {0, 3};

#define TENSORS(prefix)                                                        \
  {                                                                            \
    {prefix "f32", MTE_DTYPE_F32, 1, shape},                                   \
        {prefix "f16", MTE_DTYPE_F16, 1, shape},                               \
        {prefix "bf16", MTE_DTYPE_BF16, 1, shape},                             \
        {prefix "f64", MTE_DTYPE_F64, 1, shape},                               \
        {prefix "i64", MTE_DTYPE_I64, 1, shape},                               \
        {prefix "i32", MTE_DTYPE_I32, 1, shape},                               \
        {prefix "i16", MTE_DTYPE_I16, 1, shape},                               \
        {prefix "i8", MTE_DTYPE_I8, 1, shape},                                 \
        {prefix "u8", MTE_DTYPE_U8, 1, shape},                                 \
        {prefix "bool", MTE_DTYPE_BOOL, 1, shape},                             \
        {prefix "f8e4m3fn", MTE_DTYPE_F8E4M3FN, 1, shape},                     \
        {prefix "f8e5m2", MTE_DTYPE_F8E5M2, 1, shape},                         \
        {prefix "u16", MTE_DTYPE_U16, 1, shape},                               \
        {prefix "u32", MTE_DTYPE_U32, 1, shape},                               \
        {prefix "u64", MTE_DTYPE_U64, 1, shape},                               \
        {prefix "empty", MTE_DTYPE_F32, 2, emptyShape},                        \
  }

static const mte_tensor_info inputs[] = TENSORS("in_");
static const mte_tensor_info outputs[] = TENSORS("out_");

enum { kNumTensors = sizeof(inputs) / sizeof(inputs[0]) };

#define N 256
static const unsigned byteCounts[kNumTensors] = {
    4 * N, 2 * N, 2 * N, 8 * N, 8 * N, 4 * N, 2 * N, N,
    N,     N,     N,     N,     2 * N, 4 * N, 8 * N, 0};

static int32_t run(void *const *in, void *const *out, void *const *weights,
                   void *arena, int64_t *index_status,
                   void *const *state, void *const *next_state) {
  (void)state;
  (void)next_state;
  (void)weights;
  (void)arena;
  (void)index_status;
  for (int i = 0; i < kNumTensors; ++i)
    memcpy(out[i], in[i], byteCounts[i]);
  return 0;
}

static const mte_model_abi abi = {
    MTE_MODEL_ABI_VERSION,
    "host",
    NULL,
    kNumTensors,
    kNumTensors,
    0,
    inputs,
    outputs,
    NULL,
    0,
    0,
    NULL,
    0,
    NULL,
    0,
    NULL,
    run,
};

const mte_model_abi *mte_model_get_abi(void) { return &abi; }
