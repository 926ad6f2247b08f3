//===- CublasLt.cpp - GEMMs of CUDA models through cuBLASLt ---------------===//
//
// CUDA models call mte_cuda_gemm for the product of every linear and of
// attention's two batched products (mte-matmul-to-library-call): A and B in
// f32, bf16, f16 or E4M3 (with per-tensor, block or row scales), accumulated in
// f32 and written in f32, bf16 or f16, or in E4M3 with a D scale and AMAX_D.
// cuBLASLt is opened on the first call, like the driver; each device has its
// own handle and workspace (Device::cublasLt), and caches a plan (descriptors
// and the heuristic's algorithm) per shape, types and epilogue, so that later
// runs only enqueue the matmul.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "DynamicLibrary.h"

#include "mte-c/KernelABI.h"
#include "mte-c/ModelABI.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#ifdef MTE_HAVE_CUBLASLT_H
// Only to check the values transcribed below: cuBLASLt is opened at run
// time, never linked.
#include <cublasLt.h>
#endif

namespace {
// The cublasLt.h subset used here (CUDA 12 and 13), transcribed so that the
// runtime builds without the CUDA toolkit.
using Status = int;
using Handle = void *;
using MatmulDesc = void *;
using Layout = void *;
using Preference = void *;
struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};
constexpr int kR32F = 0;             // CUDA_R_32F
constexpr int kR16F = 2;             // CUDA_R_16F
constexpr int kR16BF = 14;           // CUDA_R_16BF
constexpr int kR8FE4M3 = 28;         // CUDA_R_8F_E4M3
constexpr int kCompute32F = 68;      // CUBLAS_COMPUTE_32F: fp32 accumulation
constexpr int kDescTransA = 3;       // CUBLASLT_MATMUL_DESC_TRANSA
constexpr int kDescTransB = 4;       // CUBLASLT_MATMUL_DESC_TRANSB
constexpr int kDescEpilogue = 7;     // CUBLASLT_MATMUL_DESC_EPILOGUE
constexpr int kDescBiasPointer = 8;  // CUBLASLT_MATMUL_DESC_BIAS_POINTER
constexpr int kDescBiasType = 26;    // CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE
constexpr int kDescAScale = 17;      // CUBLASLT_MATMUL_DESC_A_SCALE_POINTER
constexpr int kDescBScale = 18;      // CUBLASLT_MATMUL_DESC_B_SCALE_POINTER
constexpr int kDescDScale = 20;      // CUBLASLT_MATMUL_DESC_D_SCALE_POINTER
constexpr int kDescAmaxD = 21;       // CUBLASLT_MATMUL_DESC_AMAX_D_POINTER
constexpr int kDescFastAccum = 25;   // CUBLASLT_MATMUL_DESC_FAST_ACCUM
constexpr int kDescAScaleMode = 31;  // CUBLASLT_MATMUL_DESC_A_SCALE_MODE
constexpr int kDescBScaleMode = 32;  // CUBLASLT_MATMUL_DESC_B_SCALE_MODE
constexpr int32_t kScaleVec128 = 4;  // CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
constexpr int32_t kScaleBlk128 = 5;  // ..._BLK128x128_32F
constexpr int32_t kScaleOuterVec = 3; // ..._OUTER_VEC_32F
constexpr int kPrefMaxWorkspace = 1; // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
constexpr int kLayoutBatchCount = 5; // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT
constexpr int kLayoutBatchStride = 6; // ..._STRIDED_BATCH_OFFSET
constexpr int kOpN = 0, kOpT = 1;
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

#ifdef MTE_HAVE_CUBLASLT_H
// Built with the toolkit's headers: every value and layout above is theirs.
static_assert(kR32F == CUDA_R_32F && kR16F == CUDA_R_16F &&
              kR16BF == CUDA_R_16BF && kR8FE4M3 == CUDA_R_8F_E4M3);
