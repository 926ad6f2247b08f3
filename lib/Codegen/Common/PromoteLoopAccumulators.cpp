//===- PromoteLoopAccumulators.cpp - reduction accumulators in registers --===//
//
// A reduction lowered to loops reads and writes its output element in every
// step; this pass carries the element through the scf.for as an iter_args
// value instead, when nothing else in the loop may touch it (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mte {
#define GEN_PASS_DEF_PROMOTELOOPACCUMULATORS
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {

/// Where a memref's elements live: the buffer it views (a block argument
/// or an allocation) and, when a memref.view at a constant offset is on the
/// way, the bytes of that buffer it may reach.
struct Origin {
  Value buffer;
  std::optional<std::pair<int64_t, int64_t>> bytes; // [begin, end)
};

/// The static byte size of `type`, if it has one.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      !type.getLayout().isIdentity())
    return std::nullopt;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// Whether `op` gives a view inside its source's elements (never before
/// or past them), as a subview or a reshape does; a reinterpret_cast or a
/// buffer's metadata may reach anywhere in the allocation.
bool staysInside(Operation *op) {
  return isa<memref::SubViewOp, memref::CastOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::TransposeOp,
             memref::MemorySpaceCastOp, memref::AssumeAlignmentOp>(op);
}

Origin originOf(Value memref) {
  Origin origin;
  // Views between the access and the first memref.view stay inside that
  // view's bytes if each stays inside its source; any other view on the
  // way, or a view further up, shifts them by an amount not tracked.
  bool shifted = false;
  while (true) {
    Operation *op = memref.getDefiningOp();
    auto viewLike = dyn_cast_if_present<ViewLikeOpInterface>(op);
    if (!viewLike) {
      origin.buffer = memref;
      if (shifted)
        origin.bytes.reset();
      return origin;
    }
    if (auto view = dyn_cast<memref::ViewOp>(op); view && !origin.bytes) {
      APInt shift;
      std::optional<int64_t> size = staticBytes(view.getType());
      if (size && matchPattern(view.getByteShift(), m_ConstantInt(&shift)))
        origin.bytes = {shift.getSExtValue(), shift.getSExtValue() + *size};
      else
        shifted = true;
    } else if (origin.bytes || !staysInside(op)) {
      shifted = true;
    }
    memref = viewLike.getViewSource();
  }
}

/// The module's entry points: public functions with a body that nothing in
/// the module calls (the runtime never passes a model overlapping
/// buffers; a called function's arguments may be views of one caller
/// buffer). Found once, before any function changes.
using EntryPoints = llvm::SmallPtrSet<Operation *, 4>;

/// Whether `buffer` is a buffer of its own: a fresh allocation, or an
/// argument of an entry point's entry block.
bool isDistinctBuffer(Value buffer, const EntryPoints &entryPoints) {
  if (auto arg = dyn_cast<BlockArgument>(buffer))
    return arg.getOwner()->isEntryBlock() &&
           entryPoints.contains(arg.getOwner()->getParentOp());
  return isa_and_present<memref::AllocOp, memref::AllocaOp>(
      buffer.getDefiningOp());
}

/// A memory access of a loop body: the memref and, for scalar accesses,
/// the indices.
struct Access {
  Value memref;
  ValueRange indices;
  bool scalar;
};

std::optional<Access> accessOf(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return Access{load.getMemRef(), load.getIndices(), true};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return Access{store.getMemRef(), store.getIndices(), true};
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return Access{load.getBase(), load.getIndices(), false};
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return Access{store.getBase(), store.getIndices(), false};
  return std::nullopt;
}

/// Whether distinct indices of `type` are distinct elements: every stride
/// static and non-zero.
bool hasDistinctElements(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         llvm::all_of(strides, [](int64_t stride) {
           return ShapedType::isStatic(stride) && stride != 0;
         });
}

/// Whether two constant index lists differ somewhere.
bool differentConstants(ValueRange a, ValueRange b) {
  for (auto [x, y] : llvm::zip(a, b)) {
    APInt cx, cy;
    if (matchPattern(x, m_ConstantInt(&cx)) &&
        matchPattern(y, m_ConstantInt(&cy)) && cx != cy)
      return true;
  }
  return false;
}

/// Whether `other` may touch the element `element` (a scalar access).
bool mayTouch(const Access &element, const Access &other,
              const EntryPoints &entryPoints) {
  if (element.memref == other.memref)
    return !(other.scalar &&
             hasDistinctElements(
                 cast<MemRefType>(element.memref.getType())) &&
             differentConstants(element.indices, other.indices));
  Origin a = originOf(element.memref), b = originOf(other.memref);
  if (a.buffer != b.buffer)
    return !(isDistinctBuffer(a.buffer, entryPoints) &&
             isDistinctBuffer(b.buffer, entryPoints));
  if (a.bytes && b.bytes)
    return a.bytes->first < b.bytes->second &&
           b.bytes->first < a.bytes->second;
  return true;
}

/// Steps of a promoted loop unrolled together, so that their loads (now
/// independent of the accumulation) are in flight at once.
constexpr uint64_t kUnrollFactor = 8;

/// A read-modify-write element of one loop: its load and its store.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

/// The elements of `loop` that can be carried in registers, or none if
/// the loop has an access the pass cannot reason about.
SmallVector<Accumulator> findAccumulators(scf::ForOp loop,
                                          const EntryPoints &entryPoints) {
  // The element is read before the loop and written after it: only where
  // the loop certainly runs (a loop that does not may guard the element).
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->isZero())
    return {};
  SmallVector<Operation *> accesses;
  bool opaque = false;
  loop.getBody()->walk([&](Operation *op) {
    if (accessOf(op)) {
      accesses.push_back(op);
      return;
    }
    if (isMemoryEffectFree(op) || op->hasTrait<OpTrait::IsTerminator>() ||
        isa<scf::ForOp, scf::IfOp>(op))
      return;
    opaque = true;
  });
  if (opaque)
    return {};

  SmallVector<Accumulator> accumulators;
  Block *body = loop.getBody();
  for (Operation &op : *body) {
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load || !loop.isDefinedOutsideOfLoop(load.getMemRef()) ||
        !llvm::all_of(load.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        }))
      continue;
    // The one store back to the same element, later in the same block.
    memref::StoreOp store;
    Access element = *accessOf(load);
    bool clean = true;
    for (Operation *other : accesses) {
      if (other == load)
        continue;
      auto otherStore = dyn_cast<memref::StoreOp>(other);
      if (otherStore && otherStore->getBlock() == body && !store &&
          otherStore.getMemRef() == load.getMemRef() &&
          llvm::equal(otherStore.getIndices(), load.getIndices()) &&
          load->isBeforeInBlock(otherStore)) {
        store = otherStore;
        continue;
      }
      if (mayTouch(element, *accessOf(other), entryPoints))
        clean = false;
    }
    if (clean && store)
      accumulators.push_back({load, store});
  }
  return accumulators;
}

