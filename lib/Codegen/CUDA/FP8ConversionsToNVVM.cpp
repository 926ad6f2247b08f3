//===- FP8ConversionsToNVVM.cpp - saturating E4M3 casts as cvt ------------===//
//
// In kernels for sm_90 and newer, a truncation to f8E4M3FN of a value
// clamped to [-448, 448] (the saturating conversion every quantize lowers
// to) becomes PTX's cvt.rn.satfinite.e4m3x2.f32 of the unclamped value,
// one instruction per pair of elements, instead of the clamp and
// mte-expand-fp8-conversions' integer code (some thirty instructions an
// element: the quantize kernel was compute-bound). The two agree on every
// f32: round to nearest even, +-448 beyond the range (infinities too), NaN
// stays NaN (check-gpu's fp8_saturation.exact compares them bit for bit).
//
//===----------------------------------------------------------------------===//

#include "mte/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte {
#define GEN_PASS_DEF_FP8CONVERSIONSTONVVM
#include "mte/Codegen/CUDA/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {

constexpr double kE4M3Max = 448.0;

/// Whether `v` is a constant (or splat) of `value`.
bool isConstant(Value v, double value) {
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return scalar.getValueAsDouble() == value;
  DenseElementsAttr splat;
  return matchPattern(v, m_Constant(&splat)) && splat.isSplat() &&
         splat.getSplatValue<APFloat>().convertToDouble() == value;
}

/// `x` when `v` is `maximumf(minimumf(x, 448), -448)` (either operand
/// order); null otherwise.
Value clampedFromE4M3(Value v) {
  auto lower = v.getDefiningOp<arith::MaximumFOp>();
  if (!lower)
    return nullptr;
  for (auto [inner, bound] : {std::pair(lower.getLhs(), lower.getRhs()),
                              std::pair(lower.getRhs(), lower.getLhs())}) {
    auto upper = inner.getDefiningOp<arith::MinimumFOp>();
    bool negative = isConstant(bound, -kE4M3Max);
    if (auto neg = bound.getDefiningOp<arith::NegFOp>())
      negative = isConstant(neg.getOperand(), kE4M3Max);
    if (!upper || !negative)
      continue;
    if (isConstant(upper.getRhs(), kE4M3Max))
      return upper.getLhs();
    if (isConstant(upper.getLhs(), kE4M3Max))
      return upper.getRhs();
  }
  return nullptr;
}

struct ClampedTruncToCvt : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    Value clamped = op.getIn();
    // satfinite does the clamp itself: beyond +-448, infinities included,
    // it gives +-448, and NaN stays NaN, as maximumf(minimumf(x, 448), -448)
    // does; so cvt reads x, and the clamp goes with its last use.
    Value in = clampedFromE4M3(clamped);
    if (!isa<Float8E4M3FNType>(element) ||
        !getElementTypeOrSelf(clamped.getType()).isF32() || !in ||
        !op->getParentOfType<gpu::LaunchOp>())
      return failure();
    Location loc = op.getLoc();
    auto vector = dyn_cast<VectorType>(in.getType());
    if (vector && (vector.getRank() != 1 || vector.isScalable()))
      return failure();
    int64_t n = vector ? vector.getNumElements() : 1;
    Type i8 = rewriter.getI8Type();
    auto pairType = VectorType::get({2}, i8);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0));
    auto lane = [&](int64_t i) -> Value {
      if (!vector)
        return i == 0 ? in : zero;
      if (i >= n)
        return zero;
      return vector::ExtractOp::create(rewriter, loc, in, i);
    };
    // cvt puts its first operand in the upper byte: element 2k + 1.
    SmallVector<Value> codes;
    for (int64_t i = 0; i < n; i += 2) {
      Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
          rewriter, loc, Type(pairType), lane(i + 1), lane(i),
          NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
          /*relu=*/false, element);
      codes.push_back(vector::ExtractOp::create(rewriter, loc, pair, 0));
      if (i + 1 < n)
        codes.push_back(vector::ExtractOp::create(rewriter, loc, pair, 1));
    }
    Value result;
    if (vector)
      result = vector::FromElementsOp::create(
          rewriter, loc, VectorType::get({n}, i8), codes);
    else
      result = codes.front();
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), result);
    return success();
  }
};

struct FP8ConversionsToNVVMPass
    : mte::impl::FP8ConversionsToNVVMBase<FP8ConversionsToNVVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ClampedTruncToCvt>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
