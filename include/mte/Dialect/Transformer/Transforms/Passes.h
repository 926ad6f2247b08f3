//===- Passes.h - transformer dialect passes --------------------*- C++ -*-===//

#ifndef MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H
#define MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Pass/Pass.h"

namespace mte::transformer {

#define GEN_PASS_DECL
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"

} // namespace mte::transformer

#endif // MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_H
