/*===- fake_cublaslt.c - cuBLASLt over fake_cuda.c ----------------*- C -*-===*\
|*                                                                            *|
|* libcublasLt.so for devices.test: the functions libmte_runtime calls       *|
|* (lib/Runtime/CublasLt.def). A handle belongs to the context current when  *|
|* it was created; planning or running a matmul in another context fails.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

const void *fakeCudaCurrentContext(void);

typedef struct Handle {
  const void *context;
} Handle;

static int inContext(const Handle *handle, const char *what) {
  if (handle->context == fakeCudaCurrentContext())
    return 0;
  fprintf(stderr, "fake_cublaslt: %s: a handle used on another device\n", what);
  return 1;
}

int cublasLtCreate(void **handle) {
  Handle *created = malloc(sizeof(Handle));
  created->context = fakeCudaCurrentContext();
  *handle = created;
  return created->context ? 0 : 1;
}

/* Descriptors, layouts and preferences: anything not null. */
static int describe(void **object) {
  static char any;
  *object = &any;
  return 0;
}
int cublasLtMatmulDescCreate(void **desc, int compute, int scale) {
  return describe(desc);
}
int cublasLtMatrixLayoutCreate(void **layout, int type, uint64_t rows,
                               uint64_t cols, int64_t ld) {
  return describe(layout);
}
int cublasLtMatmulPreferenceCreate(void **preference) {
  return describe(preference);
}
int cublasLtMatmulDescSetAttribute(void *desc, int attribute, const void *value,
                                   size_t size) {
  return 0;
}
int cublasLtMatrixLayoutSetAttribute(void *layout, int attribute,
                                     const void *value, size_t size) {
  return 0;
}
int cublasLtMatmulPreferenceSetAttribute(void *preference, int attribute,
                                         const void *value, size_t size) {
  return 0;
}

int cublasLtMatmulAlgoGetHeuristic(void *handle, void *desc, void *a, void *b,
                                   void *c, void *d, void *preference,
                                   int requested, void *results, int *found) {
  *found = 1;
  return inContext(handle, "cublasLtMatmulAlgoGetHeuristic");
}

int cublasLtMatmul(void *handle, void *desc, const void *alpha, const void *a,
                   void *aLayout, const void *b, void *bLayout,
                   const void *beta, const void *c, void *cLayout, void *d,
                   void *dLayout, const void *algo, void *workspace,
                   size_t workspaceBytes, void *stream) {
  return inContext(handle, "cublasLtMatmul");
}
