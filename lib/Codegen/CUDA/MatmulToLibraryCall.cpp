//===- MatmulToLibraryCall.cpp - linalg.matmul as cuBLASLt calls ----------===//

#include "mte/Codegen/CUDA/Passes.h"

#include "mte/Codegen/Common/KernelABI.h"
#include "mte/Codegen/CUDA/LibraryContractions.h"
#include "mte/Support/DType.h"

#include "mte-c/ModelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

namespace mte {
#define GEN_PASS_DEF_MATMULTOLIBRARYCALL
#include "mte/Codegen/CUDA/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {

/// The mte_dtype of a GEMM output type: f32, f16 or bf16.
std::optional<int32_t> dtypeCode(Type type) {
  if (!isa<Float32Type, Float16Type, BFloat16Type>(type))
    return std::nullopt;
  return *mte::getDType(type);
}

/// The mte_dtype of a GEMM operand type: an output type or E4M3.
std::optional<int32_t> operandDtypeCode(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return *mte::getDType(type);
  return dtypeCode(type);
}

bool isDense(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && (type.getRank() == 2 || type.getRank() == 3) &&
         type.hasStaticShape() && type.getLayout().isIdentity() &&
         operandDtypeCode(type.getElementType());
}

Type elementTypeOf(Value v) {
  return cast<MemRefType>(v.getType()).getElementType();
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

/// A product the library runs: dense operands, A and B of one type (f32,
/// bf16 or f16, or E4M3 with B [N, K] and K and N multiples of 16: cuBLASLt's
/// FP8 layout rules on sm_89/sm_90), accumulated into f32.
bool isLibraryGemm(linalg::LinalgOp op) {
  if (!llvm::all_of(op->getOperands(), isDense))
    return false;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        c = op.getDpsInits()[0];
  // An empty product (M, N or K of 0) stays a loop nest: nothing, or the
  // zero fill, is all there is to it.
  for (Value v : {a, b, c})
    if (cast<MemRefType>(v.getType()).getNumElements() == 0)
      return false;
  if (elementTypeOf(a) != elementTypeOf(b) || !elementTypeOf(c).isF32())
    return false;
  if (isa<Float8E4M3FNType>(elementTypeOf(a))) {
    auto out = cast<MemRefType>(c.getType());
    int64_t n = out.getShape().back();
    int64_t k = cast<MemRefType>(a.getType()).getShape().back();
    std::optional<bool> nk = transposedB(op);
    return isa<linalg::MatmulOp>(op) && nk && *nk && n % 16 == 0 &&
           k % 16 == 0;
  }
  return true;
}

/// Whether `op` is a block-scaled fp8 product as mte::buildBlockScaledProduct
/// builds it (tagged): dense E4M3 x [M, K] and W [N, K], f32 scales
/// [K / 128, M] and [ceil(N / 128), K / 128 rounded up to 4], read through
/// the maps (m, k), (n, k), (k / 128, m), (n / 128, k / 128) into f32
/// [M, N], with N a multiple of 16, K of 128 and M of 8 (the 1x128-scaled
/// operand's rows, as TransformerEngine requires of it).
bool isBlockScaledGemm(linalg::GenericOp op) {
  if (!op->hasAttr(mte::kBlockScaledGemmAttrName) ||
      !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 4 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 3 ||
      !llvm::all_of(op->getOperands(), isDense))
    return false;
  SmallVector<Value> in = llvm::to_vector(op.getDpsInputs());
  auto shape = [](Value v) { return cast<MemRefType>(v.getType()).getShape(); };
  Type f32 = Float32Type::get(op.getContext());
  if (!isa<Float8E4M3FNType>(elementTypeOf(in[0])) ||
      !isa<Float8E4M3FNType>(elementTypeOf(in[1])) ||
      elementTypeOf(in[2]) != f32 || elementTypeOf(in[3]) != f32 ||
      elementTypeOf(op.getDpsInits()[0]) != f32)
    return false;
  ArrayRef<int64_t> x = shape(in[0]), w = shape(in[1]),
                    out = shape(op.getDpsInits()[0]);
  if (x.size() != 2 || w.size() != 2 || out.size() != 2)
    return false;
  int64_t m = x[0], k = x[1], n = w[0], blocks = k / 128;
  if (k % 128 != 0 || n % 16 != 0 || m == 0 || m % 8 != 0 || w[1] != k ||
      out != ArrayRef<int64_t>{m, n} ||
      shape(in[2]) != ArrayRef<int64_t>{blocks, m} ||
      shape(in[3]) != ArrayRef<int64_t>{int64_t(llvm::divideCeil(n, 128)),
                                        int64_t(llvm::alignTo(blocks, 4))})
    return false;
  MLIRContext *ctx = op.getContext();
  AffineExpr dm = getAffineDimExpr(0, ctx), dn = getAffineDimExpr(1, ctx),
             dk = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> expected = {
      AffineMap::get(3, 0, {dm, dk}, ctx), AffineMap::get(3, 0, {dn, dk}, ctx),
      AffineMap::get(3, 0, {dk.floorDiv(128), dm}, ctx),
      AffineMap::get(3, 0, {dn.floorDiv(128), dk.floorDiv(128)}, ctx),
      AffineMap::get(3, 0, {dm, dn}, ctx)};
  return op.getIndexingMapsArray() == expected;
}

/// Whether `fill` writes zeros.
bool isZeroFill(linalg::FillOp fill) {
  FloatAttr value;
  return fill && matchPattern(fill.getInputs()[0], m_Constant(&value)) &&
         value.getValue().isZero();
}

/// The last op before `user` in its block that writes `buffer` (as a
/// destination), skipping ops that only read it; null if another kind of
/// op touches it first.
linalg::LinalgOp lastWriterBefore(Operation *user, Value buffer) {
  for (Operation *op = user->getPrevNode(); op; op = op->getPrevNode()) {
    if (!llvm::is_contained(op->getOperands(), buffer))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics())
      return {};
    if (llvm::is_contained(linalgOp.getDpsInits(), buffer))
      return linalgOp;
  }
  return {};
}

/// Whether an op strictly between `from` and `to` (in one block) uses `v`.
bool usedBetween(Operation *from, Operation *to, Value v) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (llvm::is_contained(op->getOperands(), v))
      return true;
  return false;
}

