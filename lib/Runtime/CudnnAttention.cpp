//===- CudnnAttention.cpp - attention through cuDNN's fused SDPA ----------===//
//
// cuDNN 9 runs scaled dot-product attention as one fused kernel when it is
// given the operation graph its fused-attention engines recognise, through
// the backend API (cudnn_graph.h; cuDNN's own frontend builds the same
// graph):
//
//   S = Q·Kᵀ (f32)  ->  S · scale  ->  [causal: select(row + (Skv - Sq) >=
//   col, S, -inf)]  ->  max, sub, exp, sum, div (f32)  ->  P (the inputs'
//   16-bit type)  ->  O = P·V
//
// On the H200 PyTorch's cuDNN SDPA ran at 1.8-1.9x its flash backend, whose
// rate mte's mma.sync kernel has (docs/performance.md). A plan (the graph,
// the heuristic's first engine that builds, its workspace) is made per
// device, stream and shape on first use, which the first, eager, forward
// does; later calls only fill a variant pack and execute, and a captured
// forward replays what that enqueued. cuDNN is opened with dlopen like
// cuBLASLt; a runtime built without cudnn_graph.h has no cuDNN route.
//
//===----------------------------------------------------------------------===//

#include "CudnnAttention.h"

#include "CudaDevice.h"
#include "DynamicLibrary.h"

#include "mte-c/ModelABI.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

namespace {
enum class Route { Auto, Kernel, Cudnn, Invalid };

/// MTE_ATTENTION as the process first read it.
const std::string &routeValue() {
  static const std::string value = [] {
    const char *set = std::getenv("MTE_ATTENTION");
    return std::string(set ? set : "");
  }();
  return value;
}

/// MTE_ATTENTION, read once (CudnnAttention.h).
Route route() {
  static const Route chosen = [] {
    const std::string &value = routeValue();
    if (value.empty() || value == "kernel")
      return Route::Kernel;
    if (value == "auto")
      return Route::Auto;
    if (value == "cudnn")
      return Route::Cudnn;
    return Route::Invalid;
  }();
  return chosen;
}

/// Failed for an MTE_ATTENTION that is none of the three.
bool invalidRoute(std::string &error) {
  if (route() != Route::Invalid)
    return false;
  error = "mte_cuda_attention: MTE_ATTENTION is \"" + routeValue() +
          "\", not auto, kernel or cudnn";
  return true;
}
} // namespace

std::string mte::cuda::describeAttention(const AttentionShape &s) {
  return "batch " + std::to_string(s.batch) + ", " + std::to_string(s.heads) +
         "/" + std::to_string(s.kvHeads) + " heads, " +
         std::to_string(s.queries) + "x" + std::to_string(s.keys) +
         " tokens, head dimension " + std::to_string(s.headDim) +
         (s.causal ? ", causal" : "");
}

#ifdef MTE_HAVE_CUDNN_H
#include <cudnn_graph.h>

namespace {

/// The cuDNN functions, each named once in Cudnn.def.
struct Library {
#define MTE_DYNAMIC_SYMBOL(name, type)                                         \
  mte::runtime::FunctionPointer<type> name = nullptr;
#include "Cudnn.def"
};

/// Opens cuDNN ($MTE_CUDNN_LIBRARY, else libcudnn.so.9 on the loader path,
/// where PyTorch's wheel has already put it in a process that imported
/// torch, else the CUDA toolkit's lib64), once per process. cuDNN 8 lacks
/// what the graph needs.
const Library *openLibrary(std::string &error) {
  return mte::runtime::openOnce<Library>(
      [](Library &l) {
        const mte::runtime::DynamicSymbol symbols[] = {
#define MTE_DYNAMIC_SYMBOL(name, type) {#name, &l.name},
#include "Cudnn.def"
        };
        return mte::runtime::openAndResolve(
            "MTE_CUDNN_LIBRARY",
            {"libcudnn.so.9", mte::runtime::toolkitLibrary("libcudnn.so.9")},
            symbols, std::size(symbols),
            "cannot load cuDNN 9 (libcudnn.so.9; set MTE_CUDNN_LIBRARY to its "
            "path)",
            "cuDNN lacks ");
      },
      error);
}

// The tensors' unique ids in the graph and the variant pack.
enum TensorId : int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kScale,
  kNegativeInfinity,
  kDiagonalShift,
  kFirstVirtual = 100,
};

