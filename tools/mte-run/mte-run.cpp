//===- mte-run.cpp - run a model.so on .npy inputs ------------------------===//
//
//   mte-run model.so [--input NAME=FILE.npy ...] [--output-dir DIR]
//           [--save-inputs DIR] [--seed S] [--int-range LO:HI]
//           [--bench N [--warmup N]] [--fp8-state FILE.npz]
//           [--save-fp8-state FILE.npz] [--freeze-fp8-state]
//           [--world-size N]
//
// Runs a model compiled by mte-compile through libmte_runtime. Inputs come
// from .npy files or, when not given, from seeded random data; each output
// is summarised and, with --output-dir, written to DIR/<name>.npy. With
// --bench the model runs N more times and the median and 90th percentile
// latencies are printed. A model's FP8 scaling state (fp8.amax_history,
// fp8.scale) can be read from and saved to .npz files. A sharded model
// runs as N ranks: --world-size N forks one process per rank, or a
// launcher (torchrun, mpirun) starts them; rank 0 prints and writes what a
// single run does, the others run the same inputs silently. Every error
// prints one message (naming the rank of a world of several) and exits
// with status 1. docs/runtime.md describes the options.
//
//===----------------------------------------------------------------------===//

#include "mte/Tools/Numpy/Npy.h"
#include "mte/Tools/Numpy/Npz.h"
#include "mte/Tools/Numpy/Tensor.h"

#include "mte-c/Runtime.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mte::numpy;

namespace {

/// The command line.
struct Options {
  std::string modelPath;
  /// --input NAME=FILE, in command-line order.
  std::vector<std::pair<std::string, std::string>> inputFiles;
  std::string outputDir;
  std::string saveInputsDir;
  uint64_t seed = 0;
  IntRange intRange;
  uint64_t benchRuns = 0;
  uint64_t warmupRuns = 1;
  bool warmupGiven = false;
  /// --fp8-state, --save-fp8-state, --freeze-fp8-state.
  std::string stateFile, saveStateFile;
  bool freezeState = false;
  /// --world-size: the ranks mte-run starts, 0 when not given (the
  /// launcher's, or 1).
  int32_t worldSize = 0;
};

/// The rank a process of --world-size runs as; a default one leaves the
/// rank, the world size and the communicator to the environment.
struct RankOptions {
  int32_t rank = MTE_RANK_DEFAULT;
  int32_t worldSize = MTE_WORLD_SIZE_DEFAULT;
  std::string commId;
};

/// Closes a model on destruction.
struct ModelCloser {
  void operator()(mte_model *model) const { mte_model_close(model); }
};
using ModelHandle = std::unique_ptr<mte_model, ModelCloser>;

/// Owns the output buffers libmte_runtime allocates.
class OutputTensors {
public:
  explicit OutputTensors(size_t count) : tensors(count) {}
  OutputTensors(const OutputTensors &) = delete;
  OutputTensors &operator=(const OutputTensors &) = delete;
  ~OutputTensors() {
    for (mte_tensor &tensor : tensors)
      mte_free(tensor.data);
  }
  std::vector<mte_tensor> tensors;
};

} // namespace

static const char kUsage[] =
    "usage: mte-run MODEL.so [options]\n"
    "\n"
    "Runs a model compiled by mte-compile on .npy inputs or random data.\n"
    "\n"
    "options:\n"
    "  -i, --input NAME=FILE   read input NAME from FILE (.npy); inputs not\n"
    "                          given get random data\n"
    "  -o, --output-dir DIR    write each output to DIR/<name>.npy, with\n"
    "                          characters other than A-Z a-z 0-9 . _ -\n"
    "                          in the name replaced by '_'\n"
    "  --save-inputs DIR       write every input, read or random, to\n"
    "                          DIR/<name>.npy\n"
    "  --seed S                seed of the random inputs (default 0)\n"
    "  --int-range LO:HI       random integers in [LO, HI) (default 0:100);\n"
    "                          random floats are in [-1, 1)\n"
    "  --bench N               time N more runs; print median and p90\n"
    "  --warmup N              untimed runs before the timed ones (default "
    "1)\n"
    "  --fp8-state FILE.npz    start from the model state in FILE (FP8\n"
    "                          delayed scaling's fp8.amax_history and\n"
    "                          fp8.scale, as --save-fp8-state writes it)\n"
    "  --save-fp8-state FILE.npz\n"
    "                          write the model state after the runs\n"
    "  --freeze-fp8-state      runs do not update the model state\n"
    "  --world-size N          run N ranks of a sharded model, one process\n"
    "                          each (default: the ranks a launcher such as\n"
    "                          torchrun or mpirun started, else 1); rank 0\n"
    "                          prints and writes the outputs\n"
    "  -h, --help              print this help\n"
    "  --version               print the runtime and model ABI versions\n";

