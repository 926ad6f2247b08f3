//===- KernelOps.h - kernel dialect -----------------------------*- C++ -*-===//

#ifndef MTE_DIALECT_KERNEL_IR_KERNELOPS_H
#define MTE_DIALECT_KERNEL_IR_KERNELOPS_H

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#include "mte/Dialect/Kernel/IR/KernelDialect.h.inc"
#include "mte/Dialect/Kernel/IR/KernelEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mte/Dialect/Kernel/IR/KernelAttrs.h.inc"

#define GET_OP_CLASSES
#include "mte/Dialect/Kernel/IR/KernelOps.h.inc"

#endif // MTE_DIALECT_KERNEL_IR_KERNELOPS_H
