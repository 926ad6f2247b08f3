/*===- ModelABI.h - the interface every model.so exports ----------*- C -*-===*\
|*                                                                            *|
|* mte-compile emits a shared library that exports one function,             *|
|* mte_model_get_abi(). libmte_runtime (include/mte-c/Runtime.h) opens the   *|
|* library, checks the ABI version and calls through this table; users of    *|
|* mte should use Runtime.h rather than this header.                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MTE_C_MODELABI_H
#define MTE_C_MODELABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every incompatible change of the structures below or of the
 * entry points in KernelABI.h. */
#define MTE_MODEL_ABI_VERSION 19

/* Element types, shared with Runtime.h: MTE_DTYPE_F32 = 1, ... as
 * DTypes.def lists them, with their names and sizes. */
typedef enum mte_dtype {
#define MTE_DTYPE(SUFFIX, VALUE, NAME, SIZE) MTE_DTYPE_##SUFFIX = VALUE,
#include "mte-c/DTypes.def"
} mte_dtype;

/* The epilogues a CUDA model's GEMMs ask libmte_runtime's mte_cuda_gemm for
 * (KernelABI.h): cuBLASLt's cublasLtEpilogue_t values, so the runtime passes
 * them on (and checks them against cublasLt.h where it is built with it). */
typedef enum mte_gemm_epilogue {
  MTE_GEMM_EPILOGUE_DEFAULT = 1,
  MTE_GEMM_EPILOGUE_RELU = 2,
  MTE_GEMM_EPILOGUE_BIAS = 4,  /* a flag: bias [N] in the output's type */
  MTE_GEMM_EPILOGUE_GELU = 32, /* the tanh approximation */
} mte_gemm_epilogue;

/* How an FP8 GEMM's scales are laid out (mte_cuda_gemm's `scaleMode`). */
typedef enum mte_gemm_scale_mode {
  /* One f32 scalar per operand (cuBLASLt's SCALAR_32F). */
  MTE_GEMM_SCALE_TENSOR = 0,
  /* Block scaling: x's scales one per 1x128 block of its rows, laid out
   * [k / 128, m] (cuBLASLt's VEC128_32F); W's one per 128x128 block of
   * [n, k], laid out [ceil(n / 128), k / 128 rounded up to 4]
   * (BLK128x128_32F). k a multiple of 128; f32, 16-byte aligned. */
  MTE_GEMM_SCALE_BLOCK128 = 1,
  /* Rowwise scaling: x's scales one per row, [m]; W's one per output
   * channel, [n] (cuBLASLt's OUTER_VEC_32F for both). The product's
   * [m, n] element is multiplied by both; f32, 16-byte aligned. */
  MTE_GEMM_SCALE_OUTER_VEC = 2,
} mte_gemm_scale_mode;

/* A graph input or output: its ONNX name, element type and static shape. */
typedef struct mte_tensor_info {
  const char *name;
  int32_t dtype; /* mte_dtype */
  int32_t rank;
  const int64_t *shape; /* rank entries */
} mte_tensor_info;

/* Where part of an external weight is stored: `outer` chunks of
 * `chunk_elements` elements of `dtype` each, the first at `offset` in the
 * file `location` (relative to the directory of the model library), each
 * next one `chunk_stride` elements after the previous one's start (a
 * column slice of a row-major tensor; chunk_stride == chunk_elements when
 * they are back to back). */
typedef struct mte_weight_source {
  const char *location;
  uint64_t offset;
  uint64_t chunk_elements;
  uint64_t chunk_stride;
  int32_t dtype;  /* mte_dtype stored in the file */
  uint32_t crc32; /* of the bytes read, in file order (zlib's CRC-32) */
  /* A sliced weight's (slice_parts > 1): entry g is the CRC-32 of the
   * bytes of this source that the rank holding part g reads, in file
   * order (each rank reads only those). NULL for a whole weight. */
  const uint32_t *part_crc32;
} mte_weight_source;

