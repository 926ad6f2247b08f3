//===- BuildRowKernels.cpp - bodies of the row kernels --------------------===//
//
// LayerNorm, RMSNorm and attention's softmax reduce along rows. The generic
// CUDA path runs such a reduction in one thread per row; here each row gets
// a group of threads that read it once with vector loads, keep it in
// registers, combine their partial results with warp shuffles and write the
// result once. The kernels are defined after bufferization, on the buffers
// of their declarations, each as one gpu.launch.
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/BuildRowKernels/BuildRowKernels.h"
#include "mte/Dialect/Kernel/IR/KernelOps.h"

#include "mte-c/ModelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <numeric>

namespace mte {
#define GEN_PASS_DEF_BUILDROWKERNELS
#include "mte/Conversion/Passes.h.inc"
} // namespace mte

using namespace mlir;
using mte::kernel::RowKernelAttr;
using mte::kernel::RowKernelKind;

namespace {

constexpr int64_t kWarpSize = 32;
/// Threads of a block whose rows are a warp or less long.
constexpr int64_t kSmallRowsBlockSize = 128;
constexpr int64_t kMaxThreadsPerRow = 1024;
/// Vectors a thread keeps in registers; longer rows are not matched.
constexpr int64_t kMaxVectorsPerThread = 8;
/// Vectors a thread aims at before rows take more threads.
constexpr int64_t kTargetVectorsPerThread = 4;

/// How a kernel maps the rows of a [rows, length] view onto threads: a row
/// is `vectors` vectors of `lanes` elements; `threadsPerRow` threads take
/// every `threadsPerRow`-th vector, `rowsPerBlock` rows share a block.
struct RowMapping {
  int64_t rows, length, lanes, vectors;
  int64_t threadsPerRow, rowsPerBlock, vectorsPerThread;

