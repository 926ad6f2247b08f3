//===- MaskAnalysis.h - classify attention masks ------------------*- C++
//-*-===//
//
// Internal to lib/Dialect/Transformer/Transforms. Exporters build the causal
// mask of a decoder in many ways (a constant, Trilu of a filled matrix,
// Range + comparison, slices of a registered buffer, sums of those,
// transformers 5's packed-sequence test of CumSum and GatherND); what
// they share is that the mask does not depend on the model's inputs. Rather
// than matching each construction, the attention recognizer evaluates such a
// subgraph here, in plain memory (no attributes are created, so a 2048 x 2048
// mask costs 32 MB for the duration of the query), and checks the values.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_MASKANALYSIS_H
#define MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_MASKANALYSIS_H

#include "mlir/IR/Value.h"

namespace mte::transformer {

/// How a mask selects the visible key positions of the scores.
enum class MaskForm {
  /// Added to the scores: 0 where visible, a huge negative value where not.
  Additive,
  /// Where(mask, scores, -big): true where visible.
  Keep,
  /// Where(mask, -big, scores): true where hidden.
  Hide,
};

/// True when `mask` is input-independent, broadcasts to
/// `[..., queryLength, keyLength]` and hides exactly the keys after the
/// bottom-right aligned diagonal (key j is visible to query i iff
/// j <= i + keyLength - queryLength), identically for every leading index.
/// Subgraphs with more than `kMaxMaskElements` elements anywhere are not
/// evaluated.
bool isCausalMask(mlir::Value mask, MaskForm form, int64_t queryLength,
                  int64_t keyLength);

inline constexpr int64_t kMaxMaskElements = int64_t(1) << 24;

} // namespace mte::transformer

#endif // MTE_LIB_DIALECT_TRANSFORMER_TRANSFORMS_MASKANALYSIS_H
