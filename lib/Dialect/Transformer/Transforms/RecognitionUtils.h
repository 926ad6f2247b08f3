//===- RecognitionUtils.h - helpers of the recognition passes ---*- C++ -*-===//
//
// Internal to lib/Dialect/Transformer/Transforms: the small matchers the
// recognition passes share.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_RECOGNITIONUTILS_H
#define MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_RECOGNITIONUTILS_H

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/Matchers.h"

namespace mte::transformer::recognition {

/// The other operand of a commutative binary op whose one operand is `v`.
template <typename OpTy> mlir::Value otherOperand(OpTy op, mlir::Value v) {
  return op.getLhs() == v ? op.getRhs() : op.getLhs();
}

template <typename OpTy> OpTy singleUseProducer(mlir::Value v) {
  auto op = v.getDefiningOp<OpTy>();
  return op && op->hasOneUse() ? op : OpTy();
}

/// A constant scalar (any rank, one element) as a double.
inline std::optional<double> constantScalar(mlir::Value v) {
  mlir::DenseFPElementsAttr attr;
  if (!mlir::matchPattern(v, mlir::m_Constant(&attr)) ||
      attr.getNumElements() != 1)
    return std::nullopt;
  return (*attr.value_begin<llvm::APFloat>()).convertToDouble();
}

/// The first normalised axis of a keepdims mean over trailing axes.
inline std::optional<int64_t> trailingMeanAxis(ReduceOp reduce) {
  if (!reduce || reduce.getKind() != ReduceKind::Mean || !reduce.getKeepdims())
    return std::nullopt;
  int64_t rank = reduce.getInput().getType().getRank();
  llvm::SmallVector<int64_t> axes;
  for (int64_t a : reduce.getAxes())
    axes.push_back(*normalizeAxis(a, rank));
  llvm::sort(axes);
  if (axes.empty() || axes.back() != rank - 1 ||
      axes.back() - axes.front() + 1 != static_cast<int64_t>(axes.size()))
    return std::nullopt;
  return axes.front();
}

/// Matches the parameter `v` as a constant of the normalised shape.
inline bool isParameter(mlir::Value v, mlir::RankedTensorType input,
                        int64_t axis) {
  auto type = llvm::cast<mlir::RankedTensorType>(v.getType());
  llvm::ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  return mlir::matchPattern(v, mlir::m_Constant()) &&
         type.getElementType() == input.getElementType() &&
         type.getShape() == normalized;
}

/// `mean(square(v)) + eps`, the value under the root of both norms.
struct MeanOfSquares {
  ReduceOp mean;
  double epsilon;
  mlir::Operation *square; // pow(v, 2) or mul(v, v)
};

/// Matches `underRoot` as mean(square(v)) + eps with a positive constant
/// eps, every step used once.
inline std::optional<MeanOfSquares> matchMeanOfSquares(mlir::Value underRoot,
                                                       mlir::Value v) {
  auto addEps = singleUseProducer<AddOp>(underRoot);
  if (!addEps)
    return std::nullopt;
  for (mlir::Value operand : {addEps.getLhs(), addEps.getRhs()}) {
    auto mean = singleUseProducer<ReduceOp>(operand);
    std::optional<double> eps = constantScalar(otherOperand(addEps, operand));
    if (!mean || !eps || *eps <= 0)
      continue;
    mlir::Operation *square = mean.getInput().getDefiningOp();
    if (!square || !square->hasOneUse())
      return std::nullopt;
    if (auto pow = llvm::dyn_cast<PowOp>(square)) {
      if (pow.getLhs() != v || constantScalar(pow.getRhs()) != 2.0)
        return std::nullopt;
    } else if (auto mul = llvm::dyn_cast<MulOp>(square)) {
      if (mul.getLhs() != v || mul.getRhs() != v)
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    return MeanOfSquares{mean, *eps, square};
  }
  return std::nullopt;
}

/// Mixed-precision exports compute a norm in f32 between two Casts:
/// `cast(core(cast(x0 : T -> f32)) : f32 -> T) * gamma : T`. Given the
/// normalised value and the value the statistics are taken of, returns the
/// norm's input: `x0` when both Casts are there (the op then runs on T and
/// computes its statistics in f32 itself), else `x` when neither is.
struct CastWrapping {
  mlir::Value normalizedCore; // `normalized` without its output Cast
  CastOp outputCast;
};
inline CastWrapping peelOutputCast(mlir::Value normalized) {
  if (auto cast = singleUseProducer<CastOp>(normalized))
    if (llvm::isa<mlir::FloatType>(
            cast.getInput().getType().getElementType()) &&
        cast.getInput().getType().getElementType().isF32())
      return {cast.getInput(), cast};
  return {normalized, CastOp()};
}
inline mlir::Value normInput(mlir::Value x, CastOp outputCast) {
  auto inputCast = x.getDefiningOp<CastOp>();
  if (!outputCast)
    return x;
  if (!inputCast || inputCast.getInput().getType() != outputCast.getType())
    return nullptr;
  return inputCast.getInput();
}

/// `v` reshaped to `shape` (itself when it has that shape already).
inline mlir::Value reshapeTo(mlir::OpBuilder &builder, mlir::Location loc,
                             mlir::Value v, llvm::ArrayRef<int64_t> shape) {
  auto type = llvm::cast<mlir::RankedTensorType>(v.getType());
  if (type.getShape() == shape)
    return v;
  return ReshapeOp::create(
      builder, loc, mlir::RankedTensorType::get(shape, type.getElementType()),
      v);
}

/// The packed `[B, S, H * D]` value that the `[B, H, S, D]` value `x` was
/// split from, when `x` is transpose(reshape(packed), [0, 2, 1, 3]) (the
/// head split after every Q/K/V projection), or reshape(packed) when one
/// head or one token leaves the transpose moving no element (canonicalized
/// away, as in a multi-query key's [B, S, D] -> [B, 1, S, D]).
inline mlir::Value packedSource(mlir::Value x) {
  llvm::ArrayRef<int64_t> bhsd =
      llvm::cast<mlir::RankedTensorType>(x.getType()).getShape();
  if (bhsd.size() != 4)
    return nullptr;
  auto isPacked = [&](mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape() ==
           llvm::ArrayRef<int64_t>{bhsd[0], bhsd[2], bhsd[1] * bhsd[3]};
  };
  if (auto view = x.getDefiningOp<ReshapeOp>()) {
    if ((bhsd[1] == 1 || bhsd[2] == 1) && isPacked(view.getInput()))
      return view.getInput();
    return nullptr;
  }
  auto transpose = x.getDefiningOp<TransposeOp>();
  if (!transpose || !llvm::equal(transpose.getPermutation(),
                                 llvm::ArrayRef<int64_t>{0, 2, 1, 3}))
    return nullptr;
  auto reshape = transpose.getInput().getDefiningOp<ReshapeOp>();
  if (!reshape || !isPacked(reshape.getInput()))
    return nullptr;
  return reshape.getInput();
}

} // namespace mte::transformer::recognition

#endif // MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_RECOGNITIONUTILS_H
