//===- ShardToRuntimeCalls.cpp - shard collectives as mte_comm_* calls ----===//
//
// One rank's program (shard-partition's output) still names its peers
// through shard ops. Slices of replicated values need only the rank: they
// become views at the rank's offset. Reductions go to the runtime, which
// knows the communicator: the input's buffer and a new output buffer are
// handed to mte_comm_all_reduce, and the output re-enters the tensor world
// through a restrict to_tensor, which one-shot bufferization keeps as the
// buffer it is.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/Common/KernelABI.h"
#include "mte/Codegen/Common/Passes.h"
#include "mte/Support/DType.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mte {
#define GEN_PASS_DEF_CONVERTSHARDTORUNTIMECALLS
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {

class CollectiveLowering {
public:
  CollectiveLowering(ModuleOp module, SymbolTableCollection &symbols)
      : module(module), symbols(symbols) {}

  LogicalResult lower(Operation *op) {
    OpBuilder builder(op);
    Location loc = op->getLoc();
    if (auto slice = dyn_cast<shard::AllSliceOp>(op))
      return lowerAllSlice(builder, slice);
    if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
      return lowerAllReduce(builder, reduce);
    if (auto index = dyn_cast<shard::ProcessLinearIndexOp>(op)) {
      if (failed(gridOf(op, index.getGridAttr())))
        return failure();
      index.replaceAllUsesWith(rank(builder, loc));
      index.erase();
      return success();
    }
    if (auto index = dyn_cast<shard::ProcessMultiIndexOp>(op)) {
      FailureOr<shard::GridOp> grid = gridOf(op, index.getGridAttr());
      if (failed(grid))
        return failure();
      SmallVector<shard::GridAxis> axes(index.getAxes());
      if (axes.empty())
        for (int64_t a = 0; a < grid->getRank(); ++a)
          axes.push_back(a);
      for (auto [result, axis] : llvm::zip_equal(index.getResults(), axes))
        result.replaceAllUsesWith(groupIndex(builder, loc, *grid, {axis}));
      index.erase();
      return success();
    }
    return op->emitOpError("has no lowering for sharded models yet");
  }

private:
  FailureOr<shard::GridOp> gridOf(Operation *op, FlatSymbolRefAttr name) {
    shard::GridOp grid = shard::getGridOrNull(op, name, symbols);
    if (!grid)
      return op->emitOpError("names no grid of this module: ") << name;
    if (ShapedType::isDynamicShape(grid.getShape()))
      return op->emitOpError("runs on a grid of dynamic shape");
    return grid;
  }

  /// Declares entry point `Fn` at the start of the module.
  template <typename Fn>
  func::FuncOp declare(StringRef name) {
    OpBuilder builder(module.getBodyRegion());
    return mte::kernel_abi::declareEntryPoint<Fn>(builder, module, name);
  }
#define DECLARE(entry) declare<decltype(::entry)>(#entry)

  /// mte_comm_rank() as an index.
  Value rank(OpBuilder &builder, Location loc) {
    func::FuncOp callee = DECLARE(mte_comm_rank);
    Value rank = func::CallOp::create(builder, loc, callee).getResult(0);
    return arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                      rank);
  }

  /// This rank's index in the group of ranks that differ only in the grid
  /// coordinates `axes`: those coordinates, row-major in `axes`' order.
  Value groupIndex(OpBuilder &builder, Location loc, shard::GridOp grid,
                   ArrayRef<shard::GridAxis> axes) {
    ArrayRef<int64_t> shape = grid.getShape();
    Value linear = rank(builder, loc);
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(builder, loc, v);
    };
    Value index = constant(0);
    for (shard::GridAxis axis : axes) {
      int64_t stride = 1;
      for (int64_t a = axis + 1; a < static_cast<int64_t>(shape.size()); ++a)
        stride *= shape[a];
      Value coordinate = arith::RemUIOp::create(
          builder, loc, arith::DivUIOp::create(builder, loc, linear,
                                               constant(stride)),
          constant(shape[axis]));
      index = arith::AddIOp::create(
          builder, loc,
          arith::MulIOp::create(builder, loc, index, constant(shape[axis])),
          coordinate);
    }
    return index;
  }

  static int32_t axesMask(ArrayRef<shard::GridAxis> axes) {
    int32_t mask = 0;
    for (shard::GridAxis axis : axes)
      mask |= int32_t(1) << axis;
    return mask;
  }

  LogicalResult lowerAllSlice(OpBuilder &builder, shard::AllSliceOp slice) {
    FailureOr<shard::GridOp> grid = gridOf(slice, slice.getGridAttr());
    if (failed(grid))
      return failure();
    Location loc = slice.getLoc();
    auto type = cast<RankedTensorType>(slice.getResult().getType());
    if (!type.hasStaticShape())
      return slice.emitOpError("slices a tensor of dynamic shape");
    int64_t axis = slice.getSliceAxis().getSExtValue();
    Value index = groupIndex(builder, loc, *grid, slice.getGridAxes());
    Value offset = arith::MulIOp::create(
        builder, loc, index,
        arith::ConstantIndexOp::create(builder, loc, type.getDimSize(axis)));
    SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
    offsets[axis] = offset;
    SmallVector<OpFoldResult> sizes;
    for (int64_t size : type.getShape())
      sizes.push_back(builder.getIndexAttr(size));
    SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
    Value local = tensor::ExtractSliceOp::create(
        builder, loc, type, slice.getInput(), offsets, sizes, strides);
    slice.replaceAllUsesWith(local);
    slice.erase();
    return success();
  }

  LogicalResult lowerAllReduce(OpBuilder &builder, shard::AllReduceOp reduce) {
    if (failed(gridOf(reduce, reduce.getGridAttr())))
      return failure();
    Location loc = reduce.getLoc();
    auto type = dyn_cast<RankedTensorType>(reduce.getInput().getType());
    if (!type || !type.hasStaticShape() ||
        type != reduce.getResult().getType())
      return reduce.emitOpError("reduces other than a static tensor into its "
                                "own type");
    std::optional<mte_dtype> dtype = mte::getDType(type.getElementType());
    if (!dtype)
      return reduce.emitOpError("reduces elements of type ")
             << type.getElementType() << ", which the runtime does not take";
    mte_reduce_op op;
    switch (reduce.getReduction()) {
    case shard::ReductionKind::Sum:
      op = MTE_REDUCE_SUM;
      break;
    case shard::ReductionKind::Max:
      op = MTE_REDUCE_MAX;
      break;
    case shard::ReductionKind::Min:
      op = MTE_REDUCE_MIN;
      break;
    default:
      return reduce.emitOpError("reduces by ")
             << shard::stringifyReductionKind(reduce.getReduction())
             << ", which the runtime does not provide";
    }
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value input = bufferization::ToBufferOp::create(
        builder, loc, memrefType, reduce.getInput(), /*read_only=*/true);
    Value output = memref::AllocOp::create(builder, loc, memrefType);
    auto address = [&](Value buffer) -> Value {
      Value index =
          memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, buffer);
      return arith::IndexCastOp::create(builder, loc, builder.getI64Type(),
                                        index);
    };
    auto i64 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(builder, loc, v, 64);
    };
    auto i32 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(builder, loc, v, 32);
    };
    func::FuncOp callee = DECLARE(mte_comm_all_reduce);
    func::CallOp::create(
        builder, loc, callee,
        ValueRange{address(input), address(output), i64(type.getNumElements()),
                   i32(*dtype), i32(op), i32(axesMask(reduce.getGridAxes()))});
    Value result = bufferization::ToTensorOp::create(
        builder, loc, type, output, /*restrict=*/true, /*writable=*/true);
    reduce.replaceAllUsesWith(result);
    reduce.erase();
    return success();
  }
#undef DECLARE

  ModuleOp module;
  SymbolTableCollection &symbols;
};

struct ConvertShardToRuntimeCallsPass
    : mte::impl::ConvertShardToRuntimeCallsBase<
          ConvertShardToRuntimeCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    CollectiveLowering lowering(module, symbols);
    SmallVector<Operation *> collectives;
    module.walk([&](Operation *op) {
      if (isa<shard::ShardDialect>(op->getDialect()) && !isa<shard::GridOp>(op))
        collectives.push_back(op);
    });
    for (Operation *op : collectives)
      if (failed(lowering.lower(op)))
        return signalPassFailure();
    // The grid has served: nothing below the tensor level names it.
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      grid.erase();
  }
};

} // namespace
