//===- DataParallel.cpp - replicas of the model over a batch split --------===//
//
// Data parallelism for inference: each of dp-size replicas runs the whole
// (possibly tensor-parallel) program on its part of the batch. The driver
// imports the model at the replica's batch; this pass gives the entry
// function the whole batch back: each graph input is sliced along its
// first dimension on the new outermost grid axis, each output all-gathered
// along it. What must agree across the replicas is reduced over that axis:
// FP8 amaxes by MAX (every replica quantises with the whole batch's scale,
// as TransformerEngine's amax reduction group includes data parallelism),
// and the index-check status (counts summed; the first failing replica's
// position and value).
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/DeviceGrid.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mte::transformer {
#define GEN_PASS_DEF_DATAPARALLEL
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {

/// The data-parallel axis: the outermost.
constexpr shard::GridAxis kDataAxis = 0;

struct DataParallelPass
    : mte::transformer::impl::DataParallelBase<DataParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (dpSize < 1) {
      module.emitError("dp-size must be at least 1, not ")
          << static_cast<int64_t>(dpSize);
      return signalPassFailure();
    }
    FailureOr<shard::GridOp> grid = prependGridAxis(module, dpSize, "dp");
    if (failed(grid))
      return signalPassFailure();
    gridName = grid->getSymName();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.isPublic() &&
          failed(splitBatch(func)))
        return signalPassFailure();
  }

  /// `func` on the whole batch: its graph inputs sliced to the replica's
  /// rows, its outputs gathered.
  LogicalResult splitBatch(func::FuncOp func) {
    MLIRContext *context = func.getContext();
    Block &entry = func.getBody().front();
    // Counted before the inputs take the whole batch: a replica's.
    SmallVector<int64_t> elements = indexCheckElements(func);
    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    SmallVector<Type> inputTypes(func.getArgumentTypes());
    for (BlockArgument arg : func.getArguments()) {
      if (func.getArgAttr(arg.getArgNumber(),
                          TransformerDialect::getStateAttrName()))
        continue; // model state: whole on every replica
      FailureOr<RankedTensorType> whole = wholeBatchType(arg.getType(), dpSize);
      if (failed(whole))
        return func.emitError("data parallelism splits the graph inputs "
                              "along their first dimension (the batch); "
                              "argument ")
               << arg.getArgNumber() << " has type " << arg.getType();
      auto type = cast<RankedTensorType>(arg.getType());
      arg.setType(*whole);
      inputTypes[arg.getArgNumber()] = *whole;
      auto slice = shard::AllSliceOp::create(
          builder, arg.getLoc(), type, arg, gridName, {kDataAxis},
          /*sliceAxis=*/0);
      arg.replaceAllUsesExcept(slice, slice);
    }

    // Per-tensor FP8 amaxes of activations: the batch's, on every replica.
    func.walk([&](AmaxOp amax) {
      if (matchPattern(amax.getInput(), m_Constant()))
        return;
      OpBuilder after(context);
      after.setInsertionPointAfter(amax);
      auto reduced = shard::AllReduceOp::create(
          after, amax.getLoc(), amax.getResult(), gridName, {kDataAxis},
          shard::ReductionKind::Max);
      amax.getResult().replaceAllUsesExcept(reduced, reduced);
      ++numReducedAmaxes;
    });

    auto returnOp = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    builder.setInsertionPoint(returnOp);
    SmallVector<Type> resultTypes;
    for (OpOperand &operand : returnOp->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      Value result = operand.get();
      if (func.getResultAttr(i, TransformerDialect::getNextStateAttrName())) {
        // The same on every replica: its inputs (amaxes) are reduced.
        resultTypes.push_back(result.getType());
        continue;
      }
      if (func.getResultAttr(i, "transformer.index_status")) {
        operand.set(
            combineIndexStatus(builder, returnOp.getLoc(), elements, result));
        resultTypes.push_back(result.getType());
        continue;
      }
      FailureOr<RankedTensorType> whole =
          wholeBatchType(result.getType(), dpSize);
      if (failed(whole))
        return func.emitError("data parallelism gathers the outputs along "
                              "their first dimension (the batch); result ")
               << i << " has type " << result.getType();
      auto gathered = shard::AllGatherOp::create(
          builder, returnOp.getLoc(), *whole,
          FlatSymbolRefAttr::get(context, gridName),
          builder.getDenseI16ArrayAttr({kDataAxis}), result,
          builder.getIndexAttr(0));
      operand.set(gathered);
      resultTypes.push_back(*whole);
    }
    func.setFunctionType(FunctionType::get(context, inputTypes, resultTypes));
    return success();
  }

  /// The replicas' index-check statuses ([K, 3]: count, first position,
  /// its value; CheckIndices.cpp) as one, the same on every replica: the
  /// counts summed, and the position and value of the first replica whose
  /// count is not 0, the position counted in the whole batch for a check
  /// of a graph input's `elements` (a replica's; 0 for the others).
  Value combineIndexStatus(OpBuilder &b, Location loc,
                           ArrayRef<int64_t> elements, Value status) {
    auto type = cast<RankedTensorType>(status.getType());
    int64_t checks = type.getDimSize(0);
    Type i64 = type.getElementType();
    auto column = RankedTensorType::get({checks, 1}, i64);
    auto scalar = RankedTensorType::get({1, 1}, i64);
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(scalar, b.getIntegerAttr(i64, v)));
    };
    auto compare = [&](ComparePredicate predicate, Value lhs, Value rhs) {
      return CompareOp::create(
          b, loc, ComparePredicateAttr::get(b.getContext(), predicate), lhs,
          rhs);
    };
    auto reduce = [&](Value v, shard::ReductionKind kind) -> Value {
      return shard::AllReduceOp::create(b, loc, v, gridName, {kDataAxis}, kind);
    };
    auto col = [&](Value v, int64_t c) -> Value {
      return SliceOp::create(b, loc, v, {0, c}, {checks, 1}, {1, 1});
    };
    Value replica = shard::ProcessMultiIndexOp::create(
                        b, loc, gridName, ArrayRef<shard::GridAxis>{kDataAxis})
                        .getResult()
                        .front();
    replica = tensor::SplatOp::create(
        b, loc, scalar,
        arith::IndexCastOp::create(b, loc, i64, replica).getResult());
    Value counts = col(status, 0);
    Value zero = constant(0);
    // The first failing replica of each check: the least of the failing
    // replicas' indices (dp-size where none fails).
    Value failing = compare(ComparePredicate::NE, counts, zero);
    Value key = WhereOp::create(b, loc, failing, replica, constant(dpSize));
    Value first = reduce(key, shard::ReductionKind::Min);
    Value mine = compare(ComparePredicate::EQ, first, replica);
    Value picked = reduce(WhereOp::create(b, loc, mine, status, zero),
                          shard::ReductionKind::Sum);
    Value total = reduce(counts, shard::ReductionKind::Sum);
    Value position = col(picked, 1);
    if (elements.size() == static_cast<size_t>(checks)) {
      Value perReplica = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(column, ArrayRef<int64_t>(elements)));
      position = AddOp::create(b, loc, position,
                               MulOp::create(b, loc, first, perReplica));
    }
    // With no bad index anywhere the status stays [0, -1, 0].
    Value any = compare(ComparePredicate::NE, total, zero);
    position = WhereOp::create(b, loc, any, position, col(status, 1));
    Value value = WhereOp::create(b, loc, any, col(picked, 2), col(status, 2));
    return ConcatOp::create(b, loc, ValueRange{total, position, value},
                            /*axis=*/1);
  }

  StringRef gridName;
};

} // namespace