/// A plan and the descriptors it was built from (kept alive with it).
struct Plan {
  const Library *lib = nullptr;
  std::vector<cudnnBackendDescriptor_t> descriptors;
  cudnnBackendDescriptor_t executionPlan = nullptr;
  void *workspace = nullptr;
  int64_t workspaceBytes = 0;
  bool causalShift = false; // the mask reads kDiagonalShift
  void *scratch = nullptr;  // the packed 16-bit output (toScratch)
  ~Plan() {
    for (cudnnBackendDescriptor_t d : descriptors)
      lib->cudnnBackendDestroyDescriptor(d);
    // The workspace and scratch are never released: captured forwards may
    // still replay with their addresses.
  }
};

/// Builds one operation graph through the backend API, keeping every
/// descriptor it creates; the first failure is kept in `error`.
class GraphBuilder {
public:
  GraphBuilder(const Library &l, Plan &plan) : l(l), plan(plan) {}

  bool ok() const { return error.empty(); }
  std::string error;

  cudnnBackendDescriptor_t create(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = nullptr;
    if (!ok())
      return nullptr;
    if (cudnnStatus_t s = l.cudnnBackendCreateDescriptor(type, &d)) {
      fail("create descriptor " + std::to_string(type), s);
      return nullptr;
    }
    plan.descriptors.push_back(d);
    return d;
  }

