//===- AmaxesCall.cpp - the delayed update's amaxes as a runtime call -----===//
//
// An amaxes declaration (#kernel.row_kernel<kind = amaxes>) has no body:
// every call of it becomes a call of the runtime's mte_cuda_amaxes with a
// table of its inputs -- address, element count, mte_dtype -- on the host
// stack of the calling function.
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include "mte/Codegen/Common/KernelABI.h"
#include "mte/Support/DType.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/DebugStringHelper.h"

using namespace mlir;

LogicalResult mte::cuda::lowerAmaxesCalls(func::FuncOp func) {
  auto fail = [&](const Twine &why) {
    return func.emitError("cannot lower the amaxes '")
           << func.getSymName() << "': " << why;
  };
  ArrayRef<Type> types = func.getArgumentTypes();
  int64_t count = static_cast<int64_t>(types.size()) - 1;
  auto out = count > 0 ? dyn_cast<MemRefType>(types.back()) : nullptr;
  if (!out || out.getShape() != ArrayRef<int64_t>{count} ||
      !out.getElementType().isF32() || !out.getLayout().isIdentity())
    return fail("needs inputs, then a contiguous f32 output of one element "
                "per input");
  // Each input's element count and type.
  SmallVector<std::pair<int64_t, int64_t>> entries;
  for (Type type : types.drop_back()) {
    auto input = dyn_cast<MemRefType>(type);
    Type element = input ? input.getElementType() : Type();
    if (!input || !input.hasStaticShape() || !input.getLayout().isIdentity() ||
        !(element.isF32() || element.isBF16() || element.isF16()))
      return fail("an input of type " + debugString(type) +
                  " is not a contiguous f32, bf16 or f16 buffer");
    entries.push_back({input.getNumElements(), *mte::getDType(element)});
  }

  auto module = func->getParentOfType<ModuleOp>();
  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
  func::FuncOp entry =
      MTE_DECLARE_KERNEL_ENTRY_POINT(moduleBuilder, module, mte_cuda_amaxes);
  std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
  for (SymbolTable::SymbolUse use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    auto caller = call ? call->getParentOfType<func::FuncOp>() : nullptr;
    if (!caller)
      return fail("used other than by a call in a function");
    Location loc = call.getLoc();
    Type i64 = IntegerType::get(func.getContext(), 64);
    auto pointer = LLVM::LLVMPointerType::get(func.getContext());
    // The table, [count][3] i64, allocated once at the caller's entry (a
    // memref.alloca would become device memory in HostBuffersToGPU).
    auto entryBuilder = OpBuilder::atBlockBegin(&caller.getBody().front());
    Value table = LLVM::AllocaOp::create(
        entryBuilder, loc, pointer, i64,
        LLVM::ConstantOp::create(entryBuilder, loc, i64, 3 * count),
        /*alignment=*/8);

    OpBuilder b(call);
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i64, v);
    };
    auto store = [&](Value value, int64_t at) {
      Value slot = LLVM::GEPOp::create(b, loc, pointer, i64, table,
                                       ArrayRef<LLVM::GEPArg>{
                                           static_cast<int32_t>(at)});
      LLVM::StoreOp::create(b, loc, value, slot);
    };
    for (auto [i, fields] : llvm::enumerate(entries)) {
      store(bufferAddress(b, loc, call.getOperand(i)), 3 * i);
      store(constant(fields.first), 3 * i + 1);
      store(constant(fields.second), 3 * i + 2);
    }
    // Nothing is allocated between the table's stores and the call: the
    // activation planner ends an input's lifetime at its address's last
    // use, here a store.
    Value tableAddress = LLVM::PtrToIntOp::create(b, loc, i64, table);
    func::CallOp::create(
        b, loc, entry,
        ValueRange{tableAddress, constant(count),
                   bufferAddress(b, loc, call.getOperand(count))});
    call.erase();
  }
  func.erase();
  return success();
}