/// How `out` comes to hold zeros right before `matmul`, if it does: a zero
/// fill of it, or a copy of a zero-filled buffer (bufferization copies a
/// zero tensor that CSE shared between GEMMs). Returns that op when only
/// `matmul` needs its zeros, which the GEMM with beta = 0 replaces (erase
/// it), or null when other readers in between need them and it stays.
std::optional<Operation *> zeroInitBefore(Operation *matmul, Value out) {
  Operation *writer = lastWriterBefore(matmul, out).getOperation();
  auto filled = [&](Operation *op) {
    return isZeroFill(dyn_cast_or_null<linalg::FillOp>(op));
  };
  if (auto copy = dyn_cast_or_null<linalg::CopyOp>(writer)) {
    if (!filled(lastWriterBefore(copy, copy.getInputs()[0]).getOperation()))
      return std::nullopt;
  } else if (!filled(writer)) {
    return std::nullopt;
  }
  return usedBetween(writer, matmul, out) ? nullptr : writer;
}

/// A GEMM's epilogue that cuBLASLt can apply: the elementwise op the
/// lowering tagged `mte.gemm_epilogue`, reading the product and writing
/// `out` (f32, bf16 or f16) with the fp8 operands' optional scales (f32
/// scalars), an optional bias [N] and residual (C, beta = 1). An E4M3
/// output adds the tagged cast that writes `out` from the epilogue's f32
/// value times `outScale`, and the tagged reduction writing its amax to
/// `outAmax` (its zero fill goes with it); the call then takes the place of
/// the last of them.
struct LibraryEpilogue {
  linalg::GenericOp op;
  Value out, inputScale, weightScale, bias, residual, outScale, outAmax;
  float alpha = 1.0f;
  int32_t code = MTE_GEMM_EPILOGUE_DEFAULT;
  /// The ops the call replaces besides the product, the last one first.
  SmallVector<Operation *> replaced;
  /// The type of C and the bias: the output's, or 16 bits for E4M3.
  Type cType;
  /// The scales are vectors: one per row of x, one per output channel.
  bool rowScales = false;
};

