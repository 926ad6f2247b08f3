//===- InsertFP8Casts.cpp - run the GEMMs that pay in FP8 -----------------===//
//
// Quantizes the operands of the linears where FP8 pays: the weight once, at
// compile time, with a per-tensor scale from its amax; the input on every
// run, with current scaling (TransformerEngine's Float8CurrentScaling: the
// scale from this run's amax) or delayed scaling (TE's DelayedScaling: the
// scale from an amax history the model carries as state from run to run).
// Block scaling (TE's Float8BlockScaling) scales each 1 x 128 block of the
// input and each 128 x 128 block of the weight by a power of two instead;
// rowwise scaling (torchao's rowwise recipe) each row of the input and each
// output channel of the weight, by a power of two as well.
// The input is quantized as TE casts: times its scale (448 / amax), the
// GEMM reading the reciprocal. The linear then reads E4M3 with both scales
// and writes its float output
// type as before. A calibration build records the same amaxes and updates
// the same delayed-scaling state but quantizes nothing.
//
//===----------------------------------------------------------------------===//

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/IR/WeightProvenance.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"
#include "mte/Support/FloatBits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace mte::transformer {
#define GEN_PASS_DEF_INSERTFP8CASTS
#include "mte/Dialect/Transformer/Transforms/Passes.h.inc"
} // namespace mte::transformer

using namespace mlir;
using namespace mte::transformer;

namespace {

/// The largest finite E4M3 value.
constexpr float kE4M3Max = 448.0f;

/// The elements of a float constant as f32 bit patterns, when at hand.
std::optional<std::vector<uint32_t>> f32Bits(ElementsAttr value) {
  Type element = cast<ShapedType>(value.getType()).getElementType();
  int64_t count = cast<ShapedType>(value.getType()).getNumElements();
  std::vector<uint32_t> bits(count);
  auto widen = [&](const char *data) {
    for (int64_t i = 0; i < count; ++i) {
      if (element.isF32()) {
        std::memcpy(&bits[i], data + 4 * i, 4);
      } else if (element.isBF16()) {
        uint16_t h;
        std::memcpy(&h, data + 2 * i, 2);
        bits[i] = uint32_t(h) << 16;
      } else {
        return false;
      }
    }
    return true;
  };
  if (const void *data = resourceData(value))
    return widen(static_cast<const char *>(data)) ? std::optional(bits)
                                                  : std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || !isa<FloatType>(element))
    return std::nullopt;
  int64_t i = 0;
  for (APFloat v : dense.getValues<APFloat>()) {
    bool loses;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &loses);
    bits[i++] = static_cast<uint32_t>(v.bitcastToAPInt().getZExtValue());
  }
  return bits;
}

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// A weight quantized at compile time: E4M3 codes laid out [N, K] and the
/// dequantisation factor amax / 448 (1 for an all-zero or non-finite
/// weight, whose codes are then saturated or NaN as the values are), or
/// under block scaling one per 128 x 128 block, `blockScales`
/// [ceil(N / 128), K / 128], or under rowwise scaling one per output
/// channel, `blockScales` [N].
struct QuantizedWeight {
  ElementsAttr codes;
  float scale;
  DenseElementsAttr blockScales;
};

/// TransformerEngine's block-scaling scale_inv for a block of amax `amax`:
/// the reciprocal of 448 / amax rounded down to a power of two (the quotient
/// at most the largest f32; 1 when the amax is 0, inf or NaN).
float blockScaleInv(float amax) {
  if (!(amax > 0) || !std::isfinite(amax))
    return 1.0f;
  float scale = std::fmin(kE4M3Max / amax, std::numeric_limits<float>::max());
  uint32_t bits;
  std::memcpy(&bits, &scale, sizeof(bits));
  bits &= 0xFF800000u;
  std::memcpy(&scale, &bits, sizeof(bits));
  return 1.0f / scale;
}

