//===- ParallelPlanner.cpp - propose a parallel layout --------------------===//
//
// The prediction follows what the parallel passes build (docs/sharding.md):
// tensor parallelism splits the linears and attention (their FLOPs, weights
// and activations) and all-reduces each attention's and MLP's output (two
// per layer; with --sp, a reduce-scatter and an all-gather moving as much,
// and the token-wise ops between the blocks split too); data parallelism
// and micro-batches split the activations
// (the weights are read once per micro-batch); pipeline stages are cut as
// mte-pipeline-parallel cuts them, and run GPipe's order: the first
// micro-batch crosses every stage, each later one adds the slowest stage.
// A collective over n ranks of `bytes` costs alpha-beta: an all-reduce
// 2(n-1) alpha + 2(n-1)/n bytes / bandwidth (a ring), a send alpha + bytes
// / bandwidth. Ranks are laid out [pp, dp, tp], row-major: a group's
// bandwidth is NVLink's when its ranks share a node, the network's when not.
//
//===----------------------------------------------------------------------===//

#include "ParallelPlanner.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/Transforms/CostModel.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace mlir;
using namespace mte::driver;
using namespace mte::transformer;

namespace {

/// What the planner reads of the model.
struct ModelProfile {
  SmallVector<OpCost> ops;
  /// Whether each op is an attention (one layer's pair of all-reduces).
  SmallVector<bool> attention;
  int64_t heads = 0, kvHeads = 0, batch = 0;
  /// A layer's output (the residual stream, what an all-reduce and a
  /// stage hand-off move) and the model's outputs, for the whole batch.
  double hiddenBytes = 0, outputBytes = 0;
};

ModelProfile profile(func::FuncOp forward) {
  ModelProfile model;
  for (Operation &op : forward.getBody().front().without_terminator()) {
    if (op.getNumOperands() == 0)
      continue; // constants: read by the ops that take them
    model.ops.push_back(costOf(&op));
    auto attention = dyn_cast<AttentionOp>(&op);
    model.attention.push_back(bool(attention));
    if (attention && !model.heads) {
      model.heads = attention.getNumHeads();
      model.kvHeads = attention.getNumKvHeads();
      model.hiddenBytes = bytesOf(attention.getType());
    }
  }
  for (Type type : forward.getResultTypes())
    model.outputBytes += bytesOf(type);
  for (Type type : forward.getArgumentTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && tensor.getRank() > 0 && !model.batch)
      model.batch = tensor.getDimSize(0);
  return model;
}

double allReduce(double bytes, int64_t ranks, double bandwidth,
                 double latency) {
  if (ranks <= 1)
    return 0;
  return 2.0 * (ranks - 1) * latency +
         2.0 * (ranks - 1) / ranks * bytes / bandwidth;
}

LayoutPrediction predict(const ModelProfile &model, const Cluster &cluster,
                         int64_t tp, int64_t pp, int64_t dp, int64_t k,
                         bool sp) {
  DeviceRates rates;
  LayoutPrediction p;
  p.tp = tp, p.pp = pp, p.dp = dp, p.microBatches = k;
  p.sequenceParallel = sp;
  // The ranks an op is split among.
  auto splitOf = [&](const OpCost &op) -> double {
    return op.tensorParallel || sp ? tp : 1;
  };
  double parts = double(dp) * k;
  auto link = [&](int64_t span) {
    bool local = span <= cluster.gpusPerNode;
    return std::make_pair(local ? cluster.nvlinkBandwidth
                                : cluster.networkBandwidth,
                          local ? cluster.nvlinkLatency
                                : cluster.networkLatency);
  };
  auto [tpBandwidth, tpLatency] = link(tp);
  auto [dpBandwidth, dpLatency] = link(tp * dp);
  auto [ppBandwidth, ppLatency] = link(tp * dp * pp);

  // Each op's time per micro-batch, and the stages cut by it.
  size_t n = model.ops.size();
  SmallVector<double> time(n);
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    const OpCost &op = model.ops[i];
    total += time[i] = op.seconds(rates, parts, splitOf(op));
  }
  double layerComm =
      2 * allReduce(model.hiddenBytes / parts, tp, tpBandwidth, tpLatency);
  SmallVector<double> stageTime(pp, 0), stageComm(pp, 0), stageWeights(pp, 0);
  double cumulative = 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t stage = std::min<int64_t>(pp - 1, int64_t(cumulative / total * pp));
    cumulative += time[i];
    const OpCost &op = model.ops[i];
    double comm = model.attention[i] ? layerComm : 0;
    stageTime[stage] += time[i] + comm;
    stageComm[stage] += comm;
    stageWeights[stage] += op.weightBytes / (op.tensorParallel ? tp : 1);
    p.activationBytes =
        std::max(p.activationBytes, op.activationBytes / parts / splitOf(op));
  }
  double handOff =
      pp > 1 ? ppLatency + model.hiddenBytes / parts / ppBandwidth : 0;
  // GPipe: micro-batch 0 through every stage, then one slowest stage each.
  size_t slowest = std::max_element(stageTime.begin(), stageTime.end()) -
                   stageTime.begin();
  double sum = 0, comm = 0;
  for (int64_t s = 0; s < pp; ++s) {
    sum += stageTime[s];
    comm += stageComm[s];
  }
  p.latency = sum + (pp - 1) * handOff +
              (k - 1) * (stageTime[slowest] + handOff);
  p.communication = comm + (pp - 1) * handOff +
                    (k - 1) * (stageComm[slowest] + handOff);
  double output = 0;
  if (pp > 1)
    output += ppLatency + model.outputBytes / dp / ppBandwidth;
  if (dp > 1)
    output += dpLatency + model.outputBytes * (dp - 1) / dp / dpBandwidth;
  p.latency += output;
  p.communication += output;
  p.throughput = model.batch / p.latency;
  p.weightBytes = *std::max_element(stageWeights.begin(), stageWeights.end());
  p.fits = p.weightBytes + p.activationBytes <= cluster.gpuMemory;
  return p;
}

} // namespace

