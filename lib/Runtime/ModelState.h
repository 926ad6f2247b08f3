//===- ModelState.h - tensors a model carries between runs ------*- C++ -*-===//
//
// Internal to libmte_runtime. A model's states (mte_state_info in
// ModelABI.h; FP8 delayed scaling's amax history and scales) live in two
// buffers per open model: a run reads the current one and writes the next
// value into the other, and the two swap after a run that succeeded unless
// the states are frozen. This file reads their table and checks the values
// a caller sets.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_MODELSTATE_H
#define MTE_LIB_RUNTIME_MODELSTATE_H

#include "Model.h"

namespace mte::runtime {

/// Copies and checks the state table of the model at `path`; a malformed
/// one is MTE_ERROR_NOT_A_MODEL.
mte_status readStateTable(const char *path, const mte_model_abi *abi,
                          std::vector<StateDesc> &states);

/// Checks `data`, a value for `state` of `model`, against what its kind
/// admits (MTE_ERROR_INVALID_ARGUMENT naming the label and position of the
/// first value that is not).
mte_status checkStateValue(const mte_model &model, const StateDesc &state,
                           const void *data);

/// Host models: allocates both buffers of every state, the current one at
/// its initial value.
void initHostState(mte_model &model);

/// Writes the initial value of `state` to `data`.
void copyInitialState(const StateDesc &state, void *data);

/// After a run that succeeded: the next values become the current ones,
/// unless the states are frozen.
inline void advanceState(mte_model &model) {
  if (!model.stateFrozen)
    model.currentState ^= 1;
}

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_MODELSTATE_H
