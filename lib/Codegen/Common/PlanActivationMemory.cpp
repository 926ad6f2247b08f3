//===- PlanActivationMemory.cpp - one arena for the intermediates ---------===//

#include "mte/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace mte {
#define GEN_PASS_DEF_PLANACTIVATIONMEMORY
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

/// The module attribute holding every function's plan.
static constexpr llvm::StringLiteral kPlansAttr = "mte.activation_arena";

/// Every offset is a multiple of this: the alignment cuMemAlloc guarantees
/// the arena, and enough for the widest vector access of any kernel.
static constexpr int64_t kArenaAlignment = 256;

namespace {
/// An allocation the plan places, with its lifetime as positions in the
/// function's block: from the allocation to the last use.
struct PlannedBuffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  int64_t start, end;
  int64_t bytes;
  int64_t offset = 0;
};
} // namespace

/// The size of `type` in bytes, if its shape is static and its elements
/// (integers, floats, indices) have a fixed size.
static std::optional<int64_t> staticByteSize(MemRefType type,
                                             const DataLayout &layout) {
  Type element = type.getElementType();
  if (!type.hasStaticShape() ||
      !isa<IntegerType, FloatType, IndexType>(element))
    return std::nullopt;
  return type.getNumElements() *
         static_cast<int64_t>(layout.getTypeSize(element).getFixedValue());
}

/// The last op of `block` that uses `buffer` or a value computed from it
/// (views, casts, extracted pointers, results of ops taking it), other than
/// `dealloc`; `alloc` when there is none. Nothing when some use cannot be
/// bounded: one outside the block, or the buffer stored as a value.
static std::optional<Operation *>
findLastUse(memref::AllocOp alloc, memref::DeallocOp dealloc, Block &block) {
  Operation *last = alloc;
  SmallVector<Value> worklist = {alloc.getResult()};
  DenseSet<Operation *> visited;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == dealloc.getOperation())
        continue;
      if (auto store = dyn_cast<memref::StoreOp>(user))
        if (store.getValueToStore() == value)
          return std::nullopt;
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor)
        return std::nullopt;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
      if (visited.insert(user).second)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return last;
}

/// The allocations of `func` the plan can place, each with its lifetime.
static SmallVector<PlannedBuffer> collectBuffers(func::FuncOp func) {
  SmallVector<PlannedBuffer> buffers;
  if (!func.getBody().hasOneBlock())
    return buffers;
  Block &block = func.getBody().front();
  DataLayout layout = DataLayout::closest(func);
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = i;
  for (auto alloc : block.getOps<memref::AllocOp>()) {
    MemRefType type = alloc.getType();
    std::optional<int64_t> bytes = staticByteSize(type, layout);
    if (!bytes || *bytes == 0 || !type.getLayout().isIdentity() ||
        type.getMemorySpace() || !alloc.getSymbolOperands().empty() ||
        alloc.getAlignment().value_or(1) > kArenaAlignment)
      continue;
    // One deallocation in the block: the function owns the buffer, and no
    // one else frees it or sees it after the function returns.
    SmallVector<memref::DeallocOp> deallocs;
    for (Operation *user : alloc->getUsers())
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user))
        deallocs.push_back(dealloc);
    if (deallocs.size() != 1 || deallocs.front()->getBlock() != &block)
      continue;
    // Buffer deallocation frees everything at the end of the block; the
    // buffer's bytes are free after its last use.
    std::optional<Operation *> lastUse =
        findLastUse(alloc, deallocs.front(), block);
    if (!lastUse || deallocs.front()->isBeforeInBlock(*lastUse))
      continue;
    buffers.push_back(
        {alloc, deallocs.front(), position[alloc], position[*lastUse], *bytes});
  }
  return buffers;
}

