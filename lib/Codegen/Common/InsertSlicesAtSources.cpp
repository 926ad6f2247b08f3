//===- InsertSlicesAtSources.cpp - slice insertions beside their values ---===//
//
// Empty-tensor elimination lets the producer of a value inserted into a
// slice write there in place, but only when the insertion's destination is
// defined before that producer. A concatenation's insertions all sit where
// the concatenation was, each into the previous one's result, so only the
// last producer qualifies. Moving each insertion up to its value fixes the
// order; folding a unit-dimension expand_shape into a rank-reducing
// insertion lets the elimination see the producer through it.
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/Common/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mte {
#define GEN_PASS_DEF_INSERTSLICESATSOURCES
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {

/// insert_slice(expand_shape(x)) whose expansion only adds unit dimensions
/// as a rank-reducing insert_slice of x (the insertion itself otherwise).
tensor::InsertSliceOp foldUnitExpansion(tensor::InsertSliceOp insert) {
  auto expand = insert.getSource().getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || !expand.getSrcType().hasStaticShape() ||
      !computeRankReductionMask(expand.getResultType().getShape(),
                                expand.getSrcType().getShape()))
    return insert;
  OpBuilder b(insert);
  auto folded = tensor::InsertSliceOp::create(
      b, insert.getLoc(), expand.getSrc(), insert.getDest(),
      insert.getMixedOffsets(), insert.getMixedSizes(),
      insert.getMixedStrides());
  insert.replaceAllUsesWith(folded.getResult());
  insert.erase();
  if (expand->use_empty())
    expand.erase();
  return folded;
}

/// The one static insertion into `value` in `block`, if there is exactly
/// one.
tensor::InsertSliceOp nextInsertion(Value value, Block *block) {
  tensor::InsertSliceOp next;
  for (Operation *user : value.getUsers()) {
    auto insert = dyn_cast<tensor::InsertSliceOp>(user);
    if (!insert || insert.getDest() != value)
      continue;
    if (next)
      return nullptr;
    next = insert;
  }
  // Static offsets, sizes and strides: source and destination are the only
  // operands, so the insertion may move to anywhere both are defined.
  if (!next || next->getBlock() != block || next->getNumOperands() != 2)
    return nullptr;
  return next;
}

struct InsertSlicesAtSourcesPass
    : mte::impl::InsertSlicesAtSourcesBase<InsertSlicesAtSourcesPass> {
  void runOnOperation() override {
    // Chains rooted at a static empty tensor: the empty first in its block,
    // each insertion right after the later of its value and the previous
    // insertion. Every op moves up only, so its uses stay dominated. (Only
    // these: folding the expansion of a value inserted into an argument
    // would let the elimination root the whole chain in a copy of it.)
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (empty->getNumOperands() == 0)
        empties.push_back(empty);
    });
    for (tensor::EmptyOp empty : empties) {
      Block *block = empty->getBlock();
      tensor::InsertSliceOp insert = nextInsertion(empty.getResult(), block);
      if (!insert)
        continue;
      // The chain's own empty: one CSE shared with other ops would make
      // the first slot's producer write into whatever buffer they share.
      if (!empty->hasOneUse()) {
        OpBuilder b(empty);
        empty = cast<tensor::EmptyOp>(b.clone(*empty));
        insert.getDestMutable().assign(empty.getResult());
      }
      empty->moveBefore(block, block->begin());
      Operation *previous = empty;
      for (; insert; insert = nextInsertion(insert.getResult(), block)) {
        insert = foldUnitExpansion(insert);
        Operation *after = previous;
        Operation *producer = insert.getSource().getDefiningOp();
        if (producer && producer->getBlock() == block &&
            after->isBeforeInBlock(producer))
          after = producer;
        insert->moveAfter(after);
        previous = insert;
      }
    }
  }
};

} // namespace
