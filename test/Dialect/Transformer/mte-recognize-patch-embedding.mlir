// RUN: mte-opt %s -split-input-file -mte-recognize-patch-embedding | FileCheck %s

// ViT's patch embedding (kernel 4 = stride 4 over 8x8): patches gathered by
// reshape + transpose into [N, P, C*K], one linear with the weight viewed as
// [M, C*K] (layout nk) and the bias, then back to [N, M, P1, P2].
// CHECK-LABEL: func @vit_patches
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<16x3x4x4xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK: %[[T:.*]] = transformer.reshape %[[X]] : tensor<2x3x8x8xf32> -> tensor<2x3x2x4x2x4xf32>
// CHECK: %[[P:.*]] = transformer.transpose %[[T]] [0, 2, 4, 1, 3, 5] : tensor<2x3x2x4x2x4xf32> -> tensor<2x2x2x3x4x4xf32>
// CHECK: %[[R:.*]] = transformer.reshape %[[P]] : tensor<2x2x2x3x4x4xf32> -> tensor<2x4x48xf32>
// CHECK: %[[WR:.*]] = transformer.reshape %[[W]] : tensor<16x3x4x4xf32> -> tensor<16x48xf32>
// CHECK: %[[L:.*]] = transformer.linear %[[R]], %[[WR]] bias %[[B]] layout <nk> : (tensor<2x4x48xf32>, tensor<16x48xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// CHECK: %[[G:.*]] = transformer.reshape %[[L]] : tensor<2x4x16xf32> -> tensor<2x2x2x16xf32>
// CHECK: %[[Y:.*]] = transformer.transpose %[[G]] [0, 3, 1, 2] : tensor<2x2x2x16xf32> -> tensor<2x16x2x2xf32>
// CHECK: return %[[Y]]
func.func @vit_patches(%x: tensor<2x3x8x8xf32>, %w: tensor<16x3x4x4xf32>, %b: tensor<16xf32>) -> tensor<2x16x2x2xf32> {
  %0 = transformer.conv %x, %w bias %b {strides = array<i64: 4, 4>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<16x3x4x4xf32>, tensor<16xf32>) -> tensor<2x16x2x2xf32>
  return %0 : tensor<2x16x2x2xf32>
}

// -----

// Convolutions whose kernel does not tile the input stay convolutions: a
// stride below the kernel (Whisper's stem), padding, a remainder.
// CHECK-LABEL: func @not_patches
// CHECK-NOT: transformer.linear
// CHECK-COUNT-3: transformer.conv
// CHECK-NOT: transformer.linear
// CHECK: return
func.func @not_patches(%x: tensor<1x4x30xf32>, %w: tensor<6x4x3xf32>) -> (tensor<1x6x28xf32>, tensor<1x6x10xf32>, tensor<1x6x7xf32>) {
  %0 = transformer.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x4x30xf32>, tensor<6x4x3xf32>) -> tensor<1x6x28xf32>
  %1 = transformer.conv %x, %w {strides = array<i64: 3>, pads = array<i64: 1, 0>, dilations = array<i64: 1>} : (tensor<1x4x30xf32>, tensor<6x4x3xf32>) -> tensor<1x6x10xf32>
  %s = transformer.slice %x {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 1, 4, 22>, strides = array<i64: 1, 1, 1>} : tensor<1x4x30xf32> -> tensor<1x4x22xf32>
  %2 = transformer.conv %s, %w {strides = array<i64: 3>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x4x22xf32>, tensor<6x4x3xf32>) -> tensor<1x6x7xf32>
  return %0, %1, %2 : tensor<1x6x28xf32>, tensor<1x6x10xf32>, tensor<1x6x7xf32>
}
