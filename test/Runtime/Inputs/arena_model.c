/*===- arena_model.c - a CUDA model with an activation arena --------------===*\
|*                                                                            *|
|* A CUDA model without kernels whose table asks for an activation arena of  *|
|* MTE_TEST_ARENA_BYTES (default 1 MiB). Its run fails (returns 1) when the  *|
|* runtime passes no arena, and (returns 2) when it passes a model another   *|
|* arena than the model's first run got. utils/gpu/check.py opens it on a    *|
|* GPU; a variant with an arena larger than any GPU, which must fail to open *|
|* with MTE_ERROR_OUT_OF_MEMORY; and one whose run asks the runtime's        *|
|* stream-ordered allocator (as compiled models do for what the arena does   *|
|* not hold) for MTE_TEST_RUN_ALLOC_BYTES, more than any GPU has, which must *|
|* fail to run with MTE_ERROR_OUT_OF_MEMORY.                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/ModelABI.h"

#include <stdbool.h>
#include <stddef.h>

#ifndef MTE_TEST_ARENA_BYTES
#define MTE_TEST_ARENA_BYTES (1ull << 20)
#endif

static const int64_t shape[] = {1};

static const mte_tensor_info inputs[] = {{"x", MTE_DTYPE_F32, 1, shape}};
static const mte_tensor_info outputs[] = {{"y", MTE_DTYPE_F32, 1, shape}};

#ifdef MTE_TEST_RUN_ALLOC_BYTES
/* libmte_runtime's stream and allocator for compiled models' kernels. */
void *mgpuStreamCreate(void);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
#endif

/* The first arena each open model (told apart by its staging input
 * buffer, which the runtime allocates per model) was given. */
enum { kMaxModels = 16 };
static void *modelInput[kMaxModels], *firstArena[kMaxModels];

static int32_t run(void *const *in, void *const *out, void *const *weights,
                   void *arena, int64_t *index_status,
                   void *const *state, void *const *next_state) {
  (void)state;
  (void)next_state;
  (void)index_status;
  (void)out;
  (void)weights;
#ifdef MTE_TEST_RUN_ALLOC_BYTES
  mgpuMemAlloc(MTE_TEST_RUN_ALLOC_BYTES, mgpuStreamCreate(), false);
#endif
  if (!arena)
    return 1;
  for (int i = 0; i < kMaxModels; ++i) {
    if (!modelInput[i]) {
      modelInput[i] = in[0];
      firstArena[i] = arena;
    }
    if (modelInput[i] == in[0])
      return arena == firstArena[i] ? 0 : 2;
  }
  return 3; /* more open models than the table holds */
}

static const mte_model_abi abi = {
    MTE_MODEL_ABI_VERSION,
    "cuda",
    "sm_70",
    1,
    1,
    0,
    inputs,
    outputs,
    NULL,
    MTE_TEST_ARENA_BYTES,
    0,
    NULL,
    0,
    NULL,
    0,
    NULL,
    run,
};

const mte_model_abi *mte_model_get_abi(void) { return &abi; }
