//===- TransformerFolds.cpp - folders and canonicalisations ---------------===//
//
// Two kinds of folding live here:
//  * structural identities (reshape of reshape, transpose of transpose,
//    identity casts/expands/slices), which apply to any tensor;
//  * constant evaluation of the arithmetic that ONNX exporters use to compute
//    shapes and scalars (Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
//    Range, ConstantOfShape, Where(Equal(...)), Cast/Sub/Div of sizes).
//    Only splats and tensors of at most kMaxFoldedElements are evaluated, so
//    folding never copies weights or materialises large masks.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mte::transformer;

namespace {
constexpr int64_t kMaxFoldedElements = 4096;

/// Returns `attr` as elements of kind `AttrT` (integer or float) when it is
/// a constant that folding may evaluate: a splat, or a small tensor.
/// Unsigned integers are left alone (APInt arithmetic here is signed).
template <typename AttrT> AttrT getFoldable(Attribute attr) {
  auto elements = dyn_cast_or_null<AttrT>(attr);
  if (!elements ||
      (!elements.isSplat() && elements.getNumElements() > kMaxFoldedElements))
    return {};
  if (elements.getElementType().isUnsignedInteger())
    return {};
  return elements;
}

DenseIntElementsAttr getFoldableInts(Attribute attr) {
  return getFoldable<DenseIntElementsAttr>(attr);
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

/// Evaluates `fn` elementwise over broadcast constants whose elements are all
/// `AttrT` (DenseIntElementsAttr with APInt, or DenseFPElementsAttr with
/// APFloat). `fn` returns std::nullopt to refuse (e.g. division by zero).
template <typename AttrT, typename ElementT, typename Fn>
Attribute foldElementwise(ArrayRef<Attribute> operands,
                          RankedTensorType resultType, Fn fn) {
  using ResultT =
      typename std::invoke_result_t<Fn, ArrayRef<ElementT>>::value_type;
  SmallVector<AttrT> inputs;
  for (Attribute operand : operands) {
    inputs.push_back(getFoldable<AttrT>(operand));
    if (!inputs.back())
      return {};
  }
  if (!resultType.hasStaticShape())
    return {};
  if (llvm::all_of(inputs, [](AttrT a) { return a.isSplat(); })) {
    SmallVector<ElementT> args;
    for (AttrT a : inputs)
      args.push_back(a.template getSplatValue<ElementT>());
    std::optional<ResultT> value = fn(args);
    if (!value)
      return {};
    return DenseElementsAttr::get(resultType, *value);
  }
  if (!canEvaluate(resultType))
    return {};
  SmallVector<SmallVector<ElementT>> values;
  for (AttrT a : inputs)
    values.emplace_back(a.template getValues<ElementT>());
  SmallVector<ResultT> results;
  SmallVector<ElementT> args;
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    args.clear();
    for (auto [j, a] : llvm::enumerate(inputs))
      args.push_back(values[j][broadcastSourceIndex(i, resultType.getShape(),
                                                    a.getType().getShape())]);
    std::optional<ResultT> value = fn(args);
    if (!value)
      return {};
    results.push_back(*value);
  }
  return DenseElementsAttr::get(resultType, results);
}

template <typename Fn>
Attribute foldIntegerElementwise(ArrayRef<Attribute> operands,
                                 RankedTensorType resultType, Fn fn) {
  return foldElementwise<DenseIntElementsAttr, APInt>(operands, resultType, fn);
}

/// Folds a binary op over integer (`intFn`) or float (`floatFn`) constants,
/// choosing by the operands' element type.
template <typename IntFn, typename FloatFn>
Attribute foldBinary(Attribute lhs, Attribute rhs, RankedTensorType resultType,
                     IntFn intFn, FloatFn floatFn) {
  if (isa_and_nonnull<DenseIntElementsAttr>(lhs))
    return foldElementwise<DenseIntElementsAttr, APInt>(
        {lhs, rhs}, resultType,
        [&](ArrayRef<APInt> a) -> decltype(intFn(a[0], a[1])) {
          return intFn(a[0], a[1]);
        });
  return foldElementwise<DenseFPElementsAttr, APFloat>(
      {lhs, rhs}, resultType,
      [&](ArrayRef<APFloat> a) -> decltype(floatFn(a[0], a[1])) {
        return floatFn(a[0], a[1]);
      });
}

/// Applies an APFloat in-place operation, rounding to nearest even.
template <typename Op>
std::optional<APFloat> applyFloat(APFloat a, const APFloat &b, Op op) {
  (a.*op)(b, APFloat::rmNearestTiesToEven);
  return a;
}

SmallVector<int64_t> toInt64s(DenseIntElementsAttr attr) {
  return llvm::map_to_vector(attr.getValues<APInt>(),
                             [](const APInt &v) { return v.getSExtValue(); });
}
} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a + b;
      },
      [](const APFloat &a, const APFloat &b) {
        return applyFloat(a, b, &APFloat::add);
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a - b;
      },
      [](const APFloat &a, const APFloat &b) {
        return applyFloat(a, b, &APFloat::subtract);
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a * b;
      },
      [](const APFloat &a, const APFloat &b) {
        return applyFloat(a, b, &APFloat::multiply);
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        return a.sdiv(b);
      },
      [](const APFloat &a, const APFloat &b) {
        return applyFloat(a, b, &APFloat::divide);
      });
}

