//===- FuseLinearFP8Output.cpp - FP8 GEMMs that write E4M3 ----------------===//
//
// A linear whose 16-bit output only an amax and a delayed-scaling cast read
// writes the cast's E4M3 codes and the amax itself: cuBLASLt's D scale and
// AMAX_D. Runs last among the transformer passes, after the parallel ones,
// so the collectives around the amax stay where they are.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mte::transformer {
#define GEN_PASS_DEF_FUSELINEARFP8OUTPUT
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {

/// Whether a cuBLASLt epilogue with an E4M3 D computes `linear`: fp8
/// operands with per-tensor scales, a 16-bit output (cuBLASLt's bias and C
/// type then), ReLU or tanh-GELU at most, and no activation before a
/// residual (cuBLASLt adds C before it, the linear after).
bool writesFp8InEpilogue(LinearOp linear) {
  if (linear.hasFp8Output() || !linear.hasTensorScales() ||
      !isa<Float8E4M3FNType>(linear.getInput().getType().getElementType()))
    return false;
  if (!isa<BFloat16Type, Float16Type>(
          linear.getOutput().getType().getElementType()))
    return false;
  Activation activation = linear.getActivation();
  if (activation != Activation::None && activation != Activation::Relu &&
      activation != Activation::GeluTanh)
    return false;
  return activation == Activation::None || !linear.getResidual();
}

/// Whether `value` is, or can be made, available before `point`: the pure
/// ops that compute it from values that are (delayed scaling's scale is a
/// slice of the state's scale vector, taken next to the cast) move up to
/// just before `point`, a few levels deep.
bool makeAvailableBefore(Value value, Operation *point,
                         DominanceInfo &dominance, unsigned depth = 4) {
  if (dominance.properlyDominates(value, point))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || def == point || depth == 0 ||
      def->getBlock() != point->getBlock() ||
      def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!makeAvailableBefore(operand, point, dominance, depth - 1))
      return false;
  def->moveBefore(point);
  return true;
}

struct FuseLinearFP8OutputPass
    : mte::transformer::impl::FuseLinearFP8OutputBase<FuseLinearFP8OutputPass> {
  void runOnOperation() override {
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp linear) {
      if (writesFp8InEpilogue(linear))
        linears.push_back(linear);
    });
    DominanceInfo dominance(getOperation());
    IRRewriter rewriter(&getContext());
    for (LinearOp linear : linears) {
      // The readers: one delayed-scaling cast and any amaxes of the value.
      QuantizeOp cast;
      SmallVector<AmaxOp> amaxes;
      bool fusible = true;
      for (Operation *user : linear.getOutput().getUsers()) {
        if (auto amax = dyn_cast<AmaxOp>(user)) {
          amaxes.push_back(amax);
          continue;
        }
        auto quantize = dyn_cast<QuantizeOp>(user);
        if (!quantize || cast || !quantize.getMultiply() ||
            !quantize.getSaturate() || quantize.isBlockScaled() ||
            !isa<Float8E4M3FNType>(quantize.getType().getElementType()) ||
            !makeAvailableBefore(quantize.getScale(), linear, dominance)) {
          fusible = false;
          break;
        }
        cast = quantize;
      }
      if (!fusible || !cast)
        continue;
      rewriter.setInsertionPoint(linear);
      Type amaxType = amaxes.empty() ? Type()
                                     : amaxes.front().getResult().getType();
      auto fused = LinearOp::create(
          rewriter, linear.getLoc(), cast.getType(), amaxType,
          linear.getInput(), linear.getWeight(), linear.getBias(),
          linear.getResidual(), linear.getInputScale(),
          linear.getWeightScale(), cast.getScale(),
          linear.getWeightLayoutAttr(), linear.getActivationAttr());
      fused->setDiscardableAttrs(linear->getDiscardableAttrDictionary());
      rewriter.replaceOp(cast, fused.getOutput());
      for (AmaxOp amax : amaxes)
        rewriter.replaceOp(amax, fused.getOutputAmax());
      rewriter.eraseOp(linear);
      ++numFused;
    }
  }
};

} // namespace
