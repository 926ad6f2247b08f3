//===- PipelineParallel.cpp - pipeline stages and micro-batches -----------===//
//
// Pipeline parallelism for inference. The entry function (one rank's
// program after tensor and data parallelism, built for one micro-batch)
// is cut into pp-size stages of consecutive ops, balanced by a cost model;
// each stage becomes a private function, and the entry function, now on
// micro-batches times the batch, runs the stage of the rank's coordinate
// on the grid's new outermost axis once per micro-batch: it receives what
// the stage reads from the stage before (shard.recv), calls it, and sends
// what later stages read to the next (shard.send). Inference has no
// backward pass, so this is GPipe's order and 1F1B's alike. Each output is
// then broadcast from the stage that computed it, so every rank returns
// the whole result.
//
// FP8 delayed scaling's state (amax history and scales, graph inputs and
// outputs) is one per run, not per micro-batch: every micro-batch
// quantises with the state's scales, the update is taken out of the
// stages, its amax vector joined by MAX over the micro-batches (the whole
// batch's amaxes) and broadcast from the stage that gathers it, and the
// update runs once, after them, on every rank alike.
//
// The cost of an op is its time on an H200 under a roofline (CostModel.h:
// its FLOPs at the rate its unit reaches, or its bytes at the device-copy
// bandwidth, whichever is longer, plus a launch; docs/sharding.md).
// A cut goes, among the positions whose cumulative cost is within an
// eighth of a stage of its share, where the fewest bytes cross it (between
// layers, where only the residual stream does).
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/CostModel.h"
#include "mte/Dialect/Transformer/Transforms/DeviceGrid.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <functional>

namespace mte::transformer {
#define GEN_PASS_DEF_PIPELINEPARALLEL
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {

/// The pipeline axis: the outermost.
constexpr shard::GridAxis kStageAxis = 0;
/// The ops of `body` that every stage reading them makes for itself: those
/// that depend on no input of the model. Constants, empty tensors and grid
/// indices, and pure computations of them alone (Llama's rotary tables,
/// ALiBi's slopes, T5's relative position buckets), which a stage
/// recomputes rather than receives from the stage before: a few
/// elementwise kernels against a send and a receive per micro-batch at
/// each cut they would cross. Collectives stay in their stage.
llvm::DenseSet<Operation *> inputIndependentOps(Block &body) {
  llvm::DenseSet<Operation *> independent;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      continue;
    if (op.getNumOperands() != 0 &&
        isa_and_nonnull<shard::ShardDialect>(op.getDialect()))
      continue;
    if (llvm::all_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && independent.contains(def);
        }))
      independent.insert(&op);
  }
  return independent;
}

/// The type a value crosses between stages as: shard's send and receive
/// take ranked tensors of rank 1 and more, so a scalar (an FP8 amax)
/// travels as a tensor of one element.
RankedTensorType crossingType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getRank() ? tensor : tensor.clone(ArrayRef<int64_t>{1});
}

/// `v` as `type`: a reshape between a scalar and its one-element tensor.
Value reshapeIfNeeded(OpBuilder &b, Location loc, Value v, Type type) {
  return v.getType() == type ? v : ReshapeOp::create(b, loc, type, v);
}

