//===- WeightProvenance.h - where the bytes of a weight come from -*- C++ -*-===//
//
// With `mte-compile --weights=external` a model library ships no weight
// bytes: it describes how the runtime assembles each weight from the ONNX
// external-data files when the model opens. The importer records every
// initializer it maps from external data; passes that derive a weight from
// others at compile time (horizontal fusion's concatenation, precision
// conversion) record the derivation. Records are keyed by the address of the
// resource blob's bytes, which stays the same from the import to the LLVM
// global that holds the weight, so no attribute needs to survive lowering.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_DIALECT_TRANSFORMER_IR_WEIGHTPROVENANCE_H
#define MTE_DIALECT_TRANSFORMER_IR_WEIGHTPROVENANCE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mte::transformer {

/// A weight as the runtime builds it: row-major, `outer` chunks, each chunk
/// the parts' chunks in order (a concatenation along one axis); every part
/// element converted from its source type to `elementType`.
struct WeightRecipe {
  struct Part {
    std::string location;   // external-data file, relative to the model
    uint64_t offset;        // of the part's first byte in that file
    uint64_t chunkElements; // elements the part adds to each chunk
    uint64_t chunkStride;   // elements from one chunk's start to the next
    mlir::Type sourceType;  // element type stored in the file
    /// The file's bytes from `offset` to the end of the last chunk, as
    /// mapped at compile time and kept alive by the context: what the
    /// runtime will read (the chunks), checksummed.
    llvm::ArrayRef<char> bytes;
  };
  /// An FP8 weight quantized as it is built: each element rounded to
  /// `from`, divided by `scale` in f32 and encoded as `elementType`; with
  /// `transposeRows` > 0 the weight as built is row-major [transposeRows,
  /// elements / transposeRows] and is stored transposed.
  struct Quantization {
    mlir::Type from;
    float scale;
    uint64_t transposeRows;
    /// Block or rowwise scaling: the factors of the blockRows x blockCols
    /// blocks of the stored [N, blockK] weight, row-major [ceil(N /
    /// blockRows), blockK / blockCols], which replace `scale` (empty: one
    /// scale): 128 x 128 blocks, or 1 x blockK (one per output channel).
    std::vector<float> blockScales;
    uint64_t blockK = 0;
    uint64_t blockRows = 0, blockCols = 0;
  };
  mlir::Type elementType;
  uint64_t outer = 1;
  llvm::SmallVector<Part, 3> parts;
  std::optional<Quantization> quantization;

  uint64_t numElements() const;
};

/// The recipes of a context's weights, keyed by blob data address.
class WeightProvenance {
public:
  /// The registry of `ctx` (one per context, created on first use).
  static WeightProvenance &get(mlir::MLIRContext *ctx);

  /// `data` holds `numElements` of `type` read from `location` at `offset`.
  void recordExternal(const void *data, llvm::StringRef location,
                      uint64_t offset, uint64_t numElements, mlir::Type type);
  /// `result` is `parts` concatenated in `outer` chunks (row-major concat
  /// along an axis with `outer` = the product of the dims before it).
  /// Recorded only when every part has a recipe that is one contiguous run
  /// of its file (or when `outer` is 1, any recipe of one chunk).
  void recordConcat(const void *result, llvm::ArrayRef<const void *> parts,
                    uint64_t outer);
  /// `result` is the `pieces` ([offset, size) element ranges) of each of
  /// `outer` chunks of `source`, one after another: slices along an axis
  /// (`outer` the product of the dims before it, the ranges in elements of
  /// the slices), as tensor parallelism regroups a fused projection's
  /// columns by rank. Recorded when `source` has a recipe of `outer`
  /// chunks, or of one contiguous run.
  void recordSlices(const void *result, const void *source, uint64_t outer,
                    llvm::ArrayRef<std::pair<uint64_t, uint64_t>> pieces);
  /// `result` is `source` converted element-wise to `type`.
  void recordConversion(const void *result, const void *source,
                        mlir::Type type);
  /// `result` is `source` divided by `scale` and encoded as the FP8 `type`,
  /// transposed from [transposeRows, n / transposeRows] when transposeRows
  /// is not 0 (mte-insert-fp8-casts). Recorded when `source` has a recipe
  /// that is not quantized already.
  /// With `blockScales`, each `blockRows` x `blockCols` block of the
  /// stored [N, blockK] weight is divided by its own factor instead.
  void recordQuantization(const void *result, const void *source,
                          mlir::Type type, float scale,
                          uint64_t transposeRows,
                          llvm::ArrayRef<float> blockScales = {},
                          uint64_t blockK = 0, uint64_t blockRows = 0,
                          uint64_t blockCols = 0);

  /// Drops the recipe keyed by `bytes`' address before the caller frees
  /// them. False, dropping nothing, when a recipe reads its parts from those
  /// bytes (an imported weight's), which must then stay alive.
  bool forget(llvm::ArrayRef<char> bytes);

  std::optional<WeightRecipe> lookup(const void *data) const;
  /// The recipe of a constant, when it is a resource blob with one.
  std::optional<WeightRecipe> lookup(mlir::Attribute value) const;

private:
  mutable std::mutex mutex;
  llvm::DenseMap<const void *, WeightRecipe> recipes;
};

/// The bytes of a resource-backed constant, or null.
const void *resourceData(mlir::Attribute value);

} // namespace mte::transformer

#endif // MTE_DIALECT_TRANSFORMER_IR_WEIGHTPROVENANCE_H