/// Gives every buffer an offset, largest first: the smallest gap between
/// the placed buffers whose lifetimes overlap its own that holds it (best
/// fit), else the first aligned offset above them. Returns the peak.
static int64_t assignOffsets(MutableArrayRef<PlannedBuffer> buffers) {
  SmallVector<PlannedBuffer *> order =
      llvm::map_to_vector(buffers, [](PlannedBuffer &b) { return &b; });
  llvm::stable_sort(order, [](PlannedBuffer *a, PlannedBuffer *b) {
    return a->bytes > b->bytes;
  });
  SmallVector<PlannedBuffer *> placed;
  int64_t peak = 0;
  for (PlannedBuffer *buffer : order) {
    SmallVector<PlannedBuffer *> live;
    for (PlannedBuffer *other : placed)
      if (other->start <= buffer->end && buffer->start <= other->end)
        live.push_back(other);
    llvm::sort(live, [](PlannedBuffer *a, PlannedBuffer *b) {
      return a->offset < b->offset;
    });
    std::optional<int64_t> best;
    int64_t bestWaste = 0, top = 0;
    for (PlannedBuffer *other : live) {
      int64_t candidate = llvm::alignTo(top, kArenaAlignment);
      int64_t waste = other->offset - candidate - buffer->bytes;
      if (waste >= 0 && (!best || waste < bestWaste)) {
        best = candidate;
        bestWaste = waste;
      }
      top = std::max(top, other->offset + other->bytes);
    }
    buffer->offset = best ? *best : llvm::alignTo(top, kArenaAlignment);
    peak = std::max(peak, buffer->offset + buffer->bytes);
    placed.push_back(buffer);
  }
  return peak;
}

std::optional<mte::ActivationArena>
mte::getActivationArena(ModuleOp module, StringRef function) {
  auto plans = module->getAttrOfType<DictionaryAttr>(kPlansAttr);
  auto plan = plans ? plans.getAs<DictionaryAttr>(function) : nullptr;
  if (!plan)
    return std::nullopt;
  auto read = [&](StringRef name) {
    auto value = plan.getAs<IntegerAttr>(name);
    return value ? value.getInt() : 0;
  };
  return ActivationArena{read("buffers"), read("bytes"),
                         read("bytes_without_reuse")};
}

namespace {
struct PlanActivationMemoryPass
    : mte::impl::PlanActivationMemoryBase<PlanActivationMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder attrs(&getContext());
    NamedAttrList plans;
    if (auto existing = module->getAttrOfType<DictionaryAttr>(kPlansAttr))
      plans.append(existing.getValue());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      SmallVector<PlannedBuffer> buffers = collectBuffers(func);
      int64_t peak = assignOffsets(buffers);
      int64_t withoutReuse = 0;
      for (const PlannedBuffer &buffer : buffers)
        withoutReuse =
            llvm::alignTo(withoutReuse, kArenaAlignment) + buffer.bytes;
      plans.set(func.getSymNameAttr(),
                attrs.getDictionaryAttr({
                    attrs.getNamedAttr("buffers",
                                       attrs.getI64IntegerAttr(buffers.size())),
                    attrs.getNamedAttr("bytes", attrs.getI64IntegerAttr(peak)),
                    attrs.getNamedAttr("bytes_without_reuse",
                                       attrs.getI64IntegerAttr(withoutReuse)),
                }));
      if (buffers.empty())
        continue;

      unsigned index = func.getNumArguments();
      auto arenaType = MemRefType::get({peak}, attrs.getI8Type());
      if (failed(func.insertArgument(index, arenaType,
                                     attrs.getDictionaryAttr(attrs.getNamedAttr(
                                         "mte.arena", attrs.getUnitAttr())),
                                     func.getLoc())))
        return signalPassFailure();
      Value arena = func.getArgument(index);
      OpBuilder builder(&getContext());
      for (PlannedBuffer &buffer : buffers) {
        builder.setInsertionPoint(buffer.alloc);
        Location loc = buffer.alloc.getLoc();
        Value shift =
            arith::ConstantIndexOp::create(builder, loc, buffer.offset);
        Value view = memref::ViewOp::create(
            builder, loc, buffer.alloc.getType(), arena, shift, ValueRange());
        buffer.alloc.replaceAllUsesWith(view);
        buffer.dealloc.erase();
        buffer.alloc.erase();
      }
    }
    module->setAttr(kPlansAttr, plans.getDictionary(&getContext()));
  }
};
} // namespace
