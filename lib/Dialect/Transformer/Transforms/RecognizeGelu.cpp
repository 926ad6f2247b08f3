//===- RecognizeGelu.cpp - erf and tanh GELU to gelu, gelu * up to geglu -===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "RecognitionUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mte::transformer {
#define GEN_PASS_DEF_RECOGNIZEGELU
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;
using namespace mte::transformer::recognition;

namespace {
/// Whether `v` is a scalar constant within a relative 1e-4 of `expected`
/// as the constant's own type holds it: a float16 model stores 0.044715 as
/// 0.044708 (1.6e-4 off), a bfloat16 one as 0.044678.
bool isConstant(Value v, double expected) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != 1)
    return false;
  APFloat rounded(expected);
  bool inexact;
  rounded.convert(cast<FloatType>(attr.getElementType()).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &inexact);
  double c = (*attr.value_begin<APFloat>()).convertToDouble();
  return std::abs(c - rounded.convertToDouble()) <= 1e-4 * std::abs(expected);
}

/// The leaves of a product tree: operands of single-use muls, recursively.
void collectFactors(Value v, SmallVectorImpl<Value> &factors) {
  if (auto mul = singleUseProducer<MulOp>(v)) {
    collectFactors(mul.getLhs(), factors);
    collectFactors(mul.getRhs(), factors);
    return;
  }
  factors.push_back(v);
}

/// erf's argument: x / sqrt(2) or x * (1 / sqrt(2)).
bool isErfArgument(Value arg, Value x) {
  if (auto div = singleUseProducer<DivOp>(arg))
    return div.getLhs() == x && isConstant(div.getRhs(), M_SQRT2);
  if (auto mul = singleUseProducer<MulOp>(arg))
    return (mul.getLhs() == x && isConstant(mul.getRhs(), M_SQRT1_2)) ||
           (mul.getRhs() == x && isConstant(mul.getLhs(), M_SQRT1_2));
  return false;
}

/// x^3 as pow(x, 3) or a product of three x.
bool isCube(Value v, Value x) {
  if (auto pow = singleUseProducer<PowOp>(v))
    return pow.getLhs() == x && isConstant(pow.getRhs(), 3.0);
  SmallVector<Value> factors;
  if (!singleUseProducer<MulOp>(v))
    return false;
  collectFactors(v, factors);
  return factors.size() == 3 &&
         llvm::all_of(factors, [&](Value f) { return f == x; });
}

/// tanh's argument: sqrt(2/pi) * (x + 0.044715 * x^3), in any order.
bool isTanhArgument(Value arg, Value x) {
  auto scaled = singleUseProducer<MulOp>(arg);
  if (!scaled)
    return false;
  for (Value poly : {scaled.getLhs(), scaled.getRhs()}) {
    if (!isConstant(otherOperand(scaled, poly), std::sqrt(2.0 / M_PI)))
      continue;
    auto sum = singleUseProducer<AddOp>(poly);
    if (!sum)
      return false;
    Value term = sum.getLhs() == x ? sum.getRhs() : sum.getLhs();
    if (otherOperand(sum, term) != x)
      return false;
    auto weighted = singleUseProducer<MulOp>(term);
    if (!weighted)
      return false;
    for (Value cube : {weighted.getLhs(), weighted.getRhs()})
      if (isConstant(otherOperand(weighted, cube), 0.044715) && isCube(cube, x))
        return true;
    return false;
  }
  return false;
}

struct GeluPattern : OpRewritePattern<MulOp> {
  GeluPattern(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx, /*benefit=*/2), numGelu(count) {}

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> factors;
    collectFactors(root.getLhs(), factors);
    collectFactors(root.getRhs(), factors);
    if (factors.size() != 3)
      return failure();
    // One factor is 0.5, one is 1 + inner, the remaining one is x.
    for (Value half : factors) {
      if (!isConstant(half, 0.5))
        continue;
      for (Value onePlus : factors) {
        auto add = singleUseProducer<AddOp>(onePlus);
        if (onePlus == half || !add)
          continue;
        auto rest = llvm::find_if(
            factors, [&](Value f) { return f != half && f != onePlus; });
        if (rest == factors.end() || rest->getType() != root.getType())
          continue;
        Value x = *rest;
        for (Value inner : {add.getLhs(), add.getRhs()}) {
          if (!isConstant(otherOperand(add, inner), 1.0))
            continue;
          std::optional<GeluApproximation> approximation;
          if (auto erf = singleUseProducer<ErfOp>(inner);
              erf && isErfArgument(erf.getInput(), x))
            approximation = GeluApproximation::None;
          else if (auto tanh = singleUseProducer<TanhOp>(inner);
                   tanh && isTanhArgument(tanh.getInput(), x))
            approximation = GeluApproximation::Tanh;
          if (!approximation)
            continue;
          rewriter.replaceOpWithNewOp<GeluOp>(
              root, x,
              GeluApproximationAttr::get(rewriter.getContext(),
                                         *approximation));
          ++numGelu;
          return success();
        }
      }
    }
    return failure();
  }

  llvm::Statistic &numGelu;
};

/// gelu(gate) * up, either order, into geglu. Runs after the GELUs are
/// formed (lower benefit), so the product of a GELU's own factors is not
/// taken for a gate.
struct GegluPattern : OpRewritePattern<MulOp> {
  GegluPattern(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx, /*benefit=*/1), numGeglu(count) {}
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (Value factor : {mul.getLhs(), mul.getRhs()}) {
      auto gelu = singleUseProducer<GeluOp>(factor);
      Value up = otherOperand(mul, factor);
      if (!gelu || up.getType() != mul.getType() ||
          gelu.getType() != mul.getType())
        continue;
      rewriter.replaceOpWithNewOp<GegluOp>(mul, gelu.getInput(), up,
                                           gelu.getApproximateAttr());
      ++numGeglu;
      return success();
    }
    return failure();
  }
  llvm::Statistic &numGeglu;
};

struct RecognizeGeluPass
    : mte::transformer::impl::RecognizeGeluBase<RecognizeGeluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<GeluPattern>(&getContext(), numGelu);
    patterns.add<GegluPattern>(&getContext(), numGeglu);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
