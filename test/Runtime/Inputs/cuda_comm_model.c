/*===- cuda_comm_model.c - a hand-written sharded CUDA model ------*- C -*-===*\
|*                                                                            *|
|* A CUDA model without kernels of the device grid MTE_TEST_GRID (default    *|
|* "1"; comm_grid.h) whose run calls the collectives of KernelABI.h on its   *|
|* device buffers, as compiled models do from their host code, over the grid *|
|* axes MTE_TEST_AXES, whose group has MTE_TEST_GROUP ranks (G, default 1).  *|
|* Rank r with group index g, on inputs                                       *|
|*   x f32 [G, N], h bf16 [N], f f16 [N], d f64 [N], ids i64 [N], k i32 [N],  *|
|*   q f8e4m3fn [N]                                                           *|
|* computes                                                                   *|
|*   rank        i64 []      r (mte_comm_rank, written by two memsets)        *|
|*   sum         f32 [G, N]  all_reduce sum of x                              *|
|*   gathered    f32 [G, N]  all_gather of row g of x                         *|
|*   scattered   f32 [N]     reduce_scatter sum of x                          *|
|*   max_bf16    bf16 [N]    all_reduce max of h                              *|
|*   sum_bf16    bf16 [N]    all_reduce sum of h                              *|
|*   sum_f16     f16 [N]     all_reduce sum of f                              *|
|*   min_f64     f64 [N]     all_reduce min of d                              *|
|*   sum_i64     i64 [N]     all_reduce sum of ids, in place                  *|
|*   max_i32     i32 [N]     all_reduce max of k                              *|
|*   gathered_f8 f8e4m3fn [G, N]  all_gather of q                             *|
|*   alone       f32 [N]     all_reduce sum of row 0 of x over no axis        *|
|*   broadcast   f32 [N]     broadcast of row 0 of x from the group's index 0 *|
|*   passed      f32 [N]     row g of x, except at an odd g: row g - 1, which *|
|*                           index g - 1 sends it (send and recv in pairs)    *|
|*   weight_part f32 [4, 2]  its part of the weight f32 [4, 2G] (element      *|
|*                           (i, j) = 100 i + j), cut along its columns among *|
|*                           the group when the runtime uploads it: columns   *|
|*                           2g and 2g + 1                                    *|
|* With MTE_TEST_EXTERNAL the weight is external: weights.bin beside the    *|
|* library holds the f32 [4, 2G] matrix, read as two sources of G columns    *|
|* (4 chunks each, 2G elements apart), each with the CRC-32 of every part's  *|
|* bytes (computed here, with zlib): a rank reads only its columns. Those    *|
|* variants have a second, FP8 weight f8e4m3fn [4, 2]: the first 8 floats   *|
|* of weights.bin rounded to bf16, divided by 4 and encoded as E4M3, then    *|
|* transposed from [2, 4] (model ABI 12's quantize_scale and               *|
|* transpose_rows), its rows cut among the group: a rank builds its part    *|
|* from columns 4g/G .. 4(g+1)/G of the [2, 4] it is transposed from.       *|
|* Output weight_fp8 f8e4m3fn [4/G, 2] is a copy of that part.              *|
|* With every rank given the same inputs, NCCL makes sum and sum_* G times   *|
|* the input (rounded to its type), gathered = x, scattered = G x[g], the    *|
|* max and min their input, gathered_f8 G copies of q and alone row 0 of x;  *|
|* for one rank every output but `rank` is its input. utils/gpu/check_nccl.py *|
|* runs it on GPUs, nccl.test on fake_cuda.c and fake_nccl.c.                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MTE_TEST_GRID
#define MTE_TEST_GRID 1
#endif
#ifndef MTE_TEST_GROUP
#define MTE_TEST_GROUP 1
#endif

#include "comm_grid.h"

/* The parts its weight is cut into (G; another count is a malformed
 * table the runtime refuses), and its pipeline stage + 1 (0: every rank's;
 * a stage the grid lacks is malformed too). */
#ifndef MTE_TEST_SLICE_PARTS
#define MTE_TEST_SLICE_PARTS G
#endif
#ifndef MTE_TEST_PIPELINE_STAGE
#define MTE_TEST_PIPELINE_STAGE 0
#endif

#include "mte-c/KernelABI.h"
#include "mte-c/ModelABI.h"

#include <stddef.h>
#include <stdint.h>

