//===- Elementwise.cpp - elementwise ops to linalg --------------------------===//
//
// Elementwise arithmetic, math, comparisons, casts and activations, each one
// linalg.generic with numpy broadcasting in its indexing maps (half types
// computed in f32), and the ops that are elementwise with positions: trilu
// and the rotary embedding.
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include <cmath>

using namespace mlir;
using namespace mte::lowering;
using namespace mte::transformer;

namespace {

/// The arith predicate of a float compare (NE is unordered, as ONNX's
/// Not(Equal) is true for NaN).
arith::CmpFPredicate floatPredicate(ComparePredicate p) {
  switch (p) {
  case ComparePredicate::EQ:
    return arith::CmpFPredicate::OEQ;
  case ComparePredicate::NE:
    return arith::CmpFPredicate::UNE;
  case ComparePredicate::LT:
    return arith::CmpFPredicate::OLT;
  case ComparePredicate::LE:
    return arith::CmpFPredicate::OLE;
  case ComparePredicate::GT:
    return arith::CmpFPredicate::OGT;
  case ComparePredicate::GE:
    return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("unknown compare predicate");
}

/// The arith predicate of an integer compare.
arith::CmpIPredicate intPredicate(ComparePredicate p, bool isUnsigned) {
  switch (p) {
  case ComparePredicate::EQ:
    return arith::CmpIPredicate::eq;
  case ComparePredicate::NE:
    return arith::CmpIPredicate::ne;
  case ComparePredicate::LT:
    return isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
  case ComparePredicate::LE:
    return isUnsigned ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
  case ComparePredicate::GT:
    return isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
  case ComparePredicate::GE:
    return isUnsigned ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
  }
  llvm_unreachable("unknown compare predicate");
}

/// Elementwise ops whose scalar body depends only on the element type.
template <typename OpTy> struct ElementwisePattern : OpRewritePattern<OpTy> {
  using ScalarFn = Value (*)(OpBuilder &, Location, ValueRange, Type, OpTy);
  ElementwisePattern(MLIRContext *ctx, ScalarFn fn)
      : OpRewritePattern<OpTy>(ctx), fn(fn) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type operandType =
        cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
    Value result = elementwise(
        rewriter, op.getLoc(), cast<RankedTensorType>(op.getType()),
        op->getOperands(), [&](OpBuilder &b, Location loc, ValueRange args) {
          return fn(b, loc, args, operandType, op);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
  ScalarFn fn;
};

template <typename OpTy>
void addElementwise(RewritePatternSet &patterns,
                    typename ElementwisePattern<OpTy>::ScalarFn fn) {
  patterns.add<ElementwisePattern<OpTy>>(patterns.getContext(), fn);
}

template <typename FloatOp, typename IntOp, typename UIntOp = IntOp>
Value binaryArith(OpBuilder &b, Location loc, ValueRange a, Type t) {
  if (isFloat(t))
    return FloatOp::create(b, loc, a[0], a[1]);
  if (isUnsigned(t))
    return UIntOp::create(b, loc, a[0], a[1]);
  return IntOp::create(b, loc, a[0], a[1]);
}

struct TriluPattern : OpRewritePattern<TriluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TriluOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    bool upper = op.getUpper();
    int64_t k = op.getK();
    Type t = type.getElementType();
    Value result = elementwise(
        rewriter, op.getLoc(), type, op.getInput(),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value row = linalg::IndexOp::create(b, l, rank - 2);
          Value col = linalg::IndexOp::create(b, l, rank - 1);
          Value diff = arith::SubIOp::create(b, l, col, row);
          Value kv = arith::ConstantIndexOp::create(b, l, k);
          Value keep = arith::CmpIOp::create(b, l,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             diff, kv);
          return arith::SelectOp::create(b, l, keep, a[0],
                                         constantOf(b, l, t, 0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `value`[..., offset : offset + size] along its last dimension.
Value sliceLast(OpBuilder &b, Location loc, Value value, int64_t offset,
                int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      strides(rank, b.getIndexAttr(1)), sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(d + 1 == rank ? size : type.getDimSize(d)));
  offsets.back() = b.getIndexAttr(offset);
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes, strides);
}

/// Rotate-half RoPE over whole heads of `x` ([B, H, S, D] or [B, S, H, D],
/// sequence at `seqDim`) as two elementwise ops on the halves, with no
/// index arithmetic: x1' = x1 * cos1 - x2 * sin1 into the first half of the
/// result, x2' = x2 * cos2 + x1 * sin2 into the second, the tables' columns
/// read as slices (the same for both halves when the tables are half
/// width). The host backend's (and the reference) lowering: the CUDA
/// pipeline gives these to its rotary row kernel first.
Value rotateHalves(OpBuilder &b, Location loc, Value x, int64_t seqDim,
                   Value cos, Value sin, bool fullWidth, Type computeType) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  Type t = xType.getElementType();
  int64_t half = xType.getDimSize(3) / 2;
  bool batched = cast<RankedTensorType>(cos.getType()).getRank() == 3;
  AffineExpr f = getAffineDimExpr(3, ctx), s = getAffineDimExpr(seqDim, ctx);
  SmallVector<AffineExpr> tableIndex = {s, f};
  if (batched)
    tableIndex.insert(tableIndex.begin(), getAffineDimExpr(0, ctx));
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap table = AffineMap::get(4, 0, tableIndex, ctx);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);

  Value x1 = sliceLast(b, loc, x, 0, half),
        x2 = sliceLast(b, loc, x, half, half);
  Value result = emptyTensor(b, loc, xType.getShape(), t);
  // (self, partner, cos, sin, sign of the partner's term) per half.
  for (int64_t second = 0; second < 2; ++second) {
    int64_t column = fullWidth && second ? half : 0;
    Value self = second ? x2 : x1, partner = second ? x1 : x2;
    Value init = sliceLast(b, loc, result, second * half, half);
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(),
        ValueRange{self, partner, sliceLast(b, loc, cos, column, half),
                   sliceLast(b, loc, sin, column, half)},
        init, {identity, identity, table, table, identity}, iterators,
        [&](OpBuilder &nb, Location l, ValueRange a) {
          auto in = [&](Value v) {
            return convertScalar(nb, l, v, t, computeType);
          };
          Value rotated = arith::MulFOp::create(nb, l, in(a[1]), in(a[3]));
          Value kept = arith::MulFOp::create(nb, l, in(a[0]), in(a[2]));
          Value v =
              second ? arith::AddFOp::create(nb, l, kept, rotated).getResult()
                     : arith::SubFOp::create(nb, l, kept, rotated).getResult();
          linalg::YieldOp::create(nb, l,
                                  convertScalar(nb, l, v, computeType, t));
        });
    auto resultType = cast<RankedTensorType>(result.getType());
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)),
        strides(4, b.getIndexAttr(1)), sizes;
    for (int64_t d = 0; d < 4; ++d)
      sizes.push_back(b.getIndexAttr(d == 3 ? half : resultType.getDimSize(d)));
    offsets.back() = b.getIndexAttr(second * half);
    result = tensor::InsertSliceOp::create(b, loc, generic.getResult(0), result,
                                           offsets, sizes, strides);
  }
  return result;
}