struct PipelineParallelPass
    : mte::transformer::impl::PipelineParallelBase<PipelineParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ppSize < 1 || microBatches < 1) {
      module.emitError("pp-size and micro-batches must be at least 1");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.isPublic())
        entries.push_back(func);
    if (ppSize > 1) {
      FailureOr<shard::GridOp> grid = prependGridAxis(module, ppSize, "pp");
      if (failed(grid))
        return signalPassFailure();
      gridName = grid->getSymName();
    }
    for (func::FuncOp func : entries)
      if (failed(pipeline(func)))
        return signalPassFailure();
  }

  /// Positions (in `ops`) after which the stages end: ppSize - 1 cuts.
  FailureOr<SmallVector<size_t>> chooseCuts(func::FuncOp func,
                                            ArrayRef<Operation *> ops) {
    size_t n = ops.size();
    if (n < static_cast<size_t>(ppSize))
      return func.emitError("--pp=")
             << static_cast<int64_t>(ppSize) << ": the model has " << n
             << " ops to run, fewer than the stages";
    llvm::DenseMap<Operation *, size_t> position;
    for (auto [i, op] : llvm::enumerate(ops))
      position[op] = i;
    // cost[i]: the cost of ops[0..i]; crossing[i]: the bytes of the values
    // made at or before i and read after it.
    SmallVector<double> cost(n);
    SmallVector<int64_t> delta(n + 1, 0), crossing(n);
    for (auto [i, op] : llvm::enumerate(ops)) {
      cost[i] = (i ? cost[i - 1] : 0) + costOf(op).seconds(DeviceRates());
      for (Value result : op->getResults()) {
        size_t last = i;
        for (Operation *user : result.getUsers()) {
          Operation *top = func.getBody().front().findAncestorOpInBlock(*user);
          auto it = top ? position.find(top) : position.end();
          if (it != position.end())
            last = std::max(last, it->second);
        }
        delta[i] += bytesOf(result.getType());
        delta[last] -= bytesOf(result.getType());
      }
    }
    int64_t live = 0;
    for (size_t i = 0; i < n; ++i)
      crossing[i] = live += delta[i];
    double total = cost.back(), share = total / ppSize;
    SmallVector<size_t> cuts;
    size_t first = 0; // the first position the next cut may take
    for (int64_t s = 1; s < ppSize; ++s) {
      double target = s * share;
      // Leave an op at least to each later stage.
      size_t last = n - 1 - static_cast<size_t>(ppSize - s);
      std::optional<size_t> best;
      auto better = [&](size_t i) {
        if (!best)
          return true;
        if (crossing[i] != crossing[*best])
          return crossing[i] < crossing[*best];
        return std::abs(cost[i] - target) < std::abs(cost[*best] - target);
      };
      for (size_t i = first; i <= last; ++i)
        if (std::abs(cost[i] - target) <= share / 8 && better(i))
          best = i;
      if (!best) { // no position near the share: the closest
        best = first;
        for (size_t i = first; i <= last; ++i)
          if (std::abs(cost[i] - target) < std::abs(cost[*best] - target))
            best = i;
      }
      cuts.push_back(*best);
      first = *best + 1;
    }
    return cuts;
  }

  /// A delayed-scaling update taken out of the stages: it runs once, after
  /// them, on the amax vector at output `amaxOutput` (a temporary output of
  /// the stages, MAX-joined over the micro-batches), and its results are
  /// the function's outputs `nextOutputs` (next history, next scale).
  struct DeferredUpdate {
    Value history, scale;
    SmallVector<NamedAttribute> attributes;
    SmallVector<Type> resultTypes;
    unsigned amaxOutput;
    SmallVector<std::pair<unsigned, unsigned>> nextOutputs; // (output, result)
  };

  static bool isState(BlockArgument arg) {
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return static_cast<bool>(func.getArgAttr(
        arg.getArgNumber(), TransformerDialect::getStateAttrName()));
  }

  /// Detaches `func`'s delayed-scaling updates: each update's outputs
  /// return its state inputs for now, its amax vector becomes an output.
  FailureOr<SmallVector<DeferredUpdate>>
  deferUpdates(func::FuncOp func, func::ReturnOp returnOp) {
    SmallVector<DeferredUpdate> deferred;
    for (auto update : llvm::make_early_inc_range(
             func.getBody().front().getOps<Fp8ScaleUpdateOp>())) {
      auto history = dyn_cast<BlockArgument>(update.getHistory());
      auto scale = dyn_cast<BlockArgument>(update.getScale());
      if (!history || !scale || !isState(history) || !isState(scale))
        return update.emitError("pipeline stages and micro-batches: the "
                                "update does not read the model's state");
      DeferredUpdate d{history, scale,
                       SmallVector<NamedAttribute>(update->getAttrs()),
                       SmallVector<Type>(update->getResultTypes()), 0, {}};
      for (OpResult result : update->getResults())
        for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
          if (use.getOwner() != returnOp)
            return update.emitError("pipeline stages and micro-batches: the "
                                    "update's results must only be returned");
          d.nextOutputs.push_back(
              {use.getOperandNumber(), result.getResultNumber()});
          use.set(result.getResultNumber() == 0 ? Value(history)
                                                : Value(scale));
        }
      d.amaxOutput = returnOp.getNumOperands();
      returnOp.getOperandsMutable().append(update.getAmax());
      update.erase();
      deferred.push_back(std::move(d));
    }
    return deferred;
  }

  LogicalResult pipeline(func::FuncOp func) {
    MLIRContext *context = func.getContext();
    Block &body = func.getBody().front();
    auto returnOp = cast<func::ReturnOp>(body.getTerminator());
    int64_t stages = ppSize, parts = microBatches;
    // The function's own outputs, before the updates' amax vectors.
    unsigned numOutputs = returnOp.getNumOperands();
    FailureOr<SmallVector<DeferredUpdate>> updates =
        deferUpdates(func, returnOp);
    if (failed(updates))
      return failure();
    // How the micro-batches' values of each output become one: along the
    // batch, or by MAX (the updates' amax vectors). The state, returned as
    // it came until the updates replace it, is no stage's output.
    llvm::DenseSet<unsigned> maxOutputs;
    llvm::DenseMap<unsigned, unsigned> stateOutputs; // output -> argument
    for (const DeferredUpdate &update : *updates)
      maxOutputs.insert(update.amaxOutput);
    for (auto [i, result] : llvm::enumerate(returnOp.getOperands()))
      if (auto arg = dyn_cast<BlockArgument>(result); arg && isState(arg))
        stateOutputs[i] = arg.getArgNumber();
    llvm::DenseSet<Operation *> cloneable = inputIndependentOps(body);
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      if (!cloneable.contains(&op))
        ops.push_back(&op);
    FailureOr<SmallVector<size_t>> cuts = chooseCuts(func, ops);
    if (failed(cuts))
      return failure();
    llvm::DenseMap<Operation *, int64_t> stageOf;
    for (auto [i, op] : llvm::enumerate(ops)) {
      size_t position = i; // a structured binding is not captured in C++17
      stageOf[op] =
          llvm::count_if(*cuts, [&](size_t cut) { return position > cut; });
    }
    auto stageOfValue = [&](Value v) -> int64_t {
      Operation *def = v.getDefiningOp();
      auto it = def ? stageOf.find(def) : stageOf.end();
      return it == stageOf.end() ? -1 : it->second;
    };

    // What each stage reads from earlier ones (received from the stage
    // before, which forwards what it does not read itself), in op order.
    SmallVector<SmallVector<Value>> received(stages);
    for (Operation *op : ops)
      for (Value result : op->getResults()) {
        int64_t from = stageOf[op], until = from;
        for (Operation *user : result.getUsers())
          if (Operation *top = body.findAncestorOpInBlock(*user);
              top && stageOf.count(top))
            until = std::max(until, stageOf[top]);
        for (int64_t s = from + 1; s <= until; ++s)
          received[s].push_back(result);
      }
    // The stage that returns each output (an argument or a constant
    // returned as it is: the first).
    SmallVector<int64_t> outputStage;
    for (Value result : returnOp.getOperands())
      outputStage.push_back(std::max<int64_t>(stageOfValue(result), 0));

    // The whole batch's types: micro-batches times the first dimension
    // (one micro-batch: the types as they are, a batch or not).
    SmallVector<Type> inputTypes(func.getArgumentTypes());
    SmallVector<Type> outputTypes(returnOp.getOperandTypes());
    int64_t statusIndex = -1;
    for (auto [i, type] : llvm::enumerate(inputTypes)) {
      if (parts == 1)
        break;
      if (isState(func.getArgument(i)))
        continue; // whole for every micro-batch
      FailureOr<RankedTensorType> whole = wholeBatchType(type, parts);
      if (failed(whole))
        return func.emitError("micro-batches split the graph inputs along "
                              "their first dimension (the batch); argument ")
               << i << " has type " << type;
      type = *whole;
    }
    for (auto [i, type] : llvm::enumerate(outputTypes)) {
      if (i < numOutputs &&
          func.getResultAttr(i, "transformer.index_status")) {
        statusIndex = i;
        continue;
      }
      if (parts == 1 || stateOutputs.contains(i) || maxOutputs.contains(i))
        continue;
      FailureOr<RankedTensorType> whole = wholeBatchType(type, parts);
      if (failed(whole))
        return func.emitError("micro-batches join the outputs along their "
                              "first dimension (the batch); result ")
               << i << " has type " << type;
      type = *whole;
    }
    SmallVector<int64_t> checkElements = indexCheckElements(func);

    // The stage functions.
    OpBuilder moduleBuilder(func);
    SmallVector<func::FuncOp> stageFuncs;
    SmallVector<SmallVector<unsigned>> stageInputs(stages);
    for (int64_t s = 0; s < stages; ++s) {
      llvm::SetVector<Value> argsRead;
      for (Operation *op : ops)
        if (stageOf[op] == s)
          op->walk([&](Operation *nested) {
            for (Value operand : nested->getOperands())
              if (auto arg = dyn_cast<BlockArgument>(operand);
                  arg && arg.getOwner() == &body)
                argsRead.insert(arg);
          });
      for (auto [i, result] : llvm::enumerate(returnOp.getOperands()))
        if (outputStage[i] == s && isa<BlockArgument>(result) &&
            !stateOutputs.contains(i))
          argsRead.insert(result);
      SmallVector<Value> sorted(argsRead.begin(), argsRead.end());
      llvm::sort(sorted, [](Value a, Value b) {
        return cast<BlockArgument>(a).getArgNumber() <
               cast<BlockArgument>(b).getArgNumber();
      });
      SmallVector<Type> argTypes;
      for (Value arg : sorted) {
        stageInputs[s].push_back(cast<BlockArgument>(arg).getArgNumber());
        argTypes.push_back(arg.getType());
      }
      for (Value v : received[s])
        argTypes.push_back(crossingType(v.getType()));
      SmallVector<Value> sent =
          s + 1 < stages ? received[s + 1] : SmallVector<Value>();
      SmallVector<Value> results(sent);
      SmallVector<Type> resultTypes = llvm::map_to_vector(
          sent, [](Value v) -> Type { return crossingType(v.getType()); });
      for (auto [i, result] : llvm::enumerate(returnOp.getOperands()))
        if (outputStage[i] == s && !stateOutputs.contains(i)) {
          results.push_back(result);
          resultTypes.push_back(result.getType());
        }
      // `_stage<s>`: the name stays an identifier of PTX (the kernels
      // outlined from it are named after it) and of C.
      auto stageFunc = func::FuncOp::create(
          moduleBuilder, func.getLoc(),
          (func.getSymName() + "_stage" + Twine(s)).str(),
          FunctionType::get(context, argTypes, resultTypes));
      stageFunc.setPrivate();
      Block *entry = stageFunc.addEntryBlock();
      OpBuilder b = OpBuilder::atBlockBegin(entry);
      stageFunc->setAttr(kPipelineStageAttrName, b.getI64IntegerAttr(s));
      IRMapping mapping;
      for (auto [arg, value] : llvm::zip(entry->getArguments(),
                                         llvm::concat<Value>(sorted,
                                                             received[s])))
        mapping.map(value,
                    reshapeIfNeeded(b, func.getLoc(), arg, value.getType()));
      // What depends on no input, made where first read (its operands
      // first).
      std::function<void(Value)> materialize = [&](Value v) {
        if (mapping.contains(v))
          return;
        Operation *def = v.getDefiningOp();
        if (!def || !cloneable.contains(def))
          return;
        for (Value operand : def->getOperands())
          materialize(operand);
        b.clone(*def, mapping);
      };
      for (Operation *op : ops) {
        if (stageOf[op] != s)
          continue;
        op->walk([&](Operation *nested) {
          for (Value operand : nested->getOperands())
            materialize(operand);
        });
        b.clone(*op, mapping);
      }
      for (Value v : results)
        materialize(v);
      SmallVector<Value> returned;
      for (auto [v, type] : llvm::zip_equal(results, resultTypes))
        returned.push_back(
            reshapeIfNeeded(b, func.getLoc(), mapping.lookup(v), type));
      func::ReturnOp::create(b, func.getLoc(), returned);
      stageFuncs.push_back(stageFunc);
    }

    // The entry function: the rank's stage, once per micro-batch. Its old
    // body goes; what the dispatch needs of it are types.
    SmallVector<Type> microInputs(func.getArgumentTypes());
    SmallVector<SmallVector<Type>> receivedTypes;
    for (ArrayRef<Value> values : received)
      receivedTypes.push_back(llvm::map_to_vector(
          values, [](Value v) -> Type { return crossingType(v.getType()); }));
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      op.erase();
    for (auto [arg, type] : llvm::zip(func.getArguments(), inputTypes))
      arg.setType(type);
    func.setFunctionType(FunctionType::get(
        context, inputTypes, ArrayRef<Type>(outputTypes).take_front(numOutputs)));
    OpBuilder b = OpBuilder::atBlockEnd(&body);
    Location loc = func.getLoc();
    auto peer = [&](int64_t stage) {
      return b.getDenseI64ArrayAttr({stage});
    };
    FlatSymbolRefAttr gridRef =
        stages > 1 ? FlatSymbolRefAttr::get(context, gridName)
                   : FlatSymbolRefAttr();
    DenseI16ArrayAttr stageAxes = b.getDenseI16ArrayAttr({kStageAxis});

    // Micro-batch j's part of the whole batch: offsets, sizes, strides of
    // its slice, the micro-batch's `type` at j times its first dimension.
    using Slice = std::tuple<SmallVector<OpFoldResult>,
                             SmallVector<OpFoldResult>,
                             SmallVector<OpFoldResult>>;
    auto microBatch = [&](RankedTensorType type, int64_t j) -> Slice {
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      offsets[0] = b.getIndexAttr(j * type.getDimSize(0));
      SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
          type.getShape(),
          [&](int64_t d) -> OpFoldResult { return b.getIndexAttr(d); });
      SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
      return {offsets, sizes, strides};
    };

    // Builds stage s's runs into the current block; returns the outputs
    // (those of other stages: empty tensors).
    auto runStage = [&](int64_t s) -> SmallVector<Value> {
      SmallVector<Value> joined;
      for (auto [i, type] : llvm::enumerate(outputTypes))
        joined.push_back(
            stateOutputs.contains(i)
                ? Value(func.getArgument(stateOutputs.lookup(i)))
                : tensor::EmptyOp::create(
                      b, loc, cast<RankedTensorType>(type).getShape(),
                      cast<RankedTensorType>(type).getElementType())
                      .getResult());
      SmallVector<Value> statuses;
      for (int64_t j = 0; j < parts; ++j) {
        SmallVector<Value> args;
        for (unsigned i : stageInputs[s]) {
          BlockArgument arg = func.getArgument(i);
          if (parts == 1 || isState(arg)) {
            args.push_back(arg);
            continue;
          }
          auto micro = cast<RankedTensorType>(microInputs[i]);
          auto [offsets, sizes, strides] = microBatch(micro, j);
          args.push_back(tensor::ExtractSliceOp::create(b, loc, micro, arg,
                                                        offsets, sizes,
                                                        strides));
        }
        for (Type t : receivedTypes[s]) {
          auto type = cast<RankedTensorType>(t);
          Value into = tensor::EmptyOp::create(b, loc, type.getShape(),
                                               type.getElementType());
          args.push_back(shard::RecvOp::create(b, loc, type, gridRef,
                                               stageAxes, into, peer(s - 1),
                                               ValueRange{}));
        }
        auto call = func::CallOp::create(b, loc, stageFuncs[s], args);
        unsigned next = 0;
        if (s + 1 < stages)
          for (Type type : receivedTypes[s + 1])
            shard::SendOp::create(b, loc, type, gridRef, stageAxes,
                                  call.getResult(next++), peer(s + 1),
                                  ValueRange{});
        for (auto [i, stage] : llvm::enumerate(outputStage)) {
          if (stage != s || stateOutputs.contains(i))
            continue;
          Value result = call.getResult(next++);
          if (static_cast<int64_t>(i) == statusIndex) {
            statuses.push_back(result);
            continue;
          }
          if (parts == 1) {
            joined[i] = result;
            continue;
          }
          if (maxOutputs.contains(i)) {
            joined[i] = j == 0 ? result
                               : MaxOp::create(b, loc, joined[i], result)
                                     .getResult();
            continue;
          }
          auto [offsets, sizes, strides] =
              microBatch(cast<RankedTensorType>(result.getType()), j);
          joined[i] = tensor::InsertSliceOp::create(b, loc, result, joined[i],
                                                    offsets, sizes, strides);
        }
      }
      if (!statuses.empty())
        joined[statusIndex] =
            joinIndexStatus(b, loc, statuses, checkElements);
      return joined;
    };

    SmallVector<Value> results;
    if (stages == 1) {
      results = runStage(0);
    } else {
      Value stage = shard::ProcessMultiIndexOp::create(
                        b, loc, gridName, ArrayRef<shard::GridAxis>{kStageAxis})
                        .getResult()
                        .front();
      SmallVector<int64_t> cases;
      for (int64_t s = 0; s + 1 < stages; ++s)
        cases.push_back(s);
      auto dispatch = scf::IndexSwitchOp::create(b, loc, outputTypes, stage,
                                                 cases, cases.size());
      dispatch->setAttr(kPipelineDispatchAttrName, b.getUnitAttr());
      for (int64_t s = 0; s < stages; ++s) {
        Region &region = s + 1 < stages ? dispatch.getCaseRegions()[s]
                                        : dispatch.getDefaultRegion();
        Block *block = b.createBlock(&region);
        b.setInsertionPointToEnd(block);
        scf::YieldOp::create(b, loc, runStage(s));
      }
      b.setInsertionPointAfter(dispatch);
      // Every rank returns every output: its stage's broadcast (the state,
      // which the updates below replace, every rank holds).
      for (auto [i, value] : llvm::enumerate(dispatch.getResults()))
        results.push_back(
            stateOutputs.contains(i)
                ? Value(value)
                : shard::BroadcastOp::create(b, loc, value.getType(), gridRef,
                                             stageAxes, value,
                                             peer(outputStage[i]), ValueRange{})
                      .getResult());
    }
    // The updates, once, on the whole batch's amaxes.
    for (const DeferredUpdate &update : *updates) {
      auto next = Fp8ScaleUpdateOp::create(
          b, loc, update.resultTypes,
          ValueRange{update.history, results[update.amaxOutput], update.scale},
          update.attributes);
      for (auto [output, result] : update.nextOutputs)
        results[output] = next->getResult(result);
    }
    results.resize(numOutputs);
    func::ReturnOp::create(b, loc, results);
    numStages += stages;
    return success();
  }

  /// The micro-batches' index-check statuses ([K, 3] each: count, first
  /// position, its value) as one: the counts summed, the position and value
  /// of the first micro-batch whose count is not 0, the position counted in
  /// the whole batch for checks of a graph input's elements (`elements` of
  /// them a micro-batch, 0 for the others).
  Value joinIndexStatus(OpBuilder &b, Location loc, ArrayRef<Value> statuses,
                        ArrayRef<int64_t> elements) {
    if (statuses.size() == 1)
      return statuses.front();
    auto type = cast<RankedTensorType>(statuses.front().getType());
    int64_t checks = type.getDimSize(0);
    Type i64 = type.getElementType();
    auto column = RankedTensorType::get({checks, 1}, i64);
    auto col = [&](Value v, int64_t c) -> Value {
      return SliceOp::create(b, loc, v, {0, c}, {checks, 1}, {1, 1});
    };
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(column, b.getIntegerAttr(i64, 0)));
    Value total, position, value;
    // From the last micro-batch to the first: each failing one takes over.
    for (int64_t j = statuses.size() - 1; j >= 0; --j) {
      Value status = statuses[j];
      Value count = col(status, 0);
      Value failing = CompareOp::create(
          b, loc, ComparePredicateAttr::get(b.getContext(), ComparePredicate::NE),
          count, zero);
      Value at = col(status, 1);
      if (j > 0 && elements.size() == static_cast<size_t>(checks)) {
        SmallVector<int64_t> offsets;
        for (int64_t e : elements)
          offsets.push_back(j * e);
        at = AddOp::create(
            b, loc, at,
            arith::ConstantOp::create(
                b, loc, DenseElementsAttr::get(column, ArrayRef(offsets))));
      }
      if (!total) {
        total = count;
        position = WhereOp::create(b, loc, failing, at, col(status, 1));
        value = col(status, 2);
        continue;
      }
      total = AddOp::create(b, loc, total, count);
      position = WhereOp::create(b, loc, failing, at, position);
      value = WhereOp::create(b, loc, failing, col(status, 2), value);
    }
    return ConcatOp::create(b, loc, ValueRange{total, position, value},
                            /*axis=*/1);
  }

  StringRef gridName;
};

} // namespace