static_assert(kCompute32F == CUBLAS_COMPUTE_32F);
static_assert(kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA &&
              kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB &&
              kDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE &&
              kDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER &&
              kDescBiasType == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE &&
              kDescAScale == CUBLASLT_MATMUL_DESC_A_SCALE_POINTER &&
              kDescBScale == CUBLASLT_MATMUL_DESC_B_SCALE_POINTER &&
              kDescDScale == CUBLASLT_MATMUL_DESC_D_SCALE_POINTER &&
              kDescAmaxD == CUBLASLT_MATMUL_DESC_AMAX_D_POINTER &&
              kDescFastAccum == CUBLASLT_MATMUL_DESC_FAST_ACCUM &&
              kDescAScaleMode == CUBLASLT_MATMUL_DESC_A_SCALE_MODE &&
              kDescBScaleMode == CUBLASLT_MATMUL_DESC_B_SCALE_MODE);
static_assert(kScaleVec128 == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F &&
              kScaleBlk128 == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F &&
              kScaleOuterVec == CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F);
static_assert(kPrefMaxWorkspace == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(kLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT &&
              kLayoutBatchStride ==
                  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(kOpN == CUBLAS_OP_N && kOpT == CUBLAS_OP_T);
static_assert(sizeof(Status) == sizeof(cublasStatus_t));
static_assert(sizeof(Algo) == sizeof(cublasLtMatmulAlgo_t));
static_assert(sizeof(HeuristicResult) ==
                  sizeof(cublasLtMatmulHeuristicResult_t) &&
              offsetof(HeuristicResult, workspaceSize) ==
                  offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize) &&
              offsetof(HeuristicResult, state) ==
                  offsetof(cublasLtMatmulHeuristicResult_t, state) &&
              offsetof(HeuristicResult, wavesCount) ==
                  offsetof(cublasLtMatmulHeuristicResult_t, wavesCount));
// Models ask for epilogues in cuBLASLt's values, which the runtime passes on.
static_assert(int(MTE_GEMM_EPILOGUE_DEFAULT) == CUBLASLT_EPILOGUE_DEFAULT &&
              int(MTE_GEMM_EPILOGUE_RELU) == CUBLASLT_EPILOGUE_RELU &&
              int(MTE_GEMM_EPILOGUE_BIAS) == CUBLASLT_EPILOGUE_BIAS &&
              int(MTE_GEMM_EPILOGUE_GELU) == CUBLASLT_EPILOGUE_GELU);
#endif

/// The cuBLASLt functions, each named once in CublasLt.def.
struct Library {
#define MTE_DYNAMIC_SYMBOL(name, type)                                         \
  mte::runtime::FunctionPointer<type> name = nullptr;
#include "CublasLt.def"
};

struct Plan {
  MatmulDesc desc;
  Layout a, b, c, d; // d is c unless D is E4M3 (C then has the bias's type)
  Algo algo;
  // The bias and scale pointers are set on the descriptor per call.
  std::mutex pointerMutex;
};

/// Where an FP8 GEMM writing E4M3 takes its D scale and writes its amax.
struct Fp8Output {
  void *scale = nullptr, *amax = nullptr;
};

/// batch, m, n, k, transB, A/B type, C type, D type, epilogue, scale mode,
/// whether AMAX_D is written.
using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, bool, int, int,
                           int, uint32_t, int32_t, bool>;

/// Opens cuBLASLt ($MTE_CUBLASLT_LIBRARY, else the loader path, else the
/// CUDA toolkit's lib64) and resolves its functions, once per process.
/// Null with the reason in `error`, the same on every call after a failure.
const Library *openLibrary(std::string &error) {
  return mte::runtime::openOnce<Library>(
      [](Library &l) {
        const mte::runtime::DynamicSymbol symbols[] = {
#define MTE_DYNAMIC_SYMBOL(name, type) {#name, &l.name},
#include "CublasLt.def"
        };
        return mte::runtime::openAndResolve(
            "MTE_CUBLASLT_LIBRARY",
            {"libcublasLt.so.13", "libcublasLt.so.12",
             mte::runtime::toolkitLibrary("libcublasLt.so")},
            symbols, std::size(symbols),
            "cannot load cuBLASLt (libcublasLt.so.13 or .12; set "
            "MTE_CUBLASLT_LIBRARY to its path)",
            "cuBLASLt lacks ");
      },
      error);
}
} // namespace

