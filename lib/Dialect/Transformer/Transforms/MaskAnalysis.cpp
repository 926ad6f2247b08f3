//===- MaskAnalysis.cpp - classify attention masks ------------------------===//

#include "MaskAnalysis.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cmath>
#include <limits>
#include <memory>

using namespace mlir;
using namespace mte::transformer;

namespace {
/// A row-major tensor of values; integers and booleans are stored exactly
/// (masks only ever hold small integers, 0/1 and float sentinels).
struct Tensor {
  SmallVector<int64_t> shape;
  std::vector<double> data;
};

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The tensor of `shape` whose element at coordinates c reads `in` at the
/// offset sum_d `sourceOffset(d, c[d])` (transposes and strided slices).
Tensor gather(const Tensor &in, ArrayRef<int64_t> shape,
              llvm::function_ref<int64_t(size_t, int64_t)> sourceOffset) {
  Tensor out{SmallVector<int64_t>(shape), {}};
  int64_t n = numElements(shape);
  out.data.resize(n);
  SmallVector<int64_t> outStrides = stridesOf(shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t source = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      source += sourceOffset(d, i / outStrides[d] % shape[d]);
    out.data[i] = in.data[source];
  }
  return out;
}

/// Evaluates input-independent values on demand, memoised per value.
class Evaluator {
public:
  const Tensor *evaluate(Value v) {
    if (auto it = cache.find(v); it != cache.end())
      return it->second.get();
    std::optional<Tensor> result = compute(v);
    // Heap cells keep earlier results in place while the map grows.
    std::unique_ptr<Tensor> &slot = cache[v];
    if (result)
      slot = std::make_unique<Tensor>(std::move(*result));
    return slot.get();
  }

private:
  std::optional<Tensor> compute(Value v);
  std::optional<Tensor> constant(Attribute attr, RankedTensorType type);
  std::optional<Tensor> broadcastTo(const Tensor &t, ArrayRef<int64_t> shape);
  template <typename Fn>
  std::optional<Tensor> elementwise(ValueRange operands, RankedTensorType type,
                                    Fn fn);

  llvm::DenseMap<Value, std::unique_ptr<Tensor>> cache;
};

/// Rounds `x` the way a value of element type `type` holds it.
double roundTo(double x, Type type) {
  if (type.isInteger(1))
    return x != 0 ? 1 : 0;
  if (isa<IntegerType, IndexType>(type))
    return std::trunc(x);
  if (type.isF32())
    return static_cast<float>(x);
  return x;
}

std::optional<Tensor> Evaluator::constant(Attribute attr,
                                          RankedTensorType type) {
  auto elements = dyn_cast<DenseElementsAttr>(attr);
  if (!elements || !type.hasStaticShape() ||
      type.getNumElements() > kMaxMaskElements)
    return std::nullopt;
  Tensor t{SmallVector<int64_t>(type.getShape()), {}};
  t.data.reserve(type.getNumElements());
  Type elt = type.getElementType();
  if (isa<FloatType>(elt)) {
    if (elements.isSplat()) {
      t.data.assign(type.getNumElements(),
                    elements.getSplatValue<APFloat>().convertToDouble());
      return t;
    }
    for (const APFloat &f : elements.getValues<APFloat>())
      t.data.push_back(f.convertToDouble());
    return t;
  }
  if (auto intType = dyn_cast<IntegerType>(elt)) {
    bool isBool = intType.getWidth() == 1;
    auto toDouble = [&](const APInt &i) {
      return isBool || intType.isUnsigned()
                 ? static_cast<double>(i.getZExtValue())
                 : static_cast<double>(i.getSExtValue());
    };
    if (elements.isSplat()) {
      t.data.assign(type.getNumElements(),
                    toDouble(elements.getSplatValue<APInt>()));
      return t;
    }
    for (const APInt &i : elements.getValues<APInt>())
      t.data.push_back(toDouble(i));
    return t;
  }
  return std::nullopt;
}

std::optional<Tensor> Evaluator::broadcastTo(const Tensor &t,
                                             ArrayRef<int64_t> shape) {
  if (t.shape.size() > shape.size())
    return std::nullopt;
  int64_t offset = shape.size() - t.shape.size();
  SmallVector<int64_t> sourceStrides = stridesOf(t.shape);
  // Stride 0 along broadcast dimensions.
  SmallVector<int64_t> strides(shape.size(), 0);
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] != 1 && t.shape[d] != shape[offset + d])
      return std::nullopt;
    strides[offset + d] = t.shape[d] == 1 ? 0 : sourceStrides[d];
  }
  Tensor out{SmallVector<int64_t>(shape), {}};
  int64_t n = numElements(shape);
  out.data.resize(n);
  SmallVector<int64_t> index(shape.size(), 0);
  int64_t source = 0;
  for (int64_t i = 0; i < n; ++i) {
    out.data[i] = t.data[source];
    // Odometer increment, keeping the source offset in step.
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        source += strides[d];
        break;
      }
      source -= strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

