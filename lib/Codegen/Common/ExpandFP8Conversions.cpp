//===- ExpandFP8Conversions.cpp - fp8 conversions as integer code ---------===//

#include "mte/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mte {
#define GEN_PASS_DEF_EXPANDFP8CONVERSIONS
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
/// The parameters of an fp8 encoding.
struct FP8Format {
  unsigned expBits, manBits;
  int bias;
  bool hasInfinity; // E5M2 follows IEEE; E4M3FN has only NaN (S.1111.111)
  uint32_t maxFiniteCode, overflowCode;
};

std::optional<FP8Format> getFormat(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return FP8Format{4, 3, 7, false, 0x7E, 0x7F};
  if (isa<Float8E5M2Type>(t))
    return FP8Format{5, 2, 15, true, 0x7B, 0x7C};
  return std::nullopt;
}

/// Builds the conversions' integer code on scalars or, for vectorized
/// kernels, on vectors of `shape` (null: scalars), lane by lane alike.
struct IntBuilder {
  OpBuilder &b;
  Location loc;
  VectorType shape;
  /// `scalar`, or a vector of it in `shape`.
  Type type(Type scalar) {
    return shape ? VectorType::get(shape.getShape(), scalar) : scalar;
  }
  Value constant(TypedAttr scalar) {
    if (!shape)
      return arith::ConstantOp::create(b, loc, scalar);
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(cast<ShapedType>(type(scalar.getType())),
                               cast<Attribute>(scalar)));
  }
  Value i32(int64_t v) { return constant(b.getI32IntegerAttr(v)); }
  Value f32(double v) { return constant(b.getF32FloatAttr(v)); }
  Value shr(Value v, int64_t n) {
    return arith::ShRUIOp::create(b, loc, v, i32(n));
  }
  Value shl(Value v, int64_t n) {
    return arith::ShLIOp::create(b, loc, v, i32(n));
  }
  Value band(Value v, int64_t m) {
    return arith::AndIOp::create(b, loc, v, i32(m));
  }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
};

/// f8 -> f32, exactly.
Value decode(OpBuilder &ob, Location loc, Value input, const FP8Format &f) {
  IntBuilder b{ob, loc, dyn_cast<VectorType>(input.getType())};
  Value byte = arith::BitcastOp::create(ob, loc, b.type(ob.getI8Type()), input);
  Value bits = arith::ExtUIOp::create(ob, loc, b.type(ob.getI32Type()), byte);
  Value sign = b.shl(b.shr(bits, 7), 31);
  Value exp = b.band(b.shr(bits, f.manBits), (1 << f.expBits) - 1);
  Value man = b.band(bits, (1 << f.manBits) - 1);
  // Normal numbers: rebias the exponent and widen the mantissa.
  Value normal = b.bor(sign, b.bor(b.shl(b.add(exp, b.i32(127 - f.bias)), 23),
                                   b.shl(man, 23 - f.manBits)));
  // Subnormals (and zero): man * 2^(1 - bias - manBits), signed.
  Value magnitude = arith::MulFOp::create(
      ob, loc, arith::UIToFPOp::create(ob, loc, b.type(ob.getF32Type()), man),
      b.f32(std::ldexp(1.0, 1 - f.bias - static_cast<int>(f.manBits))));
  Value subnormal = b.bor(
      sign, arith::BitcastOp::create(ob, loc, b.type(ob.getI32Type()), magnitude));
  Value isSubnormal = b.cmp(arith::CmpIPredicate::eq, exp, b.i32(0));
  Value result = b.select(isSubnormal, subnormal, normal);
  Value maxExp = b.i32((1 << f.expBits) - 1);
  Value expAllOnes = b.cmp(arith::CmpIPredicate::eq, exp, maxExp);
  if (f.hasInfinity) {
    // IEEE-style specials: the f32 exponent must be all ones too.
    Value special =
        b.bor(sign, b.bor(b.i32(0x7F800000), b.shl(man, 23 - f.manBits)));
    result = b.select(expAllOnes, special, result);
  } else {
    Value isNaN = arith::AndIOp::create(
        ob, loc, expAllOnes,
        b.cmp(arith::CmpIPredicate::eq, man, b.i32((1 << f.manBits) - 1)));
    result = b.select(isNaN, b.bor(sign, b.i32(0x7FC00000)), result);
  }
  return arith::BitcastOp::create(ob, loc, b.type(ob.getF32Type()), result);
}

