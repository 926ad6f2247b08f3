//===- ModelLibrary.cpp - host object code and model.so -------------------===//

#include "mte/Target/Host/ModelLibrary.h"
#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Dialect/Transformer/IR/WeightProvenance.h"
#include "mte/Support/DType.h"
#include "mte/Support/WeightPieces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mte;

namespace {
/// The mte_dtype enumerator (include/mte-c/ModelABI.h) of an element type
/// the model interface takes.
StringRef dtypeName(Type t) { return getDTypeEnumerator(*getDType(t)); }

/// A C string literal for `s`, escaping everything that is not printable.
std::string cString(StringRef s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\' || c == '?' || !llvm::isPrint(c)) {
      out += '\\';
      out += static_cast<char>('0' + ((c >> 6) & 7));
      out += static_cast<char>('0' + ((c >> 3) & 7));
      out += static_cast<char>('0' + (c & 7));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// Where include/mte-c/ModelABI.h lives: beside an installed tool
/// (<prefix>/include), else in the source tree this tool was built from.
std::string findIncludeDir(StringRef toolPath) {
  SmallString<256> installed(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(toolPath)));
  llvm::sys::path::append(installed, "include");
  SmallString<256> header(installed);
  llvm::sys::path::append(header, "mte-c", "ModelABI.h");
  if (llvm::sys::fs::exists(header))
    return installed.str().str();
  return MTE_SOURCE_INCLUDE_DIR;
}
} // namespace