template <typename Fn>
std::optional<Tensor> Evaluator::elementwise(ValueRange operands,
                                             RankedTensorType type, Fn fn) {
  SmallVector<Tensor> inputs;
  for (Value operand : operands) {
    const Tensor *t = evaluate(operand);
    if (!t)
      return std::nullopt;
    std::optional<Tensor> b = broadcastTo(*t, type.getShape());
    if (!b)
      return std::nullopt;
    inputs.push_back(std::move(*b));
  }
  Tensor out{SmallVector<int64_t>(type.getShape()), {}};
  int64_t n = numElements(out.shape);
  out.data.resize(n);
  SmallVector<double> args(inputs.size());
  Type elt = type.getElementType();
  for (int64_t i = 0; i < n; ++i) {
    for (auto [j, in] : llvm::enumerate(inputs))
      args[j] = in.data[i];
    out.data[i] = roundTo(fn(ArrayRef<double>(args)), elt);
  }
  return out;
}

bool comparePredicate(ComparePredicate p, double a, double b) {
  switch (p) {
  case ComparePredicate::EQ:
    return a == b;
  case ComparePredicate::NE:
    return a != b;
  case ComparePredicate::LT:
    return a < b;
  case ComparePredicate::LE:
    return a <= b;
  case ComparePredicate::GT:
    return a > b;
  case ComparePredicate::GE:
    return a >= b;
  }
  return false;
}

