//===- ModelLoader.h - open and close model libraries -----------*- C++ -*-===//
//
// Internal to libmte_runtime. Opening a model checks the file, loads it with
// dlopen, checks the table it exports (ModelABI.h) and copies its
// descriptions; a CUDA model then opens the GPU (CudaModel.h).
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_MODELLOADER_H
#define MTE_LIB_RUNTIME_MODELLOADER_H

#include "mte-c/Runtime.h"

namespace mte::runtime {

struct RankPlacement;

/// Loads the library behind `model.path` and fills in `model`, which holds
/// its rank, world size and communicator id (resolved from `placement`); a
/// sharded host model joins its ranks. On failure `model` holds what was
/// set up so far, for unloadModel to release.
mte_status loadModel(mte_model &model, const RankPlacement &placement);

/// Releases `model` (which may be partly loaded) and closes its library,
/// which the loader unloads once no handle uses it; waits for a run in
/// progress first.
void unloadModel(mte_model *model);

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_MODELLOADER_H
