//===- VectorizeElementwise.cpp - 16-byte vectors for elementwise ops -----===//
//
// convert-linalg-to-parallel-loops gives every element of an elementwise op
// its own iteration, which the CUDA backend runs as one thread with scalar
// 2- or 4-byte accesses. Here such ops become loops over 16-byte vectors
// instead: one thread then moves a vector of each operand. Gathers of rows
// (an embedding lookup: a table row picked by a token id) take the same
// path, the row's index computed once as a scalar.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"

namespace mte {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISE
#include "mte/Codegen/CUDA/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {

constexpr int64_t kVectorBytes = 16;

/// Whether operand `map` reads along the innermost loop `last`: as its last
/// index (true), or not at all (false); nothing when an index is anything
/// but a loop or a constant, or `last` sits elsewhere.
std::optional<bool> variesAlongLast(AffineMap map, unsigned last) {
  bool varies = false;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (isa<AffineConstantExpr>(expr))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    if (dim.getPosition() == last) {
      if (i + 1 != map.getNumResults())
        return std::nullopt;
      varies = true;
    }
  }
  return varies;
}

/// Whether every vector of `lanes` elements along the last dimension of
/// `type` starts 16 bytes after another (given a 16-byte aligned base).
bool hasAlignedVectors(MemRefType type, int64_t lanes) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset % lanes != 0 || strides.empty() ||
      strides.back() != 1)
    return false;
  return llvm::all_of(ArrayRef(strides).drop_back(), [&](int64_t stride) {
    return ShapedType::isStatic(stride) && stride % lanes == 0;
  });
}

/// Sorts the body's values of `op` into those that vary along the innermost
/// loop and those that do not, or fails where the body holds an op a vector
/// loop cannot run: anything but elementwise-mappable ops, `linalg.index`,
/// and `memref.load`s from buffers the op does not write whose last index
/// is the innermost loop's (one contiguous vector: a gather of rows, as an
/// embedding lookup is) or that do not vary (one element, broadcast). The
/// innermost loop's index may only be such a load's last index.
FailureOr<llvm::DenseSet<Value>> classifyBody(linalg::GenericOp op,
                                              int64_t lanes) {
  unsigned last = op.getNumLoops() - 1;
  llvm::DenseSet<Value> varying;
  Block *block = op.getBody();
  for (OpOperand &operand : op->getOpOperands())
    if (*variesAlongLast(op.getMatchingIndexingMap(&operand), last))
      varying.insert(block->getArgument(operand.getOperandNumber()));
  auto isLaneIndex = [&](Value v) {
    auto index = v.getDefiningOp<linalg::IndexOp>();
    return index && index.getDim() == last;
  };
  for (Operation &inner : block->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      if (index.getDim() != last)
        continue;
      if (!llvm::all_of(index->getUses(), [](OpOperand &use) {
            auto load = dyn_cast<memref::LoadOp>(use.getOwner());
            return load &&
                   use.getOperandNumber() == load->getNumOperands() - 1;
          }))
        return failure();
      varying.insert(index);
      continue;
    }
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      ValueRange indices = load.getIndices();
      MemRefType type = load.getMemRefType();
      if (llvm::is_contained(op.getDpsInits(), load.getMemRef()) ||
          llvm::any_of(indices.drop_back(),
                       [&](Value v) { return varying.contains(v); }) ||
          (!indices.empty() && varying.contains(indices.back()) &&
           !isLaneIndex(indices.back())))
        return failure();
      if (!indices.empty() && isLaneIndex(indices.back())) {
        // planVectors counted the element's width in `lanes`.
        if (!hasAlignedVectors(type, lanes))
          return failure();
        varying.insert(load.getResult());
      }
      continue;
    }
    if (!OpTrait::hasElementwiseMappableTraits(&inner) ||
        inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner))
      return failure();
    if (llvm::any_of(inner.getOperands(),
                     [&](Value v) { return varying.contains(v); })) {
      // An index computed from the lanes' index would be a vector of
      // addresses: not a contiguous access.
      if (llvm::any_of(inner.getResultTypes(),
                       [](Type t) { return t.isIndex(); }))
        return failure();
      varying.insert(inner.getResults().begin(), inner.getResults().end());
    }
  }
  return varying;
}

/// The bytes of a vector lane of `element`: whole bytes only.
std::optional<int64_t> laneBytes(Type element) {
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8 ||
      element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  return element.getIntOrFloatBitWidth() / 8;
}

/// How `op` becomes a vector loop: the vector width (elements) and the
/// body's values that vary along it.
struct VectorPlan {
  int64_t lanes;
  llvm::DenseSet<Value> varying;
};

/// The plan for `op`, or nothing when it does not apply.
std::optional<VectorPlan> planVectors(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return std::nullopt;
  int64_t narrowest = kVectorBytes;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    std::optional<int64_t> bytes =
        type ? laneBytes(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !bytes)
      return std::nullopt;
    narrowest = std::min(narrowest, *bytes);
  }
  // A row gathered as vectors counts too: its vectors must be 16 bytes.
  unsigned last = op.getNumLoops() - 1;
  for (auto load : op.getBody()->getOps<memref::LoadOp>()) {
    ValueRange indices = load.getIndices();
    auto index = indices.empty()
                     ? linalg::IndexOp()
                     : indices.back().getDefiningOp<linalg::IndexOp>();
    if (!index || index.getDim() != last)
      continue;
    std::optional<int64_t> bytes = laneBytes(load.getType());
    if (!bytes)
      return std::nullopt;
    narrowest = std::min(narrowest, *bytes);
  }
  int64_t lanes = kVectorBytes / narrowest;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[last]) || ranges[last] % lanes != 0)
    return std::nullopt;

  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<bool> varies =
        variesAlongLast(op.getMatchingIndexingMap(&operand), last);
    bool isOutput = op.isDpsInit(&operand);
    if (!varies || (isOutput && !*varies))
      return std::nullopt;
    if (*varies &&
        !hasAlignedVectors(cast<MemRefType>(operand.get().getType()), lanes))
      return std::nullopt;
  }
  FailureOr<llvm::DenseSet<Value>> varying = classifyBody(op, lanes);
  if (failed(varying))
    return std::nullopt;
  return VectorPlan{lanes, std::move(*varying)};
}

