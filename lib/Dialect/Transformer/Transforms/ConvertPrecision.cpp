//===- ConvertPrecision.cpp - run an f32 model in bf16 or f16 -------------===//
//
// Converts a float32 function to a narrow float storage type: its weights at
// compile time, and every op that the weights' data flow reaches. Values the
// weights never reach (position arithmetic, rotary tables, masks) stay f32
// until they meet a narrow value, where they are rounded once.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/IR/WeightProvenance.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"
#include "mte/Support/FloatBits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

namespace mte::transformer {
#define GEN_PASS_DEF_CONVERTPRECISION
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {

bool hasElementType(Type type, Type element) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType() == element;
}

bool isFp8(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isFp8Type(tensor.getElementType());
}

/// Whether `use` reads a model parameter: a GEMM's weight or bias, a norm's
/// gain or bias, an embedding table, a convolution's weight or bias; in an
/// unfused graph also the rank-2 right operand of a matmul (what
/// mte-recognize-linear makes a linear's weight). Other constants (position
/// ranges, inverse frequencies, mask fills) are not weights, whatever their
/// size: they stay f32 until they meet a narrow value. (A vision or audio
/// model has no embedding table: without the matmul and conv rules its
/// unfused build never became narrow.)
bool isWeightUse(OpOperand &use) {
  Operation *user = use.getOwner();
  if (isa<MatmulOp>(user))
    return use.getOperandNumber() == 1 &&
           cast<RankedTensorType>(use.get().getType()).getRank() == 2;
  if (isa<ConvOp>(user))
    return use.getOperandNumber() >= 1;
  if (auto linear = dyn_cast<LinearOp>(user))
    return &use == &linear.getWeightMutable() ||
           (linear.getBias() && use.get() == linear.getBias());
  if (auto norm = dyn_cast<LayerNormOp>(user))
    return use.get() == norm.getScale() ||
           (norm.getBias() && use.get() == norm.getBias());
  if (auto norm = dyn_cast<RMSNormOp>(user))
    return use.get() == norm.getScale();
  if (auto gather = dyn_cast<GatherOp>(user))
    return use.getOperandNumber() == 0;
  return false;
}

/// `value`, an f32 constant, with its elements rounded to `narrow`.
ElementsAttr convertConstant(ElementsAttr value, FloatType narrow) {
  auto type = cast<ShapedType>(value.getType()).clone(narrow);
  bool bf16 = narrow.isBF16();
  auto round = [bf16](uint32_t bits) {
    return bf16 ? mte::f32BitsToBF16(bits) : mte::f32BitsToF16(bits);
  };
  if (const void *data = resourceData(value)) {
    auto resource = cast<DenseResourceElementsAttr>(value);
    int64_t count = type.getNumElements();
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
        count * sizeof(uint16_t), alignof(uint16_t), /*dataIsMutable=*/true);
    auto *out = reinterpret_cast<uint16_t *>(blob.getMutableData().data());
    const char *in = static_cast<const char *>(data);
    for (int64_t i = 0; i < count; ++i) {
      uint32_t bits;
      std::memcpy(&bits, in + 4 * i, sizeof(bits));
      out[i] = round(bits);
    }
    // --weights=external converts the same file bytes when the model opens.
    WeightProvenance::get(narrow.getContext())
        .recordConversion(blob.getData().data(), data, narrow);
    std::string name = (resource.getRawHandle().getKey() + "." +
                        (bf16 ? "bf16" : "f16"))
                           .str();
    return cast<ElementsAttr>(
        DenseResourceElementsAttr::get(type, name, std::move(blob)));
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense) // a resource whose bytes are not loaded
    return nullptr;
  return dense.mapValues(narrow, [&](const APFloat &v) {
    return APInt(16, round(v.bitcastToAPInt().getZExtValue()));
  });
}

