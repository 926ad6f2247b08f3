//===- KernelOps.cpp - kernel dialect -------------------------------------===//

#include "mte/Dialect/Kernel/IR/KernelOps.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mte::kernel;

#include "mte/Dialect/Kernel/IR/KernelDialect.cpp.inc"
#include "mte/Dialect/Kernel/IR/KernelEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mte/Dialect/Kernel/IR/KernelAttrs.cpp.inc"

void KernelDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mte/Dialect/Kernel/IR/KernelAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mte/Dialect/Kernel/IR/KernelOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "mte/Dialect/Kernel/IR/KernelOps.cpp.inc"

//===----------------------------------------------------------------------===//
// RowKernelAttr
//===----------------------------------------------------------------------===//

LogicalResult
RowKernelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      RowKernelKind kind, int64_t heads, int64_t kvHeads,
                      int64_t seq, int64_t queries,
                      DenseI64ArrayAttr maskShape, bool bias, bool residual,
                      bool causal, bool headsMajor, bool amax,
                      Type quantizeFrom) {
  // The parameters each kind takes: any other set is an error.
  struct Takes {
    bool heads = false, kvHeads = false, seq = false, queries = false,
         maskShape = false, bias = false, residual = false, causal = false,
         headsMajor = false, amax = false, quantizeFrom = false;
  } takes;
  switch (kind) {
  case RowKernelKind::LayerNorm:
    takes.bias = takes.residual = takes.amax = takes.quantizeFrom = true;
    break;
  case RowKernelKind::RMSNorm:
    takes.residual = takes.amax = takes.quantizeFrom = true;
    break;
  case RowKernelKind::Rotary:
    takes.heads = takes.seq = takes.headsMajor = true;
    break;
  case RowKernelKind::AttentionSoftmax:
    takes.heads = takes.queries = takes.causal = takes.maskShape = true;
    break;
  case RowKernelKind::FlashAttention:
    takes.heads = takes.kvHeads = takes.causal = takes.maskShape = true;
    takes.amax = takes.quantizeFrom = true;
    break;
  case RowKernelKind::Amax:
  case RowKernelKind::Amaxes:
    break;
  case RowKernelKind::Swiglu:
  case RowKernelKind::Geglu:
  case RowKernelKind::GegluTanh:
    takes.amax = takes.quantizeFrom = true;
    break;
  }
  StringRef name = stringifyRowKernelKind(kind);
  struct Parameter {
    StringRef name;
    bool given, taken;
  };
  for (const Parameter &p : {
           Parameter{"heads", heads != 0, takes.heads},
           Parameter{"kv_heads", kvHeads != 0, takes.kvHeads},
           Parameter{"seq", seq != 0, takes.seq},
           Parameter{"queries", queries != 0, takes.queries},
           Parameter{"mask_shape", static_cast<bool>(maskShape),
                     takes.maskShape},
           Parameter{"bias", bias, takes.bias},
           Parameter{"residual", residual, takes.residual},
           Parameter{"causal", causal, takes.causal},
           Parameter{"heads_major", headsMajor, takes.headsMajor},
           Parameter{"amax", amax, takes.amax},
           Parameter{"quantize_from", static_cast<bool>(quantizeFrom),
                     takes.quantizeFrom}})
    if (p.given && !p.taken)
      return emitError() << "a " << name << " kernel takes no '" << p.name
                         << "'";
  if (quantizeFrom && !isa<FloatType>(quantizeFrom))
    return emitError() << "a " << name
                       << " kernel quantizes from a float type, not "
                       << quantizeFrom;
  auto positive = [&](StringRef parameter, int64_t value) -> LogicalResult {
    if (value > 0)
      return success();
    return emitError() << "a " << name << " kernel needs a positive '"
                       << parameter << "', not " << value;
  };
  if (takes.heads && failed(positive("heads", heads)))
    return failure();
  if (takes.seq && failed(positive("seq", seq)))
    return failure();
  if (takes.queries && failed(positive("queries", queries)))
    return failure();
  if (takes.kvHeads && failed(positive("kv_heads", kvHeads)))
    return failure();
  if (takes.kvHeads && heads % kvHeads != 0)
    return emitError() << "kv_heads " << kvHeads << " must divide heads "
                       << heads;
  if (maskShape && maskShape.size() > 4)
    return emitError() << "a mask has at most 4 dimensions, not "
                       << maskShape.size();
  if (maskShape && kind == RowKernelKind::FlashAttention &&
      maskShape.size() != 2)
    return emitError() << "a flash_attention key bias is [batch, keys], not "
                       << maskShape.size() << "-D";
  return success();
}

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

LogicalResult CallOp::verify() {
  if (getResults().size() != getOutputs().size())
    return emitOpError("has ") << getResults().size() << " results for "
                               << getOutputs().size() << " outputs";
  for (auto [index, output, result] :
       llvm::enumerate(getOutputs(), getResults()))
    if (output.getType() != result.getType())
      return emitOpError("result ")
             << index << " has type " << result.getType()
             << ", its output has " << output.getType();
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("calls '")
           << getCallee() << "', which is not a function in the module";
  ArrayRef<Type> arguments = callee.getArgumentTypes();
  if (arguments.size() != getNumOperands() || callee.getNumResults() != 0)
    return emitOpError("passes ")
           << getNumOperands() << " operands to '" << getCallee()
           << "', which takes " << arguments.size()
           << " arguments and must return nothing";
  for (auto [index, operand, argument] :
       llvm::enumerate(getOperands(), arguments)) {
    auto tensor = dyn_cast<RankedTensorType>(operand.getType());
    if (!tensor) {
      if (operand.getType() != argument)
        return emitOpError("operand ")
               << index << " of type " << operand.getType()
               << " is passed as " << argument;
      continue;
    }
    auto memref = dyn_cast<MemRefType>(argument);
    if (!memref || !tensor.hasStaticShape() || !memref.hasStaticShape() ||
        memref.getElementType() != tensor.getElementType() ||
        memref.getNumElements() != tensor.getNumElements())
      return emitOpError("tensor operand ")
             << index << " of type " << tensor
             << " is passed as " << argument
             << ", not a static buffer of its elements";
  }
  return success();
}