  int64_t blockSize() const { return threadsPerRow * rowsPerBlock; }
  int64_t gridSize() const { return llvm::divideCeil(rows, rowsPerBlock); }
};

/// The mapping of [rows, length] rows of `elementType` (which sets the
/// vector width), or nothing when a row is too long to keep in registers.
/// Rows start `rowAlignment` elements apart (a multiple of it; 0: any
/// multiple of the length).
std::optional<RowMapping> planRows(int64_t rows, int64_t length,
                                   Type elementType, int64_t rowAlignment = 0) {
  if (rows <= 0 || length <= 0)
    return std::nullopt;
  // 16-byte vectors where every row starts 16-byte aligned, else the widest
  // power of two that divides the length and the rows' alignment.
  int64_t lanes = 128 / elementType.getIntOrFloatBitWidth();
  while (length % lanes != 0 || rowAlignment % lanes != 0)
    lanes /= 2;
  RowMapping m;
  m.rows = rows;
  m.length = length;
  m.lanes = lanes;
  m.vectors = length / lanes;
  if (m.vectors <= kWarpSize) {
    m.threadsPerRow = llvm::PowerOf2Ceil(m.vectors);
  } else if (m.vectors <= kWarpSize * kTargetVectorsPerThread) {
    m.threadsPerRow = kWarpSize;
  } else {
    int64_t threads = llvm::divideCeil(m.vectors, kTargetVectorsPerThread);
    m.threadsPerRow =
        std::min<int64_t>(llvm::alignTo(threads, kWarpSize), kMaxThreadsPerRow);
  }
  m.rowsPerBlock =
      m.threadsPerRow <= kWarpSize ? kSmallRowsBlockSize / m.threadsPerRow : 1;
  m.vectorsPerThread = llvm::divideCeil(m.vectors, m.threadsPerRow);
  if (m.vectorsPerThread > kMaxVectorsPerThread)
    return std::nullopt;
  return m;
}

/// Whether every thread of a row holds the same number of its vectors.
bool hasEqualShares(const RowMapping &m) {
  return m.vectors == m.threadsPerRow * m.vectorsPerThread;
}

/// Builds the body of a row kernel inside its gpu.launch: which row and
/// which vectors of it a thread owns, vector loads and stores of a row, and
/// reductions over the threads of a row.
class RowKernelBuilder {
public:
  RowKernelBuilder(OpBuilder &b, Location loc, const RowMapping &mapping,
                   gpu::LaunchOp launch)
      : b(b), loc(loc), m(mapping),
        reductionBuffers(launch.getWorkgroupAttributions()) {
    thread = launch.getThreadIds().x;
    Value inRow = index(m.threadsPerRow);
    row = arith::AddIOp::create(b, loc,
                                arith::MulIOp::create(b, loc,
                                                      launch.getBlockIds().x,
                                                      index(m.rowsPerBlock)),
                                arith::DivUIOp::create(b, loc, thread, inRow));
    threadInRow = arith::RemUIOp::create(b, loc, thread, inRow);
    // The last block may reach past the last row; its extra threads still
    // take part in the shuffles, with nothing to load or store.
    if (m.rows % m.rowsPerBlock != 0)
      rowInRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                         index(m.rows));
  }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }

  /// The element offset in the row of this thread's `k`-th vector and
  /// whether that vector exists (null: always).
  std::pair<Value, Value> vector(int64_t k) {
    Value position =
        arith::AddIOp::create(b, loc, threadInRow, index(k * m.threadsPerRow));
    Value offset = arith::MulIOp::create(b, loc, position, index(m.lanes));
    Value valid = rowInRange;
    if ((k + 1) * m.threadsPerRow > m.vectors) {
      Value inRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          position, index(m.vectors));
      valid = valid ? arith::AndIOp::create(b, loc, valid, inRow) : inRow;
    }
    return {offset, valid};
  }

  /// `lanes` consecutive elements of `buffer` from `indices` on along its
  /// last dimension, or zeros where `valid` is false.
  Value load(Value buffer, ValueRange indices, Value valid) {
    Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
    auto vectorType = VectorType::get({m.lanes}, elementType);
    auto emitLoad = [&](OpBuilder &nb) -> Value {
      if (m.lanes == 1)
        return vector::BroadcastOp::create(
            nb, loc, vectorType,
            memref::LoadOp::create(nb, loc, buffer, indices));
      return vector::LoadOp::create(nb, loc, vectorType, buffer, indices,
                                    /*nontemporal=*/false,
                                    alignment(elementType));
    };
    if (!valid)
      return emitLoad(b);
    auto guard = scf::IfOp::create(b, loc, vectorType, valid,
                                   /*withElseRegion=*/true);
    OpBuilder thenBuilder = guard.getThenBodyBuilder();
    scf::YieldOp::create(thenBuilder, loc, emitLoad(thenBuilder));
    OpBuilder elseBuilder = guard.getElseBodyBuilder();
    Value zeros = arith::ConstantOp::create(
        elseBuilder, loc, vectorType, elseBuilder.getZeroAttr(vectorType));
    scf::YieldOp::create(elseBuilder, loc, zeros);
    return guard.getResult(0);
  }

  /// `count` consecutive elements of the 1-D `buffer` from `first` on, one
  /// scalar load each, or zeros where `valid` is false.
  SmallVector<Value> loadEach(Value buffer, Value first, int64_t count,
                              Value valid) {
    Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
    auto emitLoads = [&](OpBuilder &nb) {
      SmallVector<Value> elements;
      for (int64_t l = 0; l < count; ++l) {
        Value at = l == 0 ? first
                          : arith::AddIOp::create(
                                nb, loc, first,
                                arith::ConstantIndexOp::create(nb, loc, l));
        elements.push_back(memref::LoadOp::create(nb, loc, buffer, at));
      }
      return elements;
    };
    if (!valid)
      return emitLoads(b);
    auto guard =
        scf::IfOp::create(b, loc, SmallVector<Type>(count, elementType), valid,
                          /*withElseRegion=*/true);
    OpBuilder thenBuilder = guard.getThenBodyBuilder();
    scf::YieldOp::create(thenBuilder, loc, emitLoads(thenBuilder));
    OpBuilder elseBuilder = guard.getElseBodyBuilder();
    Value zero = arith::ConstantOp::create(
        elseBuilder, loc, elementType, elseBuilder.getZeroAttr(elementType));
    scf::YieldOp::create(elseBuilder, loc, SmallVector<Value>(count, zero));
    return SmallVector<Value>(guard.getResults());
  }

  /// `lanes` elements of `buffer` at `indices`, converted to f32.
  SmallVector<Value> loadF32(Value buffer, ValueRange indices, Value valid) {
    return toF32(load(buffer, indices, valid));
  }

  /// The lanes of `vec` as f32 scalars.
  SmallVector<Value> toF32(Value vec) {
    SmallVector<Value> lanes;
    for (int64_t l = 0; l < m.lanes; ++l) {
      Value x = vector::ExtractOp::create(b, loc, vec, l);
      if (!x.getType().isF32())
        x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
      lanes.push_back(x);
    }
    return lanes;
  }

  /// Stores the f32 `lanes`, rounded to the buffer's element type, at
  /// `indices` if `valid`.
  void store(ArrayRef<Value> lanes, Value buffer, ValueRange indices,
             Value valid) {
    OpBuilder::InsertionGuard insertion(b);
    if (valid)
      b.setInsertionPointToStart(
          &scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false)
               .getThenRegion()
               .front());
    Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
    SmallVector<Value> rounded;
    for (Value x : lanes)
      rounded.push_back(x.getType() == elementType
                            ? x
                            : arith::TruncFOp::create(b, loc, elementType, x));
    if (m.lanes == 1) {
      memref::StoreOp::create(b, loc, rounded[0], buffer, indices);
      return;
    }
    Value vec = vector::FromElementsOp::create(
        b, loc, VectorType::get({m.lanes}, elementType), rounded);
    vector::StoreOp::create(b, loc, vec, buffer, indices,
                            /*nontemporal=*/false, alignment(elementType));
  }

  /// The sum (or maximum) of `x` over the threads of this row, in every one
  /// of them. `reduction` picks the workgroup buffer rows longer than a warp
  /// exchange their warps' partial results through; each reduction of a
  /// kernel uses its own, so no barrier is needed between them.
  Value reduceRow(Value x, bool isMax, unsigned reduction) {
    x = reduceInWarp(x, std::min(m.threadsPerRow, kWarpSize), isMax);
    if (m.threadsPerRow <= kWarpSize)
      return x;
    // One block per row: warp w's lane 0 writes partial w, then each warp
    // reduces all partials.
    Value buffer = reductionBuffers[reduction];
    Value lane = exchangeWarpResults({x}, {buffer});
    int64_t warps = m.threadsPerRow / kWarpSize;
    Value partial = memref::LoadOp::create(
        b, loc, buffer,
        ValueRange{arith::MinUIOp::create(b, loc, lane, index(warps - 1))});
    if (warps < kWarpSize) {
      Value isPartial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              lane, index(warps));
      partial =
          arith::SelectOp::create(b, loc, isPartial, partial, identity(isMax));
    }
    return reduceInWarp(partial, kWarpSize, isMax);
  }

  /// Lane 0 of each warp stores the warp's `results` at the warp's index of
  /// `buffers` (workgroup memory), then the block waits for all; returns the
  /// thread's lane.
  Value exchangeWarpResults(ArrayRef<Value> results, ArrayRef<Value> buffers) {
    Value warpSize = index(kWarpSize);
    Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
    Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
    Value isFirstLane =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0));
    {
      OpBuilder::InsertionGuard insertion(b);
      b.setInsertionPointToStart(
          &scf::IfOp::create(b, loc, isFirstLane, /*withElseRegion=*/false)
               .getThenRegion()
               .front());
      for (auto [result, buffer] : llvm::zip(results, buffers))
        memref::StoreOp::create(b, loc, result, buffer, warp);
    }
    gpu::BarrierOp::create(b, loc);
    return lane;
  }

  /// Two partial results of each thread, (a, b), combined over the threads
  /// of its row by `merge`, in every one of them. `merge` gets two partial
  /// results and how many threads' shares each covers (a butterfly merges
  /// equal halves; across warps, the warps' results are folded in order).
  using PairMerge = function_ref<std::pair<Value, Value>(
      std::pair<Value, Value>, std::pair<Value, Value>, int64_t, int64_t)>;
  std::pair<Value, Value> reducePair(std::pair<Value, Value> x, PairMerge merge,
                                     unsigned reduction) {
    int64_t width = std::min(m.threadsPerRow, kWarpSize);
    for (int64_t offset = width / 2, threads = 1; offset >= 1;
         offset /= 2, threads *= 2) {
      auto shuffle = [&](Value v) {
        return gpu::ShuffleOp::create(b, loc, v, offset, kWarpSize,
                                      gpu::ShuffleMode::XOR)
            .getShuffleResult();
      };
      x = merge(x, {shuffle(x.first), shuffle(x.second)}, threads, threads);
    }
    if (m.threadsPerRow <= kWarpSize)
      return x;
    // One block per row: lane 0 of each warp writes its warp's result;
    // every thread then folds the warps' results in order.
    Value firsts = reductionBuffers[reduction];
    Value seconds = reductionBuffers[reduction + 1];
    exchangeWarpResults({x.first, x.second}, {firsts, seconds});
    auto partial = [&](int64_t w) -> std::pair<Value, Value> {
      return {memref::LoadOp::create(b, loc, firsts, index(w)),
              memref::LoadOp::create(b, loc, seconds, index(w))};
    };
    x = partial(0);
    for (int64_t w = 1; w < m.threadsPerRow / kWarpSize; ++w)
      x = merge(x, partial(w), w * kWarpSize, kWarpSize);
    return x;
  }

  Value combine(Value x, Value y, bool isMax) {
    if (isMax)
      return arith::MaximumFOp::create(b, loc, x, y);
    return arith::AddFOp::create(b, loc, x, y);
  }

  Value identity(bool isMax) {
    return f32(isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  }

  /// The sum (or maximum) of `lanes`, or the identity if the vector does
  /// not exist.
  Value reduceLanes(ArrayRef<Value> lanes, Value valid, bool isMax) {
    Value x = lanes.front();
    for (Value lane : lanes.drop_front())
      x = combine(x, lane, isMax);
    if (valid)
      x = arith::SelectOp::create(b, loc, valid, x, identity(isMax));
    return x;
  }

  OpBuilder &b;
  Location loc;
  const RowMapping &m;
  ArrayRef<BlockArgument> reductionBuffers;
  Value thread, row, threadInRow;
  /// Whether the thread's row exists (null: always).
  Value rowInRange;

private:
  /// Butterfly over aligned groups of `width` lanes: every lane ends with
  /// its group's result. The shuffles span the whole warp, so every lane
  /// must reach them.
  Value reduceInWarp(Value x, int64_t width, bool isMax) {
    for (int64_t offset = width / 2; offset >= 1; offset /= 2) {
      auto shuffle = gpu::ShuffleOp::create(b, loc, x, offset, kWarpSize,
                                            gpu::ShuffleMode::XOR);
      x = combine(x, shuffle.getShuffleResult(), isMax);
    }
    return x;
  }

  /// A vector's alignment: rows start at multiples of `lanes` elements
  /// from a device allocation's base.
  llvm::MaybeAlign alignment(Type elementType) {
    return llvm::Align(m.lanes * elementType.getIntOrFloatBitWidth() / 8);
  }
};