/// f32 -> f8 with round-to-nearest-even.
Value encode(OpBuilder &ob, Location loc, Value input, const FP8Format &f,
             Type resultType) {
  IntBuilder b{ob, loc, dyn_cast<VectorType>(input.getType())};
  Value bits = arith::BitcastOp::create(ob, loc, b.type(ob.getI32Type()), input);
  Value sign = b.shl(b.shr(bits, 31), 7);
  Value abs = b.band(bits, 0x7FFFFFFF);
  // Normal range: round the mantissa to manBits, then rebias.
  int shift = 23 - f.manBits;
  Value lsb = b.band(b.shr(abs, shift), 1);
  Value rounded =
      b.shr(b.add(abs, b.add(b.i32((1 << (shift - 1)) - 1), lsb)), shift);
  Value normal = b.sub(rounded, b.i32((127 - f.bias) << f.manBits));
  // Below the smallest normal: a multiple of the subnormal step, rounded to
  // nearest even (a result of 2^manBits is the smallest normal's encoding).
  Value absFloat =
      arith::BitcastOp::create(ob, loc, b.type(ob.getF32Type()), abs);
  Value steps = math::RoundEvenOp::create(
      ob, loc,
      arith::MulFOp::create(
          ob, loc, absFloat,
          b.f32(std::ldexp(1.0, f.bias - 1 + static_cast<int>(f.manBits)))));
  Value subnormal =
      arith::FPToUIOp::create(ob, loc, b.type(ob.getI32Type()), steps);
  Value smallestNormal = b.i32((127 + 1 - f.bias) << 23);
  Value code = b.select(b.cmp(arith::CmpIPredicate::ult, abs, smallestNormal),
                        subnormal, normal);
  // Overflow (including infinity) and NaN.
  code =
      b.select(b.cmp(arith::CmpIPredicate::ugt, code, b.i32(f.maxFiniteCode)),
               b.i32(f.overflowCode), code);
  Value isNaN = b.cmp(arith::CmpIPredicate::ugt, abs, b.i32(0x7F800000));
  code = b.select(isNaN, b.i32(0x7F), code);
  Value byte = arith::TruncIOp::create(ob, loc, b.type(ob.getI8Type()),
                                       b.bor(sign, code));
  return arith::BitcastOp::create(ob, loc, resultType, byte);
}

struct ExpandExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<FP8Format> format =
        getFormat(getElementTypeOrSelf(op.getIn().getType()));
    if (!format)
      return failure();
    Value wide = decode(rewriter, op.getLoc(), op.getIn(), *format);
    Type out = op.getType();
    if (!getElementTypeOrSelf(out).isF32())
      wide = getElementTypeOrSelf(out).getIntOrFloatBitWidth() > 32
                 ? arith::ExtFOp::create(rewriter, op.getLoc(), out, wide)
                       .getResult()
                 : arith::TruncFOp::create(rewriter, op.getLoc(), out, wide)
                       .getResult();
    rewriter.replaceOp(op, wide);
    return success();
  }
};

struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<FP8Format> format =
        getFormat(getElementTypeOrSelf(op.getType()));
    if (!format)
      return failure();
    Value in = op.getIn();
    Type inType = getElementTypeOrSelf(in.getType());
    Type f32 = rewriter.getF32Type();
    if (auto vector = dyn_cast<VectorType>(in.getType()))
      f32 = VectorType::get(vector.getShape(), f32);
    if (inType.getIntOrFloatBitWidth() < 32)
      in = arith::ExtFOp::create(rewriter, op.getLoc(), f32, in);
    else if (!inType.isF32())
      in = arith::TruncFOp::create(rewriter, op.getLoc(), f32, in);
    rewriter.replaceOp(
        op, encode(rewriter, op.getLoc(), in, *format, op.getType()));
    return success();
  }
};

struct ExpandFP8ConversionsPass
    : mte::impl::ExpandFP8ConversionsBase<ExpandFP8ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandExtF, ExpandTruncF>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
