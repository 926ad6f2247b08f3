//===- CostModel.cpp - what an op costs on a GPU --------------------------===//

#include "mte/Dialect/Transformer/Transforms/CostModel.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/Matchers.h"

#include <algorithm>

using namespace mlir;
using namespace mte::transformer;

int64_t mte::transformer::bytesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return tensor.getNumElements() *
         llvm::divideCeil(tensor.getElementTypeBitWidth(), 8);
}

static double product(ArrayRef<int64_t> shape) {
  double n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double OpCost::seconds(const DeviceRates &rates, double parts,
                       double split) const {
  double share = 1 / (parts * split);
  double compute = gemmFlops * share / rates.gemmFlops +
                   fp8GemmFlops * share / rates.fp8GemmFlops +
                   attentionFlops * share / rates.attentionFlops;
  double memory = (activationBytes * share + weightBytes / split) /
                  rates.bytes;
  return std::max(compute, memory) + rates.launchSeconds;
}

OpCost mte::transformer::costOf(Operation *op) {
  OpCost cost;
  for (Value operand : op->getOperands()) {
    double bytes = bytesOf(operand.getType());
    if (matchPattern(operand, m_Constant()))
      cost.weightBytes += bytes;
    else
      cost.activationBytes += bytes;
  }
  for (Type type : op->getResultTypes())
    cost.activationBytes += bytesOf(type);
  if (auto linear = dyn_cast<LinearOp>(op)) {
    double flops = 2 * product(linear.getInput().getType().getShape()) *
                   linear.getOutput().getType().getShape().back();
    bool fp8 = isa<Float8E4M3FNType>(
        linear.getInput().getType().getElementType());
    (fp8 ? cost.fp8GemmFlops : cost.gemmFlops) = flops;
    cost.tensorParallel = true;
  } else if (auto attention = dyn_cast<AttentionOp>(op)) {
    ArrayRef<int64_t> q = attention.getQuery().getType().getShape();
    double skv = attention.getKey().getType().getDimSize(1);
    // Q K^T and P V over every head: 2 * 2 * B * Sq * Skv * (H * D).
    cost.attentionFlops = 4 * product(q.take_front(2)) * skv * q[2];
    cost.tensorParallel = true;
  } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
    auto lhs = cast<RankedTensorType>(matmul->getOperand(0).getType());
    auto out = cast<RankedTensorType>(matmul->getResult(0).getType());
    cost.gemmFlops = 2 * product(out.getShape()) * lhs.getShape().back();
  } else {
    for (Type type : op->getResultTypes())
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && tensor.hasStaticShape())
        cost.otherFlops += tensor.getNumElements();
  }
  return cost;
}