FailureOr<ModelSignature> mte::getModelSignature(Operation *op) {
  auto func = cast<func::FuncOp>(op);
  ModelSignature signature;
  signature.entryPoint = func.getSymName().str();
  // A sharded model's ranks form the grid its collectives name; the
  // sharding passes make one.
  if (auto module = func->getParentOfType<ModuleOp>()) {
    auto grids = llvm::to_vector(module.getOps<shard::GridOp>());
    if (grids.size() > 1)
      return grids[1].emitError("a model runs on one device grid; '")
             << grids[0].getSymName() << "' is another";
    if (!grids.empty()) {
      shard::GridOp grid = grids.front();
      if (ShapedType::isDynamicShape(grid.getShape()))
        return grid.emitError("the device grid of a model must be static");
      signature.gridShape.assign(grid.getShape().begin(),
                                 grid.getShape().end());
    }
  }
  auto describe = [&](Type type, DictionaryAttr attrs, StringRef fallback,
                      std::vector<ModelTensor> &list) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return func.emitError()
             << "model interface type " << type << " is not a static tensor";
    if (tensor.getNumElements() == 0)
      return func.emitError() << "model interface type " << type
                              << " has no elements, which the host backend "
                                 "does not support";
    if (!getDType(tensor.getElementType()))
      return func.emitError() << "element type " << tensor.getElementType()
                              << " cannot cross the model interface";
    auto name = attrs ? attrs.getAs<StringAttr>("transformer.name") : nullptr;
    list.push_back({name ? name.str() : fallback.str(), tensor.getElementType(),
                    SmallVector<int64_t>(tensor.getShape())});
    return success();
  };
  StringRef stateAttr = transformer::TransformerDialect::getStateAttrName();
  StringRef nextAttr = transformer::TransformerDialect::getNextStateAttrName();
  // Inputs, then states: the ABI passes them in that order.
  bool sawState = false;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (auto state =
            func.getArgAttrOfType<transformer::ModelStateAttr>(i, stateAttr)) {
      sawState = true;
      ModelState entry;
      entry.name = state.getName().str();
      entry.kind =
          state.getKind().getValue() == transformer::StateKind::Fp8AmaxHistory
              ? "MTE_STATE_FP8_AMAX_HISTORY"
              : "MTE_STATE_FP8_SCALE";
      auto tensor = cast<RankedTensorType>(type);
      entry.elementType = tensor.getElementType();
      entry.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
      for (Attribute label : state.getLabels())
        entry.labels.push_back(cast<StringAttr>(label).str());
      auto initial = dyn_cast<DenseElementsAttr>(state.getInitial());
      if (!initial)
        return func.emitError("state '")
               << entry.name << "' needs a dense initial value";
      bool zero = llvm::all_of(initial.getValues<APFloat>(),
                               [](const APFloat &v) { return v.isPosZero(); });
      if (!zero)
        for (APFloat v : initial.getValues<APFloat>()) {
          uint32_t bits = v.bitcastToAPInt().getZExtValue();
          const char *bytes = reinterpret_cast<const char *>(&bits);
          entry.initial.insert(entry.initial.end(), bytes, bytes + 4);
        }
      for (const ModelState &other : signature.states)
        if (other.name == entry.name)
          return func.emitError("two states are named '")
                 << entry.name << "'";
      signature.states.push_back(std::move(entry));
      continue;
    }
    if (sawState)
      return func.emitError("argument ")
             << i << " is a graph input after a state argument; states "
             << "come last";
    if (failed(describe(type, func.getArgAttrDict(i),
                        "input" + std::to_string(i), signature.inputs)))
      return failure();
  }
  // Outputs, then the states' next values in the states' order, then the
  // index status.
  size_t nextStates = 0;
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    if (func.getResultAttr(i, "transformer.index_status")) {
      if (i + 1 != func.getNumResults())
        return func.emitError("the index status must be the last result");
      continue;
    }
    if (auto next = func.getResultAttrOfType<StringAttr>(i, nextAttr)) {
      if (nextStates >= signature.states.size() ||
          signature.states[nextStates].name != next.getValue())
        return func.emitError("result ")
               << i << " is the next value of state '" << next.getValue()
               << "', out of the states' order";
      ++nextStates;
      continue;
    }
    if (nextStates)
      return func.emitError("result ")
             << i << " is a graph output after a state's next value; next "
             << "values come after the outputs";
    if (failed(describe(type, func.getResultAttrDict(i),
                        "output" + std::to_string(i), signature.outputs)))
      return failure();
  }
  if (nextStates != signature.states.size())
    return func.emitError("state '")
           << signature.states[nextStates].name << "' has no next value";
  if (auto checks =
          func->getAttrOfType<ArrayAttr>("transformer.index_checks")) {
    for (Attribute attr : checks) {
      auto check = dyn_cast<transformer::IndexCheckAttr>(attr);
      if (!check)
        return func.emitError("transformer.index_checks holds ")
               << attr << ", not a #transformer.index_check";
      signature.indexChecks.push_back(
          {check.getOp().str(), check.getNode().str(),
           check.getSource().str(), SmallVector<int64_t>(check.getBounds())});
    }
    auto status = func.getNumResults()
                      ? dyn_cast<RankedTensorType>(func.getResultTypes().back())
                      : RankedTensorType();
    if (!status || !func.getResultAttr(func.getNumResults() - 1,
                                       "transformer.index_status") ||
        status.getShape() !=
            ArrayRef<int64_t>{static_cast<int64_t>(checks.size()), 3})
      return func.emitError("transformer.index_checks lists ")
             << checks.size()
             << " checks, which need a last result of tensor<" << checks.size()
             << "x3xi64> marked transformer.index_status";
  }
  return signature;
}

std::unique_ptr<llvm::Module>
mte::translateToOptimizedLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                                StringRef cpu, std::string &error) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return nullptr;
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu.empty() ? "x86-64" : cpu, "", targetOptions,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine.get());
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2)
      .run(*llvmModule, mam);
  return llvmModule;
}

LogicalResult mte::emitObjectFile(llvm::Module &module, StringRef cpu,
                                  StringRef path, std::string &error) {
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(module.getTargetTriple(), error);
  if (!target)
    return failure();
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      module.getTargetTriple(), cpu.empty() ? "x86-64" : cpu, "", targetOptions,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  pm.run(module);
  out.keep();
  return success();
}