/// cuBLASLt on one device: its handle, its workspace and the plans made
/// there.
struct mte::cuda::CublasLt {
  explicit CublasLt(const Library &lib) : lib(lib) {}
  const Library &lib;
  Handle handle = nullptr;
  void *workspace = nullptr;
  std::mutex plansMutex;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;
};

mte::cuda::CublasLt *mte::cuda::Device::cublasLt(std::string &error) {
  std::call_once(cublasLtOnce, [this] {
    std::string message;
    const Library *library = nullptr;
    if (!makeCurrent(message) || !(library = openLibrary(message))) {
      cublasLtError = message;
      return;
    }
    auto state = std::make_unique<CublasLt>(*library);
    if (library->cublasLtCreate(&state->handle) != 0) {
      cublasLtError = "cublasLtCreate failed";
      return;
    }
    state->workspace = mte::cuda::allocate(kWorkspaceBytes, message);
    if (!state->workspace) {
      cublasLtError = "cannot allocate the cuBLASLt workspace: " + message;
      return;
    }
    cublasLtState = state.release();
  });
  error = cublasLtError;
  return cublasLtState;
}

namespace {
/// Makes `layout` a strided batch of `count` matrices `stride` elements
/// apart (nothing to do for one).
bool setBatch(const Library &l, Layout layout, int64_t count, int64_t stride) {
  int32_t count32 = static_cast<int32_t>(count);
  return count == 1 ||
         (l.cublasLtMatrixLayoutSetAttribute(layout, kLayoutBatchCount,
                                             &count32, sizeof(count32)) == 0 &&
          l.cublasLtMatrixLayoutSetAttribute(layout, kLayoutBatchStride,
                                             &stride, sizeof(stride)) == 0);
}

/// The plan of a row-major [m, k] x W -> [m, n] product, W being [k, n]
/// (kn) or [n, k] (nk). cuBLASLt is column-major: it computes the transposed
/// product D (n x m) = op(W) (n x k) . X (k x m).
/// A and B are `inputType`, C `cType` and D `outputType` (cudaDataTypes), the
/// accumulation f32 (exact fp32 for f32 inputs, tensor cores for bf16/f16);
/// `epilogue` is a cublasLtEpilogue_t (bias of C's type, bf16 for an FP8
/// GEMM writing f32). C is D's type unless D is E4M3, where it is the 16-bit
/// type of the bias and residual (cuBLASLt's rule) and `dOut` gives the D
/// scale and amax pointers. FP8 GEMMs accumulate as TransformerEngine's forward
/// does (FAST_ACCUM: no periodic promotion of the tensor cores' partial
/// sums), except block-scaled ones (`scaleMode` MTE_GEMM_SCALE_BLOCK128:
/// W's scales BLK128x128, x's VEC128), which cuBLASLt promotes per block,
/// and row-scaled ones (MTE_GEMM_SCALE_OUTER_VEC: W's scales one per
/// channel, x's one per row, both OUTER_VEC_32F), held to the same.
/// Their heuristic finds no algorithm until the scale pointers are set
/// (checked on the H200 for every shape and epilogue tried): the first
/// call's, `xScale` and `wScale`, are (each call sets its own anyway); the
/// D scale and amax pointers are set the same way, as TransformerEngine
/// sets every pointer before it asks.
Plan *planFor(mte::cuda::CublasLt &g, int64_t batch, int64_t m, int64_t n,
              int64_t k, bool nk, int inputType, int cType, int outputType,
              uint32_t epilogue, int32_t scaleMode, void *xScale,
              void *wScale, Fp8Output dOut, std::string &error) {
  std::lock_guard<std::mutex> guard(g.plansMutex);
  PlanKey key{batch,    m,     n,        k,         nk,
              inputType, cType, outputType, epilogue, scaleMode,
              dOut.amax != nullptr};
  if (auto it = g.plans.find(key); it != g.plans.end())
    return it->second.get();
  const Library &l = g.lib;
  auto plan = std::make_unique<Plan>();
  int32_t transA = nk ? kOpT : kOpN, transB = kOpN;
  bool fp8 = inputType == kR8FE4M3;
  bool blocks = scaleMode == MTE_GEMM_SCALE_BLOCK128;
  bool vectors = scaleMode != MTE_GEMM_SCALE_TENSOR;
  int8_t fastAccum = 1;
  int32_t wScaleMode = blocks ? kScaleBlk128 : kScaleOuterVec,
          xScaleMode = blocks ? kScaleVec128 : kScaleOuterVec;
  bool fp8Out = outputType == kR8FE4M3;
  int32_t biasType = fp8 && outputType == kR32F ? kR16BF : cType;
  Preference preference = nullptr;
  uint64_t workspace = kWorkspaceBytes;
  HeuristicResult result = {};
  int found = 0;
  if (l.cublasLtMatmulDescCreate(&plan->desc, kCompute32F, kR32F) != 0 ||
      l.cublasLtMatmulDescSetAttribute(plan->desc, kDescTransA, &transA,
                                       sizeof(transA)) ||
      l.cublasLtMatmulDescSetAttribute(plan->desc, kDescTransB, &transB,
                                       sizeof(transB)) ||
      l.cublasLtMatmulDescSetAttribute(plan->desc, kDescEpilogue, &epilogue,
                                       sizeof(epilogue)) ||
      ((epilogue & MTE_GEMM_EPILOGUE_BIAS) &&
       l.cublasLtMatmulDescSetAttribute(plan->desc, kDescBiasType, &biasType,
                                        sizeof(biasType))) ||
      (fp8 && !vectors &&
       l.cublasLtMatmulDescSetAttribute(plan->desc, kDescFastAccum, &fastAccum,
                                        sizeof(fastAccum))) ||
      (vectors &&
       (l.cublasLtMatmulDescSetAttribute(plan->desc, kDescAScaleMode,
                                         &wScaleMode, sizeof(wScaleMode)) ||
        l.cublasLtMatmulDescSetAttribute(plan->desc, kDescBScaleMode,
                                         &xScaleMode, sizeof(xScaleMode)) ||
        l.cublasLtMatmulDescSetAttribute(plan->desc, kDescAScale, &wScale,
                                         sizeof(wScale)) ||
        l.cublasLtMatmulDescSetAttribute(plan->desc, kDescBScale, &xScale,
                                         sizeof(xScale)))) ||
      (fp8Out &&
       (l.cublasLtMatmulDescSetAttribute(plan->desc, kDescDScale, &dOut.scale,
                                         sizeof(dOut.scale)) ||
        (dOut.amax &&
         l.cublasLtMatmulDescSetAttribute(plan->desc, kDescAmaxD, &dOut.amax,
                                          sizeof(dOut.amax))))) ||
      l.cublasLtMatrixLayoutCreate(&plan->a, inputType, nk ? k : n, nk ? n : k,
                                   nk ? k : n) ||
      l.cublasLtMatrixLayoutCreate(&plan->b, inputType, k, m, k) ||
      l.cublasLtMatrixLayoutCreate(&plan->c, cType, n, m, n) ||
      (fp8Out ? l.cublasLtMatrixLayoutCreate(&plan->d, outputType, n, m, n)
              : (plan->d = plan->c, 0)) ||
      !setBatch(l, plan->a, batch, n * k) ||
      !setBatch(l, plan->b, batch, k * m) ||
      !setBatch(l, plan->c, batch, n * m) ||
      (fp8Out && !setBatch(l, plan->d, batch, n * m)) ||
      l.cublasLtMatmulPreferenceCreate(&preference) ||
      l.cublasLtMatmulPreferenceSetAttribute(preference, kPrefMaxWorkspace,
                                             &workspace, sizeof(workspace)) ||
      l.cublasLtMatmulAlgoGetHeuristic(g.handle, plan->desc, plan->a, plan->b,
                                       plan->c, plan->d, preference, 1, &result,
                                       &found) ||
      found == 0) {
    error = "cuBLASLt has no algorithm for a GEMM of m=" + std::to_string(m) +
            " n=" + std::to_string(n) + " k=" + std::to_string(k) + " (types " +
            std::to_string(inputType) + " -> " + std::to_string(outputType) +
            (fp8Out ? " with C " + std::to_string(cType) : "") + ", epilogue " +
            std::to_string(epilogue) +
            (blocks    ? ", block scales"
             : vectors ? ", row scales"
                       : "") +
            ")";
    return nullptr;
  }
  plan->algo = result.algo;
  return g.plans.emplace(key, std::move(plan)).first->second.get();
}

/// The cudaDataType of an mte_dtype GEMM output, or -1.
int cudaType(int32_t dtype) {
  return dtype == MTE_DTYPE_F32    ? kR32F
         : dtype == MTE_DTYPE_F16  ? kR16F
         : dtype == MTE_DTYPE_BF16 ? kR16BF
                                   : -1;
}

/// The cudaDataType of an mte_dtype GEMM operand or output, or -1.
int cudaOperandType(int32_t dtype) {
  return dtype == MTE_DTYPE_F8E4M3FN ? kR8FE4M3 : cudaType(dtype);
}
} // namespace

