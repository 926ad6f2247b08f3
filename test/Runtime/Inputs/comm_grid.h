/*===- comm_grid.h - the grid and groups of the comm models -------*- C -*-===*\
|*                                                                            *|
|* What comm_model.c and cuda_comm_model.c share: the device grid            *|
|* MTE_TEST_GRID (a list of extents, "2" or "2, 2"), the grid axes            *|
|* MTE_TEST_AXES their collectives name (a mask; all axes by default), the   *|
|* MTE_TEST_GROUP ranks (G) of such a group, rows of N elements, a rank's    *|
|* index in its group, the inputs and outputs both models have, and their     *|
|* model table.                                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MTE_TEST_COMM_GRID_H
#define MTE_TEST_COMM_GRID_H

#include "mte-c/ModelABI.h"

#include <stdint.h>

#ifndef MTE_TEST_GRID
#error "MTE_TEST_GRID lists the extents of the model's grid"
#endif
#ifndef MTE_TEST_GROUP
#error "MTE_TEST_GROUP is the number of ranks of a collective's group"
#endif

static const int64_t grid[] = {MTE_TEST_GRID};
enum {
  kNumAxes = sizeof(grid) / sizeof(grid[0]),
  G = MTE_TEST_GROUP,
  N = 3000
};

#ifndef MTE_TEST_AXES
#define MTE_TEST_AXES ((1 << kNumAxes) - 1)
#endif

static const int64_t groupRows[] = {G, N};
static const int64_t row[] = {N};

/* The index of `rank` in its group: its coordinates on the group's axes,
 * row-major (the group is ordered by linear index). Sets *size to the
 * group's number of ranks. */
static int64_t groupIndex(int64_t rank, int64_t *size) {
  int64_t index = 0, stride = 1, rest = rank;
  int axis;
  for (axis = kNumAxes - 1; axis >= 0; --axis) {
    int64_t coordinate = rest % grid[axis];
    rest /= grid[axis];
    if ((MTE_TEST_AXES >> axis) & 1) {
      index += coordinate * stride;
      stride *= grid[axis];
    }
  }
  *size = stride;
  return index;
}

#define ADDRESS(p) ((uint64_t)(uintptr_t)(p))

/* The inputs and outputs of both models, first in their tables (comm_model.c
 * and cuda_comm_model.c say what each holds). */
#define MTE_TEST_COMM_INPUTS                                                  \
  {"x", MTE_DTYPE_F32, 2, groupRows}, {"h", MTE_DTYPE_BF16, 1, row},          \
      {"f", MTE_DTYPE_F16, 1, row}, {"d", MTE_DTYPE_F64, 1, row},             \
      {"ids", MTE_DTYPE_I64, 1, row}, {"k", MTE_DTYPE_I32, 1, row}
#define MTE_TEST_COMM_OUTPUTS                                                 \
  {"rank", MTE_DTYPE_I64, 0, NULL}, {"sum", MTE_DTYPE_F32, 2, groupRows},     \
      {"gathered", MTE_DTYPE_F32, 2, groupRows},                              \
      {"scattered", MTE_DTYPE_F32, 1, row},                                   \
      {"max_bf16", MTE_DTYPE_BF16, 1, row},                                   \
      {"sum_bf16", MTE_DTYPE_BF16, 1, row},                                   \
      {"sum_f16", MTE_DTYPE_F16, 1, row}, {"min_f64", MTE_DTYPE_F64, 1, row}, \
      {"sum_i64", MTE_DTYPE_I64, 1, row}, {"max_i32", MTE_DTYPE_I32, 1, row}

/* The table of a model of `target` and `arch` over the tables `inputs` and
 * `outputs` (kNumInputs and kNumOutputs entries), `numWeights` weights
 * `weights` and the function `run`. */
#define MTE_TEST_COMM_ABI_WEIGHTS(target, arch, numWeights, weights)          \
  {MTE_MODEL_ABI_VERSION,                                                     \
   target,                                                                    \
   arch,                                                                      \
   kNumInputs,                                                                \
   kNumOutputs,                                                               \
   numWeights,                                                                \
   inputs,                                                                    \
   outputs,                                                                   \
   weights,                                                                   \
   0,                                                                         \
   0,                                                                         \
   NULL,                                                                      \
   0,                                                                         \
   NULL,                                                                      \
   kNumAxes,                                                                  \
   grid,                                                                      \
   run}
#define MTE_TEST_COMM_ABI(target, arch)                                       \
  MTE_TEST_COMM_ABI_WEIGHTS(target, arch, 0, NULL)

#endif /* MTE_TEST_COMM_GRID_H */