std::string mte::generateABISource(const ModelSignature &signature) {
  std::string source;
  llvm::raw_string_ostream os(source);
  os << "/* Generated by mte-compile: the table libmte_runtime reads. */\n"
     << "#include \"mte-c/ModelABI.h\"\n";
  bool checksIndices = !signature.indexChecks.empty();
  // The programs `run` calls: the entry, or a pipeline's stage programs.
  std::vector<StageProgram> programs = signature.stagePrograms;
  if (programs.empty()) {
    StageProgram entry{signature.entryPoint, {}, signature.arenaBytes != 0};
    for (size_t i = 0; i < signature.weights.size(); ++i)
      entry.weights.push_back(i);
    programs.push_back(std::move(entry));
  } else {
    os << "#include \"mte-c/KernelABI.h\"\n";
  }
  os << "\n";
  for (const StageProgram &program : programs) {
    size_t numArgs = signature.inputs.size() + 2 * signature.states.size() +
                     program.weights.size() + signature.outputs.size() +
                     (checksIndices ? 1 : 0) + (program.takesArena ? 1 : 0);
    os << "void " << program.symbol << "(";
    for (size_t i = 0; i < numArgs; ++i)
      os << (i ? ", " : "") << "void *";
    os << (numArgs ? "" : "void") << ");\n";
  }
  os << "\n";

  auto table = [&](StringRef kind, const std::vector<ModelTensor> &tensors) {
    for (auto [i, t] : llvm::enumerate(tensors)) {
      if (t.shape.empty())
        continue;
      os << "static const int64_t " << kind << "_shape_" << i << "[] = {";
      llvm::interleaveComma(t.shape, os);
      os << "};\n";
    }
    if (tensors.empty())
      return;
    os << "static const mte_tensor_info " << kind << "[] = {\n";
    for (auto [i, t] : llvm::enumerate(tensors)) {
      os << "    {" << cString(t.name) << ", " << dtypeName(t.elementType)
         << ", " << t.shape.size() << ", ";
      if (t.shape.empty())
        os << "0";
      else
        os << kind << "_shape_" << i;
      os << "},\n";
    }
    os << "};\n";
  };
  if (!signature.gridShape.empty()) {
    os << "static const int64_t grid_shape[] = {";
    llvm::interleaveComma(signature.gridShape, os);
    os << "};\n";
  }
  table("inputs", signature.inputs);
  table("outputs", signature.outputs);
  if (!signature.states.empty()) {
    os << "\n";
    for (auto [i, state] : llvm::enumerate(signature.states)) {
      os << "static const int64_t state_shape_" << i << "[] = {";
      llvm::interleaveComma(state.shape, os);
      os << "};\n";
      if (!state.labels.empty()) {
        os << "static const char *const state_labels_" << i << "[] = {\n";
        for (const std::string &label : state.labels)
          os << "    " << cString(label) << ",\n";
        os << "};\n";
      }
      if (!state.initial.empty()) {
        os << "static const unsigned char state_initial_" << i << "[] = {";
        for (auto [j, byte] : llvm::enumerate(state.initial))
          os << (j % 16 ? " " : "\n    ") << unsigned(uint8_t(byte)) << ",";
        os << "\n};\n";
      }
    }
    os << "static const mte_state_info states[] = {\n";
    for (auto [i, state] : llvm::enumerate(signature.states)) {
      os << "    {{" << cString(state.name) << ", "
         << dtypeName(state.elementType) << ", " << state.shape.size()
         << ", state_shape_" << i << "}, " << state.kind << ", ";
      if (state.initial.empty())
        os << "0, ";
      else
        os << "state_initial_" << i << ", ";
      os << state.labels.size() << ", ";
      if (state.labels.empty())
        os << "0";
      else
        os << "state_labels_" << i;
      os << "},\n";
    }
    os << "};\n";
  }
  if (!signature.weights.empty()) {
    os << "\n";
    for (auto [i, w] : llvm::enumerate(signature.weights)) {
      if (!w.isExternal()) {
        os << "extern const unsigned char " << w.symbol << "[];\n";
        continue;
      }
      for (auto [s, source] : llvm::enumerate(w.sources)) {
        if (source.partCrc32.empty())
          continue;
        os << "static const uint32_t weight_part_crc32_" << i << "_" << s
           << "[] = {";
        llvm::interleaveComma(source.partCrc32, os,
                              [&](uint32_t crc) { os << crc << "u"; });
        os << "};\n";
      }
      os << "static const mte_weight_source weight_sources_" << i
         << "[] = {\n";
      for (auto [s, source] : llvm::enumerate(w.sources)) {
        os << "    {" << cString(source.location) << ", " << source.offset
           << "ull, " << source.chunkElements << "ull, " << source.chunkStride
           << "ull, " << dtypeName(source.elementType) << ", " << source.crc32
           << "u, ";
        if (source.partCrc32.empty())
          os << "0";
        else
          os << "weight_part_crc32_" << i << "_" << s;
        os << "},\n";
      }
      os << "};\n";
    }
    for (auto [i, w] : llvm::enumerate(signature.weights)) {
      if (w.quantizeBlocks.empty())
        continue;
      os << "static const float weight_blocks_" << i << "[] = {";
      for (float factor : w.quantizeBlocks)
        os << llvm::format("%af, ", double(factor));
      os << "};\n";
    }
    os << "static const mte_weight_info weights[] = {\n";
    for (auto [i, w] : llvm::enumerate(signature.weights)) {
      if (w.isExternal())
        os << "    {0, " << w.numBytes << "ull, " << dtypeName(w.elementType)
           << ", " << w.sources.size() << ", " << w.outer
           << "ull, weight_sources_" << i;
      else
        os << "    {" << w.symbol << ", " << w.numBytes << "ull, 0, 0, 1, 0";
      os << ", " << w.sliceOuter << "ull, " << w.sliceParts << ", "
         << w.sliceGridAxes << "u, ";
      if (w.quantizeScale != 0)
        // A hexadecimal float literal is the scale exactly.
        os << llvm::format("%af", double(w.quantizeScale)) << ", "
           << dtypeName(w.quantizeFrom) << ", " << w.transposeRows << "ull";
      else
        os << "0.0f, 0, 0ull";
      if (w.quantizeBlocks.empty())
        os << ", 0, 0ull, 0ull, 0ull";
      else
        os << ", weight_blocks_" << i << ", " << w.quantizeBlockK << "ull, "
           << w.quantizeBlockRows << "ull, " << w.quantizeBlockCols << "ull";
      os << ", " << w.pipelineStage << "u},\n";
    }
    os << "};\n";
  }

  if (checksIndices) {
    os << "\n";
    for (auto [i, check] : llvm::enumerate(signature.indexChecks)) {
      os << "static const int64_t index_check_bounds_" << i << "[] = {";
      llvm::interleaveComma(check.bounds, os);
      os << "};\n";
    }
    os << "static const mte_index_check index_checks[] = {\n";
    for (auto [i, check] : llvm::enumerate(signature.indexChecks))
      os << "    {" << cString(check.op) << ", " << cString(check.node) << ", "
         << cString(check.source) << ", " << check.bounds.size()
         << ", index_check_bounds_" << i << "},\n";
    os << "};\n";
  }

  os << "\nstatic int32_t run(void *const *inputs, void *const *outputs,\n"
     << "                   void *const *weights, void *arena,\n"
     << "                   int64_t *index_status, void *const *state,\n"
     << "                   void *const *next_state) {\n";
  auto call = [&](const StageProgram &program, StringRef indent) {
    os << indent << program.symbol << "(";
    bool first = true;
    for (size_t i = 0; i < signature.inputs.size(); ++i, first = false)
      os << (first ? "" : ", ") << "inputs[" << i << "]";
    for (size_t i = 0; i < signature.states.size(); ++i, first = false)
      os << (first ? "" : ", ") << "state[" << i << "]";
    for (size_t i : program.weights) {
      os << (first ? "" : ", ") << "weights[" << i << "]";
      first = false;
    }
    for (size_t i = 0; i < signature.outputs.size(); ++i, first = false)
      os << (first ? "" : ", ") << "outputs[" << i << "]";
    for (size_t i = 0; i < signature.states.size(); ++i, first = false)
      os << (first ? "" : ", ") << "next_state[" << i << "]";
    if (checksIndices) {
      os << (first ? "" : ", ") << "index_status";
      first = false;
    }
    if (program.takesArena)
      os << (first ? "" : ", ") << "arena";
    os << ");\n";
  };
  if (signature.stagePrograms.empty()) {
    call(programs.front(), "  ");
  } else {
    // The grid's first axis is the stage's, its outermost.
    int64_t ranksPerStage = 1;
    for (int64_t extent : ArrayRef(signature.gridShape).drop_front())
      ranksPerStage *= extent;
    os << "  switch (mte_comm_rank() / " << ranksPerStage << ") {\n";
    for (auto [stage, program] : llvm::enumerate(programs)) {
      os << "  case " << stage << ":\n";
      call(program, "    ");
      os << "    break;\n";
    }
    os << "  default:\n    return 1;\n  }\n";
  }
  os << "  (void)inputs;\n  (void)outputs;\n  (void)weights;\n"
     << "  (void)arena;\n  (void)index_status;\n  (void)state;\n"
     << "  (void)next_state;\n"
     << "  return 0;\n}\n\n"
     << "static const mte_model_abi abi = {MTE_MODEL_ABI_VERSION, "
     << cString(signature.target) << ", "
     << (signature.gpuArch.empty() ? "0" : cString(signature.gpuArch)) << ", "
     << signature.inputs.size() << ", " << signature.outputs.size() << ", "
     << signature.weights.size() << ", "
     << (signature.inputs.empty() ? "0" : "inputs") << ", "
     << (signature.outputs.empty() ? "0" : "outputs") << ", "
     << (signature.weights.empty() ? "0" : "weights") << ", "
     << signature.arenaBytes << "ull, " << signature.indexChecks.size()
     << ", " << (checksIndices ? "index_checks" : "0") << ", "
     << signature.states.size() << ", "
     << (signature.states.empty() ? "0" : "states") << ", "
     << signature.gridShape.size() << ", "
     << (signature.gridShape.empty() ? "0" : "grid_shape") << ", run};\n\n"
     << "__attribute__((visibility(\"default\")))\n"
     << "const mte_model_abi *mte_model_get_abi(void) { return &abi; }\n";
  return source;
}

