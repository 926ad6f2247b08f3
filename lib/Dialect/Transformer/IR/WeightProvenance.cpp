//===- WeightProvenance.cpp - where the bytes of a weight come from -------===//

#include "mte/Dialect/Transformer/IR/WeightProvenance.h"
#include "mte/Dialect/Transformer/IR/TransformerDialect.h"

#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace mte::transformer;

uint64_t WeightRecipe::numElements() const {
  uint64_t chunk = 0;
  for (const Part &part : parts)
    chunk += part.chunkElements;
  return outer * chunk;
}

WeightProvenance &WeightProvenance::get(MLIRContext *ctx) {
  return ctx->getOrLoadDialect<TransformerDialect>()->getWeightProvenance();
}

static uint64_t byteWidth(Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

void WeightProvenance::recordExternal(const void *data, StringRef location,
                                      uint64_t offset, uint64_t numElements,
                                      Type type) {
  WeightRecipe recipe;
  recipe.elementType = type;
  recipe.parts.push_back(
      {location.str(), offset, numElements, numElements, type,
       ArrayRef<char>(static_cast<const char *>(data),
                      numElements * byteWidth(type))});
  std::lock_guard<std::mutex> guard(mutex);
  recipes[data] = std::move(recipe);
}

void WeightProvenance::recordConcat(const void *result,
                                    ArrayRef<const void *> parts,
                                    uint64_t outer) {
  std::lock_guard<std::mutex> guard(mutex);
  WeightRecipe combined;
  combined.outer = outer;
  for (const void *data : parts) {
    auto it = recipes.find(data);
    if (it == recipes.end() || it->second.outer != 1)
      return;
    const WeightRecipe &part = it->second;
    if (part.quantization)
      return;
    // A part split into chunks must be one contiguous run of its file.
    if (outer != 1 && part.parts.size() != 1)
      return;
    if (combined.elementType && combined.elementType != part.elementType)
      return;
    combined.elementType = part.elementType;
    for (const WeightRecipe::Part &p : part.parts) {
      WeightRecipe::Part chunked = p;
      if (p.chunkElements % outer != 0)
        return;
      chunked.chunkElements = p.chunkElements / outer;
      chunked.chunkStride = chunked.chunkElements;
      combined.parts.push_back(std::move(chunked));
    }
  }
  recipes[result] = std::move(combined);
}

/// `base` sliced: the `pieces` of each of `outer` chunks (recordSlices).
static std::optional<WeightRecipe>
sliceRecipe(WeightRecipe base, uint64_t outer,
            ArrayRef<std::pair<uint64_t, uint64_t>> pieces) {
  if (base.outer != outer) {
    // One contiguous run viewed as `outer` chunks back to back.
    if (base.outer != 1 || base.parts.size() != 1 ||
        base.parts[0].chunkElements % outer != 0)
      return std::nullopt;
    base.parts[0].chunkElements /= outer;
    base.parts[0].chunkStride = base.parts[0].chunkElements;
    base.outer = outer;
  }
  WeightRecipe sliced;
  sliced.elementType = base.elementType;
  sliced.outer = outer;
  sliced.quantization = base.quantization;
  for (auto [offset, size] : pieces) {
    uint64_t position = 0; // of the base part in a chunk
    for (const WeightRecipe::Part &part : base.parts) {
      uint64_t lo = std::max(offset, position);
      uint64_t hi = std::min(offset + size, position + part.chunkElements);
      position += part.chunkElements;
      if (lo >= hi)
        continue;
      WeightRecipe::Part piece = part;
      uint64_t width = byteWidth(part.sourceType);
      uint64_t skip = (lo - (position - part.chunkElements)) * width;
      piece.offset += skip;
      piece.chunkElements = hi - lo;
      piece.bytes = part.bytes.slice(
          skip, ((outer - 1) * part.chunkStride + piece.chunkElements) * width);
      sliced.parts.push_back(std::move(piece));
    }
    if (offset + size > position)
      return std::nullopt; // outside the chunk
  }
  return sliced;
}

void WeightProvenance::recordSlices(
    const void *result, const void *source, uint64_t outer,
    ArrayRef<std::pair<uint64_t, uint64_t>> pieces) {
  std::lock_guard<std::mutex> guard(mutex);
  auto it = recipes.find(source);
  if (it == recipes.end() || outer == 0)
    return;
  std::optional<WeightRecipe> sliced;
  const WeightRecipe &base = it->second;
  if (uint64_t rows =
          base.quantization ? base.quantization->transposeRows : 0) {
    // Stored transposed: whole rows of the stored weight (outer 1, pieces
    // of whole rows of `rows` elements) are the same column ranges of
    // every row of the weight as built.
    SmallVector<std::pair<uint64_t, uint64_t>> columns;
    for (auto [offset, size] : pieces) {
      if (outer != 1 || offset % rows != 0 || size % rows != 0)
        return;
      columns.push_back({offset / rows, size / rows});
    }
    sliced = sliceRecipe(base, rows, columns);
  } else {
    sliced = sliceRecipe(base, outer, pieces);
  }
  if (sliced)
    recipes[result] = std::move(*sliced);
}

bool WeightProvenance::forget(ArrayRef<char> bytes) {
  std::lock_guard<std::mutex> guard(mutex);
  const char *begin = bytes.data(), *end = begin + bytes.size();
  for (const auto &entry : recipes)
    for (const WeightRecipe::Part &part : entry.second.parts)
      if (part.bytes.data() < end &&
          begin < part.bytes.data() + part.bytes.size())
        return false;
  recipes.erase(begin);
  return true;
}

void WeightProvenance::recordConversion(const void *result, const void *source,
                                        Type type) {
  std::lock_guard<std::mutex> guard(mutex);
  auto it = recipes.find(source);
  if (it == recipes.end() || it->second.quantization)
    return;
  WeightRecipe converted = it->second;
  converted.elementType = type;
  recipes[result] = std::move(converted);
}

void WeightProvenance::recordQuantization(const void *result,
                                          const void *source, Type type,
                                          float scale, uint64_t transposeRows,
                                          ArrayRef<float> blockScales,
                                          uint64_t blockK, uint64_t blockRows,
                                          uint64_t blockCols) {
  std::lock_guard<std::mutex> guard(mutex);
  auto it = recipes.find(source);
  if (it == recipes.end() || it->second.quantization ||
      (transposeRows && it->second.numElements() % transposeRows != 0))
    return;
  WeightRecipe quantized = it->second;
  quantized.quantization = WeightRecipe::Quantization{
      quantized.elementType, scale, transposeRows,
      std::vector<float>(blockScales.begin(), blockScales.end()), blockK,
      blockRows, blockCols};
  quantized.elementType = type;
  recipes[result] = std::move(quantized);
}

std::optional<WeightRecipe> WeightProvenance::lookup(const void *data) const {
  std::lock_guard<std::mutex> guard(mutex);
  auto it = recipes.find(data);
  if (it == recipes.end())
    return std::nullopt;
  return it->second;
}

std::optional<WeightRecipe> WeightProvenance::lookup(Attribute value) const {
  const void *data = resourceData(value);
  if (!data)
    return std::nullopt;
  std::optional<WeightRecipe> recipe = lookup(data);
  // The blob must still be the whole weight (not, say, reinterpreted).
  auto shaped = dyn_cast<ShapedType>(cast<TypedAttr>(value).getType());
  if (!recipe || !shaped || recipe->elementType != shaped.getElementType() ||
      recipe->numElements() != static_cast<uint64_t>(shaped.getNumElements()))
    return std::nullopt;
  return recipe;
}

const void *mte::transformer::resourceData(Attribute value) {
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(value);
  if (!resource)
    return nullptr;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  return blob ? blob->getData().data() : nullptr;
}
