/*===- comm_errors_model.c - a sharded model that misuses collectives -----===*\
|*                                                                            *|
|* A host model of the grid {2}: inputs case i32 [] and x f32 [4], output     *|
|* y f32 [4], the all_reduce sum of x over both ranks, made wrong the way     *|
|* `case` says, for comm.test to check each failure's report:                 *|
|*   0  no failure                                                            *|
|*   1  grid axes 0x2, an axis the grid does not have                         *|
|*   2  a u8 reduction                                                        *|
|*   3  a negative count                                                      *|
|*   4  op 7, not an mte_reduce_op                                            *|
|*   5  dtype 99, not an mte_dtype                                            *|
|*   6  a null send buffer                                                    *|
|*   7  rank 1 calls all_gather where rank 0 calls all_reduce                 *|
|*   8  rank 1 exits (status 3) before the collective                         *|
|*   9  rank 1 reduces 3 elements where rank 0 reduces 4                      *|
|*   10 rank 1 skips the collective (its run returns, and mte-run closes)     *|
|*   11 rank 1 sleeps 3 s before the collective (past MTE_COMM_TIMEOUT=1)     *|
|*   12 rank 1 kills itself (SIGKILL) before the collective                   *|
|*   13 rank 0's run fails (returns 1) while rank 1 sleeps for 60 s           *|
|*   14 no failure: rank 0 sends x + 100 to rank 1, which broadcasts what it  *|
|*      received: y = x + 100 on both ranks (no all_reduce)                   *|
|*   15 rank 0 sends to rank 5 of the group of 2                              *|
|*   16 rank 0 sends to itself                                                *|
|*   17 rank 1 receives 3 elements where rank 0 sends 4                       *|
|*   18 a broadcast from root 2 of the group of 2                             *|
|* Each case then calls a second collective, which runs only after a first   *|
|* that succeeded.                                                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/KernelABI.h"
#include "mte-c/ModelABI.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static const int64_t grid[] = {2};
static const int64_t shape[] = {4};

static const mte_tensor_info inputs[] = {
    {"case", MTE_DTYPE_I32, 0, NULL},
    {"x", MTE_DTYPE_F32, 1, shape},
};
static const mte_tensor_info outputs[] = {{"y", MTE_DTYPE_F32, 1, shape}};

#define ADDRESS(p) ((uint64_t)(uintptr_t)(p))

static int32_t run(void *const *in, void *const *out, void *const *weights,
                   void *arena, int64_t *index_status, void *const *state,
                   void *const *next_state) {
  int32_t which = *(const int32_t *)in[0];
  uint64_t x = ADDRESS(in[1]), y = ADDRESS(out[0]);
  int64_t rank = mte_comm_rank();
  int64_t count = 4;
  int32_t dtype = MTE_DTYPE_F32, op = MTE_REDUCE_SUM, axes = 1;
  (void)weights;
  (void)arena;
  (void)index_status;
  (void)state;
  (void)next_state;
  switch (which) {
  case 1:
    axes = 2;
    break;
  case 2:
    dtype = MTE_DTYPE_U8;
    break;
  case 3:
    count = -1;
    break;
  case 4:
    op = 7;
    break;
  case 5:
    dtype = 99;
    break;
  case 6:
    x = 0;
    break;
  case 7:
    if (rank == 1) {
      mte_comm_all_gather(x, y, 2, MTE_DTYPE_F32, 1);
      return 0;
    }
    break;
  case 8:
    if (rank == 1)
      _exit(3);
    break;
  case 9:
    if (rank == 1)
      count = 3;
    break;
  case 10:
    if (rank == 1)
      return 0;
    break;
  case 11:
    if (rank == 1)
      sleep(3);
    break;
  case 12:
    if (rank == 1)
      raise(SIGKILL);
    break;
  case 13:
    if (rank == 0)
      return 1;
    sleep(60);
    break;
  case 14: {
    float sent[4];
    for (int i = 0; i < 4; ++i)
      sent[i] = ((const float *)in[1])[i] + 100;
    if (rank == 0)
      mte_comm_send(ADDRESS(sent), 4, MTE_DTYPE_F32, 1, 1);
    else
      mte_comm_recv(y, 4, MTE_DTYPE_F32, 0, 1);
    mte_comm_broadcast(y, y, 4, MTE_DTYPE_F32, 1, 1);
    return 0;
  }
  case 15:
  case 16:
    if (rank == 0)
      mte_comm_send(x, 4, MTE_DTYPE_F32, which == 15 ? 5 : 0, 1);
    break;
  case 17:
    if (rank == 0)
      mte_comm_send(x, 4, MTE_DTYPE_F32, 1, 1);
    else
      mte_comm_recv(y, 3, MTE_DTYPE_F32, 0, 1);
    break;
  case 18:
    mte_comm_broadcast(x, y, 4, MTE_DTYPE_F32, 2, 1);
    break;
  }
  mte_comm_all_reduce(x, y, count, dtype, op, axes);
  /* Not run after a failure: a second report would name it. */
  mte_comm_all_reduce(y, y, 4, MTE_DTYPE_F32, MTE_REDUCE_MAX, 1);
  return 0;
}

static const mte_model_abi abi = {
    MTE_MODEL_ABI_VERSION,
    "host",
    NULL,
    2,
    1,
    0,
    inputs,
    outputs,
    NULL,
    0,
    0,
    NULL,
    0,
    NULL,
    1,
    grid,
    run,
};

const mte_model_abi *mte_model_get_abi(void) { return &abi; }