namespace {
/// A weight argument of a lowered program.
struct WeightArgument {
  LLVM::LLVMFuncOp program;
  unsigned index;
  FlatSymbolRefAttr symbol;
  /// mte_weight_info's pipeline_stage: the stage program's + 1 that alone
  /// reads it, else 0.
  uint32_t pipelineStage;
};
} // namespace

/// The weight arguments of the lowered programs in the weight table's
/// order: the entry's, or the stage programs' in stage order with a weight
/// (a global, and its slice) that several read listed once, each program's
/// places in the table set. Null with the reason in `error` when a program
/// is missing.
static std::optional<std::vector<WeightArgument>>
weightArguments(ModuleOp lowered, ModelSignature &signature,
                std::string &error) {
  std::vector<WeightArgument> arguments;
  llvm::DenseMap<std::pair<Attribute, Attribute>, size_t> places;
  auto read = [&](StringRef symbol, std::vector<size_t> *programWeights,
                  uint32_t pipelineStage) {
    auto program = lowered.lookupSymbol<LLVM::LLVMFuncOp>(symbol);
    if (!program) {
      error = "the lowered module has no '" + symbol.str() + "'";
      return false;
    }
    for (unsigned i = 0, e = program.getNumArguments(); i < e; ++i) {
      auto weight =
          program.getArgAttrOfType<FlatSymbolRefAttr>(i, "mte.weight");
      if (!weight)
        continue;
      auto [it, added] = places.try_emplace(
          {weight, program.getArgAttr(i, "mte.weight_slice")},
          arguments.size());
      if (added)
        arguments.push_back({program, i, weight, pipelineStage});
      else if (arguments[it->second].pipelineStage != pipelineStage)
        arguments[it->second].pipelineStage = 0; // read by several stages
      if (programWeights)
        programWeights->push_back(it->second);
    }
    return true;
  };
  if (signature.stagePrograms.empty() &&
      !read(signature.entryPoint, nullptr, 0))
    return std::nullopt;
  for (auto [stage, program] : llvm::enumerate(signature.stagePrograms)) {
    program.weights.clear();
    if (!read(program.symbol, &program.weights, stage + 1))
      return std::nullopt;
  }
  return arguments;
}