/// Defines `func` as one gpu.launch of `mapping`: `buildBody` gets the
/// inputs (the first `numInputs` arguments, buffers and scalars) and the
/// output buffers (the rest).
void defineKernel(
    func::FuncOp func, unsigned numInputs, const RowMapping &mapping,
    unsigned reductions,
    function_ref<void(RowKernelBuilder &, ValueRange, ValueRange)> buildBody) {
  MLIRContext *ctx = func.getContext();
  Location loc = func.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(func.addEntryBlock());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Rows longer than a warp exchange partial results through workgroup
  // memory, one float per warp for each reduction.
  SmallVector<Type> workgroupBuffers;
  if (mapping.threadsPerRow > kWarpSize)
    workgroupBuffers.assign(
        reductions,
        MemRefType::get({kWarpSize}, b.getF32Type(), AffineMap(),
                        gpu::AddressSpaceAttr::get(
                            ctx, gpu::GPUDialect::getWorkgroupAddressSpace())));
  auto launch = gpu::LaunchOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, mapping.gridSize()), one,
      one, arith::ConstantIndexOp::create(b, loc, mapping.blockSize()), one,
      one, /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, workgroupBuffers);
  {
    OpBuilder body = OpBuilder::atBlockBegin(&launch.getBody().front());
    RowKernelBuilder kernel(body, loc, mapping, launch);
    ValueRange args = func.getArguments();
    buildBody(kernel, args.take_front(numInputs), args.drop_front(numInputs));
    gpu::TerminatorOp::create(body, loc);
  }
  func::ReturnOp::create(b, loc);
}

//===----------------------------------------------------------------------===//
// LayerNorm and RMSNorm
//===----------------------------------------------------------------------===//

struct NormKernel {
  bool isLayerNorm, hasBias, hasResidual;
  Type inputType;
};

