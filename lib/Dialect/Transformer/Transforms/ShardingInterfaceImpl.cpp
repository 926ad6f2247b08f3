//===- ShardingInterfaceImpl.cpp - shard models of transformer ops --------===//
//
// shard-partition (upstream) rewrites an annotated program into the program
// of one rank: it gives each op its operands' local values and their
// shardings and asks the op, through shard::ShardingInterface, for its
// local form. The models here are the local forms of the ops that
// mte-annotate-tensor-parallel splits:
//
//  - a linear whose weight is split along N computes its columns; one
//    split along K computes a partial product, which an all-reduce over the
//    K axes sums before the bias, the activation and the residual (Megatron's
//    row-parallel linear: those are not linear in the partial sums);
//  - attention and packed rotary embeddings split along heads run on their
//    local heads;
//  - elementwise ops (FP8 quantisation and scales included), reshapes and
//    splits along an unsplit axis keep their attributes and take the local
//    types;
//  - an amax of a split tensor is the MAX all-reduce of the local amaxes,
//    and so is each row's maximum of rows split along their length;
//  - a gather from a table split along its rows (a vocabulary-parallel
//    embedding) reads the rank's rows and all-reduces.
//
// Every model also describes the op's loops and indexing maps, which the
// interface's verifier and sharding-propagation read.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/Transforms/ShardingInterfaceImpl.h"
#include "mte/Dialect/Transformer/IR/TransformerDialect.h"
#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::shard;
using namespace mte::transformer;
// shard has a gather op too.
using TransformerGatherOp = mte::transformer::GatherOp;

namespace {

/// The grid axes tensor dimension `dim` is split over under `sharding`.
ArrayRef<GridAxis> splitAxesOf(const Sharding &sharding, int64_t dim) {
  if (!sharding)
    return {};
  ArrayRef<GridAxesAttr> axes = sharding.getSplitAxes();
  if (dim >= static_cast<int64_t>(axes.size()))
    return {};
  return axes[dim].asArrayRef();
}

/// How many ranks share tensor dimension `dim` under `sharding`.
int64_t shardCount(Operation *op, const Sharding &sharding, int64_t dim,
                   SymbolTableCollection &symbols) {
  ArrayRef<GridAxis> axes = splitAxesOf(sharding, dim);
  if (axes.empty())
    return 1;
  GridOp grid = getGrid(op, sharding.getGridAttr(), symbols);
  return collectiveProcessGroupSize(axes, grid);
}

Type localType(Operation *op, Type type, const Sharding &sharding,
               SymbolTableCollection &symbols) {
  if (!sharding)
    return type;
  return shardType(type, getGrid(op, sharding.getGridAttr(), symbols),
                   sharding);
}

/// Clones `op` onto the local operands with the local result types, then
/// lets `update` adjust the clone's attributes.
Operation *cloneLocally(Operation *op, ArrayRef<Sharding> resultShardings,
                        IRMapping &map, SymbolTableCollection &symbols,
                        OpBuilder &builder,
                        function_ref<void(Operation *)> update = nullptr) {
  Operation *local = builder.clone(*op, map);
  for (auto [result, sharding] :
       llvm::zip_equal(local->getResults(), resultShardings))
    result.setType(localType(op, result.getType(), sharding, symbols));
  if (update)
    update(local);
  return local;
}

SmallVector<utils::IteratorType> parallelLoops(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

int64_t resultRank(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getRank();
}

/// The map of an operand broadcast (numpy rules) to a result of `rank`
/// loops: its trailing dimensions are the trailing loops, size-1 dimensions
/// are the constant 0.
AffineMap broadcastMap(Type operandType, int64_t rank, MLIRContext *ctx) {
  auto type = dyn_cast<RankedTensorType>(operandType);
  if (!type)
    return AffineMap::get(rank, 0, {}, ctx);
  SmallVector<AffineExpr> exprs;
  int64_t offset = rank - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    exprs.push_back(type.getDimSize(d) == 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(offset + d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// Ops whose local form is the op on the local operands with the local
/// result types, attributes unchanged: elementwise ops (numpy broadcasting
/// included: one parallel loop per result dimension), and the views the
/// annotation pass lets a split pass through — reshapes that keep what
/// precedes the split dimension, transposes, splits and concatenations
/// along another axis (their maps describe them as opaque).
template <typename OpTy, bool kIsShapeOp = false>
struct CloningModel
    : ShardingInterface::ExternalModel<CloningModel<OpTy, kIsShapeOp>, OpTy> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return parallelLoops(resultRank(op));
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t rank = resultRank(op);
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps;
    for (Type type : op->getOperandTypes()) {
      if constexpr (kIsShapeOp)
        maps.push_back(cast<RankedTensorType>(type).getRank() == rank
                           ? AffineMap::getMultiDimIdentityMap(rank, ctx)
                           : AffineMap::get(rank, 0, {}, ctx));
      else
        maps.push_back(broadcastMap(type, rank, ctx));
    }
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
    return maps;
  }
  LogicalResult partition(Operation *op, ArrayRef<Value>, ArrayRef<Sharding>,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    cloneLocally(op, resultShardings, map, symbols, builder);
    return success();
  }
};

/// transformer.slice taking a split dimension whole: the local slice takes
/// the local extent of that dimension.
struct SliceModel : ShardingInterface::ExternalModel<SliceModel, SliceOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return parallelLoops(resultRank(op));
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(resultRank(op), op->getContext());
    return {identity, identity};
  }
  LogicalResult partition(Operation *op, ArrayRef<Value>,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto slice = cast<SliceOp>(op);
    SmallVector<int64_t> sizes(slice.getSizes());
    for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
      int64_t count = shardCount(op, operandShardings[0], d, symbols);
      if (count == 1)
        continue;
      if (slice.getOffsets()[d] != 0 || slice.getStrides()[d] != 1 ||
          sizes[d] != slice.getInput().getType().getDimSize(d))
        return op->emitOpError("slices dimension ")
               << d << ", which is split among the ranks";
      sizes[d] /= count;
    }
    cloneLocally(op, resultShardings, map, symbols, builder,
                 [&](Operation *local) {
                   cast<SliceOp>(local).setSizes(sizes);
                 });
    return success();
  }
};

