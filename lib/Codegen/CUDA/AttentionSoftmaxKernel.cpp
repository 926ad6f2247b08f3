//===- AttentionSoftmaxKernel.cpp - attention's softmax row kernel --------===//
//
// One row per (batch, head, query): the scores scaled, masked (a mask
// operand broadcast to [B, H, Sq, Skv], the causal mask computed) and
// normalised with an online softmax over the row's threads; the
// probabilities written in the type the next product reads.
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mte::cuda;

namespace {

struct SoftmaxKernel {
  int64_t heads, queries, keys;
  bool causal, hasMask;
  /// The mask's shape before flattening; it broadcasts to [B, H, Sq, Skv].
  SmallVector<int64_t> maskShape;
};

void buildSoftmaxBody(RowKernelBuilder &k, const SoftmaxKernel &kernel,
                      ValueRange args, ValueRange results) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const RowMapping &m = k.m;
  Value scores = args[0];
  Value mask = kernel.hasMask ? args[1] : Value();
  Value scale = args.back();
  Value probs = results[0];
  Value negInf = k.identity(/*isMax=*/true);

  // The mask broadcasts to [B, H, Sq, Skv]: its strides there, 0 along the
  // dimensions it repeats. Every nonzero stride is a multiple of Skv when
  // the mask varies along the keys, so its rows are vector-aligned too.
  SmallVector<int64_t> maskStrides(4, 0);
  if (mask) {
    ArrayRef<int64_t> shape = kernel.maskShape;
    int64_t stride = 1;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (shape[d] != 1)
        maskStrides[4 - shape.size() + d] = stride;
      stride *= shape[d];
    }
  }
  // row = (b * H + h) * Sq + i.
  Value query = arith::RemUIOp::create(b, loc, k.row, k.index(kernel.queries));
  Value maskRow;
  if (mask) {
    Value head = arith::RemUIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, k.row, k.index(kernel.queries)),
        k.index(kernel.heads));
    Value batch = arith::DivUIOp::create(
        b, loc, k.row, k.index(kernel.heads * kernel.queries));
    maskRow = k.index(0);
    Value positions[] = {batch, head, query};
    for (auto [position, stride] : llvm::zip(positions, maskStrides))
      if (stride != 0)
        maskRow = arith::AddIOp::create(
            b, loc, maskRow,
            arith::MulIOp::create(b, loc, position, k.index(stride)));
  }
  // A mask that does not vary along the keys is one element per row.
  bool maskIsBool =
      mask && cast<MemRefType>(mask.getType()).getElementType().isInteger(1);
  bool maskAlongKeys = mask && maskStrides[3] != 0;
  Value rowMask;
  if (mask && !maskAlongKeys) {
    rowMask = k.loadEach(mask, maskRow, 1, k.rowInRange).front();
    if (!maskIsBool && !rowMask.getType().isF32())
      rowMask = arith::ExtFOp::create(b, loc, b.getF32Type(), rowMask);
  }
  // Causal: key j is visible to query i iff j <= i + (Skv - Sq).
  Value lastVisible;
  if (kernel.causal)
    lastVisible = arith::AddIOp::create(b, loc, query,
                                        k.index(kernel.keys - kernel.queries));

  SmallVector<SmallVector<Value>> values;
  SmallVector<Value> offsets, valid;
  Value max = negInf;
  for (int64_t v = 0; v < m.vectorsPerThread; ++v) {
    auto [offset, isValid] = k.vector(v);
    offsets.push_back(offset);
    valid.push_back(isValid);
    // Causal: a vector whose first key is hidden is never read (its lanes
    // become -inf below), which skips about half of the scores.
    Value load = isValid;
    if (kernel.causal) {
      Value seen = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                         offset, lastVisible);
      load = isValid ? arith::AndIOp::create(b, loc, isValid, seen).getResult()
                     : seen;
    }
    SmallVector<Value> s = k.loadF32(scores, {k.row, offset}, load);
    for (Value &si : s)
      si = arith::MulFOp::create(b, loc, si, scale);
    if (mask) {
      SmallVector<Value> maskLanes;
      if (!maskAlongKeys) {
        maskLanes.assign(m.lanes, rowMask);
      } else if (maskIsBool) {
        // i1 vectors are bit-packed in LLVM; the buffer holds a byte each.
        maskLanes =
            k.loadEach(mask, arith::AddIOp::create(b, loc, maskRow, offset),
                       m.lanes, isValid);
      } else {
        maskLanes = k.loadF32(
            mask, arith::AddIOp::create(b, loc, maskRow, offset).getResult(),
            isValid);
      }
      for (auto [si, maskLane] : llvm::zip(s, maskLanes))
        si = maskIsBool ? arith::SelectOp::create(b, loc, maskLane, si, negInf)
                              .getResult()
                        : arith::AddFOp::create(b, loc, si, maskLane);
    }
    if (kernel.causal)
      for (int64_t l = 0; l < m.lanes; ++l) {
        Value key = arith::AddIOp::create(b, loc, offset, k.index(l));
        Value visible = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                              key, lastVisible);
        s[l] = arith::SelectOp::create(b, loc, visible, s[l], negInf);
      }
    max = arith::MaximumFOp::create(b, loc, max,
                                    k.reduceLanes(s, isValid, /*isMax=*/true));
    values.push_back(std::move(s));
  }
  // Online softmax: each thread's exponentials against its own maximum,
  // then one reduction of (maximum, sum) that rescales the sums it merges.
  // A maximum of -inf (every key hidden) shifts by 0, so that nothing
  // computes -inf - -inf.
  auto isHidden = [&](Value x) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, negInf);
  };
  auto shiftOf = [&](Value x) {
    return arith::SelectOp::create(b, loc, isHidden(x), k.f32(0), x);
  };
  auto exp = [&](Value x) { return math::ExpOp::create(b, loc, x); };
  Value shift = shiftOf(max);
  Value sum = k.f32(0);
  for (auto [s, isValid] : llvm::zip(values, valid)) {
    for (Value &si : s)
      si = exp(arith::SubFOp::create(b, loc, si, shift));
    sum = arith::AddFOp::create(b, loc, sum,
                                k.reduceLanes(s, isValid, /*isMax=*/false));
  }
  auto merge = [&](std::pair<Value, Value> x, std::pair<Value, Value> y,
                   int64_t, int64_t) {
    Value rowMax = arith::MaximumFOp::create(b, loc, x.first, y.first);
    Value rowShift = shiftOf(rowMax);
    auto rescaled = [&](std::pair<Value, Value> part) {
      return arith::MulFOp::create(
          b, loc, part.second,
          exp(arith::SubFOp::create(b, loc, part.first, rowShift)));
    };
    return std::pair<Value, Value>{
        rowMax, arith::AddFOp::create(b, loc, rescaled(x), rescaled(y))};
  };
  auto [rowMax, rowSum] = k.reducePair({max, sum}, merge, 0);
  // p = e * exp(threadMax - rowMax) / rowSum; zeros for a query that sees
  // no key (sum 0) and for the lanes of a thread that sees none.
  Value factor = arith::DivFOp::create(
      b, loc, exp(arith::SubFOp::create(b, loc, shift, shiftOf(rowMax))),
      rowSum);
  Value rowSeesAKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                            rowSum, k.f32(0));
  Value threadSeesAKey =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, max, negInf);
  Value seesAKey = arith::AndIOp::create(b, loc, rowSeesAKey, threadSeesAKey);
  factor = arith::SelectOp::create(b, loc, seesAKey, factor, k.f32(0));
  for (auto [s, offset, isValid] : llvm::zip(values, offsets, valid)) {
    SmallVector<Value> p;
    for (Value si : s)
      p.push_back(arith::MulFOp::create(b, loc, si, factor));
    k.store(p, probs, {k.row, offset}, isValid);
  }
}

} // namespace

