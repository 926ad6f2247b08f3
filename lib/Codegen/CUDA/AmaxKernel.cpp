//===- AmaxKernel.cpp - the per-row amax kernel of FP8 scaling ------------===//
//
// The first pass of transformer.amax on CUDA: the input viewed as [rows,
// length] with long rows, each row's max(|x|) in f32 from one read (vector
// loads, warp shuffles, workgroup memory past a warp), written by the row's
// first thread. The few row maxima left are reduced by amax's reference
// lowering.
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mte::cuda;

LogicalResult mte::cuda::defineAmaxKernel(func::FuncOp func,
                                          kernel::RowKernelAttr spec) {
  FailureOr<MemRefType> rowsBuffer = getRowsBuffer(func);
  if (failed(rowsBuffer))
    return failure();
  MemRefType rows = *rowsBuffer;
  ArrayRef<Type> types = func.getArgumentTypes();
  auto output = types.size() == 2 ? dyn_cast<MemRefType>(types[1]) : nullptr;
  if (!output || output.getRank() != 1 || !output.getElementType().isF32() ||
      output.getDimSize(0) != rows.getDimSize(0))
    return invalidKernel(func, "amax", "needs (input [rows, length], f32 "
                                       "output [rows])");
  std::optional<RowMapping> mapping =
      planRows(rows.getDimSize(0), rows.getDimSize(1), rows.getElementType());
  if (!mapping)
    return invalidKernel(func, "amax", "rows too long");
  defineKernel(
      func, 1, *mapping, /*reductions=*/1,
      [&](RowKernelBuilder &k, ValueRange args, ValueRange results) {
        OpBuilder &b = k.b;
        Location loc = k.loc;
        Value amax = k.f32(0);
        for (int64_t v = 0; v < k.m.vectorsPerThread; ++v) {
          auto [offset, valid] = k.vector(v);
          SmallVector<Value> x = k.loadF32(args[0], {k.row, offset}, valid);
          for (Value &xi : x)
            xi = math::AbsFOp::create(b, loc, xi);
          // maximumf propagates NaN, as amax must; absent vectors are 0.
          amax = arith::MaximumFOp::create(b, loc, amax,
                                           k.reduceLanes(x, valid, true));
        }
        k.storeRowResult(k.reduceRow(amax, /*isMax=*/true, 0), results[0]);
      });
  return success();
}