/// `weight` ([K, N] when `kn`, else [N, K]) as E4M3 with a power-of-two
/// scale per `rowsPerBlock` x `colsPerBlock` block of its [N, K] form (0
/// columns: whole rows): 128 x 128 under block scaling, 1 x K (an output
/// channel) under rowwise scaling. An external weight stays external, the
/// block factors in the model's table.
std::optional<QuantizedWeight> quantizeWeightBlocks(ElementsAttr value, bool kn,
                                                    StringRef name,
                                                    int64_t rowsPerBlock,
                                                    int64_t colsPerBlock) {
  auto type = cast<RankedTensorType>(value.getType());
  std::optional<std::vector<uint32_t>> bits = f32Bits(value);
  if (!bits)
    return std::nullopt;
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  int64_t n = kn ? cols : rows, k = kn ? rows : cols;
  auto at = [&](int64_t i, int64_t j) { // element [i, j] of [N, K]
    return bitsToFloat((*bits)[kn ? j * cols + i : i * cols + j]);
  };
  int64_t blockRows = rowsPerBlock, blockCols = colsPerBlock ? colsPerBlock : k;
  int64_t rowBlocks = llvm::divideCeil(n, blockRows), colBlocks = k / blockCols;
  SmallVector<float> scales(rowBlocks * colBlocks);
  for (int64_t bi = 0; bi < rowBlocks; ++bi)
    for (int64_t bj = 0; bj < colBlocks; ++bj) {
      float amax = 0;
      for (int64_t i = bi * blockRows; i < std::min(n, (bi + 1) * blockRows);
           ++i)
        for (int64_t j = bj * blockCols; j < (bj + 1) * blockCols; ++j)
          amax = std::fmax(amax, std::fabs(at(i, j)));
      // fmax drops NaN: a block holding one keeps scale 1, as TE's would.
      scales[bi * colBlocks + bj] = blockScaleInv(amax);
    }
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      n * k, /*align=*/1, /*dataIsMutable=*/true);
  auto *out = reinterpret_cast<uint8_t *>(blob.getMutableData().data());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      float v = at(i, j);
      uint32_t b;
      std::memcpy(&b, &v, sizeof(b));
      // Dividing by a power of two is exact: the same codes as TE's
      // multiplication by the scale.
      out[i * k + j] = mte::quantizeF32BitsToE4M3(
          b, scales[(i / blockRows) * colBlocks + j / blockCols]);
    }
  MLIRContext *ctx = type.getContext();
  auto codesType = RankedTensorType::get({n, k}, Float8E4M3FNType::get(ctx));
  auto codes = DenseResourceElementsAttr::get(codesType, (name + ".e4m3").str(),
                                              std::move(blob));
  if (const void *source = resourceData(value))
    WeightProvenance::get(ctx).recordQuantization(
        resourceData(codes), source, codesType.getElementType(), 1.0f,
        kn ? uint64_t(rows) : 0, scales, uint64_t(k), uint64_t(blockRows),
        uint64_t(blockCols));
  auto scalesType =
      colsPerBlock
          ? RankedTensorType::get({rowBlocks, colBlocks}, Float32Type::get(ctx))
          : RankedTensorType::get({rowBlocks}, Float32Type::get(ctx));
  return QuantizedWeight{
      cast<ElementsAttr>(codes), 1.0f,
      DenseElementsAttr::get(scalesType, ArrayRef<float>(scales))};
}

std::optional<QuantizedWeight> quantizeWeight(ElementsAttr value, bool kn,
                                              StringRef name) {
  auto type = cast<RankedTensorType>(value.getType());
  std::optional<std::vector<uint32_t>> bits = f32Bits(value);
  if (!bits)
    return std::nullopt;
  float amax = 0;
  for (uint32_t b : *bits)
    amax = std::fmax(amax, std::fabs(bitsToFloat(b)));
  float scale = std::isfinite(amax) && amax > 0 ? amax / kE4M3Max : 1.0f;
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      rows * cols, /*align=*/1, /*dataIsMutable=*/true);
  auto *out = reinterpret_cast<uint8_t *>(blob.getMutableData().data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      // [K, N] is stored transposed: FP8 GEMMs read the weight K-major.
      out[kn ? c * rows + r : r * cols + c] =
          mte::quantizeF32BitsToE4M3((*bits)[r * cols + c], scale);
    }
  int64_t n = kn ? cols : rows, k = kn ? rows : cols;
  auto codesType = RankedTensorType::get(
      {n, k}, Float8E4M3FNType::get(type.getContext()));
  auto codes = DenseResourceElementsAttr::get(
      codesType, (name + ".e4m3").str(), std::move(blob));
  // An external weight stays external: the runtime redoes this when the
  // model opens.
  if (const void *source = resourceData(value))
    WeightProvenance::get(type.getContext())
        .recordQuantization(resourceData(codes), source,
                            codesType.getElementType(), scale,
                            kn ? uint64_t(rows) : 0);
  return QuantizedWeight{cast<ElementsAttr>(codes), scale};
}

