/*===- open_options_test.c - mte_model_open_with_options, called from C ---===*\
|*                                                                            *|
|*   mte-runtime-open-options-test test_model.so cuda_model.so \             *|
|*       comm_model_1.so comm_model_2.so                                      *|
|*   mte-runtime-open-options-test --ranks test_model.so                      *|
|*   mte-runtime-open-options-test --nccl cuda_comm_model_2.so               *|
|*                                                                            *|
|* Prints one line per call for open-options.test to check: the defaults     *|
|* (no options, MTE_DEVICE_DEFAULT, device 0) open and run the host model,   *|
|* the ranks and grids models open with, and every malformed option is a    *|
|* status and a message. --ranks opens the model with the launcher's rank    *|
|* and world size (the environment's). --nccl makes NCCL unique ids and      *|
|* opens a sharded CUDA model with one, and with one past struct_size (which *|
|* does not count). Exits with status 1 as soon as a result the output does *|
|* not show is wrong.                                                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/Runtime.h"

#include "expect.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Opens `path` with `options` and prints "what: status name: message",
 * and for a model that opens its rank, world size and grid; test_model.so
 * (`run`) is run once. A model that does not open is NULL. */
static void tryOpen(const char *what, const char *path,
                    const mte_open_options *options, int run) {
  static float x[6], sum[6];
  static int64_t ids[2] = {1, 2}, twice[2];
  static double total;
  const void *inputs[2] = {x, ids};
  void *outputs[3] = {sum, twice, &total};
  mte_model *model = (mte_model *)&model;
  size_t axis;
  mte_status status = mte_model_open_with_options(path, options, &model);
  printf("%s: %s: %s", what, mte_status_name(status), mte_last_error());
  if (status != MTE_OK) {
    printf("\n");
    EXPECT(model == NULL);
    return;
  }
  printf("rank %d of %d, grid [", mte_model_rank(model),
         mte_model_world_size(model));
  for (axis = 0; axis < mte_model_num_grid_axes(model); ++axis)
    printf(axis ? ", %lld" : "%lld",
           (long long)mte_model_grid_axis(model, axis));
  printf("]\n");
  EXPECT(mte_model_grid_axis(model, axis) == 0);
  if (run) {
    EXPECT(mte_model_run(model, 2, inputs, 3, outputs) == MTE_OK);
    EXPECT(twice[0] == 2 && twice[1] == 4);
  }
  mte_model_close(model);
}

/* --ranks: the launcher's rank and world size, from the environment. */
static int openWithLaunchersRanks(const char *path) {
  mte_open_options options = {sizeof(mte_open_options), MTE_DEVICE_DEFAULT,
                              MTE_RANK_DEFAULT, MTE_WORLD_SIZE_DEFAULT, NULL};
  tryOpen("defaults", path, NULL, 1);
  tryOpen("rank and world size defaults", path, &options, 1);
  /* The first version of the options has no rank: garbage there does not
   * count. */
  options.struct_size = 8;
  options.rank = 99;
  options.world_size = -7;
  tryOpen("struct_size 8", path, &options, 1);
  options.struct_size = sizeof(mte_open_options);
  options.rank = MTE_RANK_DEFAULT;
  options.world_size = 4;
  tryOpen("world size 4, the launcher's rank", path, &options, 1);
  return 0;
}

/* --nccl: mte_nccl_get_unique_id, and rank 1 of 2 of a sharded CUDA model
 * given an id (no other rank needed: fake_nccl.c) and given one past
 * struct_size (the ranks meet through the host communicator, which no
 * other rank joins). */
static int openWithNcclIds(const char *path) {
  char id[MTE_NCCL_UNIQUE_ID_BYTES] = "open-options-test";
  mte_open_options options = {sizeof(mte_open_options),
                              MTE_DEVICE_DEFAULT,
                              1,
                              2,
                              "open-options-nccl",
                              id};
  mte_status status = mte_nccl_get_unique_id(NULL);
  printf("null id: %s: %s\n", mte_status_name(status), mte_last_error());
  status = mte_nccl_get_unique_id(id);
  printf("unique id: %s: %s\n", mte_status_name(status), mte_last_error());
  memcpy(id, "open-options-test", sizeof("open-options-test"));
  tryOpen("given an id", path, &options, 0);
  options.struct_size = offsetof(mte_open_options, nccl_unique_id);
  tryOpen("an id past struct_size", path, &options, 0);
  return 0;
}

