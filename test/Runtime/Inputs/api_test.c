/*===- api_test.c - every function of Runtime.h, called from C ------------===*\
|*                                                                            *|
|*   mte-runtime-api-test test_model.so failing_model.so                      *|
|*                                                                            *|
|* Prints one line per call for runtime-api.test to check, including every    *|
|* error a C caller can provoke. Exits with status 1 as soon as a result      *|
|* the output does not show (a value, a pointer left null) is wrong.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/Runtime.h"

#include "expect.h"

#include <stdio.h>
#include <string.h>

/* Prints the outcome of a call: "what: status name: message". */
static void report(const char *what, mte_status status) {
  printf("%s: %s: %s\n", what, mte_status_name(status), mte_last_error());
}

static void printInfo(const char *kind, const mte_tensor_info *info) {
  int32_t i;
  printf("%s '%s' %s [", kind, info->name, mte_dtype_name(info->dtype));
  for (i = 0; i < info->rank; ++i)
    printf(i ? ", %lld" : "%lld", (long long)info->shape[i]);
  printf("]\n");
}

/* Not const: mte_tensor::data is a plain void *, for outputs as for inputs. */
static float kX[6] = {0.5f, -1.25f, 2.0f, 3.5f, -0.75f, 8.0f};
static int64_t kIds[2] = {7, -3};
static const int64_t kXShape[2] = {2, 3};
static const int64_t kIdsShape[1] = {2};

static void testHelpers(void) {
  int32_t dtype;
  printf("version %s, model ABI %u\n", mte_runtime_version(),
         mte_runtime_model_abi_version());
  EXPECT(mte_runtime_model_abi_version() == MTE_MODEL_ABI_VERSION);
  for (dtype = 0; dtype <= 16; ++dtype) {
    const char *name = mte_dtype_name(dtype);
    printf("dtype %d %s %zu\n", dtype, name ? name : "(null)",
           mte_dtype_size(dtype));
  }
  printf("status %s / %s\n", mte_status_name(MTE_ERROR_SHAPE_MISMATCH),
         mte_status_name((mte_status)42));
}

static void testMetadata(mte_model *model) {
  size_t i, index = 99;
  printf("target %s, %zu inputs, %zu outputs\n", mte_model_target(model),
         mte_model_num_inputs(model), mte_model_num_outputs(model));
  printf("rank %d of %d, %zu grid axes\n", mte_model_rank(model),
         mte_model_world_size(model), mte_model_num_grid_axes(model));
  EXPECT(mte_model_grid_axis(model, 0) == 0);
  for (i = 0; i < mte_model_num_inputs(model); ++i)
    printInfo("input", mte_model_input(model, i));
  for (i = 0; i < mte_model_num_outputs(model); ++i)
    printInfo("output", mte_model_output(model, i));
  EXPECT(mte_model_input(model, 2) == NULL);
  EXPECT(mte_model_output(model, 3) == NULL);
  EXPECT(mte_model_path(NULL) == NULL && mte_model_target(NULL) == NULL);
  EXPECT(mte_model_num_inputs(NULL) == 0 && mte_model_num_outputs(NULL) == 0);
  EXPECT(mte_model_input(NULL, 0) == NULL);

  EXPECT(mte_model_find_input(model, "ids", &index) == MTE_OK);
  EXPECT(index == 1 && mte_last_error()[0] == '\0');
  EXPECT(mte_model_find_output(model, "stats/total", &index) == MTE_OK);
  EXPECT(index == 2);
  report("find_input nope", mte_model_find_input(model, "nope", &index));
  report("find_output x", mte_model_find_output(model, "x", &index));
  report("find_input null name", mte_model_find_input(model, NULL, &index));
  report("find_output null model", mte_model_find_output(NULL, "x", &index));
}

/* Runs `model` on kX and kIds by position and checks the results. */
static void runAndCheck(mte_model *model) {
  float sum[6];
  int64_t twice[2];
  double total;
  const void *inputs[2] = {kX, kIds};
  void *outputs[3] = {sum, twice, &total};
  int i;
  EXPECT(mte_model_run(model, 2, inputs, 3, outputs) == MTE_OK);
  for (i = 0; i < 6; ++i)
    EXPECT(sum[i] == kX[i] + 1.0f);
  EXPECT(twice[0] == 14 && twice[1] == -6);
  EXPECT(total == 12.0);
}

static void testRun(mte_model *model) {
  float sum[6];
  int64_t twice[2];
  double total;
  const void *inputs[2] = {kX, kIds};
  void *outputs[3] = {sum, twice, &total};
  const void *nullInput[2] = {kX, NULL};
  void *nullOutput[3] = {sum, twice, NULL};

  runAndCheck(model);

  report("run 1 input", mte_model_run(model, 1, inputs, 3, outputs));
  report("run 2 outputs", mte_model_run(model, 2, inputs, 2, outputs));
  report("run null inputs", mte_model_run(model, 2, NULL, 3, outputs));
  report("run null input", mte_model_run(model, 2, nullInput, 3, outputs));
  report("run null output", mte_model_run(model, 2, inputs, 3, nullOutput));
  report("run null model", mte_model_run(NULL, 2, inputs, 3, outputs));
}

