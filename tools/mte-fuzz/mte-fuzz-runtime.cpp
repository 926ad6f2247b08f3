//===- mte-fuzz-runtime.cpp - libFuzzer target for libmte_runtime ---------===//
//
// Drives mte_model_run_tensors and mte_model_run of real host models (built
// by mte-compile from the test fixtures, see CMakeLists.txt) with tensors
// the fuzzer describes: names, element types, ranks, shapes, NULL pointers
// and values. The runtime must answer every call with a status; when every
// tensor matches the model, the run must succeed.
//
// Token ids: the fuzzer passes any id; a run with an id outside its table
// must fail with MTE_ERROR_INVALID_INPUT (the model's index checks), never
// read outside it. MTE_FUZZ_OUT_OF_RANGE_IDS=0 in the environment reduces
// ids into the tables instead, to fuzz the rest of a run more often.
//
//===----------------------------------------------------------------------===//

#include "mte-c/Runtime.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef MTE_FUZZ_MODEL_DIR
#error "MTE_FUZZ_MODEL_DIR names the directory of the fuzzed models"
#endif

namespace {
/// The status of a run given an id outside its table.
constexpr int kInvalidInput = MTE_ERROR_INVALID_INPUT;
constexpr int kLastStatus = kInvalidInput;

/// An index input of a fixture model and the size of the table it indexes.
struct IndexInput {
  const char *name;
  int64_t tableSize;
};

struct FuzzModel {
  const char *file;
  std::vector<IndexInput> indexInputs;
  mte_model *handle = nullptr;
};

/// The models CMakeLists.txt compiles, with the vocabulary sizes of
/// models.py's tiny configuration.
std::vector<FuzzModel> models = {
    {"linear.so", {}},
    {"bert.so", {{"input_ids", 100}, {"token_type_ids", 2}}},
    {"gpt2.so", {{"input_ids", 100}}},
};

bool outOfRangeIds = true;

[[noreturn]] void bug(const char *what, int status) {
  std::fprintf(stderr, "mte-fuzz-runtime: %s (status %d: %s)\n", what, status,
               mte_last_error());
  std::abort();
}

void checkStatus(mte_status status) {
  if (status < MTE_OK || status > kLastStatus)
    bug("unknown status", status);
  if (!mte_status_name(status) || !mte_last_error())
    bug("no status name or message", status);
}

/// The number of elements of a shape, or -1 for a negative dimension or a
/// count that overflows.
int64_t elementCount(const int64_t *shape, int32_t rank) {
  int64_t count = 1;
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] < 0 || __builtin_mul_overflow(count, shape[i], &count))
      return -1;
  return count;
}

/// A buffer for `count` elements of `elementSize` bytes, its contents chosen
/// by the fuzzer. Buffers the fuzzer claims are larger than kMaxBytes are
/// allocated at that size only: the runtime must reject such a tensor
/// before it reads it, and ASan reports the read if it does not.
constexpr size_t kMaxBytes = 1 << 16;
std::vector<uint8_t> makeBuffer(FuzzedDataProvider &fdp, int64_t count,
                                size_t elementSize) {
  size_t bytes = kMaxBytes;
  if (count >= 0 && elementSize &&
      static_cast<uint64_t>(count) <= kMaxBytes / elementSize)
    bytes = static_cast<size_t>(count) * elementSize;
  std::vector<uint8_t> buffer(bytes);
  std::vector<uint8_t> values = fdp.ConsumeBytes<uint8_t>(bytes);
  if (!values.empty())
    std::memcpy(buffer.data(), values.data(), values.size());
  return buffer;
}

/// Reduces the ids of an index input into its table, or records whether
/// one lies outside it.
void fixIds(std::vector<uint8_t> &buffer, int64_t tableSize,
            bool &anyOutOfRange) {
  size_t count = buffer.size() / sizeof(int64_t);
  for (size_t i = 0; i < count; ++i) {
    int64_t id;
    std::memcpy(&id, buffer.data() + i * sizeof(int64_t), sizeof(id));
    if (id >= 0 && id < tableSize)
      continue;
    if (outOfRangeIds) {
      anyOutOfRange = true;
      continue;
    }
    id = static_cast<int64_t>(static_cast<uint64_t>(id) %
                              static_cast<uint64_t>(tableSize));
    std::memcpy(buffer.data() + i * sizeof(int64_t), &id, sizeof(id));
  }
}

