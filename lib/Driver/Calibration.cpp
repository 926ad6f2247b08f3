//===- Calibration.cpp - FP8 calibration at compile time ------------------===//
//
// mte-compile --calibration calib.npz: the calibration build of the model
// (fp32; every linear the FP8 build quantizes keeps its float type, and
// delayed scaling's state records the amaxes of their inputs) is compiled
// for the host, opened through libmte_runtime and run on each sample in
// order. The amax history and scales it is left with become the initial
// state of the FP8 build, which is then accurate from its first run. This
// is TransformerEngine's fp8_autocast(calibrating=True) over the samples,
// done by the compiler.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"

#include "mte/Dialect/Transformer/IR/TransformerOps.h"
#include "mte/Tools/Numpy/Npz.h"

#include "mte-c/Runtime.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <memory>

using namespace mlir;
using namespace mte::driver;
using mte::numpy::formatShape;
using mte::numpy::Tensor;

namespace {

struct ModelCloser {
  void operator()(mte_model *model) const { mte_model_close(model); }
};
using ModelHandle = std::unique_ptr<mte_model, ModelCloser>;

/// Removes a temporary directory and what it holds when it goes.
class TemporaryDirectory {
public:
  std::error_code create() {
    return llvm::sys::fs::createUniqueDirectory("mte-calibration", path);
  }
  ~TemporaryDirectory() {
    if (!path.empty())
      (void)llvm::sys::fs::remove_directories(path);
  }
  StringRef str() const { return path; }

private:
  SmallString<128> path;
};

std::vector<int64_t> shapeOf(const mte_tensor_info &info) {
  return std::vector<int64_t>(info.shape, info.shape + info.rank);
}

std::string quotedList(ArrayRef<std::string> names) {
  std::string list;
  for (const std::string &name : names)
    list += (list.empty() ? "'" : ", '") + name + "'";
  return list;
}

/// The calibration samples, one array per model input, each holding the
/// input's shape or `count` of them stacked along a leading axis.
struct Samples {
  std::vector<const Tensor *> arrays;
  size_t count = 0;
};

/// Matches the arrays of the calibration file to the inputs of `model`.
FailureOr<Samples>
matchSamples(mte_model *model,
             const std::vector<std::pair<std::string, Tensor>> &arrays,
             const std::string &prefix, std::string &error) {
  size_t numInputs = mte_model_num_inputs(model);
  Samples samples;
  samples.arrays.assign(numInputs, nullptr);
  for (const auto &[name, tensor] : arrays) {
    size_t index;
    if (mte_model_find_input(model, name.c_str(), &index) != MTE_OK) {
      std::vector<std::string> inputs;
      for (size_t i = 0; i < numInputs; ++i)
        inputs.push_back(mte_model_input(model, i)->name);
      error = prefix + "array '" + name +
              "' is not an input of the model (inputs: " + quotedList(inputs) +
              ")";
      return failure();
    }
    samples.arrays[index] = &tensor;
  }
  std::string countedBy;
  for (size_t i = 0; i < numInputs; ++i) {
    const mte_tensor_info &info = *mte_model_input(model, i);
    std::vector<int64_t> shape = shapeOf(info);
    std::string want = std::string(mte_dtype_name(info.dtype)) + " " +
                       formatShape(shape) + " (one sample) or [S, " +
                       formatShape(shape).substr(1);
    if (shape.empty())
      want = std::string(mte_dtype_name(info.dtype)) +
             " [] (one sample) or [S] (S samples)";
    else
      want += " (S samples)";
    const Tensor *array = samples.arrays[i];
    if (!array) {
      error = prefix + "no array for input '" + info.name + "', " + want;
      return failure();
    }
    const std::vector<int64_t> &given = array->shape();
    bool stacked = given.size() == shape.size() + 1 &&
                   std::equal(shape.begin(), shape.end(), given.begin() + 1);
    if (array->dtype() != info.dtype || (given != shape && !stacked)) {
      error = prefix + "array '" + info.name + "' is " +
              mte_dtype_name(array->dtype()) + " " + formatShape(given) +
              "; input '" + info.name + "' takes " + want;
      return failure();
    }
    size_t count = stacked ? size_t(given.front()) : 1;
    if (!count) {
      error = prefix + "array '" + info.name + "' holds no samples";
      return failure();
    }
    if (samples.count && count != samples.count) {
      error = prefix + "array '" + info.name + "' holds " +
              std::to_string(count) + " samples, array '" + countedBy +
              "' " + std::to_string(samples.count);
      return failure();
    }
    samples.count = count;
    countedBy = info.name;
  }
  return samples;
}

/// Runs `model` on each sample in order.
LogicalResult runSamples(mte_model *model, const Samples &samples,
                         const std::string &prefix, std::string &error) {
  // The runtime's messages start with the library's path, a temporary file
  // the user never named.
  std::string library = std::string("'") + mte_model_path(model) + "': ";
  size_t numInputs = samples.arrays.size();
  std::vector<mte_tensor> inputs(numInputs);
  for (size_t sample = 0; sample < samples.count; ++sample) {
    for (size_t i = 0; i < numInputs; ++i) {
      const mte_tensor_info &info = *mte_model_input(model, i);
      const Tensor &array = *samples.arrays[i];
      size_t sampleBytes = array.numBytes() / samples.count;
      // The runtime reads inputs and never writes them.
      auto *data = const_cast<char *>(static_cast<const char *>(array.data()));
      inputs[i] = {info.name, info.dtype, info.rank, info.shape,
                   data + sample * sampleBytes};
    }
    if (mte_model_run_tensors(model, numInputs, inputs.data(), 0, nullptr) !=
        MTE_OK) {
      StringRef message = mte_last_error();
      message.consume_front(library);
      error = prefix + "sample " + std::to_string(sample) + ": " +
              message.str();
      return failure();
    }
  }
  return success();
}

/// The states of `model` as its runs left them.
FailureOr<std::vector<CalibratedState>> readStates(mte_model *model,
                                                   std::string &error) {
  std::vector<CalibratedState> states;
  for (size_t i = 0, e = mte_model_num_states(model); i < e; ++i) {
    const mte_tensor_info &info = *mte_model_state(model, i);
    CalibratedState state;
    state.name = info.name;
    state.shape = shapeOf(info);
    for (size_t l = 0, n = mte_model_state_num_labels(model, i); l < n; ++l)
      state.labels.push_back(mte_model_state_label(model, i, l));
    if (info.dtype != MTE_DTYPE_F32) {
      error = "the calibration build's state '" + state.name + "' is " +
              mte_dtype_name(info.dtype) + ", not f32";
      return failure();
    }
    state.values.resize(mte::numpy::numElements(state.shape));
    if (mte_model_get_state(model, i, state.values.data(),
                            state.values.size() * sizeof(float)) != MTE_OK) {
      error = std::string("cannot read the calibration build's state: ") +
              mte_last_error();
      return failure();
    }
    states.push_back(std::move(state));
  }
  return states;
}

} // namespace

