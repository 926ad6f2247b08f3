//===- ExternalWeights.h - weights in files beside a model ------*- C++ -*-===//
//
// Internal to libmte_runtime. A model compiled with --weights=external
// describes each weight by the chunks of files it is read from
// (mte_weight_source); the runtime builds the weight when the model opens,
// checking each source's CRC-32 and converting its element type.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_EXTERNALWEIGHTS_H
#define MTE_LIB_RUNTIME_EXTERNALWEIGHTS_H

#include "mte-c/Runtime.h"

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

  /// Builds weight `index` in `bytes`: its sources read, checked against
  /// the CRC-32 the compiler recorded, converted and interleaved in
  /// `outer` chunks.
  mte_status build(const mte_weight_info &weight, uint32_t index,
                   std::vector<char> &bytes);

private:
  /// Reads `bytes.size()` bytes of `location` from `offset`.
  bool read(const std::string &location, uint64_t offset,
            std::vector<char> &bytes, std::string &error);

  std::string modelPath;
  std::string directory;
  std::map<std::string, int> files;
};

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_EXTERNALWEIGHTS_H