/* A constant tensor (weights, tables) the forward function reads. CUDA
 * models get a device copy of each, which the runtime uploads once. An
 * embedded weight has `data`; an external one (mte-compile
 * --weights=external) has none, and the runtime builds its `num_bytes` when
 * the model opens: `outer` chunks, each the sources' chunks in order, every
 * element converted from the source's dtype to `dtype`. A rank of a sliced
 * external weight builds only its part, from the source elements that part
 * is made of. */
typedef struct mte_weight_info {
  const void *data; /* in the library's read-only data, or NULL */
  uint64_t num_bytes;
  int32_t dtype; /* mte_dtype of an external weight */
  uint32_t num_sources;
  uint64_t outer;
  const mte_weight_source *sources;
  /* Sharded CUDA models: when slice_parts > 1, each rank holds only its
   * part of the weight (num_bytes is the whole's). The whole is viewed as
   * slice_outer contiguous chunks, each cut into slice_parts equal parts;
   * the rank whose index in the group of ranks over the grid axes
   * slice_grid_axes (a bit mask, as a collective's) is g gets part g of
   * every chunk, back to back: num_bytes / slice_parts bytes on its
   * device. slice_parts 0 or 1: the whole weight. */
  uint64_t slice_outer;
  uint32_t slice_parts;
  uint32_t slice_grid_axes;
  /* An external FP8 weight (--precision=fp8): with quantize_scale non-zero,
   * each element is first converted to `quantize_from` (bf16 or f32), then
   * divided by quantize_scale in f32 and encoded as `dtype` (E4M3 to
   * nearest even, saturating to +-448), as mte-compile quantized it. With
   * transpose_rows non-zero the weight as built is row-major
   * [transpose_rows, elements / transpose_rows] and is stored transposed
   * (FP8 GEMMs read their weights K-major). A rank of a sliced transposed
   * weight cuts its part from the weight as built and transposes that: a
   * split of the stored rows (slice_outer 1) is one of the built columns,
   * a split within the stored rows (slice_outer = stored rows) one of the
   * built rows (mte/Support/WeightPieces.h); no other slicing is valid. */
  float quantize_scale;
  int32_t quantize_from; /* mte_dtype */
  uint64_t transpose_rows;
  /* Block and rowwise scaling (--fp8-recipe=block, rowwise): with
   * quantize_blocks not NULL (and quantize_scale 1, the weight not
   * sliced), the weight as stored is [N, K] with K = quantize_block_k, cut
   * into blocks of R = quantize_block_rows rows and C = quantize_block_cols
   * columns (C divides K; 128 x 128 blocks, or 1 x K: one per output
   * channel), and element [n, k] is divided by
   * quantize_blocks[(n / R) * (K / C) + k / C] instead. */
  const float *quantize_blocks;
  uint64_t quantize_block_k;
  uint64_t quantize_block_rows;
  uint64_t quantize_block_cols;
  /* Pipeline-parallel CUDA models (--pp): 0 when every rank holds the
   * weight; s + 1 when only the ranks of stage s do (the stage of rank r is
   * r / the product of grid_shape[1..]: the grid's first axis is the
   * pipeline's). The other ranks upload nothing and pass NULL. */
  uint32_t pipeline_stage;
} mte_weight_info;

/* An index check: the indices of an ONNX `op` (Gather, GatherElements,
 * GatherND, ScatterND) at `node`, which come from graph input `source` (""
 * when the model computes them). An index at flat position p is valid in
 * [-b, b) for b = bounds[0] when num_bounds is 1, else bounds[p % num_bounds]
 * (one per component of GatherND's index tuples). */
typedef struct mte_index_check {
  const char *op;
  const char *node;
  const char *source;
  uint32_t num_bounds;
  const int64_t *bounds;
} mte_index_check;

/* What a model state holds (mte_state_info), which decides the values
 * mte_model_set_state accepts. */
