//===- ConstantBytes.cpp - weights rearranged at compile time -------------===//

#include "ConstantBytes.h"

#include "mte/Dialect/Transformer/IR/WeightProvenance.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;
using namespace mte::transformer;

ElementsAttr mte::transformer::constantOperand(Value v) {
  ElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      attr.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return nullptr;
  return attr;
}

std::optional<ArrayRef<char>> mte::transformer::rawBytes(ElementsAttr attr,
                                       std::vector<char> &storage) {
  size_t elementBytes = attr.getElementType().getIntOrFloatBitWidth() / 8;
  size_t size = attr.getNumElements() * elementBytes;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    ArrayRef<char> data = dense.getRawData();
    if (!dense.isSplat())
      return data;
    storage.reserve(size);
    for (int64_t i = 0, e = attr.getNumElements(); i < e; ++i)
      storage.insert(storage.end(), data.begin(), data.end());
    return ArrayRef<char>(storage);
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      if (blob->getData().size() == size)
        return blob->getData();
  return std::nullopt;
}

FailureOr<ElementsAttr> mte::transformer::concatConstants(ArrayRef<ElementsAttr> parts,
                                        int64_t axis, StringRef blobName) {
  auto first = cast<ShapedType>(parts.front().getType());
  Type elementType = first.getElementType();
  size_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  // Row-major: each part is `outer` chunks of `dim[axis] * inner` elements.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= first.getDimSize(d);

  std::vector<std::vector<char>> storage(parts.size());
  SmallVector<ArrayRef<char>> bytes;
  SmallVector<size_t> chunkBytes;
  bool anyResource = false;
  for (auto [part, owned] : llvm::zip_equal(parts, storage)) {
    std::optional<ArrayRef<char>> data = rawBytes(part, owned);
    if (!data)
      return failure();
    bytes.push_back(*data);
    chunkBytes.push_back(outer ? data->size() / outer : 0);
    shape[axis] += cast<ShapedType>(part.getType()).getDimSize(axis);
    anyResource |= isa<DenseResourceElementsAttr>(part);
  }
  auto type = RankedTensorType::get(shape, elementType);
  size_t total = type.getNumElements() * elementBytes;

  auto fill = [&](MutableArrayRef<char> out) {
    char *dst = out.data();
    for (int64_t o = 0; o < outer; ++o)
      for (auto [data, chunk] : llvm::zip_equal(bytes, chunkBytes)) {
        std::memcpy(dst, data.data() + o * chunk, chunk);
        dst += chunk;
      }
  };
  if (anyResource) {
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
        total, std::max<size_t>(elementBytes, 1), /*dataIsMutable=*/true);
    fill(blob.getMutableData());
    // --weights=external rebuilds the concatenation from the parts' files.
    SmallVector<const void *> sources;
    for (ElementsAttr part : parts)
      sources.push_back(resourceData(part));
    WeightProvenance::get(type.getContext())
        .recordConcat(blob.getData().data(), sources, outer);
    return cast<ElementsAttr>(
        DenseResourceElementsAttr::get(type, blobName, std::move(blob)));
  }
  std::vector<char> data(total);
  fill(data);
  return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, data));
}

FailureOr<ElementsAttr>
mte::transformer::gatherSlices(ElementsAttr value, int64_t axis,
                               ArrayRef<IndexRange> ranges,
                               StringRef blobName) {
  auto source = cast<ShapedType>(value.getType());
  Type elementType = source.getElementType();
  size_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
  std::vector<char> storage;
  std::optional<ArrayRef<char>> bytes = rawBytes(value, storage);
  if (!bytes)
    return failure();
  // Row-major: `outer` chunks of dim[axis] slices of `inner` elements.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= source.getDimSize(d);
  for (int64_t d = axis + 1; d < source.getRank(); ++d)
    inner *= source.getDimSize(d);
  SmallVector<int64_t> shape(source.getShape());
  shape[axis] = 0;
  for (IndexRange range : ranges) {
    assert(range.offset >= 0 && range.size >= 0 &&
           range.offset + range.size <= source.getDimSize(axis));
    shape[axis] += range.size;
  }
  auto type = RankedTensorType::get(shape, elementType);
  size_t sliceBytes = inner * elementBytes;
  size_t chunkBytes = source.getDimSize(axis) * sliceBytes;
  auto fill = [&](MutableArrayRef<char> out) {
    char *dst = out.data();
    for (int64_t o = 0; o < outer; ++o)
      for (IndexRange range : ranges) {
        std::memcpy(dst, bytes->data() + o * chunkBytes + range.offset * sliceBytes,
                    range.size * sliceBytes);
        dst += range.size * sliceBytes;
      }
  };
  size_t total = type.getNumElements() * elementBytes;
  if (isa<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
        total, std::max<size_t>(elementBytes, 1), /*dataIsMutable=*/true);
    fill(blob.getMutableData());
    // --weights=external reads the slices from the source's file.
    SmallVector<std::pair<uint64_t, uint64_t>> pieces;
    for (IndexRange range : ranges)
      pieces.push_back({static_cast<uint64_t>(range.offset * inner),
                        static_cast<uint64_t>(range.size * inner)});
    WeightProvenance::get(type.getContext())
        .recordSlices(blob.getData().data(), resourceData(value), outer,
                      pieces);
    return cast<ElementsAttr>(
        DenseResourceElementsAttr::get(type, blobName, std::move(blob)));
  }
  std::vector<char> data(total);
  fill(data);
  return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, data));
}
