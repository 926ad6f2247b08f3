//===- Passes.td - transformer dialect passes --------------*- tablegen -*-===//

#ifndef MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
#define MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckStaticShapes : Pass<"mte-check-static-shapes", "::mlir::func::FuncOp"> {
  let summary = "Rejects functions whose tensors are not fully static";
  let description = [{
    mte plans memory and picks kernels at compile time, so every tensor in a
    function must have a static shape once import and shape folding are done.
    This pass reports each value that does not, at the location of the op
    that defines it (the ONNX node, for imported models), with a hint to
    specialise the symbolic input dimensions.
  }];
}

#endif // MTE_DIALECT_TRANSFORMER_TRANSFORMS_PASSES_TD
