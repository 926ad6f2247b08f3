//===- PropagateFP8Scales.cpp - hand fp8 scales to the GEMMs that use them ===//
//
// Moves each per-tensor dequantisation towards the GEMM that reads it, so
// the GEMM reads fp8 and applies the scales itself (cuBLASLt's A/B scale
// pointers), with no dequantize kernel in between; drops a quantize that
// undoes a dequantize; and stores fp8 GEMM weights K-major, the layout
// FP8 GEMMs take on sm_89 and sm_90.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/IR/WeightProvenance.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace mte::transformer {
#define GEN_PASS_DEF_PROPAGATEFP8SCALES
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {

RankedTensorType withElementType(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// Whether two scales are the same value: one SSA value, or equal constants.
bool sameScale(Value a, Value b) {
  if (a == b)
    return true;
  DenseElementsAttr x, y;
  return matchPattern(a, m_Constant(&x)) && matchPattern(b, m_Constant(&y)) &&
         x == y;
}

/// reshape/transpose/slice/split(dequantize(q, s)) ->
/// dequantize(reshape/transpose/slice/split(q), s): moving bytes commutes
/// with scaling each element, and the data moved is a quarter the size.
struct DequantizeAfterDataMovement : RewritePattern {
  DequantizeAfterDataMovement(MLIRContext *ctx, llvm::Statistic &count)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        numMoved(count) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<ReshapeOp, TransposeOp, SliceOp, SplitOp>(op))
      return failure();
    auto dequantize = op->getOperand(0).getDefiningOp<DequantizeOp>();
    if (!dequantize)
      return failure();
    Type fp8 = dequantize.getInput().getType().getElementType();
    Operation *moved = rewriter.clone(*op);
    moved->setOperand(0, dequantize.getInput());
    SmallVector<Value> results;
    for (OpResult result : moved->getResults()) {
      Type type = result.getType();
      result.setType(withElementType(type, fp8));
      results.push_back(DequantizeOp::create(rewriter, op->getLoc(), type,
                                             result, dequantize.getScale()));
    }
    rewriter.replaceOp(op, results);
    ++numMoved;
    return success();
  }

  llvm::Statistic &numMoved;
};

/// concat(dequantize(q_i, s)...) with one scale -> dequantize(concat(q_i), s).
struct DequantizeAfterConcat : OpRewritePattern<ConcatOp> {
  DequantizeAfterConcat(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numMoved(count) {}

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> codes;
    Value scale;
    Type fp8;
    for (Value input : op.getInputs()) {
      auto dequantize = input.getDefiningOp<DequantizeOp>();
      if (!dequantize || (scale && !sameScale(scale, dequantize.getScale())) ||
          (fp8 && fp8 != dequantize.getInput().getType().getElementType()))
        return failure();
      scale = dequantize.getScale();
      fp8 = dequantize.getInput().getType().getElementType();
      codes.push_back(dequantize.getInput());
    }
    auto concat =
        ConcatOp::create(rewriter, op.getLoc(), withElementType(op.getType(), fp8),
                         codes, op.getAxisAttr());
    rewriter.replaceOpWithNewOp<DequantizeOp>(op, op.getType(), concat, scale);
    ++numMoved;
    return success();
  }

  llvm::Statistic &numMoved;
};

/// linear(dequantize(qx, sx), dequantize(qw, sw)) -> linear(qx, qw) with
/// input_scale sx and weight_scale sw: the GEMM multiplies its f32 product
/// by both, so neither operand is dequantized into memory first.
struct DequantizedOperandsIntoLinear : OpRewritePattern<LinearOp> {
  DequantizedOperandsIntoLinear(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numFolded(count) {}

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    // An E4M3-writing linear (mte-fuse-linear-fp8-output) is final.
    if (op.hasFp8Output())
      return failure();
    auto input = op.getInput().getDefiningOp<DequantizeOp>();
    auto weight = op.getWeight().getDefiningOp<DequantizeOp>();
    if (!input || !weight || op.getInputScale() || op.getWeightScale())
      return failure();
    auto linear = LinearOp::create(
        rewriter, op.getLoc(), op.getType(), input.getInput(),
        weight.getInput(), op.getBias(), op.getResidual(), input.getScale(),
        weight.getScale(), op.getWeightLayoutAttr(), op.getActivationAttr());
    rewriter.replaceOp(op, linear);
    ++numFolded;
    return success();
  }