/// transformer.layer_norm and rms_norm: every token on its own, so a split
/// of the dimensions before the normalised ones (the tokens, under
/// sequence parallelism) runs the norm on the local tokens.
template <typename NormOp>
struct NormModel
    : ShardingInterface::ExternalModel<NormModel<NormOp>, NormOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return parallelLoops(resultRank(op));
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto norm = cast<NormOp>(op);
    MLIRContext *ctx = op->getContext();
    int64_t rank = resultRank(op);
    int64_t axis = normalizeAxis(norm.getAxis(), rank).value_or(rank - 1);
    SmallVector<AffineExpr> normalised;
    for (int64_t d = axis; d < rank; ++d)
      normalised.push_back(getAffineDimExpr(d, ctx));
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<AffineMap> maps;
    for (Value operand : op->getOperands())
      maps.push_back(operand == norm.getInput() || operand == norm.getResidual()
                         ? identity
                         : AffineMap::get(rank, 0, normalised, ctx));
    maps.append(op->getNumResults(), identity);
    return maps;
  }
  LogicalResult partition(Operation *op, ArrayRef<Value>,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto norm = cast<NormOp>(op);
    int64_t rank = resultRank(op);
    for (int64_t d = normalizeAxis(norm.getAxis(), rank).value_or(rank - 1);
         d < rank; ++d)
      for (const Sharding &sharding :
           llvm::concat<const Sharding>(operandShardings.take_front(1),
                                        resultShardings))
        if (!splitAxesOf(sharding, d).empty())
          return op->emitOpError("normalises dimension ")
                 << d << ", which is split among the ranks";
    cloneLocally(op, resultShardings, map, symbols, builder);
    return success();
  }
};

/// The loops of an op that sums over one loop after its result's: a
/// parallel loop per result dimension, then the sum.
struct SumAfterParallelLoops {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    SmallVector<utils::IteratorType> loops = parallelLoops(resultRank(op));
    loops.push_back(utils::IteratorType::reduction);
    return loops;
  }
  SmallVector<ReductionKind> getReductionLoopIteratorKinds(Operation *) const {
    return {ReductionKind::Sum};
  }
};