typedef enum mte_state_kind {
  /* FP8 delayed scaling's amax history, f32 [L, T]: row 0 the current
   * slot (zeroed after each run), rows 1.. the earlier runs' amaxes of the
   * T quantised tensors. Values are >= 0 or NaN. */
  MTE_STATE_FP8_AMAX_HISTORY = 1,
  /* FP8 delayed scaling's scales, f32 [T]: the multiplier each quantised
   * tensor is scaled by before its cast (TransformerEngine's `scale`;
   * 1/scale dequantises), 1 until measured, as TE starts. Values are
   * finite and > 0. */
  MTE_STATE_FP8_SCALE = 2,
} mte_state_kind;

/* A tensor the model carries from one run to the next. The runtime owns
 * two buffers of it per open model: run reads the current one (`state`)
 * and writes the next value into the other (`next_state`); after a run
 * that succeeded the two swap, unless the state is frozen. */
typedef struct mte_state_info {
  mte_tensor_info tensor;
  int32_t kind; /* mte_state_kind */
  /* The value a model opens with, tensor-sized; NULL: all zeros. */
  const void *initial;
  /* What each index of the last dimension holds (for FP8 state: the
   * quantised tensors, "<ONNX node>.input"), or none. */
  uint32_t num_labels;
  const char *const *labels;
} mte_state_info;

typedef struct mte_model_abi {
  uint32_t abi_version; /* MTE_MODEL_ABI_VERSION */
  const char *target;   /* "host" or "cuda" */
  const char *gpu_arch; /* "sm_90a", "sm_89", ...; null for host models */
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t num_weights;
  const mte_tensor_info *inputs;
  const mte_tensor_info *outputs;
  const mte_weight_info *weights;
  /* CUDA models: the size of the activation arena, the one device buffer
   * that holds the forward's intermediates at offsets planned at compile
   * time. The runtime allocates it once (at least 256-byte aligned) and
   * passes it to every run; 0 when the model needs none. */
  uint64_t arena_bytes;
  /* The model's index checks. Out-of-range indices never make it read or
   * write outside a tensor (they are clamped); when there are checks, run
   * also writes 3 int64 values per check to `index_status`: the number of
   * out-of-range indices, the flat position of the first (-1 when none)
   * and its value. The runtime passes a buffer of 3 * num_index_checks
   * int64 (a device buffer for CUDA models) and fails the run when a count
   * is not 0. */
  uint32_t num_index_checks;
  const mte_index_check *index_checks;
  /* The model's states, in the order `run` takes them. */
  uint32_t num_states;
  const mte_state_info *states;
  /* The device grid a sharded model was compiled for (mte-compile --tp):
   * num_grid_axes extents, row-major, so a rank's grid coordinates are its
   * linear index (mte_comm_rank) in that order. Each rank opens the same
   * library and runs its part; the model's collectives (KernelABI.h) name
   * grid axes. 0 axes: an unsharded model. */
  uint32_t num_grid_axes;
  const int64_t *grid_shape;
  /* Runs the model once. inputs[i] and outputs[i] point to dense,
   * row-major buffers of the described types and shapes, owned by the
   * caller; outputs are overwritten. For a CUDA model they are device
   * buffers, weights[i] the device copy of weight i, `arena` the device
   * buffer of arena_bytes (null when that is 0), and the work is enqueued
   * on the stream the runtime set (mte_cuda_set_stream) and finished when
   * run returns. state[i] holds state i's current value, which run reads,
   * and next_state[i] a different buffer of the same size, which run
   * overwrites with its next value (device buffers for CUDA models).
   * Returns 0 on success and a non-zero value when the model could not
   * run. Safe to call from one thread at a time per loaded model. */
  int32_t (*run)(void *const *inputs, void *const *outputs,
                 void *const *weights, void *arena, int64_t *index_status,
                 void *const *state, void *const *next_state);
} mte_model_abi;

/* Exported by every model.so. */
const mte_model_abi *mte_model_get_abi(void);

#ifdef __cplusplus
}
#endif

#endif /* MTE_C_MODELABI_H */