std::optional<Tensor> Evaluator::compute(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxMaskElements)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt; // a function argument: input-dependent
  bool isInt = isa<IntegerType>(type.getElementType());

  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return constant(c.getValue(), type);
  if (auto c = dyn_cast<ConstantOfShapeOp>(op)) {
    auto value = dyn_cast<DenseElementsAttr>(c.getValue());
    if (!value || value.getNumElements() != 1)
      return std::nullopt;
    std::optional<Tensor> one =
        constant(value, cast<RankedTensorType>(value.getType()));
    if (!one)
      return std::nullopt;
    return Tensor{SmallVector<int64_t>(type.getShape()),
                  std::vector<double>(type.getNumElements(), one->data[0])};
  }
  if (isa<ReshapeOp, CastOp>(op)) {
    const Tensor *in = evaluate(op->getOperand(0));
    if (!in)
      return std::nullopt;
    Tensor out{SmallVector<int64_t>(type.getShape()), in->data};
    for (double &x : out.data)
      x = roundTo(x, type.getElementType());
    return out;
  }
  if (auto expand = dyn_cast<ExpandOp>(op)) {
    const Tensor *in = evaluate(expand.getInput());
    return in ? broadcastTo(*in, type.getShape()) : std::nullopt;
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    const Tensor *in = evaluate(transpose.getInput());
    if (!in)
      return std::nullopt;
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<int64_t> inStrides = stridesOf(in->shape);
    return gather(*in, type.getShape(), [&](size_t d, int64_t coord) {
      return coord * inStrides[perm[d]];
    });
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    const Tensor *in = evaluate(slice.getInput());
    if (!in ||
        llvm::any_of(slice.getStrides(), [](int64_t s) { return s < 1; }))
      return std::nullopt;
    SmallVector<int64_t> inStrides = stridesOf(in->shape);
    return gather(*in, type.getShape(), [&](size_t d, int64_t coord) {
      return (slice.getOffsets()[d] + coord * slice.getStrides()[d]) *
             inStrides[d];
    });
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t rank = type.getRank();
    int64_t axis = *normalizeAxis(concat.getAxis(), rank);
    Tensor out{SmallVector<int64_t>(type.getShape()), {}};
    out.data.resize(type.getNumElements());
    int64_t outer = numElements(ArrayRef<int64_t>(out.shape).take_front(axis));
    int64_t inner =
        numElements(ArrayRef<int64_t>(out.shape).drop_front(axis + 1));
    int64_t written = 0;
    for (Value input : concat.getInputs()) {
      const Tensor *in = evaluate(input);
      if (!in)
        return std::nullopt;
      int64_t width = in->shape[axis] * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(in->data.begin() + o * width, width,
                    out.data.begin() + o * out.shape[axis] * inner + written);
      written += width;
    }
    return out;
  }
  if (auto trilu = dyn_cast<TriluOp>(op)) {
    const Tensor *in = evaluate(trilu.getInput());
    if (!in || in->shape.size() < 2)
      return std::nullopt;
    Tensor out = *in;
    int64_t rows = out.shape[out.shape.size() - 2], cols = out.shape.back();
    int64_t k = trilu.getK();
    for (int64_t i = 0, n = out.data.size(); i < n; ++i) {
      int64_t col = i % cols, row = i / cols % rows;
      bool keep = trilu.getUpper() ? col - row >= k : col - row <= k;
      if (!keep)
        out.data[i] = 0;
    }
    return out;
  }
  if (auto range = dyn_cast<RangeOp>(op)) {
    const Tensor *start = evaluate(range.getStart());
    const Tensor *delta = evaluate(range.getDelta());
    if (!start || !delta)
      return std::nullopt;
    Tensor out{SmallVector<int64_t>(type.getShape()), {}};
    for (int64_t i = 0, n = type.getNumElements(); i < n; ++i)
      out.data.push_back(
          roundTo(start->data[0] + i * delta->data[0], type.getElementType()));
    return out;
  }
  if (auto cumsum = dyn_cast<CumSumOp>(op)) {
    // transformers' packed-sequence detection: the cumulative count of
    // position jumps along the sequence.
    const Tensor *in = evaluate(cumsum.getInput());
    std::optional<int64_t> axis =
        normalizeAxis(cumsum.getAxis(), type.getRank());
    if (!in || !axis)
      return std::nullopt;
    Tensor out{SmallVector<int64_t>(type.getShape()), in->data};
    int64_t size = type.getDimSize(*axis);
    int64_t inner = numElements(type.getShape().drop_front(*axis + 1));
    int64_t outer = numElements(type.getShape().take_front(*axis));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0;
        for (int64_t step = 0; step < size; ++step) {
          int64_t k = cumsum.getReverse() ? size - 1 - step : step;
          double &x = out.data[(o * size + k) * inner + i];
          double value = in->data[(o * size + k) * inner + i];
          x = roundTo(cumsum.getExclusive() ? sum : sum + value,
                      type.getElementType());
          sum += value;
        }
      }
    return out;
  }
  if (auto gatherOp = dyn_cast<GatherOp>(op)) {
    const Tensor *data = evaluate(gatherOp.getData());
    const Tensor *indices = evaluate(gatherOp.getIndices());
    std::optional<int64_t> axis = normalizeAxis(
        gatherOp.getAxis(), static_cast<int64_t>(data ? data->shape.size() : 0));
    if (!data || !indices || !axis)
      return std::nullopt;
    int64_t size = data->shape[*axis];
    int64_t inner =
        numElements(ArrayRef<int64_t>(data->shape).drop_front(*axis + 1));
    int64_t outer =
        numElements(ArrayRef<int64_t>(data->shape).take_front(*axis));
    Tensor out{SmallVector<int64_t>(type.getShape()), {}};
    out.data.reserve(type.getNumElements());
    for (int64_t o = 0; o < outer; ++o)
      for (double index : indices->data) {
        int64_t k = static_cast<int64_t>(index);
        if (k < 0)
          k += size;
        if (k < 0 || k >= size)
          return std::nullopt;
        for (int64_t i = 0; i < inner; ++i)
          out.data.push_back(data->data[(o * size + k) * inner + i]);
      }
    return out;
  }
  if (auto gatherND = dyn_cast<GatherNDOp>(op)) {
    // data[indices[..., :]]: tensor indexing with several index tensors
    // (transformers' mask functions on [batch, query] tables).
    const Tensor *data = evaluate(gatherND.getData());
    const Tensor *indices = evaluate(gatherND.getIndices());
    if (!data || !indices || gatherND.getBatchDims() != 0 ||
        indices->shape.empty())
      return std::nullopt;
    int64_t depth = indices->shape.back();
    if (depth < 1 || depth > static_cast<int64_t>(data->shape.size()))
      return std::nullopt;
    ArrayRef<int64_t> dataShape(data->shape);
    SmallVector<int64_t> strides = stridesOf(dataShape);
    int64_t inner = numElements(dataShape.drop_front(depth));
    Tensor out{SmallVector<int64_t>(type.getShape()), {}};
    out.data.reserve(type.getNumElements());
    for (size_t at = 0; at < indices->data.size(); at += depth) {
      int64_t offset = 0;
      for (int64_t d = 0; d < depth; ++d) {
        int64_t k = static_cast<int64_t>(indices->data[at + d]);
        if (k < 0)
          k += dataShape[d];
        if (k < 0 || k >= dataShape[d])
          return std::nullopt;
        offset += k * strides[d];
      }
      out.data.insert(out.data.end(), data->data.begin() + offset,
                      data->data.begin() + offset + inner);
    }
    return out;
  }
  auto binary = [&](auto fn) {
    return elementwise(op->getOperands(), type,
                       [&](ArrayRef<double> a) { return fn(a[0], a[1]); });
  };
  if (isa<AddOp>(op))
    return binary([](double a, double b) { return a + b; });
  if (isa<SubOp>(op))
    return binary([](double a, double b) { return a - b; });
  if (isa<MulOp>(op))
    return binary([](double a, double b) { return a * b; });
  if (isa<DivOp>(op)) {
    if (isInt)
      return std::nullopt; // integer division by zero is not worth modelling
    return binary([](double a, double b) { return a / b; });
  }
  if (isa<MinOp>(op))
    return binary([](double a, double b) { return std::min(a, b); });
  if (isa<MaxOp>(op))
    return binary([](double a, double b) { return std::max(a, b); });
  if (isa<AndOp>(op))
    return binary([](double a, double b) { return double(a != 0 && b != 0); });
  if (isa<OrOp>(op))
    return binary([](double a, double b) { return double(a != 0 || b != 0); });
  if (auto cmp = dyn_cast<CompareOp>(op)) {
    ComparePredicate p = cmp.getPredicate();
    return binary(
        [p](double a, double b) { return double(comparePredicate(p, a, b)); });
  }
  if (isa<NegOp>(op))
    return elementwise(op->getOperands(), type,
                       [](ArrayRef<double> a) { return -a[0]; });
  if (isa<NotOp>(op))
    return elementwise(op->getOperands(), type,
                       [](ArrayRef<double> a) { return double(a[0] == 0); });
  if (isa<WhereOp>(op))
    return elementwise(op->getOperands(), type, [](ArrayRef<double> a) {
      return a[0] != 0 ? a[1] : a[2];
    });
  return std::nullopt;
}
} // namespace