void buildNormBody(RowKernelBuilder &k, const NormKernel &kernel,
                   ValueRange args, ValueRange results) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const RowMapping &m = k.m;
  Value input = args[0], scale = args[1];
  unsigned next = 2;
  Value bias = kernel.hasBias ? args[next++] : Value();
  Value residual = kernel.hasResidual ? args[next++] : Value();
  Value epsilon = args[next];
  Value output = results[0];
  Value residualSum = kernel.hasResidual ? results[1] : Value();

  // The row, read once: x (+ residual, rounded to the input type as the
  // reference lowering does).
  SmallVector<SmallVector<Value>> values;
  SmallVector<Value> offsets, valid;
  Value sum = k.f32(0);
  for (int64_t v = 0; v < m.vectorsPerThread; ++v) {
    auto [offset, isValid] = k.vector(v);
    offsets.push_back(offset);
    valid.push_back(isValid);
    SmallVector<Value> x = k.loadF32(input, {k.row, offset}, isValid);
    if (residual) {
      SmallVector<Value> r = k.loadF32(residual, {k.row, offset}, isValid);
      for (auto [xi, ri] : llvm::zip(x, r)) {
        xi = arith::AddFOp::create(b, loc, xi, ri);
        if (!kernel.inputType.isF32())
          xi = arith::ExtFOp::create(
              b, loc, b.getF32Type(),
              arith::TruncFOp::create(b, loc, kernel.inputType, xi)
                  .getResult());
      }
      k.store(x, residualSum, {k.row, offset}, isValid);
    }
    if (kernel.isLayerNorm)
      sum = arith::AddFOp::create(b, loc, sum,
                                  k.reduceLanes(x, isValid, /*isMax=*/false));
    values.push_back(std::move(x));
  }

  Value length = k.f32(m.length);
  auto sumOfSquares = [&](Value shift) {
    Value squares = k.f32(0);
    for (auto [x, isValid] : llvm::zip(values, valid)) {
      SmallVector<Value> sq;
      for (Value xi : x) {
        Value d = shift ? arith::SubFOp::create(b, loc, xi, shift) : xi;
        sq.push_back(arith::MulFOp::create(b, loc, d, d));
      }
      squares = arith::AddFOp::create(b, loc, squares,
                                      k.reduceLanes(sq, isValid, false));
    }
    return squares;
  };
  Value variance, mean;
  if (!kernel.isLayerNorm) {
    variance = arith::DivFOp::create(
        b, loc, k.reduceRow(sumOfSquares({}), /*isMax=*/false, 0), length);
  } else if (hasEqualShares(m)) {
    // Each thread's mean and M2 over its own elements, merged in one
    // reduction.
    int64_t count = m.vectorsPerThread * m.lanes;
    Value threadMean = arith::MulFOp::create(b, loc, sum, k.f32(1.0 / count));
    // Chan et al.'s merge of the (mean, M2) of two disjoint parts of na and
    // nb elements: mean = ma + d * nb / n, M2 = M2a + M2b + d^2 * na * nb /
    // n, d = mb - ma; as stable as a second pass over the deviations.
    auto chan = [&](std::pair<Value, Value> x, std::pair<Value, Value> y,
                    int64_t threadsA, int64_t threadsB) {
      double na = threadsA * count, nb = threadsB * count, n = na + nb;
      Value delta = arith::SubFOp::create(b, loc, y.first, x.first);
      Value mean = arith::AddFOp::create(
          b, loc, x.first, arith::MulFOp::create(b, loc, delta, k.f32(nb / n)));
      Value spread = arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, delta, delta),
          k.f32(na * nb / n));
      Value m2 = arith::AddFOp::create(
          b, loc, arith::AddFOp::create(b, loc, x.second, y.second), spread);
      return std::pair<Value, Value>{mean, m2};
    };
    auto [rowMean, m2] =
        k.reducePair({threadMean, sumOfSquares(threadMean)}, chan, 0);
    mean = rowMean;
    variance = arith::DivFOp::create(b, loc, m2, length);
  } else {
    // Ragged rows: the mean, then the squared deviations from it.
    mean = arith::DivFOp::create(b, loc, k.reduceRow(sum, /*isMax=*/false, 0),
                                 length);
    variance = arith::DivFOp::create(
        b, loc, k.reduceRow(sumOfSquares(mean), /*isMax=*/false, 1), length);
  }
  if (mean)
    for (SmallVector<Value> &x : values)
      for (Value &xi : x)
        xi = arith::SubFOp::create(b, loc, xi, mean);
  Value inverse = math::RsqrtOp::create(
      b, loc, arith::AddFOp::create(b, loc, variance, epsilon));

  for (auto [x, offset, isValid] : llvm::zip(values, offsets, valid)) {
    SmallVector<Value> gamma = k.loadF32(scale, offset, isValid);
    SmallVector<Value> beta;
    if (bias)
      beta = k.loadF32(bias, offset, isValid);
    SmallVector<Value> y;
    for (int64_t l = 0; l < m.lanes; ++l) {
      Value yl = arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, x[l], inverse), gamma[l]);
      if (bias)
        yl = arith::AddFOp::create(b, loc, yl, beta[l]);
      y.push_back(yl);
    }
    k.store(y, output, {k.row, offset}, isValid);
  }
}

//===----------------------------------------------------------------------===//
// Attention's scale + mask + softmax
//===----------------------------------------------------------------------===//

struct SoftmaxKernel {
  int64_t heads, queries, keys;
  bool causal, hasMask;
  /// The mask's shape before flattening; it broadcasts to [B, H, Sq, Skv].
  SmallVector<int64_t> maskShape;
};

