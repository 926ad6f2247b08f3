/*===- fake_cudnn.c - cuDNN's backend API over fake_cuda.c --------*- C -*-===*\
|*                                                                            *|
|* libcudnn.so.9 for cudnn-attention.test: the functions libmte_runtime      *|
|* calls (lib/Runtime/Cudnn.def). Descriptors keep what is set on them; with *|
|* MTE_FAKE_CUDNN_LOG set, finalizing an operation graph prints its          *|
|* operations in order, and executing a plan prints the variant pack's ids   *|
|* and its by-value scalars, so that a test pins the graph the runtime       *|
|* builds. MTE_FAKE_CUDNN_NO_ENGINE makes the heuristic propose no engine,   *|
|* MTE_FAKE_CUDNN_EXECUTE_FAILS every execution fail; MTE_FAKE_CUDNN_VERSION *|
|* sets the version it reports (91900 otherwise).                           *|
|* A handle belongs to the context current when it was created; executing   *|
|* in another context fails. Nothing is computed.                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <cudnn_graph.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const void *fakeCudaCurrentContext(void);

enum { kMaxOps = 64, kMaxPack = 16 };

typedef struct Desc {
  cudnnBackendDescriptorType_t type;
  /* Tensors. */
  int64_t id, dims[4], strides[4];
  cudnnDataType_t dataType;
  bool isVirtual, byValue;
  /* Pointwise and reduction descriptors. */
  int mode;
  int64_t axis;
  /* Operations: matmul A, B -> C; pointwise X, B, T -> Y; reduction X -> Y;
     and the descriptor of each. An engine configuration's or a plan's
     graph is in `graph`. */
  struct Desc *x, *b, *t, *y, *desc, *graph;
  /* Operation graphs. */
  struct Desc *ops[kMaxOps];
  int64_t opCount;
  /* Variant packs. */
  int64_t ids[kMaxPack];
  void *pointers[kMaxPack];
  int64_t packCount;
} Desc;

typedef struct Handle {
  const void *context;
} Handle;

static int logging(void) { return getenv("MTE_FAKE_CUDNN_LOG") != NULL; }

/* 9.19, or MTE_FAKE_CUDNN_VERSION. */
size_t cudnnGetVersion(void) {
  const char *version = getenv("MTE_FAKE_CUDNN_VERSION");
  return version ? (size_t)strtoul(version, NULL, 10) : 91900;
}

const char *cudnnGetErrorString(cudnnStatus_t status) {
  return status == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS"
                                        : "CUDNN_STATUS_NOT_SUPPORTED";
}

void cudnnGetLastErrorString(char *message, size_t size) {
  if (size)
    message[0] = '\0';
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
  Handle *created = malloc(sizeof(Handle));
  created->context = fakeCudaCurrentContext();
  *handle = (cudnnHandle_t)created;
  return created->context ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  (void)handle;
  (void)stream;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                           cudnnBackendDescriptor_t *out) {
  Desc *d = calloc(1, sizeof(Desc));
  d->type = type;
  d->axis = -1;
  *out = (cudnnBackendDescriptor_t)d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
  free(d);
  return CUDNN_STATUS_SUCCESS;
}

