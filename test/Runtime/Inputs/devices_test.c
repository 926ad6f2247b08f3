/*===- devices_test.c - CUDA models on two devices ----------------*- C -*-===*\
|*                                                                            *|
|*   mte-runtime-devices-test device_model.so second.so third.so              *|
|*                                                                            *|
|* Over fake_cuda.c's two devices (three copies of device_model.c): opens a  *|
|* model library on each device, runs them in turn (eager, captured,         *|
|* replayed), on two threads at once and through mte_model_run_device; then  *|
|* opens the first library on the other device, the third on a device that  *|
|* does not exist, and the first again after closing it. Prints one line per *|
|* open or run for devices.test to check.                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/Runtime.h"

#include "expect.h"

#include <pthread.h>
#include <stdio.h>

static float input[1024], output[1024];

static void report(const char *what, mte_status status) {
  printf("%s: %s: %s\n", what, mte_status_name(status), mte_last_error());
}

static mte_model *openOn(const char *path, int32_t device) {
  mte_open_options options = {sizeof(mte_open_options), device};
  mte_model *model = NULL;
  char what[32];
  snprintf(what, sizeof(what), "open on device %d", (int)device);
  report(what, mte_model_open_with_options(path, &options, &model));
  return model;
}

static mte_status run(mte_model *model) {
  const void *inputs[1] = {input};
  void *outputs[1] = {output};
  return mte_model_run(model, 1, inputs, 1, outputs);
}

/* Runs the model of `argument` 20 times, stopping at a failure. */
static void *runMany(void *argument) {
  int i;
  for (i = 0; i < 20; ++i)
    if (run(argument) != MTE_OK) {
      report("threaded run", MTE_ERROR_RUN_FAILED);
      break;
    }
  return NULL;
}

int main(int argc, char **argv) {
  mte_model *first, *second;
  pthread_t threads[2];
  int i;
  if (argc != 4) {
    fprintf(stderr, "usage: %s device_model.so second.so third.so\n", argv[0]);
    return 2;
  }
  first = openOn(argv[1], MTE_DEVICE_DEFAULT);
  second = openOn(argv[2], 1);
  EXPECT(first && second);
  for (i = 0; i < 3; ++i) {
    report("run on device 0", run(first));
    report("run on device 1", run(second));
  }
  pthread_create(&threads[0], NULL, runMany, first);
  pthread_create(&threads[1], NULL, runMany, second);
  pthread_join(threads[0], NULL);
  pthread_join(threads[1], NULL);
  {
    /* fake_cuda.c's device memory is the host's. */
    const void *inputs[1] = {input};
    void *outputs[1] = {output};
    report("run_device on device 1",
           mte_model_run_device(second, 1, inputs, 1, outputs, NULL));
    report("run after it", run(second));
  }
  EXPECT(openOn(argv[1], 1) == NULL);
  EXPECT(openOn(argv[3], 2) == NULL);
  mte_model_close(first);
  mte_model_close(second);
  /* The library stays loaded (it is linked with -z nodelete), and so do its
   * kernels, on device 0. */
  EXPECT(openOn(argv[1], 1) == NULL);
  first = openOn(argv[1], 0);
  report("run on device 0", run(first));
  mte_model_close(first);
  printf("done\n");
  return 0;
}