/// transformer.linear: loops over the output's dimensions (parallel), then
/// K (a sum).
struct LinearModel
    : ShardingInterface::ExternalModel<LinearModel, LinearOp>,
      SumAfterParallelLoops {
  using SumAfterParallelLoops::getLoopIteratorTypes;
  using SumAfterParallelLoops::getReductionLoopIteratorKinds;
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto linear = cast<LinearOp>(op);
    MLIRContext *ctx = op->getContext();
    int64_t rank = resultRank(op);
    int64_t loops = rank + 1;
    AffineExpr n = getAffineDimExpr(rank - 1, ctx);
    AffineExpr k = getAffineDimExpr(rank, ctx);
    SmallVector<AffineExpr> outer;
    for (int64_t d = 0; d + 1 < rank; ++d)
      outer.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineExpr> input(outer);
    input.push_back(k);
    SmallVector<AffineExpr> output(outer);
    output.push_back(n);
    bool kn = linear.getWeightLayout() == WeightLayout::KN;
    SmallVector<AffineMap> maps = {
        AffineMap::get(loops, 0, input, ctx),
        AffineMap::get(loops, 0,
                       kn ? ArrayRef<AffineExpr>{k, n}
                          : ArrayRef<AffineExpr>{n, k},
                       ctx)};
    if (linear.getBias())
      maps.push_back(AffineMap::get(loops, 0, {n}, ctx));
    if (linear.getResidual())
      maps.push_back(AffineMap::get(loops, 0, output, ctx));
    // FP8 scales: scalars; or rowwise scaling's one per input row
    // ([..., 1]) and one per weight channel ([N]).
    if (linear.getInputScale()) {
      SmallVector<AffineExpr> rows(outer);
      rows.push_back(getAffineConstantExpr(0, ctx));
      maps.push_back(linear.isRowScaled() ? AffineMap::get(loops, 0, rows, ctx)
                                          : AffineMap::get(loops, 0, {}, ctx));
    }
    if (linear.getWeightScale())
      maps.push_back(linear.isRowScaled() ? AffineMap::get(loops, 0, {n}, ctx)
                                          : AffineMap::get(loops, 0, {}, ctx));
    maps.push_back(AffineMap::get(loops, 0, output, ctx));
    return maps;
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> operands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto linear = cast<LinearOp>(op);
    int64_t kDim = linear.getWeightLayout() == WeightLayout::KN ? 0 : 1;
    ArrayRef<GridAxis> kAxes = splitAxesOf(operandShardings[1], kDim);
    int64_t inputRank = linear.getInput().getType().getRank();
    if (splitAxesOf(operandShardings[0], inputRank - 1) != kAxes)
      return op->emitOpError("input and weight split K differently");
    if (kAxes.empty()) {
      cloneLocally(op, resultShardings, map, symbols, builder);
      return success();
    }
    if (!splitAxesOf(resultShardings[0], inputRank - 1).empty())
      return op->emitOpError("a linear split along K has whole output rows");
    // Under sequence parallelism the output is split along its tokens.
    std::optional<int64_t> scatterDim;
    for (int64_t d = 0; d + 1 < inputRank; ++d) {
      ArrayRef<GridAxis> axes = splitAxesOf(resultShardings[0], d);
      if (axes.empty())
        continue;
      if (axes != kAxes || scatterDim)
        return op->emitOpError("a linear split along K scatters its sum "
                               "over the K axes along one dimension");
      scatterDim = d;
    }

    // Row parallel: the sum of the ranks' partial products (all-reduced, or
    // reduce-scattered over the tokens), then the epilogue on the sum. An
    // FP8 product is scaled before the sum: its scales (per tensor, or per
    // row and channel) are the same on every rank, so the sum of the
    // scaled parts is the scaled whole.
    LinearOp::Adaptor local(operands, linear);
    Location loc = linear.getLoc();
    auto type = cast<RankedTensorType>(
        localType(op, linear.getType(), resultShardings[0], symbols));
    SmallVector<int64_t> productShape(
        cast<RankedTensorType>(local.getInput().getType())
            .getShape()
            .drop_back());
    productShape.push_back(type.getShape().back());
    auto productType =
        RankedTensorType::get(productShape, type.getElementType());
    Value product = LinearOp::create(
        builder, loc, productType, local.getInput(), local.getWeight(),
        /*bias=*/nullptr, /*residual=*/nullptr, local.getInputScale(),
        local.getWeightScale(), linear.getWeightLayout(), Activation::None).getOutput();
    Value sum =
        scatterDim
            ? Value(ReduceScatterOp::create(
                  builder, loc, type, resultShardings[0].getGrid(), kAxes,
                  product, ReductionKind::Sum,
                  APInt(64, static_cast<uint64_t>(*scatterDim))))
            : Value(AllReduceOp::create(builder, loc, product,
                                        resultShardings[0].getGrid(), kAxes,
                                        ReductionKind::Sum));
    if (Value bias = local.getBias())
      sum = AddOp::create(builder, loc, type, sum, bias);
    switch (linear.getActivation()) {
    case Activation::None:
      break;
    case Activation::Relu:
      sum = ReluOp::create(builder, loc, sum);
      break;
    case Activation::Gelu:
    case Activation::GeluTanh:
      sum = GeluOp::create(builder, loc, sum,
                           linear.getActivation() == Activation::Gelu
                               ? GeluApproximation::None
                               : GeluApproximation::Tanh);
      break;
    case Activation::Silu:
      sum = SiluOp::create(builder, loc, sum);
      break;
    }
    if (Value residual = local.getResidual())
      sum = AddOp::create(builder, loc, type, sum, residual);
    map.map(linear.getOutput(), sum);
    return success();
  }
};

