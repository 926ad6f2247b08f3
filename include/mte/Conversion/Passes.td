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
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

def ConvertMemRefCopyToLinalg : Pass<"mte-convert-memref-copy-to-linalg"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    Bufferization copies between strided views (slices, concatenations) with
    memref.copy, which the LLVM lowering turns into a call to the MLIR
    runner-utils library. Model libraries link nothing but libc, so the host
    pipeline turns every copy into a linalg.copy, and from there into loops.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ExpandFP8Conversions : Pass<"mte-expand-fp8-conversions"> {
  let summary = "Expand conversions to and from f8E4M3FN and f8E5M2 into "
                "integer code";
  let description = [{
    LLVM has no fp8 types and LLVM 22's arith does not expand fp8 truncation,
    so `arith.extf` from and `arith.truncf` to f8E4M3FN and f8E5M2 become
    integer arithmetic on the i8 encoding: exact decoding (subnormals, NaN,
    and E5M2's infinities) and round-to-nearest-even encoding through f32.
    Out-of-range values become infinity (E5M2) or NaN (E4M3FN, which has no
    infinity), as `arith.truncf` specifies; saturation is the caller's clamp.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // MTE_CONVERSION_PASSES_TD
