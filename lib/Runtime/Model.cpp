//===- Model.cpp - the mte_model handle -----------------------------------===//

#include "Model.h"

#include "Collectives.h"
#include "DType.h"
#include "IndexChecks.h"
#include "ModelState.h"
#include "Status.h"

#include <cstring>

using namespace mte::runtime;

ptrdiff_t mte::runtime::findTensor(const std::vector<TensorDesc> &descs,
                                   const char *name) {
  for (size_t i = 0; i < descs.size(); ++i)
    if (descs[i].name == name)
      return static_cast<ptrdiff_t>(i);
  return -1;
}

mte_status mte::runtime::failUnknownName(const mte_model &model,
                                         const char *kind, const char *name) {
  bool isInput = std::strcmp(kind, "input") == 0;
  const std::vector<TensorDesc> &descs = isInput ? model.inputs : model.outputs;
  std::string known;
  for (const TensorDesc &desc : descs)
    known += (known.empty() ? "'" : ", '") + desc.name + "'";
  if (known.empty())
    known = "none";
  std::string hint;
  if (findTensor(isInput ? model.outputs : model.inputs, name) >= 0)
    hint =
        std::string("; '") + name + "' is an " + (isInput ? "output" : "input");
  return fail(MTE_ERROR_UNKNOWN_NAME, "'%s' has no %s named '%s' (%ss: %s)%s",
              model.path.c_str(), kind, name, kind, known.c_str(),
              hint.c_str());
}

mte_status mte::runtime::checkTensor(const mte_model &model, const char *kind,
                                     const TensorDesc &desc,
                                     const mte_tensor &tensor) {
  const char *path = model.path.c_str();
  if (tensor.dtype != desc.dtype)
    return fail(MTE_ERROR_DTYPE_MISMATCH,
                "'%s': %s '%s' has element type %s, given %s", path, kind,
                desc.name.c_str(), formatDType(desc.dtype).c_str(),
                formatDType(tensor.dtype).c_str());
  if (tensor.rank < 0 || (tensor.rank > 0 && !tensor.shape))
    return fail(MTE_ERROR_INVALID_ARGUMENT,
                "'%s': %s '%s' given with rank %d%s", path, kind,
                desc.name.c_str(), tensor.rank,
                tensor.rank > 0 ? " but no shape" : "");
  bool sameShape = static_cast<size_t>(tensor.rank) == desc.shape.size();
  for (int32_t i = 0; sameShape && i < tensor.rank; ++i)
    sameShape = tensor.shape[i] == desc.shape[i];
  if (!sameShape)
    return fail(MTE_ERROR_SHAPE_MISMATCH,
                "'%s': %s '%s' has shape %s, given %s", path, kind,
                desc.name.c_str(),
                formatShape(desc.info.rank, desc.info.shape).c_str(),
                formatShape(tensor.rank, tensor.shape).c_str());
  return MTE_OK;
}

mte_status mte::runtime::runModel(mte_model &model, const void *const *inputs,
                                  void *const *outputs) {
  if (model.cuda)
    return model.cuda->run(inputs, outputs);
  int32_t result;
  std::string collectiveError;
  {
    std::lock_guard<std::mutex> guard(*model.runLock);
    // The model reads inputs and never writes them (ModelABI.h takes them
    // as void *const * for symmetry with outputs).
    std::vector<void *> state, next;
    for (size_t i = 0; i < model.states.size(); ++i) {
      state.push_back(model.hostState[model.currentState][i].data());
      next.push_back(model.hostState[model.currentState ^ 1][i].data());
    }
    // The model's collectives (Collectives.h) act for it during the run.
    CollectiveScope collectives(model);
    result = model.abi->run(const_cast<void *const *>(inputs), outputs, nullptr,
                            nullptr, model.hostIndexStatus.data(),
                            state.data(), next.data());
    collectiveError = std::move(collectives.error);
    if (result == 0 && collectiveError.empty()) {
      if (mte_status status = checkIndexStatus(model.path.c_str(), model.abi,
                                               model.hostIndexStatus.data()))
        return status;
      advanceState(model);
    }
  }
  // A failed collective explains a failed run, and makes outputs wrong
  // when the run succeeds.
  if (!collectiveError.empty())
    return fail(MTE_ERROR_RUN_FAILED, "'%s' failed to run: %s",
                model.path.c_str(), collectiveError.c_str());
  if (result != 0)
    return fail(MTE_ERROR_RUN_FAILED,
                "'%s' failed to run: its run function returned %d",
                model.path.c_str(), result);
  return succeed();
}