/* libmte_runtime's stream and copies (MLIR's CUDA runtime ABI). */
void *mgpuStreamCreate(void);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);

static const mte_tensor_info inputs[] = {
    MTE_TEST_COMM_INPUTS,
    {"q", MTE_DTYPE_F8E4M3FN, 1, row},
};

static const int64_t partShape[] = {4, 2};
static const int64_t fp8PartShape[] = {4 / G, 2};
static const mte_tensor_info outputs[] = {
    MTE_TEST_COMM_OUTPUTS,
    {"gathered_f8", MTE_DTYPE_F8E4M3FN, 2, groupRows},
    {"alone", MTE_DTYPE_F32, 1, row},
    {"broadcast", MTE_DTYPE_F32, 1, row},
    {"passed", MTE_DTYPE_F32, 1, row},
    {"weight_part", MTE_DTYPE_F32, 2, partShape},
#ifdef MTE_TEST_EXTERNAL
    {"weight_fp8", MTE_DTYPE_F8E4M3FN, 2, fp8PartShape},
#endif
};

/* The whole weight, filled in by mte_model_get_abi, which the runtime
 * calls before it uploads the weights. */
static float wholeWeight[4 * 2 * G];
#ifdef MTE_TEST_EXTERNAL
#include <zlib.h>
/* Per source, the CRC-32 of the bytes each part reads, and of them all. */
static uint32_t partCrc[2][G];
static mte_weight_source sources[2] = {
    {"weights.bin", 0, G, 2 * G, MTE_DTYPE_F32, 0, partCrc[0]},
    {"weights.bin", G * sizeof(float), G, 2 * G, MTE_DTYPE_F32, 0, partCrc[1]},
};
static uint32_t fp8PartCrc[G];
static mte_weight_source fp8Source[1] = {
    {"weights.bin", 0, 8, 8, MTE_DTYPE_F32, 0, fp8PartCrc},
};
static const mte_weight_info weightTable[] = {
    {NULL, sizeof(wholeWeight), MTE_DTYPE_F32, 2, 4, sources, 4,
     MTE_TEST_SLICE_PARTS, MTE_TEST_AXES},
    {NULL, 8, MTE_DTYPE_F8E4M3FN, 1, 1, fp8Source, 1, G, MTE_TEST_AXES, 4.0f,
     MTE_DTYPE_BF16, 2},
};

/* Source s holds columns [sG, sG + G); part g columns [2g, 2g + 2). */
static void computeCrcs(void) {
  for (int s = 0; s < 2; ++s) {
    uLong all = crc32(0, Z_NULL, 0);
    for (int g = 0; g < G; ++g)
      partCrc[s][g] = (uint32_t)crc32(0, Z_NULL, 0);
    for (int i = 0; i < 4; ++i)
      for (int j = s * G; j < s * G + G; ++j) {
        const Bytef *bytes = (const Bytef *)&wholeWeight[i * 2 * G + j];
        all = crc32(all, bytes, sizeof(float));
        partCrc[s][j / 2] = (uint32_t)crc32(partCrc[s][j / 2], bytes,
                                            sizeof(float));
      }
    sources[s].crc32 = (uint32_t)all;
  }
  fp8Source[0].crc32 =
      (uint32_t)crc32(crc32(0, Z_NULL, 0), (const Bytef *)wholeWeight,
                      8 * sizeof(float));
  /* Part g reads columns [4g/G, 4(g+1)/G) of each of the 2 rows. */
  for (int g = 0; g < G; ++g) {
    uLong crc = crc32(0, Z_NULL, 0);
    for (int r = 0; r < 2; ++r)
      crc = crc32(crc, (const Bytef *)&wholeWeight[r * 4 + g * 4 / G],
                  (4 / G) * sizeof(float));
    fp8PartCrc[g] = (uint32_t)crc;
  }
}
#else
static const mte_weight_info weightTable[] = {
    {wholeWeight, sizeof(wholeWeight), 0, 0, 1, NULL, 4, MTE_TEST_SLICE_PARTS,
     MTE_TEST_AXES, 0.0f, 0, 0, NULL, 0, 0, 0, MTE_TEST_PIPELINE_STAGE},
};
#endif
enum {
  kNumInputs = sizeof(inputs) / sizeof(inputs[0]),
  kNumOutputs = sizeof(outputs) / sizeof(outputs[0]),
};

