//===- ExternalWeights.h - weights in files beside a model ------*- C++ -*-===//
//
// Internal to libmte_runtime. A model compiled with --weights=external
// describes each weight by the chunks of files it is read from
// (mte_weight_source); the runtime builds the weight (or a rank's part of
// it) when the model opens, checking each source's CRC-32 and converting
// its element type.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_EXTERNALWEIGHTS_H
#define MTE_LIB_RUNTIME_EXTERNALWEIGHTS_H

#include "mte-c/Runtime.h"
#include "mte/Support/WeightPieces.h"

#include <map>
#include <string>
#include <vector>

namespace mte::runtime {

/// The external weights of the model library at `modelPath`, whose files
/// lie in its directory; each file is opened once and closed with this.
class ExternalWeights {
public:
  explicit ExternalWeights(const std::string &modelPath);
  ExternalWeights(const ExternalWeights &) = delete;
  ExternalWeights &operator=(const ExternalWeights &) = delete;
  ~ExternalWeights();

  /// Builds weight `index` in `bytes`, or the part `part` of it that a
  /// rank of a sliced weight holds: the sources' elements it is made of
  /// read, checked against the CRC-32 the compiler recorded for them,
  /// converted and interleaved in `outer` chunks.
  mte_status build(const mte_weight_info &weight, uint32_t index,
                   const WeightPart &part, std::vector<char> &bytes);

private:
  /// `bytes` bytes of `location` from `offset`, in its mapping (each file
  /// is mapped once, read-only: only the pages touched are read).
  bool map(const std::string &location, uint64_t offset, uint64_t bytes,
           const char *&data, std::string &error);

  struct Mapping {
    const char *data = nullptr;
    uint64_t size = 0;
  };
  std::string modelPath;
  std::string directory;
  std::map<std::string, Mapping> files;
};

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_EXTERNALWEIGHTS_H