/// The name of a constant's resource, for the quantized copy's.
std::string resourceName(ElementsAttr value) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    return resource.getRawHandle().getKey().str();
  return "weight";
}

Value scalarF32(OpBuilder &b, Location loc, float value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, value));
}

/// The input's scale (what its quantize multiplies by) and scale_inv (what
/// the GEMM reads) under current scaling, from `amax`.
Fp8ScaleOp currentScales(OpBuilder &b, Location loc, Value amax) {
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  return Fp8ScaleOp::create(b, loc, scalar, scalar, amax, Value(),
                            b.getF32FloatAttr(kE4M3Max));
}

/// cuBLASLt takes a per-tensor scale only at a 16-byte aligned address:
/// delayed scaling's scales are computed `kScaleStride` apart, [T, 4].
constexpr int64_t kScaleStride = 4;

/// Element [`index`, 0] of the [T, kScaleStride] `values` as a scalar
/// tensor.
Value elementOf(OpBuilder &b, Location loc, Value values, int64_t index) {
  auto one = RankedTensorType::get({1, 1}, b.getF32Type());
  Value slot = SliceOp::create(b, loc, one, values,
                               b.getDenseI64ArrayAttr({index, 0}),
                               b.getDenseI64ArrayAttr({1, 1}),
                               b.getDenseI64ArrayAttr({1, 1}));
  return ReshapeOp::create(b, loc, RankedTensorType::get({}, b.getF32Type()),
                           slot);
}

/// The scales of `input` per 1 x `blockLength` block of its rows (block
/// scaling's 128, rowwise scaling's whole row): 448 / amax rounded down to
/// a power of two, and its reciprocal.
Fp8ScaleOp blockScales(OpBuilder &b, Location loc, Value input,
                       int64_t blockLength) {
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(input.getType()).getShape());
  shape.back() /= blockLength;
  auto type = RankedTensorType::get(shape, b.getF32Type());
  Value amax = BlockAmaxOp::create(b, loc, type, input,
                                   b.getI64IntegerAttr(blockLength));
  auto scales = Fp8ScaleOp::create(b, loc, type, type, amax, Value(),
                                   b.getF32FloatAttr(kE4M3Max));
  scales.setPowerOfTwo(true);
  return scales;
}

/// The ONNX node a linear came from, for the state's labels.
std::string nodeName(Location loc, size_t index) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name.empty() ? "linear" + std::to_string(index) : name;
}

/// A linear that runs in FP8, with its weight quantized.
struct Candidate {
  LinearOp op;
  QuantizedWeight weight;
};

/// The state arguments delayed scaling adds to the function.
struct DelayedState {
  BlockArgument history, scales;
};

