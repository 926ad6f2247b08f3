//===- CheckIndices.cpp - guard gather and scatter indices ----------------===//
//
// Every op that addresses a tensor by index values reads them through a
// transformer.check_indices, which clamps them into range and counts the
// ones that were not; the entry function returns the counts for the runtime
// to report. Constant indices are checked here instead.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"

namespace mte::transformer {
#define GEN_PASS_DEF_CHECKINDICES
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {

/// The index operand of an op that addresses a tensor by index values, the
/// valid range of each index (one bound, or one per entry of the indices'
/// last dimension) and the ONNX op it came from.
struct IndexUse {
  OpOperand *indices;
  SmallVector<int64_t> bounds;
  StringRef onnxOp;
};

std::optional<IndexUse> getIndexUse(Operation *op) {
  auto dims = [](Value data, int64_t first, int64_t count) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(data.getType()).getShape();
    return SmallVector<int64_t>(shape.slice(first, count));
  };
  auto axisDim = [&](Value data, int64_t axis) {
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    return dims(data, axis < 0 ? axis + rank : axis, 1);
  };
  if (auto gather = dyn_cast<GatherOp>(op))
    return IndexUse{&gather.getIndicesMutable(),
                    axisDim(gather.getData(), gather.getAxis()), "Gather"};
  if (auto gather = dyn_cast<GatherElementsOp>(op))
    return IndexUse{&gather.getIndicesMutable(),
                    axisDim(gather.getData(), gather.getAxis()),
                    "GatherElements"};
  auto tupleLength = [](Value indices) {
    return cast<RankedTensorType>(indices.getType()).getShape().back();
  };
  if (auto gather = dyn_cast<GatherNDOp>(op))
    return IndexUse{&gather.getIndicesMutable(),
                    dims(gather.getData(), gather.getBatchDims(),
                         tupleLength(gather.getIndices())),
                    "GatherND"};
  if (auto scatter = dyn_cast<ScatterNDOp>(op))
    return IndexUse{&scatter.getIndicesMutable(),
                    dims(scatter.getData(), 0,
                         tupleLength(scatter.getIndices())),
                    "ScatterND"};
  return std::nullopt;
}

/// The ONNX node an op was imported from: the name of its NameLoc.
StringAttr nodeName(Location loc) {
  StringAttr name;
  loc->walk([&](Location l) {
    if (auto named = dyn_cast<NameLoc>(l)) {
      name = named.getName();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

/// The graph input whose values `v` carries unchanged (through casts and
/// ops that only move elements), or null.
StringAttr sourceInput(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<CastOp, ReshapeOp, ExpandOp, TransposeOp, SliceOp>(def))
      return nullptr;
    v = def->getOperand(0);
  }
  auto arg = cast<BlockArgument>(v);
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  "transformer.name")
              : nullptr;
}

/// Checks constant indices at compile time.
LogicalResult checkConstantIndices(Operation *op, const IndexUse &use,
                                   DenseIntElementsAttr values) {
  int64_t k = use.bounds.size();
  for (auto [position, value] : llvm::enumerate(values.getValues<APInt>())) {
    int64_t bound = use.bounds[k == 1 ? 0 : position % k];
    int64_t index = value.getSExtValue();
    if (index < -bound || index >= bound)
      return op->emitError()
             << "index " << index << " (element " << position
             << " of the constant indices) is outside [" << -bound << ", "
             << bound - 1 << "]";
  }
  return success();
}

struct CheckIndicesPass
    : mte::transformer::impl::CheckIndicesBase<CheckIndicesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *context = &getContext();
    SmallVector<Value> statuses;
    SmallVector<Attribute> checks;
    WalkResult walk = func.walk([&](Operation *op) {
      std::optional<IndexUse> use = getIndexUse(op);
      if (!use)
        return WalkResult::advance();
      Value indices = use->indices->get();
      auto type = cast<RankedTensorType>(indices.getType());
      if (type.getNumElements() == 0 || indices.getDefiningOp<CheckIndicesOp>())
        return WalkResult::advance();
      if (llvm::any_of(use->bounds, ShapedType::isDynamic) ||
          !type.hasStaticShape()) {
        op->emitError("needs static shapes to check its indices");
        return WalkResult::interrupt();
      }
      if (llvm::is_contained(use->bounds, 0)) {
        op->emitError("indexes an empty dimension, so no index is valid");
        return WalkResult::interrupt();
      }
      DenseIntElementsAttr constant;
      if (matchPattern(indices, m_Constant(&constant)))
        return failed(checkConstantIndices(op, *use, constant))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      OpBuilder builder(op);
      auto check =
          CheckIndicesOp::create(builder, op->getLoc(), indices, use->bounds);
      use->indices->set(check.getClamped());
      ++numChecks;
      if (clamp)
        return WalkResult::advance();
      StringAttr node = nodeName(op->getLoc());
      StringAttr source = sourceInput(indices);
      checks.push_back(IndexCheckAttr::get(
          context, StringAttr::get(context, use->onnxOp),
          node ? node : StringAttr::get(context, ""),
          source ? source : StringAttr::get(context, ""), use->bounds));
      statuses.push_back(check.getStatus());
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (statuses.empty())
      return;
    if (func->hasAttr("transformer.index_checks")) {
      func.emitError("already returns an index status; run "
                     "mte-check-indices once");
      return signalPassFailure();
    }

    // One row per check: [K, 3], the function's last result.
    auto returnOp = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    OpBuilder builder(returnOp);
    Location loc = returnOp.getLoc();
    Type i64 = builder.getI64Type();
    SmallVector<Value> rows =
        llvm::map_to_vector(statuses, [&](Value status) -> Value {
          return ReshapeOp::create(builder, loc,
                                   RankedTensorType::get({1, 3}, i64), status);
        });
    Value table = rows.size() == 1
                      ? rows.front()
                      : ConcatOp::create(builder, loc, rows, /*axis=*/0)
                            .getResult();
    returnOp.getOperandsMutable().append(table);
    NamedAttribute marker(StringAttr::get(context, "transformer.index_status"),
                          UnitAttr::get(context));
    if (failed(func.insertResult(func.getNumResults(), table.getType(),
                                 DictionaryAttr::get(context, marker))))
      return signalPassFailure();
    func->setAttr("transformer.index_checks", ArrayAttr::get(context, checks));
  }
};

} // namespace
