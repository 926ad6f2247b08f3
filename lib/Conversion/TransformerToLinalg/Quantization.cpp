//===- Quantization.cpp - fp8 ops to linalg ---------------------------------===//
//
// The fp8 ops: quantize and dequantize with a per-tensor scale, and amax.
//
//===----------------------------------------------------------------------===//

#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"

#include <cmath>

using namespace mlir;
using namespace mte::lowering;
using namespace mte::transformer;

namespace {

struct AmaxPattern : OpRewritePattern<AmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getInput().getType();
    Value flat =
        reshapeTensor(rewriter, loc, op.getInput(), {type.getNumElements()});
    Value result = reduceTrailing(
        rewriter, loc, flat, 0, rewriter.getF32Type(), 0,
        combine<arith::MaximumFOp>, [](OpBuilder &b, Location l, Value x) {
          return math::AbsFOp::create(b, l, x).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// quantize: saturate(x / scale) in fp8; dequantize: f32(q) * scale.
struct QuantizePattern : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    Type in = op.getInput().getType().getElementType();
    Type out = op.getType().getElementType();
    bool saturate = op.getSaturate();
    Value result =
        elementwise(rewriter, op.getLoc(), op.getType(),
                    ValueRange{op.getInput(), op.getScale()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Type f32 = b.getF32Type();
                      Value x = arith::DivFOp::create(
                          b, l, convertScalar(b, l, a[0], in, f32), a[1]);
                      if (!saturate)
                        return arith::TruncFOp::create(b, l, out, x);
                      return convertScalar(b, l, x, f32, out);
                    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DequantizePattern : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    Type in = op.getInput().getType().getElementType();
    Type out = op.getType().getElementType();
    Value result =
        elementwise(rewriter, op.getLoc(), op.getType(),
                    ValueRange{op.getInput(), op.getScale()},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Type f32 = b.getF32Type();
                      Value x = arith::MulFOp::create(
                          b, l, convertScalar(b, l, a[0], in, f32), a[1]);
                      return convertScalar(b, l, x, f32, out);
                    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mte::populateTransformerQuantizationToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AmaxPattern, QuantizePattern, DequantizePattern>(
      patterns.getContext());
}