  template <typename T>
  void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
           cudnnBackendAttributeType_t type, int64_t count, const T *values) {
    if (!ok())
      return;
    if (cudnnStatus_t s = l.cudnnBackendSetAttribute(d, name, type, count,
                                                     values))
      fail("set attribute " + std::to_string(name), s);
  }
  void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
           cudnnBackendDescriptor_t value) {
    set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value);
  }

  void finalize(cudnnBackendDescriptor_t d, const char *what) {
    if (!ok())
      return;
    if (cudnnStatus_t s = l.cudnnBackendFinalize(d))
      fail(std::string("finalize ") + what, s);
  }

  /// A tensor of `type`: 4-d, 16-byte aligned; virtual ones are the graph's
  /// intermediates, by-value ones scalars passed from the host.
  cudnnBackendDescriptor_t tensor(int64_t id, cudnnDataType_t type,
                                  const std::array<int64_t, 4> &dims,
                                  const std::array<int64_t, 4> &strides,
                                  bool isVirtual, bool byValue = false) {
    cudnnBackendDescriptor_t t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t alignment = 16;
    bool virtualFlag = isVirtual;
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id);
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virtualFlag);
    if (byValue)
      set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byValue);
    finalize(t, "tensor");
    return t;
  }

  /// A virtual tensor with a fresh id.
  cudnnBackendDescriptor_t virtualTensor(cudnnDataType_t type,
                                         const std::array<int64_t, 4> &dims,
                                         const std::array<int64_t, 4> &strides) {
    return tensor(nextVirtual++, type, dims, strides, /*isVirtual=*/true);
  }

  /// A scalar passed by value.
  cudnnBackendDescriptor_t scalar(int64_t id, cudnnDataType_t type) {
    return tensor(id, type, {1, 1, 1, 1}, {1, 1, 1, 1}, false,
                  /*byValue=*/true);
  }

  void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
              cudnnBackendDescriptor_t c) {
    cudnnBackendDescriptor_t desc = create(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    set(desc, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    finalize(desc, "matmul");
    operation(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
              {{CUDNN_ATTR_OPERATION_MATMUL_ADESC, a},
               {CUDNN_ATTR_OPERATION_MATMUL_BDESC, b},
               {CUDNN_ATTR_OPERATION_MATMUL_CDESC, c},
               {CUDNN_ATTR_OPERATION_MATMUL_DESC, desc}});
  }

  /// y = mode(x[, b[, t]]) computed in `precision`; `axis` for GEN_INDEX.
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t precision,
                 cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                 cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y,
                 int64_t axis = -1) {
    cudnnBackendDescriptor_t desc = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    set(desc, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(desc, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1,
        &precision);
    if (axis >= 0)
      set(desc, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    finalize(desc, "pointwise");
    operation(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
              {{CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc},
               {CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x},
               {CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b},
               {CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t},
               {CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y}});
  }

  void reduction(cudnnReduceTensorOp_t mode, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t y) {
    cudnnBackendDescriptor_t desc = create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    set(desc, CUDNN_ATTR_REDUCTION_OPERATOR,
        CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
    set(desc, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
        &compute);
    finalize(desc, "reduction");
    operation(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
              {{CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x},
               {CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y},
               {CUDNN_ATTR_OPERATION_REDUCTION_DESC, desc}});
  }

  /// The operation graph of the ops made so far, and its first engine
  /// configuration (in the heuristic's order) that builds a plan.
  void buildPlan(cudnnHandle_t handle) {
    cudnnBackendDescriptor_t graph =
        create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
        &handle);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        static_cast<int64_t>(ops.size()), ops.data());
    finalize(graph, "operation graph");
    cudnnBackendDescriptor_t heuristic =
        create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    set(heuristic, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    set(heuristic, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    finalize(heuristic, "engine heuristic");
    constexpr int kMaxConfigs = 8;
    std::array<cudnnBackendDescriptor_t, kMaxConfigs> configs{};
    for (auto &config : configs)
      config = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t count = 0;
    if (!ok())
      return;
    if (cudnnStatus_t s = l.cudnnBackendGetAttribute(
            heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, kMaxConfigs, &count,
            configs.data())) {
      fail("get the heuristic's engines", s);
      return;
    }
    std::string reasons;
    // cuDNN reports every engine it has, and fills at most kMaxConfigs.
    for (int64_t i = 0; i < std::min<int64_t>(count, kMaxConfigs); ++i) {
      cudnnBackendDescriptor_t candidate =
          create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      set(candidate, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
          &handle);
      set(candidate, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i]);
      if (!ok())
        return;
      if (cudnnStatus_t s = l.cudnnBackendFinalize(candidate)) {
        reasons += "; engine " + std::to_string(i) + ": " + describe(s);
        continue;
      }
      int64_t returned = 0;
      if (cudnnStatus_t s = l.cudnnBackendGetAttribute(
              candidate, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
              CUDNN_TYPE_INT64, 1, &returned, &plan.workspaceBytes)) {
        fail("get the plan's workspace size", s);
        return;
      }
      plan.executionPlan = candidate;
      return;
    }
    error = "cuDNN has no engine for the graph (" + std::to_string(count) +
            " proposed" + reasons + ")";
  }

private:
  /// An operation of `type` whose descriptor attributes are `operands`
  /// (null ones left unset), appended to the graph's operations.
  void operation(
      cudnnBackendDescriptorType_t type,
      std::initializer_list<
          std::pair<cudnnBackendAttributeName_t, cudnnBackendDescriptor_t>>
          operands) {
    cudnnBackendDescriptor_t op = create(type);
    for (auto [name, value] : operands)
      if (value)
        set(op, name, value);
    finalize(op, "operation");
    ops.push_back(op);
  }

  std::string describe(cudnnStatus_t status) const {
    char message[512] = "";
    l.cudnnGetLastErrorString(message, sizeof(message));
    return std::string(l.cudnnGetErrorString(status)) +
           (message[0] ? std::string(": ") + message : std::string());
  }
  void fail(const std::string &what, cudnnStatus_t status) {
    error = what + " failed: " + describe(status);
  }

  const Library &l;
  Plan &plan;
  std::vector<cudnnBackendDescriptor_t> ops;
  int64_t nextVirtual = kFirstVirtual;
};

/// The stream, dtype, batch, heads, kvHeads, queries, keys, headDim, the
/// eight strides, causal, toScratch. A plan's workspace and scratch are its
/// stream's: models running at once on one device (each on its own stream)
/// do not share them.
using PlanKey =
    std::tuple<void *, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t,
               int64_t, std::array<int64_t, 8>, bool, bool>;

/// cuDNN on one device: its handle and the plans made there (a plan that
/// failed is kept as null with its reason, so that it is not tried again).
struct DeviceState {
  cudnnHandle_t handle = nullptr;
  std::string error; // why cuDNN cannot run on this device
  std::mutex mutex;  // the plans, and the handle's stream
  std::map<PlanKey, std::unique_ptr<Plan>> plans;
  std::map<PlanKey, std::string> failed;
};

/// The calling thread's device's state, created on first use; null with the
/// reason in `error`.
DeviceState *deviceState(const Library &l, std::string &error) {
  static std::mutex mutex;
  static auto *states = new std::map<int, std::unique_ptr<DeviceState>>();
  mte::cuda::Device *device = mte::cuda::Device::current(error);
  if (!device)
    return nullptr;
  std::lock_guard<std::mutex> guard(mutex);
  std::unique_ptr<DeviceState> &state = (*states)[device->ordinal()];
  if (!state) {
    state = std::make_unique<DeviceState>();
    if (l.cudnnGetVersion() < 90000)
      state->error = "cuDNN " + std::to_string(l.cudnnGetVersion()) +
                     " is older than 9.0";
    else if (cudnnStatus_t s = l.cudnnCreate(&state->handle))
      state->error = std::string("cudnnCreate failed: ") +
                     l.cudnnGetErrorString(s);
  }
  error = state->error;
  return error.empty() ? state.get() : nullptr;
}

/// The plan of `shape` (see the file comment), built on `handle`.
std::unique_ptr<Plan> buildPlan(const Library &l, cudnnHandle_t handle,
                                const mte::cuda::AttentionShape &shape,
                                const std::array<int64_t, 2> &oStrides,
                                std::string &error) {
  auto plan = std::make_unique<Plan>();
  plan->lib = &l;
  GraphBuilder g(l, *plan);
  const int64_t b = shape.batch, h = shape.heads, hk = shape.kvHeads,
                sq = shape.queries, skv = shape.keys, d = shape.headDim;
  cudnnDataType_t io =
      shape.dtype == MTE_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  // The token-major layouts as [batch, heads, tokens, d] views; Kᵀ swaps
  // K's last two dimensions.
  auto q = g.tensor(kQ, io, {b, h, sq, d},
                    {shape.qBatchStride, d, shape.qRowStride, 1}, false);
  auto kT = g.tensor(kK, io, {b, hk, d, skv},
                     {shape.kBatchStride, d, 1, shape.kRowStride}, false);
  auto v = g.tensor(kV, io, {b, hk, skv, d},
                    {shape.vBatchStride, d, shape.vRowStride, 1}, false);
  auto o = g.tensor(kO, io, {b, h, sq, d}, {oStrides[0], d, oStrides[1], 1},
                    false);
  const std::array<int64_t, 4> scoreDims{b, h, sq, skv},
      scoreStrides{h * sq * skv, sq * skv, skv, 1}, rowDims{b, h, sq, 1},
      rowStrides{h * sq, sq, 1, 1};
  auto score = [&](cudnnDataType_t type) {
    return g.virtualTensor(type, scoreDims, scoreStrides);
  };
  auto s = score(CUDNN_DATA_FLOAT);
  g.matmul(q, kT, s);
  auto scaled = score(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, s,
              g.scalar(kScale, CUDNN_DATA_FLOAT), nullptr, scaled);
  s = scaled;
  if (shape.causal) {
    auto row = score(CUDNN_DATA_INT32), column = score(CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, s, nullptr,
                nullptr, row, /*axis=*/2);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, s, nullptr,
                nullptr, column, /*axis=*/3);
    if (skv != sq) {
      // Bottom right: query i sees keys up to i + (Skv - Sq).
      auto shifted = score(CUDNN_DATA_INT32);
      g.pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, row,
                  g.scalar(kDiagonalShift, CUDNN_DATA_INT32), nullptr, shifted,
                  /*axis=*/3);
      row = shifted;
      plan->causalShift = true;
    }
    auto keep = score(CUDNN_DATA_BOOLEAN);
    g.pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, column,
                nullptr, keep);
    auto masked = score(CUDNN_DATA_FLOAT);
    g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, s,
                g.scalar(kNegativeInfinity, CUDNN_DATA_FLOAT), keep, masked);
    s = masked;
  }
  auto rowMax = g.virtualTensor(CUDNN_DATA_FLOAT, rowDims, rowStrides);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, s, rowMax);
  auto shiftedScores = score(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, s, rowMax, nullptr,
              shiftedScores);
  auto exponentials = score(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, shiftedScores, nullptr,
              nullptr, exponentials);
  auto rowSum = g.virtualTensor(CUDNN_DATA_FLOAT, rowDims, rowStrides);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, exponentials, rowSum);
  // P in the inputs' type: what cuDNN's second product takes as A.
  auto p = score(io);
  g.pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, exponentials, rowSum,
              nullptr, p);
  g.matmul(p, v, o);
  g.buildPlan(handle);
  if (!g.ok()) {
    error = g.error;
    return nullptr;
  }
  if (plan->workspaceBytes > 0) {
    plan->workspace =
        mte::cuda::allocate(static_cast<size_t>(plan->workspaceBytes), error);
    if (!plan->workspace)
      return nullptr;
  }
  return plan;
}

} // namespace

