/*===- open_options_test.c - mte_model_open_with_options, called from C ---===*\
|*                                                                            *|
|*   mte-runtime-open-options-test test_model.so cuda_model.so                *|
|*                                                                            *|
|* Prints one line per call for open-options.test to check: the defaults     *|
|* (no options, MTE_DEVICE_DEFAULT, device 0) open and run the host model,   *|
|* and every malformed option is a status and a message. Exits with status   *|
|* 1 as soon as a result the output does not show is wrong.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/Runtime.h"

#include "expect.h"

#include <stdio.h>

/* Opens `path` with `options` and prints "what: status name: message"; a
 * model that opens is run once and closed, one that does not is NULL. */
static void tryOpen(const char *what, const char *path,
                    const mte_open_options *options) {
  static float x[6], sum[6];
  static int64_t ids[2] = {1, 2}, twice[2];
  static double total;
  const void *inputs[2] = {x, ids};
  void *outputs[3] = {sum, twice, &total};
  mte_model *model = (mte_model *)&model;
  mte_status status = mte_model_open_with_options(path, options, &model);
  printf("%s: %s: %s\n", what, mte_status_name(status), mte_last_error());
  if (status != MTE_OK) {
    EXPECT(model == NULL);
    return;
  }
  EXPECT(mte_model_run(model, 2, inputs, 3, outputs) == MTE_OK);
  EXPECT(twice[0] == 2 && twice[1] == 4);
  mte_model_close(model);
}

int main(int argc, char **argv) {
  mte_open_options options = {sizeof(mte_open_options), MTE_DEVICE_DEFAULT};
  mte_model *model = (mte_model *)&model;
  const char *host, *cuda;
  if (argc != 3) {
    fprintf(stderr, "usage: %s test_model.so cuda_model.so\n", argv[0]);
    return 2;
  }
  host = argv[1];
  cuda = argv[2];

  tryOpen("no options", host, NULL);
  tryOpen("default device", host, &options);
  options.device = 0;
  tryOpen("device 0", host, &options);

  options.struct_size = 0;
  tryOpen("struct_size 0", host, &options);
  options.struct_size = 4;
  tryOpen("struct_size 4", host, &options);
  options.struct_size = sizeof(mte_open_options) + 8;
  tryOpen("struct_size too large", host, &options);

  options.struct_size = sizeof(mte_open_options);
  options.device = -2;
  tryOpen("device -2", host, &options);
  options.device = 1;
  tryOpen("host model on device 1", host, &options);
  options.device = 7;
  tryOpen("cuda model on device 7", cuda, &options);

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
