//===- RowKernelBuilder.cpp - row mappings and kernel launches ------------===//
//
// How rows map onto threads, and the gpu.launch every row kernel is.
//
//===----------------------------------------------------------------------===//

#include "RowKernelBuilder.h"

#include "mte/Codegen/CUDA/RowKernels.h"
#include "mte/Conversion/TransformerToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mte::cuda;

/// The mapping of [rows, length] rows of `elementType` (which sets the
/// vector width), or nothing when a row is too long to keep in registers.
/// Rows start `rowAlignment` elements apart (a multiple of it; 0: any
/// multiple of the length).
SmallVector<Value> RowKernelBuilder::castToFp8(ArrayRef<Value> lanes,
                                               Type from, Value scale,
                                               Type fp8) {
  using mte::lowering::convertScalar;
  Type f32 = b.getF32Type();
  SmallVector<Value> codes;
  for (Value x : lanes) {
    Value stored = convertScalar(b, loc, convertScalar(b, loc, x, f32, from),
                                 from, f32);
    codes.push_back(convertScalar(
        b, loc, arith::MulFOp::create(b, loc, stored, scale), f32, fp8));
  }
  return codes;
}

Value RowKernelBuilder::storeResult(ArrayRef<Value> lanes, Value output,
                                    ValueRange indices, Value valid,
                                    Type rounded, Value fp8Scale,
                                    Value rowAmax) {
  if (fp8Scale) {
    Type fp8 = cast<MemRefType>(output.getType()).getElementType();
    store(castToFp8(lanes, rounded, fp8Scale, fp8), output, indices, valid);
  } else {
    store(lanes, output, indices, valid);
  }
  if (!rowAmax)
    return rowAmax;
  SmallVector<Value> magnitudes = llvm::map_to_vector(
      lanes, [&](Value y) -> Value { return math::AbsFOp::create(b, loc, y); });
  // maximumf propagates NaN, as amax must; absent vectors are 0.
  return arith::MaximumFOp::create(
      b, loc, rowAmax, reduceLanes(magnitudes, valid, /*isMax=*/true));
}

void RowKernelBuilder::storeRowAmax(Value rowAmax, unsigned reduction,
                                    Type rounded, Value rowMaxima) {
  Value amax = reduceRow(rowAmax, /*isMax=*/true, reduction);
  if (!rounded.isF32())
    amax = arith::ExtFOp::create(
        b, loc, b.getF32Type(),
        arith::TruncFOp::create(b, loc, rounded, amax).getResult());
  storeRowResult(amax, rowMaxima);
}

std::optional<RowMapping> mte::cuda::planRows(int64_t rows, int64_t length,
                                              Type elementType,
                                              int64_t rowAlignment) {
  if (rows <= 0 || length <= 0)
    return std::nullopt;
  // 16-byte vectors where every row starts 16-byte aligned, else the widest
  // power of two that divides the length and the rows' alignment.
  int64_t lanes = 128 / elementType.getIntOrFloatBitWidth();
  while (length % lanes != 0 || rowAlignment % lanes != 0)
    lanes /= 2;
  RowMapping m;
  m.rows = rows;
  m.length = length;
  m.lanes = lanes;
  m.vectors = length / lanes;
  if (m.vectors <= kWarpSize) {
    m.threadsPerRow = llvm::PowerOf2Ceil(m.vectors);
  } else if (m.vectors <= kWarpSize * kTargetVectorsPerThread) {
    m.threadsPerRow = kWarpSize;
  } else {
    int64_t threads = llvm::divideCeil(m.vectors, kTargetVectorsPerThread);
    m.threadsPerRow =
        std::min<int64_t>(llvm::alignTo(threads, kWarpSize), kMaxThreadsPerRow);
  }
  m.rowsPerBlock =
      m.threadsPerRow <= kWarpSize ? kSmallRowsBlockSize / m.threadsPerRow : 1;
  m.vectorsPerThread = llvm::divideCeil(m.vectors, m.threadsPerRow);
  if (m.vectorsPerThread > kMaxVectorsPerThread)
    return std::nullopt;
  return m;
}

/// Defines `func` as one gpu.launch of `mapping`: `buildBody` gets the
/// inputs (the first `numInputs` arguments, buffers and scalars) and the
/// output buffers (the rest).
void mte::cuda::defineKernel(
    func::FuncOp func, unsigned numInputs, const RowMapping &mapping,
    unsigned reductions,
    function_ref<void(RowKernelBuilder &, ValueRange, ValueRange)> buildBody) {
  MLIRContext *ctx = func.getContext();
  Location loc = func.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(func.addEntryBlock());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Rows longer than a warp exchange partial results through workgroup
  // memory, one float per warp for each reduction.
  SmallVector<Type> workgroupBuffers;
  if (mapping.threadsPerRow > kWarpSize)
    workgroupBuffers.assign(
        reductions,
        MemRefType::get({kWarpSize}, b.getF32Type(), AffineMap(),
                        gpu::AddressSpaceAttr::get(
                            ctx, gpu::GPUDialect::getWorkgroupAddressSpace())));
  auto launch = gpu::LaunchOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, mapping.gridSize()), one,
      one, arith::ConstantIndexOp::create(b, loc, mapping.blockSize()), one,
      one, /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, workgroupBuffers);
  {
    OpBuilder body = OpBuilder::atBlockBegin(&launch.getBody().front());
    RowKernelBuilder kernel(body, loc, mapping, launch);
    ValueRange args = func.getArguments();
    buildBody(kernel, args.take_front(numInputs), args.drop_front(numInputs));
    gpu::TerminatorOp::create(body, loc);
  }
  func::ReturnOp::create(b, loc);
}

FailureOr<MemRefType> mte::cuda::getRowsBuffer(func::FuncOp func) {
  ArrayRef<Type> types = func.getArgumentTypes();
  auto rows = types.empty() ? MemRefType() : dyn_cast<MemRefType>(types[0]);
  if (!rows || rows.getRank() != 2 || !rows.hasStaticShape())
    return invalidKernel(
        func, "row",
        "its first argument must be a static [rows, length] buffer");
  return rows;
}

Value mte::cuda::bufferAddress(OpBuilder &b, Location loc, Value buffer,
                               memref::ExtractStridedMetadataOp *metadata) {
  auto type = cast<MemRefType>(buffer.getType());
  auto strided = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  if (metadata)
    *metadata = strided;
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, strided.getBaseBuffer());
  Value offsetBytes = arith::MulIOp::create(
      b, loc, strided.getOffset(),
      arith::ConstantIndexOp::create(b, loc,
                                     type.getElementTypeBitWidth() / 8));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                    arith::AddIOp::create(b, loc, base,
                                                          offsetBytes));
}

LogicalResult mte::cuda::invalidKernel(func::FuncOp func, StringRef what,
                                       const Twine &why) {
  return func.emitOpError("is not a valid ") << what << " kernel: " << why;
}

bool mte::canBuildRowKernel(int64_t length, Type elementType) {
  return planRows(/*rows=*/1, length, elementType).has_value();
}
