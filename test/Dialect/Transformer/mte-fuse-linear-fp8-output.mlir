// RUN: mte-opt %s -split-input-file -mte-fuse-linear-fp8-output | FileCheck %s

// Delayed scaling's FC1 -> GELU -> FC2: the cast of FC1's output with the
// state's scale (a slice of the scale vector taken next to the cast, which
// moves up) and its amax become FC1's E4M3 output and output_amax.
// CHECK-LABEL: func @fc1_writes_e4m3
// CHECK: %[[S:.*]] = transformer.reshape
// CHECK-NEXT: %[[Q:.*]], %[[A:.*]] = transformer.linear %arg0, %arg1 bias %arg2 input_scale %arg3 weight_scale %arg4 output_scale %[[S]] layout <nk> activation <gelu_tanh> : (tensor<2x8x64xf8E4M3FN>, tensor<128x64xf8E4M3FN>, tensor<128xbf16>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<2x8x128xf8E4M3FN>, tensor<f32>)
// CHECK-NOT: transformer.amax
// CHECK-NOT: transformer.quantize
// CHECK: return %[[Q]], %[[A]]
func.func @fc1_writes_e4m3(%x: tensor<2x8x64xf8E4M3FN>, %w: tensor<128x64xf8E4M3FN>, %b: tensor<128xbf16>,
                           %sx: tensor<f32>, %sw: tensor<f32>, %scales: tensor<8x4xf32>)
    -> (tensor<2x8x128xf8E4M3FN>, tensor<f32>) {
  %h = transformer.linear %x, %w bias %b input_scale %sx weight_scale %sw layout <nk> activation <gelu_tanh> : (tensor<2x8x64xf8E4M3FN>, tensor<128x64xf8E4M3FN>, tensor<128xbf16>, tensor<f32>, tensor<f32>) -> tensor<2x8x128xbf16>
  %a = transformer.amax %h : tensor<2x8x128xbf16> -> tensor<f32>
  %slot = transformer.slice %scales {offsets = array<i64: 3, 0>, sizes = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<8x4xf32> -> tensor<1x1xf32>
  %s = transformer.reshape %slot : tensor<1x1xf32> -> tensor<f32>
  %q = transformer.quantize %h, %s {multiply} : (tensor<2x8x128xbf16>, tensor<f32>) -> tensor<2x8x128xf8E4M3FN>
  return %q, %a : tensor<2x8x128xf8E4M3FN>, tensor<f32>
}

// -----

// Without an amax reader the GEMM writes no amax. A residual is C (no
// activation with it).
// CHECK-LABEL: func @residual_no_amax
// CHECK: transformer.linear %arg0, %arg1 residual %arg4 input_scale %arg2 weight_scale %arg3 output_scale %arg5 layout <nk> : ({{.*}}) -> tensor<16x32xf8E4M3FN>
func.func @residual_no_amax(%x: tensor<16x32xf8E4M3FN>, %w: tensor<32x32xf8E4M3FN>, %sx: tensor<f32>, %sw: tensor<f32>,
                            %r: tensor<16x32xbf16>, %s: tensor<f32>) -> tensor<16x32xf8E4M3FN> {
  %h = transformer.linear %x, %w residual %r input_scale %sx weight_scale %sw layout <nk> : (tensor<16x32xf8E4M3FN>, tensor<32x32xf8E4M3FN>, tensor<16x32xbf16>, tensor<f32>, tensor<f32>) -> tensor<16x32xbf16>
  %q = transformer.quantize %h, %s {multiply} : (tensor<16x32xbf16>, tensor<f32>) -> tensor<16x32xf8E4M3FN>
  return %q : tensor<16x32xf8E4M3FN>
}

// -----

// What stays: current scaling (the scale comes from this amax), another
// reader of the 16-bit output, a division by the scale (an imported Q),
// an activation cuBLASLt does not have (SiLU), an activation before a
// residual, bf16 operands.
// CHECK-LABEL: func @not_fused
// CHECK-NOT: output_scale
// CHECK: return
func.func @not_fused(%x: tensor<16x32xf8E4M3FN>, %w: tensor<32x32xf8E4M3FN>, %sx: tensor<f32>, %sw: tensor<f32>,
                     %r: tensor<16x32xbf16>, %s: tensor<f32>, %xb: tensor<16x32xbf16>, %wb: tensor<32x32xbf16>)
    -> (tensor<16x32xf8E4M3FN>, tensor<16x32xbf16>, tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>,
        tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>) {
  %h0 = transformer.linear %x, %w input_scale %sx weight_scale %sw layout <nk> : (tensor<16x32xf8E4M3FN>, tensor<32x32xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<16x32xbf16>
  %a0 = transformer.amax %h0 : tensor<16x32xbf16> -> tensor<f32>
  %s0, %si0 = transformer.fp8_scale %a0 {fp8_max = 4.480000e+02 : f32} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %q0 = transformer.quantize %h0, %s0 {multiply} : (tensor<16x32xbf16>, tensor<f32>) -> tensor<16x32xf8E4M3FN>
  %h1 = transformer.linear %x, %w input_scale %sx weight_scale %sw layout <nk> : (tensor<16x32xf8E4M3FN>, tensor<32x32xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<16x32xbf16>
  %q1 = transformer.quantize %h1, %s {multiply} : (tensor<16x32xbf16>, tensor<f32>) -> tensor<16x32xf8E4M3FN>
  %h2 = transformer.linear %x, %w input_scale %sx weight_scale %sw layout <nk> activation <relu> : (tensor<16x32xf8E4M3FN>, tensor<32x32xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<16x32xbf16>
  %q2 = transformer.quantize %h2, %s : (tensor<16x32xbf16>, tensor<f32>) -> tensor<16x32xf8E4M3FN>
  %h3 = transformer.linear %x, %w input_scale %sx weight_scale %sw layout <nk> activation <silu> : (tensor<16x32xf8E4M3FN>, tensor<32x32xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<16x32xbf16>
  %q3 = transformer.quantize %h3, %s {multiply} : (tensor<16x32xbf16>, tensor<f32>) -> tensor<16x32xf8E4M3FN>
  %h4 = transformer.linear %x, %w residual %r input_scale %sx weight_scale %sw layout <nk> activation <relu> : (tensor<16x32xf8E4M3FN>, tensor<32x32xf8E4M3FN>, tensor<16x32xbf16>, tensor<f32>, tensor<f32>) -> tensor<16x32xbf16>
  %q4 = transformer.quantize %h4, %s {multiply} : (tensor<16x32xbf16>, tensor<f32>) -> tensor<16x32xf8E4M3FN>
  %h5 = transformer.linear %xb, %wb layout <nk> : (tensor<16x32xbf16>, tensor<32x32xbf16>) -> tensor<16x32xbf16>
  %q5 = transformer.quantize %h5, %s {multiply} : (tensor<16x32xbf16>, tensor<f32>) -> tensor<16x32xf8E4M3FN>
  return %q0, %h1, %q1, %q2, %q3, %q4, %q5 : tensor<16x32xf8E4M3FN>, tensor<16x32xbf16>, tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>
}