struct InsertFP8CastsPass
    : mte::transformer::impl::InsertFP8CastsBase<InsertFP8CastsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool delayed = recipe == Fp8Recipe::Delayed;
    if (delayed && (historyLength < 1 || historyLength > (1 << 16))) {
      func.emitError("amax-history must be in [1, 65536], not ")
          << historyLength;
      return signalPassFailure();
    }
    if (calibrate && !delayed) {
      func.emitError("calibrate records delayed scaling's amaxes: it needs "
                     "recipe=delayed");
      return signalPassFailure();
    }
    if (delayed && (margin < 0 || margin > 64)) {
      func.emitError("margin must be in [0, 64], not ") << margin;
      return signalPassFailure();
    }
    SmallVector<Candidate> candidates;
    func.walk([&](LinearOp op) {
      if (std::optional<QuantizedWeight> weight = select(op))
        candidates.push_back({op, *weight});
    });
    if (candidates.empty())
      return;
    std::optional<DelayedState> state;
    if (delayed) {
      if (!func.isPublic() || func.isDeclaration()) {
        func.emitError("delayed FP8 scaling adds model state to @")
            << func.getSymName()
            << ", which must be a public function with a body";
        return signalPassFailure();
      }
      state = addState(func, candidates);
    }
    // Delayed scaling: every input's scale and scale_inv from the state, in
    // one op at the top (one kernel on CUDA, not one per GEMM), each
    // repeated kScaleStride times so that every one is 16-byte aligned.
    Fp8ScaleOp delayedScales;
    if (state && !calibrate) {
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      Location loc = func.getLoc();
      int64_t count = candidates.size();
      Value column = ReshapeOp::create(
          b, loc, RankedTensorType::get({count, 1}, b.getF32Type()),
          state->scales);
      auto type = RankedTensorType::get({count, kScaleStride}, b.getF32Type());
      Value wide = ExpandOp::create(b, loc, type, column);
      delayedScales = Fp8ScaleOp::create(b, loc, type, type, Value(), wide,
                                         b.getF32FloatAttr(kE4M3Max));
    }
    SmallVector<Value> amaxes;
    for (auto [index, candidate] : llvm::enumerate(candidates)) {
      LinearOp op = candidate.op;
      OpBuilder b(op);
      Location loc = op.getLoc();
      if (recipe == Fp8Recipe::Block || recipe == Fp8Recipe::Rowwise) {
        int64_t k = op.getInput().getType().getShape().back();
        Fp8ScaleOp scales = blockScales(
            b, loc, op.getInput(),
            recipe == Fp8Recipe::Block ? kFp8BlockSize : k);
        rewrite(op, candidate.weight, scales.getScale(), scales.getScaleInv());
        continue;
      }
      Value amax = AmaxOp::create(
          b, loc, RankedTensorType::get({}, b.getF32Type()), op.getInput());
      amaxes.push_back(amax);
      if (calibrate)
        continue;
      if (!delayedScales) {
        Fp8ScaleOp scales = currentScales(b, loc, amax);
        rewrite(op, candidate.weight, scales.getScale(), scales.getScaleInv());
        continue;
      }
      Value scale = elementOf(b, loc, delayedScales.getScale(), index);
      Value scaleInv = elementOf(b, loc, delayedScales.getScaleInv(), index);
      rewrite(op, candidate.weight, scale, scaleInv);
    }
    if (state)
      addUpdate(func, *state, amaxes);
  }

  /// The quantized weight when `op` runs in FP8; otherwise nothing, and a
  /// linear of a float type the encoder reads says why it stays.
  std::optional<QuantizedWeight> select(LinearOp op) {
    Type element = op.getInput().getType().getElementType();
    if (!isa<Float32Type, BFloat16Type>(element) ||
        op.getWeight().getType().getElementType() != element)
      return std::nullopt; // fp8 already, or a type the encoder does not read
    ElementsAttr weight;
    std::optional<Fp8Skip> reason = skipReason(op, weight);
    std::optional<QuantizedWeight> quantized;
    if (!reason) {
      bool kn = op.getWeightLayout() == WeightLayout::KN;
      quantized =
          recipe == Fp8Recipe::Block
              ? quantizeWeightBlocks(weight, kn, resourceName(weight),
                                     kFp8BlockSize, kFp8BlockSize)
          : recipe == Fp8Recipe::Rowwise
              ? quantizeWeightBlocks(weight, kn, resourceName(weight),
                                     /*rowsPerBlock=*/1, /*colsPerBlock=*/0)
              : quantizeWeight(weight, kn, resourceName(weight));
      if (!quantized)
        reason = Fp8Skip::DynamicWeight;
    }
    if (reason) {
      op->setAttr(TransformerDialect::getFp8SkippedAttrName(),
                  Fp8SkipAttr::get(op.getContext(), *reason));
      ++numSkipped;
    }
    return quantized;
  }

  /// Why `op` stays in its float type, or nothing when FP8 pays.
  std::optional<Fp8Skip> skipReason(LinearOp op, ElementsAttr &weight) {
    RankedTensorType input = op.getInput().getType();
    RankedTensorType weightType = op.getWeight().getType();
    bool kn = op.getWeightLayout() == WeightLayout::KN;
    int64_t k = input.getShape().back();
    int64_t n = weightType.getDimSize(kn ? 1 : 0);
    int64_t m = input.getNumElements() / std::max<int64_t>(k, 1);
    if (k % 16 != 0 || n % 16 != 0 || k == 0 || n == 0 ||
        (recipe == Fp8Recipe::Block && k % kFp8BlockSize != 0))
      return Fp8Skip::Misaligned;
    if (!matchPattern(op.getWeight(), m_Constant(&weight)))
      return Fp8Skip::DynamicWeight;
    // M * N * K >= minMacs, in double: the product may not fit int64_t.
    if (double(m) * double(n) * double(k) < double(minMacs))
      return Fp8Skip::Small;
    return std::nullopt;
  }

  /// Replaces `op` by the FP8 linear of its input quantized with `scales`
  /// (multiplying by the scale, the GEMM reading scale_inv) and `weight`.
  /// `op` on E4M3: its input cast times `scale`, read with `scaleInv`.
  void rewrite(LinearOp op, const QuantizedWeight &weight, Value scale,
               Value scaleInv) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto codesType = op.getInput().getType().clone(
        Float8E4M3FNType::get(op.getContext()));
    Value codes = QuantizeOp::create(b, loc, codesType, op.getInput(), scale,
                                     /*saturate=*/true, /*multiply=*/true);
    Value inputScale = scaleInv;
    Value weightCodes = arith::ConstantOp::create(
        b, op.getWeight().getLoc(), cast<TypedAttr>(weight.codes));
    Value weightScale =
        weight.blockScales
            ? arith::ConstantOp::create(b, loc, weight.blockScales).getResult()
            : scalarF32(b, loc, weight.scale);
    auto fp8 = LinearOp::create(
        b, loc, op.getType(), codes, weightCodes, op.getBias(),
        op.getResidual(), inputScale, weightScale,
        WeightLayoutAttr::get(op.getContext(), WeightLayout::NK),
        op.getActivationAttr());
    op.getOutput().replaceAllUsesWith(fp8.getOutput());
    op.erase();
    ++numFp8;
  }

  /// Appends `fp8.amax_history` [L, T] (zeros) and `fp8.scale` [T] (ones:
  /// TransformerEngine's initial scale) to the function's arguments, as
  /// model state labelled with the linears' ONNX nodes.
  DelayedState addState(func::FuncOp func, ArrayRef<Candidate> candidates) {
    MLIRContext *ctx = func.getContext();
    Builder b(ctx);
    int64_t count = candidates.size();
    SmallVector<Attribute> labels;
    for (auto [index, candidate] : llvm::enumerate(candidates))
      labels.push_back(b.getStringAttr(
          nodeName(candidate.op->getLoc(), index) + ".input"));
    ArrayAttr labelArray = b.getArrayAttr(labels);
    auto add = [&](StringRef name, StateKind kind, ArrayRef<int64_t> shape,
                   float initial) -> BlockArgument {
      auto type = RankedTensorType::get(shape, b.getF32Type());
      auto attr = ModelStateAttr::get(
          ctx, b.getStringAttr(name), StateKindAttr::get(ctx, kind),
          cast<ElementsAttr>(DenseElementsAttr::get(type, initial)),
          labelArray);
      unsigned index = func.getNumArguments();
      (void)func.insertArgument(
          index, type,
          b.getDictionaryAttr(
              b.getNamedAttr(TransformerDialect::getStateAttrName(), attr)),
          func.getLoc());
      return func.getArgument(index);
    };
    BlockArgument history = add("fp8.amax_history", StateKind::Fp8AmaxHistory,
                                {historyLength, count}, 0.0f);
    BlockArgument scales =
        add("fp8.scale", StateKind::Fp8Scale, {count}, 1.0f);
    return {history, scales};
  }

  /// The scale update before the return, its results the states' next
  /// values (ahead of an index-status result, which stays last).
  void addUpdate(func::FuncOp func, DelayedState state, ValueRange amaxes) {
    Operation *terminator = func.getBody().back().getTerminator();
    OpBuilder b(terminator);
    Location loc = func.getLoc();
    auto one = RankedTensorType::get({1}, b.getF32Type());
    SmallVector<Value> rows;
    for (Value amax : amaxes)
      rows.push_back(ReshapeOp::create(b, amax.getLoc(), one, amax));
    Value current =
        rows.size() == 1
            ? rows.front()
            : ConcatOp::create(b, loc, rows, b.getI64IntegerAttr(0))
                  .getResult();
    auto update = Fp8ScaleUpdateOp::create(
        b, loc, state.history.getType(), state.scales.getType(), state.history,
        current, state.scales, b.getF32FloatAttr(kE4M3Max),
        b.getI64IntegerAttr(margin),
        AmaxAlgorithmAttr::get(b.getContext(), amaxAlgorithm));
    unsigned position = func.getNumResults();
    if (position && func.getResultAttr(position - 1, "transformer.index_status"))
      --position;
    Value nextValues[] = {update.getNextHistory(), update.getNextScale()};
    StringRef names[] = {"fp8.amax_history", "fp8.scale"};
    for (auto [offset, next, name] : llvm::enumerate(nextValues, names)) {
      unsigned index = position + offset;
      (void)func.insertResult(
          index, next.getType(),
          b.getDictionaryAttr(b.getNamedAttr(
              TransformerDialect::getNextStateAttrName(),
              b.getStringAttr(name))));
      terminator->insertOperands(index, next);
    }
  }
};
} // namespace