struct RotaryEmbeddingPattern : OpRewritePattern<RotaryEmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RotaryEmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getInput().getType();
    Type t = type.getElementType();
    Type c = computeType(t);
    // Work on [B, H, S, D] or [B, S, H, D]; seqDim says which.
    Value x = op.getInput();
    int64_t seqDim = 2;
    if (type.getRank() == 3) {
      int64_t heads = *op.getNumHeads();
      x = reshapeTensor(rewriter, loc, x,
                        {type.getDimSize(0), type.getDimSize(1), heads,
                         type.getDimSize(2) / heads});
      seqDim = 1;
    }
    auto xType = cast<RankedTensorType>(x.getType());
    int64_t headDim = xType.getDimSize(3);
    int64_t rotary = op.getRotaryDim().value_or(headDim);
    int64_t half = rotary / 2;
    bool interleaved = op.getInterleaved();
    Value cos = op.getCos(), sin = op.getSin();
    bool batched = op.getCos().getType().getRank() == 3;
    // Full-width tables hold a column per feature, half-width ones per pair.
    bool fullWidth = op.getCos().getType().getShape().back() == rotary;
    if (!interleaved && rotary == headDim) {
      Value result =
          rotateHalves(rewriter, loc, x, seqDim, cos, sin, fullWidth, c);
      rewriter.replaceOp(op,
                         reshapeTensor(rewriter, loc, result, type.getShape()));
      return success();
    }
    Value result = elementwise(
        rewriter, loc, xType, x,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value bi = linalg::IndexOp::create(b, l, 0);
          Value s = linalg::IndexOp::create(b, l, seqDim);
          Value f = linalg::IndexOp::create(b, l, 3);
          // Partner feature and table column of feature f.
          Value halfV = arith::ConstantIndexOp::create(b, l, half);
          Value rotaryV = arith::ConstantIndexOp::create(b, l, rotary);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          Value two = arith::ConstantIndexOp::create(b, l, 2);
          Value column, partner, first;
          if (interleaved) {
            column = arith::DivUIOp::create(b, l, f, two);
            Value odd = arith::RemUIOp::create(b, l, f, two);
            first =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, odd,
                                      arith::ConstantIndexOp::create(b, l, 0));
            partner = arith::SelectOp::create(
                b, l, first, arith::AddIOp::create(b, l, f, one),
                arith::SubIOp::create(b, l, f, one));
          } else {
            first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, f,
                                          halfV);
            column = arith::SelectOp::create(
                b, l, first, f, arith::SubIOp::create(b, l, f, halfV));
            partner = arith::SelectOp::create(
                b, l, first, arith::AddIOp::create(b, l, f, halfV),
                arith::SubIOp::create(b, l, f, halfV));
          }
          if (fullWidth)
            column = f;
          Value rotated = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                                f, rotaryV);
          // Features past rotary_dim pass through; clamp the reads there.
          Value safeColumn = arith::SelectOp::create(
              b, l, rotated, column, arith::ConstantIndexOp::create(b, l, 0));
          Value safePartner =
              arith::SelectOp::create(b, l, rotated, partner, f);
          SmallVector<Value> tableIndex = {s, safeColumn};
          if (batched)
            tableIndex.insert(tableIndex.begin(), bi);
          Value cv = convertScalar(
              b, l, tensor::ExtractOp::create(b, l, cos, tableIndex), t, c);
          Value sv = convertScalar(
              b, l, tensor::ExtractOp::create(b, l, sin, tableIndex), t, c);
          SmallVector<Value> partnerIndex = {
              bi, linalg::IndexOp::create(b, l, 1),
              linalg::IndexOp::create(b, l, 2), safePartner};
          Value self = convertScalar(b, l, a[0], t, c);
          Value other = convertScalar(
              b, l, tensor::ExtractOp::create(b, l, x, partnerIndex), t, c);
          // first: x1*cos - x2*sin; second: x2*cos + x1*sin.
          Value signedSin = arith::SelectOp::create(
              b, l, first, arith::NegFOp::create(b, l, sv), sv);
          Value v = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, self, cv),
              arith::MulFOp::create(b, l, other, signedSin));
          Value out = convertScalar(b, l, v, c, t);
          return arith::SelectOp::create(b, l, rotated, out, a[0]);
        });
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, loc, result, type.getShape()));
    return success();
  }
};

} // namespace