bool CallOp::bufferizesToMemoryRead(OpOperand &operand,
                                    const bufferization::AnalysisState &) {
  // Kernels overwrite their outputs whole.
  return !isDpsInit(&operand);
}

bool CallOp::bufferizesToMemoryWrite(OpOperand &operand,
                                     const bufferization::AnalysisState &) {
  return isDpsInit(&operand);
}

bufferization::AliasingValueList
CallOp::getAliasingValues(OpOperand &operand,
                          const bufferization::AnalysisState &) {
  if (!isDpsInit(&operand))
    return {};
  return {{getTiedOpResult(&operand), bufferization::BufferRelation::Equivalent}};
}

/// Whether a buffer of type `source` may be passed as `target` by a cast
/// that only forgets what is known: the same shape, and each offset and
/// stride of `target` either dynamic or that of `source`. (memref.cast also
/// accepts the converse, which asserts a layout instead of converting.)
static bool isLessDynamic(MemRefType source, MemRefType target) {
  SmallVector<int64_t> sourceStrides, targetStrides;
  int64_t sourceOffset, targetOffset;
  if (source.getShape() != target.getShape() ||
      source.getElementType() != target.getElementType() ||
      source.getMemorySpace() != target.getMemorySpace() ||
      failed(source.getStridesAndOffset(sourceStrides, sourceOffset)) ||
      failed(target.getStridesAndOffset(targetStrides, targetOffset)))
    return false;
  auto keeps = [](int64_t from, int64_t to) {
    return ShapedType::isDynamic(to) || from == to;
  };
  if (!keeps(sourceOffset, targetOffset))
    return false;
  for (auto [from, to] : llvm::zip_equal(sourceStrides, targetStrides))
    if (!keeps(from, to))
      return false;
  return true;
}

/// `buffer` as a view of type `target` (same elements), if there is one: a
/// cast to a more dynamic layout, a reshape of a contiguous buffer, or both.
static Value viewAs(OpBuilder &b, Location loc, Value buffer,
                    MemRefType target) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type == target)
    return buffer;
  if (type.getShape() != target.getShape()) {
    if (!memref::isStaticShapeAndContiguousRowMajor(type))
      return nullptr;
    // Through the 1-D view: both shapes are contiguous row-major.
    if (type.getRank() != 1) {
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      buffer = memref::CollapseShapeOp::create(
          b, loc, buffer, ArrayRef<ReassociationIndices>{all});
    }
    if (target.getRank() != 1) {
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, target.getRank()));
      buffer = memref::ExpandShapeOp::create(
          b, loc, target.getShape(), buffer,
          ArrayRef<ReassociationIndices>{all});
    }
    type = cast<MemRefType>(buffer.getType());
    if (type == target)
      return buffer;
  }
  if (!isLessDynamic(type, target))
    return nullptr;
  return memref::CastOp::create(b, loc, target, buffer);
}

LogicalResult CallOp::bufferize(RewriterBase &rewriter,
                                const bufferization::BufferizationOptions &options,
                                bufferization::BufferizationState &state) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      *this, getCalleeAttr());
  if (!callee)
    return emitOpError("has no callee");
  ArrayRef<Type> arguments = callee.getArgumentTypes();
  Location loc = getLoc();
  SmallVector<Value> operands, outputBuffers;
  // Outputs that the kernel writes into a contiguous temporary first.
  SmallVector<std::pair<Value, Value>> copiesBack;
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    Value value = operand.get();
    Type argument = arguments[operand.getOperandNumber()];
    if (!isa<TensorType>(value.getType())) {
      operands.push_back(value);
      continue;
    }
    FailureOr<Value> buffer =
        bufferization::getBuffer(rewriter, value, options, state);
    if (failed(buffer))
      return failure();
    bool isOutput = isDpsInit(&operand);
    if (isOutput)
      outputBuffers.push_back(*buffer);
    auto target = cast<MemRefType>(argument);
    if (Value view = viewAs(rewriter, loc, *buffer, target)) {
      operands.push_back(view);
      continue;
    }
    // No view of the buffer has the callee's layout: a contiguous copy.
    auto bufferType = cast<MemRefType>(buffer->getType());
    Value temporary = memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get(bufferType.getShape(), bufferType.getElementType()));
    if (isOutput)
      copiesBack.emplace_back(temporary, *buffer);
    else
      memref::CopyOp::create(rewriter, loc, *buffer, temporary);
    Value view = viewAs(rewriter, loc, temporary, target);
    if (!view)
      return emitOpError("cannot pass operand ")
             << operand.getOperandNumber() << " as " << target;
    operands.push_back(view);
  }
  func::CallOp::create(rewriter, loc, callee, operands);
  for (auto [temporary, buffer] : copiesBack)
    memref::CopyOp::create(rewriter, loc, temporary, buffer);
  bufferization::replaceOpWithBufferizedValues(rewriter, getOperation(),
                                               outputBuffers);
  return success();
}