void buildSoftmaxBody(RowKernelBuilder &k, const SoftmaxKernel &kernel,
                      ValueRange args, ValueRange results) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const RowMapping &m = k.m;
  Value scores = args[0];
  Value mask = kernel.hasMask ? args[1] : Value();
  Value scale = args.back();
  Value probs = results[0];
  Value negInf = k.identity(/*isMax=*/true);

  // The mask broadcasts to [B, H, Sq, Skv]: its strides there, 0 along the
  // dimensions it repeats. Every nonzero stride is a multiple of Skv when
  // the mask varies along the keys, so its rows are vector-aligned too.
  SmallVector<int64_t> maskStrides(4, 0);
  if (mask) {
    ArrayRef<int64_t> shape = kernel.maskShape;
    int64_t stride = 1;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (shape[d] != 1)
        maskStrides[4 - shape.size() + d] = stride;
      stride *= shape[d];
    }
  }
  // row = (b * H + h) * Sq + i.
  Value query = arith::RemUIOp::create(b, loc, k.row, k.index(kernel.queries));
  Value maskRow;
  if (mask) {
    Value head = arith::RemUIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, k.row, k.index(kernel.queries)),
        k.index(kernel.heads));
    Value batch = arith::DivUIOp::create(
        b, loc, k.row, k.index(kernel.heads * kernel.queries));
    maskRow = k.index(0);
    Value positions[] = {batch, head, query};
    for (auto [position, stride] : llvm::zip(positions, maskStrides))
      if (stride != 0)
        maskRow = arith::AddIOp::create(
            b, loc, maskRow,
            arith::MulIOp::create(b, loc, position, k.index(stride)));
  }
  // A mask that does not vary along the keys is one element per row.
  bool maskIsBool =
      mask && cast<MemRefType>(mask.getType()).getElementType().isInteger(1);
  bool maskAlongKeys = mask && maskStrides[3] != 0;
  Value rowMask;
  if (mask && !maskAlongKeys) {
    rowMask = k.loadEach(mask, maskRow, 1, k.rowInRange).front();
    if (!maskIsBool && !rowMask.getType().isF32())
      rowMask = arith::ExtFOp::create(b, loc, b.getF32Type(), rowMask);
  }
  // Causal: key j is visible to query i iff j <= i + (Skv - Sq).
  Value lastVisible;
  if (kernel.causal)
    lastVisible = arith::AddIOp::create(b, loc, query,
                                        k.index(kernel.keys - kernel.queries));

  SmallVector<SmallVector<Value>> values;
  SmallVector<Value> offsets, valid;
  Value max = negInf;
  for (int64_t v = 0; v < m.vectorsPerThread; ++v) {
    auto [offset, isValid] = k.vector(v);
    offsets.push_back(offset);
    valid.push_back(isValid);
    // Causal: a vector whose first key is hidden is never read (its lanes
    // become -inf below), which skips about half of the scores.
    Value load = isValid;
    if (kernel.causal) {
      Value seen = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                         offset, lastVisible);
      load = isValid ? arith::AndIOp::create(b, loc, isValid, seen).getResult()
                     : seen;
    }
    SmallVector<Value> s = k.loadF32(scores, {k.row, offset}, load);
    for (Value &si : s)
      si = arith::MulFOp::create(b, loc, si, scale);
    if (mask) {
      SmallVector<Value> maskLanes;
      if (!maskAlongKeys) {
        maskLanes.assign(m.lanes, rowMask);
      } else if (maskIsBool) {
        // i1 vectors are bit-packed in LLVM; the buffer holds a byte each.
        maskLanes =
            k.loadEach(mask, arith::AddIOp::create(b, loc, maskRow, offset),
                       m.lanes, isValid);
      } else {
        maskLanes = k.loadF32(
            mask, arith::AddIOp::create(b, loc, maskRow, offset).getResult(),
            isValid);
      }
      for (auto [si, maskLane] : llvm::zip(s, maskLanes))
        si = maskIsBool ? arith::SelectOp::create(b, loc, maskLane, si, negInf)
                              .getResult()
                        : arith::AddFOp::create(b, loc, si, maskLane);
    }
    if (kernel.causal)
      for (int64_t l = 0; l < m.lanes; ++l) {
        Value key = arith::AddIOp::create(b, loc, offset, k.index(l));
        Value visible = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                              key, lastVisible);
        s[l] = arith::SelectOp::create(b, loc, visible, s[l], negInf);
      }
    max = arith::MaximumFOp::create(b, loc, max,
                                    k.reduceLanes(s, isValid, /*isMax=*/true));
    values.push_back(std::move(s));
  }
  // Online softmax: each thread's exponentials against its own maximum,
  // then one reduction of (maximum, sum) that rescales the sums it merges.
  // A maximum of -inf (every key hidden) shifts by 0, so that nothing
  // computes -inf - -inf.
  auto isHidden = [&](Value x) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, negInf);
  };
  auto shiftOf = [&](Value x) {
    return arith::SelectOp::create(b, loc, isHidden(x), k.f32(0), x);
  };
  auto exp = [&](Value x) { return math::ExpOp::create(b, loc, x); };
  Value shift = shiftOf(max);
  Value sum = k.f32(0);
  for (auto [s, isValid] : llvm::zip(values, valid)) {
    for (Value &si : s)
      si = exp(arith::SubFOp::create(b, loc, si, shift));
    sum = arith::AddFOp::create(b, loc, sum,
                                k.reduceLanes(s, isValid, /*isMax=*/false));
  }
  auto merge = [&](std::pair<Value, Value> x, std::pair<Value, Value> y,
                   int64_t, int64_t) {
    Value rowMax = arith::MaximumFOp::create(b, loc, x.first, y.first);
    Value rowShift = shiftOf(rowMax);
    auto rescaled = [&](std::pair<Value, Value> part) {
      return arith::MulFOp::create(
          b, loc, part.second,
          exp(arith::SubFOp::create(b, loc, part.first, rowShift)));
    };
    return std::pair<Value, Value>{
        rowMax, arith::AddFOp::create(b, loc, rescaled(x), rescaled(y))};
  };
  auto [rowMax, rowSum] = k.reducePair({max, sum}, merge, 0);
  // p = e * exp(threadMax - rowMax) / rowSum; zeros for a query that sees
  // no key (sum 0) and for the lanes of a thread that sees none.
  Value factor = arith::DivFOp::create(
      b, loc, exp(arith::SubFOp::create(b, loc, shift, shiftOf(rowMax))),
      rowSum);
  Value rowSeesAKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                            rowSum, k.f32(0));
  Value threadSeesAKey =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, max, negInf);
  Value seesAKey = arith::AndIOp::create(b, loc, rowSeesAKey, threadSeesAKey);
  factor = arith::SelectOp::create(b, loc, seesAKey, factor, k.f32(0));
  for (auto [s, offset, isValid] : llvm::zip(values, offsets, valid)) {
    SmallVector<Value> p;
    for (Value si : s)
      p.push_back(arith::MulFOp::create(b, loc, si, factor));
    k.store(p, probs, {k.row, offset}, isValid);
  }
}

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