/// "rank R: " in a process of a world of several ranks, once it is known.
static std::string errorPrefix;

/// Prints `message` as an error, after what stdout holds so far, and returns
/// the exit status of a failure.
static int fail(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "mte-run: error: %s%s\n", errorPrefix.c_str(),
               message.c_str());
  return 1;
}

/// Parses a decimal unsigned integer that fills all of `text`.
static bool parseUnsigned(const std::string &text, uint64_t &value) {
  if (text.empty() || text[0] < '0' || text[0] > '9')
    return false;
  errno = 0;
  char *end;
  value = std::strtoull(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

/// Parses a decimal signed integer that fills all of `text`.
static bool parseSigned(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  errno = 0;
  char *end;
  value = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

/// The most ranks --world-size starts (a host communicator's limit).
static constexpr uint64_t kMaxWorldSize = 1024;

/// Parses the command line into `options`. Returns false and sets `error`
/// on a bad command line; sets `exitEarly` after printing --help or
/// --version.
static bool parseOptions(int argc, char **argv, Options &options,
                         std::string &error, bool &exitEarly) {
  exitEarly = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      exitEarly = true;
      return true;
    }
    if (arg == "--version") {
      std::printf("mte-run: mte runtime %s, model ABI version %u\n",
                  mte_runtime_version(), mte_runtime_model_abi_version());
      exitEarly = true;
      return true;
    }
    if (arg == "--freeze-fp8-state") {
      options.freezeState = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (!options.modelPath.empty()) {
        error = "more than one model given ('" + options.modelPath + "' and '" +
                arg + "')";
        return false;
      }
      options.modelPath = arg;
      continue;
    }

    // Every other option takes a value: --name=value or --name value.
    std::string name = arg, value;
    size_t equals = arg.find('=');
    if (arg.compare(0, 2, "--") == 0 && equals != std::string::npos)
      name = arg.substr(0, equals);
    static const char *const kValueOptions[] = {
        "-i",           "--input",          "-o",
        "--output-dir", "--save-inputs",    "--seed",
        "--bench",      "--int-range",      "--warmup",
        "--fp8-state",  "--save-fp8-state", "--world-size"};
    if (std::none_of(std::begin(kValueOptions), std::end(kValueOptions),
                     [&](const char *known) { return name == known; })) {
      error = "unknown option '" + name + "' (see mte-run --help)";
      return false;
    }
    if (name != arg) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      error = "option '" + arg + "' needs a value";
      return false;
    }
    auto invalid = [&](const char *expected) {
      error = "invalid value '" + value + "' for " + name + ": expected " +
              expected;
      return false;
    };

    if (name == "-i" || name == "--input") {
      size_t split = value.find('=');
      if (split == 0 || split == std::string::npos || split + 1 == value.size())
        return invalid("NAME=FILE");
      options.inputFiles.emplace_back(value.substr(0, split),
                                      value.substr(split + 1));
    } else if (name == "-o" || name == "--output-dir") {
      options.outputDir = value;
    } else if (name == "--save-inputs") {
      options.saveInputsDir = value;
    } else if (name == "--seed") {
      if (!parseUnsigned(value, options.seed))
        return invalid("an unsigned integer");
    } else if (name == "--int-range") {
      size_t split = value.find(':', 1);
      if (split == std::string::npos ||
          !parseSigned(value.substr(0, split), options.intRange.lo) ||
          !parseSigned(value.substr(split + 1), options.intRange.hi) ||
          options.intRange.lo >= options.intRange.hi)
        return invalid("LO:HI with LO < HI");
    } else if (name == "--bench") {
      if (!parseUnsigned(value, options.benchRuns) || options.benchRuns == 0)
        return invalid("a positive integer");
    } else if (name == "--fp8-state") {
      options.stateFile = value;
    } else if (name == "--save-fp8-state") {
      options.saveStateFile = value;
    } else if (name == "--warmup") {
      if (!parseUnsigned(value, options.warmupRuns))
        return invalid("an unsigned integer");
      options.warmupGiven = true;
    } else if (name == "--world-size") {
      uint64_t worldSize;
      if (!parseUnsigned(value, worldSize) || worldSize == 0 ||
          worldSize > kMaxWorldSize)
        return invalid("a number of ranks from 1 to 1024");
      options.worldSize = static_cast<int32_t>(worldSize);
    }
  }
  if (options.modelPath.empty()) {
    error = "no model given (see mte-run --help)";
    return false;
  }
  if (options.warmupGiven && options.benchRuns == 0) {
    error = "--warmup needs --bench";
    return false;
  }
  return true;
}