void mte::populateTransformerElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  using T = Type;
  // Binary arithmetic.
  addElementwise<AddOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, AddOp) {
        return binaryArith<arith::AddFOp, arith::AddIOp>(b, l, a, t);
      });
  addElementwise<SubOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, SubOp) {
        return binaryArith<arith::SubFOp, arith::SubIOp>(b, l, a, t);
      });
  addElementwise<MulOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, MulOp) {
        return binaryArith<arith::MulFOp, arith::MulIOp>(b, l, a, t);
      });
  addElementwise<DivOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, DivOp) {
        return binaryArith<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(b, l,
                                                                          a, t);
      });
  addElementwise<MinOp>(patterns, [](OpBuilder &b, Location l, ValueRange a,
                                     T t, MinOp) {
    return binaryArith<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(b, l,
                                                                          a, t);
  });
  addElementwise<MaxOp>(patterns, [](OpBuilder &b, Location l, ValueRange a,
                                     T t, MaxOp) {
    return binaryArith<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(b, l,
                                                                          a, t);
  });
  addElementwise<PowOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, PowOp) -> Value {
        if (isFloat(t))
          return viaComputeType(
              b, l, a, t, [](OpBuilder &nb, Location nl, ValueRange w) {
                return math::PowFOp::create(nb, nl, w[0], w[1]).getResult();
              });
        return math::IPowIOp::create(b, l, a[0], a[1]);
      });
  addElementwise<AndOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T, AndOp) -> Value {
        return arith::AndIOp::create(b, l, a[0], a[1]);
      });
  addElementwise<OrOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T, OrOp) -> Value {
        return arith::OrIOp::create(b, l, a[0], a[1]);
      });
  addElementwise<CompareOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, CompareOp op) -> Value {
        ComparePredicate p = op.getPredicate();
        if (isFloat(t))
          return arith::CmpFOp::create(b, l, floatPredicate(p), a[0], a[1]);
        return arith::CmpIOp::create(b, l, intPredicate(p, isUnsigned(t)),
                                     a[0], a[1]);
      });
  addElementwise<WhereOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T, WhereOp) -> Value {
        return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
      });

  // Unary math, computed in f32 for half types.