struct RotaryKernel {
  int64_t heads, seq, mid, half;
  bool headsMajor, batched, fullWidth;
};

void buildRotaryBody(RowKernelBuilder &k, const RotaryKernel &kernel,
                     ValueRange args, ValueRange results) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const RowMapping &m = k.m;
  Value x = args[0], cos = args[1], sin = args[2], output = results[0];
  // Row r of the kernel is (i, j) = (r / mid, r % mid) of the [outer, mid,
  // D] view; the table row is its (batch, position).
  Value i = arith::DivUIOp::create(b, loc, k.row, k.index(kernel.mid));
  Value j = arith::RemUIOp::create(b, loc, k.row, k.index(kernel.mid));
  Value tableRow;
  if (!kernel.headsMajor) // i = b * S + s
    tableRow = kernel.batched
                   ? i
                   : arith::RemUIOp::create(b, loc, i, k.index(kernel.seq))
                         .getResult();
  else if (kernel.batched) // i = b * H + h, j = s
    tableRow = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, i, k.index(kernel.heads)),
            k.index(kernel.seq)),
        j);
  else
    tableRow = j;

  for (int64_t v = 0; v < m.vectorsPerThread; ++v) {
    auto [first, valid] = k.vector(v);
    Value second = arith::AddIOp::create(b, loc, first, k.index(kernel.half));
    SmallVector<Value> x1 = k.loadF32(x, {i, j, first}, valid);
    SmallVector<Value> x2 = k.loadF32(x, {i, j, second}, valid);
    SmallVector<Value> cos1 = k.loadF32(cos, {tableRow, first}, valid);
    SmallVector<Value> sin1 = k.loadF32(sin, {tableRow, first}, valid);
    SmallVector<Value> cos2 = cos1, sin2 = sin1;
    if (kernel.fullWidth) {
      cos2 = k.loadF32(cos, {tableRow, second}, valid);
      sin2 = k.loadF32(sin, {tableRow, second}, valid);
    }
    // x1' = x1 * cos1 - x2 * sin1, x2' = x2 * cos2 + x1 * sin2, in the
    // reference lowering's order.
    SmallVector<Value> y1, y2;
    for (int64_t l = 0; l < m.lanes; ++l) {
      y1.push_back(arith::SubFOp::create(
          b, loc, arith::MulFOp::create(b, loc, x1[l], cos1[l]),
          arith::MulFOp::create(b, loc, x2[l], sin1[l])));
      y2.push_back(arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, x2[l], cos2[l]),
          arith::MulFOp::create(b, loc, x1[l], sin2[l])));
    }
    k.store(y1, output, {i, j, first}, valid);
    k.store(y2, output, {i, j, second}, valid);
  }
}

/// Defines the rotary kernel `func`: x [outer, mid, D] (any static outer
/// and mid strides), cos and sin [T, W], output [outer, mid, D].
LogicalResult defineRotaryKernel(func::FuncOp func, RowKernelAttr spec) {
  auto fail = [&](const Twine &message) {
    return func.emitOpError("is not a valid rotary kernel: ") << message;
  };
  ArrayRef<Type> types = func.getArgumentTypes();
  if (types.size() != 4 || !llvm::all_of(types, llvm::IsaPred<MemRefType>))
    return fail("needs buffers x, cos, sin and output");
  auto x = cast<MemRefType>(types[0]), table = cast<MemRefType>(types[1]);
  SmallVector<int64_t> strides;
  int64_t offset;
  if (x.getRank() != 3 || !x.hasStaticShape() ||
      failed(x.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic) || strides[2] != 1)
    return fail("x must be [outer, mid, D] with static strides, the last 1");
  if (table.getRank() != 2 || !table.hasStaticShape() || types[2] != table ||
      types[3] != MemRefType::get(x.getShape(), x.getElementType()))
    return fail("cos and sin must be [T, W], the output like x");
  RotaryKernel kernel;
  kernel.heads = spec.getHeads();
  kernel.seq = spec.getSeq();
  kernel.headsMajor = spec.getHeadsMajor();
  kernel.mid = x.getDimSize(1);
  int64_t headDim = x.getDimSize(2), outer = x.getDimSize(0);
  kernel.half = headDim / 2;
  int64_t batch = outer / (kernel.headsMajor ? kernel.heads : kernel.seq);
  int64_t width = table.getDimSize(1), tableRows = table.getDimSize(0);
  kernel.fullWidth = width == headDim;
  kernel.batched = tableRows == batch * kernel.seq && batch != 1;
  if (headDim % 2 != 0 || (width != headDim && width != kernel.half) ||
      (tableRows != kernel.seq && tableRows != batch * kernel.seq))
    return fail("tables do not match the view");
  // Every vector of x starts a multiple of its lanes from the base.
  int64_t alignment = std::gcd(offset, std::gcd(strides[0], strides[1]));
  std::optional<RowMapping> mapping =
      planRows(outer * kernel.mid, kernel.half, x.getElementType(), alignment);
  if (!mapping)
    return fail("heads too long");
  defineKernel(func, 3, *mapping, /*reductions=*/0,
               [&](RowKernelBuilder &k, ValueRange args, ValueRange results) {
                 buildRotaryBody(k, kernel, args, results);
               });
  return success();
}

