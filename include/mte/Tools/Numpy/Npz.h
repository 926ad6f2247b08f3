//===- Npz.h - NumPy .npz archives for mte tools ----------------*- C++ -*-===//
//
// Reads and writes .npz files (numpy.savez / savez_compressed): zip archives
// of .npy members named "<key>.npy", stored or deflated. Members beyond
// 4 GiB (zip64 sizes) are refused; model state files are far smaller.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_TOOLS_NUMPY_NPZ_H
#define MTE_TOOLS_NUMPY_NPZ_H

#include "mte/Tools/Numpy/Tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace mte::numpy {

/// Reads every array of the .npz file at `path`, in archive order, keyed by
/// its name without ".npy". Returns false and sets `error` (naming the file
/// and member) when the file is not such an archive or a member is not a
/// .npy file mte-run reads.
bool readNpz(const std::string &path,
             std::vector<std::pair<std::string, Tensor>> &arrays,
             std::string &error);

/// Writes `arrays` (element types numpy has) to `path` as an uncompressed
/// .npz file that numpy.load reads.
bool writeNpz(const std::string &path,
              const std::vector<std::pair<std::string, TensorView>> &arrays,
              std::string &error);

} // namespace mte::numpy

#endif // MTE_TOOLS_NUMPY_NPZ_H
