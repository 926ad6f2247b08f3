/*===- Runtime.h - the mte runtime C API --------------------------*- C -*-===*\
|*                                                                            *|
|* libmte_runtime opens a model.so produced by mte-compile, describes its     *|
|* inputs and outputs and runs it on caller-provided buffers. It depends on   *|
|* the C and C++ standard libraries and the dynamic loader only, so it runs   *|
|* on machines without LLVM or MLIR.                                          *|
|*                                                                            *|
|* Errors. Every function that can fail returns an mte_status. MTE_OK means   *|
|* success; any other value comes with a message, read with mte_last_error()  *|
|* on the same thread, that names the model file, the tensor and what was     *|
|* expected and given. Invalid arguments (null pointers, unknown names,       *|
|* wrong shapes or element types) are reported this way, never by crashing.   *|
|*                                                                            *|
|* Threads. Functions may be called from any thread. mte_model_run and        *|
|* mte_model_run_tensors serialise runs of the same model library, so one     *|
|* model may be shared between threads; runs of different libraries proceed   *|
|* in parallel. A model must not be closed while another thread uses it.      *|
|*                                                                            *|
|* Accessors (mte_model_path, mte_model_num_inputs, ...) given a NULL model   *|
|* return NULL or 0.                                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MTE_C_RUNTIME_H
#define MTE_C_RUNTIME_H

#include "mte-c/ModelABI.h"

#include <stddef.h>
#include <stdint.h>

#if defined(MTE_RUNTIME_BUILD) && defined(__GNUC__)
#define MTE_RUNTIME_API __attribute__((visibility("default")))
#else
#define MTE_RUNTIME_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Versions ----------------------------------------------------------===*/

#define MTE_RUNTIME_VERSION_MAJOR 0
#define MTE_RUNTIME_VERSION_MINOR 16
#define MTE_RUNTIME_VERSION_PATCH 0

/* Returns the version of the loaded runtime library as "MAJOR.MINOR.PATCH".
 * The string is static. */
MTE_RUNTIME_API const char *mte_runtime_version(void);

/* Returns the model ABI version (MTE_MODEL_ABI_VERSION in ModelABI.h) that
 * the loaded runtime library accepts; mte_model_open rejects any other. */
MTE_RUNTIME_API uint32_t mte_runtime_model_abi_version(void);

/*===-- Status ------------------------------------------------------------===*/

typedef enum mte_status {
  MTE_OK = 0,
  /* A null pointer, a count that does not match the model, an input given
   * twice or not at all, a rank outside its world, a sharded model opened
   * in a world other than its grid. */
  MTE_ERROR_INVALID_ARGUMENT = 1,
  /* The model file, or the file of its external weights, does not exist or
   * cannot be read, or the weights differ from the compiled ones; or the
   * ranks of a sharded model could not meet: the shared memory of their
   * communicator failed, not every rank joined in time, or NCCL could not
   * make the communicator of a sharded CUDA model. */
  MTE_ERROR_IO = 2,
  /* The dynamic loader rejected the file: not a shared library for this
   * machine, or one of its dependencies is missing. */
  MTE_ERROR_LOAD = 3,
  /* The library loaded but is not an mte model: it does not export
   * mte_model_get_abi, or its table is malformed. */
  MTE_ERROR_NOT_A_MODEL = 4,
  /* The model was compiled for another model ABI version. */
  MTE_ERROR_ABI_VERSION = 5,
  /* The model has no input or output of the given name. */
  MTE_ERROR_UNKNOWN_NAME = 6,
  /* A tensor's element type differs from the model's. */
  MTE_ERROR_DTYPE_MISMATCH = 7,
  /* A tensor's shape differs from the model's. */
  MTE_ERROR_SHAPE_MISMATCH = 8,
  /* The model's run function reported a failure, or a collective of a
   * sharded model failed (another rank failed, exited or timed out; NCCL
   * failed). */
  MTE_ERROR_RUN_FAILED = 9,
  /* An output buffer, or device memory for a CUDA model (weights, staging
   * buffers, activation arena, allocations during a run), could not be
   * allocated. */
  MTE_ERROR_OUT_OF_MEMORY = 10,
  /* A CUDA model cannot use the GPU: no driver, no device, an architecture
   * the model was not compiled for, or a device memory failure; or it is
   * sharded and NCCL (libnccl.so.2), which its collectives run on, cannot
   * be loaded. */
  MTE_ERROR_DEVICE = 11,
  /* An input's values are invalid for the model: an index (a token id, a
   * position) outside the range of the table a Gather or Scatter reads.
   * The message names the node, the input and the value. The outputs of
   * that run are unspecified, but no memory outside the model's tensors
   * was read or written. (Models compiled with --index-check=clamp clamp
   * such indices instead.) */
  MTE_ERROR_INVALID_INPUT = 12,
} mte_status;

