/*===- device_model.c - a CUDA model that uses its device ---------*- C -*-===*\
|*                                                                            *|
|* A CUDA model that does on fake_cuda.c what compiled models do on a GPU:   *|
|* it loads a module when its library loads, and its run launches a kernel  *|
|* of it, allocates on the stream, and calls mte_cuda_gemm and (with         *|
|* MTE_TEST_ATTENTION, when the runtime has the kernels) mte_cuda_attention  *|
|* and mte_cuda_amaxes. Each of them fails when it reaches the driver in     *|
|* another device's context. MTE_TEST_EPILOGUE and MTE_TEST_SCALE_MODE give  *|
|* its GEMM call another epilogue or scale mode; MTE_TEST_AMAX_DTYPE calls   *|
|* mte_cuda_amaxes with that type for its second input.                      *|
|* MTE_TEST_ATTENTION_QUERIES (8 by default, as many as keys) sets the       *|
|* attention's queries; MTE_TEST_ATTENTION_FP8 asks for its output in E4M3   *|
|* (scaled by x's first element) and its rows' maxima (in y's second half).  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mte-c/KernelABI.h"
#include "mte-c/ModelABI.h"

#include <stdbool.h>
#include <stddef.h>

/* libmte_runtime's mgpu* entry points (MLIR's CUDA runtime ABI). */
void *mgpuModuleLoad(void *data, size_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemory, void *stream,
                      void **params, void **extra, size_t count);
void *mgpuStreamCreate(void);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *pointer, void *stream);

#ifndef MTE_TEST_EPILOGUE
#define MTE_TEST_EPILOGUE MTE_GEMM_EPILOGUE_DEFAULT
#endif
#ifndef MTE_TEST_SCALE_MODE
#define MTE_TEST_SCALE_MODE MTE_GEMM_SCALE_TENSOR
#endif

static char image[16];
static void *module;

__attribute__((constructor)) static void load(void) {
  module = mgpuModuleLoad(image, sizeof(image));
}
__attribute__((destructor)) static void unload(void) {
  mgpuModuleUnload(module);
}

/* Room for one 16-bit [8, 2 * 64] attention operand. */
static const int64_t shape[] = {1024};
static const mte_tensor_info inputs[] = {{"x", MTE_DTYPE_F32, 1, shape}};
static const mte_tensor_info outputs[] = {{"y", MTE_DTYPE_F32, 1, shape}};
static const char weight[64];
static const mte_weight_info weights[] = {
    {weight, sizeof(weight), MTE_DTYPE_U8, 0, 0, NULL}};

static int32_t run(void *const *in, void *const *out, void *const *w,
                   void *arena, int64_t *index_status,
                   void *const *state, void *const *next_state) {
  (void)state;
  (void)next_state;
  void *stream = mgpuStreamCreate();
  void *params[1] = {NULL};
  uint64_t x = (uint64_t)(uintptr_t)in[0], y = (uint64_t)(uintptr_t)out[0];
  mgpuLaunchKernel(mgpuModuleGetFunction(module, "kernel"), 1, 1, 1, 32, 1, 1,
                   0, stream, params, NULL, 0);
  mgpuMemFree(mgpuMemAlloc(256, stream, false), stream);
  mte_cuda_gemm(x, (uint64_t)(uintptr_t)w[0], y, 1, 4, 4, 4, 1, 1.0f, 0.0f,
                MTE_DTYPE_BF16, MTE_DTYPE_BF16, MTE_TEST_EPILOGUE, 0, 0, 0, 0,
                MTE_TEST_SCALE_MODE, MTE_DTYPE_BF16, 0, 0);
#ifdef MTE_TEST_ATTENTION
#ifndef MTE_TEST_ATTENTION_QUERIES
#define MTE_TEST_ATTENTION_QUERIES 8
#endif
#ifdef MTE_TEST_ATTENTION_FP8
  const uint64_t outScale = x, rowMax = y + 2048;
#else
  const uint64_t outScale = 0, rowMax = 0;
#endif
  mte_cuda_attention(x, x, x, y, 1, 2, 2, MTE_TEST_ATTENTION_QUERIES, 8, 64,
                     1024, 128, 1024, 128, 1024, 128, 1024, 128, 0.125f, 1,
                     MTE_DTYPE_BF16, 0, 0, outScale, rowMax);
#ifndef MTE_TEST_AMAX_DTYPE
#define MTE_TEST_AMAX_DTYPE MTE_DTYPE_BF16
#endif
#endif
#ifdef MTE_TEST_AMAX_DTYPE
  {
    /* Two inputs' amaxes into the output's last two elements. */
    const int64_t table[2][3] = {{(int64_t)x, 16, MTE_DTYPE_F32},
                                 {(int64_t)x, 8, MTE_TEST_AMAX_DTYPE}};
    mte_cuda_amaxes((uint64_t)(uintptr_t)table, 2, y + 4 * 1022);
  }
#endif
  (void)arena;
  (void)index_status;
  return 0;
}

static const mte_model_abi abi = {
    MTE_MODEL_ABI_VERSION,
    "cuda",
    "sm_90",
    1,
    1,
    1,
    inputs,
    outputs,
    weights,
    4096,
    0,
    NULL,
    0,
    NULL,
    0,
    NULL,
    run,
};

const mte_model_abi *mte_model_get_abi(void) { return &abi; }
