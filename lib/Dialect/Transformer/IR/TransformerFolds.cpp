//===- TransformerFolds.cpp - folders and canonicalisations ---------------===//
//
// Two kinds of folding live here:
//  * structural identities (reshape of reshape, transpose of transpose,
//    identity casts/expands/slices), which apply to any tensor;
//  * constant evaluation of the integer arithmetic that ONNX exporters use
//    to compute shapes (Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
//    Range, ConstantOfShape, Where(Equal(...))). Only integer tensors of at
//    most kMaxFoldedElements are evaluated, so folding never copies weights
//    or materialises large masks.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mte::transformer;

namespace {
constexpr int64_t kMaxFoldedElements = 4096;

/// Returns `attr` as an integer elements attribute when it is a constant that
/// folding may evaluate.
DenseIntElementsAttr getFoldableInts(Attribute attr) {
  auto ints = dyn_cast_or_null<DenseIntElementsAttr>(attr);
  if (!ints || (!ints.isSplat() && ints.getNumElements() > kMaxFoldedElements))
    return {};
  return ints;
}

bool canEvaluate(ShapedType resultType) {
  return resultType.hasStaticShape() &&
         resultType.getNumElements() <= kMaxFoldedElements;
}

/// Maps a linear index into a static result shape to the linear index of the
/// numpy-broadcast source element it reads.
int64_t broadcastSourceIndex(int64_t linear, ArrayRef<int64_t> resultShape,
                             ArrayRef<int64_t> sourceShape) {
  int64_t offset = resultShape.size() - sourceShape.size();
  int64_t source = 0, sourceStride = 1;
  for (int64_t d = resultShape.size() - 1; d >= 0; --d) {
    int64_t coord = linear % resultShape[d];
    linear /= resultShape[d];
    if (d < offset)
      continue;
    int64_t sourceDim = sourceShape[d - offset];
    source += (sourceDim == 1 ? 0 : coord) * sourceStride;
    sourceStride *= sourceDim;
  }
  return source;
}

/// Evaluates `fn` elementwise over broadcast integer constants. `fn` returns
/// std::nullopt to refuse (e.g. division by zero).
template <typename Fn>
Attribute foldIntegerElementwise(ArrayRef<Attribute> operands,
                                 RankedTensorType resultType, Fn fn) {
  SmallVector<DenseIntElementsAttr> ints;
  for (Attribute operand : operands) {
    ints.push_back(getFoldableInts(operand));
    if (!ints.back())
      return {};
  }
  if (llvm::all_of(ints, [](auto a) { return a.isSplat(); })) {
    SmallVector<APInt> args;
    for (DenseIntElementsAttr a : ints)
      args.push_back(a.getSplatValue<APInt>());
    std::optional<APInt> value = fn(args);
    if (!value || !resultType.hasStaticShape())
      return {};
    return DenseElementsAttr::get(resultType, *value);
  }
  if (!canEvaluate(resultType))
    return {};
  SmallVector<SmallVector<APInt>> values;
  for (DenseIntElementsAttr a : ints)
    values.emplace_back(a.getValues<APInt>());
  SmallVector<APInt> results;
  SmallVector<APInt> args(ints.size());
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    for (auto [j, a] : llvm::enumerate(ints))
      args[j] = values[j][broadcastSourceIndex(i, resultType.getShape(),
                                               a.getType().getShape())];
    std::optional<APInt> value = fn(args);
    if (!value)
      return {};
    results.push_back(*value);
  }
  return DenseElementsAttr::get(resultType, results);
}

template <typename Fn>
Attribute foldIntegerBinary(Attribute lhs, Attribute rhs,
                            RankedTensorType resultType, Fn fn) {
  return foldIntegerElementwise(
      {lhs, rhs}, resultType,
      [&](ArrayRef<APInt> args) -> std::optional<APInt> {
        return fn(args[0], args[1]);
      });
}

