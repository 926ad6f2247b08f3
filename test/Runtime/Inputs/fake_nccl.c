/*===- fake_nccl.c - NCCL over fake_cuda.c ------------------------*- C -*-===*\
|*                                                                            *|
|* libnccl.so.2 for nccl.test: the functions libmte_runtime calls            *|
|* (lib/Runtime/Nccl.def), which print one line each on stderr ("fake_nccl:  *|
|* rank 0 of 2: ...") saying what they were given: the rank, world, device   *|
|* and unique id of a communicator, the color and key of a split, a          *|
|* collective's count, type, op, group and whether its stream is being       *|
|* captured. The ranks do not talk: a communicator's collectives give each   *|
|* rank its own contribution (an all-reduce copies send to recv, an          *|
|* all-gather writes the rank's part, a reduce-scatter takes it, a broadcast *|
|* copies send to recv), which for a world of one rank is what NCCL          *|
|* computes; a send is only printed, and a receive zeroes its buffer (so a   *|
|* compiled pipeline's index status says no index was out of range). A      *|
|* communicator, its stream and its buffers must belong to the current      *|
|* context (fake_cuda.c).                                                    *|
|*                                                                            *|
|*   FAKE_NCCL_FAIL=init|split|collective|async  fails that call (async: the  *|
|*                                                communicator's async error)*|
|*   FAKE_NCCL_VERSION=N                          ncclGetVersion's answer     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fakeCudaCurrentDevice(void);
int fakeCudaCapturing(const void *stream);
int fakeCudaCheck(const void *object, const char *what);

enum {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInvalidArgument = 4,
  kRemoteError = 6,
};

typedef struct {
  char internal[128];
} UniqueId;

/* The head of ncclConfig_t: the fields every version has. */
typedef struct {
  size_t size;
  unsigned magic;
  unsigned version;
  int blocking;
} ConfigHead;

typedef struct Comm {
  int rank, ranks, device;
  /* "world", or "split of color C" */
  char name[48];
} Comm;

static __thread const char *lastError = "";

/* Whether FAKE_NCCL_FAIL names `call`. */
static int failing(const char *call) {
  const char *fail = getenv("FAKE_NCCL_FAIL");
  return fail && strcmp(fail, call) == 0;
}

int ncclGetVersion(int *version) {
  const char *text = getenv("FAKE_NCCL_VERSION");
  *version = text ? atoi(text) : 22809;
  return kSuccess;
}

int ncclGetUniqueId(UniqueId *id) {
  const char *address = getenv("NCCL_COMM_ID");
  memset(id, 0, sizeof(*id));
  if (address && *address)
    snprintf(id->internal, sizeof(id->internal), "fake-id-at-%s", address);
  else
    snprintf(id->internal, sizeof(id->internal), "fake-id-%d", (int)getpid());
  return kSuccess;
}

const char *ncclGetErrorString(int result) {
  switch (result) {
  case kSuccess:
    return "no error";
  case kSystemError:
    return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case kRemoteError:
    return "remote process exited or there was a network error";
  default:
    return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  }
}

const char *ncclGetLastError(Comm *comm) { return lastError; }

int ncclCommInitRankConfig(Comm **comm, int ranks, UniqueId id, int rank,
                           const ConfigHead *config) {
  Comm *made;
  if (!config || config->magic != 0xcafebeef || config->blocking != 1 ||
      config->size < sizeof(ConfigHead)) {
    lastError = "the config is not NCCL_CONFIG_INITIALIZER's, blocking";
    return kInvalidArgument;
  }
  fprintf(stderr, "fake_nccl: rank %d of %d: init on device %d, id '%.64s'\n",
          rank, ranks, fakeCudaCurrentDevice(), id.internal);
  if (failing("init")) {
    lastError = "fake_nccl fails init";
    *comm = NULL;
    return kSystemError;
  }
  made = malloc(sizeof(Comm));
  made->rank = rank;
  made->ranks = ranks;
  made->device = fakeCudaCurrentDevice();
  snprintf(made->name, sizeof(made->name), "world");
  *comm = made;
  return kSuccess;
}