/// Maps tensor names to file names that stay inside the output directory:
/// characters other than letters, digits, '.', '_' and '-' become '_', and
/// a name that collides with an earlier one gets "-2", "-3", ... appended.
class FileNamer {
public:
  std::string fileName(const std::string &tensorName) {
    std::string base;
    for (char c : tensorName) {
      bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      base += keep ? c : '_';
    }
    if (base.empty())
      base = "_";
    std::string candidate = base;
    for (unsigned suffix = 2; !used.insert(candidate).second; ++suffix)
      candidate = base + "-" + std::to_string(suffix);
    return candidate + ".npy";
  }

private:
  std::set<std::string> used;
};

/// Creates `dir` and its parents unless it is a directory already.
static bool createDirectory(const std::string &dir, std::string &error) {
  std::error_code code;
  if (std::filesystem::exists(dir, code) &&
      !std::filesystem::is_directory(dir, code)) {
    error = "'" + dir + "' exists and is not a directory";
    return false;
  }
  std::filesystem::create_directories(dir, code);
  if (code) {
    error = "cannot create directory '" + dir + "': " + code.message();
    return false;
  }
  return true;
}

/// Writes `tensor` to `path`, widening narrow float types to f32.
static bool writeTensor(const std::string &path, const TensorView &tensor,
                        std::string &error) {
  if (!isNarrowFloat(tensor.dtype))
    return writeNpy(path, tensor, error);
  Tensor wide;
  return widenToF32(tensor, wide, error) && writeNpy(path, wide.view(), error);
}

/// Describes the values fillRandom gives a tensor of `dtype`.
static std::string randomRange(int32_t dtype, const IntRange &intRange) {
  if (dtype == MTE_DTYPE_BOOL)
    return "{false, true}";
  if (dtype == MTE_DTYPE_F32 || dtype == MTE_DTYPE_F64 ||
      dtype == MTE_DTYPE_F16 || isNarrowFloat(dtype))
    return "[-1, 1)";
  return "[" + std::to_string(intRange.lo) + ", " +
         std::to_string(intRange.hi) + ")";
}

/// Reads or generates every model input into `inputs` and prints where each
/// came from.
static bool prepareInputs(mte_model *model, const Options &options,
                          std::vector<Tensor> &inputs, std::string &error) {
  size_t numInputs = mte_model_num_inputs(model);
  inputs.resize(numInputs);
  std::vector<std::string> sources(numInputs);
  const char *modelPath = mte_model_path(model);

  for (const auto &[name, path] : options.inputFiles) {
    size_t index;
    if (mte_model_find_input(model, name.c_str(), &index) != MTE_OK) {
      error = mte_last_error();
      return false;
    }
    if (!sources[index].empty()) {
      error = "input '" + name + "' given twice";
      return false;
    }
    const mte_tensor_info &info = *mte_model_input(model, index);
    std::vector<int64_t> shape(info.shape, info.shape + info.rank);
    Tensor tensor;
    if (!readNpy(path, tensor, error))
      return false;
    if (isNarrowFloat(info.dtype) && tensor.dtype() == MTE_DTYPE_F32) {
      Tensor narrow;
      if (!narrowFromF32(tensor.view(), info.dtype, narrow, error))
        return false;
      tensor = std::move(narrow);
    }
    if (tensor.dtype() != info.dtype || tensor.shape() != shape) {
      error = "'" + path + "' holds " + dtypeName(tensor.dtype()) + " " +
              formatShape(tensor.shape()) + ", but input '" + name + "' of '" +
              modelPath + "' is " + dtypeName(info.dtype) + " " +
              formatShape(shape);
      if (isNarrowFloat(info.dtype))
        error += " (give " + dtypeName(info.dtype) + " inputs as f32 arrays)";
      return false;
    }
    inputs[index] = std::move(tensor);
    sources[index] = "from '" + path + "'";
  }

  for (size_t i = 0; i < numInputs; ++i) {
    if (!sources[i].empty())
      continue;
    const mte_tensor_info &info = *mte_model_input(model, i);
    if (!checkIntRange(options.intRange, info.dtype, error)) {
      error = "--int-range: " + error + " (input '" + info.name + "')";
      return false;
    }
    if (!inputs[i].allocate(
            info.dtype,
            std::vector<int64_t>(info.shape, info.shape + info.rank), error))
      return false;
    fillRandom(inputs[i], options.seed, i, options.intRange);
    sources[i] = "random in " + randomRange(info.dtype, options.intRange) +
                 ", seed " + std::to_string(options.seed);
  }

  for (size_t i = 0; i < numInputs; ++i) {
    const mte_tensor_info &info = *mte_model_input(model, i);
    std::printf("input '%s': %s %s %s\n", info.name,
                dtypeName(info.dtype).c_str(),
                formatShape(inputs[i].shape()).c_str(), sources[i].c_str());
  }
  return true;
}