static void copy(void *to, size_t size, int64_t count, const void *from) {
  memcpy(to, from, size * (size_t)count);
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type,
                                       int64_t count, const void *values) {
  Desc *d = (Desc *)descriptor;
  Desc *const *descs = (Desc *const *)values;
  (void)type;
  switch (name) {
  case CUDNN_ATTR_TENSOR_UNIQUE_ID:
    copy(&d->id, sizeof(int64_t), 1, values);
    break;
  case CUDNN_ATTR_TENSOR_DIMENSIONS:
    copy(d->dims, sizeof(int64_t), count, values);
    break;
  case CUDNN_ATTR_TENSOR_STRIDES:
    copy(d->strides, sizeof(int64_t), count, values);
    break;
  case CUDNN_ATTR_TENSOR_DATA_TYPE:
    copy(&d->dataType, sizeof(cudnnDataType_t), 1, values);
    break;
  case CUDNN_ATTR_TENSOR_IS_VIRTUAL:
    copy(&d->isVirtual, sizeof(bool), 1, values);
    break;
  case CUDNN_ATTR_TENSOR_IS_BY_VALUE:
    copy(&d->byValue, sizeof(bool), 1, values);
    break;
  case CUDNN_ATTR_POINTWISE_MODE:
  case CUDNN_ATTR_REDUCTION_OPERATOR:
    copy(&d->mode, sizeof(int), 1, values);
    break;
  case CUDNN_ATTR_POINTWISE_AXIS:
    copy(&d->axis, sizeof(int64_t), 1, values);
    break;
  case CUDNN_ATTR_OPERATION_MATMUL_ADESC:
  case CUDNN_ATTR_OPERATION_POINTWISE_XDESC:
  case CUDNN_ATTR_OPERATION_REDUCTION_XDESC:
    d->x = descs[0];
    break;
  case CUDNN_ATTR_OPERATION_MATMUL_BDESC:
  case CUDNN_ATTR_OPERATION_POINTWISE_BDESC:
    d->b = descs[0];
    break;
  case CUDNN_ATTR_OPERATION_POINTWISE_TDESC:
    d->t = descs[0];
    break;
  case CUDNN_ATTR_OPERATION_MATMUL_CDESC:
  case CUDNN_ATTR_OPERATION_POINTWISE_YDESC:
  case CUDNN_ATTR_OPERATION_REDUCTION_YDESC:
    d->y = descs[0];
    break;
  case CUDNN_ATTR_OPERATION_MATMUL_DESC:
  case CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR:
  case CUDNN_ATTR_OPERATION_REDUCTION_DESC:
    d->desc = descs[0];
    break;
  case CUDNN_ATTR_OPERATIONGRAPH_OPS:
    if (count > kMaxOps)
      return CUDNN_STATUS_BAD_PARAM;
    copy(d->ops, sizeof(Desc *), count, values);
    d->opCount = count;
    break;
  case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
    d->graph = descs[0];
    break;
  case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
    d->graph = descs[0]->graph;
    break;
  case CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS:
    if (count > kMaxPack)
      return CUDNN_STATUS_BAD_PARAM;
    copy(d->ids, sizeof(int64_t), count, values);
    d->packCount = count;
    break;
  case CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS:
    if (count != d->packCount)
      return CUDNN_STATUS_BAD_PARAM;
    copy(d->pointers, sizeof(void *), count, values);
    break;
  default:
    break;
  }
  return CUDNN_STATUS_SUCCESS;
}

static const char *typeName(cudnnDataType_t type) {
  switch (type) {
  case CUDNN_DATA_FLOAT:
    return "f32";
  case CUDNN_DATA_HALF:
    return "f16";
  case CUDNN_DATA_BFLOAT16:
    return "bf16";
  case CUDNN_DATA_INT32:
    return "i32";
  case CUDNN_DATA_BOOLEAN:
    return "i1";
  default:
    return "?";
  }
}

static const char *pointwiseName(int mode) {
  switch (mode) {
  case CUDNN_POINTWISE_ADD:
    return "add";
  case CUDNN_POINTWISE_MUL:
    return "mul";
  case CUDNN_POINTWISE_SUB:
    return "sub";
  case CUDNN_POINTWISE_DIV:
    return "div";
  case CUDNN_POINTWISE_EXP:
    return "exp";
  case CUDNN_POINTWISE_CMP_GE:
    return "cmp_ge";
  case CUDNN_POINTWISE_GEN_INDEX:
    return "gen_index";
  case CUDNN_POINTWISE_BINARY_SELECT:
    return "binary_select";
  default:
    return "?";
  }
}

/* A tensor as "<id>:<type>[dims]", strides after "/" unless virtual, "=" for
   a by-value scalar. */
static void printTensor(const Desc *t) {
  if (!t)
    return;
  fprintf(stderr, " %lld:%s[%lld,%lld,%lld,%lld]", (long long)t->id,
          typeName(t->dataType), (long long)t->dims[0], (long long)t->dims[1],
          (long long)t->dims[2], (long long)t->dims[3]);
  if (t->byValue)
    fprintf(stderr, "=");
  else if (!t->isVirtual)
    fprintf(stderr, "/[%lld,%lld,%lld,%lld]", (long long)t->strides[0],
            (long long)t->strides[1], (long long)t->strides[2],
            (long long)t->strides[3]);
}

