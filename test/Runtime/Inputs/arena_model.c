/*===- arena_model.c - a CUDA model with an activation arena --------------===*\
|*                                                                            *|
|* A CUDA model without kernels whose table asks for an activation arena of  *|
|* MTE_TEST_ARENA_BYTES (default 1 MiB). Its run fails (returns 1) when the  *|
|* runtime passes no arena, and (returns 2) when it passes another arena     *|
|* than the first run's. utils/gpu/check.py opens it on a GPU, a variant     *|
|* with an arena larger than any GPU, which must fail to open with           *|
|* MTE_ERROR_OUT_OF_MEMORY, and one whose run asks the runtime's             *|
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
/* libmte_runtime's allocator for compiled models' kernels. */
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
#endif

static void *firstArena;

static int32_t run(void *const *in, void *const *out, void *const *weights,
                   void *arena) {
  (void)in;
  (void)out;
  (void)weights;
#ifdef MTE_TEST_RUN_ALLOC_BYTES
  mgpuMemAlloc(MTE_TEST_RUN_ALLOC_BYTES, NULL, false);
#endif
  if (!arena)
    return 1;
  if (!firstArena)
    firstArena = arena;
  return arena == firstArena ? 0 : 2;
}

static const mte_model_abi abi = {
    MTE_MODEL_ABI_VERSION, "cuda", "sm_70", 1,   1, 0, inputs, outputs, NULL,
    MTE_TEST_ARENA_BYTES,  run,
};

const mte_model_abi *mte_model_get_abi(void) { return &abi; }
