//===- ShardingInterfaceImpl.h - shard models of transformer ops -*- C++ -*-===//
//
// Upstream MLIR's shard::ShardingInterface for the transformer ops that
// tensor parallelism splits, so that shard-partition turns an annotated
// global program into the program of one rank.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_DIALECT_TRANSFORMER_TRANSFORMS_SHARDINGINTERFACEIMPL_H
#define MTE_DIALECT_TRANSFORMER_TRANSFORMS_SHARDINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mte::transformer {

void registerShardingInterfaceExternalModels(mlir::DialectRegistry &registry);

} // namespace mte::transformer

#endif // MTE_DIALECT_TRANSFORMER_TRANSFORMS_SHARDINGINTERFACEIMPL_H