static void printGraph(const Desc *graph) {
  for (int64_t i = 0; i < graph->opCount; ++i) {
    const Desc *op = graph->ops[i];
    switch (op->type) {
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
      fprintf(stderr, "fake_cudnn: matmul");
      break;
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
      fprintf(stderr, "fake_cudnn: reduce %s",
              op->desc->mode == CUDNN_REDUCE_TENSOR_MAX   ? "max"
              : op->desc->mode == CUDNN_REDUCE_TENSOR_ADD ? "add"
                                                          : "?");
      break;
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
      fprintf(stderr, "fake_cudnn: %s", pointwiseName(op->desc->mode));
      if (op->desc->mode == CUDNN_POINTWISE_GEN_INDEX)
        fprintf(stderr, " axis %lld", (long long)op->desc->axis);
      break;
    default:
      fprintf(stderr, "fake_cudnn: operation %d", (int)op->type);
    }
    printTensor(op->x);
    printTensor(op->b);
    printTensor(op->t);
    fprintf(stderr, " ->");
    printTensor(op->y);
    fprintf(stderr, "\n");
  }
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  Desc *d = (Desc *)descriptor;
  if (d->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR && logging())
    printGraph(d);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(
    cudnnBackendDescriptor_t const descriptor, cudnnBackendAttributeName_t name,
    cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
    void *values) {
  Desc *d = (Desc *)descriptor;
  (void)type;
  switch (name) {
  case CUDNN_ATTR_ENGINEHEUR_RESULTS:
    *count = getenv("MTE_FAKE_CUDNN_NO_ENGINE") || requested < 1 ? 0 : 1;
    if (*count)
      ((Desc **)values)[0]->graph = d->graph;
    return CUDNN_STATUS_SUCCESS;
  case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
    *count = 1;
    *(int64_t *)values = 4096;
    return CUDNN_STATUS_SUCCESS;
  default:
    return CUDNN_STATUS_NOT_SUPPORTED;
  }
}

/* The tensor of `graph` with unique id `id`, or null. */
static const Desc *tensorOf(const Desc *graph, int64_t id) {
  for (int64_t i = 0; i < graph->opCount; ++i) {
    const Desc *op = graph->ops[i];
    const Desc *operands[] = {op->x, op->b, op->t, op->y};
    for (int j = 0; j < 4; ++j)
      if (operands[j] && operands[j]->id == id)
        return operands[j];
  }
  return NULL;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                  cudnnBackendDescriptor_t plan,
                                  cudnnBackendDescriptor_t pack) {
  const Handle *h = (const Handle *)handle;
  const Desc *p = (const Desc *)plan, *v = (const Desc *)pack;
  if (h->context != fakeCudaCurrentContext()) {
    fprintf(stderr, "fake_cudnn: cudnnBackendExecute: a handle used on "
                    "another device\n");
    return CUDNN_STATUS_BAD_PARAM;
  }
  if (getenv("MTE_FAKE_CUDNN_EXECUTE_FAILS")) {
    if (logging())
      fprintf(stderr, "fake_cudnn: execute refused\n");
    return CUDNN_STATUS_NOT_SUPPORTED;
  }
  if (!logging())
    return CUDNN_STATUS_SUCCESS;
  fprintf(stderr, "fake_cudnn: execute");
  for (int64_t i = 0; i < v->packCount; ++i) {
    const Desc *t = tensorOf(p->graph, v->ids[i]);
    fprintf(stderr, " %lld", (long long)v->ids[i]);
    if (!t)
      fprintf(stderr, "(not in the graph)");
    else if (t->byValue && t->dataType == CUDNN_DATA_FLOAT)
      fprintf(stderr, "=%g", *(const float *)v->pointers[i]);
    else if (t->byValue && t->dataType == CUDNN_DATA_INT32)
      fprintf(stderr, "=%d", *(const int *)v->pointers[i]);
    else if (!v->pointers[i])
      fprintf(stderr, "(null)");
  }
  fprintf(stderr, "\n");
  return CUDNN_STATUS_SUCCESS;
}