int ncclCommSplit(Comm *comm, int color, int key, Comm **split,
                  const void *config) {
  Comm *made;
  fprintf(stderr, "fake_nccl: rank %d of %d: split, color %d, key %d\n",
          comm->rank, comm->ranks, color, key);
  if (failing("split")) {
    lastError = "fake_nccl fails split";
    *split = NULL;
    return kSystemError;
  }
  made = malloc(sizeof(Comm));
  made->rank = key;
  made->ranks = -1; /* unknown to a fake */
  made->device = comm->device;
  snprintf(made->name, sizeof(made->name), "split of color %d", color);
  *split = made;
  return kSuccess;
}

static int release(Comm *comm, const char *how) {
  fprintf(stderr, "fake_nccl: rank %d: %s %s\n", comm->rank, how, comm->name);
  free(comm);
  return kSuccess;
}
int ncclCommDestroy(Comm *comm) { return release(comm, "destroy"); }
int ncclCommAbort(Comm *comm) { return release(comm, "abort"); }

int ncclCommGetAsyncError(Comm *comm, int *error) {
  *error = failing("async") ? kRemoteError : kSuccess;
  if (*error)
    lastError = "fake_nccl: rank 1 exited";
  return kSuccess;
}

/* The size of an ncclDataType_t's element. */
static size_t typeSize(int type) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return type >= 0 && type < 12 ? sizes[type] : 0;
}

/* Prints the call and checks its context; non-zero when it fails. */
static int enter(const char *what, size_t count, int type, int op,
                 const Comm *comm, void *stream) {
  if (op >= 0)
    fprintf(stderr, "fake_nccl: rank %d: %s(%zu of type %d, op %d) in %s%s\n",
            comm->rank, what, count, type, op, comm->name,
            fakeCudaCapturing(stream) ? ", captured" : "");
  else
    fprintf(stderr, "fake_nccl: rank %d: %s(%zu of type %d) in %s%s\n",
            comm->rank, what, count, type, comm->name,
            fakeCudaCapturing(stream) ? ", captured" : "");
  if (comm->device != fakeCudaCurrentDevice() || !stream ||
      fakeCudaCheck(stream, what)) {
    lastError = "a communicator or stream of another device";
    return kUnhandledCudaError;
  }
  if (failing("collective")) {
    lastError = "fake_nccl fails the collective";
    return kSystemError;
  }
  return kSuccess;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op,
                  Comm *comm, void *stream) {
  int result = enter("ncclAllReduce", count, type, op, comm, stream);
  if (!result)
    memmove(recv, send, count * typeSize(type));
  return result;
}

int ncclAllGather(const void *send, void *recv, size_t count, int type,
                  Comm *comm, void *stream) {
  int result = enter("ncclAllGather", count, type, -1, comm, stream);
  size_t bytes = count * typeSize(type);
  if (!result)
    memmove((char *)recv + comm->rank * bytes, send, bytes);
  return result;
}

int ncclReduceScatter(const void *send, void *recv, size_t count, int type,
                      int op, Comm *comm, void *stream) {
  int result = enter("ncclReduceScatter", count, type, op, comm, stream);
  size_t bytes = count * typeSize(type);
  if (!result)
    memmove(recv, (const char *)send + comm->rank * bytes, bytes);
  return result;
}

int ncclBroadcast(const void *send, void *recv, size_t count, int type,
                  int root, Comm *comm, void *stream) {
  int result = enter("ncclBroadcast", count, type, root, comm, stream);
  if (!result)
    memmove(recv, send, count * typeSize(type));
  return result;
}

int ncclSend(const void *send, size_t count, int type, int peer, Comm *comm,
             void *stream) {
  (void)send;
  return enter("ncclSend", count, type, peer, comm, stream);
}

int ncclRecv(void *recv, size_t count, int type, int peer, Comm *comm,
             void *stream) {
  int result = enter("ncclRecv", count, type, peer, comm, stream);
  if (!result)
    memset(recv, 0, count * typeSize(type));
  return result;
}