static void testRunTensors(mte_model *model) {
  float sum[6];
  /* Inputs in reverse order: names, not positions, count. */
  mte_tensor inputs[2] = {
      {"ids", MTE_DTYPE_I64, 1, kIdsShape, kIds},
      {"x", MTE_DTYPE_F32, 2, kXShape, kX},
  };
  mte_tensor outputs[2] = {
      {"twice", 0, 0, NULL, NULL},
      {"sum", MTE_DTYPE_F32, 2, kXShape, sum},
  };
  mte_tensor bad[2];
  mte_tensor badOutput;
  const int64_t transposed[2] = {3, 2};
  const int64_t *twice;
  int i;

  /* "twice" is allocated by the runtime, "sum" written in place and
   * "stats/total" computed into scratch memory. */
  EXPECT(mte_model_run_tensors(model, 2, inputs, 2, outputs) == MTE_OK);
  twice = (const int64_t *)outputs[0].data;
  EXPECT(twice && twice[0] == 14 && twice[1] == -6);
  EXPECT(((size_t)outputs[0].data & 63) == 0);
  EXPECT(outputs[0].dtype == MTE_DTYPE_I64 && outputs[0].rank == 1);
  EXPECT(outputs[0].shape[0] == 2);
  for (i = 0; i < 6; ++i)
    EXPECT(sum[i] == kX[i] + 1.0f);
  mte_free(outputs[0].data);
  mte_free(NULL);

  memcpy(bad, inputs, sizeof(bad));
  bad[1].name = "y";
  report("tensors unknown input", mte_model_run_tensors(model, 2, bad, 0, 0));
  bad[1].name = "sum";
  report("tensors output as input", mte_model_run_tensors(model, 2, bad, 0, 0));
  bad[1].name = NULL;
  report("tensors null name", mte_model_run_tensors(model, 2, bad, 0, 0));
  report("tensors missing input",
         mte_model_run_tensors(model, 1, inputs + 1, 0, 0));
  report("tensors no inputs", mte_model_run_tensors(model, 0, NULL, 0, 0));
  bad[0] = inputs[1];
  bad[1] = inputs[1];
  report("tensors input twice", mte_model_run_tensors(model, 2, bad, 0, 0));
  memcpy(bad, inputs, sizeof(bad));
  bad[1].dtype = MTE_DTYPE_F64;
  report("tensors dtype", mte_model_run_tensors(model, 2, bad, 0, 0));
  bad[1].dtype = 99;
  report("tensors unknown dtype", mte_model_run_tensors(model, 2, bad, 0, 0));
  memcpy(bad, inputs, sizeof(bad));
  bad[1].shape = transposed;
  report("tensors shape", mte_model_run_tensors(model, 2, bad, 0, 0));
  bad[1].rank = 1;
  report("tensors rank", mte_model_run_tensors(model, 2, bad, 0, 0));
  bad[1].rank = -1;
  report("tensors negative rank", mte_model_run_tensors(model, 2, bad, 0, 0));
  memcpy(bad, inputs, sizeof(bad));
  bad[1].shape = NULL;
  report("tensors null shape", mte_model_run_tensors(model, 2, bad, 0, 0));
  memcpy(bad, inputs, sizeof(bad));
  bad[1].data = NULL;
  report("tensors null data", mte_model_run_tensors(model, 2, bad, 0, 0));
  report("tensors null array", mte_model_run_tensors(model, 2, NULL, 0, 0));

  badOutput = outputs[1];
  badOutput.name = "total";
  report("tensors unknown output",
         mte_model_run_tensors(model, 2, inputs, 1, &badOutput));
  badOutput.name = "x";
  report("tensors input as output",
         mte_model_run_tensors(model, 2, inputs, 1, &badOutput));
  badOutput.name = "sum";
  badOutput.shape = transposed;
  report("tensors output shape",
         mte_model_run_tensors(model, 2, inputs, 1, &badOutput));
  badOutput.shape = kXShape;
  badOutput.dtype = MTE_DTYPE_F16;
  report("tensors output dtype",
         mte_model_run_tensors(model, 2, inputs, 1, &badOutput));
  outputs[0].data = NULL;
  outputs[1] = outputs[0];
  report("tensors output twice",
         mte_model_run_tensors(model, 2, inputs, 2, outputs));
  EXPECT(outputs[0].data == NULL && outputs[1].data == NULL);
  report("tensors null model", mte_model_run_tensors(NULL, 2, inputs, 0, 0));
}

/* A failing run leaves no buffer behind: the runtime frees what it
 * allocated and the data fields stay null. */