/// Writes every input to `dir` for --save-inputs.
static bool saveInputs(mte_model *model, const std::vector<Tensor> &inputs,
                       const std::string &dir, std::string &error) {
  if (!createDirectory(dir, error))
    return false;
  FileNamer namer;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string path = (std::filesystem::path(dir) /
                        namer.fileName(mte_model_input(model, i)->name))
                           .string();
    if (!writeTensor(path, inputs[i].view(), error))
      return false;
  }
  return true;
}

/// Prints the summary of every output and writes them for --output-dir.
static bool reportOutputs(const std::vector<mte_tensor> &outputs,
                          const std::string &outputDir, std::string &error) {
  constexpr size_t kMaxValues = 8;
  if (!outputDir.empty() && !createDirectory(outputDir, error))
    return false;
  FileNamer namer;
  for (const mte_tensor &output : outputs) {
    TensorView view{
        output.dtype,
        std::vector<int64_t>(output.shape, output.shape + output.rank),
        output.data};
    std::printf("output '%s': %s %s\n", output.name,
                dtypeName(view.dtype).c_str(), formatShape(view.shape).c_str());
    Summary summary = summarize(view, kMaxValues);
    size_t count = numElements(view.shape);
    if (count == 0) {
      std::printf("  empty\n");
    } else if (summary.min.empty()) {
      std::printf("  all %zu values are nan\n", count);
    } else {
      std::printf("  min %s max %s mean %s", summary.min.c_str(),
                  summary.max.c_str(), summary.mean.c_str());
      if (summary.nanCount)
        std::printf(" (%zu nan)", summary.nanCount);
      std::printf("\n");
    }
    if (count) {
      std::printf("  values");
      for (const std::string &value : summary.firstValues)
        std::printf(" %s", value.c_str());
      std::printf(count > kMaxValues ? " ...\n" : "\n");
    }
    if (outputDir.empty())
      continue;
    std::string path =
        (std::filesystem::path(outputDir) / namer.fileName(output.name))
            .string();
    if (!writeTensor(path, view, error))
      return false;
    std::printf("  written to '%s'\n", path.c_str());
  }
  return true;
}

/// The labels of state `index`, as the ".labels" member of a state file
/// holds them: joined by newlines, as bytes.
static std::string stateLabels(mte_model *model, size_t index) {
  std::string labels;
  for (size_t i = 0, e = mte_model_state_num_labels(model, index); i < e; ++i)
    labels += (i ? "\n" : "") + std::string(mte_model_state_label(model, index, i));
  return labels;
}

