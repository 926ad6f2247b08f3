//===- Npy.h - NumPy .npy files for mte tools -------------------*- C++ -*-===//
//
// Reads and writes the NumPy array format
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html),
// versions 1.0, 2.0 and 3.0, for dense, C-ordered, little-endian arrays of
// bool, int8/16/32/64, uint8/16/32/64, float16, float32 and float64.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_TOOLS_NUMPY_NPY_H
#define MTE_TOOLS_NUMPY_NPY_H

#include "mte/Tools/Numpy/Tensor.h"

#include <string>

namespace mte::numpy {

/// Reads the .npy file at `path` into `tensor`. Returns false and sets
/// `error` (which names the file) when the file cannot be read, is not a
/// .npy file, or holds an array mte-run does not take: Fortran order,
/// big-endian, object, structured or another unsupported dtype.
bool readNpy(const std::string &path, Tensor &tensor, std::string &error);

/// Parses `bytes`, the contents of a .npy file, into `tensor`, like readNpy;
/// `error` does not name a file.
bool parseNpy(const std::string &bytes, Tensor &tensor, std::string &error);

/// The .npy file (version 1.0, or 2.0 when the header needs it) holding
/// `tensor`, of an element type numpy has (not bf16 or f8).
std::string formatNpy(const TensorView &tensor);

/// Writes `bytes` to `path`; false and `error` when it cannot.
bool writeFile(const std::string &path, const std::string &bytes,
               std::string &error);

/// Writes `tensor`, of an element type numpy has (not bf16 or f8), to `path`
/// as a version 1.0 .npy file (2.0 when the header needs it). Returns false
/// and sets `error` when the file cannot be written.
bool writeNpy(const std::string &path, const TensorView &tensor,
              std::string &error);

} // namespace mte::numpy

#endif // MTE_TOOLS_NUMPY_NPY_H