/// The buffer a view (reshape, subview, cast, ...) is of.
Value rootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

bool isDenseOf(Value v, Type elementType) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() &&
         type.getElementType() == elementType;
}

/// Whether `op` writes all of `buffer` without reading it.
bool overwrites(Operation *op, Value buffer) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      llvm::is_contained(linalgOp.getDpsInputs(), buffer))
    return false;
  for (OpOperand &init : linalgOp.getDpsInitsMutable())
    if (init.get() == buffer)
      return !linalgOp.payloadUsesValueFromOperand(&init);
  return false;
}

/// The tagged cast to E4M3 and (if there is one) the amax reduction that
/// are the only readers of the f32 value `y` an `fp8_output` epilogue
/// writes, into `epilogue`: the E4M3 buffer as its output, the scale and
/// the amax buffer. Fails on anything else. The buffer may be written again
/// later (bufferization reuses it for the next layer's): the readers are
/// those before that.
LogicalResult matchFp8Output(LibraryEpilogue &epilogue, Value y) {
  linalg::GenericOp quantize, amax;
  for (Operation *user = epilogue.op->getNextNode(); user;
       user = user->getNextNode()) {
    if (!llvm::is_contained(user->getOperands(), y))
      continue;
    if (isa<memref::DeallocOp, bufferization::DeallocOp>(user))
      break;
    if (overwrites(user, y))
      break; // the next value
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || generic.getDpsInputs().empty() ||
        generic.getDpsInputs()[0] != y || generic.getNumDpsInits() != 1)
      return failure();
    bool isCast = generic->hasAttr(mte::kGemmFp8OutputAttrName);
    if (!isCast && !generic->hasAttr(mte::kGemmOutputAmaxAttrName))
      return failure();
    linalg::GenericOp &slot = isCast ? quantize : amax;
    if (slot)
      return failure();
    slot = generic;
  }
  // Elementwise over the value, the scale a scalar; the amax reads every
  // element once.
  auto readsWhole = [](linalg::GenericOp op) {
    AffineMap map = op.getIndexingMapsArray().front();
    return map.isIdentity() && map.getNumDims() == op.getNumLoops();
  };
  if (!quantize || quantize.getNumDpsInputs() != 2 || !readsWhole(quantize) ||
      quantize.getNumLoops() != quantize.getNumParallelLoops() ||
      quantize.getIndexingMapsArray()[1].getNumResults() != 0 ||
      !quantize.getIndexingMapsArray()[2].isIdentity() ||
      (amax && !readsWhole(amax)))
    return failure();
  Value codes = quantize.getDpsInits()[0],
        scale = quantize.getDpsInputs()[1];
  auto scaleType = dyn_cast<MemRefType>(scale.getType());
  if (!isDenseOf(codes, Float8E4M3FNType::get(y.getContext())) ||
      cast<MemRefType>(codes.getType()).getShape() !=
          cast<MemRefType>(y.getType()).getShape() ||
      !scaleType || scaleType.getRank() != 0 ||
      !scaleType.getElementType().isF32() || scaleType.getMemorySpace())
    return failure();
  epilogue.out = codes;
  epilogue.outScale = scale;
  epilogue.replaced = {quantize};
  if (amax) {
    Value result = amax.getDpsInits()[0];
    auto resultType = dyn_cast<MemRefType>(result.getType());
    if (amax.getNumDpsInputs() != 1 || !resultType ||
        resultType.getRank() != 0 || !resultType.getElementType().isF32())
      return failure();
    // cuBLASLt's scalar pointers must be 16-byte aligned (it refuses an
    // unaligned scale); a slot of a packed vector may not be.
    int64_t offset;
    SmallVector<int64_t> strides;
    if (failed(resultType.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) || offset * sizeof(float) % 16 != 0)
      return failure();
    // cuBLASLt writes the amax: the zero it starts from goes, unless
    // something between reads it.
    std::optional<Operation *> zero = zeroInitBefore(amax, result);
    if (!zero)
      return failure();
    epilogue.outAmax = result;
    epilogue.replaced.push_back(amax);
    if (*zero)
      epilogue.replaced.push_back(*zero);
    // A copied zero: its source goes too when nothing else reads it.
    if (auto copy = dyn_cast_or_null<linalg::CopyOp>(*zero)) {
      Value source = copy.getInputs()[0];
      auto fill = dyn_cast_or_null<linalg::FillOp>(
          lastWriterBefore(copy, source).getOperation());
      if (fill && source.getDefiningOp<memref::AllocOp>() &&
          fill->getBlock() == copy->getBlock() &&
          llvm::all_of(source.getUsers(), [&](Operation *user) {
            return user == copy.getOperation() || user == fill.getOperation() ||
                   isa<memref::DeallocOp>(user);
          }))
        epilogue.replaced.push_back(fill);
    }
  }
  llvm::sort(epilogue.replaced, [](Operation *a, Operation *b) {
    return b->isBeforeInBlock(a);
  });
  return success();
}