SmallVector<int64_t> toInt64s(DenseIntElementsAttr attr) {
  return llvm::map_to_vector(attr.getValues<APInt>(), [](const APInt &v) {
    return v.getSExtValue();
  });
}
} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldIntegerBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                           [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldIntegerBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                           [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldIntegerBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                           [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldIntegerBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        return a.sdiv(b);
      });
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  ComparePredicate predicate = getPredicate();
  return foldIntegerBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [predicate](const APInt &a, const APInt &b) {
        bool result = false;
        switch (predicate) {
        case ComparePredicate::EQ:
          result = a == b;
          break;
        case ComparePredicate::NE:
          result = a != b;
          break;
        case ComparePredicate::LT:
          result = a.slt(b);
          break;
        case ComparePredicate::LE:
          result = a.sle(b);
          break;
        case ComparePredicate::GT:
          result = a.sgt(b);
          break;
        case ComparePredicate::GE:
          result = a.sge(b);
          break;
        }
        return APInt(1, result);
      });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  // A uniform condition selects one operand outright.
  if (auto cond = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getCondition());
      cond && cond.isSplat()) {
    Value chosen = cond.getSplatValue<bool>() ? getTrueValue() : getFalseValue();
    if (chosen.getType() == getType())
      return chosen;
  }
  return foldIntegerElementwise(
      {adaptor.getCondition(), adaptor.getTrueValue(), adaptor.getFalseValue()},
      getType(), [](ArrayRef<APInt> args) -> std::optional<APInt> {
        return args[0].getBoolValue() ? args[1] : args[2];
      });
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto toInt = dyn_cast<IntegerType>(getType().getElementType());
  auto fromInt = dyn_cast<IntegerType>(getInput().getType().getElementType());
  if (!toInt || !fromInt)
    return {};
  // ONNX casts bool as 0/1 and other integers with sign extension.
  bool isBool = fromInt.getWidth() == 1;
  unsigned width = toInt.getWidth();
  return foldIntegerElementwise(
      {adaptor.getInput()}, getType(),
      [&](ArrayRef<APInt> args) -> std::optional<APInt> {
        if (width == 1)
          return APInt(1, !args[0].isZero());
        return isBool ? args[0].zextOrTrunc(width) : args[0].sextOrTrunc(width);
      });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getPermutation(), llvm::seq<int64_t>(0, getPermutation().size())))
    return getInput();
  return {};
}