/* Returns a short lower-case description of `status` ("ok", "invalid
 * argument", "shape mismatch", ...), or "unknown status" for a value outside
 * the enumeration. The string is static. */
MTE_RUNTIME_API const char *mte_status_name(mte_status status);

/* Returns the message of the most recent call on this thread that returned a
 * status: empty after MTE_OK, the reason otherwise. The string belongs to the
 * runtime and stays valid until the next such call on this thread. */
MTE_RUNTIME_API const char *mte_last_error(void);

/*===-- Element types -----------------------------------------------------===*/

/* Returns the short name of an mte_dtype value ("f32", "bf16", "i64", "bool",
 * "f8e4m3fn", ...), or NULL when `dtype` is not an mte_dtype. The names match
 * the ones mte-compile and mte-run print. */
MTE_RUNTIME_API const char *mte_dtype_name(int32_t dtype);

/* Returns the size in bytes of one element of `dtype`, or 0 when `dtype` is
 * not an mte_dtype. */
MTE_RUNTIME_API size_t mte_dtype_size(int32_t dtype);

/*===-- Models ------------------------------------------------------------===*/

/* A loaded model.so. Opaque; created by mte_model_open, released by
 * mte_model_close. */
typedef struct mte_model mte_model;

/* Loads the model library at `path` (a file path, not a library name: it is
 * not looked up in the loader's search path), checks that it exports
 * mte_model_get_abi with this runtime's model ABI version and a well-formed
 * table, and stores a new handle in `*model`. On failure `*model` is set to
 * NULL. Opening the same file twice yields two handles over one loaded
 * library; runs through either are serialised. A CUDA model runs on device
 * 0: this is mte_model_open_with_options(path, NULL, model). */
MTE_RUNTIME_API mte_status mte_model_open(const char *path, mte_model **model);

/* The device of mte_open_options that means "the runtime's choice": the
 * launcher's local rank ($LOCAL_RANK, torchrun's; else
 * $OMPI_COMM_WORLD_LOCAL_RANK, Open MPI's; else $MPI_LOCALRANKID, MPICH's)
 * for a CUDA model, so that each rank of a machine gets a GPU of its own;
 * else device 0. */
#define MTE_DEVICE_DEFAULT (-1)

/* How mte_model_open_with_options opens a model. Fields are only ever added
 * at the end, so set every field you know, struct_size first:
 *   mte_open_options options = {sizeof(mte_open_options), 1}; */