static void testFailingRun(const char *path) {
  mte_model *model;
  mte_tensor inputs[2] = {
      {"x", MTE_DTYPE_F32, 2, kXShape, kX},
      {"ids", MTE_DTYPE_I64, 1, kIdsShape, kIds},
  };
  mte_tensor output = {"sum", 0, 0, NULL, NULL};
  EXPECT(mte_model_open(path, &model) == MTE_OK);
  report("failing run", mte_model_run_tensors(model, 2, inputs, 1, &output));
  EXPECT(output.data == NULL);
  mte_model_close(model);
}

/* The model state API on `path`, a model carrying fp8.scale [2] that each
 * run doubles, and its errors. */
static void testState(const char *path, mte_model *stateless) {
  mte_model *model;
  size_t index = 99;
  float value[2], bad[2] = {1.0f, -2.0f}, zero[2] = {0.0f, 1.0f},
        set[2] = {0.5f, 5.0f};
  EXPECT(mte_model_open(path, &model) == MTE_OK);
  printf("%zu states, %zu labels: %s %s, kind %d\n",
         mte_model_num_states(model), mte_model_state_num_labels(model, 0),
         mte_model_state_label(model, 0, 0), mte_model_state_label(model, 0, 1),
         mte_model_state_kind(model, 0));
  printInfo("state", mte_model_state(model, 0));
  EXPECT(mte_model_state(model, 1) == NULL && mte_model_state_kind(model, 1) == 0);
  EXPECT(mte_model_state_label(model, 0, 2) == NULL);
  EXPECT(mte_model_num_states(stateless) == 0 && mte_model_num_states(NULL) == 0);
  EXPECT(mte_model_find_state(model, "fp8.scale", &index) == MTE_OK && index == 0);
  report("find_state nope", mte_model_find_state(model, "nope", &index));
  report("find_state stateless", mte_model_find_state(stateless, "fp8.scale", &index));
  report("find_state null name", mte_model_find_state(model, NULL, &index));

  EXPECT(mte_model_get_state(model, 0, value, sizeof(value)) == MTE_OK);
  printf("initial %g %g\n", value[0], value[1]);
  runAndCheck(model);
  runAndCheck(model);
  EXPECT(mte_model_get_state(model, 0, value, sizeof(value)) == MTE_OK);
  printf("after two runs %g %g\n", value[0], value[1]);
  EXPECT(mte_model_freeze_state(model, 1) == MTE_OK && mte_model_state_frozen(model));
  runAndCheck(model);
  EXPECT(mte_model_get_state(model, 0, value, sizeof(value)) == MTE_OK);
  printf("frozen run %g %g\n", value[0], value[1]);
  EXPECT(mte_model_freeze_state(model, 0) == MTE_OK && !mte_model_state_frozen(model));
  EXPECT(mte_model_set_state(model, 0, set, sizeof(set)) == MTE_OK);
  runAndCheck(model);
  EXPECT(mte_model_get_state(model, 0, value, sizeof(value)) == MTE_OK);
  printf("set, then run %g %g\n", value[0], value[1]);
  report("set_state negative", mte_model_set_state(model, 0, bad, sizeof(bad)));
  report("set_state zero", mte_model_set_state(model, 0, zero, sizeof(zero)));
  report("set_state size", mte_model_set_state(model, 0, set, 4));
  report("get_state index", mte_model_get_state(model, 1, value, sizeof(value)));
  report("get_state null buffer", mte_model_get_state(model, 0, NULL, 8));
  report("set_state null model", mte_model_set_state(NULL, 0, set, 8));
  EXPECT(mte_model_reset_state(model) == MTE_OK);
  EXPECT(mte_model_get_state(model, 0, value, sizeof(value)) == MTE_OK);
  printf("reset %g %g\n", value[0], value[1]);
  report("reset null model", mte_model_reset_state(NULL));
  report("freeze null model", mte_model_freeze_state(NULL, 1));
  mte_model_close(model);
}

int main(int argc, char **argv) {
  mte_model *model = (mte_model *)&argc;
  mte_model *again;
  if (argc != 4) {
    fprintf(stderr, "usage: %s test_model.so failing_model.so state_model.so\n",
            argv[0]);
    return 2;
  }
  testHelpers();

  report("open null path", mte_model_open(NULL, &model));
  EXPECT(model == NULL);
  report("open null model", mte_model_open(argv[1], NULL));
  EXPECT(mte_model_open(argv[1], &model) == MTE_OK);
  EXPECT(mte_last_error()[0] == '\0');
  EXPECT(strcmp(mte_model_path(model), argv[1]) == 0);

  testMetadata(model);
  testRun(model);
  testRunTensors(model);
  testState(argv[3], model);

  /* A second handle on the same library runs independently of the first
   * and outlives it. */
  EXPECT(mte_model_open(argv[1], &again) == MTE_OK);
  mte_model_close(model);
  runAndCheck(again);
  mte_model_close(again);
  mte_model_close(NULL);

  testFailingRun(argv[2]);
  printf("done\n");
  return 0;
}