// Declared, and described, in KernelABI.h: a definition that differs from
// it is a compile error (two C functions of one name).
extern "C" void mte_cuda_gemm(uint64_t x, uint64_t w, uint64_t out,
                              int64_t batch, int64_t m, int64_t n, int64_t k,
                              int32_t transB, float alpha, float beta,
                              int32_t dtype,
                              int32_t outDtype, int32_t epilogue, uint64_t bias,
                              uint64_t residual, uint64_t xScale,
                              uint64_t wScale, int32_t scaleMode,
                              int32_t cDtype, uint64_t outScale,
                              uint64_t outAmax) {
  if (mte::cuda::failed())
    return; // an earlier step of this forward failed
  std::string error;
  mte::cuda::Device *device = mte::cuda::Device::current(error);
  mte::cuda::CublasLt *lt = device ? device->cublasLt(error) : nullptr;
  if (!lt) {
    mte::cuda::recordError(error);
    return;
  }
  mte::cuda::CublasLt &g = *lt;
  int inputType = cudaOperandType(dtype),
      outputType = cudaOperandType(outDtype), cType = cudaType(cDtype);
  bool fp8 = inputType == kR8FE4M3, fp8Out = outputType == kR8FE4M3;
  // An E4M3 D: fp8 operands with per-tensor scales, a 16-bit C (and bias),
  // a D scale; C is D otherwise.
  bool fp8OutOk = !fp8Out || (fp8 && scaleMode == MTE_GEMM_SCALE_TENSOR &&
                              (cType == kR16BF || cType == kR16F) && outScale);
  if (inputType < 0 || outputType < 0 || cType < 0 || (fp8 && !transB) ||
      (!fp8 && (xScale || wScale)) || !fp8OutOk ||
      (!fp8Out && (cType != outputType || outScale || outAmax))) {
    mte::cuda::recordError("mte_cuda_gemm: unsupported element types " +
                           std::to_string(dtype) + " -> " +
                           std::to_string(outDtype) + " (C " +
                           std::to_string(cDtype) + ")" +
                           (fp8 && !transB ? " with W [k, n]" : "") +
                           (!fp8 && (xScale || wScale) ? " with scales" : "") +
                           (fp8Out && !outScale ? " without a D scale" : "") +
                           (!fp8Out && (outScale || outAmax)
                                ? " with a D scale or amax"
                                : ""));
    return;
  }
  // cuBLASLt takes any value of its enum (DEFAULT | BIAS, 5, among them)
  // and computes something; mte's GEMMs ask for these.
  switch (epilogue) {
  case MTE_GEMM_EPILOGUE_DEFAULT:
  case MTE_GEMM_EPILOGUE_RELU:
  case MTE_GEMM_EPILOGUE_BIAS:
  case MTE_GEMM_EPILOGUE_RELU | MTE_GEMM_EPILOGUE_BIAS:
  case MTE_GEMM_EPILOGUE_GELU:
  case MTE_GEMM_EPILOGUE_GELU | MTE_GEMM_EPILOGUE_BIAS:
    break;
  default:
    mte::cuda::recordError("mte_cuda_gemm: epilogue " +
                           std::to_string(epilogue) +
                           " is none of DEFAULT (1), RELU (2), BIAS (4), "
                           "RELU_BIAS (6), GELU (32) and GELU_BIAS (36)");
    return;
  }
  bool blocks = scaleMode == MTE_GEMM_SCALE_BLOCK128;
  if (scaleMode != MTE_GEMM_SCALE_TENSOR &&
      ((!blocks && scaleMode != MTE_GEMM_SCALE_OUTER_VEC) || !fp8 ||
       batch != 1 || (blocks && k % 128 != 0) || !xScale || !wScale ||
       (xScale | wScale) % 16 != 0)) {
    mte::cuda::recordError(
        "mte_cuda_gemm: scale mode " + std::to_string(scaleMode) +
        " needs fp8 operands, batch 1, both scales 16-byte aligned" +
        (blocks ? " and k a multiple of 128 (k=" + std::to_string(k) + ")"
                : std::string()));
    return;
  }
  Fp8Output dOut{reinterpret_cast<void *>(outScale),
                 reinterpret_cast<void *>(outAmax)};
  Plan *plan = planFor(g, batch, m, n, k, transB != 0, inputType, cType,
                       outputType, static_cast<uint32_t>(epilogue), scaleMode,
                       reinterpret_cast<void *>(xScale),
                       reinterpret_cast<void *>(wScale), dOut, error);
  if (!plan) {
    mte::cuda::recordError(error);
    return;
  }
  void *output = reinterpret_cast<void *>(out);
  // C must not alias an E4M3 D (cuBLASLt: invalid value); with beta = 0
  // it is not read.
  void *c = residual ? reinterpret_cast<void *>(residual)
                     : fp8Out ? nullptr : output;
  std::unique_lock<std::mutex> pointerGuard(plan->pointerMutex,
                                            std::defer_lock);
  auto setPointer = [&](int attribute, uint64_t address) {
    void *pointer = reinterpret_cast<void *>(address);
    return g.lib.cublasLtMatmulDescSetAttribute(plan->desc, attribute, &pointer,
                                                sizeof(pointer)) == 0;
  };
  if ((epilogue & MTE_GEMM_EPILOGUE_BIAS) || fp8)
    pointerGuard.lock();
  if ((epilogue & MTE_GEMM_EPILOGUE_BIAS) &&
      !setPointer(kDescBiasPointer, bias)) {
    mte::cuda::recordError("cuBLASLt rejected a bias pointer");
    return;
  }
  // cuBLASLt's A is W and its B is x (the product is computed transposed).
  if (fp8 && (!setPointer(kDescAScale, wScale) ||
              !setPointer(kDescBScale, xScale) ||
              (fp8Out && (!setPointer(kDescDScale, outScale) ||
                          (outAmax && !setPointer(kDescAmaxD, outAmax)))))) {
    mte::cuda::recordError("cuBLASLt rejected a scale pointer");
    return;
  }
  if (g.lib.cublasLtMatmul(g.handle, plan->desc, &alpha,
                           reinterpret_cast<void *>(w), plan->a,
                           reinterpret_cast<void *>(x), plan->b, &beta, c,
                           plan->c, output, plan->d, &plan->algo, g.workspace,
                           kWorkspaceBytes, mte::cuda::currentStream()) != 0)
    mte::cuda::recordError("cublasLtMatmul failed for m=" + std::to_string(m) +
                           " n=" + std::to_string(n) +
                           " k=" + std::to_string(k));
}