typedef struct mte_open_options {
  /* sizeof(mte_open_options) in the caller's Runtime.h. The runtime takes
   * any size from that of the first version (8 bytes: up to `device`) to
   * its own, and gives the fields past struct_size their defaults; a size
   * outside that range (a program built with a newer Runtime.h than the
   * runtime it runs with) is MTE_ERROR_INVALID_ARGUMENT. */
  uint32_t struct_size;
  /* The CUDA device a CUDA model runs on, as the driver numbers the devices
   * it sees (CUDA_VISIBLE_DEVICES applies), or MTE_DEVICE_DEFAULT. The
   * ranks of a sharded CUDA model must run on different GPUs. A device
   * the driver does not have is MTE_ERROR_DEVICE, and the message names
   * it. Host models run on the CPU: they take 0 or MTE_DEVICE_DEFAULT, and
   * any other device is MTE_ERROR_INVALID_ARGUMENT, as is a value below -1
   * for every model. A library's kernels are loaded into the device it is
   * opened on when it loads: while it stays loaded (at least while a handle
   * on it is open), opening the same file on another device is
   * MTE_ERROR_DEVICE (open a copy of the file). */
  int32_t device;
  /* Added in 0.6.0 (struct_size 24 on 64-bit machines). A sharded model
   * (mte-compile --tp; mte_model_num_grid_axes > 0) runs as one rank of
   * the grid it was compiled for, one process per rank: `world_size` must
   * be the grid's size and `rank` this process's rank, 0 <= rank <
   * world_size. A world_size of 0 (or less; MTE_WORLD_SIZE_DEFAULT) takes
   * both from the launcher's environment: RANK and WORLD_SIZE (torchrun),
   * else OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE (Open MPI), else
   * PMI_RANK and PMI_SIZE (MPICH, Intel MPI), else rank 0 of 1; `rank` must
   * then be 0 or MTE_RANK_DEFAULT. A positive world_size with
   * MTE_RANK_DEFAULT takes only the rank from there. An unsharded model
   * takes any world (each rank is an independent replica). */
  int32_t rank;
  int32_t world_size;
  /* The name the ranks of one sharded model meet under, the same string
   * in every rank (a job id), or NULL: $MTE_COMM_ID, else
   * "$MASTER_ADDR:$MASTER_PORT" (torchrun), else one derived from the
   * parent process, which the ranks a launcher starts on one machine
   * share. Opening a sharded model on more than one rank blocks until
   * every rank has opened it (at most $MTE_COMM_TIMEOUT seconds, default
   * 60: then MTE_ERROR_IO); the k-th open of a sharded model under one
   * name in a process meets the k-th open of every other rank. */
  const char *comm_id;
  /* Added in 0.7.0 (struct_size 32 on 64-bit machines). A sharded CUDA
   * model's collectives run on NCCL, whose ranks meet through a unique id
   * (ncclUniqueId, 128 bytes) that one rank makes and every rank is given.
   * Taken, in order: from NCCL itself when $NCCL_COMM_ID ("host:port" of
   * rank 0) is set; from here, when not NULL: the same
   * MTE_NCCL_UNIQUE_ID_BYTES bytes in every rank, which a launcher made
   * with mte_nccl_get_unique_id and sent to the ranks (several machines);
   * else rank 0 makes one and sends it to the others through the host
   * communicator of `comm_id` (ranks on one machine only). Ignored by
   * other models. */
  const void *nccl_unique_id;
} mte_open_options;

/* The size of an NCCL unique id (NCCL_UNIQUE_ID_BYTES). */
#define MTE_NCCL_UNIQUE_ID_BYTES 128

/* Makes a new NCCL unique id (ncclGetUniqueId), which names rank 0's
 * address, in `id`, MTE_NCCL_UNIQUE_ID_BYTES bytes: rank 0 of a sharded
 * CUDA model's ranks calls it and passes the bytes to every rank, which
 * opens the model with them in mte_open_options.nccl_unique_id. Loads NCCL
 * (MTE_ERROR_DEVICE when it cannot); MTE_ERROR_INVALID_ARGUMENT for a
 * NULL `id`, MTE_ERROR_IO when NCCL fails (no network interface). */
MTE_RUNTIME_API mte_status mte_nccl_get_unique_id(void *id);

/* The rank of mte_open_options that means "the launcher's" (above). */
#define MTE_RANK_DEFAULT (-1)

/* The world_size of mte_open_options that means "the launcher's". */
#define MTE_WORLD_SIZE_DEFAULT 0

/* mte_model_open with options; NULL `options` means the defaults. */
MTE_RUNTIME_API mte_status mte_model_open_with_options(
    const char *path, const mte_open_options *options, mte_model **model);

/* Releases `model` and unloads its library once no other handle uses it.
 * A run of `model` in progress on another thread finishes first (close
 * waits for it); calling any function with `model` once close has begun is
 * undefined (the Python package counts its calls and refuses them).
 * Metadata pointers obtained from `model` become invalid; buffers returned
 * by mte_model_run_tensors do not. Accepts NULL. */
MTE_RUNTIME_API void mte_model_close(mte_model *model);

/* Returns the path `model` was opened with. Valid until close. */
MTE_RUNTIME_API const char *mte_model_path(const mte_model *model);

/* Returns the target the model was compiled for ("host" or "cuda"). Valid
 * until close. */
MTE_RUNTIME_API const char *mte_model_target(const mte_model *model);

/* Returns this process's rank in the world `model` was opened in (0 when
 * it was opened alone), for a sharded model its linear index in the grid. */
MTE_RUNTIME_API int32_t mte_model_rank(const mte_model *model);

