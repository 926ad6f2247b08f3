//===- TransformerDialect.h - transformer dialect ---------------*- C++ -*-===//

#ifndef MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_H
#define MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"
#include "mte/Dialect/Transformer/IR/WeightProvenance.h"

#include <memory>

#include "mte/Dialect/Transformer/IR/TransformerDialect.h.inc"

#endif // MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_H