/// Frees the bytes of `value`, an f32 weight the conversion has just taken
/// the last user of in `func`: without it the fused projections' f32
/// concatenations (18 GB on a 7B model) stay in memory beside their narrow
/// copies for the rest of the compile. Kept while another constant of the
/// function holds the same bytes (a fold may have given them another
/// shape), when --weights=external reads them (an imported weight's), and
/// when the module has other functions, which this function pass must not
/// read (the importer makes one; the passes that make more, pipeline
/// stages, run after this one).
void releaseDeadWeight(ElementsAttr value, func::FuncOp func) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource)
    return;
  DenseResourceElementsHandle handle = resource.getRawHandle();
  AsmResourceBlob *blob = handle.getBlob();
  auto module = func->getParentOfType<ModuleOp>();
  if (!blob || blob->getData().empty() || !module ||
      !llvm::hasSingleElement(module.getOps<func::FuncOp>()))
    return;
  bool held = func.walk([&](arith::ConstantOp constant) {
                    auto other = dyn_cast<DenseResourceElementsAttr>(
                        constant.getValue());
                    return other && other.getRawHandle() == handle
                               ? WalkResult::interrupt()
                               : WalkResult::advance();
                  })
                  .wasInterrupted();
  if (held ||
      !WeightProvenance::get(func.getContext()).forget(blob->getData()))
    return;
  handle.getResource()->setBlob(AsmResourceBlob());
}

struct ConvertPrecisionPass
    : mte::transformer::impl::ConvertPrecisionBase<ConvertPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *ctx = &getContext();
    if (precision == "bf16")
      narrow = BFloat16Type::get(ctx);
    else if (precision == "f16")
      narrow = Float16Type::get(ctx);
    else {
      func.emitError() << "unknown precision '" << precision
                       << "' (expected bf16 or f16)";
      return signalPassFailure();
    }
    f32 = Float32Type::get(ctx);
    Block &body = func.getBody().front();

    // Weights first: they are where the narrow type starts.
    for (auto constant : llvm::make_early_inc_range(body.getOps<arith::ConstantOp>())) {
      auto value = dyn_cast<ElementsAttr>(constant.getValue());
      if (!value || !hasElementType(value.getType(), f32) ||
          !llvm::any_of(constant->getUses(), isWeightUse))
        continue;
      ElementsAttr converted = convertConstant(value, narrow);
      if (!converted)
        continue;
      OpBuilder b(constant);
      constant.replaceAllUsesWith(
          arith::ConstantOp::create(b, constant.getLoc(),
                                    cast<TypedAttr>(converted))
              .getResult());
      constant.erase();
      releaseDeadWeight(value, func);
      ++numWeights;
    }

    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (isa<arith::ConstantOp, func::ReturnOp>(op))
        continue;
      bool narrowOperand = llvm::any_of(op.getOperandTypes(), [&](Type t) {
        return hasElementType(t, narrow);
      });
      if (!narrowOperand || llvm::any_of(op.getOperandTypes(), isFp8) ||
          llvm::any_of(op.getResultTypes(), isFp8))
        continue;
      // A cast up to f32 of a narrow value keeps it narrow: the activations
      // stay in the storage type the precision asks for.
      if (!isa<CastOp>(op))
        for (OpOperand &operand : op.getOpOperands())
          if (hasElementType(operand.get().getType(), f32))
            operand.set(toNarrow(operand.get(), &op));
      for (OpResult result : op.getResults())
        if (hasElementType(result.getType(), f32))
          result.setType(cast<RankedTensorType>(result.getType()).clone(narrow));
      ++numOps;
    }

    // The signature stays: f32 results are rounded back up at the return.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    for (auto [operand, type] :
         llvm::zip_equal(ret->getOpOperands(), func.getResultTypes()))
      if (operand.get().getType() != type)
        operand.set(CastOp::create(b, ret.getLoc(), type, operand.get()));
  }

  /// `value` (f32) in the narrow type, for `user`: constants converted,
  /// anything else through a cast right before the user.
  Value toNarrow(Value value, Operation *user) {
    auto type = cast<RankedTensorType>(value.getType()).clone(narrow);
    OpBuilder b(user);
    ElementsAttr constant;
    if (matchPattern(value, m_Constant(&constant)))
      if (ElementsAttr converted = convertConstant(constant, narrow))
        return arith::ConstantOp::create(b, value.getLoc(),
                                         cast<TypedAttr>(converted));
    return CastOp::create(b, value.getLoc(), type, value);
  }

  /// f32, and the type it becomes.
  FloatType f32, narrow;
};
} // namespace