/* Returns the number of ranks `model` was opened with (1 when alone). */
MTE_RUNTIME_API int32_t mte_model_world_size(const mte_model *model);

/* Returns the number of axes of the device grid a sharded model was
 * compiled for; 0 for an unsharded model. */
MTE_RUNTIME_API size_t mte_model_num_grid_axes(const mte_model *model);

/* Returns the extent of axis `axis` of the model's grid (row-major: the
 * last axis varies fastest with the rank), or 0 when `axis` is out of
 * range. */
MTE_RUNTIME_API int64_t mte_model_grid_axis(const mte_model *model,
                                            size_t axis);

/* Returns the number of graph inputs of `model`. */
MTE_RUNTIME_API size_t mte_model_num_inputs(const mte_model *model);

/* Returns the number of graph outputs of `model`. */
MTE_RUNTIME_API size_t mte_model_num_outputs(const mte_model *model);

/* Returns the name, element type and shape of input `index` (in the order
 * mte_model_run takes them), or NULL when `index` is out of range. The
 * description is a copy owned by `model`, valid until close. */
MTE_RUNTIME_API const mte_tensor_info *mte_model_input(const mte_model *model,
                                                       size_t index);

/* Returns the description of output `index`, like mte_model_input. */
MTE_RUNTIME_API const mte_tensor_info *mte_model_output(const mte_model *model,
                                                        size_t index);

/* Stores in `*index` the position of the input called `name`. Fails with
 * MTE_ERROR_UNKNOWN_NAME, whose message lists the model's inputs, when there
 * is none. */
MTE_RUNTIME_API mte_status mte_model_find_input(const mte_model *model,
                                                const char *name,
                                                size_t *index);

/* Stores in `*index` the position of the output called `name`, like
 * mte_model_find_input. */
MTE_RUNTIME_API mte_status mte_model_find_output(const mte_model *model,
                                                 const char *name,
                                                 size_t *index);

/*===-- Model state -------------------------------------------------------===*/

/* A model may carry state from one run to the next: FP8 delayed scaling's
 * amax history and scales (mte-compile --fp8-recipe=delayed; docs/fp8.md),
 * which each run updates. Each open handle has its own copy, starting at
 * the values compiled into the model. The functions below take the model's
 * run lock; reading waits for the runs enqueued before (mte_model_run_device
 * included), setting applies to the runs after. */

/* Returns the number of states of `model` (0 for NULL). */
MTE_RUNTIME_API size_t mte_model_num_states(const mte_model *model);

/* Returns the name, element type and shape of state `index` ("fp8.scale",
 * ...), or NULL when `index` is out of range; valid until close. */
MTE_RUNTIME_API const mte_tensor_info *mte_model_state(const mte_model *model,
                                                       size_t index);

/* Returns the mte_state_kind of state `index` (ModelABI.h), or 0. */
MTE_RUNTIME_API int32_t mte_model_state_kind(const mte_model *model,
                                             size_t index);

/* Returns the number of labels of state `index` (one per index of its last
 * dimension: for FP8 state the quantised tensors), or 0. */
MTE_RUNTIME_API size_t mte_model_state_num_labels(const mte_model *model,
                                                  size_t index);

/* Returns label `label` of state `index`, or NULL; valid until close. */
MTE_RUNTIME_API const char *mte_model_state_label(const mte_model *model,
                                                  size_t index, size_t label);

/* Stores in `*index` the position of the state called `name`, like
 * mte_model_find_input. */
MTE_RUNTIME_API mte_status mte_model_find_state(const mte_model *model,
                                                const char *name,
                                                size_t *index);

/* Copies the current value of state `index` into `data`, a host buffer of
 * `num_bytes`, which must be the state's size. */
MTE_RUNTIME_API mte_status mte_model_get_state(mte_model *model, size_t index,
                                               void *data, size_t num_bytes);

/* Sets the current value of state `index` from `data` (`num_bytes`, the
 * state's size). The values must be what the state's kind admits (an FP8
 * scale finite and >= 0, an amax >= 0 or NaN); otherwise nothing changes
 * and MTE_ERROR_INVALID_ARGUMENT names the first offending value's label. */
MTE_RUNTIME_API mte_status mte_model_set_state(mte_model *model, size_t index,
                                               const void *data,
                                               size_t num_bytes);