/// Defines `func` from its `mte.row_kernel` attribute, or says why not.
LogicalResult defineRowKernel(func::FuncOp func, RowKernelAttr spec) {
  RowKernelKind kind = spec.getKind();
  if (kind == RowKernelKind::Rotary)
    return defineRotaryKernel(func, spec);
  ArrayRef<Type> types = func.getArgumentTypes();
  auto bufferType = [&](unsigned i) -> MemRefType {
    return i < types.size() ? dyn_cast<MemRefType>(types[i]) : MemRefType();
  };
  auto fail = [&](const Twine &message) {
    return func.emitOpError("is not a valid row kernel: ") << message;
  };
  MemRefType rows = bufferType(0);
  if (!rows || rows.getRank() != 2 || !rows.hasStaticShape())
    return fail("its first argument must be a static [rows, length] buffer");
  int64_t numRows = rows.getDimSize(0), length = rows.getDimSize(1);

  if (kind == RowKernelKind::LayerNorm || kind == RowKernelKind::RMSNorm) {
    NormKernel kernel;
    kernel.isLayerNorm = kind == RowKernelKind::LayerNorm;
    kernel.hasBias = spec.getBias();
    kernel.hasResidual = spec.getResidual();
    kernel.inputType = rows.getElementType();
    unsigned numInputs = 3 + kernel.hasBias + kernel.hasResidual;
    if (types.size() != numInputs + 1 + kernel.hasResidual ||
        !types[numInputs - 1].isF32())
      return fail("wrong number of arguments or no f32 epsilon");
    std::optional<RowMapping> mapping =
        planRows(numRows, length, kernel.inputType);
    if (!mapping)
      return fail("rows too long");
    defineKernel(func, numInputs, *mapping, kernel.isLayerNorm ? 2 : 1,
                 [&](RowKernelBuilder &k, ValueRange args, ValueRange results) {
                   buildNormBody(k, kernel, args, results);
                 });
    return success();
  }

  if (kind == RowKernelKind::AttentionSoftmax) {
    SoftmaxKernel kernel;
    if (numRows % (spec.getHeads() * spec.getQueries()) != 0)
      return fail("needs heads and queries that divide the rows");
    kernel.heads = spec.getHeads();
    kernel.queries = spec.getQueries();
    kernel.keys = length;
    kernel.causal = spec.getCausal();
    kernel.hasMask = static_cast<bool>(spec.getMaskShape());
    if (kernel.hasMask)
      kernel.maskShape.assign(spec.getMaskShape().asArrayRef().begin(),
                              spec.getMaskShape().asArrayRef().end());
    Type scores = rows.getElementType();
    if (types.size() != 3u + kernel.hasMask ||
        !(scores.isF32() || scores.isBF16() || scores.isF16()) ||
        !types[1 + kernel.hasMask].isF32())
      return fail("wrong number of arguments, or no float scores and f32 "
                  "scale");
    // The probabilities' type sets the vector width: 16-byte stores of
    // bf16 probabilities, the f32 scores loaded as two 16-byte halves.
    auto probs = dyn_cast<MemRefType>(types.back());
    if (!probs || probs.getShape() != rows.getShape())
      return fail("the probabilities must be [rows, keys] like the scores");
    std::optional<RowMapping> mapping =
        planRows(numRows, length, probs.getElementType());
    if (!mapping)
      return fail("rows too long");
    defineKernel(func, 2 + kernel.hasMask, *mapping, /*reductions=*/2,
                 [&](RowKernelBuilder &k, ValueRange args, ValueRange results) {
                   buildSoftmaxBody(k, kernel, args, results);
                 });
    return success();
  }
  return fail("unknown kind");
}

//===----------------------------------------------------------------------===//
// Fused attention: a call of the runtime's kernels
//===----------------------------------------------------------------------===//

constexpr StringLiteral kAttentionEntry = "mte_cuda_attention";

/// The runtime's entry point (FlashAttention.cpp): q, k, v, out as device
/// addresses; batch, heads, kv heads, queries, keys, head dimension; batch
/// and row strides of q, k, v and out; scale; causal; mte_dtype.
func::FuncOp declareAttentionEntry(ModuleOp module) {
  if (auto func = module.lookupSymbol<func::FuncOp>(kAttentionEntry))
    return func;
  auto builder = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = builder.getI64Type(), i32 = builder.getI32Type();
  SmallVector<Type> inputs(4 + 6 + 8, i64);
  inputs.append({builder.getF32Type(), i32, i32});
  auto func = func::FuncOp::create(builder, module.getLoc(), kAttentionEntry,
                                   builder.getFunctionType(inputs, {}));
  func.setPrivate();
  return func;
}

