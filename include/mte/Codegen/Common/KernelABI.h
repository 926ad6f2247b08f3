//===- KernelABI.h - the runtime entry points model code calls --*- C++ -*-===//
//
// Models call libmte_runtime's own entry points (include/mte-c/KernelABI.h
// declares them): CUDA models its GEMM and attention, sharded models its
// collectives. The compiler declares each callee with the
// MLIR function type derived from that C prototype, so a prototype change
// changes what the compiler emits, and the runtime, which includes the same
// header, cannot define another signature.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_CODEGEN_COMMON_KERNELABI_H
#define MTE_CODEGEN_COMMON_KERNELABI_H

#include "mte-c/KernelABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <type_traits>

namespace mte::kernel_abi {

/// The MLIR type of one C parameter type of the ABI: device addresses
/// (uint64_t) and int64_t as i64, int32_t as i32, float as f32.
template <typename T>
mlir::Type getParameterType(mlir::Builder &b) {
  if constexpr (std::is_same_v<T, uint64_t> || std::is_same_v<T, int64_t>)
    return b.getI64Type();
  else if constexpr (std::is_same_v<T, int32_t>)
    return b.getI32Type();
  else if constexpr (std::is_same_v<T, float>)
    return b.getF32Type();
  else
    static_assert(!sizeof(T), "a parameter type the kernel ABI does not use");
}

template <typename Fn>
struct FunctionTypeOf;
template <typename Result, typename... Params>
struct FunctionTypeOf<Result(Params...)> {
  static mlir::FunctionType get(mlir::Builder &b) {
    if constexpr (std::is_void_v<Result>)
      return b.getFunctionType({getParameterType<Params>(b)...}, {});
    else
      return b.getFunctionType({getParameterType<Params>(b)...},
                               {getParameterType<Result>(b)});
  }
};

/// The private declaration of entry point `name` of type `Fn` in `module`;
/// unless it exists, created where `builder` inserts (in `module`'s body).
template <typename Fn>
mlir::func::FuncOp declareEntryPoint(mlir::OpBuilder &builder,
                                     mlir::ModuleOp module,
                                     llvm::StringRef name) {
  if (auto func = module.lookupSymbol<mlir::func::FuncOp>(name))
    return func;
  auto func = mlir::func::FuncOp::create(builder, module.getLoc(), name,
                                         FunctionTypeOf<Fn>::get(builder));
  func.setPrivate();
  return func;
}

} // namespace mte::kernel_abi

/// Declares the runtime's entry point `entry` (a function KernelABI.h
/// declares) in `module` with `builder`: its name and its type both come
/// from the prototype.
#define MTE_DECLARE_KERNEL_ENTRY_POINT(builder, module, entry)                 \
  ::mte::kernel_abi::declareEntryPoint<decltype(::entry)>(builder, module,     \
                                                          #entry)

#endif // MTE_CODEGEN_COMMON_KERNELABI_H