LogicalResult mte::collectWeights(ModuleOp lowered,
                                  const llvm::Module &llvmModule,
                                  ModelSignature &signature,
                                  std::string &error) {
  std::optional<std::vector<WeightArgument>> arguments =
      weightArguments(lowered, signature, error);
  if (!arguments)
    return failure();
  const llvm::DataLayout &layout = llvmModule.getDataLayout();
  // externalizeWeights may have listed some already, in argument order.
  std::vector<ModelWeight> external = std::move(signature.weights);
  signature.weights.clear();
  auto nextExternal = external.begin();
  for (auto [entry, i, symbol, pipelineStage] : *arguments) {
    ModelWeight weight;
    if (nextExternal != external.end() &&
        nextExternal->symbol == symbol.getValue()) {
      weight = std::move(*nextExternal++);
    } else {
      const llvm::GlobalVariable *global =
          llvmModule.getNamedGlobal(symbol.getValue());
      if (!global) {
        error = "weight '" + symbol.getValue().str() + "' has no global";
        return failure();
      }
      weight.symbol = symbol.getValue().str();
      weight.numBytes =
          layout.getTypeAllocSize(global->getValueType()).getFixedValue();
    }
    if (auto slice = entry.getArgAttrOfType<transformer::WeightSliceAttr>(
            i, "mte.weight_slice")) {
      weight.sliceOuter = slice.getOuter();
      weight.sliceParts = slice.getParts();
      for (int16_t axis : slice.getGridAxes())
        weight.sliceGridAxes |= 1u << axis;
    }
    weight.pipelineStage = pipelineStage;
    signature.weights.push_back(std::move(weight));
  }
  return success();
}

