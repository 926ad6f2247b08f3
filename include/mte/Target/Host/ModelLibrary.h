//===- ModelLibrary.h - host object code and model.so -----------*- C++ -*-===//
//
// The last steps of the host backend: LLVM-dialect module -> LLVM IR ->
// optimised object file, and the object plus the model's ABI table
// (include/mte-c/ModelABI.h) linked into model.so by the system C compiler.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_TARGET_HOST_MODELLIBRARY_H
#define MTE_TARGET_HOST_MODELLIBRARY_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
class LLVMContext;
} // namespace llvm

namespace mte {

/// A graph input or output as the ABI table describes it.
struct ModelTensor {
  std::string name;
  mlir::Type elementType;
  llvm::SmallVector<int64_t> shape;
};

/// Part of an external weight (mte_weight_source in ModelABI.h).
struct ModelWeightSource {
  std::string location;
  uint64_t offset, chunkElements, chunkStride;
  mlir::Type elementType;
  uint32_t crc32;
  /// A sliced weight's: the CRC-32 of what each part's rank reads.
  std::vector<uint32_t> partCrc32;
};

/// A constant the forward function takes as an argument (CUDA models): the
/// symbol of its data in the library and its size, or, for an external
/// weight, how the runtime builds it (no symbol).
struct ModelWeight {
  std::string symbol;
  uint64_t numBytes;
  mlir::Type elementType;
  uint64_t outer = 1;
  std::vector<ModelWeightSource> sources;
  /// A sharded CUDA model's weight of which each rank holds a part
  /// (`#transformer.weight_slice`): parts of each of `sliceOuter` chunks
  /// among the `sliceParts` ranks over the grid axes `sliceGridAxes` (a
  /// bit mask). sliceParts 1: the whole weight.
  uint64_t sliceOuter = 1;
  uint32_t sliceParts = 1;
  uint32_t sliceGridAxes = 0;
  /// A stage program's weight: its stage + 1 (mte_weight_info's
  /// pipeline_stage); 0 when every rank holds it.
  uint32_t pipelineStage = 0;
  /// An external FP8 weight quantized as it is built: the elements rounded
  /// to `quantizeFrom`, divided by `quantizeScale` (0: not quantized),
  /// transposed from [transposeRows, ...] when transposeRows is not 0.
  float quantizeScale = 0;
  mlir::Type quantizeFrom;
  uint64_t transposeRows = 0;
  /// Block or rowwise scaling: the factors of each quantizeBlockRows x
  /// quantizeBlockCols block of the stored [N, quantizeBlockK] weight,
  /// replacing quantizeScale (empty: none).
  std::vector<float> quantizeBlocks;
  uint64_t quantizeBlockK = 0;
  uint64_t quantizeBlockRows = 0, quantizeBlockCols = 0;
  bool isExternal() const { return !sources.empty(); }
};

/// What model.so exports about the compiled function.
/// A `#transformer.index_check`: what the runtime names when the indices
/// of `op` at `node`, from graph input `source`, are out of range.
struct ModelIndexCheck {
  std::string op, node, source;
  llvm::SmallVector<int64_t> bounds;
};

/// A tensor the model carries between runs (a `#transformer.model_state`
/// argument and its `transformer.next_state` result).
struct ModelState {
  std::string name;
  /// The mte_state_kind enumerator.
  std::string kind;
  mlir::Type elementType;
  llvm::SmallVector<int64_t> shape;
  std::vector<std::string> labels;
  /// The initial value's bytes; empty when it is all zeros.
  std::vector<char> initial;
};

/// A pipeline stage's program (mte-split-pipeline-stages), which `run`
/// calls on the ranks of that stage.
struct StageProgram {
  std::string symbol;
  /// Where its weight arguments are in ModelSignature::weights, in order.
  std::vector<size_t> weights;
  /// Whether it takes the activation arena (it has buffers planned in it).
  bool takesArena = false;
};

struct ModelSignature {
  std::string entryPoint; // symbol of the lowered forward function
  std::string target = "host";
  std::string gpuArch; // "sm_90a", ... for CUDA models
  std::vector<ModelTensor> inputs, outputs;
  /// Model state: the current values passed after the inputs, the next
  /// ones after the outputs, in this order.
  std::vector<ModelState> states;
  /// Passed between the states and the outputs, in this order.
  std::vector<ModelWeight> weights;
  /// The activation arena (CUDA models), passed after the outputs when not
  /// empty.
  uint64_t arenaBytes = 0;
  /// The entry function's index checks (mte-check-indices); when there are
  /// any, their status table is the last result, passed after the next
  /// states and before the arena.
  std::vector<ModelIndexCheck> indexChecks;
  /// The device grid of a sharded model (the module's
  /// `transformer.device_grid`); empty for an unsharded one.
  llvm::SmallVector<int64_t> gridShape;
  /// A pipeline-parallel CUDA model's programs, one per stage (the grid's
  /// first axis): rank r runs stage r / (the product of the other axes).
  /// Empty: `entryPoint` is the one program.
  std::vector<StageProgram> stagePrograms;
};

/// Reads the signature of `func` (tensor arguments and results, named by
/// their `transformer.name` attributes) before it is lowered.
mlir::FailureOr<ModelSignature> getModelSignature(mlir::Operation *func);

/// Translates an LLVM-dialect module to LLVM IR optimised at -O2 for the
/// host CPU (generic x86-64 unless `cpu` is given).
std::unique_ptr<llvm::Module>
translateToOptimizedLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                           llvm::StringRef cpu, std::string &error);

/// Writes `module` as a position-independent object file for `cpu`.
mlir::LogicalResult emitObjectFile(llvm::Module &module, llvm::StringRef cpu,
                                   llvm::StringRef path, std::string &error);

/// C source defining mte_model_get_abi() for `signature`.
std::string generateABISource(const ModelSignature &signature);

/// For --weights=external: every weight argument of the lowered entry point
/// (or stage programs) whose data has a recipe (transformer::WeightProvenance) becomes an
/// external weight of `signature`, and its global leaves `lowered`, so that
/// neither LLVM nor model.so ever holds its bytes. Weights without a recipe
/// (computed at compile time) stay embedded; their total size is returned.
uint64_t externalizeWeights(mlir::ModuleOp lowered, ModelSignature &signature);

/// Reads the weight arguments of the lowered entry point (arguments carrying
/// `mte.weight = @symbol`, after mte-hoist-constants-to-arguments) and the
/// sizes of the embedded ones from the LLVM IR globals holding them. Of
/// stage programs: each weight once, in stage order, and each program's
/// places in the list.
mlir::LogicalResult collectWeights(mlir::ModuleOp lowered,
                                   const llvm::Module &llvmModule,
                                   ModelSignature &signature,
                                   std::string &error);

/// Links `objectPath` and the ABI table into the shared library `outputPath`
/// with the system C compiler (`cc`), against the C math library and, for
/// CUDA models, libmte_runtime (the mgpu* entry points).
mlir::LogicalResult linkModelLibrary(const ModelSignature &signature,
                                     llvm::StringRef objectPath,
                                     llvm::StringRef outputPath,
                                     llvm::StringRef toolPath,
                                     std::string &error);

} // namespace mte

#endif // MTE_TARGET_HOST_MODELLIBRARY_H
