//===- NodeImporter.h - per-node import context -----------------*- C++ -*-===//
//
// Internal to the ONNX importer: the view one operator handler gets of the
// node it translates (inputs as values, typed attribute access, constant
// operands) and the helpers that create checked, folded transformer ops.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_TARGET_ONNX_NODEIMPORTER_H
#define MTE_LIB_TARGET_ONNX_NODEIMPORTER_H

#include "mte/Dialect/Transformer/IR/TransformerOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <onnx/onnx_pb.h>

namespace mte::onnx_import {

/// Converts an ONNX TensorProto element type; null when unsupported.
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t dataType);

/// Builds the attribute holding an ONNX tensor's data: inline dense elements
/// for integer and small tensors, a dense_resource blob for weights. Tensors
/// with external data are read relative to `modelDir`. Raw data may be moved
/// out of `tensor`.
mlir::FailureOr<mlir::ElementsAttr> convertTensor(onnx::TensorProto &tensor,
                                                  llvm::StringRef modelDir,
                                                  mlir::Location loc);

class NodeImporter {
public:
  NodeImporter(mlir::OpBuilder &builder, const onnx::NodeProto &node,
               mlir::Location loc, llvm::SmallVector<mlir::Value> inputs,
               int64_t opset, llvm::StringRef modelDir)
      : builder(builder), node(node), loc(loc), inputs(std::move(inputs)),
        opset(opset), modelDir(modelDir) {}

  const onnx::NodeProto &getNode() const { return node; }
  mlir::Location getLoc() const { return loc; }
  mlir::OpBuilder &getBuilder() { return builder; }
  mlir::MLIRContext *getContext() { return builder.getContext(); }
  int64_t getOpset() const { return opset; }

  /// Reports an error at the node; the message is prefixed with its type.
  mlir::InFlightDiagnostic emitError();

  //===--- Inputs ---------------------------------------------------------===//

  size_t getNumInputs() const { return inputs.size(); }
  /// The i-th input, or null when absent (past the end or named "").
  mlir::Value getInput(size_t i) const {
    return i < inputs.size() ? inputs[i] : mlir::Value();
  }
  /// The i-th input, reporting an error when it is absent.
  mlir::FailureOr<mlir::Value> getRequiredInput(size_t i);
  mlir::RankedTensorType getInputType(size_t i) const {
    return llvm::cast<mlir::RankedTensorType>(inputs[i].getType());
  }
  /// Checks the number of inputs is within [min, max].
  mlir::LogicalResult checkNumInputs(size_t min, size_t max);

  /// The value of a constant input as integers (shapes, axes, indices).
  mlir::FailureOr<llvm::SmallVector<int64_t>> getConstantInts(size_t i);
  /// The value of a constant rank-0 or single-element input as a double.
  mlir::FailureOr<double> getConstantScalar(size_t i);

  //===--- Attributes -----------------------------------------------------===//

  const onnx::AttributeProto *findAttribute(llvm::StringRef name) const;
  mlir::FailureOr<int64_t> getInt(llvm::StringRef name, int64_t defaultValue);
  mlir::FailureOr<std::optional<int64_t>> getOptionalInt(llvm::StringRef name);
  mlir::FailureOr<float> getFloat(llvm::StringRef name, float defaultValue);
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  getOptionalInts(llvm::StringRef name);
  mlir::FailureOr<std::string> getString(llvm::StringRef name,
                                         llvm::StringRef defaultValue);
  /// A TENSOR attribute converted to elements; null when absent.
  mlir::FailureOr<mlir::ElementsAttr> getTensor(llvm::StringRef name);

  //===--- Outputs --------------------------------------------------------===//

  /// Binds the node's outputs. `results` may be shorter than the node's
  /// output list only for outputs that are absent ("") or unused.
  mlir::LogicalResult setOutputs(mlir::ValueRange results);
  mlir::LogicalResult setOutput(mlir::Value result) {
    return setOutputs(mlir::ValueRange(result));
  }
  /// Whether output i is requested by the graph (present and non-empty).
  bool hasOutput(size_t i) const {
    return static_cast<int>(i) < node.output_size() && !node.output(i).empty();
  }
  const llvm::SmallVector<mlir::Value> &getResults() const { return results; }

  //===--- Building -------------------------------------------------------===//

  /// Creates an op whose result types it infers, verifies it (errors land on
  /// the node) and folds it when possible.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    auto results = createInferred<OpTy>(operands, attributes);
    if (mlir::failed(results))
      return mlir::failure();
    return results->front();
  }
  /// As above, with explicit result types.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  createTyped(mlir::TypeRange types, mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    auto results = createMulti<OpTy>(types, operands, attributes);
    if (mlir::failed(results))
      return mlir::failure();
    return results->front();
  }
  /// Creates a multi-result op with explicit result types.
  template <typename OpTy>
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  createMulti(mlir::TypeRange types, mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    if (mlir::failed(initState<OpTy>(state, operands, attributes)))
      return mlir::failure();
    state.addTypes(types);
    return finish(builder.create(state));
  }
  /// Creates an op, possibly with several results, inferring their types.
  template <typename OpTy>
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  createInferred(mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    if (mlir::failed(initState<OpTy>(state, operands, attributes)))
      return mlir::failure();
    llvm::SmallVector<mlir::Type> inferred;
    if (mlir::failed(OpTy::inferReturnTypes(
            builder.getContext(), loc, state.operands, nullptr,
            state.getRawProperties(), state.regions, inferred)))
      return mlir::failure();
    state.addTypes(inferred);
    return finish(builder.create(state));
  }

  /// An arith.constant holding `value`.
  mlir::Value constant(mlir::TypedAttr value);
  /// A rank-0 constant of `elementType` (float or integer).
  mlir::Value scalarConstant(mlir::Type elementType, double value);

private:
  /// Adds operands and properties (from `attributes`) to `state`.
  template <typename OpTy>
  mlir::LogicalResult
  initState(mlir::OperationState &state, mlir::ValueRange operands,
            llvm::ArrayRef<mlir::NamedAttribute> attributes) {
    state.addOperands(operands);
    using Props = typename OpTy::Properties;
    if constexpr (!std::is_same_v<Props, mlir::EmptyProperties>) {
      Props &props = state.getOrAddProperties<Props>();
      if (mlir::failed(OpTy::setPropertiesFromAttr(
              props, builder.getDictionaryAttr(attributes),
              [&] { return emitError(); })))
        return mlir::failure();
      // Default-valued attributes the caller left out, as the parser does.
      OpTy::populateDefaultProperties(state.name, props);
    }
    return mlir::success();
  }

  /// Verifies a freshly created op and folds it; erases it on failure.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> finish(mlir::Operation *op);

  mlir::OpBuilder &builder;
  const onnx::NodeProto &node;
  mlir::Location loc;
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<mlir::Value> results;
  int64_t opset;
  llvm::StringRef modelDir;
};

/// Translates one node; the handler for (domain, op_type, opset).
using OpHandler = mlir::LogicalResult (*)(NodeImporter &);

struct OpHandlerEntry {
  llvm::StringRef domain; // "" for the default domain
  llvm::StringRef opType;
  int64_t sinceVersion;
  OpHandler handler;
};

/// Every handler, in no particular order.
llvm::ArrayRef<OpHandlerEntry> getOpHandlers();

} // namespace mte::onnx_import

#endif // MTE_LIB_TARGET_ONNX_NODEIMPORTER_H