/// The CRC-32 of the elements of `part` that part `which` of the weight
/// reads (the whole weight for {1, 1, 0}), in file order as the runtime
/// reads them (mte/Support/WeightPieces.h).
static uint32_t sourceCrc32(const transformer::WeightRecipe &recipe,
                            uint64_t begin,
                            const transformer::WeightRecipe::Part &part,
                            const WeightPart &which) {
  uint64_t chunk = recipe.numElements() / recipe.outer;
  uint64_t width = (part.sourceType.getIntOrFloatBitWidth() + 7) / 8;
  uint32_t crc = 0;
  forEachWeightPiece(
      recipe.numElements(), recipe.outer, chunk, begin, part.chunkElements,
      part.chunkStride, which, [&](uint64_t element, uint64_t count, uint64_t) {
        crc = llvm::crc32(
            crc, ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(
                                       part.bytes.data() + element * width),
                                   count * width));
      });
  return crc;
}

/// The table entry of an external weight built by `recipe`, of which each
/// rank holds the part `slice` names (when it is not null).
static ModelWeight externalWeight(const transformer::WeightRecipe &recipe,
                                  StringRef symbol,
                                  transformer::WeightSliceAttr slice) {
  ModelWeight weight;
  weight.symbol = symbol.str();
  weight.elementType = recipe.elementType;
  weight.numBytes = recipe.numElements() *
                    ((recipe.elementType.getIntOrFloatBitWidth() + 7) / 8);
  weight.outer = recipe.outer;
  if (recipe.quantization) {
    weight.quantizeScale = recipe.quantization->scale;
    weight.quantizeFrom = recipe.quantization->from;
    weight.transposeRows = recipe.quantization->transposeRows;
    weight.quantizeBlocks = recipe.quantization->blockScales;
    weight.quantizeBlockK = recipe.quantization->blockK;
    weight.quantizeBlockRows = recipe.quantization->blockRows;
    weight.quantizeBlockCols = recipe.quantization->blockCols;
  }
  uint64_t begin = 0; // of each part in a chunk
  for (const transformer::WeightRecipe::Part &part : recipe.parts) {
    ModelWeightSource source{part.location, part.offset, part.chunkElements,
                             part.chunkStride, part.sourceType,
                             sourceCrc32(recipe, begin, part, WeightPart()),
                             {}};
    if (slice && slice.getParts() > 1)
      for (uint64_t g = 0; g < static_cast<uint64_t>(slice.getParts()); ++g) {
        WeightPart which{static_cast<uint64_t>(slice.getOuter()),
                         static_cast<uint64_t>(slice.getParts()), g};
        // A transposed weight's part is cut before the transpose;
        // externalizeWeights has checked that it can be.
        uint64_t builtRows;
        if (weight.transposeRows)
          (void)transposedWeightPart(recipe.numElements(), weight.transposeRows,
                                     WeightPart(which), which, builtRows);
        source.partCrc32.push_back(sourceCrc32(recipe, begin, part, which));
      }
    weight.sources.push_back(std::move(source));
    begin += part.chunkElements;
  }
  return weight;
}

