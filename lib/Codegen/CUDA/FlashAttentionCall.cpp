//===- FlashAttentionCall.cpp - fused attention as a runtime call ---------===//
//
// A fused-attention declaration (#kernel.row_kernel<kind = flash_attention>)
// has no body: every call of it becomes a call of the runtime's
// mte_cuda_attention with the buffers' addresses and strides.
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include "mte/Codegen/Common/KernelABI.h"
#include "mte/Support/DType.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mte::cuda;

/// Replaces every call of the fused-attention declaration `func` (operands
/// q, k, v [B, S, H * D] with any batch and row strides, scale, optionally
/// an f32 [B | 1, Skv] key bias, with `quantize_from` the f32 scale vector
/// and the scale's index in it, the output, with `amax` the f32 row maxima)
/// by a call of mte_cuda_attention with their addresses and strides, then
/// erases the declaration.
LogicalResult mte::cuda::lowerFlashAttentionCalls(func::FuncOp func,
                                                  kernel::RowKernelAttr spec) {
  auto fail = [&](const Twine &why) {
    return func.emitError("cannot lower fused attention '")
           << func.getSymName() << "': " << why;
  };
  ArrayRef<Type> types = func.getArgumentTypes();
  bool hasKeyBias = static_cast<bool>(spec.getMaskShape());
  bool quantizes = static_cast<bool>(spec.getQuantizeFrom());
  unsigned scaleIndex = 4 + hasKeyBias;
  unsigned outputIndex = scaleIndex + 2 * quantizes;
  if (types.size() != outputIndex + 1 + spec.getAmax() || !types[3].isF32())
    return fail("needs (q, k, v, scale, [key bias,] [scales, index,] "
                "output[, row maxima])");
  auto isF32Vector = [](Type type) {
    auto vector = dyn_cast<MemRefType>(type);
    return vector && vector.getRank() == 1 && vector.getElementType().isF32() &&
           vector.getLayout().isIdentity();
  };
  if (hasKeyBias) {
    auto bias = dyn_cast<MemRefType>(types[4]);
    if (!bias || bias.getRank() != 2 || !bias.getElementType().isF32() ||
        !bias.getLayout().isIdentity())
      return fail("the key bias must be a contiguous f32 [B, Skv] buffer");
  }
  if (quantizes &&
      (!isF32Vector(types[scaleIndex]) || !types[scaleIndex + 1].isInteger(64)))
    return fail("the scales must be a contiguous f32 vector and an i64 index");
  if (spec.getAmax() && !isF32Vector(types.back()))
    return fail("the row maxima must be a contiguous f32 vector");
  auto q = dyn_cast<MemRefType>(types[0]);
  auto k = dyn_cast<MemRefType>(types[1]);
  auto out = dyn_cast<MemRefType>(types[outputIndex]);
  Type element = q ? q.getElementType() : Type();
  if (!q || !k || q.getRank() != 3 || k.getRank() != 3 ||
      !(element.isBF16() || element.isF16()))
    return fail("q and k must be 16-bit [B, S, H * D] buffers");
  Type outElement =
      quantizes ? Float8E4M3FNType::get(func.getContext()) : element;
  if (!out || out.getElementType() != outElement)
    return fail("the output must be " +
                Twine(quantizes ? "E4M3" : "of q's type"));
  int64_t headDim = q.getDimSize(2) / spec.getHeads();
  int32_t dtype = *mte::getDType(element);

  auto module = func->getParentOfType<ModuleOp>();
  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
  func::FuncOp entry =
      MTE_DECLARE_KERNEL_ENTRY_POINT(moduleBuilder, module, mte_cuda_attention);
  std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
  for (SymbolTable::SymbolUse use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call)
      return fail("used other than by a call");
    OpBuilder b(call);
    Location loc = call.getLoc();
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i64, v);
    };
    auto toI64 = [&](Value index) -> Value {
      return arith::IndexCastOp::create(b, loc, i64, index);
    };
    SmallVector<Value> addresses, strides;
    for (unsigned i : {0u, 1u, 2u, outputIndex}) {
      memref::ExtractStridedMetadataOp metadata;
      addresses.push_back(
          bufferAddress(b, loc, call.getOperand(i), &metadata));
      strides.push_back(toI64(metadata.getStrides()[0]));
      strides.push_back(toI64(metadata.getStrides()[1]));
    }
    // A bias of one row serves every batch: batch stride 0.
    Value biasAddress = constant(0), biasBatchStride = constant(0);
    if (hasKeyBias) {
      Value bias = call.getOperand(4);
      biasAddress = bufferAddress(b, loc, bias);
      auto biasType = cast<MemRefType>(bias.getType());
      if (biasType.getDimSize(0) != 1)
        biasBatchStride = constant(biasType.getDimSize(1));
    }
    // The scale is element `index` of its vector; 0: no FP8 output.
    Value scaleAddress = constant(0), rowMaxAddress = constant(0);
    if (quantizes) {
      Value vector = bufferAddress(b, loc, call.getOperand(scaleIndex));
      Value offset = arith::MulIOp::create(
          b, loc, call.getOperand(scaleIndex + 1), constant(4));
      scaleAddress = arith::AddIOp::create(b, loc, vector, offset);
    }
    if (spec.getAmax())
      rowMaxAddress = bufferAddress(b, loc, call.getOperands().back());
    auto qType = cast<MemRefType>(call.getOperand(0).getType());
    auto kType = cast<MemRefType>(call.getOperand(1).getType());
    SmallVector<Value> operands(addresses);
    operands.append({constant(qType.getDimSize(0)), constant(spec.getHeads()),
                     constant(spec.getKvHeads()), constant(qType.getDimSize(1)),
                     constant(kType.getDimSize(1)), constant(headDim)});
    operands.append(strides);
    operands.append(
        {call.getOperand(3),
         arith::ConstantIntOp::create(b, loc, i32, spec.getCausal()),
         arith::ConstantIntOp::create(b, loc, i32, dtype), biasAddress,
         biasBatchStride, scaleAddress, rowMaxAddress});
    func::CallOp::create(b, loc, entry, operands);
    call.erase();
  }
  func.erase();
  return success();
}