/// Sets every state of `model` from the .npz file at `path` (--fp8-state):
/// the file must hold each state, of its type and shape, and no other
/// array but the states' labels, which must be the model's.
static bool loadState(mte_model *model, const std::string &path,
                      std::string &error) {
  std::vector<std::pair<std::string, Tensor>> arrays;
  if (!readNpz(path, arrays, error))
    return false;
  size_t numStates = mte_model_num_states(model);
  if (numStates == 0) {
    error = "--fp8-state: '" + std::string(mte_model_path(model)) +
            "' has no state (compile it with --fp8-recipe=delayed)";
    return false;
  }
  std::vector<bool> given(numStates);
  for (auto &[key, tensor] : arrays) {
    std::string name = key;
    bool labels = name.size() > 7 &&
                  name.compare(name.size() - 7, 7, ".labels") == 0;
    if (labels)
      name.resize(name.size() - 7);
    size_t index;
    if (mte_model_find_state(model, name.c_str(), &index) != MTE_OK) {
      error = "'" + path + "' holds '" + key + "': " + mte_last_error();
      return false;
    }
    const mte_tensor_info &info = *mte_model_state(model, index);
    if (labels) {
      std::string saved(static_cast<const char *>(tensor.data()),
                        tensor.numBytes());
      std::string expected = stateLabels(model, index);
      if (saved != expected) {
        auto list = [](std::string text) {
          for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos;)
            text.replace(at, 1, "', '");
          return "'" + text + "'";
        };
        error = "'" + path + "' was saved from a model whose state '" + name +
                "' is of the tensors " + list(saved) + ", but '" +
                mte_model_path(model) + "' quantises " + list(expected);
        return false;
      }
      continue;
    }
    std::vector<int64_t> shape(info.shape, info.shape + info.rank);
    if (tensor.dtype() != info.dtype || tensor.shape() != shape) {
      error = "'" + path + "': state '" + name + "' is " +
              dtypeName(tensor.dtype()) + " " + formatShape(tensor.shape()) +
              ", but '" + mte_model_path(model) + "' has " +
              dtypeName(info.dtype) + " " + formatShape(shape);
      return false;
    }
    if (mte_model_set_state(model, index, tensor.data(), tensor.numBytes()) !=
        MTE_OK) {
      error = "'" + path + "': " + mte_last_error();
      return false;
    }
    given[index] = true;
  }
  for (size_t i = 0; i < numStates; ++i)
    if (!given[i]) {
      error = "'" + path + "' has no state '" +
              mte_model_state(model, i)->name + "'";
      return false;
    }
  std::printf("state: %zu tensor%s from '%s'\n", numStates,
              numStates == 1 ? "" : "s", path.c_str());
  return true;
}

/// Writes every state of `model`, and its labels, to `path`
/// (--save-fp8-state).
static bool saveState(mte_model *model, const std::string &path,
                      std::string &error) {
  size_t numStates = mte_model_num_states(model);
  if (numStates == 0) {
    error = "--save-fp8-state: '" + std::string(mte_model_path(model)) +
            "' has no state (compile it with --fp8-recipe=delayed)";
    return false;
  }
  std::vector<Tensor> values(numStates);
  std::vector<std::string> labels(numStates);
  std::vector<std::pair<std::string, TensorView>> arrays;
  for (size_t i = 0; i < numStates; ++i) {
    const mte_tensor_info &info = *mte_model_state(model, i);
    if (!values[i].allocate(info.dtype,
                            std::vector<int64_t>(info.shape,
                                                 info.shape + info.rank),
                            error))
      return false;
    if (mte_model_get_state(model, i, values[i].data(),
                            values[i].numBytes()) != MTE_OK) {
      error = mte_last_error();
      return false;
    }
    arrays.emplace_back(info.name, values[i].view());
    labels[i] = stateLabels(model, i);
    if (!labels[i].empty())
      arrays.emplace_back(
          std::string(info.name) + ".labels",
          TensorView{MTE_DTYPE_U8, {static_cast<int64_t>(labels[i].size())},
                     labels[i].data()});
  }
  if (!writeNpz(path, arrays, error))
    return false;
  std::printf("state: %zu tensor%s written to '%s'\n", numStates,
              numStates == 1 ? "" : "s", path.c_str());
  return true;
}

/// Formats a latency in nanoseconds in the unit `unitNanos` names.
static std::string formatLatency(double nanos, double unitNanos,
                                 const char *unit) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.3f %s", nanos / unitNanos, unit);
  return text;
}