/// One fuzzer-described tensor and the storage it points to.
struct TensorStorage {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// Describes a tensor for `info` (or, for `info` NULL, for no tensor of the
/// model): each field is the model's or one the fuzzer picks. Returns
/// whether the tensor matches `info` exactly.
bool describeTensor(FuzzedDataProvider &fdp, const mte_tensor_info *info,
                    bool isInput, TensorStorage &storage, mte_tensor &tensor,
                    bool &nullName) {
  bool matches = info != nullptr;
  nullName = false;
  tensor = mte_tensor();
  switch (fdp.ConsumeIntegralInRange(0, 7)) {
  case 0:
    nullName = true;
    matches = false;
    break;
  case 1:
    storage.name = fdp.ConsumeRandomLengthString(16);
    matches &= info && storage.name == info->name;
    break;
  default:
    storage.name = info ? info->name : "";
    break;
  }
  tensor.name = nullName ? nullptr : storage.name.c_str();

  tensor.dtype = info ? info->dtype : MTE_DTYPE_F32;
  if (fdp.ConsumeIntegralInRange(0, 7) == 0) {
    tensor.dtype = fdp.ConsumeIntegralInRange<int32_t>(-1, 17);
    matches &= info && tensor.dtype == info->dtype;
  }

  if (info)
    storage.shape.assign(info->shape, info->shape + info->rank);
  tensor.rank = static_cast<int32_t>(storage.shape.size());
  switch (fdp.ConsumeIntegralInRange(0, 7)) {
  case 0: // another rank
    tensor.rank = fdp.ConsumeIntegralInRange<int32_t>(-2, 9);
    storage.shape.resize(tensor.rank > 0 ? tensor.rank : 0, 1);
    break;
  case 1: // one dimension changed
    if (!storage.shape.empty()) {
      size_t i = fdp.ConsumeIntegralInRange<size_t>(0, storage.shape.size() - 1);
      storage.shape[i] = fdp.PickValueInArray<int64_t>(
          {-1, 0, 1, 2, 7, 64, INT64_MAX, INT64_MIN, int64_t(1) << 32,
           fdp.ConsumeIntegral<int64_t>()});
    }
    break;
  default:
    break;
  }
  tensor.shape = storage.shape.empty() && fdp.ConsumeBool()
                     ? nullptr
                     : storage.shape.data();
  matches &= info && tensor.rank == info->rank &&
             (tensor.rank == 0 ||
              (tensor.shape && std::equal(storage.shape.begin(),
                                          storage.shape.end(), info->shape)));

  // Outputs with a NULL data pointer ask the runtime to allocate them.
  bool nullData = fdp.ConsumeIntegralInRange(0, isInput ? 15 : 2) == 0;
  if (!nullData) {
    int64_t count = tensor.shape && tensor.rank >= 0
                        ? elementCount(tensor.shape, tensor.rank)
                        : -1;
    storage.data = makeBuffer(fdp, count, mte_dtype_size(tensor.dtype));
    // A zero-element buffer still needs a non-null address.
    storage.data.reserve(1);
    tensor.data = storage.data.data();
  } else if (isInput) {
    matches = false;
  }
  return matches;
}

void fuzzRunTensors(FuzzedDataProvider &fdp, FuzzModel &model) {
  mte_model *handle = model.handle;
  size_t numInputs = mte_model_num_inputs(handle);
  size_t numOutputs = mte_model_num_outputs(handle);

  // The tensors name the model's inputs in a fuzzer-chosen order, with some
  // left out, repeated or replaced by names the model does not have.
  size_t count = fdp.ConsumeIntegralInRange<size_t>(0, numInputs + 2);
  bool valid = count == numInputs;
  bool anyOutOfRange = false;
  std::vector<TensorStorage> inputStorage(count);
  std::vector<mte_tensor> inputs(count);
  std::vector<bool> named(numInputs, false);
  for (size_t i = 0; i < count; ++i) {
    size_t index = fdp.ConsumeBool()
                       ? i
                       : fdp.ConsumeIntegralInRange<size_t>(0, numInputs);
    const mte_tensor_info *info = mte_model_input(handle, index);
    bool nullName;
    bool matches = describeTensor(fdp, info, /*isInput=*/true,
                                  inputStorage[i], inputs[i], nullName);
    if (!matches || named[index]) {
      valid = false;
      continue;
    }
    named[index] = true;
    for (const IndexInput &indexInput : model.indexInputs)
      if (std::strcmp(info->name, indexInput.name) == 0)
        fixIds(inputStorage[i].data, indexInput.tableSize, anyOutOfRange);
  }

  size_t outputCount = fdp.ConsumeIntegralInRange<size_t>(0, numOutputs + 1);
  std::vector<TensorStorage> outputStorage(outputCount);
  std::vector<mte_tensor> outputs(outputCount);
  std::vector<bool> outputNamed(numOutputs, false);
  for (size_t i = 0; i < outputCount; ++i) {
    size_t index = fdp.ConsumeIntegralInRange<size_t>(0, numOutputs);
    const mte_tensor_info *info = mte_model_output(handle, index);
    bool nullName;
    bool matches = describeTensor(fdp, info, /*isInput=*/false,
                                  outputStorage[i], outputs[i], nullName);
    // An output the runtime allocates needs only its name to match.
    if (info && !nullName && !outputs[i].data &&
        outputStorage[i].name == info->name)
      matches = true;
    if (!matches || outputNamed[index])
      valid = false;
    else
      outputNamed[index] = true;
  }

  std::vector<void *> given(outputCount);
  for (size_t i = 0; i < outputCount; ++i)
    given[i] = outputs[i].data;
  mte_status status =
      mte_model_run_tensors(handle, inputs.size(), inputs.data(),
                            outputs.size(), outputs.data());
  checkStatus(status);
  if (valid && status != MTE_OK &&
      !(anyOutOfRange && status == kInvalidInput))
    bug("a run of matching tensors failed", status);
  if (valid && anyOutOfRange && status != kInvalidInput && status != MTE_OK)
    bug("an id outside its table gave neither ok nor invalid input", status);
  for (size_t i = 0; i < outputCount; ++i) {
    if (given[i]) {
      if (outputs[i].data != given[i])
        bug("the run replaced a buffer it was given", status);
      continue;
    }
    // Allocated by the runtime: present after success only.
    if (status != MTE_OK && outputs[i].data)
      bug("a failed run left an allocated output", status);
    mte_free(outputs[i].data);
  }
}

/// mte_model_run: positional buffers of the model's sizes (the runtime
/// cannot check sizes here), with fuzzer-chosen counts and NULL pointers.
void fuzzRun(FuzzedDataProvider &fdp, FuzzModel &model) {
  mte_model *handle = model.handle;
  size_t numInputs = mte_model_num_inputs(handle);
  size_t numOutputs = mte_model_num_outputs(handle);
  bool valid = true;
  bool anyOutOfRange = false;

  std::vector<std::vector<uint8_t>> inputStorage(numInputs);
  std::vector<const void *> inputs(numInputs);
  for (size_t i = 0; i < numInputs; ++i) {
    const mte_tensor_info *info = mte_model_input(handle, i);
    inputStorage[i] = makeBuffer(fdp, elementCount(info->shape, info->rank),
                                 mte_dtype_size(info->dtype));
    inputStorage[i].reserve(1);
    inputs[i] = inputStorage[i].data();
    for (const IndexInput &indexInput : model.indexInputs)
      if (std::strcmp(info->name, indexInput.name) == 0)
        fixIds(inputStorage[i], indexInput.tableSize, anyOutOfRange);
  }
  std::vector<std::vector<uint8_t>> outputStorage(numOutputs);
  std::vector<void *> outputs(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i) {
    const mte_tensor_info *info = mte_model_output(handle, i);
    outputStorage[i].resize(elementCount(info->shape, info->rank) *
                                mte_dtype_size(info->dtype) +
                            1);
    outputs[i] = outputStorage[i].data();
  }
  if (fdp.ConsumeIntegralInRange(0, 7) == 0) {
    valid = false;
    if (numInputs && fdp.ConsumeBool())
      inputs[fdp.ConsumeIntegralInRange<size_t>(0, numInputs - 1)] = nullptr;
    else if (numOutputs)
      outputs[fdp.ConsumeIntegralInRange<size_t>(0, numOutputs - 1)] = nullptr;
  }
  // Counts other than the model's: the runtime reads no further than the
  // count it is given, so the arrays are sized for the larger.
  size_t inputCount = numInputs, outputCount = numOutputs;
  if (fdp.ConsumeIntegralInRange(0, 7) == 0) {
    inputCount = fdp.ConsumeIntegralInRange<size_t>(0, numInputs + 1);
    outputCount = fdp.ConsumeIntegralInRange<size_t>(0, numOutputs + 1);
    valid &= inputCount == numInputs && outputCount == numOutputs;
  }
  inputs.resize(std::max(inputCount, numInputs), nullptr);
  outputs.resize(std::max(outputCount, numOutputs), nullptr);
  bool nullArrays = fdp.ConsumeIntegralInRange(0, 15) == 0;
  valid &= !nullArrays;

  mte_status status =
      mte_model_run(handle, inputCount, nullArrays ? nullptr : inputs.data(),
                    outputCount, nullArrays ? nullptr : outputs.data());
  checkStatus(status);
  if (valid && status != MTE_OK &&
      !(anyOutOfRange && status == kInvalidInput))
    bug("a run of the model's buffers failed", status);
}

/// Lookups by fuzzer-chosen names and indices.
void fuzzMetadata(FuzzedDataProvider &fdp, FuzzModel &model) {
  std::string name = fdp.ConsumeRandomLengthString(32);
  size_t index = 0;
  checkStatus(mte_model_find_input(model.handle, name.c_str(), &index));
  checkStatus(mte_model_find_output(model.handle, name.c_str(), &index));
  size_t i = fdp.ConsumeIntegral<size_t>();
  (void)mte_model_input(model.handle, i);
  (void)mte_model_output(model.handle, i);
  (void)mte_dtype_name(fdp.ConsumeIntegral<int32_t>());
  (void)mte_dtype_size(fdp.ConsumeIntegral<int32_t>());
}
} // namespace

/// LLVM's BumpPtrAllocator poisons its free space when compiled with ASan,
/// as mte's code is, but not in the prebuilt libMLIR.so, which allocates
/// from the same allocators: user poisoning would report libMLIR's own
/// allocations.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *env = std::getenv("MTE_FUZZ_OUT_OF_RANGE_IDS");
  outOfRangeIds = !(env && std::strcmp(env, "0") == 0);
  for (FuzzModel &model : models) {
    std::string path = std::string(MTE_FUZZ_MODEL_DIR) + "/" + model.file;
    if (mte_model_open(path.c_str(), &model.handle) != MTE_OK) {
      std::fprintf(stderr, "mte-fuzz-runtime: %s\n", mte_last_error());
      std::exit(1);
    }
  }
  std::atexit([] {
    for (FuzzModel &model : models)
      mte_model_close(model.handle);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  FuzzModel &model =
      models[fdp.ConsumeIntegralInRange<size_t>(0, models.size() - 1)];
  switch (fdp.ConsumeIntegralInRange(0, 3)) {
  case 0:
    fuzzRun(fdp, model);
    break;
  case 1:
    fuzzMetadata(fdp, model);
    break;
  default:
    fuzzRunTensors(fdp, model);
    break;
  }
  return 0;
}