namespace {
/// transpose(transpose(x, p1), p2) -> transpose(x, p1 ∘ p2).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<TransposeOp>();
    if (!producer)
      return failure();
    ArrayRef<int64_t> inner = producer.getPermutation();
    SmallVector<int64_t> composed = llvm::map_to_vector(
        op.getPermutation(), [&](int64_t p) { return inner[p]; });
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(),
                                             producer.getInput(), composed);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  // Reshaping a constant only reinterprets its buffer; limit it to splats
  // and shape-sized integer data so weights are never duplicated.
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (dense && (dense.isSplat() || getFoldableInts(dense)))
    return dense.reshape(getType());
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
      dense && dense.isSplat())
    return DenseElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  return foldIntegerElementwise({adaptor.getInput()}, getType(),
                                [](ArrayRef<APInt> args) { return args[0]; });
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  RankedTensorType inputType = getInput().getType();
  if (inputType == getType() && llvm::all_of(getOffsets(), [](int64_t o) {
        return o == 0;
      }) && llvm::all_of(getStrides(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (dense && dense.isSplat() && getType().hasStaticShape())
    return DenseElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  DenseIntElementsAttr ints = getFoldableInts(adaptor.getInput());
  if (!ints || !canEvaluate(getType()))
    return {};
  SmallVector<APInt> values(ints.getValues<APInt>()), results;
  ArrayRef<int64_t> inShape = inputType.getShape(), outShape = getType().getShape();
  for (int64_t i = 0, e = getType().getNumElements(); i < e; ++i) {
    int64_t rest = i, source = 0, stride = 1;
    for (int64_t d = outShape.size() - 1; d >= 0; --d) {
      int64_t coord = rest % outShape[d];
      rest /= outShape[d];
      source += (getOffsets()[d] + coord * getStrides()[d]) * stride;
      stride *= inShape[d];
    }
    results.push_back(values[source]);
  }
  return DenseElementsAttr::get(getType(), results);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  if (!canEvaluate(getType()))
    return {};
  SmallVector<SmallVector<APInt>> values;
  for (Attribute input : adaptor.getInputs()) {
    DenseIntElementsAttr ints = getFoldableInts(input);
    if (!ints)
      return {};
    // Splats expand to their full shape so every input can be indexed.
    values.emplace_back(ints.getValues<APInt>());
  }
  int64_t axis = *normalizeAxis(getAxis(), getType().getRank());
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  SmallVector<APInt> results;
  for (int64_t o = 0; o < outer; ++o) {
    for (auto [input, vals] : llvm::zip_equal(getInputs(), values)) {
      int64_t chunk = cast<RankedTensorType>(input.getType()).getDimSize(axis) *
                      inner;
      llvm::append_range(results, ArrayRef(vals).slice(o * chunk, chunk));
    }
  }
  return DenseElementsAttr::get(getType(), results);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseIntElementsAttr data = getFoldableInts(adaptor.getData());
  DenseIntElementsAttr indices = getFoldableInts(adaptor.getIndices());
  if (!data || !indices || !canEvaluate(getType()) ||
      !getData().getType().hasStaticShape())
    return {};
  ArrayRef<int64_t> shape = getData().getType().getShape();
  int64_t axis = *normalizeAxis(getAxis(), shape.size());
  int64_t outer = 1, inner = 1, dim = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  SmallVector<APInt> values(data.getValues<APInt>()), results;
  SmallVector<int64_t> idx = toInt64s(indices);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : idx) {
      if (index < -dim || index >= dim)
        return {};
      int64_t row = index < 0 ? index + dim : index;
      llvm::append_range(
          results, ArrayRef(values).slice((o * dim + row) * inner, inner));
    }
  }
  return DenseElementsAttr::get(getType(), results);
}

//===----------------------------------------------------------------------===//
// Shape-computing primitives
//===----------------------------------------------------------------------===//

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  RankedTensorType inputType = getInput().getType();
  std::optional<int64_t> end;
  if (getEnd())
    end = static_cast<int64_t>(*getEnd());
  auto [first, last] = getDimRange(inputType.getRank(),
                                   static_cast<int64_t>(getStart()), end);
  ArrayRef<int64_t> dims = inputType.getShape().slice(first, last - first);
  if (llvm::any_of(dims, ShapedType::isDynamic))
    return {};
  return DenseIntElementsAttr::get(getType(), dims);
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  if (!getInput().getType().hasStaticShape())
    return {};
  return DenseIntElementsAttr::get(getType(),
                                   {getInput().getType().getNumElements()});
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  auto start = dyn_cast_or_null<DenseElementsAttr>(adaptor.getStart());
  auto delta = dyn_cast_or_null<DenseElementsAttr>(adaptor.getDelta());
  if (!start || !delta || !adaptor.getLimit() || !canEvaluate(getType()))
    return {};
  int64_t n = getType().getDimSize(0);
  if (isa<FloatType>(getType().getElementType())) {
    APFloat first = *start.value_begin<APFloat>();
    APFloat step = *delta.value_begin<APFloat>();
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < n; ++i) {
      APFloat v = step;
      APFloat index(first.getSemantics(), i);
      v.multiply(index, APFloat::rmNearestTiesToEven);
      v.add(first, APFloat::rmNearestTiesToEven);
      values.push_back(v);
    }
    return DenseElementsAttr::get(getType(), values);
  }
  APInt first = *start.value_begin<APInt>();
  APInt step = *delta.value_begin<APInt>();
  SmallVector<APInt> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(first + step * i);
  return DenseElementsAttr::get(getType(), values);
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  if (!getType().hasStaticShape())
    return {};
  return DenseElementsAttr::get(getType(), ArrayRef<Attribute>(getValue()));
}
