//===- BuildRowKernels.cpp - bodies of the row kernels --------------------===//
//
// Row kernels are requested by declarations that carry a
// #kernel.row_kernel (mte-convert-transformer-to-row-kernels) and defined
// here, after bufferization, on the buffers of their declarations: each
// kind's body is built with RowKernelBuilder (NormKernel.cpp,
// AttentionSoftmaxKernel.cpp, RotaryKernel.cpp); fused attention becomes a
// runtime call (FlashAttentionCall.cpp), and so do the delayed update's
// amaxes (AmaxesCall.cpp).
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mte/Codegen/CUDA/Passes.h"
#include "mte/Codegen/CUDA/RowKernels.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/ADT/MapVector.h"

namespace mte {
#define GEN_PASS_DEF_BUILDROWKERNELS
#include "mte/Codegen/CUDA/Passes.h.inc"
} // namespace mte

using namespace mlir;
using namespace mte::cuda;
using mte::kernel::RowKernelAttr;
using mte::kernel::RowKernelKind;

namespace {

/// Defines `func` from its `mte.row_kernel` attribute, or says why not.
LogicalResult defineRowKernel(func::FuncOp func, RowKernelAttr spec) {
  switch (spec.getKind()) {
  case RowKernelKind::LayerNorm:
  case RowKernelKind::RMSNorm:
    return defineNormKernel(func, spec);
  case RowKernelKind::AttentionSoftmax:
    return defineAttentionSoftmaxKernel(func, spec);
  case RowKernelKind::Rotary:
    return defineRotaryKernel(func, spec);
  case RowKernelKind::Amax:
    return defineAmaxKernel(func, spec);
  case RowKernelKind::Swiglu:
  case RowKernelKind::Geglu:
  case RowKernelKind::GegluTanh:
    return defineGatedKernel(func, spec);
  case RowKernelKind::FlashAttention:
  case RowKernelKind::Amaxes:
    break; // calls, not kernels: see lower*Calls
  }
  return invalidKernel(func, "row", "unknown kind");
}

//===----------------------------------------------------------------------===//
// Declarations on views with dynamic layouts
//===----------------------------------------------------------------------===//

bool hasStaticLayout(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.hasStaticShape() &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// A kernel may read a buffer through a view with a dynamic layout (a
/// column slice, whatever its offset and strides turn out to be after
/// bufferization); each call passes a memref.cast of a view whose layout is
/// static. Declares `func` once per distinct set of such static types
/// (`<name>_v<k>` when there are several), so that the kernel knows its
/// strides and the alignment of its vectors, and makes each call pass the
/// views themselves. An operand with no static layout behind it is copied
/// into a fresh buffer for its call. Returns the declarations to define.
SmallVector<func::FuncOp> specializeOnLayouts(func::FuncOp func) {
  if (llvm::all_of(func.getArgumentTypes(), [](Type t) {
        auto memref = dyn_cast<MemRefType>(t);
        return !memref || hasStaticLayout(memref);
      }))
    return {func};
  auto module = func->getParentOfType<ModuleOp>();
  SmallVector<func::CallOp> calls;
  std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
  if (uses)
    for (SymbolTable::SymbolUse use : *uses)
      if (auto call = dyn_cast<func::CallOp>(use.getUser()))
        calls.push_back(call);

  llvm::MapVector<FunctionType, SmallVector<func::CallOp>> bySignature;
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    SmallVector<Value> operands;
    for (Value operand : call.getOperands()) {
      if (auto cast = operand.getDefiningOp<memref::CastOp>())
        operand = cast.getSource();
      auto type = dyn_cast<MemRefType>(operand.getType());
      if (type && !hasStaticLayout(type)) {
        auto copyType = MemRefType::get(
            cast<MemRefType>(call.getOperand(operands.size()).getType())
                .getShape(),
            type.getElementType());
        Value copy = memref::AllocOp::create(b, call.getLoc(), copyType);
        memref::CopyOp::create(b, call.getLoc(), operand, copy);
        OpBuilder after(call->getBlock(), std::next(call->getIterator()));
        memref::DeallocOp::create(after, call.getLoc(), copy);
        operand = copy;
      }
      operands.push_back(operand);
    }
    call->setOperands(operands);
    bySignature[b.getFunctionType(TypeRange(ValueRange(operands)), {})]
        .push_back(call);
  }

  if (bySignature.size() == 1) {
    func.setType(bySignature.front().first);
    return {func};
  }
  SmallVector<func::FuncOp> declarations;
  SymbolTable symbols(module);
  for (auto [index, entry] : llvm::enumerate(bySignature)) {
    auto &[signature, sites] = entry;
    auto declaration = func.clone();
    declaration.setType(signature);
    declaration.setSymName((func.getSymName() + "_v" + Twine(index)).str());
    // Renamed further if the module has that name already.
    symbols.insert(declaration);
    for (func::CallOp call : sites)
      call.setCallee(declaration.getSymName());
    declarations.push_back(declaration);
  }
  func.erase();
  return declarations;
}

struct BuildRowKernelsPass
    : mte::impl::BuildRowKernelsBase<BuildRowKernelsPass> {
  void runOnOperation() override {
    for (auto func :
         llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>())) {
      auto spec = func->getAttrOfType<RowKernelAttr>(mte::kRowKernelAttrName);
      if (!spec || !func.isExternal())
        continue;
      if (spec.getKind() == RowKernelKind::FlashAttention) {
        if (failed(lowerFlashAttentionCalls(func, spec)))
          return signalPassFailure();
        continue;
      }
      if (spec.getKind() == RowKernelKind::Amaxes) {
        if (failed(lowerAmaxesCalls(func)))
          return signalPassFailure();
        continue;
      }
      for (func::FuncOp declaration : specializeOnLayouts(func)) {
        if (failed(defineRowKernel(declaration, spec)))
          return signalPassFailure();
        declaration->removeAttr(mte::kRowKernelAttrName);
      }
    }
  }
};

} // namespace