/// Float powers only (TorchScript exports sqrt(head_dim) as Pow(d, 0.5)),
/// computed in double and rounded once to the element type.
OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (!isa_and_nonnull<DenseFPElementsAttr>(adaptor.getLhs()))
    return {};
  return foldElementwise<DenseFPElementsAttr, APFloat>(
      {adaptor.getLhs(), adaptor.getRhs()}, getType(),
      [](ArrayRef<APFloat> a) -> std::optional<APFloat> {
        APFloat result(
            std::pow(a[0].convertToDouble(), a[1].convertToDouble()));
        bool lostInfo;
        result.convert(a[0].getSemantics(), APFloat::rmNearestTiesToEven,
                       &lostInfo);
        return result;
      });
}

static bool evaluatePredicate(ComparePredicate predicate, int order) {
  switch (predicate) {
  case ComparePredicate::EQ:
    return order == 0;
  case ComparePredicate::NE:
    return order != 0;
  case ComparePredicate::LT:
    return order < 0;
  case ComparePredicate::LE:
    return order <= 0;
  case ComparePredicate::GT:
    return order > 0;
  case ComparePredicate::GE:
    return order >= 0;
  }
  llvm_unreachable("unknown predicate");
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  ComparePredicate predicate = getPredicate();
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [predicate](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return APInt(1, evaluatePredicate(predicate, a.slt(b) ? -1
                                                     : a == b ? 0
                                                              : 1));
      },
      [predicate](const APFloat &a, const APFloat &b) -> std::optional<APInt> {
        APFloat::cmpResult cmp = a.compare(b);
        // Every comparison with NaN is false, except "not equal".
        if (cmp == APFloat::cmpUnordered)
          return APInt(1, predicate == ComparePredicate::NE);
        return APInt(
            1, evaluatePredicate(predicate, cmp == APFloat::cmpLessThan ? -1
                                            : cmp == APFloat::cmpEqual  ? 0
                                                                        : 1));
      });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (isa_and_nonnull<DenseIntElementsAttr>(adaptor.getInput()))
    return foldIntegerElementwise(
        {adaptor.getInput()}, getType(),
        [](ArrayRef<APInt> a) -> std::optional<APInt> { return -a[0]; });
  return foldElementwise<DenseFPElementsAttr, APFloat>(
      {adaptor.getInput()}, getType(),
      [](ArrayRef<APFloat> a) -> std::optional<APFloat> { return -a[0]; });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  // A uniform condition selects one operand outright.
  if (auto cond =
          dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getCondition());
      cond && cond.isSplat()) {
    Value chosen =
        cond.getSplatValue<bool>() ? getTrueValue() : getFalseValue();
    if (chosen.getType() == getType())
      return chosen;
  }
  auto cond = getFoldable<DenseIntElementsAttr>(adaptor.getCondition());
  auto onTrue = dyn_cast_or_null<DenseElementsAttr>(adaptor.getTrueValue());
  auto onFalse = dyn_cast_or_null<DenseElementsAttr>(adaptor.getFalseValue());
  if (!cond || !onTrue || !onFalse || !canEvaluate(getType()))
    return {};
  SmallVector<bool> c(cond.getValues<bool>());
  SmallVector<Attribute> t(onTrue.getValues<Attribute>());
  SmallVector<Attribute> f(onFalse.getValues<Attribute>());
  SmallVector<Attribute> results;
  ArrayRef<int64_t> shape = getType().getShape();
  for (int64_t i = 0, e = getType().getNumElements(); i < e; ++i)
    results.push_back(
        c[broadcastSourceIndex(i, shape, cond.getType().getShape())]
            ? t[broadcastSourceIndex(i, shape, onTrue.getType().getShape())]
            : f[broadcastSourceIndex(i, shape, onFalse.getType().getShape())]);
  return DenseElementsAttr::get(getType(), results);
}

