//===- TransformerDialect.td - transformer dialect definition -*- tablegen -*-===//
//
// The `transformer` dialect: tensors with ONNX semantics at the primitive
// level, and the fused Transformer building blocks that the recognition and
// fusion passes form from them.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_TD
#define MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_TD

include "mlir/IR/OpBase.td"

def Transformer_Dialect : Dialect {
  let name = "transformer";
  let cppNamespace = "::mte::transformer";
  let summary = "Transformer graphs: ONNX-semantics primitives and fused blocks";
  let description = [{
    The `transformer` dialect is the level at which mte reasons about a model.
    It has three groups of operations:

    * **Primitives** with ONNX semantics (numpy broadcasting, ONNX matmul
      batch broadcasting, ONNX reduction and slicing rules). The ONNX importer
      maps every supported node one-to-one onto these.
    * **Fused operations** (`layer_norm`, `rms_norm`, `linear`, `attention`,
      `rotary_embedding`, `gelu`, `silu`, `swiglu`) that the recognition
      passes form from decomposed primitive chains, and that the fusion passes
      grow further (norm + linear, bias + activation epilogues, residuals).
    * **FP8** operations (`quantize`, `dequantize`, `amax`,
      `fp8_scale_update`).

    All tensors are ranked; after import, shapes are static. Element types are
    the builtin ones (`f32`, `f16`, `bf16`, `f8E4M3FN`, `f8E5M2`, `i64`, `i32`,
    `i1`, ...).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The discardable attribute (an Fp8SkipAttr) on a linear that
    /// mte-insert-fp8-casts kept in its float type.
    static constexpr ::llvm::StringLiteral getFp8SkippedAttrName() {
      return "transformer.fp8_skipped";
    }
    /// On an entry function's argument: the ModelStateAttr that makes it
    /// model state.
    static constexpr ::llvm::StringLiteral getStateAttrName() {
      return "transformer.state";
    }
    /// On an entry function's result: the name (a StringAttr) of the state
    /// argument whose next value it is.
    static constexpr ::llvm::StringLiteral getNextStateAttrName() {
      return "transformer.next_state";
    }
    /// How `--weights=external` rebuilds weights (WeightProvenance.h).
    WeightProvenance &getWeightProvenance() { return *weightProvenance; }

  private:
    std::unique_ptr<WeightProvenance> weightProvenance;
  }];
}

#endif // MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERDIALECT_TD