  llvm::Statistic &numFolded;
};

/// quantize(dequantize(q, s), s) -> q, for the same fp8 type and scale
/// (a Q/DQ pair's round trip, or a requantisation between two GEMMs).
struct QuantizeOfDequantize : OpRewritePattern<QuantizeOp> {
  QuantizeOfDequantize(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numFolded(count) {}

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto dequantize = op.getInput().getDefiningOp<DequantizeOp>();
    // A multiplying quantize's scale is the dequantisation's reciprocal.
    if (!dequantize || op.getMultiply() ||
        dequantize.getInput().getType() != op.getType() ||
        !sameScale(dequantize.getScale(), op.getScale()))
      return failure();
    rewriter.replaceOp(op, dequantize.getInput());
    ++numFolded;
    return success();
  }

  llvm::Statistic &numFolded;
};

/// The bytes of an [R, C] one-byte constant transposed to [C, R]; null when
/// its bytes are not at hand.
ElementsAttr transposeBytes(ElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  auto transposed =
      RankedTensorType::get({cols, rows}, type.getElementType());
  const char *in = nullptr;
  if (const void *data = resourceData(value))
    in = static_cast<const char *>(data);
  else if (auto dense = dyn_cast<DenseElementsAttr>(value);
           dense && !dense.isSplat())
    in = dense.getRawData().data();
  else if (dense && dense.isSplat())
    return dense.reshape(transposed);
  if (!in)
    return nullptr;
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      rows * cols, /*align=*/1, /*dataIsMutable=*/true);
  char *out = blob.getMutableData().data();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[c * rows + r] = in[r * cols + c];
  return DenseResourceElementsAttr::get(transposed, "fp8_weight_nk",
                                        std::move(blob));
}

/// An fp8 linear whose constant weight is [K, N] reads it as [N, K] instead:
/// FP8 GEMMs on sm_89 and sm_90 take both operands K-major.
struct Fp8WeightKMajor : OpRewritePattern<LinearOp> {
  Fp8WeightKMajor(MLIRContext *ctx, llvm::Statistic &count)
      : OpRewritePattern(ctx), numTransposed(count) {}

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    // An E4M3-writing linear (mte-fuse-linear-fp8-output) is final.
    if (op.hasFp8Output())
      return failure();
    ElementsAttr weight;
    Type element = op.getWeight().getType().getElementType();
    if (op.getWeightLayout() != WeightLayout::KN ||
        !isFp8Type(element) ||
        !matchPattern(op.getWeight(), m_Constant(&weight)))
      return failure();
    ElementsAttr transposed = transposeBytes(weight);
    if (!transposed)
      return rewriter.notifyMatchFailure(op, "weight bytes not at hand");
    Value nk = arith::ConstantOp::create(rewriter, op.getWeight().getLoc(),
                                         cast<TypedAttr>(transposed));
    rewriter.modifyOpInPlace(op, [&] {
      op.getWeightMutable().assign(nk);
      op.setWeightLayout(WeightLayout::NK);
    });
    ++numTransposed;
    return success();
  }

  llvm::Statistic &numTransposed;
};

struct PropagateFP8ScalesPass
    : mte::transformer::impl::PropagateFP8ScalesBase<PropagateFP8ScalesPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<DequantizeAfterDataMovement, DequantizeAfterConcat>(ctx,
                                                                     numMoved);
    patterns.add<DequantizedOperandsIntoLinear>(ctx, numLinear);
    patterns.add<QuantizeOfDequantize>(ctx, numRequantize);
    patterns.add<Fp8WeightKMajor>(ctx, numTransposed);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
