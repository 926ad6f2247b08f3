//===- MatmulToLibraryCall.cpp - linalg.matmul as cuBLASLt calls ----------===//

#include "mte/Conversion/MatmulToLibraryCall/MatmulToLibraryCall.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

namespace mte {
#define GEN_PASS_DEF_MATMULTOLIBRARYCALL
#include "mte/Conversion/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
constexpr StringLiteral kGemm = "mte_cuda_gemm";

/// The mte_dtype code (include/mte-c/ModelABI.h) of a GEMM operand type.
std::optional<int32_t> dtypeCode(Type type) {
  if (type.isF32())
    return 1;
  if (type.isF16())
    return 2;
  if (type.isBF16())
    return 3;
  return std::nullopt;
}

bool isDense(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && (type.getRank() == 2 || type.getRank() == 3) &&
         type.hasStaticShape() && type.getLayout().isIdentity() &&
         dtypeCode(type.getElementType());
}

Type elementTypeOf(Value v) {
  return cast<MemRefType>(v.getType()).getElementType();
}

/// A product the library runs: dense operands, A and B of one type (f32,
/// bf16 or f16), accumulated into f32.
bool isLibraryGemm(linalg::LinalgOp op) {
  if (!llvm::all_of(op->getOperands(), isDense))
    return false;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  return elementTypeOf(a) == elementTypeOf(b) && elementTypeOf(c).isF32();
}

/// Whether a (batch_)matmul reads B as [N, K]: the maps (m,k), (n,k), (m,n)
/// after the batch dimension, if any.
std::optional<bool> transposedB(linalg::LinalgOp op) {
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned batch = isa<linalg::BatchMatmulOp>(op) ? 1 : 0;
  SmallVector<AffineExpr> dims;
  for (unsigned d = 0; d < batch + 3; ++d)
    dims.push_back(getAffineDimExpr(d, ctx));
  AffineExpr m = dims[batch], n = dims[batch + 1], k = dims[batch + 2];
  auto map = [&](AffineExpr a, AffineExpr b) {
    SmallVector<AffineExpr> results(dims.begin(), dims.begin() + batch);
    results.append({a, b});
    return AffineMap::get(batch + 3, 0, results, ctx);
  };
  if (maps.size() != 3 || maps[0] != map(m, k) || maps[2] != map(m, n))
    return std::nullopt;
  if (maps[1] == map(k, n))
    return false;
  if (maps[1] == map(n, k))
    return true;
  return std::nullopt;
}

/// The zero fill of `out` that only `matmul` reads, if it comes right
/// before it among the ops touching `out`.
linalg::FillOp zeroFillBefore(Operation *matmul, Value out) {
  for (Operation *op = matmul->getPrevNode(); op; op = op->getPrevNode()) {
    if (!llvm::is_contained(op->getOperands(), out))
      continue;
    auto fill = dyn_cast<linalg::FillOp>(op);
    FloatAttr value;
    if (fill && fill.getOutputs()[0] == out &&
        matchPattern(fill.getInputs()[0], m_Constant(&value)) &&
        value.getValue().isZero())
      return fill;
    return {};
  }
  return {};
}

struct MatmulToLibraryCallPass
    : mte::impl::MatmulToLibraryCallBase<MatmulToLibraryCallPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureBufferSemantics() && isLibraryGemm(op) && transposedB(op))
        matmuls.push_back(op);
    });
    if (matmuls.empty())
      return;
    OpBuilder builder(module.getBodyRegion());
    Type i64 = builder.getI64Type();
    auto callee = module.lookupSymbol<func::FuncOp>(kGemm);
    if (!callee) {
      callee = func::FuncOp::create(
          builder, module.getLoc(), kGemm,
          builder.getFunctionType({i64, i64, i64, i64, i64, i64, i64,
                                   builder.getI32Type(), builder.getF32Type(),
                                   builder.getI32Type()},
                                  {}));
      callee.setPrivate();
    }
    for (linalg::LinalgOp matmul : matmuls) {
      Location loc = matmul.getLoc();
      Value x = matmul.getDpsInputs()[0], w = matmul.getDpsInputs()[1],
            out = matmul.getDpsInits()[0];
      bool nk = *transposedB(matmul);
      auto outType = cast<MemRefType>(out.getType());
      bool hasBatch = outType.getRank() == 3;
      int64_t batch = hasBatch ? outType.getDimSize(0) : 1;
      int64_t m = outType.getDimSize(hasBatch),
              n = outType.getDimSize(hasBatch + 1),
              k = cast<MemRefType>(x.getType()).getShape().back();
      float beta = 1.0f;
      if (linalg::FillOp fill = zeroFillBefore(matmul, out)) {
        fill.erase();
        beta = 0.0f;
      }
      builder.setInsertionPoint(matmul);
      auto pointer = [&](Value buffer) -> Value {
        Value index = memref::ExtractAlignedPointerAsIndexOp::create(
            builder, loc, buffer);
        return arith::IndexCastOp::create(builder, loc, i64, index);
      };
      auto constant = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(builder, loc, i64, v);
      };
      func::CallOp::create(
          builder, loc, callee,
          ValueRange{pointer(x), pointer(w), pointer(out), constant(batch),
                     constant(m), constant(n), constant(k),
                     arith::ConstantIntOp::create(builder, loc,
                                                  builder.getI32Type(), nk),
                     arith::ConstantFloatOp::create(
                         builder, loc, builder.getF32Type(), APFloat(beta)),
                     arith::ConstantIntOp::create(
                         builder, loc, builder.getI32Type(),
                         *dtypeCode(elementTypeOf(x)))});
      matmul->erase();
    }
  }
};
} // namespace
