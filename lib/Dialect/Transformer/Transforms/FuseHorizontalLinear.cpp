//===- FuseHorizontalLinear.cpp - sibling linears into one GEMM -----------===//
//
// Linears that read the same input (the Q, K and V projections of a block,
// Llama's gate and up projections) become one linear whose weight is theirs
// concatenated along N, followed by a split into the original results.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/IR/WeightProvenance.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "ConstantBytes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte::transformer {
#define GEN_PASS_DEF_FUSEHORIZONTALLINEAR
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {
/// Whether mte-fuse-bias-activation will put the only reader of `linear`,
/// an activation, into its epilogue.
bool feedsEpilogueActivation(LinearOp linear) {
  return linear->hasOneUse() &&
         isa<GeluOp, SiluOp, ReluOp>(*linear->getUsers().begin());
}

/// A plain GEMM over constant operands: nothing in its epilogue that would
/// differ between the parts of a merged linear.
bool isMergeable(LinearOp linear) {
  // Scaled fp8 operands would need one scale for the merged weight. A
  // linear whose activation goes into its epilogue stays alone: merged
  // (FC1 with Q, K and V in GPT-J's, Phi's or Falcon's parallel block),
  // the activation would be a separate pass over FC1's output, the widest
  // activation of the block, where merging saves one read of the input.
  return linear.getActivation() == Activation::None && !linear.getResidual() &&
         !linear.getInputScale() && !linear.getWeightScale() &&
         !feedsEpilogueActivation(linear) &&
         constantOperand(linear.getWeight()) &&
         (!linear.getBias() || constantOperand(linear.getBias()));
}

/// Linears that can share a GEMM differ in N and nothing else.
bool differOnlyInN(LinearOp a, LinearOp b) {
  RankedTensorType aOut = a.getOutput().getType();
  RankedTensorType bOut = b.getOutput().getType();
  return a->getBlock() == b->getBlock() &&
         a.getWeightLayout() == b.getWeightLayout() &&
         a.getWeight().getType().getElementType() ==
             b.getWeight().getType().getElementType() &&
         aOut.getElementType() == bOut.getElementType() &&
         aOut.getShape().drop_back() == bOut.getShape().drop_back() &&
         static_cast<bool>(a.getBias()) == static_cast<bool>(b.getBias());
}

struct MergeSiblingLinears : OpRewritePattern<LinearOp> {
  MergeSiblingLinears(MLIRContext *ctx, llvm::Statistic &groups,
                      llvm::Statistic &linears)
      : OpRewritePattern(ctx), numGroups(groups), numLinears(linears) {}

  LogicalResult matchAndRewrite(LinearOp root,
                                PatternRewriter &rewriter) const override {
    if (!isMergeable(root))
      return failure();
    Value input = root.getInput();
    SmallVector<LinearOp> group;
    for (Operation *user : input.getUsers())
      if (auto linear = dyn_cast<LinearOp>(user);
          linear && linear.getInput() == input && isMergeable(linear) &&
          differOnlyInN(root, linear))
        group.push_back(linear);
    // Block order fixes the order of the parts, whichever op is the root.
    llvm::sort(group,
               [](LinearOp a, LinearOp b) { return a->isBeforeInBlock(b); });
    group.erase(llvm::unique(group), group.end());
    if (group.size() < 2)
      return rewriter.notifyMatchFailure(root, "no sibling linear");

    bool kn = root.getWeightLayout() == WeightLayout::KN;
    SmallVector<ElementsAttr> weights, biases;
    SmallVector<int64_t> sizes;
    SmallVector<Type> resultTypes;
    SmallVector<Location> locs;
    for (LinearOp linear : group) {
      weights.push_back(constantOperand(linear.getWeight()));
      if (Value bias = linear.getBias())
        biases.push_back(constantOperand(bias));
      sizes.push_back(linear.getOutput().getType().getShape().back());
      resultTypes.push_back(linear.getOutput().getType());
      locs.push_back(linear.getLoc());
    }
    FailureOr<ElementsAttr> weight =
        concatConstants(weights, /*axis=*/kn ? 1 : 0, "fused_weight");
    if (failed(weight))
      return rewriter.notifyMatchFailure(root, "weight data is not loaded");
    FailureOr<ElementsAttr> bias;
    if (!biases.empty()) {
      bias = concatConstants(biases, /*axis=*/0, "fused_bias");
      if (failed(bias))
        return rewriter.notifyMatchFailure(root, "bias data is not loaded");
    }

    // The input and the new constants are defined before the first linear,
    // which precedes every use of the group's results.
    Location loc = rewriter.getFusedLoc(locs);
    rewriter.setInsertionPoint(group.front());
    Value fusedWeight =
        arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(*weight));
    Value fusedBias =
        biases.empty()
            ? Value()
            : arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(*bias));
    RankedTensorType outType = root.getOutput().getType();
    SmallVector<int64_t> shape(outType.getShape());
    shape.back() = llvm::sum_of(sizes);
    auto fused = LinearOp::create(
        rewriter, loc, RankedTensorType::get(shape, outType.getElementType()),
        input, fusedWeight, fusedBias, /*residual=*/nullptr,
        /*input_scale=*/nullptr, /*weight_scale=*/nullptr,
        root.getWeightLayout(), Activation::None);
    auto split = SplitOp::create(rewriter, loc, resultTypes, fused.getOutput(),
                                 /*axis=*/outType.getRank() - 1, sizes);
    for (auto [linear, part] : llvm::zip_equal(group, split.getResults()))
      rewriter.replaceOp(linear, part);
    ++numGroups;
    numLinears += group.size();
    return success();
  }

  llvm::Statistic &numGroups, &numLinears;
};

struct FuseHorizontalLinearPass
    : mte::transformer::impl::FuseHorizontalLinearBase<
          FuseHorizontalLinearPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MergeSiblingLinears>(&getContext(), numGroups, numLinears);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