/// Whether every value of `narrow` converts to `wide` and back unchanged.
static bool holdsExactly(Type wide, Type narrow) {
  if (auto w = dyn_cast<FloatType>(wide))
    if (auto n = dyn_cast<FloatType>(narrow))
      return APFloat::isRepresentableBy(n.getFloatSemantics(),
                                        w.getFloatSemantics());
  return wide.isSignlessInteger() && narrow.isSignlessInteger() &&
         narrow.getIntOrFloatBitWidth() <= wide.getIntOrFloatBitWidth();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  Type to = getType().getElementType();
  Type from = getInput().getType().getElementType();
  // A round trip through a type that holds every value exactly, as
  // softmax(dtype=float32).to(float16) exports: f16 -> f32 -> f16 is x.
  if (auto inner = getInput().getDefiningOp<CastOp>();
      inner && inner.getInput().getType() == getType() &&
      holdsExactly(from, to))
    return inner.getInput();
  if (to.isUnsignedInteger() || from.isUnsignedInteger())
    return {};
  // ONNX casts bool as 0/1, other integers with sign extension, floats to
  // integers toward zero, and rounds float narrowing to nearest even.
  if (auto toInt = dyn_cast<IntegerType>(to)) {
    unsigned width = toInt.getWidth();
    if (isa<IntegerType>(from)) {
      bool isBool = from.isInteger(1);
      return foldIntegerElementwise(
          {adaptor.getInput()}, getType(),
          [&](ArrayRef<APInt> a) -> std::optional<APInt> {
            if (width == 1)
              return APInt(1, !a[0].isZero());
            return isBool ? a[0].zextOrTrunc(width) : a[0].sextOrTrunc(width);
          });
    }
    return foldElementwise<DenseFPElementsAttr, APFloat>(
        {adaptor.getInput()}, getType(),
        [&](ArrayRef<APFloat> a) -> std::optional<APInt> {
          if (width == 1)
            return APInt(1, !a[0].isZero());
          APSInt result(width, /*isUnsigned=*/false);
          bool exact;
          if (a[0].convertToInteger(result, APFloat::rmTowardZero, &exact) &
              APFloat::opInvalidOp)
            return std::nullopt; // NaN or out of range: left to run time
          return APInt(result);
        });
  }
  auto toFloat = dyn_cast<FloatType>(to);
  if (!toFloat || isFp8Type(to))
    return {};
  const llvm::fltSemantics &semantics = toFloat.getFloatSemantics();
  if (isa<IntegerType>(from)) {
    bool isBool = from.isInteger(1);
    return foldIntegerElementwise(
        {adaptor.getInput()}, getType(),
        [&](ArrayRef<APInt> a) -> std::optional<APFloat> {
          APFloat result(semantics);
          result.convertFromAPInt(a[0], /*IsSigned=*/!isBool,
                                  APFloat::rmNearestTiesToEven);
          return result;
        });
  }
  return foldElementwise<DenseFPElementsAttr, APFloat>(
      {adaptor.getInput()}, getType(),
      [&](ArrayRef<APFloat> a) -> std::optional<APFloat> {
        APFloat result = a[0];
        bool lost;
        result.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
        return result;
      });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getPermutation(),
                  llvm::seq<int64_t>(0, getPermutation().size())))
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