#define MTE_UNARY_MATH(OP, BODY)                                               \
  addElementwise<OP>(                                                          \
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, OP) {          \
        return viaComputeType(                                                 \
            b, l, a, t,                                                        \
            [](OpBuilder &nb, Location nl, ValueRange w) -> Value { BODY; });  \
      })
  MTE_UNARY_MATH(SqrtOp, return math::SqrtOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(RsqrtOp, return math::RsqrtOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(ExpOp, return math::ExpOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(LogOp, return math::LogOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(ErfOp, return math::ErfOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(TanhOp, return math::TanhOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(SinOp, return math::SinOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(CosOp, return math::CosOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(FloorOp, return math::FloorOp::create(nb, nl, w[0]));
  MTE_UNARY_MATH(SigmoidOp, return sigmoid(nb, nl, w[0]));
  MTE_UNARY_MATH(SiluOp, return arith::MulFOp::create(nb, nl, w[0],
                                                      sigmoid(nb, nl, w[0])));
  MTE_UNARY_MATH(ReciprocalOp,
                 return arith::DivFOp::create(
                     nb, nl, constantOf(nb, nl, w[0].getType(), 1), w[0]));
#undef MTE_UNARY_MATH
  addElementwise<GeluOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, GeluOp op) {
        GeluApproximation approx = op.getApproximate();
        return viaComputeType(b, l, a, t,
                              [&](OpBuilder &nb, Location nl, ValueRange w) {
                                return gelu(nb, nl, w[0], approx);
                              });
      });
  addElementwise<SwigluOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, SwigluOp) {
        return viaComputeType(
            b, l, a, t, [](OpBuilder &nb, Location nl, ValueRange w) -> Value {
              Value silu =
                  arith::MulFOp::create(nb, nl, w[0], sigmoid(nb, nl, w[0]));
              return arith::MulFOp::create(nb, nl, silu, w[1]);
            });
      });
  addElementwise<GegluOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, GegluOp op) {
        GeluApproximation approx = op.getApproximate();
        return viaComputeType(
            b, l, a, t, [&](OpBuilder &nb, Location nl, ValueRange w) -> Value {
              return arith::MulFOp::create(nb, nl, gelu(nb, nl, w[0], approx),
                                           w[1]);
            });
      });
  addElementwise<NegOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, NegOp) -> Value {
        if (isFloat(t))
          return arith::NegFOp::create(b, l, a[0]);
        return arith::SubIOp::create(b, l, constantOf(b, l, t, 0), a[0]);
      });
  addElementwise<AbsOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, AbsOp) -> Value {
        if (isFloat(t))
          return math::AbsFOp::create(b, l, a[0]);
        // max(x, -x), as math.absi defines it (the lowest value stays):
        // MLIR 22's math-to-libm marks math.absi illegal and has no libm
        // call for it, so a host model with an integer Abs (T5's relative
        // position buckets) did not compile.
        Value negated =
            arith::SubIOp::create(b, l, constantOf(b, l, t, 0), a[0]);
        return arith::MaxSIOp::create(b, l, a[0], negated);
      });
  addElementwise<SignOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, SignOp) -> Value {
        // x > 0 ? 1 : (x < 0 ? -1 : x): zeros and NaN pass through.
        Value zero = constantOf(b, l, t, 0);
        Value positive, negative;
        if (isFloat(t)) {
          positive = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                           a[0], zero);
          negative = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT,
                                           a[0], zero);
        } else {
          positive = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt,
                                           a[0], zero);
          negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                           a[0], zero);
        }
        Value inner = arith::SelectOp::create(
            b, l, negative, constantOf(b, l, t, -1), a[0]);
        return arith::SelectOp::create(b, l, positive, constantOf(b, l, t, 1),
                                       inner);
      });
  addElementwise<ModOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, ModOp op) -> Value {
        if (isFloat(t))
          return viaComputeType(
              b, l, a, t, [](OpBuilder &nb, Location nl, ValueRange w) {
                return arith::RemFOp::create(nb, nl, w[0], w[1]).getResult();
              });
        if (isUnsigned(t))
          return arith::RemUIOp::create(b, l, a[0], a[1]);
        Value rem = arith::RemSIOp::create(b, l, a[0], a[1]);
        if (op.getFmod())
          return rem;
        // Floored: a nonzero remainder whose sign differs from the
        // divisor's moves by one divisor.
        Value zero = constantOf(b, l, t, 0);
        Value nonzero =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, rem, zero);
        Value differ = arith::XOrIOp::create(
            b, l,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, rem, zero),
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[1], zero));
        Value adjust = arith::AndIOp::create(b, l, nonzero, differ);
        return arith::SelectOp::create(
            b, l, adjust, arith::AddIOp::create(b, l, rem, a[1]), rem);
      });
  addElementwise<ReluOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, ReluOp) -> Value {
        Value zero = constantOf(b, l, t, 0);
        if (isFloat(t))
          return arith::MaximumFOp::create(b, l, a[0], zero);
        return arith::MaxSIOp::create(b, l, a[0], zero);
      });
  addElementwise<NotOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T, NotOp) -> Value {
        return arith::XOrIOp::create(
            b, l, a[0], arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
      });
  addElementwise<IsNanOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T, IsNanOp) -> Value {
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, a[0],
                                     a[0]);
      });
  addElementwise<ClipOp>(
      patterns,
      [](OpBuilder &b, Location l, ValueRange a, T t, ClipOp op) -> Value {
        Value v = a[0];
        bool f = isFloat(t);
        if (std::optional<APFloat> lo = op.getMin()) {
          Value bound = constantOf(b, l, t, lo->convertToDouble());
          v = f ? arith::MaximumFOp::create(b, l, v, bound).getResult()
                : arith::MaxSIOp::create(b, l, v, bound).getResult();
        }
        if (std::optional<APFloat> hi = op.getMax()) {
          Value bound = constantOf(b, l, t, hi->convertToDouble());
          v = f ? arith::MinimumFOp::create(b, l, v, bound).getResult()
                : arith::MinSIOp::create(b, l, v, bound).getResult();
        }
        return v;
      });
  addElementwise<CastOp>(
      patterns, [](OpBuilder &b, Location l, ValueRange a, T t, CastOp op) {
        return convertScalar(b, l, a[0], t, op.getType().getElementType());
      });
  patterns.add<TriluPattern, RotaryEmbeddingPattern>(patterns.getContext());
}
