//===- Passes.td - mte conversion passes -------------------*- tablegen -*-===//

#ifndef MTE_CONVERSION_PASSES_TD
#define MTE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTransformerToLinalg : Pass<"mte-convert-transformer-to-linalg"> {
  let summary = "Lower the transformer dialect to linalg, tensor, arith and math";
  let description = [{
    The reference semantics of every transformer op, on tensors:
    elementwise ops become linalg.generic with numpy broadcasting in the
    indexing maps, matmul/linear/attention become contractions (accumulating
    in f32 for f16/bf16), reductions run over trailing dimensions after a
    transpose, and normalisations, softmax and attention compute in f32.
    An op that cannot be lowered (a shape op on a dynamic shape) is reported
    at its location.
  }];
  let options = [
    Option<"namedMatmul", "named-matmul", "bool", "false",
           "Compute the product of an f32 linear with linalg.matmul on its "
           "[M, K] view, which the CUDA backend hands to cuBLASLt">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // MTE_CONVERSION_PASSES_TD