/// A transpose that keeps the order of the non-unit dimensions moves no data:
/// it is a reshape (and then folds into neighbouring reshapes).
struct TransposeOfUnitDimsToReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType inputType = op.getInput().getType();
    int64_t previous = -1;
    for (int64_t p : op.getPermutation()) {
      if (inputType.getDimSize(p) == 1)
        continue;
      if (p < previous)
        return failure();
      previous = p;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes, TransposeOfUnitDimsToReshape>(context);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  // A model parameter (a resource blob) reshaped is the same bytes under
  // another shape: the folded constant shares the blob. Unfolded, a weight
  // reshaped on its way to a linear (a patch embedding's [M, C, K..] kernel)
  // is not a constant to the passes that transform weights, and stayed out
  // of FP8 as `dynamic_weight`.
  if (auto resource =
          dyn_cast_or_null<DenseResourceElementsAttr>(adaptor.getInput()))
    return DenseResourceElementsAttr::get(getType(), resource.getRawHandle());
  // Reshaping another constant only reinterprets its buffer; limit it to
  // splats and shape-sized integer data so weights are never duplicated.
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
  return foldIntegerElementwise(
      {adaptor.getInput()}, getType(),
      [](ArrayRef<APInt> args) -> std::optional<APInt> { return args[0]; });
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  RankedTensorType inputType = getInput().getType();
  if (inputType == getType() &&
      llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
      llvm::all_of(getStrides(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
  if (dense && dense.isSplat() && getType().hasStaticShape())
    return DenseElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  DenseIntElementsAttr ints = getFoldableInts(adaptor.getInput());
  if (!ints || !canEvaluate(getType()))
    return {};
  SmallVector<APInt> values(ints.getValues<APInt>()), results;
  ArrayRef<int64_t> inShape = inputType.getShape(),
                    outShape = getType().getShape();
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

namespace {
/// The one axis `slice` cuts (stride 1, every other axis whole), if any.
std::optional<int64_t> singleCutAxis(SliceOp slice) {
  RankedTensorType in = slice.getInput().getType();
  if (!in.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> axis;
  for (int64_t d = 0, e = in.getRank(); d < e; ++d) {
    if (slice.getStrides()[d] != 1)
      return std::nullopt;
    if (slice.getOffsets()[d] == 0 && slice.getSizes()[d] == in.getDimSize(d))
      continue;
    if (axis)
      return std::nullopt;
    axis = d;
  }
  return axis;
}

/// slice(reshape(x : [P..., H * D] -> [P..., H, D]), heads [h0, h1)) ->
/// reshape(slice(x, features [h0 * D, h1 * D))). Falcon's and other
/// multi-query exports view one fused projection per head and slice the
/// query, key and value heads out of the view; on the flat projection the
/// slices are its column ranges, which later patterns make one split.
struct SliceOfHeadsView : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto view = op.getInput().getDefiningOp<ReshapeOp>();
    if (!view)
      return rewriter.notifyMatchFailure(op, "not a slice of a reshape");
    RankedTensorType flat = view.getInput().getType();
    RankedTensorType heads = view.getType();
    int64_t rank = heads.getRank();
    std::optional<int64_t> axis = singleCutAxis(op);
    if (!flat.hasStaticShape() || rank < 2 || flat.getRank() != rank - 1 ||
        axis != rank - 2 ||
        flat.getShape().drop_back() != heads.getShape().drop_back(2))
      return rewriter.notifyMatchFailure(op, "not a slice of heads");
    int64_t headDim = heads.getShape().back();
    SmallVector<int64_t> offsets(rank - 1, 0), sizes(flat.getShape()),
        strides(rank - 1, 1);
    offsets.back() = op.getOffsets()[*axis] * headDim;
    sizes.back() = op.getSizes()[*axis] * headDim;
    Value part = SliceOp::create(rewriter, op.getLoc(), view.getInput(),
                                 offsets, sizes, strides);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), part);
    return success();
  }
};
} // namespace

void SliceOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<SliceOfHeadsView>(context);
}

namespace {
/// split(split(x)#i) along the same axis, where the inner piece has no other
/// user -> one split of x. Horizontal fusion splits a merged projection
/// into its parts; a part that its model split again (the Q, K and V of a
/// fused projection merged with a sibling of the same input, such as a
/// parallel block's gate and up projections) becomes pieces of the one
/// split, which tensor parallelism regroups.
struct ComposeSplits : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    auto piece = dyn_cast<OpResult>(op.getInput());
    auto outer = piece ? dyn_cast<SplitOp>(piece.getOwner()) : SplitOp();
    if (!outer || !piece.hasOneUse())
      return rewriter.notifyMatchFailure(op, "not the only split of a piece");
    int64_t rank = op.getInput().getType().getRank();
    if (normalizeAxis(static_cast<int64_t>(op.getAxis()), rank) !=
        normalizeAxis(static_cast<int64_t>(outer.getAxis()), rank))
      return rewriter.notifyMatchFailure(op, "splits along another axis");
    unsigned index = piece.getResultNumber();
    SmallVector<int64_t> sizes(outer.getSizes().take_front(index));
    llvm::append_range(sizes, op.getSizes());
    llvm::append_range(sizes, outer.getSizes().drop_front(index + 1));
    SmallVector<Type> outerTypes(outer.getResultTypes());
    SmallVector<Type> types(ArrayRef<Type>(outerTypes).take_front(index));
    llvm::append_range(types, op.getResultTypes());
    llvm::append_range(types, ArrayRef<Type>(outerTypes).drop_front(index + 1));
    rewriter.setInsertionPoint(outer);
    auto merged = SplitOp::create(rewriter, op.getLoc(), types,
                                  outer.getInput(), outer.getAxis(), sizes);
    ValueRange results = merged.getResults();
    unsigned inner = op.getNumResults();
    rewriter.replaceOp(op, results.slice(index, inner));
    SmallVector<Value> outerResults(results.take_front(index));
    outerResults.push_back(nullptr); // the piece, whose only user is gone
    llvm::append_range(outerResults, results.drop_front(index + inner));
    for (auto [old, replacement] :
         llvm::zip_equal(outer.getResults(), outerResults))
      if (replacement)
        rewriter.replaceAllUsesWith(old, replacement);
    rewriter.eraseOp(outer);
    return success();
  }
};
} // namespace

void SplitOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<ComposeSplits>(context);
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
      int64_t chunk =
          cast<RankedTensorType>(input.getType()).getDimSize(axis) * inner;
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
  auto [first, last] =
      getDimRange(inputType.getRank(), static_cast<int64_t>(getStart()), end);
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

//===----------------------------------------------------------------------===//
// Fused ops
//===----------------------------------------------------------------------===//

namespace {
/// linear(reshape(x)) where the reshape keeps the feature dimension (GPT-2's
/// Conv1D flattens [B, S, K] to [B*S, K] around every GEMM) -> the linear on
/// x, reshaped after. The reshapes then cancel between consecutive GEMMs, so
/// activations and residual adds meet the linear they belong to.
struct LinearOfFlattenedInput : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    // Row and block scales have the input's leading shape: they stay.
    auto reshape = op.getInput().getDefiningOp<ReshapeOp>();
    if (!reshape || op.hasFp8Output() || !op.hasTensorScales())
      return failure();
    RankedTensorType source = reshape.getInput().getType();
    RankedTensorType output = op.getOutput().getType();
    if (source.getRank() < 1 || !source.hasStaticShape() ||
        !output.hasStaticShape() ||
        source.getShape().back() != reshape.getType().getShape().back())
      return failure();
    SmallVector<int64_t> shape(source.getShape().drop_back());
    shape.push_back(output.getShape().back());
    auto type = RankedTensorType::get(shape, output.getElementType());
    Location loc = op.getLoc();
    Value residual = op.getResidual();
    if (residual)
      residual = ReshapeOp::create(
          rewriter, loc,
          RankedTensorType::get(
              shape,
              cast<RankedTensorType>(residual.getType()).getElementType()),
          residual);
    auto linear = LinearOp::create(
        rewriter, loc, type, reshape.getInput(), op.getWeight(), op.getBias(),
        residual, op.getInputScale(), op.getWeightScale(),
        op.getWeightLayoutAttr(), op.getActivationAttr());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, output, linear.getOutput());
    return success();
  }
};
} // namespace

namespace {
/// Slices of a linear's output that tile its features exactly (Phi-3's
/// qkv_proj cut into query, key and value by slicing) -> one split, the form
/// horizontal fusion gives a fused projection, which tensor parallelism
/// regroups by rank.
struct LinearOutputSlicesToSplit : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getOutput().getType();
    int64_t last = type.getRank() - 1;
    SmallVector<SliceOp> slices;
    for (Operation *user : op->getUsers())
      if (auto slice = dyn_cast<SliceOp>(user);
          slice && singleCutAxis(slice) == last)
        slices.push_back(slice);
    if (slices.size() < 2)
      return rewriter.notifyMatchFailure(op, "fewer than two column slices");
    llvm::sort(slices, [&](SliceOp a, SliceOp b) {
      return a.getOffsets()[last] < b.getOffsets()[last];
    });
    SmallVector<int64_t> sizes;
    int64_t next = 0;
    for (SliceOp slice : slices) {
      if (slice.getOffsets()[last] != next)
        return rewriter.notifyMatchFailure(op, "slices do not tile columns");
      sizes.push_back(slice.getSizes()[last]);
      next += sizes.back();
    }
    if (next != type.getDimSize(last))
      return rewriter.notifyMatchFailure(op, "slices do not cover columns");
    rewriter.setInsertionPointAfter(op);
    SmallVector<Type> types = llvm::map_to_vector(
        slices, [](SliceOp slice) -> Type { return slice.getType(); });
    auto split = SplitOp::create(rewriter, op.getLoc(), types, op.getOutput(),
                                 last, sizes);
    for (auto [slice, piece] : llvm::zip_equal(slices, split.getResults()))
      rewriter.replaceOp(slice, piece);
    return success();
  }
};
} // namespace

void LinearOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<LinearOfFlattenedInput, LinearOutputSlicesToSplit>(context);
}
