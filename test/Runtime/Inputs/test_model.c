/*===- test_model.c - a hand-written model.so for the runtime tests -------===*\
|*                                                                            *|
|* Implements ModelABI.h the way mte-compile's output does:                   *|
|*   inputs   x f32 [2, 3], ids i64 [2]                                       *|
|*   outputs  sum = x + 1 (f32 [2, 3]), twice = ids * 2 (i64 [2]),            *|
|*            stats/total = the sum of x in f64 (a scalar)                    *|
|*                                                                            *|
|* Defines build the broken variants the error tests load:                    *|
|*   MTE_TEST_ABI_VERSION=N   report model ABI version N                      *|
|*   MTE_TEST_RUN_FAILS       make run return 3                               *|
|*   MTE_TEST_STATE           carry state fp8.scale f32 [2] (labels a.input,  *|
|*                            b.input; initial 1, 2), each run doubling it    *|
|*   MTE_TEST_<DEFECT>        one defect of the table (see below), such as    *|
|*                            a malformed device grid (MTE_TEST_GRID_*)       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/ModelABI.h"

#include <stddef.h>

#ifndef MTE_TEST_ABI_VERSION
#define MTE_TEST_ABI_VERSION MTE_MODEL_ABI_VERSION
#endif

static const int64_t xShape[] = {2,
#ifdef MTE_TEST_NEGATIVE_DIM
                                 -3
#else
                                 3
#endif
};
static const int64_t idsShape[] = {2};
static const int64_t twiceShape[] = {
#if defined(MTE_TEST_OVERFLOW)
    (int64_t)1 << 62 /* 2^65 bytes */
#elif defined(MTE_TEST_HUGE_OUTPUT)
    (int64_t)1 << 58 /* 2^61 bytes: valid, but no machine has them */
#else
    2
#endif
};

static const mte_tensor_info inputs[] = {
    {"x", MTE_DTYPE_F32, 2, xShape},
#if defined(MTE_TEST_NO_NAME)
    {NULL, MTE_DTYPE_I64, 1, idsShape},
#elif defined(MTE_TEST_NEGATIVE_RANK)
    {"ids", MTE_DTYPE_I64, -1, idsShape},
#elif defined(MTE_TEST_NO_SHAPE)
    {"ids", MTE_DTYPE_I64, 1, NULL},
#else
    {"ids", MTE_DTYPE_I64, 1, idsShape},
#endif
};

static const mte_tensor_info outputs[] = {
#ifdef MTE_TEST_UNKNOWN_DTYPE
    {"sum", 77, 2, xShape},
#else
    {"sum", MTE_DTYPE_F32, 2, xShape},
#endif
#ifdef MTE_TEST_DUPLICATE_NAME
    {"sum", MTE_DTYPE_I64, 1, twiceShape},
#else
    {"twice", MTE_DTYPE_I64, 1, twiceShape},
#endif
    {"stats/total", MTE_DTYPE_F64, 0, NULL},
};

#if defined(MTE_TEST_STATE) || defined(MTE_TEST_STATE_BAD_KIND) ||           \
    defined(MTE_TEST_STATE_NO_LABELS)
#define MTE_TEST_HAS_STATE 1
static const int64_t scaleShape[] = {2};
static const char *const scaleLabels[] = {"a.input", "b.input"};
static const float scaleInitial[] = {1.0f, 2.0f};
static const mte_state_info states[] = {
    {{"fp8.scale", MTE_DTYPE_F32, 1, scaleShape},
#ifdef MTE_TEST_STATE_BAD_KIND
     9,
#else
     MTE_STATE_FP8_SCALE,
#endif
     scaleInitial, 2,
#ifdef MTE_TEST_STATE_NO_LABELS
     NULL},
#else
     scaleLabels},
#endif
};
#endif

/* The defects of a device grid (test_model is unsharded otherwise). */
#if defined(MTE_TEST_GRID_AXES)
static const int64_t grid[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
#define MTE_TEST_NUM_GRID_AXES 9
#elif defined(MTE_TEST_GRID_NO_SHAPE)
static const int64_t *const grid = NULL;
#define MTE_TEST_NUM_GRID_AXES 2
#elif defined(MTE_TEST_GRID_EXTENT)
static const int64_t grid[] = {2, 0};
#define MTE_TEST_NUM_GRID_AXES 2
#elif defined(MTE_TEST_GRID_OVERFLOW)
static const int64_t grid[] = {65536, 65536};
#define MTE_TEST_NUM_GRID_AXES 2
#else
static const int64_t *const grid = NULL;
#define MTE_TEST_NUM_GRID_AXES 0
#endif

static int32_t run(void *const *in, void *const *out, void *const *weights,
                   void *arena, int64_t *index_status,
                   void *const *state, void *const *next_state) {
  (void)state;
  (void)next_state;
  const float *x = (const float *)in[0];
  const int64_t *ids = (const int64_t *)in[1];
  float *sum = (float *)out[0];
  int64_t *twice = (int64_t *)out[1];
  double *total = (double *)out[2];
  int i;
  (void)weights;
  (void)arena;
  (void)index_status;
#ifdef MTE_TEST_RUN_FAILS
  return 3;
#endif
  *total = 0;
  for (i = 0; i < 6; ++i) {
    sum[i] = x[i] + 1.0f;
    *total += x[i];
  }
  for (i = 0; i < 2; ++i)
    twice[i] = ids[i] * 2;
#ifdef MTE_TEST_HAS_STATE
  for (i = 0; i < 2; ++i)
    ((float *)next_state[0])[i] = 2.0f * ((const float *)state[0])[i];
#endif
  return 0;
}

static const mte_model_abi abi = {
    MTE_TEST_ABI_VERSION,
#ifdef MTE_TEST_NO_TARGET
    NULL,
#else
    "host",
#endif
    NULL,
    2,
    3,
    0,
#ifdef MTE_TEST_NO_INPUTS
    NULL,
#else
    inputs,
#endif
    outputs,
    NULL,
    0,
    0,
    NULL,
#ifdef MTE_TEST_HAS_STATE
    1,
    states,
#else
    0,
    NULL,
#endif
    MTE_TEST_NUM_GRID_AXES,
    grid,
#ifdef MTE_TEST_NO_RUN
    NULL,
#else
    run,
#endif
};

const mte_model_abi *mte_model_get_abi(void) {
#ifdef MTE_TEST_NULL_TABLE
  return NULL;
#else
  return &abi;
#endif
}