/// `value` (a scalar) as a vector of `lanes`.
Value broadcast(OpBuilder &b, Location loc, Value value, int64_t lanes) {
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({lanes}, value.getType()), value);
}

void vectorize(linalg::GenericOp op, const VectorPlan &plan) {
  int64_t lanes = plan.lanes;
  OpBuilder b(op);
  Location loc = op.getLoc();
  unsigned last = op.getNumLoops() - 1;
  SmallVector<Value> lower, upper, steps;
  for (auto [i, range] : llvm::enumerate(op.getStaticLoopRanges())) {
    lower.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    upper.push_back(arith::ConstantIndexOp::create(b, loc, range));
    steps.push_back(
        arith::ConstantIndexOp::create(b, loc, i == last ? lanes : 1));
  }
  auto loop = scf::ParallelOp::create(b, loc, lower, upper, steps);
  OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
  SmallVector<Value> ivs(loop.getInductionVars());
  IntegerAttr alignment = b.getI64IntegerAttr(kVectorBytes);

  auto indices = [&](OpOperand &operand) {
    SmallVector<Value> result;
    for (AffineExpr expr : op.getMatchingIndexingMap(&operand).getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        result.push_back(ivs[dim.getPosition()]);
      else
        result.push_back(arith::ConstantIndexOp::create(
            body, loc, cast<AffineConstantExpr>(expr).getValue()));
    }
    return result;
  };
  auto varies = [&](OpOperand &operand) {
    return *variesAlongLast(op.getMatchingIndexingMap(&operand), last);
  };

  // Values that vary along the vector become vectors; the others (an
  // embedding row's index, broadcast operands) stay scalars, broadcast
  // where a vector op reads them.
  const llvm::DenseSet<Value> &varying = plan.varying;
  IRMapping mapping;
  auto asVector = [&](Value v) -> Value {
    Value mapped = mapping.contains(v) ? mapping.lookup(v) : v;
    return isa<VectorType>(mapped.getType())
               ? mapped
               : broadcast(body, loc, mapped, lanes);
  };
  Block *block = op.getBody();
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = block->getArgument(operand.getOperandNumber());
    if (arg.use_empty())
      continue;
    if (varies(operand)) {
      auto load = vector::LoadOp::create(
          body, loc, VectorType::get({lanes}, arg.getType()), operand.get(),
          indices(operand));
      load.setAlignmentAttr(alignment);
      mapping.map(arg, load.getResult());
    } else {
      mapping.map(arg, memref::LoadOp::create(body, loc, operand.get(),
                                              indices(operand))
                           .getResult());
    }
  }

  for (Operation &inner : block->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    if (auto load = dyn_cast<memref::LoadOp>(inner);
        load && varying.contains(load.getResult())) {
      SmallVector<Value> at = llvm::map_to_vector(
          load.getIndices(),
          [&](Value v) { return mapping.lookupOrDefault(v); });
      auto vectorLoad = vector::LoadOp::create(
          body, loc, VectorType::get({lanes}, load.getType()),
          load.getMemRef(), at);
      vectorLoad.setAlignmentAttr(alignment);
      mapping.map(load.getResult(), vectorLoad.getResult());
      continue;
    }
    if (!llvm::any_of(inner.getResults(),
                      [&](Value v) { return varying.contains(v); })) {
      body.clone(inner, mapping);
      continue;
    }
    SmallVector<Value> operands =
        llvm::map_to_vector(inner.getOperands(), asVector);
    SmallVector<Type> types;
    for (Type t : inner.getResultTypes())
      types.push_back(VectorType::get({lanes}, t));
    OperationState state(inner.getLoc(), inner.getName(), operands, types,
                         inner.getAttrs());
    Operation *vectorOp = body.create(state);
    mapping.map(inner.getResults(), vectorOp->getResults());
  }

  auto yield = cast<linalg::YieldOp>(block->getTerminator());
  for (auto [value, init] :
       llvm::zip(yield.getValues(), op.getDpsInitsMutable())) {
    Value stored = asVector(value);
    auto store =
        vector::StoreOp::create(body, loc, stored, init.get(), indices(init));
    store.setAlignmentAttr(alignment);
  }
  op->erase();
}

struct VectorizeElementwisePass
    : mte::impl::VectorizeElementwiseBase<VectorizeElementwisePass> {
  void runOnOperation() override {
    // Copies (model outputs through a reshape, concatenations) are
    // elementwise too.
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::CopyOp> copies;
    getOperation().walk([&](linalg::CopyOp copy) {
      if (copy.hasPureBufferSemantics())
        copies.push_back(copy);
    });
    for (linalg::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      if (failed(linalg::generalizeNamedOp(rewriter, copy)))
        return signalPassFailure();
    }

    SmallVector<std::pair<linalg::GenericOp, VectorPlan>> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<VectorPlan> plan = planVectors(op))
        candidates.emplace_back(op, std::move(*plan));
    });
    for (auto &[op, plan] : candidates)
      vectorize(op, plan);
  }
};

} // namespace