/// Runs the model `warmup` times untimed, then `runs` times timed, and
/// prints the median and 90th percentile (nearest rank) latency.
static bool benchmark(mte_model *model, const std::vector<Tensor> &inputs,
                      const std::vector<mte_tensor> &outputs, uint64_t warmup,
                      uint64_t runs, std::string &error) {
  std::vector<const void *> inputBuffers;
  for (const Tensor &input : inputs)
    inputBuffers.push_back(input.data());
  std::vector<void *> outputBuffers;
  for (const mte_tensor &output : outputs)
    outputBuffers.push_back(output.data);
  auto runOnce = [&] {
    if (mte_model_run(model, inputBuffers.size(), inputBuffers.data(),
                      outputBuffers.size(), outputBuffers.data()) == MTE_OK)
      return true;
    error = mte_last_error();
    return false;
  };

  for (uint64_t i = 0; i < warmup; ++i)
    if (!runOnce())
      return false;
  std::vector<double> nanos;
  nanos.reserve(runs);
  for (uint64_t i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!runOnce())
      return false;
    auto end = std::chrono::steady_clock::now();
    nanos.push_back(
        std::chrono::duration<double, std::nano>(end - start).count());
  }
  std::sort(nanos.begin(), nanos.end());
  size_t middle = nanos.size() / 2;
  double median = nanos.size() % 2 ? nanos[middle]
                                   : (nanos[middle - 1] + nanos[middle]) / 2;
  size_t p90Rank = (nanos.size() * 9 + 9) / 10; // ceil(0.9 * n), 1-based
  double p90 = nanos[p90Rank - 1];
  double unitNanos = median >= 1e6 ? 1e6 : 1e3;
  const char *unit = median >= 1e6 ? "ms" : "us";
  std::printf("bench: %llu run%s after %llu warm-up run%s: median %s, p90 "
              "%s\n",
              static_cast<unsigned long long>(runs), runs == 1 ? "" : "s",
              static_cast<unsigned long long>(warmup), warmup == 1 ? "" : "s",
              formatLatency(median, unitNanos, unit).c_str(),
              formatLatency(p90, unitNanos, unit).c_str());
  return true;
}

/// Describes where a model runs among ranks, for its summary line: ",
/// grid 2x2, rank 0 of 4" for a sharded model or one opened in a world of
/// several ranks, "" otherwise.
static std::string describeRanks(mte_model *model) {
  size_t numAxes = mte_model_num_grid_axes(model);
  int32_t worldSize = mte_model_world_size(model);
  if (numAxes == 0 && worldSize == 1)
    return "";
  std::string grid;
  for (size_t i = 0; i < numAxes; ++i)
    grid += (i ? "x" : "") + std::to_string(mte_model_grid_axis(model, i));
  return (numAxes ? ", grid " + grid : std::string()) + ", rank " +
         std::to_string(mte_model_rank(model)) + " of " +
         std::to_string(worldSize);
}

/// Makes everything this process prints to stdout vanish (ranks other
/// than 0).
static void silenceStdout() {
  std::fflush(stdout);
  int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
}

/// Opens the model as `ranks` says, runs it as the options say, and returns
/// the exit status. Ranks other than 0 print nothing but errors and write
/// no file.
static int runRank(Options options, const RankOptions &ranks) {
  std::string error;
  mte_open_options openOptions = {
      sizeof(mte_open_options), MTE_DEVICE_DEFAULT, ranks.rank, ranks.worldSize,
      ranks.commId.empty() ? nullptr : ranks.commId.c_str()};
  mte_model *opened;
  if (mte_model_open_with_options(options.modelPath.c_str(), &openOptions,
                                  &opened) != MTE_OK)
    return fail(mte_last_error());
  ModelHandle model(opened);
  int32_t rank = mte_model_rank(opened);
  if (mte_model_world_size(opened) > 1)
    errorPrefix = "rank " + std::to_string(rank) + ": ";
  if (rank != 0) {
    silenceStdout();
    options.outputDir.clear();
    options.saveInputsDir.clear();
    options.saveStateFile.clear();
  }
  size_t numInputs = mte_model_num_inputs(opened);
  size_t numOutputs = mte_model_num_outputs(opened);
  std::printf("model '%s': target %s, %zu input%s, %zu output%s%s\n",
              mte_model_path(opened), mte_model_target(opened), numInputs,
              numInputs == 1 ? "" : "s", numOutputs, numOutputs == 1 ? "" : "s",
              describeRanks(opened).c_str());

  if (!options.stateFile.empty() &&
      !loadState(opened, options.stateFile, error))
    return fail(error);
  if (options.freezeState && mte_model_freeze_state(opened, 1) != MTE_OK)
    return fail(mte_last_error());

  std::vector<Tensor> inputs;
  if (!prepareInputs(opened, options, inputs, error))
    return fail(error);
  if (!options.saveInputsDir.empty() &&
      !saveInputs(opened, inputs, options.saveInputsDir, error))
    return fail(error);

  std::vector<mte_tensor> inputTensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const mte_tensor_info &info = *mte_model_input(opened, i);
    inputTensors.push_back({info.name, inputs[i].dtype(), info.rank,
                            inputs[i].shape().data(), inputs[i].data()});
  }
  // Leaving every data pointer null lets the runtime allocate the outputs.
  OutputTensors outputs(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i)
    outputs.tensors[i].name = mte_model_output(opened, i)->name;
  if (mte_model_run_tensors(opened, inputTensors.size(), inputTensors.data(),
                            numOutputs, outputs.tensors.data()) != MTE_OK)
    return fail(mte_last_error());

  if (!reportOutputs(outputs.tensors, options.outputDir, error))
    return fail(error);
  if (options.benchRuns &&
      !benchmark(opened, inputs, outputs.tensors, options.warmupRuns,
                 options.benchRuns, error))
    return fail(error);
  if (!options.saveStateFile.empty() &&
      !saveState(opened, options.saveStateFile, error))
    return fail(error);
  return 0;
}

