// RUN: mte-opt %mte_src_root/examples/gpt2_block.mlir --mte-simplify | FileCheck %s
// RUN: mte-opt %mte_src_root/examples/gpt2_block.mlir --mte-simplify | FileCheck %s --check-prefix=FOLDED
// RUN: mte-opt %s --split-input-file --mte-simplify --verify-diagnostics
// RUN: mte-opt %s --split-input-file --mte-simplify="require-static-shapes=false" | FileCheck %s --check-prefix=DYNAMIC

// The bundled GPT-2 block: every shape computation folds away, the causal
// mask becomes a constant, and the numerical ops are left as they were.
// CHECK-LABEL: func.func @gpt2_block
// CHECK: %[[MASK:.*]] = arith.constant dense<"0x0100030007000F001F003F007F00FF00FF01FF03FF07FF0FFF1FFF3FFF7FFFFF"> : tensor<16x16xi1>
// CHECK-COUNT-3: transformer.reshape %{{.*}} : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
// CHECK: transformer.where %[[MASK]]
// CHECK: transformer.softmax
// CHECK: return

// FOLDED-NOT: transformer.shape
// FOLDED-NOT: transformer.gather
// FOLDED-NOT: transformer.concat
// FOLDED-NOT: transformer.range
// FOLDED-NOT: transformer.compare
// FOLDED-NOT: transformer.reshape %{{.*}} : tensor<i64> -> tensor<1xi64>

// -----

// expected-error @+1 {{argument #0 of @dynamic has type 'tensor<?x8xf32>', which is not static}}
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}

// DYNAMIC-LABEL: func.func @dynamic
// DYNAMIC-NEXT: return %arg0
