// RUN: mte-opt %s -split-input-file -mte-recognize-silu | FileCheck %s

// Llama's MLP: Sigmoid(gate) * gate, times up.
// CHECK-LABEL: func @swiglu
// CHECK-SAME: (%[[G:.*]]: tensor<4x128xf32>, %[[U:.*]]: tensor<4x128xf32>)
// CHECK-NEXT: %[[S:.*]] = transformer.swiglu %[[G]], %[[U]] : tensor<4x128xf32>
// CHECK-NEXT: return %[[S]]
func.func @swiglu(%gate: tensor<4x128xf32>, %up: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %s = transformer.sigmoid %gate : tensor<4x128xf32>
  %a = transformer.mul %s, %gate : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %y = transformer.mul %up, %a : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %y : tensor<4x128xf32>
}

// -----

// A SiLU whose result is used twice stays a silu.
// CHECK-LABEL: func @silu_shared
// CHECK: %[[A:.*]] = transformer.silu %arg0
// CHECK: transformer.mul %[[A]], %arg1
// CHECK: return
func.func @silu_shared(%x: tensor<8xf32>, %u: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = transformer.sigmoid %x : tensor<8xf32>
  %a = transformer.mul %x, %s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = transformer.mul %a, %u : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y, %a : tensor<8xf32>, tensor<8xf32>
}

// -----

// negative_: sigmoid of another value.
// CHECK-LABEL: func @negative_other_argument
// CHECK-NOT: transformer.silu
func.func @negative_other_argument(%x: tensor<8xf32>, %z: tensor<8xf32>) -> tensor<8xf32> {
  %s = transformer.sigmoid %z : tensor<8xf32>
  %a = transformer.mul %x, %s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %a : tensor<8xf32>
}

// -----

// negative_: the sigmoid has another user.
// CHECK-LABEL: func @negative_shared_sigmoid
// CHECK-NOT: transformer.silu
func.func @negative_shared_sigmoid(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = transformer.sigmoid %x : tensor<8xf32>
  %a = transformer.mul %x, %s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %a, %s : tensor<8xf32>, tensor<8xf32>
}