/* Sets every state back to the value compiled into the model. */
MTE_RUNTIME_API mte_status mte_model_reset_state(mte_model *model);

/* With `frozen` non-zero, runs read the states but no longer update them
 * (a deployment calibrates, then freezes); zero resumes the updates. */
MTE_RUNTIME_API mte_status mte_model_freeze_state(mte_model *model,
                                                  int frozen);

/* Returns whether the states of `model` are frozen (0 for NULL). */
MTE_RUNTIME_API int mte_model_state_frozen(const mte_model *model);

/*===-- Running -----------------------------------------------------------===*/

/* Runs `model` once on positional buffers. `inputs` holds `num_inputs`
 * pointers, one per model input in order, each to a dense row-major buffer
 * of that input's element type and shape; `outputs` likewise holds
 * `num_outputs` buffers that the run overwrites. The runtime checks the
 * counts and that no pointer is NULL; it cannot check buffer sizes, so use
 * mte_model_run_tensors when shapes and types come from the caller. Inputs
 * are not modified. */
MTE_RUNTIME_API mte_status mte_model_run(mte_model *model, size_t num_inputs,
                                         const void *const *inputs,
                                         size_t num_outputs,
                                         void *const *outputs);

/* Runs a CUDA model on device buffers, on the caller's stream. `inputs` and
 * `outputs` hold one CUDA device pointer per model input and output, in
 * order, to dense row-major buffers of the model's types and shapes, on
 * the model's device; `stream` is a CUstream (cudaStream_t) there, NULL
 * for the legacy default stream. The run is ordered after the work already enqueued on `stream`,
 * and work the caller enqueues on `stream` afterwards is ordered after the
 * run; the call returns once the run is enqueued, without waiting for it.
 * The forward reads the inputs and writes the outputs where they are (no
 * copies); the runtime captures it as a CUDA graph per set of buffer
 * addresses and replays that graph when the same addresses come again (the
 * 8 sets used last are kept). An output that overlaps an input is allowed:
 * the inputs are then copied into the model's own buffers first. Host models: MTE_ERROR_INVALID_ARGUMENT. Errors the
 * GPU reports while the run executes surface on the stream (and in the
 * next call). An out-of-range index, which the synchronous runs report as
 * MTE_ERROR_INVALID_INPUT when they return, is known only once the run
 * has finished: the first call on the model made after that (any run
 * function) returns MTE_ERROR_INVALID_INPUT for it, naming the earlier
 * run, and does not run. */
MTE_RUNTIME_API mte_status mte_model_run_device(mte_model *model,
                                                size_t num_inputs,
                                                const void *const *inputs,
                                                size_t num_outputs,
                                                void *const *outputs,
                                                void *stream);

/* A named tensor passed to mte_model_run_tensors: a dense, row-major buffer
 * with its element type and shape. */
typedef struct mte_tensor {
  const char *name;     /* a graph input or output name */
  int32_t dtype;        /* mte_dtype */
  int32_t rank;         /* number of entries in shape */
  const int64_t *shape; /* may be NULL when rank is 0 */
  void *data;
} mte_tensor;

/* Runs `model` once on named tensors, checking every name, element type and
 * shape against the model before it runs.
 *
 * `inputs` holds `num_inputs` tensors, in any order, that name every model
 * input exactly once; each data pointer must be non-null.
 *
 * `outputs` holds `num_outputs` tensors naming model outputs, each at most
 * once; outputs not named are computed into scratch memory and dropped.
 * For an output whose `data` is non-null, the dtype, rank and shape must
 * match the model's and the run writes into that buffer. For an output
 * whose `data` is NULL, the runtime allocates the buffer (64-byte aligned,
 * released by the caller with mte_free) and fills in `data`, `dtype`, `rank`
 * and `shape` (the shape array belongs to `model`, valid until close).
 *
 * On failure no buffer allocated by this call survives: those `data`
 * fields are NULL again. */
MTE_RUNTIME_API mte_status mte_model_run_tensors(mte_model *model,
                                                 size_t num_inputs,
                                                 const mte_tensor *inputs,
                                                 size_t num_outputs,
                                                 mte_tensor *outputs);

/* Releases a buffer that mte_model_run_tensors allocated. Accepts NULL. */
MTE_RUNTIME_API void mte_free(void *data);

#ifdef __cplusplus
}
#endif

#endif /* MTE_C_RUNTIME_H */