/// transformer.attention on [B, S, heads * D] operands: loops (b, sq, skv,
/// e), e the packed heads and head dimension, so that a split of the last
/// dimension (by whole heads: the annotation checks) is a split of the heads.
struct AttentionModel
    : ShardingInterface::ExternalModel<AttentionModel, AttentionOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return {utils::IteratorType::parallel, utils::IteratorType::parallel,
            utils::IteratorType::reduction, utils::IteratorType::parallel};
  }
  SmallVector<ReductionKind> getReductionLoopIteratorKinds(Operation *) const {
    // The softmax over keys is not a preset reduction.
    return {ReductionKind::Generic};
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto attention = cast<AttentionOp>(op);
    MLIRContext *ctx = op->getContext();
    AffineExpr b = getAffineDimExpr(0, ctx), sq = getAffineDimExpr(1, ctx),
               skv = getAffineDimExpr(2, ctx), e = getAffineDimExpr(3, ctx);
    SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {b, sq, e}, ctx),
                                   AffineMap::get(4, 0, {b, skv, e}, ctx),
                                   AffineMap::get(4, 0, {b, skv, e}, ctx)};
    if (Value mask = attention.getMask())
      maps.push_back(AffineMap::get(4, 0, {}, ctx));
    maps.push_back(AffineMap::get(4, 0, {b, sq, e}, ctx));
    return maps;
  }
  LogicalResult partition(Operation *op, ArrayRef<Value>,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto attention = cast<AttentionOp>(op);
    int64_t heads = shardCount(op, operandShardings[0], 2, symbols);
    if (shardCount(op, operandShardings[1], 2, symbols) != heads ||
        shardCount(op, operandShardings[2], 2, symbols) != heads ||
        shardCount(op, resultShardings[0], 2, symbols) != heads)
      return op->emitOpError("query, key, value and output split their heads "
                             "differently");
    if (attention.getNumHeads() % heads || attention.getNumKvHeads() % heads)
      return op->emitOpError("heads do not divide among ")
             << heads << " ranks";
    // A mask with a dimension per head (ALiBi's slopes, T5's relative
    // position bias) is read whole by every rank, which takes its heads'
    // part, as it takes its heads' columns of the query.
    Value localMask;
    if (Value mask = attention.getMask(); mask && heads > 1 &&
                                          hasHeadDimension(attention)) {
      auto type = cast<RankedTensorType>(mask.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[1] /= heads;
      localMask = shard::AllSliceOp::create(
          builder, mask.getLoc(), type.clone(shape), map.lookup(mask),
          operandShardings[0].getGridAttr().getValue(),
          splitAxesOf(operandShardings[0], 2), /*sliceAxis=*/1);
    }
    cloneLocally(op, resultShardings, map, symbols, builder,
                 [&](Operation *local) {
                   auto clone = cast<AttentionOp>(local);
                   clone.setNumHeads(attention.getNumHeads() / heads);
                   clone.setNumKvHeads(attention.getNumKvHeads() / heads);
                   if (localMask)
                     clone.getMaskMutable().assign(localMask);
                 });
    return success();
  }

  /// Whether the mask is [., heads, ., .] rather than broadcast over heads.
  static bool hasHeadDimension(AttentionOp attention) {
    auto type = cast<RankedTensorType>(attention.getMask().getType());
    return type.getRank() == 4 && type.getDimSize(1) != 1;
  }
};

