// RUN: mte-opt %s -split-input-file -mte-fuse-bias-activation | FileCheck %s

// BERT's intermediate dense: exact GELU after the bias.
// CHECK-LABEL: func @gelu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[W:.*]]: tensor<128x64xf32>, %[[B:.*]]: tensor<128xf32>)
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %[[X]], %[[W]] bias %[[B]] layout <nk> activation <gelu> : (tensor<2x8x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<2x8x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu(%x: tensor<2x8x64xf32>, %w: tensor<128x64xf32>, %b: tensor<128xf32>) -> tensor<2x8x128xf32> {
  %0 = transformer.linear %x, %w bias %b layout <nk> : (tensor<2x8x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<2x8x128xf32>
  %1 = transformer.gelu %0 : tensor<2x8x128xf32>
  return %1 : tensor<2x8x128xf32>
}

// -----

// GPT-2's tanh approximation.
// CHECK-LABEL: func @gelu_tanh
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %arg0, %arg1 bias %arg2 layout <kn> activation <gelu_tanh>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_tanh(%x: tensor<16x64xf32>, %w: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<16x128xf32> {
  %0 = transformer.linear %x, %w bias %b layout <kn> : (tensor<16x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<16x128xf32>
  %1 = transformer.gelu %0 approximate <tanh> : tensor<16x128xf32>
  return %1 : tensor<16x128xf32>
}

// -----

// SiLU and ReLU, without a bias.
// CHECK-LABEL: func @silu_relu
// CHECK-NEXT: %[[S:.*]] = transformer.linear %arg0, %arg1 layout <kn> activation <silu> : (tensor<4x16xbf16>, tensor<16x16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT: %[[R:.*]] = transformer.linear %arg0, %arg1 layout <kn> activation <relu> : (tensor<4x16xbf16>, tensor<16x16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT: return %[[S]], %[[R]]
func.func @silu_relu(%x: tensor<4x16xbf16>, %w: tensor<16x16xbf16>) -> (tensor<4x16xbf16>, tensor<4x16xbf16>) {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<4x16xbf16>, tensor<16x16xbf16>) -> tensor<4x16xbf16>
  %1 = transformer.silu %0 : tensor<4x16xbf16>
  %2 = transformer.linear %x, %w layout <kn> : (tensor<4x16xbf16>, tensor<16x16xbf16>) -> tensor<4x16xbf16>
  %3 = transformer.relu %2 : tensor<4x16xbf16>
  return %1, %3 : tensor<4x16xbf16>, tensor<4x16xbf16>
}

// -----

// negative_: the pre-activation value has another user.
// CHECK-LABEL: func @negative_shared_product
// CHECK: %[[Y:.*]] = transformer.linear %arg0, %arg1 layout <kn> :
// CHECK-NEXT: %[[G:.*]] = transformer.gelu %[[Y]]
// CHECK-NEXT: return %[[G]], %[[Y]]
func.func @negative_shared_product(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %1 = transformer.gelu %0 : tensor<4x16xf32>
  return %1, %0 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// negative_: the residual comes before the activation here, and the
// linear's epilogue adds it after.
// CHECK-LABEL: func @negative_residual
// CHECK: transformer.linear %arg0, %arg1 residual %arg2 layout <kn> :
// CHECK-NEXT: transformer.gelu
func.func @negative_residual(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = transformer.linear %x, %w residual %r layout <kn> : (tensor<4x16xf32>, tensor<16x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = transformer.gelu %0 : tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// negative_: the linear has an activation already.
// CHECK-LABEL: func @negative_second_activation
// CHECK: transformer.linear %arg0, %arg1 layout <kn> activation <relu>
// CHECK-NEXT: transformer.silu
func.func @negative_second_activation(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %0 = transformer.linear %x, %w layout <kn> activation <relu> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %1 = transformer.silu %0 : tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// negative_: SwiGLU reads two products and stays a separate op; so does an
// activation of something other than a linear.
// CHECK-LABEL: func @negative_swiglu
// CHECK: %[[G:.*]] = transformer.linear %arg0, %arg1 layout <kn> :
// CHECK: %[[U:.*]] = transformer.linear %arg0, %arg2 layout <kn> :
// CHECK: transformer.swiglu %[[G]], %[[U]]
// CHECK: transformer.gelu %arg0
func.func @negative_swiglu(%x: tensor<4x16xf32>, %wg: tensor<16x16xf32>, %wu: tensor<16x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %g = transformer.linear %x, %wg layout <kn> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %u = transformer.linear %x, %wu layout <kn> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %y = transformer.swiglu %g, %u : tensor<4x16xf32>
  %z = transformer.gelu %x : tensor<4x16xf32>
  return %y, %z : tensor<4x16xf32>, tensor<4x16xf32>
}
