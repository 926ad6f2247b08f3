/*===- comm_model.c - a hand-written sharded host model -------------------===*\
|*                                                                            *|
|* A model of the device grid MTE_TEST_GRID (a list of extents, "2" or        *|
|* "2, 2") whose run calls the collectives of KernelABI.h over the grid       *|
|* axes MTE_TEST_AXES (a mask; all axes by default), whose group has          *|
|* MTE_TEST_GROUP ranks (G). Rank r (mte_comm_rank) with group index g,       *|
|* on inputs                                                                  *|
|*   x f32 [G, N], h bf16 [N], f f16 [N], d f64 [N], ids i64 [N], k i32 [N]   *|
|* with rot(v)[i] = v[(i + r) % N], computes                                  *|
|*   rank      i64 []      r                                                  *|
|*   sum       f32 [G, N]  all_reduce sum of x * (r + 1)                      *|
|*   gathered  f32 [G, N]  all_gather of row g of x * (r + 1)                 *|
|*   scattered f32 [N]     reduce_scatter sum of x * (r + 1)                  *|
|*   max_bf16  bf16 [N]    all_reduce max of rot(h)                           *|
|*   sum_bf16  bf16 [N]    all_reduce sum of rot(h)                           *|
|*   sum_f16   f16 [N]     all_reduce sum of rot(f)                           *|
|*   min_f64   f64 [N]     all_reduce min of rot(d)                           *|
|*   sum_i64   i64 [N]     all_reduce sum of ids * (r + 1), in place          *|
|*   max_i32   i32 [N]     all_reduce max of rot(k)                           *|
|* comm_model_io.py writes inputs and checks the outputs against numpy.       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "comm_grid.h"

#include "mte-c/KernelABI.h"
#include "mte-c/ModelABI.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const mte_tensor_info inputs[] = {MTE_TEST_COMM_INPUTS};
static const mte_tensor_info outputs[] = {MTE_TEST_COMM_OUTPUTS};
enum {
  kNumInputs = sizeof(inputs) / sizeof(inputs[0]),
  kNumOutputs = sizeof(outputs) / sizeof(outputs[0]),
};

/* out[i] = in[(i + shift) % N] for elements of `size` bytes. */
static void rotate(void *out, const void *in, size_t size, int64_t shift) {
  size_t head = (size_t)(shift % N);
  memcpy(out, (const char *)in + head * size, (N - head) * size);
  memcpy((char *)out + (N - head) * size, in, head * size);
}

static int32_t run(void *const *in, void *const *out, void *const *weights,
                   void *arena, int64_t *index_status, void *const *state,
                   void *const *next_state) {
  static float scaled[G * N];
  static uint16_t rotated16[N];
  static double rotated64[N];
  static int32_t rotated32[N];
  const float *x = (const float *)in[0];
  const int64_t *ids = (const int64_t *)in[4];
  int64_t *sum = (int64_t *)out[8];
  int64_t rank = mte_comm_rank(), size, g = groupIndex(rank, &size);
  int i;
  (void)weights;
  (void)arena;
  (void)index_status;
  (void)state;
  (void)next_state;
  if (size != G)
    return 1; /* MTE_TEST_GROUP does not match the grid */

  *(int64_t *)out[0] = rank;
  for (i = 0; i < G * N; ++i)
    scaled[i] = x[i] * (float)(rank + 1);
  mte_comm_all_reduce(ADDRESS(scaled), ADDRESS(out[1]), G * N, MTE_DTYPE_F32,
                      MTE_REDUCE_SUM, MTE_TEST_AXES);
  mte_comm_all_gather(ADDRESS(scaled + g * N), ADDRESS(out[2]), N,
                      MTE_DTYPE_F32, MTE_TEST_AXES);
  mte_comm_reduce_scatter(ADDRESS(scaled), ADDRESS(out[3]), N, MTE_DTYPE_F32,
                          MTE_REDUCE_SUM, MTE_TEST_AXES);

  rotate(rotated16, in[1], 2, rank);
  mte_comm_all_reduce(ADDRESS(rotated16), ADDRESS(out[4]), N, MTE_DTYPE_BF16,
                      MTE_REDUCE_MAX, MTE_TEST_AXES);
  mte_comm_all_reduce(ADDRESS(rotated16), ADDRESS(out[5]), N, MTE_DTYPE_BF16,
                      MTE_REDUCE_SUM, MTE_TEST_AXES);
  rotate(rotated16, in[2], 2, rank);
  mte_comm_all_reduce(ADDRESS(rotated16), ADDRESS(out[6]), N, MTE_DTYPE_F16,
                      MTE_REDUCE_SUM, MTE_TEST_AXES);
  rotate(rotated64, in[3], 8, rank);
  mte_comm_all_reduce(ADDRESS(rotated64), ADDRESS(out[7]), N, MTE_DTYPE_F64,
                      MTE_REDUCE_MIN, MTE_TEST_AXES);
  for (i = 0; i < N; ++i)
    sum[i] = ids[i] * (rank + 1);
  mte_comm_all_reduce(ADDRESS(sum), ADDRESS(sum), N, MTE_DTYPE_I64,
                      MTE_REDUCE_SUM, MTE_TEST_AXES);
  rotate(rotated32, in[5], 4, rank);
  mte_comm_all_reduce(ADDRESS(rotated32), ADDRESS(out[9]), N, MTE_DTYPE_I32,
                      MTE_REDUCE_MAX, MTE_TEST_AXES);
  return 0;
}

static const mte_model_abi abi = MTE_TEST_COMM_ABI("host", NULL);

const mte_model_abi *mte_model_get_abi(void) { return &abi; }