/// How long the ranks of --world-size may run on after one failed before
/// they are stopped: long enough to report why they fail too (a rank sees
/// another's failure within milliseconds), short enough that none is left
/// waiting out the communicator's timeout.
static constexpr std::chrono::seconds kGracePeriod(5);

/// Runs options.worldSize ranks, one forked process each, on a fresh
/// communicator id, and returns 1 when any of them failed. A rank's own
/// errors are printed by it; a rank that dies otherwise is reported here.
static int runRanks(const Options &options) {
  int32_t worldSize = options.worldSize;
  std::string commId = "mte-run-" + std::to_string(::getpid());
  std::vector<pid_t> children(worldSize, -1);
  std::fflush(stdout);
  std::fflush(stderr);
  int status = 0;
  for (int32_t rank = 0; rank < worldSize; ++rank) {
    pid_t child = ::fork();
    if (child == 0) {
      errorPrefix = "rank " + std::to_string(rank) + ": ";
      std::exit(runRank(options, {rank, worldSize, commId}));
    }
    if (child < 0) {
      status = fail("cannot start rank " + std::to_string(rank) + ": " +
                    std::strerror(errno));
      break;
    }
    children[rank] = child;
  }
  int32_t running = 0;
  for (pid_t child : children)
    running += child > 0;
  // Once a rank failed, the others get until `deadline`.
  bool stopping = status != 0;
  auto deadline = std::chrono::steady_clock::now();
  std::vector<bool> stopped(worldSize, false);
  while (running > 0) {
    int wait;
    pid_t done = ::waitpid(-1, &wait, stopping ? WNOHANG : 0);
    if (done < 0 && errno == EINTR)
      continue;
    if (done < 0)
      break;
    if (done == 0) {
      if (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      for (int32_t rank = 0; rank < worldSize; ++rank)
        if (children[rank] > 0 && !stopped[rank]) {
          ::kill(children[rank], SIGKILL);
          stopped[rank] = true;
        }
      stopping = false;
      continue;
    }
    auto found = std::find(children.begin(), children.end(), done);
    if (found == children.end())
      continue;
    int32_t rank = static_cast<int32_t>(found - children.begin());
    *found = -1;
    --running;
    if (WIFEXITED(wait) && WEXITSTATUS(wait) == 0)
      continue;
    std::string prefix = "rank " + std::to_string(rank) + " ";
    if (stopped[rank])
      fail(prefix + "was stopped after another rank failed");
    else if (WIFSIGNALED(wait))
      fail(prefix + "was killed by signal " + std::to_string(WTERMSIG(wait)) +
           " (" + strsignal(WTERMSIG(wait)) + ")");
    else if (WEXITSTATUS(wait) != 1) // 1: it printed its error itself
      fail(prefix + "exited with status " + std::to_string(WEXITSTATUS(wait)));
    if (status == 0) {
      stopping = true;
      deadline = std::chrono::steady_clock::now() + kGracePeriod;
    }
    status = 1;
  }
  return status;
}

int main(int argc, char **argv) {
  Options options;
  std::string error;
  bool exitEarly;
  if (!parseOptions(argc, argv, options, error, exitEarly))
    return fail(error);
  if (exitEarly)
    return 0;
  if (options.worldSize > 1)
    return runRanks(options);
  // --world-size 1 runs alone whatever the environment says; without it,
  // a launcher's environment names the rank.
  RankOptions ranks;
  if (options.worldSize == 1)
    ranks = {0, 1, ""};
  return runRank(options, ranks);
}
