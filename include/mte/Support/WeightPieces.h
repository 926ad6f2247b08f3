//===- WeightPieces.h - which file elements make up a weight part -*- C++ -*-===//
//
// Shared by mte-compile, which records the CRC-32 of what each rank of a
// sliced external weight reads, and libmte_runtime, which reads it: both
// must walk the same source elements in the same order. Header-only and
// free of LLVM so that the runtime can include it.
//
// A weight is `outer` chunks of `chunk` elements; source s fills elements
// [begin, begin + count) of every chunk from its file, chunk o starting
// `stride` elements after chunk o - 1 (mte_weight_source). A sliced
// weight's part g of `parts` is, for each of `sliceOuter` equal spans of
// the whole, the g-th of `parts` equal pieces of the span
// (mte_weight_info's slice_outer, slice_parts).
//
//===----------------------------------------------------------------------===//

#ifndef MTE_SUPPORT_WEIGHTPIECES_H
#define MTE_SUPPORT_WEIGHTPIECES_H

#include <algorithm>
#include <cstdint>

namespace mte {

/// Which part of a weight a rank holds: part `group` of `parts` in each of
/// `sliceOuter` spans; {1, 1, 0} is the whole weight.
struct WeightPart {
  uint64_t sliceOuter = 1;
  uint64_t parts = 1;
  uint64_t group = 0;
};

/// Calls `piece(fileElement, count, partElement)` for every run of source
/// elements that part `part` of the weight (`numElements` in all, `outer`
/// chunks of `chunk`) reads from the source filling [begin, begin + count)
/// of each chunk with chunks `stride` apart: `count` elements from element
/// `fileElement` of the source (counted from its offset) to element
/// `partElement` of the part. Runs come in file order. The caller checks
/// that the spans and parts divide the weight.
template <typename PieceFn>
void forEachWeightPiece(uint64_t numElements, uint64_t outer, uint64_t chunk,
                        uint64_t begin, uint64_t count, uint64_t stride,
                        const WeightPart &part, PieceFn &&piece) {
  if (!outer || !chunk || !part.sliceOuter || !part.parts)
    return;
  uint64_t span = numElements / part.sliceOuter;
  uint64_t length = span / part.parts;
  for (uint64_t j = 0; j < part.sliceOuter; ++j) {
    uint64_t first = j * span + part.group * length, last = first + length;
    for (uint64_t o = first / chunk; o < outer && o * chunk < last; ++o) {
      uint64_t lo = std::max(first, o * chunk + begin);
      uint64_t hi = std::min(last, o * chunk + begin + count);
      if (lo < hi)
        piece(o * stride + (lo - o * chunk - begin), hi - lo,
              j * length + (lo - first));
    }
  }
}

/// For a weight stored transposed (built row-major [rows, numElements /
/// rows], stored as its transpose): sets `built` to the part of the weight
/// as built that becomes part `part` of the stored one, and `builtRows` to
/// that built part's rows, which transposed give the stored part. A split
/// of the stored rows (sliceOuter 1) is a split of the built columns
/// (sliceOuter `rows`); a split within each stored row (sliceOuter the
/// stored rows) is a split of the built rows (sliceOuter 1). Returns false
/// for any other slicing.
inline bool transposedWeightPart(uint64_t numElements, uint64_t rows,
                                 const WeightPart &part, WeightPart &built,
                                 uint64_t &builtRows) {
  if (!rows || numElements % rows != 0)
    return false;
  uint64_t cols = numElements / rows;
  built = part;
  builtRows = rows;
  if (part.parts <= 1)
    return true;
  if (part.sliceOuter == 1 && cols % part.parts == 0) {
    built.sliceOuter = rows;
    return true;
  }
  if (part.sliceOuter == cols && rows % part.parts == 0) {
    built.sliceOuter = 1;
    builtRows = rows / part.parts;
    return true;
  }
  return false;
}

} // namespace mte

#endif // MTE_SUPPORT_WEIGHTPIECES_H
