//===- ParallelPlanner.h - propose a parallel layout ------------*- C++ -*-===//
//
// mte-compile --plan-parallel: the layouts `--tp x --pp x --dp` (and the
// micro-batches of a pipeline) that a number of GPUs can run a model in,
// with the latency, throughput and memory per GPU predicted from the
// compiler's cost model of each op (CostModel.h) and an alpha-beta model of
// each collective, and the one it picks.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_DRIVER_PARALLELPLANNER_H
#define MTE_LIB_DRIVER_PARALLELPLANNER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mte::driver {

/// The machines a model is planned for.
struct Cluster {
  int64_t gpus = 1;
  int64_t gpusPerNode = 8;
  /// Memory per GPU, in bytes.
  double gpuMemory = 141.0 * (1ull << 30);
  /// Bandwidth (bytes/s, one direction per GPU) and latency (s) of a
  /// collective step within a node (NVLink) and between nodes.
  double nvlinkBandwidth = 450e9, nvlinkLatency = 5e-6;
  double networkBandwidth = 50e9, networkLatency = 15e-6;
};

/// A layout and what it is predicted to take.
struct LayoutPrediction {
  int64_t tp = 1, pp = 1, dp = 1, microBatches = 1;
  /// Sequence parallelism within the tensor-parallel ranks (--sp).
  bool sequenceParallel = false;
  double latency = 0;       // seconds per batch
  double throughput = 0;    // batches per second times the batch
  double communication = 0; // seconds of it on the critical path
  double weightBytes = 0;   // per GPU, the largest stage's
  double activationBytes = 0;
  bool fits = false;
};

/// Every layout of `cluster.gpus` GPUs that `forward` (fused, unsharded,
/// for the whole batch) divides into, best first: those that fit in
/// memory, by latency, then the others. Empty when none divides.
std::vector<LayoutPrediction> planLayouts(mlir::func::FuncOp forward,
                                          const Cluster &cluster);

/// Prints the layouts as a table and the pick.
void printPlan(llvm::ArrayRef<LayoutPrediction> layouts,
               const Cluster &cluster, int64_t batch, llvm::raw_ostream &os);

} // namespace mte::driver

#endif // MTE_LIB_DRIVER_PARALLELPLANNER_H
