//===- RowKernelBuilder.h - building row kernels ----------------*- C++ -*-===//
//
// Internal to the CUDA codegen library. A row kernel is one gpu.launch whose
// threads split the rows of a [rows, length] view: each row gets a group of
// threads that read it once with vector loads, keep it in registers and
// combine their partial results with warp shuffles (and, past a warp,
// through workgroup memory). RowKernelBuilder emits those pieces; each
// kernel body (NormKernel.cpp, AttentionSoftmaxKernel.cpp, RotaryKernel.cpp,
// GatedKernel.cpp, AmaxKernel.cpp) is written with it.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_CODEGEN_CUDA_ROWKERNELBUILDER_H
#define MTE_LIB_CODEGEN_CUDA_ROWKERNELBUILDER_H

#include "mte/Dialect/Kernel/IR/KernelOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/MathExtras.h"

#include <limits>
#include <optional>

namespace mte::cuda {

using namespace mlir;

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
                                   mlir::Type elementType,
                                   int64_t rowAlignment = 0);

/// Whether every thread of a row holds the same number of its vectors.
inline bool hasEqualShares(const RowMapping &m) {
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

  /// Stores `value`, the same in every thread of the row (a row
  /// reduction's), at the row's index of the [rows] `buffer`, from the
  /// row's first thread.
  void storeRowResult(Value value, Value buffer) {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        threadInRow, index(0));
    Value writes =
        rowInRange ? arith::AndIOp::create(b, loc, first, rowInRange) : first;
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPointToStart(
        &scf::IfOp::create(b, loc, writes, /*withElseRegion=*/false)
             .getThenRegion()
             .front());
    memref::StoreOp::create(b, loc, value, buffer, row);
  }

  /// The E4M3 (`fp8`) codes of the f32 `lanes` as delayed scaling's cast
  /// makes them from the values stored as `from`: rounded to `from`,
  /// widened, times `scale` in f32, saturated.
  SmallVector<Value> castToFp8(ArrayRef<Value> lanes, Type from, Value scale,
                               Type fp8);

  /// Stores the f32 `lanes` of a row's result at `indices` of `output` if
  /// `valid`: rounded to the output's element type, or, with `fp8Scale`,
  /// cast to E4M3 from `rounded` (castToFp8). With a `rowAmax` (this
  /// thread's max |y| so far), returns it with these lanes' taken in.
  Value storeResult(ArrayRef<Value> lanes, Value output, ValueRange indices,
                    Value valid, Type rounded, Value fp8Scale, Value rowAmax);

  /// Stores the row's max |y|, from the threads' `rowAmax` (combined with
  /// workgroup buffer `reduction`), as the values were stored in `rounded`
  /// (rounding is monotonic: the f32 max rounded once), at the row's index
  /// of the f32 [rows] `rowMaxima`.
  void storeRowAmax(Value rowAmax, unsigned reduction, Type rounded,
                    Value rowMaxima);

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
    function_ref<void(RowKernelBuilder &, ValueRange, ValueRange)> buildBody);

/// The address of `buffer`'s first element as an i64 (its aligned base
/// plus its offset in bytes), for a call into the runtime; `metadata`,
/// when given, receives the buffer's strided metadata (its strides).
Value bufferAddress(OpBuilder &b, Location loc, Value buffer,
                    memref::ExtractStridedMetadataOp *metadata = nullptr);

/// Reports that `func` is not a valid kernel of `what`, and why.
LogicalResult invalidKernel(func::FuncOp func, StringRef what,
                            const Twine &why);

/// The first argument of a row kernel's declaration, the static
/// [rows, length] buffer whose rows it maps onto threads; an error at
/// `func` when it is not one.
FailureOr<MemRefType> getRowsBuffer(func::FuncOp func);

// The kernels, each defining `func` from its #kernel.row_kernel `spec` or
// saying why not.
LogicalResult defineNormKernel(func::FuncOp func, kernel::RowKernelAttr spec);
LogicalResult defineAttentionSoftmaxKernel(func::FuncOp func,
                                           kernel::RowKernelAttr spec);
LogicalResult defineRotaryKernel(func::FuncOp func, kernel::RowKernelAttr spec);
LogicalResult defineAmaxKernel(func::FuncOp func, kernel::RowKernelAttr spec);
LogicalResult defineGatedKernel(func::FuncOp func, kernel::RowKernelAttr spec);

/// Replaces every call of the fused-attention declaration `func` by a call
/// of the runtime's mte_cuda_attention, then erases the declaration.
LogicalResult lowerFlashAttentionCalls(func::FuncOp func,
                                       kernel::RowKernelAttr spec);

/// Replaces every call of the amaxes declaration `func` (inputs of any
/// shape, then the f32 [T] output) by a call of the runtime's
/// mte_cuda_amaxes with a table of the inputs, then erases the declaration.
LogicalResult lowerAmaxesCalls(func::FuncOp func);

} // namespace mte::cuda

#endif // MTE_LIB_CODEGEN_CUDA_ROWKERNELBUILDER_H
