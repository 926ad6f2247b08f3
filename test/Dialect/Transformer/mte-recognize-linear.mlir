// RUN: mte-opt %s -split-input-file -mte-recognize-linear | FileCheck %s

// MatMul + bias Add (ONNX MatMul weights are [K, N]).
// CHECK-LABEL: func @matmul_bias
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[W:.*]]: tensor<64x32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %[[X]], %[[W]] bias %[[B]] layout <kn> : (tensor<2x8x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_bias(%x: tensor<2x8x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %0 = transformer.matmul %x, %w : (tensor<2x8x64xf32>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
  %1 = transformer.add %b, %0 : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %1 : tensor<2x8x32xf32>
}

// -----

// Gemm with transB as the importer spells it: the weight stays [N, K].
// CHECK-LABEL: func @gemm_trans_b
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<32x64xf32>, %[[B:.*]]: tensor<1x32xf32>)
// CHECK: %[[B1:.*]] = transformer.reshape %[[B]] : tensor<1x32xf32> -> tensor<32xf32>
// CHECK: transformer.linear %[[X]], %[[W]] bias %[[B1]] layout <nk>
// CHECK-NOT: transformer.transpose
func.func @gemm_trans_b(%x: tensor<16x64xf32>, %w: tensor<32x64xf32>, %b: tensor<1x32xf32>) -> tensor<16x32xf32> {
  %t = transformer.transpose %w [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  %0 = transformer.matmul %x, %t : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %1 = transformer.add %0, %b : (tensor<16x32xf32>, tensor<1x32xf32>) -> tensor<16x32xf32>
  return %1 : tensor<16x32xf32>
}

// -----

// negative_: the product has another user, so the bias stays a separate add.
// CHECK-LABEL: func @negative_shared_product
// CHECK: %[[L:.*]] = transformer.linear %arg0, %arg1 layout <kn>
// CHECK: transformer.add %[[L]], %arg2
// CHECK: return
func.func @negative_shared_product(%x: tensor<4x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = transformer.matmul %x, %w : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
  %1 = transformer.add %0, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %0, %1 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// negative_: an add that is not a per-feature bias is not folded.
// CHECK-LABEL: func @negative_not_a_bias
// CHECK: %[[L:.*]] = transformer.linear %arg0, %arg1 layout <kn>
// CHECK: transformer.add %[[L]], %arg2
func.func @negative_not_a_bias(%x: tensor<4x64xf32>, %w: tensor<64x32xf32>, %r: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = transformer.matmul %x, %w : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
  %1 = transformer.add %0, %r : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %1 : tensor<4x32xf32>
}

// -----

// negative_: batched products of activations (attention scores) stay matmuls.
// CHECK-LABEL: func @negative_batched
// CHECK: transformer.matmul
// CHECK-NOT: transformer.linear
func.func @negative_batched(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32> {
  %0 = transformer.matmul %q, %k : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}
