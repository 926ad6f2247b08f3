//===- ModelState.cpp - tensors a model carries between runs --------------===//

#include "ModelState.h"

#include "DType.h"
#include "Status.h"

#include <cmath>
#include <cstring>

using namespace mte::runtime;

mte_status mte::runtime::readStateTable(const char *path,
                                        const mte_model_abi *abi,
                                        std::vector<StateDesc> &states) {
  if (abi->num_states && !abi->states)
    return fail(MTE_ERROR_NOT_A_MODEL,
                "'%s' has a malformed model table: %u states but no state "
                "array",
                path, abi->num_states);
  std::vector<mte_tensor_info> infos;
  for (uint32_t i = 0; i < abi->num_states; ++i)
    infos.push_back(abi->states[i].tensor);
  std::vector<TensorDesc> tensors;
  if (mte_status status = readTensorTable(path, "state", infos.data(),
                                          abi->num_states, tensors))
    return status;
  states.resize(abi->num_states);
  for (uint32_t i = 0; i < abi->num_states; ++i) {
    const mte_state_info &info = abi->states[i];
    StateDesc &state = states[i];
    state.tensor = std::move(tensors[i]);
    const char *name = state.tensor.name.c_str();
    state.kind = info.kind;
    state.initial = info.initial;
    bool history = info.kind == MTE_STATE_FP8_AMAX_HISTORY;
    if (!history && info.kind != MTE_STATE_FP8_SCALE)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: state '%s' has unknown "
                  "kind %d",
                  path, name, info.kind);
    size_t rank = state.tensor.shape.size();
    if (state.tensor.dtype != MTE_DTYPE_F32 || rank != (history ? 2u : 1u))
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: FP8 state '%s' must be "
                  "f32 of rank %d",
                  path, name, history ? 2 : 1);
    if (info.num_labels && !info.labels)
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: state '%s' has %u "
                  "labels but no label array",
                  path, name, info.num_labels);
    if (info.num_labels &&
        static_cast<int64_t>(info.num_labels) != state.tensor.shape.back())
      return fail(MTE_ERROR_NOT_A_MODEL,
                  "'%s' has a malformed model table: state '%s' has %u "
                  "labels for a last dimension of %lld",
                  path, name, info.num_labels,
                  static_cast<long long>(state.tensor.shape.back()));
    for (uint32_t j = 0; j < info.num_labels; ++j) {
      if (!info.labels[j])
        return fail(MTE_ERROR_NOT_A_MODEL,
                    "'%s' has a malformed model table: label %u of state "
                    "'%s' is null",
                    path, j, name);
      state.labels.push_back(info.labels[j]);
    }
  }
  for (StateDesc &state : states)
    state.tensor.info = {state.tensor.name.c_str(), state.tensor.dtype,
                         static_cast<int32_t>(state.tensor.shape.size()),
                         state.tensor.shape.data()};
  return MTE_OK;
}

mte_status mte::runtime::checkStateValue(const mte_model &model,
                                         const StateDesc &state,
                                         const void *data) {
  size_t count = state.tensor.numBytes / sizeof(float);
  size_t columns = state.tensor.shape.back();
  bool history = state.kind == MTE_STATE_FP8_AMAX_HISTORY;
  for (size_t i = 0; i < count; ++i) {
    float value;
    std::memcpy(&value, static_cast<const char *>(data) + i * sizeof(float),
                sizeof(value));
    // An amax is |x| at its largest: not negative, NaN when x held one
    // (the update then keeps the scale). A scale multiplies before the
    // cast: finite and positive.
    bool valid = history ? std::isnan(value) || value >= 0
                         : std::isfinite(value) && value > 0;
    if (valid)
      continue;
    size_t column = i % columns;
    std::string where =
        column < state.labels.size()
            ? "'" + state.labels[column] + "'"
            : "index " + std::to_string(column);
    std::string row =
        history ? " in row " + std::to_string(i / columns) : std::string();
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "'%s': state '%s': the %s of %s%s is %g; %s",
                model.path.c_str(), state.tensor.name.c_str(),
                history ? "amax" : "scale", where.c_str(), row.c_str(),
                static_cast<double>(value),
                history ? "an amax is >= 0 (or NaN)"
                        : "a scale is finite and > 0");
  }
  return MTE_OK;
}

void mte::runtime::copyInitialState(const StateDesc &state, void *data) {
  if (state.initial)
    std::memcpy(data, state.initial, state.tensor.numBytes);
  else
    std::memset(data, 0, state.tensor.numBytes);
}

void mte::runtime::initHostState(mte_model &model) {
  for (std::vector<std::vector<char>> &buffers : model.hostState) {
    buffers.clear();
    for (const StateDesc &state : model.states)
      buffers.emplace_back(state.tensor.numBytes);
  }
  for (size_t i = 0; i < model.states.size(); ++i)
    copyInitialState(model.states[i],
                     model.hostState[model.currentState][i].data());
}