/// transformer.rotary_embedding: in the packed [B, S, heads * D] form a
/// split of the last dimension is a split of the heads; in the [B, H, S, D]
/// form heads are dimension 1.
struct RotaryModel
    : ShardingInterface::ExternalModel<RotaryModel, RotaryEmbeddingOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return parallelLoops(resultRank(op));
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t rank = resultRank(op);
    MLIRContext *ctx = op->getContext();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap table = AffineMap::get(rank, 0, {}, ctx);
    return {identity, table, table, identity};
  }
  LogicalResult partition(Operation *op, ArrayRef<Value>,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto rotary = cast<RotaryEmbeddingOp>(op);
    std::optional<int64_t> heads = rotary.getNumHeads();
    int64_t rank = resultRank(op);
    if (heads && !splitAxesOf(operandShardings[0], rank - 1).empty()) {
      int64_t count = shardCount(op, operandShardings[0], rank - 1, symbols);
      if (*heads % count)
        return op->emitOpError("heads do not divide among ")
               << count << " ranks";
      cloneLocally(op, resultShardings, map, symbols, builder,
                   [&](Operation *local) {
                     cast<RotaryEmbeddingOp>(local).setNumHeads(*heads /
                                                                count);
                   });
      return success();
    }
    cloneLocally(op, resultShardings, map, symbols, builder);
    return success();
  }
};