static int32_t run(void *const *in, void *const *out, void *const *weights,
                   void *arena, int64_t *index_status, void *const *state,
                   void *const *next_state) {
  void *stream = mgpuStreamCreate();
  int64_t rank = mte_comm_rank(), size, g = groupIndex(rank, &size);
  const float *x = (const float *)in[0];
  (void)arena;
  (void)index_status;
  (void)state;
  (void)next_state;
  if (size != G)
    return 1; /* MTE_TEST_GROUP does not match the grid */

  mgpuMemset32(out[0], (unsigned)rank, 1, stream);
  mgpuMemset32((char *)out[0] + 4, 0, 1, stream);
  mte_comm_all_reduce(ADDRESS(x), ADDRESS(out[1]), G * N, MTE_DTYPE_F32,
                      MTE_REDUCE_SUM, MTE_TEST_AXES);
  mte_comm_all_gather(ADDRESS(x + g * N), ADDRESS(out[2]), N, MTE_DTYPE_F32,
                      MTE_TEST_AXES);
  mte_comm_reduce_scatter(ADDRESS(x), ADDRESS(out[3]), N, MTE_DTYPE_F32,
                          MTE_REDUCE_SUM, MTE_TEST_AXES);
  mte_comm_all_reduce(ADDRESS(in[1]), ADDRESS(out[4]), N, MTE_DTYPE_BF16,
                      MTE_REDUCE_MAX, MTE_TEST_AXES);
  mte_comm_all_reduce(ADDRESS(in[1]), ADDRESS(out[5]), N, MTE_DTYPE_BF16,
                      MTE_REDUCE_SUM, MTE_TEST_AXES);
  mte_comm_all_reduce(ADDRESS(in[2]), ADDRESS(out[6]), N, MTE_DTYPE_F16,
                      MTE_REDUCE_SUM, MTE_TEST_AXES);
  mte_comm_all_reduce(ADDRESS(in[3]), ADDRESS(out[7]), N, MTE_DTYPE_F64,
                      MTE_REDUCE_MIN, MTE_TEST_AXES);
  mgpuMemcpy(out[8], in[4], N * sizeof(int64_t), stream);
  mte_comm_all_reduce(ADDRESS(out[8]), ADDRESS(out[8]), N, MTE_DTYPE_I64,
                      MTE_REDUCE_SUM, MTE_TEST_AXES);
  mte_comm_all_reduce(ADDRESS(in[5]), ADDRESS(out[9]), N, MTE_DTYPE_I32,
                      MTE_REDUCE_MAX, MTE_TEST_AXES);
  mte_comm_all_gather(ADDRESS(in[6]), ADDRESS(out[10]), N, MTE_DTYPE_F8E4M3FN,
                      MTE_TEST_AXES);
  mte_comm_all_reduce(ADDRESS(x), ADDRESS(out[11]), N, MTE_DTYPE_F32,
                      MTE_REDUCE_SUM, 0);
  mte_comm_broadcast(ADDRESS(x), ADDRESS(out[12]), N, MTE_DTYPE_F32, 0,
                     MTE_TEST_AXES);
  /* A pipeline's hand-off: an even index sends its row to the next. */
  mgpuMemcpy(out[13], (void *)ADDRESS(x + g * N), N * sizeof(float), stream);
  if (g % 2 == 0 && g + 1 < G)
    mte_comm_send(ADDRESS(x + g * N), N, MTE_DTYPE_F32, g + 1, MTE_TEST_AXES);
  else if (g % 2 == 1)
    mte_comm_recv(ADDRESS(out[13]), N, MTE_DTYPE_F32, g - 1, MTE_TEST_AXES);
  mgpuMemcpy(out[14], weights[0], 8 * sizeof(float), stream);
#ifdef MTE_TEST_EXTERNAL
  mgpuMemcpy(out[15], weights[1], 8 / G, stream);
#endif
  return 0;
}

static const mte_model_abi abi = MTE_TEST_COMM_ABI_WEIGHTS(
    "cuda", "sm_70", sizeof(weightTable) / sizeof(weightTable[0]),
    weightTable);

const mte_model_abi *mte_model_get_abi(void) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2 * G; ++j)
      wholeWeight[i * 2 * G + j] = (float)(100 * i + j);
#ifdef MTE_TEST_EXTERNAL
  computeCrcs();
#endif
  return &abi;
}