void promote(scf::ForOp loop, MutableArrayRef<Accumulator> accumulators) {
  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits;
  for (Accumulator &acc : accumulators)
    inits.push_back(memref::LoadOp::create(rewriter, acc.load.getLoc(),
                                           acc.load.getMemRef(),
                                           acc.load.getIndices()));
  SmallVector<Value> stored = llvm::map_to_vector(
      accumulators, [](Accumulator &acc) -> Value {
        return acc.store.getValueToStore();
      });
  FailureOr<LoopLikeOpInterface> grown = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return stored; });
  if (failed(grown))
    return;
  auto promoted = cast<scf::ForOp>(grown->getOperation());
  ArrayRef<BlockArgument> carried =
      promoted.getRegionIterArgs().take_back(accumulators.size());
  ValueRange results = promoted.getResults().take_back(accumulators.size());
  rewriter.setInsertionPointAfter(promoted);
  for (auto [acc, value, result] :
       llvm::zip_equal(accumulators, carried, results)) {
    memref::StoreOp::create(rewriter, acc.store.getLoc(), result,
                            acc.store.getMemRef(), acc.store.getIndices());
    rewriter.replaceAllUsesWith(acc.load.getResult(), value);
    rewriter.eraseOp(acc.load);
    rewriter.eraseOp(acc.store);
  }
  // The accumulation stays one chain in the original order (the same
  // result bit for bit); only the loads move ahead of it.
  // Innermost loops only: an outer loop's copies would copy its inner
  // loops too.
  std::optional<APInt> trips = promoted.getStaticTripCount();
  bool innermost = !promoted.getBody()
                        ->walk([](LoopLikeOpInterface) {
                          return WalkResult::interrupt();
                        })
                        .wasInterrupted();
  if (innermost && trips && trips->getSExtValue() >= int64_t(kUnrollFactor))
    (void)loopUnrollByFactor(promoted, kUnrollFactor);
}

struct PromoteLoopAccumulatorsPass
    : mte::impl::PromoteLoopAccumulatorsBase<PromoteLoopAccumulatorsPass> {
  void runOnOperation() override {
    // A module pass: which functions are entry points depends on the calls
    // in all of them (a function pass would read its siblings while other
    // threads rewrite them).
    ModuleOp module = getOperation();
    EntryPoints entryPoints;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() &&
          SymbolTable::symbolKnownUseEmpty(func, module))
        entryPoints.insert(func);
    // Inner loops first: a promoted inner loop leaves its element's load and
    // store around it, in the body of the loop outside.
    SmallVector<scf::ForOp> loops;
    module.walk<WalkOrder::PostOrder>(
        [&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      SmallVector<Accumulator> accumulators =
          findAccumulators(loop, entryPoints);
      if (!accumulators.empty())
        promote(loop, accumulators);
    }
  }
};

} // namespace