bool mte::transformer::isCausalMask(Value mask, MaskForm form,
                                    int64_t queryLength, int64_t keyLength) {
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  if (!type || type.getRank() < 2 || !type.hasStaticShape() ||
      type.getDimSize(type.getRank() - 2) != queryLength ||
      type.getDimSize(type.getRank() - 1) != keyLength)
    return false;
  // Evaluate the whole subgraph at once: nothing to gain from a partial one.
  Evaluator evaluator;
  const Tensor *t = evaluator.evaluate(mask);
  if (!t)
    return false;
  // Half the lowest finite value of the element type: exporters write -inf
  // or torch.finfo(dtype).min, both of which exp() turns into exact zeros.
  auto floatType = dyn_cast<FloatType>(type.getElementType());
  double hidden = floatType
                      ? 0.5 * APFloat::getLargest(floatType.getFloatSemantics(),
                                                  /*Negative=*/true)
                                  .convertToDouble()
                      : 0;
  int64_t offset = keyLength - queryLength;
  int64_t plane = queryLength * keyLength;
  for (int64_t i = 0, n = t->data.size(); i < n; ++i) {
    int64_t col = i % keyLength, row = i % plane / keyLength;
    bool visible = col <= row + offset;
    double x = t->data[i];
    bool ok;
    switch (form) {
    case MaskForm::Additive:
      ok = visible ? x == 0 : (floatType && x <= hidden);
      break;
    case MaskForm::Keep:
      ok = visible == (x != 0);
      break;
    case MaskForm::Hide:
      ok = visible == (x == 0);
      break;
    }
    if (!ok)
      return false;
  }
  return true;
}
