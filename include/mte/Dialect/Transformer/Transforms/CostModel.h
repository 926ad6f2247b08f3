//===- CostModel.h - what an op costs on a GPU ------------------*- C++ -*-===//
//
// The cost model the parallel passes and the layout planner share: an op's
// work (FLOPs, by the unit that does them) and traffic (bytes of the
// activations and weights it reads and writes), and its time under a
// roofline of a device's measured rates. The rates default to one H200's,
// measured with cuBLASLt, mte's attention kernel and a device copy
// (../shared/notes/h200-anchors.md; docs/sharding.md cites the table).
//
//===----------------------------------------------------------------------===//

#ifndef MTE_DIALECT_TRANSFORMER_TRANSFORMS_COSTMODEL_H
#define MTE_DIALECT_TRANSFORMER_TRANSFORMS_COSTMODEL_H

#include "mlir/IR/Operation.h"

namespace mte::transformer {

/// The rates a device reaches, per second.
struct DeviceRates {
  /// GEMMs (linears, matmuls) in 16-bit and FP8 E4M3 operands: cuBLASLt at
  /// LLM shapes (8192 x 4096..14336 x 4096: 606..760 and 1068..1371).
  double gemmFlops = 690e12;
  double fp8GemmFlops = 1250e12;
  /// Attention (mte's kernel, counting the pairs the mask keeps).
  double attentionFlops = 270e12;
  /// Bytes read plus written (a device copy).
  double bytes = 4.3e12;
  /// What a kernel launch adds (a CUDA graph's replay).
  double launchSeconds = 2e-6;
};

/// An op's work and traffic.
struct OpCost {
  double gemmFlops = 0, fp8GemmFlops = 0, attentionFlops = 0, otherFlops = 0;
  /// Bytes of the operands and results that are not constants, and of the
  /// constant operands (weights).
  double activationBytes = 0, weightBytes = 0;
  /// A linear or an attention: the work tensor parallelism splits.
  bool tensorParallel = false;

  /// The time on `rates` when a `1 / parts` share of the activations is
  /// run (micro-batches, replicas) and a `1 / split` share of the op is
  /// (tensor parallelism: its weights and activations alike).
  double seconds(const DeviceRates &rates, double parts = 1,
                 double split = 1) const;
};

/// The bytes of a statically shaped tensor type; 0 for others.
int64_t bytesOf(mlir::Type type);

/// The cost of `op` (its nested ops included).
OpCost costOf(mlir::Operation *op);

} // namespace mte::transformer

#endif // MTE_DIALECT_TRANSFORMER_TRANSFORMS_COSTMODEL_H