int main(int argc, char **argv) {
  mte_open_options options = {sizeof(mte_open_options), MTE_DEVICE_DEFAULT,
                              MTE_RANK_DEFAULT, MTE_WORLD_SIZE_DEFAULT, NULL};
  mte_model *model = (mte_model *)&model;
  const char *host, *cuda, *oneRank, *twoRanks;
  if (argc == 3 && strcmp(argv[1], "--ranks") == 0)
    return openWithLaunchersRanks(argv[2]);
  if (argc == 3 && strcmp(argv[1], "--nccl") == 0)
    return openWithNcclIds(argv[2]);
  if (argc != 5) {
    fprintf(stderr,
            "usage: %s test_model.so cuda_model.so comm_model_1.so "
            "comm_model_2.so\n       %s --ranks test_model.so\n"
            "       %s --nccl cuda_comm_model_2.so\n",
            argv[0], argv[0], argv[0]);
    return 2;
  }
  host = argv[1];
  cuda = argv[2];
  oneRank = argv[3];
  twoRanks = argv[4];

  tryOpen("no options", host, NULL, 1);
  tryOpen("default device", host, &options, 1);
  options.device = 0;
  tryOpen("device 0", host, &options, 1);

  options.struct_size = 0;
  tryOpen("struct_size 0", host, &options, 1);
  options.struct_size = 4;
  tryOpen("struct_size 4", host, &options, 1);
  options.struct_size = sizeof(mte_open_options) + 8;
  tryOpen("struct_size too large", host, &options, 1);

  options.struct_size = sizeof(mte_open_options);
  options.device = -2;
  tryOpen("device -2", host, &options, 1);
  options.device = 1;
  tryOpen("host model on device 1", host, &options, 1);
  options.device = 7;
  tryOpen("cuda model on device 7", cuda, &options, 1);

  /* Ranks: an unsharded model takes any world; a sharded one its grid's. */
  options.device = MTE_DEVICE_DEFAULT;
  options.rank = 3;
  options.world_size = 4;
  tryOpen("rank 3 of 4", host, &options, 1);
  options.rank = 4;
  tryOpen("rank 4 of 4", host, &options, 1);
  options.rank = MTE_RANK_DEFAULT;
  tryOpen("the launcher's rank of 4", host, &options, 1);
  options.rank = 1;
  options.world_size = MTE_WORLD_SIZE_DEFAULT;
  tryOpen("rank 1 without a world size", host, &options, 1);
  options.rank = 0;
  options.comm_id = "";
  tryOpen("empty comm_id", host, &options, 1);
  options.comm_id = "open-options-test";
  options.world_size = 1;
  tryOpen("grid of 1", oneRank, &options, 0);
  tryOpen("grid of 2, world size 1", twoRanks, &options, 0);
  options.world_size = 2;
  tryOpen("grid of 2, rank 0 alone", twoRanks, &options, 0);
  options.rank = 1;
  tryOpen("grid of 2, rank 1 alone", twoRanks, &options, 0);
  EXPECT(mte_model_rank(NULL) == 0 && mte_model_world_size(NULL) == 0);
  EXPECT(mte_model_num_grid_axes(NULL) == 0);
  EXPECT(mte_model_grid_axis(NULL, 0) == 0);

  printf("null path: %s: %s\n",
         mte_status_name(mte_model_open_with_options(NULL, NULL, &model)),
         mte_last_error());
  EXPECT(model == NULL);
  printf("null model: %s: %s\n",
         mte_status_name(mte_model_open_with_options(host, NULL, NULL)),
         mte_last_error());
  printf("done\n");
  return 0;
}
