/*===- names_model.c - outputs whose names are not file names -------------===*\
|*                                                                            *|
|* Copies input "x" (f32 [1]) to outputs named so that mte-run must rename    *|
|* them to write DIR/<name>.npy: a '/', a collision after renaming, a path    *|
|* that climbs, "." and the empty name.                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/ModelABI.h"

static const int64_t shape[] = {1};

static const mte_tensor_info inputs[] = {{"x", MTE_DTYPE_F32, 1, shape}};

static const mte_tensor_info outputs[] = {
    {"a/b", MTE_DTYPE_F32, 1, shape}, {"a_b", MTE_DTYPE_F32, 1, shape},
    {"a:b", MTE_DTYPE_F32, 1, shape}, {"../up", MTE_DTYPE_F32, 1, shape},
    {".", MTE_DTYPE_F32, 1, shape},   {"", MTE_DTYPE_F32, 1, shape},
};

enum { kNumOutputs = sizeof(outputs) / sizeof(outputs[0]) };

static int32_t run(void *const *in, void *const *out, void *const *weights,
                   void *arena, int64_t *index_status,
                   void *const *state, void *const *next_state) {
  (void)state;
  (void)next_state;
  (void)weights;
  (void)arena;
  (void)index_status;
  for (int i = 0; i < kNumOutputs; ++i)
    *(float *)out[i] = *(const float *)in[0] + (float)i;
  return 0;
}

static const mte_model_abi abi = {
    MTE_MODEL_ABI_VERSION,
    "host",
    0,
    1,
    kNumOutputs,
    0,
    inputs,
    outputs,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    run,
};

const mte_model_abi *mte_model_get_abi(void) { return &abi; }
