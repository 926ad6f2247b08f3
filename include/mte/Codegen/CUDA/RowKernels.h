//===- RowKernels.h - the contract of the row kernels -----------*- C++ -*-===//
//
// mte-convert-transformer-to-row-kernels declares a row kernel as a private
// function carrying a #kernel.row_kernel under kRowKernelAttrName;
// mte-build-row-kernels gives it its body.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_CODEGEN_CUDA_ROWKERNELS_H
#define MTE_CODEGEN_CUDA_ROWKERNELS_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"

namespace mte {

/// The attribute of a row kernel's declaration that says what it computes:
/// a #kernel.row_kernel.
constexpr llvm::StringLiteral kRowKernelAttrName = "mte.row_kernel";

/// Whether a row kernel can take rows of `length` elements of
/// `elementType` (a row must fit the registers of at most 1024 threads).
bool canBuildRowKernel(int64_t length, mlir::Type elementType);

} // namespace mte

#endif // MTE_CODEGEN_CUDA_ROWKERNELS_H
