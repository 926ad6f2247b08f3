//===- BuildRowKernels.h - bodies of the row kernels ------------*- C++ -*-===//

#ifndef MTE_CONVERSION_BUILDROWKERNELS_BUILDROWKERNELS_H
#define MTE_CONVERSION_BUILDROWKERNELS_BUILDROWKERNELS_H

#include "mlir/IR/Types.h"
#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_BUILDROWKERNELS
#include "mte/Conversion/Passes.h.inc"

/// The attribute of a row kernel's declaration that says what it computes:
/// a #kernel.row_kernel.
constexpr llvm::StringLiteral kRowKernelAttrName = "mte.row_kernel";

/// Whether a row kernel can take rows of `length` elements of
/// `elementType` (a row must fit the registers of at most 1024 threads).
bool canBuildRowKernel(int64_t length, mlir::Type elementType);

} // namespace mte

#endif // MTE_CONVERSION_BUILDROWKERNELS_BUILDROWKERNELS_H