/// The tagged epilogue that is the only reader of the product `tmp` (an
/// allocation only the GEMM, its zero fill and deallocations otherwise
/// touch), when cuBLASLt can compute it and nothing between the GEMM and
/// it writes the GEMM's operands. A block- or row-scaled GEMM takes a bias
/// at most: cuBLASLt's 128-block scale modes come with the DEFAULT and BIAS
/// epilogues only (TransformerEngine allows no others there either), and
/// the outer-vector mode is held to the same until a GPU shows more.
std::optional<LibraryEpilogue> matchEpilogue(linalg::LinalgOp matmul, Value tmp,
                                             bool blockScaled) {
  if (!tmp.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  LibraryEpilogue epilogue;
  SmallVector<Value> views = {tmp};
  for (size_t i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers()) {
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user)) {
        views.push_back(user->getResult(0));
        continue;
      }
      if (user == matmul.getOperation() ||
          isa<memref::DeallocOp, bufferization::DeallocOp>(user))
        continue;
      if (auto fill = dyn_cast<linalg::FillOp>(user);
          fill && fill.getOutputs()[0] == tmp)
        continue;
      if (auto copy = dyn_cast<linalg::CopyOp>(user);
          copy && copy.getOutputs()[0] == tmp)
        continue;
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic || epilogue.op ||
          !generic->hasAttr(mte::kGemmEpilogueAttrName) ||
          generic.getDpsInputs().empty() ||
          generic.getDpsInputs()[0] != views[i])
        return std::nullopt;
      epilogue.op = generic;
    }
  linalg::GenericOp op = epilogue.op;
  if (!op || op->getBlock() != matmul->getBlock() ||
      !matmul->isBeforeInBlock(op) || op.getNumDpsInits() != 1)
    return std::nullopt;
  auto spec = op->getAttrOfType<DictionaryAttr>(mte::kGemmEpilogueAttrName);
  auto activation = spec.getAs<mte::transformer::ActivationAttr>("activation");
  bool hasBias = spec.contains("bias"), hasResidual = spec.contains("residual");
  bool hasInputScale = spec.contains("input_scale"),
       hasWeightScale = spec.contains("weight_scale"),
       fp8Output = spec.contains("fp8_output");
  epilogue.rowScales = spec.contains("row_scales");
  bool vectorScaled = blockScaled || epilogue.rowScales;
  if (auto alpha = spec.getAs<FloatAttr>("alpha"))
    epilogue.alpha = alpha.getValueAsDouble();
  epilogue.out = op.getDpsInits()[0];
  Type outType = elementTypeOf(epilogue.out);
  if (!dtypeCode(outType) || !isDenseOf(epilogue.out, outType) ||
      op.getNumDpsInputs() !=
          1 + hasInputScale + hasWeightScale + hasBias + hasResidual)
    return std::nullopt;
  bool fp8 = isa<Float8E4M3FNType>(elementTypeOf(matmul.getDpsInputs()[0]));
  // C and the bias have the output's type; with an E4M3 output (from the
  // epilogue's f32 value), their own 16-bit one.
  epilogue.cType = outType;
  if (fp8Output) {
    Value c = hasResidual ? op.getDpsInputs().back()
              : hasBias   ? op.getDpsInputs()[1 + hasInputScale +
                                              hasWeightScale]
                          : Value();
    epilogue.cType =
        c ? elementTypeOf(c) : Type(BFloat16Type::get(op.getContext()));
    if (!fp8 || vectorScaled || !outType.isF32() ||
        !isa<BFloat16Type, Float16Type>(epilogue.cType) ||
        failed(matchFp8Output(epilogue, epilogue.out)))
      return std::nullopt;
  }
  // An FP8 GEMM writing f32 takes only a bf16 bias, which the linear's is
  // not: the epilogue then stays a kernel.
  if (fp8 && hasBias && !fp8Output && outType.isF32())
    return std::nullopt;
  // cuBLASLt adds C before the activation, the linear after it; it has no
  // exact-erf GELU or SiLU.
  if (!activation)
    return std::nullopt;
  switch (activation.getValue()) {
  case mte::transformer::Activation::None:
    epilogue.code = 0;
    break;
  case mte::transformer::Activation::Relu:
    epilogue.code = MTE_GEMM_EPILOGUE_RELU;
    break;
  case mte::transformer::Activation::GeluTanh:
    epilogue.code = MTE_GEMM_EPILOGUE_GELU;
    break;
  default:
    return std::nullopt;
  }
  // Block scales (VEC128/BLK128) take DEFAULT and BIAS only; row scales
  // (OUTER_VEC) every epilogue the per-tensor mode does (checked on an
  // H100 by utils/gpu/check_gemm_scales.py).
  if ((hasResidual || blockScaled) && epilogue.code != 0)
    return std::nullopt;
  if (blockScaled && hasResidual)
    return std::nullopt;
  // Row scales: both, on fp8 operands.
  if (epilogue.rowScales && (!fp8 || !hasInputScale || !hasWeightScale))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned rank = op.getNumLoops();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, op.getContext());
  if (maps.front() != identity || maps.back() != identity)
    return std::nullopt;
  unsigned next = 1;
  // A per-tensor scale is an f32 scalar, possibly one element of a vector
  // of them (delayed scaling's): a rank-0 view at some offset.
  auto scalar = [&](Value &scale) {
    scale = op.getDpsInputs()[next];
    auto type = dyn_cast<MemRefType>(scale.getType());
    return type && type.getRank() == 0 && type.getElementType().isF32() &&
           !type.getMemorySpace() && maps[next++].getNumResults() == 0;
  };
  // Row scales: x's [..., 1] dense (M values), broadcast along the
  // channels; W's [N] dense, one per channel.
  auto vector = [&](Value &scale, AffineMap expected, ArrayRef<int64_t> shape) {
    scale = op.getDpsInputs()[next];
    auto type = dyn_cast<MemRefType>(scale.getType());
    return type && isDenseOf(scale, Float32Type::get(op.getContext())) &&
           !type.getMemorySpace() && type.getShape() == shape &&
           maps[next++] == expected;
  };
  if (epilogue.rowScales) {
    MLIRContext *ctx = op.getContext();
    SmallVector<AffineExpr> rows;
    for (unsigned d = 0; d + 1 < rank; ++d)
      rows.push_back(getAffineDimExpr(d, ctx));
    rows.push_back(getAffineConstantExpr(0, ctx));
    SmallVector<int64_t> rowShape(
        cast<MemRefType>(epilogue.out.getType()).getShape());
    int64_t channels = rowShape.back();
    rowShape.back() = 1;
    if (!vector(epilogue.inputScale, AffineMap::get(rank, 0, rows, ctx),
                rowShape) ||
        !vector(epilogue.weightScale, identity.getSubMap({rank - 1}),
                {channels}))
      return std::nullopt;
  } else if ((hasInputScale && !scalar(epilogue.inputScale)) ||
             (hasWeightScale && !scalar(epilogue.weightScale))) {
    return std::nullopt;
  }
  if (hasBias) {
    epilogue.bias = op.getDpsInputs()[next];
    auto biasType = dyn_cast<MemRefType>(epilogue.bias.getType());
    if (!biasType || biasType.getRank() != 1 ||
        !isDenseOf(epilogue.bias, epilogue.cType) ||
        maps[next] != identity.getSubMap({rank - 1}))
      return std::nullopt;
    epilogue.code |= MTE_GEMM_EPILOGUE_BIAS;
    ++next;
  }
  if (hasResidual) {
    epilogue.residual = op.getDpsInputs()[next];
    if (!isDenseOf(epilogue.residual, epilogue.cType) ||
        maps[next] != identity)
      return std::nullopt;
  }
  if (epilogue.code == 0)
    epilogue.code = MTE_GEMM_EPILOGUE_DEFAULT;
  // The call takes the place of the generic (or of the last op it
  // replaces): nothing in between may write what the GEMM reads.
  Operation *place = epilogue.replaced.empty() ? op.getOperation()
                                               : epilogue.replaced.front();
  SmallVector<Value> read;
  for (Value input : matmul.getDpsInputs())
    read.push_back(rootBuffer(input));
  for (Value v : {epilogue.inputScale, epilogue.weightScale, epilogue.bias,
                  epilogue.residual, epilogue.outScale})
    if (v)
      read.push_back(rootBuffer(v));
  for (Operation *between = matmul->getNextNode(); between != place;
       between = between->getNextNode()) {
    if (isa<memref::AllocOp, memref::DeallocOp, bufferization::DeallocOp,
            memref::ExpandShapeOp, memref::CollapseShapeOp, arith::ConstantOp,
            ViewLikeOpInterface>(between))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(between);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics())
      return std::nullopt;
    for (Value written : linalgOp.getDpsInits())
      if (llvm::is_contained(read, rootBuffer(written)))
        return std::nullopt;
  }
  return epilogue;
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
      else if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
               generic && isBlockScaledGemm(generic))
        matmuls.push_back(op);
    });
    if (matmuls.empty())
      return;
    OpBuilder builder(module.getBodyRegion());
    func::FuncOp callee =
        MTE_DECLARE_KERNEL_ENTRY_POINT(builder, module, mte_cuda_gemm);
    Type i64 = builder.getI64Type(), i32 = builder.getI32Type();
    for (linalg::LinalgOp matmul : matmuls) {
      Location loc = matmul.getLoc();
      Value x = matmul.getDpsInputs()[0], w = matmul.getDpsInputs()[1],
            out = matmul.getDpsInits()[0];
      // A block-scaled product reads its scales inside the sum.
      bool blocks = isa<linalg::GenericOp>(matmul.getOperation());
      bool nk = blocks || *transposedB(matmul);
      auto outType = cast<MemRefType>(out.getType());
      bool hasBatch = outType.getRank() == 3;
      int64_t batch = hasBatch ? outType.getDimSize(0) : 1;
      int64_t m = outType.getDimSize(hasBatch),
              n = outType.getDimSize(hasBatch + 1),
              k = cast<MemRefType>(x.getType()).getShape().back();
      std::optional<Operation *> zeroInit = zeroInitBefore(matmul, out);
      // Bias, activation, residual and the output's type in cuBLASLt's
      // epilogue, when the product starts from zero.
      std::optional<LibraryEpilogue> epilogue;
      if (zeroInit && !hasBatch)
        epilogue = matchEpilogue(matmul, out, blocks);
      float beta = zeroInit ? 0.0f : 1.0f;
      Value result = out, bias, residual, inputScale, weightScale, outScale,
            outAmax;
      Type cType;
      int32_t code = MTE_GEMM_EPILOGUE_DEFAULT;
      float alpha = 1.0f;
      if (epilogue) {
        alpha = epilogue->alpha;
        result = epilogue->out;
        bias = epilogue->bias;
        residual = epilogue->residual;
        inputScale = epilogue->inputScale;
        weightScale = epilogue->weightScale;
        outScale = epilogue->outScale;
        outAmax = epilogue->outAmax;
        cType = epilogue->cType;
        code = epilogue->code;
        beta = residual ? 1.0f : 0.0f;
        builder.setInsertionPoint(epilogue->replaced.empty()
                                      ? epilogue->op.getOperation()
                                      : epilogue->replaced.front());
      } else {
        builder.setInsertionPoint(matmul);
      }
      if (blocks) {
        inputScale = matmul.getDpsInputs()[2];
        weightScale = matmul.getDpsInputs()[3];
      }
      if (zeroInit && *zeroInit)
        (*zeroInit)->erase();
      // The address of a buffer's first element: its aligned pointer, plus
      // its offset for a view (a scale taken from a vector of them).
      auto pointer = [&](Value buffer) -> Value {
        if (!buffer)
          return arith::ConstantIntOp::create(builder, loc, i64, 0);
        Value index = memref::ExtractAlignedPointerAsIndexOp::create(
            builder, loc, buffer);
        auto type = cast<MemRefType>(buffer.getType());
        if (!type.getLayout().isIdentity()) {
          auto metadata =
              memref::ExtractStridedMetadataOp::create(builder, loc, buffer);
          Value bytes = arith::MulIOp::create(
              builder, loc, metadata.getOffset(),
              arith::ConstantIndexOp::create(
                  builder, loc, type.getElementTypeBitWidth() / 8));
          index = arith::AddIOp::create(builder, loc, index, bytes);
        }
        return arith::IndexCastOp::create(builder, loc, i64, index);
      };
      auto constant = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(builder, loc, i64, v);
      };
      auto constant32 = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(builder, loc, i32, v);
      };
      func::CallOp::create(
          builder, loc, callee,
          ValueRange{
              pointer(x),
              pointer(w),
              pointer(result),
              constant(batch),
              constant(m),
              constant(n),
              constant(k),
              constant32(nk),
              arith::ConstantFloatOp::create(builder, loc, builder.getF32Type(),
                                             APFloat(alpha)),
              arith::ConstantFloatOp::create(builder, loc, builder.getF32Type(),
                                             APFloat(beta)),
              constant32(*operandDtypeCode(elementTypeOf(x))),
              constant32(*operandDtypeCode(elementTypeOf(result))),
              constant32(code),
              pointer(bias),
              pointer(residual),
              pointer(inputScale),
              pointer(weightScale),
              constant32(blocks ? MTE_GEMM_SCALE_BLOCK128
                         : epilogue && epilogue->rowScales
                             ? MTE_GEMM_SCALE_OUTER_VEC
                             : MTE_GEMM_SCALE_TENSOR),
              constant32(*dtypeCode(cType ? cType : elementTypeOf(result))),
              pointer(outScale),
              pointer(outAmax)});
      if (epilogue) {
        for (Operation *op : epilogue->replaced)
          op->erase();
        epilogue->op->erase();
      }
      matmul->erase();
    }
  }
};
} // namespace
