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
#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Support/DType.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"

namespace mte {
#define GEN_PASS_DEF_CONVERTSHARDTORUNTIMECALLS
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {

class CollectiveLowering {
public:
  CollectiveLowering(ModuleOp module, SymbolTableCollection &symbols,
                     bool denseSlices)
      : module(module), symbols(symbols), denseSlices(denseSlices) {}

  /// Removes the weight arguments whose slices replaced every use.
  void eraseSlicedWeights() {
    for (auto &[func, arguments] : slicedWeights) {
      llvm::BitVector unused(func.getNumArguments());
      for (BlockArgument argument : arguments)
        if (argument.use_empty())
          unused.set(argument.getArgNumber());
      (void)func.eraseArguments(unused);
    }
  }

  LogicalResult lower(Operation *op) {
    OpBuilder builder(op);
    Location loc = op->getLoc();
    if (auto slice = dyn_cast<shard::AllSliceOp>(op))
      return lowerAllSlice(builder, slice);
    if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
      return lowerAllReduce(builder, reduce);
    if (auto gather = dyn_cast<shard::AllGatherOp>(op))
      return lowerAllGather(builder, gather);
    if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op))
      return lowerReduceScatter(builder, scatter);
    if (auto broadcast = dyn_cast<shard::BroadcastOp>(op))
      return lowerBroadcast(builder, broadcast);
    if (auto send = dyn_cast<shard::SendOp>(op))
      return lowerSend(builder, send);
    if (auto recv = dyn_cast<shard::RecvOp>(op))
      return lowerRecv(builder, recv);
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

  /// The weight argument of a public function that `value` is, or null.
  static BlockArgument weightArgument(Value value) {
    auto argument = dyn_cast<BlockArgument>(value);
    if (!argument)
      return nullptr;
    auto func = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
    if (!func || func.isPrivate() ||
        !func.getArgAttr(argument.getArgNumber(), "mte.weight"))
      return nullptr;
    return argument;
  }

  /// `slice` of weight argument `weight` as a weight argument of its own,
  /// which the runtime cuts from the whole weight when it uploads it: one
  /// per weight, axis and group.
  void sliceAtLoad(shard::AllSliceOp slice, BlockArgument weight,
                   RankedTensorType type, int64_t axis) {
    auto func = cast<func::FuncOp>(weight.getOwner()->getParentOp());
    auto wholeType = cast<RankedTensorType>(weight.getType());
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= wholeType.getDimSize(d);
    SmallVector<int16_t> gridAxes(slice.getGridAxes());
    auto attr = mte::transformer::WeightSliceAttr::get(
        module.getContext(), axis, outer,
        wholeType.getDimSize(axis) / type.getDimSize(axis), gridAxes);
    Value &local = localWeights[std::make_pair(Value(weight), Attribute(attr))];
    if (!local) {
      unsigned index = func.getNumArguments();
      SmallVector<NamedAttribute> attrs = {
          NamedAttribute(StringAttr::get(module.getContext(), "mte.weight"),
                         func.getArgAttr(weight.getArgNumber(), "mte.weight")),
          NamedAttribute(
              StringAttr::get(module.getContext(), "mte.weight_slice"), attr)};
      (void)func.insertArgument(index, type,
                                DictionaryAttr::get(module.getContext(), attrs),
                                slice.getLoc());
      local = func.getArgument(index);
      auto &arguments = slicedWeights[func];
      if (!llvm::is_contained(arguments, weight))
        arguments.push_back(weight);
    }
    slice.replaceAllUsesWith(local);
    slice.erase();
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
    // A group of one rank slices nothing.
    if (type == slice.getInput().getType()) {
      slice.replaceAllUsesWith(slice.getInput());
      slice.erase();
      return success();
    }
    if (denseSlices)
      if (BlockArgument weight = weightArgument(slice.getInput())) {
        sliceAtLoad(slice, weight, type, axis);
        return success();
      }
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
    Value local;
    if (denseSlices) {
      // The rank's part copied out, element by element at the offset: a
      // dense tensor, not a view whose offset is known at run time only.
      Value input = slice.getInput();
      Value init =
          tensor::EmptyOp::create(builder, loc, type.getShape(),
                                  type.getElementType());
      SmallVector<AffineMap> maps = {
          builder.getMultiDimIdentityMap(type.getRank())};
      SmallVector<utils::IteratorType> loops(type.getRank(),
                                             utils::IteratorType::parallel);
      local = linalg::GenericOp::create(
                  builder, loc, type, ValueRange{}, ValueRange{init}, maps,
                  loops,
                  [&](OpBuilder &b, Location l, ValueRange) {
                    SmallVector<Value> coords;
                    for (int64_t d = 0; d < type.getRank(); ++d) {
                      Value i = linalg::IndexOp::create(b, l, d);
                      coords.push_back(
                          d == axis ? arith::AddIOp::create(b, l, i, offset)
                                    : i);
                    }
                    linalg::YieldOp::create(
                        b, l,
                        tensor::ExtractOp::create(b, l, input, coords)
                            .getResult());
                  })
                  .getResult(0);
    } else {
      local = tensor::ExtractSliceOp::create(builder, loc, type,
                                             slice.getInput(), offsets, sizes,
                                             strides);
    }
    slice.replaceAllUsesWith(local);
    slice.erase();
    return success();
  }

  /// The runtime's element type and reduction for collective `op` on
  /// `type`.
  static FailureOr<mte_dtype> dtypeOf(Operation *op, RankedTensorType type) {
    if (!type.hasStaticShape())
      return op->emitOpError("communicates a tensor of dynamic shape");
    std::optional<mte_dtype> dtype = mte::getDType(type.getElementType());
    if (!dtype)
      return op->emitOpError("communicates elements of type ")
             << type.getElementType() << ", which the runtime does not take";
    return *dtype;
  }

  static FailureOr<mte_reduce_op> reduceOpOf(Operation *op,
                                             shard::ReductionKind kind) {
    switch (kind) {
    case shard::ReductionKind::Sum:
      return MTE_REDUCE_SUM;
    case shard::ReductionKind::Max:
      return MTE_REDUCE_MAX;
    case shard::ReductionKind::Min:
      return MTE_REDUCE_MIN;
    default:
      return op->emitOpError("reduces by ")
             << shard::stringifyReductionKind(kind)
             << ", which the runtime does not provide";
    }
  }

  /// The address of `tensor`'s buffer, which the call only reads.
  static Value inputAddress(OpBuilder &builder, Location loc, Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    Value buffer = bufferization::ToBufferOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType()),
        tensor, /*read_only=*/true);
    return address(builder, loc, buffer);
  }

  static Value address(OpBuilder &builder, Location loc, Value buffer) {
    Value index =
        memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, buffer);
    return arith::IndexCastOp::create(builder, loc, builder.getI64Type(),
                                      index);
  }

  /// Calls `callee` with `leading` (the send address, then what comes
  /// before the output) and the output buffer's address inserted after it,
  /// then `trailing`; returns the output as a tensor of `type`.
  static Value callWithOutput(OpBuilder &builder, Location loc,
                              func::FuncOp callee, Value send,
                              RankedTensorType type,
                              ArrayRef<int64_t> trailing) {
    Value output = memref::AllocOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType()));
    SmallVector<Value> args = {send, address(builder, loc, output)};
    auto argTypes = callee.getFunctionType().getInputs().drop_front(2);
    for (auto [value, argType] : llvm::zip_equal(trailing, argTypes))
      args.push_back(arith::ConstantIntOp::create(
          builder, loc, value, cast<IntegerType>(argType).getWidth()));
    func::CallOp::create(builder, loc, callee, args);
    return bufferization::ToTensorOp::create(builder, loc, type, output,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

  /// The runtime's collectives cut and join buffers in contiguous parts,
  /// one per rank: along the outermost dimension. Splitting dimension
  /// `axis` of a tensor of `shape` instead (a token dimension after a
  /// batch one) goes through a view with the rank index first: true when
  /// the dimensions before `axis` hold more than one element.
  static bool needsRankMajorView(ArrayRef<int64_t> shape, int64_t axis) {
    int64_t before = 1;
    for (int64_t d = 0; d < axis; ++d)
      before *= shape[d];
    return before > 1;
  }

  /// transpose(`tensor`, `permutation`) into a new tensor.
  static Value transpose(OpBuilder &builder, Location loc, Value tensor,
                         ArrayRef<int64_t> permutation) {
    auto type = cast<RankedTensorType>(tensor.getType());
    SmallVector<int64_t> shape;
    for (int64_t d : permutation)
      shape.push_back(type.getDimSize(d));
    Value init =
        tensor::EmptyOp::create(builder, loc, shape, type.getElementType());
    return linalg::TransposeOp::create(builder, loc, tensor, init, permutation)
        .getResult()[0];
  }

  /// Reassociation of a rank `rank + 1` shape into one of `rank`, merging
  /// dimensions `axis` and `axis + 1`.
  static SmallVector<ReassociationIndices> mergeAt(int64_t rank,
                                                   int64_t axis) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0, i = 0; d < rank; ++d) {
      if (d == axis) {
        groups.push_back({i, i + 1});
        i += 2;
      } else {
        groups.push_back({i++});
      }
    }
    return groups;
  }

  LogicalResult lowerAllReduce(OpBuilder &builder, shard::AllReduceOp reduce) {
    if (failed(gridOf(reduce, reduce.getGridAttr())))
      return failure();
    Location loc = reduce.getLoc();
    auto type = dyn_cast<RankedTensorType>(reduce.getInput().getType());
    if (!type || type != reduce.getResult().getType())
      return reduce.emitOpError("reduces other than a tensor into its own "
                                "type");
    FailureOr<mte_dtype> dtype = dtypeOf(reduce, type);
    FailureOr<mte_reduce_op> op = reduceOpOf(reduce, reduce.getReduction());
    if (failed(dtype) || failed(op))
      return failure();
    Value result = callWithOutput(
        builder, loc, DECLARE(mte_comm_all_reduce),
        inputAddress(builder, loc, reduce.getInput()), type,
        {type.getNumElements(), *dtype, *op, axesMask(reduce.getGridAxes())});
    reduce.replaceAllUsesWith(result);
    reduce.erase();
    return success();
  }

  /// all_gather along `axis`: the runtime joins the ranks' buffers one
  /// after another ([ranks, local...]), which is the result when nothing
  /// precedes `axis`; else that is transposed to [..., ranks, local axis,
  /// ...] and the two dimensions merged.
  LogicalResult lowerAllGather(OpBuilder &builder, shard::AllGatherOp gather) {
    FailureOr<shard::GridOp> grid = gridOf(gather, gather.getGridAttr());
    if (failed(grid))
      return failure();
    Location loc = gather.getLoc();
    auto localType = cast<RankedTensorType>(gather.getInput().getType());
    auto type = cast<RankedTensorType>(gather.getResult().getType());
    FailureOr<mte_dtype> dtype = dtypeOf(gather, localType);
    if (failed(dtype) || failed(dtypeOf(gather, type)))
      return failure();
    int64_t axis = gather.getGatherAxis().getSExtValue();
    int64_t ranks = type.getDimSize(axis) / localType.getDimSize(axis);
    bool view = needsRankMajorView(localType.getShape(), axis);
    SmallVector<int64_t> joinedShape;
    if (view) {
      joinedShape.push_back(ranks);
      llvm::append_range(joinedShape, localType.getShape());
    } else {
      joinedShape.assign(type.getShape().begin(), type.getShape().end());
    }
    auto joinedType =
        RankedTensorType::get(joinedShape, type.getElementType());
    Value result = callWithOutput(
        builder, loc, DECLARE(mte_comm_all_gather),
        inputAddress(builder, loc, gather.getInput()), joinedType,
        {localType.getNumElements(), *dtype, axesMask(gather.getGridAxes())});
    if (view) {
      // [ranks, d0, ..., d_axis, ...] -> [d0, ..., ranks, d_axis, ...].
      SmallVector<int64_t> permutation;
      for (int64_t d = 1; d <= axis; ++d)
        permutation.push_back(d);
      permutation.push_back(0);
      for (int64_t d = axis + 1; d <= localType.getRank(); ++d)
        permutation.push_back(d);
      result = transpose(builder, loc, result, permutation);
      result = tensor::CollapseShapeOp::create(
          builder, loc, type, result, mergeAt(type.getRank(), axis));
    }
    gather.replaceAllUsesWith(result);
    gather.erase();
    return success();
  }

  /// reduce_scatter along `axis`: the runtime gives rank g the g-th
  /// contiguous part of the sum, which is its slice when nothing precedes
  /// `axis`; else the input is first viewed as [..., ranks, local axis,
  /// ...] and transposed to put the ranks first.
  LogicalResult lowerReduceScatter(OpBuilder &builder,
                                   shard::ReduceScatterOp scatter) {
    if (failed(gridOf(scatter, scatter.getGridAttr())))
      return failure();
    Location loc = scatter.getLoc();
    auto inputType = cast<RankedTensorType>(scatter.getInput().getType());
    auto type = cast<RankedTensorType>(scatter.getResult().getType());
    FailureOr<mte_dtype> dtype = dtypeOf(scatter, type);
    FailureOr<mte_reduce_op> op = reduceOpOf(scatter, scatter.getReduction());
    if (failed(dtype) || failed(op) || failed(dtypeOf(scatter, inputType)))
      return failure();
    if (inputType.getElementType() != type.getElementType())
      return scatter.emitOpError("reduces into another element type");
    int64_t axis = scatter.getScatterAxis().getSExtValue();
    int64_t ranks = inputType.getDimSize(axis) / type.getDimSize(axis);
    Value input = scatter.getInput();
    if (needsRankMajorView(inputType.getShape(), axis)) {
      // [d0, ..., ranks * local, ...] -> [d0, ..., ranks, local, ...]
      // -> [ranks, d0, ..., local, ...].
      SmallVector<int64_t> viewShape(inputType.getShape());
      viewShape[axis] = type.getDimSize(axis);
      viewShape.insert(viewShape.begin() + axis, ranks);
      input = tensor::ExpandShapeOp::create(
          builder, loc,
          RankedTensorType::get(viewShape, inputType.getElementType()), input,
          mergeAt(inputType.getRank(), axis));
      SmallVector<int64_t> permutation = {axis};
      for (int64_t d = 0; d <= inputType.getRank(); ++d)
        if (d != axis)
          permutation.push_back(d);
      input = transpose(builder, loc, input, permutation);
    }
    Value result = callWithOutput(
        builder, loc, DECLARE(mte_comm_reduce_scatter),
        inputAddress(builder, loc, input), type,
        {type.getNumElements(), *dtype, *op, axesMask(scatter.getGridAxes())});
    scatter.replaceAllUsesWith(result);
    scatter.erase();
    return success();
  }
  /// The index in the group of `axes` of the rank at `peer`, its
  /// coordinates on those axes (row-major in the grid's axis order, as the
  /// runtime numbers a group's ranks; the op's verifier has checked their
  /// number and range).
  FailureOr<int64_t> peerIndex(Operation *op, FlatSymbolRefAttr gridName,
                               ArrayRef<shard::GridAxis> axes,
                               ArrayRef<int64_t> peer, bool dynamic) {
    FailureOr<shard::GridOp> grid = gridOf(op, gridName);
    if (failed(grid))
      return failure();
    if (dynamic)
      return op->emitOpError("names its peer at run time; the runtime takes "
                             "static peers");
    if (!llvm::is_sorted(axes))
      return op->emitOpError("names grid axes out of order");
    int64_t index = 0;
    for (auto [axis, coordinate] : llvm::zip_equal(axes, peer))
      index = index * grid->getShape()[axis] + coordinate;
    return index;
  }

  LogicalResult lowerBroadcast(OpBuilder &builder,
                               shard::BroadcastOp broadcast) {
    auto type = cast<RankedTensorType>(broadcast.getInput().getType());
    FailureOr<mte_dtype> dtype = dtypeOf(broadcast, type);
    FailureOr<int64_t> root = peerIndex(
        broadcast, broadcast.getGridAttr(), broadcast.getGridAxes(),
        broadcast.getRoot(), !broadcast.getRootDynamic().empty());
    if (failed(dtype) || failed(root))
      return failure();
    Location loc = broadcast.getLoc();
    Value result = callWithOutput(
        builder, loc, DECLARE(mte_comm_broadcast),
        inputAddress(builder, loc, broadcast.getInput()), type,
        {type.getNumElements(), *dtype, *root,
         axesMask(broadcast.getGridAxes())});
    broadcast.replaceAllUsesWith(result);
    broadcast.erase();
    return success();
  }

  /// mte_comm_send of the input; the op's result is that input.
  LogicalResult lowerSend(OpBuilder &builder, shard::SendOp send) {
    auto type = cast<RankedTensorType>(send.getInput().getType());
    FailureOr<mte_dtype> dtype = dtypeOf(send, type);
    FailureOr<int64_t> to = peerIndex(send, send.getGridAttr(),
                                      send.getGridAxes(), send.getDestination(),
                                      !send.getDestinationDynamic().empty());
    if (failed(dtype) || failed(to))
      return failure();
    Location loc = send.getLoc();
    func::FuncOp callee = DECLARE(mte_comm_send);
    func::CallOp::create(
        builder, loc, callee,
        ValueRange{inputAddress(builder, loc, send.getInput()),
                   arith::ConstantIntOp::create(builder, loc,
                                                type.getNumElements(), 64),
                   arith::ConstantIntOp::create(builder, loc, *dtype, 32),
                   arith::ConstantIntOp::create(builder, loc, *to, 64),
                   arith::ConstantIntOp::create(
                       builder, loc, axesMask(send.getGridAxes()), 32)});
    send.replaceAllUsesWith(send.getInput());
    send.erase();
    return success();
  }

  /// mte_comm_recv into a new buffer, the op's result.
  LogicalResult lowerRecv(OpBuilder &builder, shard::RecvOp recv) {
    auto type = cast<RankedTensorType>(recv.getResult().getType());
    FailureOr<mte_dtype> dtype = dtypeOf(recv, type);
    if (!recv.getSource())
      return recv.emitOpError("names no source");
    FailureOr<int64_t> from =
        peerIndex(recv, recv.getGridAttr(), recv.getGridAxes(),
                  *recv.getSource(), !recv.getSourceDynamic().empty());
    if (failed(dtype) || failed(from))
      return failure();
    Location loc = recv.getLoc();
    Value output = memref::AllocOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType()));
    func::CallOp::create(
        builder, loc, DECLARE(mte_comm_recv),
        ValueRange{address(builder, loc, output),
                   arith::ConstantIntOp::create(builder, loc,
                                                type.getNumElements(), 64),
                   arith::ConstantIntOp::create(builder, loc, *dtype, 32),
                   arith::ConstantIntOp::create(builder, loc, *from, 64),
                   arith::ConstantIntOp::create(
                       builder, loc, axesMask(recv.getGridAxes()), 32)});
    Value received = bufferization::ToTensorOp::create(
        builder, loc, type, output, /*restrict=*/true, /*writable=*/true);
    recv.getResult().replaceAllUsesWith(received);
    recv.erase();
    return success();
  }
#undef DECLARE

  ModuleOp module;
  SymbolTableCollection &symbols;
  bool denseSlices;
  /// The weight arguments made for slices, by whole weight and slice.
  DenseMap<std::pair<Value, Attribute>, Value> localWeights;
  /// The whole weights that were sliced, by function.
  llvm::MapVector<func::FuncOp, SmallVector<BlockArgument>> slicedWeights;
};

struct ConvertShardToRuntimeCallsPass
    : mte::impl::ConvertShardToRuntimeCallsBase<
          ConvertShardToRuntimeCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    CollectiveLowering lowering(module, symbols, denseSlices);
    SmallVector<Operation *> collectives;
    module.walk([&](Operation *op) {
      if (isa<shard::ShardDialect>(op->getDialect()) && !isa<shard::GridOp>(op))
        collectives.push_back(op);
    });
    for (Operation *op : collectives)
      if (failed(lowering.lower(op)))
        return signalPassFailure();
    lowering.eraseSlicedWeights();
    // The grid has served: nothing below the tensor level names it.
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      grid.erase();
  }
};

} // namespace