/// transformer.gather: a parallel loop per result dimension, then the
/// gathered axis of `data` (a sum: each index selects one of its rows).
/// A rank holding a slice of that axis (a vocabulary-parallel embedding)
/// gathers the indices in its slice, reads zeros for the others, and the
/// ranks' results are all-reduced: exactly one rank adds each row.
struct GatherModel
    : ShardingInterface::ExternalModel<GatherModel, TransformerGatherOp>,
      SumAfterParallelLoops {
  using SumAfterParallelLoops::getLoopIteratorTypes;
  using SumAfterParallelLoops::getReductionLoopIteratorKinds;
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto gather = cast<TransformerGatherOp>(op);
    MLIRContext *ctx = op->getContext();
    int64_t rank = resultRank(op);
    int64_t axis = gather.getAxis();
    int64_t indexRank =
        cast<RankedTensorType>(gather.getIndices().getType()).getRank();
    SmallVector<AffineExpr> data, indices;
    for (int64_t d = 0; d < axis; ++d)
      data.push_back(getAffineDimExpr(d, ctx));
    data.push_back(getAffineDimExpr(rank, ctx));
    for (int64_t d = axis + indexRank; d < rank; ++d)
      data.push_back(getAffineDimExpr(d, ctx));
    for (int64_t d = axis; d < axis + indexRank; ++d)
      indices.push_back(getAffineDimExpr(d, ctx));
    return {AffineMap::get(rank + 1, 0, data, ctx),
            AffineMap::get(rank + 1, 0, indices, ctx),
            AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(
                rank)};
  }
  LogicalResult partition(Operation *op, ArrayRef<Value> operands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto gather = cast<TransformerGatherOp>(op);
    int64_t axis = gather.getAxis();
    ArrayRef<GridAxis> axes = splitAxesOf(operandShardings[0], axis);
    if (axes.empty()) {
      cloneLocally(op, resultShardings, map, symbols, builder);
      return success();
    }
    if (axis != 0 || !splitAxesOf(operandShardings[1], 0).empty() ||
        !splitAxesOf(resultShardings[0], 0).empty())
      return op->emitOpError("splits the rows of its table, which only a "
                             "gather along axis 0 of whole indices into a "
                             "whole result does");
    Location loc = op->getLoc();
    Value data = operands[0], ids = operands[1];
    auto idsType = cast<RankedTensorType>(ids.getType());
    Type idType = idsType.getElementType();
    int64_t rows = cast<RankedTensorType>(data.getType()).getDimSize(0);
    int64_t whole = rows * shardCount(op, operandShardings[0], 0, symbols);
    auto scalar = [&](int64_t v) -> Value {
      auto type = RankedTensorType::get({}, idType);
      return arith::ConstantOp::create(
          builder, loc, DenseElementsAttr::get(type, builder.getIntegerAttr(
                                                         idType, v)));
    };
    // The first row this rank holds: its index in the group times `rows`.
    auto index = ProcessMultiIndexOp::create(
        builder, loc, operandShardings[0].getGrid(), axes);
    Value linear = index.getResults().front();
    for (auto [axis, i] :
         llvm::drop_begin(llvm::zip(axes, index.getResults()))) {
      GridOp grid = getGrid(op, operandShardings[0].getGridAttr(), symbols);
      Value extent = arith::ConstantIndexOp::create(
          builder, loc, grid.getShape()[axis]);
      linear = arith::AddIOp::create(
          builder, loc, arith::MulIOp::create(builder, loc, linear, extent), i);
    }
    Value first = arith::MulIOp::create(
        builder, loc, linear, arith::ConstantIndexOp::create(builder, loc, rows));
    first = arith::IndexCastOp::create(builder, loc, idType, first);
    // A splat, not from_elements: on CUDA the tensor lives on the device,
    // where a kernel writes it (the host cannot store into it).
    first = tensor::SplatOp::create(
        builder, loc, RankedTensorType::get({}, idType), first);
    // Negative ids count from the end of the whole table.
    auto boolType = RankedTensorType::get(idsType.getShape(),
                                          builder.getI1Type());
    Value negative = CompareOp::create(builder, loc, boolType,
                                       ComparePredicate::LT, ids, scalar(0));
    Value positive = WhereOp::create(
        builder, loc, idsType, negative,
        AddOp::create(builder, loc, idsType, ids, scalar(whole)), ids);
    Value local = SubOp::create(builder, loc, idsType, positive, first);
    Value mine = AndOp::create(
        builder, loc, boolType,
        CompareOp::create(builder, loc, boolType, ComparePredicate::GE, local,
                          scalar(0)),
        CompareOp::create(builder, loc, boolType, ComparePredicate::LT, local,
                          scalar(rows)));
    Value safe = WhereOp::create(builder, loc, idsType, mine, local,
                                 scalar(0));
    auto type = cast<RankedTensorType>(
        localType(op, gather.getType(), resultShardings[0], symbols));
    Value rowsRead = TransformerGatherOp::create(builder, loc, type, data, safe, axis);
    // [ids..., 1, ...]: the mask broadcast over each row.
    SmallVector<int64_t> maskShape(idsType.getShape());
    maskShape.append(type.getRank() - idsType.getRank(), 1);
    Value mask = ReshapeOp::create(
        builder, loc, RankedTensorType::get(maskShape, builder.getI1Type()),
        mine);
    Type elementType = type.getElementType();
    Value zero = arith::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(RankedTensorType::get({}, elementType),
                               builder.getZeroAttr(elementType)));
    Value masked = WhereOp::create(builder, loc, type, mask, rowsRead, zero);
    Value sum = AllReduceOp::create(builder, loc, masked,
                                    operandShardings[0].getGrid(), axes,
                                    ReductionKind::Sum);
    map.map(gather.getResult(), sum);
    return success();
  }
};

