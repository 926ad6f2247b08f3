//===- DeviceGrid.h - the device grid the parallel passes share -*- C++ -*-===//
//
// A parallel model runs on one `shard.grid` whose axes are, outermost
// first, data parallelism, pipeline stages and tensor parallelism
// ([dp, pp, tp], each present only when asked for): tensor parallelism's
// ranks are neighbours in the linear order (one NVLink island), as in
// Megatron-LM. Each pass that adds a kind of parallelism prepends its axis
// to the grid the passes before it left.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_DIALECT_TRANSFORMER_TRANSFORMS_DEVICEGRID_H
#define MTE_DIALECT_TRANSFORMER_TRANSFORMS_DEVICEGRID_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mte::transformer {

/// The name of a grid of several axes; a grid of one is named for its kind
/// of parallelism (`@tp`, `@pp`, `@dp`).
inline constexpr llvm::StringLiteral kComposedGridName = "grid";

/// Prepends an axis of `extent` ranks to the module's device grid: every
/// shard op of the partitioned program then names the new grid, its axes
/// shifted by one (a process_multi_index of every axis lists the old ones).
/// A module without a grid gets a one-axis grid named `soloName`. Fails,
/// with an error, on a module of several grids, a grid of dynamic shape,
/// or shard ops that are not yet partitioned (shardings).
mlir::FailureOr<mlir::shard::GridOp>
prependGridAxis(mlir::ModuleOp module, int64_t extent, llvm::StringRef soloName);

/// On a function mte-pipeline-parallel made: the index of the pipeline
/// stage it runs (an i64).
inline constexpr llvm::StringLiteral kPipelineStageAttrName =
    "transformer.pipeline_stage";

/// On the scf.index_switch by which mte-pipeline-parallel's entry runs the
/// stage of the rank (case s: stage s; the default region: the last).
inline constexpr llvm::StringLiteral kPipelineDispatchAttrName =
    "transformer.pipeline_dispatch";

/// `type` for `parts` times its batch (its first dimension), as the passes
/// that split the batch (data parallelism, micro-batches) give their entry
/// functions; failure for a tensor without a static batch.
mlir::FailureOr<mlir::RankedTensorType> wholeBatchType(mlir::Type type,
                                                       int64_t parts);

/// For each index check of `func` (its `transformer.index_checks`), the
/// elements of the graph input it reads, as `func` takes it now; 0 for a
/// check of indices the model computes. The passes that split the batch
/// count a bad index's position in the whole batch by these (exact when the
/// indices are the input's elements in order, as an embedding's ids are).
llvm::SmallVector<int64_t> indexCheckElements(mlir::func::FuncOp func);

} // namespace mte::transformer

#endif // MTE_DIALECT_TRANSFORMER_TRANSFORMS_DEVICEGRID_H