FailureOr<FP8Calibration> mte::driver::calibrateFP8(
    ModuleOp imported, const CompilerOptions &options, StringRef toolPath,
    SmallVectorImpl<std::string> &notes, std::string &error) {
  std::string prefix = "--calibration '" + options.calibrationPath + "': ";
  std::vector<std::pair<std::string, Tensor>> arrays;
  std::string readError;
  if (!mte::numpy::readNpz(options.calibrationPath, arrays, readError)) {
    error = "--calibration: " + readError;
    return failure();
  }

  PassManager pm(imported.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  buildCalibrationPipeline(pm, options);
  if (failed(pm.run(imported)))
    return failure();

  // The calibration build runs on this machine, whatever the FP8 build's
  // target, layout and weight storage.
  CompilerOptions host;
  host.indexCheck = options.indexCheck;
  host.hostCpu = options.hostCpu;
  TemporaryDirectory directory;
  if (std::error_code ec = directory.create()) {
    error = "cannot create a temporary directory: " + ec.message();
    return failure();
  }
  SmallString<128> libraryPath(directory.str());
  llvm::sys::path::append(libraryPath, "calibration.so");
  std::string discarded;
  llvm::raw_string_ostream stats(discarded);
  SmallVector<std::string> buildNotes;
  if (failed(emitModel(imported, libraryPath, host, toolPath, stats, buildNotes,
                       error)))
    return failure();

  mte_model *opened = nullptr;
  if (mte_model_open(libraryPath.c_str(), &opened) != MTE_OK) {
    error = std::string("cannot open the calibration build: ") +
            mte_last_error();
    return failure();
  }
  ModelHandle model(opened);
  FailureOr<Samples> samples = matchSamples(model.get(), arrays, prefix, error);
  if (failed(samples) ||
      failed(runSamples(model.get(), *samples, prefix, error)))
    return failure();
  FailureOr<std::vector<CalibratedState>> states =
      readStates(model.get(), error);
  if (failed(states))
    return failure();
  if (states->empty())
    notes.push_back("no linear runs in FP8, so --calibration has no state to "
                    "calibrate");
  return FP8Calibration{std::move(*states)};
}

LogicalResult
mte::driver::applyCalibration(func::FuncOp forward,
                              const FP8Calibration &calibration,
                              std::string &error) {
  using transformer::ModelStateAttr;
  using transformer::TransformerDialect;
  MLIRContext *context = forward.getContext();
  size_t applied = 0;
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    auto state = forward.getArgAttrOfType<ModelStateAttr>(
        i, TransformerDialect::getStateAttrName());
    if (!state)
      continue;
    auto found = llvm::find_if(calibration.states, [&](const auto &entry) {
      return entry.name == state.getName().getValue();
    });
    std::vector<std::string> labels;
    for (Attribute label : state.getLabels())
      labels.push_back(cast<StringAttr>(label).str());
    auto type = cast<RankedTensorType>(state.getInitial().getType());
    // Both builds select their FP8 GEMMs by the same rules, in the same
    // order; anything else is a compiler bug, not the user's.
    if (found == calibration.states.end() || found->labels != labels ||
        ArrayRef<int64_t>(found->shape) != type.getShape()) {
      error = "internal error: the calibration build's state does not match "
              "the FP8 build's '" +
              state.getName().str() + "' (" + quotedList(labels) + ")";
      return failure();
    }
    auto initial = DenseElementsAttr::get(type, ArrayRef<float>(found->values));
    forward.setArgAttr(
        i, TransformerDialect::getStateAttrName(),
        ModelStateAttr::get(context, state.getName(), state.getKind(),
                            cast<ElementsAttr>(initial), state.getLabels()));
    ++applied;
  }
  if (applied != calibration.states.size()) {
    error = "internal error: the FP8 build has " + std::to_string(applied) +
            " of the calibration build's " +
            std::to_string(calibration.states.size()) + " states";
    return failure();
  }
  return success();
}