mte::cuda::CudnnAttention mte::cuda::enqueueCudnnAttention(
    const AttentionShape &shape, const void *q, const void *k, const void *v,
    void *o, float scale, bool toScratch, void **scratch, std::string &error) {
  if (invalidRoute(error))
    return CudnnAttention::Failed;
  Route chosen = route();
  if (chosen == Route::Kernel)
    return CudnnAttention::NotTaken;
  // What cuDNN cannot run is mte's kernel's in every mode: a causal query
  // that sees no key (cuDNN's softmax over no key is not zero).
  if (shape.causal && shape.queries > shape.keys)
    return CudnnAttention::NotTaken;
  auto notTaken = [&](const std::string &reason) {
    if (chosen == Route::Auto)
      return CudnnAttention::NotTaken;
    error = "mte_cuda_attention through cuDNN (" + describeAttention(shape) +
            "): " + reason;
    return CudnnAttention::Failed;
  };
  const Library *l = openLibrary(error);
  if (!l)
    return notTaken(error);
  DeviceState *state = deviceState(*l, error);
  if (!state)
    return notTaken(error);

  const int64_t rowElements = shape.heads * shape.headDim;
  std::array<int64_t, 2> oStrides =
      toScratch ? std::array<int64_t, 2>{shape.queries * rowElements,
                                         rowElements}
                : std::array<int64_t, 2>{shape.oBatchStride, shape.oRowStride};
  void *stream = mte::cuda::currentStream();
  PlanKey key{stream,
              shape.dtype,
              shape.batch,
              shape.heads,
              shape.kvHeads,
              shape.queries,
              shape.keys,
              shape.headDim,
              {shape.qBatchStride, shape.qRowStride, shape.kBatchStride,
               shape.kRowStride, shape.vBatchStride, shape.vRowStride,
               oStrides[0], oStrides[1]},
              shape.causal,
              toScratch};
  std::lock_guard<std::mutex> guard(state->mutex);
  if (auto it = state->failed.find(key); it != state->failed.end())
    return notTaken(it->second);
  std::unique_ptr<Plan> &plan = state->plans[key];
  if (!plan) {
    std::string reason;
    plan = buildPlan(*l, state->handle, shape, oStrides, reason);
    if (plan && toScratch) {
      size_t bytes = static_cast<size_t>(shape.batch * shape.queries *
                                         rowElements) *
                     2;
      plan->scratch = mte::cuda::allocate(bytes, reason);
      if (!plan->scratch)
        plan.reset();
    }
    if (!plan) {
      state->plans.erase(key);
      state->failed.emplace(key, reason);
      return notTaken(reason);
    }
  }

  void *output = toScratch ? plan->scratch : o;
  if (scratch)
    *scratch = plan->scratch;
  // By-value scalars are read from the host when the plan is enqueued.
  // cuDNN before 9.10 wants the mask's fill finite.
  float negativeInfinity = l->cudnnGetVersion() >= 91000
                               ? -std::numeric_limits<float>::infinity()
                               : std::numeric_limits<float>::lowest();
  int32_t diagonalShift = static_cast<int32_t>(shape.keys - shape.queries);
  std::vector<int64_t> ids = {kQ, kK, kV, kO, kScale};
  std::vector<void *> pointers = {const_cast<void *>(q), const_cast<void *>(k),
                                  const_cast<void *>(v), output, &scale};
  if (shape.causal) {
    ids.push_back(kNegativeInfinity);
    pointers.push_back(&negativeInfinity);
  }
  if (plan->causalShift) {
    ids.push_back(kDiagonalShift);
    pointers.push_back(&diagonalShift);
  }
  cudnnBackendDescriptor_t pack = nullptr;
  // A plan cuDNN does not enqueue is not tried again: auto takes the kernel.
  auto failed = [&](const char *what, cudnnStatus_t s) {
    char message[512] = "";
    l->cudnnGetLastErrorString(message, sizeof(message));
    std::string reason = std::string(what) + " failed: " +
                         l->cudnnGetErrorString(s) +
                         (message[0] ? std::string(": ") + message
                                     : std::string());
    if (pack)
      l->cudnnBackendDestroyDescriptor(pack);
    state->failed.emplace(key, reason);
    return notTaken(reason);
  };
  if (cudnnStatus_t s = l->cudnnBackendCreateDescriptor(
          CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack))
    return failed("create the variant pack", s);
  cudnnStatus_t s = l->cudnnBackendSetAttribute(
      pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
      static_cast<int64_t>(ids.size()), ids.data());
  if (!s)
    s = l->cudnnBackendSetAttribute(
        pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
        static_cast<int64_t>(pointers.size()), pointers.data());
  if (!s)
    s = l->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                    CUDNN_TYPE_VOID_PTR, 1, &plan->workspace);
  if (!s)
    s = l->cudnnBackendFinalize(pack);
  if (s)
    return failed("fill the variant pack", s);
  if ((s = l->cudnnSetStream(state->handle,
                             static_cast<cudaStream_t>(stream))))
    return failed("cudnnSetStream", s);
  if ((s = l->cudnnBackendExecute(state->handle, plan->executionPlan, pack)))
    return failed("cudnnBackendExecute", s);
  l->cudnnBackendDestroyDescriptor(pack);
  return CudnnAttention::Enqueued;
}

#else // !MTE_HAVE_CUDNN_H

mte::cuda::CudnnAttention mte::cuda::enqueueCudnnAttention(
    const AttentionShape &, const void *, const void *, const void *, void *,
    float, bool, void **, std::string &error) {
  if (invalidRoute(error))
    return CudnnAttention::Failed;
  if (route() == Route::Cudnn) {
    error = "mte_cuda_attention: MTE_ATTENTION=cudnn, but this libmte_runtime "
            "was built without cuDNN's headers";
    return CudnnAttention::Failed;
  }
  return CudnnAttention::NotTaken;
}

#endif // MTE_HAVE_CUDNN_H