std::vector<LayoutPrediction>
mte::driver::planLayouts(func::FuncOp forward, const Cluster &cluster) {
  ModelProfile model = profile(forward);
  std::vector<LayoutPrediction> layouts;
  int64_t layers = llvm::count(model.attention, true);
  int64_t g = cluster.gpus;
  for (int64_t tp = 1; tp <= g; ++tp) {
    if (g % tp || tp > cluster.gpusPerNode)
      continue;
    // Heads divide among the ranks; key/value heads divide or are
    // replicated (docs/sharding.md).
    if (model.heads && (model.heads % tp ||
                        (model.kvHeads % tp && tp % model.kvHeads)))
      continue;
    for (int64_t pp = 1; pp <= g / tp; ++pp) {
      if ((g / tp) % pp || (pp > 1 && pp > std::max<int64_t>(layers, 1)))
        continue;
      int64_t dp = g / tp / pp;
      if (!model.batch || model.batch % dp)
        continue;
      // Micro-batches fill a pipeline; without one they only add reads.
      for (int64_t k = 1; k <= model.batch / dp; k *= 2) {
        if ((model.batch / dp) % k || (pp == 1 && k > 1))
          continue;
        for (bool sp : {false, true})
          if (!sp || tp > 1)
            layouts.push_back(predict(model, cluster, tp, pp, dp, k, sp));
      }
    }
  }
  std::stable_sort(layouts.begin(), layouts.end(),
                   [](const LayoutPrediction &a, const LayoutPrediction &b) {
                     if (a.fits != b.fits)
                       return a.fits;
                     return a.latency < b.latency;
                   });
  return layouts;
}

void mte::driver::printPlan(ArrayRef<LayoutPrediction> layouts,
                            const Cluster &cluster, int64_t batch,
                            llvm::raw_ostream &os) {
  constexpr double kGiB = double(1ull << 30);
  os << "parallel layouts for " << cluster.gpus << " GPUs ("
     << llvm::format("%g", cluster.gpuMemory / kGiB) << " GiB each, "
     << cluster.gpusPerNode << " a node; NVLink "
     << llvm::format("%.0f", cluster.nvlinkBandwidth / 1e9)
     << " GB/s, network "
     << llvm::format("%.0f", cluster.networkBandwidth / 1e9)
     << " GB/s), batch " << batch << ", predicted on one H200's rates:\n";
  os << "     tp  sp  pp  dp  micro  latency ms    seq/s  comm %  weights GiB"
        "  activations GiB\n";
  for (auto [i, p] : llvm::enumerate(layouts)) {
    os << (i == 0 && p.fits ? "  * " : p.fits ? "    " : "  x ")
       << llvm::format("%3lld %3s %3lld %3lld %6lld %11.4f %8.1f %7.1f "
                       "%12.4f %16.4f\n",
                       (long long)p.tp, p.sequenceParallel ? "sp" : "-",
                       (long long)p.pp, (long long)p.dp,
                       (long long)p.microBatches, p.latency * 1e3,
                       p.throughput, 100 * p.communication / p.latency,
                       p.weightBytes / kGiB, p.activationBytes / kGiB);
  }
  if (layouts.empty()) {
    os << "no layout of " << cluster.gpus << " GPUs divides the model (its "
       << "heads among --tp, its layers among --pp, its batch among --dp)\n";
    return;
  }
  if (!layouts.front().fits) {
    os << "no layout fits in " << llvm::format("%g", cluster.gpuMemory / kGiB)
       << " GiB a GPU\n";
    return;
  }
  const LayoutPrediction &pick = layouts.front();
  os << "pick:";
  if (pick.tp > 1)
    os << " --tp=" << pick.tp << (pick.sequenceParallel ? " --sp" : "");
  if (pick.pp > 1)
    os << " --pp=" << pick.pp << " --micro-batches=" << pick.microBatches;
  if (pick.dp > 1)
    os << " --dp=" << pick.dp;
  if (pick.tp == 1 && pick.pp == 1 && pick.dp == 1)
    os << " one GPU";
  os << " (the lowest predicted latency that fits)\n";
}