LogicalResult
mte::cuda::defineAttentionSoftmaxKernel(func::FuncOp func,
                                        kernel::RowKernelAttr spec) {
  FailureOr<MemRefType> rowsBuffer = getRowsBuffer(func);
  if (failed(rowsBuffer))
    return failure();
  MemRefType rows = *rowsBuffer;
  auto fail = [&](const Twine &why) { return invalidKernel(func, "row", why); };
  ArrayRef<Type> types = func.getArgumentTypes();
  int64_t numRows = rows.getDimSize(0), length = rows.getDimSize(1);
  SoftmaxKernel kernel;
  if (numRows % (spec.getHeads() * spec.getQueries()) != 0)
    return fail("needs heads and queries that divide the rows");
  kernel.heads = spec.getHeads();
  kernel.queries = spec.getQueries();
  kernel.keys = length;
  kernel.causal = spec.getCausal();
  kernel.hasMask = static_cast<bool>(spec.getMaskShape());
  if (kernel.hasMask)
    kernel.maskShape.assign(spec.getMaskShape().asArrayRef().begin(),
                            spec.getMaskShape().asArrayRef().end());
  Type scores = rows.getElementType();
  if (types.size() != 3u + kernel.hasMask ||
      !(scores.isF32() || scores.isBF16() || scores.isF16()) ||
      !types[1 + kernel.hasMask].isF32())
    return fail("wrong number of arguments, or no float scores and f32 "
                "scale");
  // The probabilities' type sets the vector width: 16-byte stores of
  // bf16 probabilities, the f32 scores loaded as two 16-byte halves.
  auto probs = dyn_cast<MemRefType>(types.back());
  if (!probs || probs.getShape() != rows.getShape())
    return fail("the probabilities must be [rows, keys] like the scores");
  std::optional<RowMapping> mapping =
      planRows(numRows, length, probs.getElementType());
  if (!mapping)
    return fail("rows too long");
  defineKernel(func, 2 + kernel.hasMask, *mapping, /*reductions=*/2,
               [&](RowKernelBuilder &k, ValueRange args, ValueRange results) {
                 buildSoftmaxBody(k, kernel, args, results);
               });
  return success();
}