/// transformer.amax: one MAX reduction loop per input dimension. A rank
/// holding part of the input takes its part's amax and all-reduces it by
/// MAX over the axes the input is split on, so that every rank gets the
/// whole tensor's amax (FP8 under tensor parallelism: each quantised tensor
/// has one scale across the ranks, and delayed scaling's history stays the
/// same on all of them).
struct AmaxModel : ShardingInterface::ExternalModel<AmaxModel, AmaxOp> {
  static int64_t inputRank(Operation *op) {
    return cast<AmaxOp>(op).getInput().getType().getRank();
  }
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(inputRank(op),
                                            utils::IteratorType::reduction);
  }
  SmallVector<ReductionKind> getReductionLoopIteratorKinds(Operation *op) const {
    return SmallVector<ReductionKind>(inputRank(op), ReductionKind::Max);
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t rank = inputRank(op);
    MLIRContext *ctx = op->getContext();
    return {AffineMap::getMultiDimIdentityMap(rank, ctx),
            AffineMap::get(rank, 0, {}, ctx)};
  }
  LogicalResult partition(Operation *op, ArrayRef<Value> operands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    SmallVector<GridAxis> axes;
    for (int64_t d = 0, e = inputRank(op); d < e; ++d)
      for (GridAxis axis : splitAxesOf(operandShardings[0], d))
        if (!llvm::is_contained(axes, axis))
          axes.push_back(axis);
    Operation *local = cloneLocally(op, resultShardings, map, symbols, builder);
    if (axes.empty())
      return success();
    llvm::sort(axes);
    Value whole = AllReduceOp::create(
        builder, op->getLoc(), local->getResult(0),
        operandShardings[0].getGrid(), axes, ReductionKind::Max);
    map.map(op->getResult(0), whole);
    return success();
  }
};

/// transformer.block_amax: a parallel loop per input dimension but the
/// last, which reduces (MAX) within each block. Rows split among the ranks
/// (sequence parallelism) stay on their rank. A split of the blocked
/// dimension keeps whole blocks on a rank when the result is split alike
/// (the local op is the same), and when each row is one block (rowwise
/// scaling: block_size K) each rank takes its part's maxima and
/// all-reduces them by MAX, as transformer.amax does.
struct BlockAmaxModel
    : ShardingInterface::ExternalModel<BlockAmaxModel, BlockAmaxOp> {
  static int64_t inputRank(Operation *op) {
    return cast<BlockAmaxOp>(op).getInput().getType().getRank();
  }
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    SmallVector<utils::IteratorType> loops = parallelLoops(inputRank(op) - 1);
    loops.push_back(utils::IteratorType::reduction);
    return loops;
  }
  SmallVector<ReductionKind> getReductionLoopIteratorKinds(Operation *) const {
    return {ReductionKind::Max};
  }
  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    int64_t rank = inputRank(op);
    MLIRContext *ctx = op->getContext();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    if (cast<BlockAmaxOp>(op).getType().getShape().back() != 1)
      return {identity, identity};
    // One block per row: the row's maximum.
    SmallVector<AffineExpr> rows(identity.getResults().drop_back());
    rows.push_back(getAffineConstantExpr(0, ctx));
    return {identity, AffineMap::get(rank, 0, rows, ctx)};
  }
  LogicalResult partition(Operation *op, ArrayRef<Value> operands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings, IRMapping &map,
                          SymbolTableCollection &symbols,
                          OpBuilder &builder) const {
    auto amax = cast<BlockAmaxOp>(op);
    int64_t last = inputRank(op) - 1;
    for (int64_t d = 0; d < last; ++d)
      if (splitAxesOf(operandShardings[0], d) !=
          splitAxesOf(resultShardings[0], d))
        return op->emitOpError("reads dimension ")
               << d << " split other than it writes it";
    ArrayRef<GridAxis> axes = splitAxesOf(operandShardings[0], last);
    if (axes.empty() || splitAxesOf(resultShardings[0], last) == axes) {
      if (!axes.empty() &&
          amax.getInput().getType().getDimSize(last) %
                  (shardCount(op, operandShardings[0], last, symbols) *
                   amax.getBlockSize()) !=
              0)
        return op->emitOpError("splits its blocks among the ranks");
      cloneLocally(op, resultShardings, map, symbols, builder);
      return success();
    }
    if (amax.getType().getShape()[last] != 1 ||
        !splitAxesOf(resultShardings[0], last).empty())
      return op->emitOpError("splits its blocks among the ranks");
    // One block per row: each rank's part of the row is a block, and the
    // row's maximum is the maximum of the parts'.
    int64_t localBlock = amax.getBlockSize() /
                         shardCount(op, operandShardings[0], last, symbols);
    Operation *local = cloneLocally(op, resultShardings, map, symbols, builder,
                                    [&](Operation *clone) {
                                      cast<BlockAmaxOp>(clone).setBlockSize(
                                          localBlock);
                                    });
    Value whole = AllReduceOp::create(builder, op->getLoc(),
                                      local->getResult(0),
                                      operandShardings[0].getGrid(), axes,
                                      ReductionKind::Max);
    map.map(op->getResult(0), whole);
    return success();
  }
};