uint64_t mte::externalizeWeights(ModuleOp lowered,
                                 ModelSignature &signature) {
  std::string missing;
  std::optional<std::vector<WeightArgument>> arguments =
      weightArguments(lowered, signature, missing);
  if (!arguments)
    return 0; // collectWeights reports it
  auto &provenance =
      transformer::WeightProvenance::get(lowered.getContext());
  uint64_t embeddedBytes = 0;
  // Arguments may share a global (a sharded model's slices of one weight):
  // each is listed, the global erased once all are.
  llvm::StringMap<std::optional<transformer::WeightRecipe>> recipes;
  SmallVector<LLVM::GlobalOp> externalized;
  for (auto [entry, i, symbol, pipelineStage] : *arguments) {
    (void)pipelineStage; // collectWeights records it
    auto global = lowered.lookupSymbol<LLVM::GlobalOp>(symbol.getAttr());
    if (!global)
      continue;
    auto [it, first] = recipes.try_emplace(symbol.getValue());
    Attribute value = global.getValueOrNull();
    auto typed = dyn_cast_or_null<TypedAttr>(value);
    auto type = typed ? dyn_cast<ShapedType>(typed.getType()) : ShapedType();
    auto slice = entry.getArgAttrOfType<transformer::WeightSliceAttr>(
        i, "mte.weight_slice");
    if (first && type)
      it->second = provenance.lookup(value);
    // The runtime cuts a rank's part of a transposed weight before it
    // transposes: a slicing of neither axis cannot be.
    WeightPart part, built;
    uint64_t builtRows;
    if (slice)
      part = {static_cast<uint64_t>(slice.getOuter()),
              static_cast<uint64_t>(slice.getParts()), 0};
    if (it->second && it->second->quantization &&
        it->second->quantization->transposeRows &&
        !transposedWeightPart(it->second->numElements(),
                              it->second->quantization->transposeRows, part,
                              built, builtRows))
      it->second.reset();
    // Block (and channel) factors follow the whole weight's blocks: a part
    // stays embedded.
    if (it->second && it->second->quantization &&
        !it->second->quantization->blockScales.empty() && part.parts > 1)
      it->second.reset();
    const std::optional<transformer::WeightRecipe> &recipe = it->second;
    if (!recipe) {
      if (first && type)
        embeddedBytes += type.getNumElements() *
                         ((type.getElementTypeBitWidth() + 7) / 8);
      continue;
    }
    if (first)
      externalized.push_back(global);
    signature.weights.push_back(externalWeight(*recipe, symbol.getValue(),
                                               slice));
  }
  for (LLVM::GlobalOp global : externalized)
    global.erase();
  return embeddedBytes;
}

/// Where libmte_runtime.so lives: beside an installed tool (<prefix>/lib),
/// else in the build tree this tool was built in.
static std::string findLibraryDir(StringRef toolPath) {
  SmallString<256> dir(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(toolPath)));
  llvm::sys::path::append(dir, "lib");
  SmallString<256> library(dir);
  llvm::sys::path::append(library, "libmte_runtime.so");
  if (llvm::sys::fs::exists(library))
    return dir.str().str();
  return MTE_RUNTIME_LIBRARY_DIR;
}

LogicalResult mte::linkModelLibrary(const ModelSignature &signature,
                                    StringRef objectPath, StringRef outputPath,
                                    StringRef toolPath, std::string &error) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    error = "no C compiler driver ('cc') on PATH to link the model";
    return failure();
  }
  SmallString<128> abiPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("mte-abi", "c", abiPath)) {
    error = "cannot create a temporary file: " + ec.message();
    return failure();
  }
  llvm::FileRemover removeAbi(abiPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(abiPath, ec);
    if (ec) {
      error = "cannot write '" + abiPath.str().str() + "': " + ec.message();
      return failure();
    }
    os << generateABISource(signature);
  }
  std::string include = "-I" + findIncludeDir(toolPath);
  SmallVector<StringRef> args = {*cc,        "-shared", "-fPIC",    "-O2",
                                 include,    abiPath,   objectPath, "-o",
                                 outputPath, "-lm"};
  // CUDA models call the mgpu* entry points of libmte_runtime, sharded
  // models its mte_comm_* collectives; the runtime that loads them is that
  // library, already in the process (a Python process loads it without
  // exporting its symbols, so the model names it).
  std::string libraryDir = "-L" + findLibraryDir(toolPath);
  if (signature.target == "cuda" || !signature.gridShape.empty())
    args.append({libraryDir, "-lmte_runtime"});
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0) {
    error = "linking '" + outputPath.str() + "' with " + *cc + " failed" +
            (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}
