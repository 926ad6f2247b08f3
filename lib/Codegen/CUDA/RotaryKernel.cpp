//===- RotaryKernel.cpp - the rotary-embedding row kernel -----------------===//
//
// One row per (token, head) of x viewed as [outer, mid, D]: each thread
// rotates pairs of its row's two halves with the cos and sin table row of
// the token's position.
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include <numeric>

using namespace mlir;
using namespace mte::cuda;

namespace {

struct RotaryKernel {
  int64_t heads, seq, mid, half;
  bool headsMajor, batched, fullWidth;
};

void buildRotaryBody(RowKernelBuilder &k, const RotaryKernel &kernel,
                     ValueRange args, ValueRange results) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const RowMapping &m = k.m;
  Value x = args[0], cos = args[1], sin = args[2], output = results[0];
  // Row r of the kernel is (i, j) = (r / mid, r % mid) of the [outer, mid,
  // D] view; the table row is its (batch, position).
  Value i = arith::DivUIOp::create(b, loc, k.row, k.index(kernel.mid));
  Value j = arith::RemUIOp::create(b, loc, k.row, k.index(kernel.mid));
  Value tableRow;
  if (!kernel.headsMajor) // i = b * S + s
    tableRow = kernel.batched
                   ? i
                   : arith::RemUIOp::create(b, loc, i, k.index(kernel.seq))
                         .getResult();
  else if (kernel.batched) // i = b * H + h, j = s
    tableRow = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, i, k.index(kernel.heads)),
            k.index(kernel.seq)),
        j);
  else
    tableRow = j;

  for (int64_t v = 0; v < m.vectorsPerThread; ++v) {
    auto [first, valid] = k.vector(v);
    Value second = arith::AddIOp::create(b, loc, first, k.index(kernel.half));
    SmallVector<Value> x1 = k.loadF32(x, {i, j, first}, valid);
    SmallVector<Value> x2 = k.loadF32(x, {i, j, second}, valid);
    SmallVector<Value> cos1 = k.loadF32(cos, {tableRow, first}, valid);
    SmallVector<Value> sin1 = k.loadF32(sin, {tableRow, first}, valid);
    SmallVector<Value> cos2 = cos1, sin2 = sin1;
    if (kernel.fullWidth) {
      cos2 = k.loadF32(cos, {tableRow, second}, valid);
      sin2 = k.loadF32(sin, {tableRow, second}, valid);
    }
    // x1' = x1 * cos1 - x2 * sin1, x2' = x2 * cos2 + x1 * sin2, in the
    // reference lowering's order.
    SmallVector<Value> y1, y2;
    for (int64_t l = 0; l < m.lanes; ++l) {
      y1.push_back(arith::SubFOp::create(
          b, loc, arith::MulFOp::create(b, loc, x1[l], cos1[l]),
          arith::MulFOp::create(b, loc, x2[l], sin1[l])));
      y2.push_back(arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, x2[l], cos2[l]),
          arith::MulFOp::create(b, loc, x1[l], sin2[l])));
    }
    k.store(y1, output, {i, j, first}, valid);
    k.store(y2, output, {i, j, second}, valid);
  }
}

} // namespace

/// Defines the rotary kernel `func`: x [outer, mid, D] (any static outer
/// and mid strides), cos and sin [T, W], output [outer, mid, D].
LogicalResult mte::cuda::defineRotaryKernel(func::FuncOp func,
                                            kernel::RowKernelAttr spec) {
  auto fail = [&](const Twine &why) {
    return invalidKernel(func, "rotary", why);
  };
  ArrayRef<Type> types = func.getArgumentTypes();
  if (types.size() != 4 || !llvm::all_of(types, llvm::IsaPred<MemRefType>))
    return fail("needs buffers x, cos, sin and output");
  auto x = cast<MemRefType>(types[0]), table = cast<MemRefType>(types[1]);
  SmallVector<int64_t> strides;
  int64_t offset;
  if (x.getRank() != 3 || !x.hasStaticShape() ||
      failed(x.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic) || strides[2] != 1)
    return fail("x must be [outer, mid, D] with static strides, the last 1");
  if (table.getRank() != 2 || !table.hasStaticShape() || types[2] != table ||
      types[3] != MemRefType::get(x.getShape(), x.getElementType()))
    return fail("cos and sin must be [T, W], the output like x");
  RotaryKernel kernel;
  kernel.heads = spec.getHeads();
  kernel.seq = spec.getSeq();
  kernel.headsMajor = spec.getHeadsMajor();
  kernel.mid = x.getDimSize(1);
  int64_t headDim = x.getDimSize(2), outer = x.getDimSize(0);
  kernel.half = headDim / 2;
  int64_t batch = outer / (kernel.headsMajor ? kernel.heads : kernel.seq);
  int64_t width = table.getDimSize(1), tableRows = table.getDimSize(0);
  kernel.fullWidth = width == headDim;
  kernel.batched = tableRows == batch * kernel.seq && batch != 1;
  if (headDim % 2 != 0 || (width != headDim && width != kernel.half) ||
      (tableRows != kernel.seq && tableRows != batch * kernel.seq))
    return fail("tables do not match the view");
  // Every vector of x starts a multiple of its lanes from the base.
  int64_t alignment = std::gcd(offset, std::gcd(strides[0], strides[1]));
  std::optional<RowMapping> mapping =
      planRows(outer * kernel.mid, kernel.half, x.getElementType(), alignment);
  if (!mapping)
    return fail("heads too long");
  defineKernel(func, 3, *mapping, /*reductions=*/0,
               [&](RowKernelBuilder &k, ValueRange args, ValueRange results) {
                 buildRotaryBody(k, kernel, args, results);
               });
  return success();
}