/// Every other op runs replicated: each rank computes it whole. (Upstream
/// shard-partition needs a model on every op whose results are annotated,
/// and the annotation pass marks the values a split block reads and writes.)
template <typename OpTy>
struct ReplicatedModel
    : ShardingInterface::ExternalModel<ReplicatedModel<OpTy>, OpTy> {};

template <typename... Ops>
void attachElementwise(MLIRContext *ctx) {
  (Ops::template attachInterface<CloningModel<Ops>>(*ctx), ...);
}

template <typename OpTy>
constexpr bool hasShardingModel =
    llvm::is_one_of<OpTy, LinearOp, AttentionOp, RotaryEmbeddingOp,
                    LayerNormOp, RMSNormOp, ReshapeOp,
                    SplitOp, TransposeOp, ConcatOp, SliceOp, AmaxOp,
                    BlockAmaxOp, TransformerGatherOp, AddOp,
                    SubOp, MulOp, DivOp, CastOp, QuantizeOp, DequantizeOp,
                    Fp8ScaleOp, GeluOp, SiluOp, SwigluOp, GegluOp, ReluOp, TanhOp,
                    SigmoidOp, ExpOp, NegOp>::value;

template <typename... Ops>
void attachReplicated(MLIRContext *ctx) {
  auto attach = [&](auto *tag) {
    using OpTy = std::remove_pointer_t<decltype(tag)>;
    if constexpr (!hasShardingModel<OpTy>)
      OpTy::template attachInterface<ReplicatedModel<OpTy>>(*ctx);
  };
  (attach(static_cast<Ops *>(nullptr)), ...);
}

} // namespace

void mte::transformer::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TransformerDialect *) {
    LinearOp::attachInterface<LinearModel>(*ctx);
    AttentionOp::attachInterface<AttentionModel>(*ctx);
    RotaryEmbeddingOp::attachInterface<RotaryModel>(*ctx);
    ReshapeOp::attachInterface<CloningModel<ReshapeOp, true>>(*ctx);
    SplitOp::attachInterface<CloningModel<SplitOp, true>>(*ctx);
    TransposeOp::attachInterface<CloningModel<TransposeOp, true>>(*ctx);
    ConcatOp::attachInterface<CloningModel<ConcatOp, true>>(*ctx);
    SliceOp::attachInterface<SliceModel>(*ctx);
    LayerNormOp::attachInterface<NormModel<LayerNormOp>>(*ctx);
    RMSNormOp::attachInterface<NormModel<RMSNormOp>>(*ctx);
    AmaxOp::attachInterface<AmaxModel>(*ctx);
    BlockAmaxOp::attachInterface<BlockAmaxModel>(*ctx);
    TransformerGatherOp::attachInterface<GatherModel>(*ctx);
    attachElementwise<AddOp, SubOp, MulOp, DivOp, CastOp, QuantizeOp,
                      DequantizeOp, Fp8ScaleOp, GeluOp, SiluOp, SwigluOp, GegluOp, ReluOp,
                      TanhOp, SigmoidOp, ExpOp, NegOp>(ctx);
    attachReplicated<
#define GET_OP_LIST
#include "mte/Dialect/Transformer/IR/TransformerOps.cpp.inc"
        >(ctx);
  });
}