/// Replaces every call of the fused-attention declaration `func` (operands
/// q, k, v [B, S, H * D] with any batch and row strides, scale, output) by
/// a call of mte_cuda_attention with their addresses and strides, then
/// erases the declaration.
LogicalResult lowerAttentionCalls(func::FuncOp func, RowKernelAttr spec) {
  auto fail = [&](const Twine &why) {
    return func.emitError("cannot lower fused attention '")
           << func.getSymName() << "': " << why;
  };
  ArrayRef<Type> types = func.getArgumentTypes();
  if (types.size() != 5 || !types[3].isF32())
    return fail("needs (q, k, v, scale, output)");
  auto q = dyn_cast<MemRefType>(types[0]);
  auto k = dyn_cast<MemRefType>(types[1]);
  Type element = q ? q.getElementType() : Type();
  if (!q || !k || q.getRank() != 3 || k.getRank() != 3 ||
      !(element.isBF16() || element.isF16()))
    return fail("q and k must be 16-bit [B, S, H * D] buffers");
  int64_t headDim = q.getDimSize(2) / spec.getHeads();
  int32_t dtype = element.isBF16() ? MTE_DTYPE_BF16 : MTE_DTYPE_F16;

  auto module = func->getParentOfType<ModuleOp>();
  func::FuncOp entry = declareAttentionEntry(module);
  std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
  for (SymbolTable::SymbolUse use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call)
      return fail("used other than by a call");
    OpBuilder b(call);
    Location loc = call.getLoc();
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i64, v);
    };
    auto toI64 = [&](Value index) -> Value {
      return arith::IndexCastOp::create(b, loc, i64, index);
    };
    SmallVector<Value> addresses, strides;
    for (unsigned i : {0u, 1u, 2u, 4u}) {
      Value buffer = call.getOperand(i);
      auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
      Value base = memref::ExtractAlignedPointerAsIndexOp::create(
          b, loc, metadata.getBaseBuffer());
      Value offsetBytes = arith::MulIOp::create(
          b, loc, metadata.getOffset(),
          arith::ConstantIndexOp::create(b, loc,
                                         element.getIntOrFloatBitWidth() / 8));
      addresses.push_back(
          toI64(arith::AddIOp::create(b, loc, base, offsetBytes)));
      strides.push_back(toI64(metadata.getStrides()[0]));
      strides.push_back(toI64(metadata.getStrides()[1]));
    }
    auto qType = cast<MemRefType>(call.getOperand(0).getType());
    auto kType = cast<MemRefType>(call.getOperand(1).getType());
    SmallVector<Value> operands(addresses);
    operands.append({constant(qType.getDimSize(0)), constant(spec.getHeads()),
                     constant(spec.getKvHeads()), constant(qType.getDimSize(1)),
                     constant(kType.getDimSize(1)), constant(headDim)});
    operands.append(strides);
    operands.append(
        {call.getOperand(3),
         arith::ConstantIntOp::create(b, loc, i32, spec.getCausal()),
         arith::ConstantIntOp::create(b, loc, i32, dtype)});
    func::CallOp::create(b, loc, entry, operands);
    call.erase();
  }
  func.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Declarations on views with dynamic layouts
//===----------------------------------------------------------------------===//

bool hasStaticLayout(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.hasStaticShape() &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// A kernel may read a buffer through a view with a dynamic layout (a
/// column slice, whatever its offset and strides turn out to be after
/// bufferization); each call passes a memref.cast of a view whose layout is
/// static. Declares `func` once per distinct set of such static types
/// (`<name>_v<k>` when there are several), so that the kernel knows its
/// strides and the alignment of its vectors, and makes each call pass the
/// views themselves. An operand with no static layout behind it is copied
/// into a fresh buffer for its call. Returns the declarations to define.
SmallVector<func::FuncOp> specializeOnLayouts(func::FuncOp func) {
  if (llvm::all_of(func.getArgumentTypes(), [](Type t) {
        auto memref = dyn_cast<MemRefType>(t);
        return !memref || hasStaticLayout(memref);
      }))
    return {func};
  auto module = func->getParentOfType<ModuleOp>();
  SmallVector<func::CallOp> calls;
  std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
  if (uses)
    for (SymbolTable::SymbolUse use : *uses)
      if (auto call = dyn_cast<func::CallOp>(use.getUser()))
        calls.push_back(call);

  llvm::MapVector<FunctionType, SmallVector<func::CallOp>> bySignature;
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    SmallVector<Value> operands;
    for (Value operand : call.getOperands()) {
      if (auto cast = operand.getDefiningOp<memref::CastOp>())
        operand = cast.getSource();
      auto type = dyn_cast<MemRefType>(operand.getType());
      if (type && !hasStaticLayout(type)) {
        auto copyType = MemRefType::get(
            cast<MemRefType>(call.getOperand(operands.size()).getType())
                .getShape(),
            type.getElementType());
        Value copy = memref::AllocOp::create(b, call.getLoc(), copyType);
        memref::CopyOp::create(b, call.getLoc(), operand, copy);
        OpBuilder after(call->getBlock(), std::next(call->getIterator()));
        memref::DeallocOp::create(after, call.getLoc(), copy);
        operand = copy;
      }
      operands.push_back(operand);
    }
    call->setOperands(operands);
    bySignature[b.getFunctionType(TypeRange(ValueRange(operands)), {})]
        .push_back(call);
  }

  if (bySignature.size() == 1) {
    func.setType(bySignature.front().first);
    return {func};
  }
  SmallVector<func::FuncOp> declarations;
  SymbolTable symbols(module);
  for (auto [index, entry] : llvm::enumerate(bySignature)) {
    auto &[signature, sites] = entry;
    auto declaration = func.clone();
    declaration.setType(signature);
    declaration.setSymName((func.getSymName() + "_v" + Twine(index)).str());
    // Renamed further if the module has that name already.
    symbols.insert(declaration);
    for (func::CallOp call : sites)
      call.setCallee(declaration.getSymName());
    declarations.push_back(declaration);
  }
  func.erase();
  return declarations;
}

struct BuildRowKernelsPass
    : mte::impl::BuildRowKernelsBase<BuildRowKernelsPass> {
  void runOnOperation() override {
    for (auto func :
         llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>())) {
      auto spec = func->getAttrOfType<RowKernelAttr>(mte::kRowKernelAttrName);
      if (!spec || !func.isExternal())
        continue;
      if (spec.getKind() == RowKernelKind::FlashAttention) {
        if (failed(lowerAttentionCalls(func, spec)))
          return signalPassFailure();
        continue;
      }
      for (func::FuncOp declaration : specializeOnLayouts(func)) {
        if (failed(defineRowKernel(declaration, spec)))
          return signalPassFailure();
        declaration->removeAttr(mte::kRowKernelAttrName);
      }
    }
  }
};

} // namespace

bool mte::canBuildRowKernel(int64_t length, Type elementType) {
  return planRows(/*rows=*/1, length, elementType).has_value();
}
