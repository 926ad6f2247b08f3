// RUN: mte-opt %s -split-input-file -mte-fuse-norm-linear | FileCheck %s

// A bf16 GEMM after an f32 LayerNorm (the QKV projection under mixed
// precision): the norm writes bf16 and the cast goes away.
// CHECK-LABEL: func @layer_norm_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>, %[[W:.*]]: tensor<192x64xbf16>)
// CHECK-NEXT: %[[N:.*]] = transformer.layer_norm %[[X]], %[[G]] bias %[[B]] {epsilon = 9.99999996E-13 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xbf16>
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %[[N]], %[[W]] layout <nk> : (tensor<2x8x64xbf16>, tensor<192x64xbf16>) -> tensor<2x8x192xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_bf16(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %w: tensor<192x64xbf16>) -> tensor<2x8x192xbf16> {
  %n = transformer.layer_norm %x, %g bias %b {epsilon = 1.0e-12 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %c = transformer.cast %n : tensor<2x8x64xf32> to tensor<2x8x64xbf16>
  %y = transformer.linear %c, %w layout <nk> : (tensor<2x8x64xbf16>, tensor<192x64xbf16>) -> tensor<2x8x192xbf16>
  return %y : tensor<2x8x192xbf16>
}

// -----

// An RMSNorm with a residual feeding two f16 GEMMs through two casts (gate
// and up before horizontal fusion); residual_sum keeps the f32 stream.
// CHECK-LABEL: func @rms_norm_f16_two_casts
// CHECK-NEXT: %[[N:.*]], %[[S:.*]] = transformer.rms_norm %arg0, %arg1 residual %arg2 {epsilon = 9.99999997E-7 : f32} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>) -> (tensor<4x64xf16>, tensor<4x64xf32>)
// CHECK-NEXT: %[[G:.*]] = transformer.linear %[[N]], %arg3 layout <kn>
// CHECK-NEXT: %[[U:.*]] = transformer.linear %[[N]], %arg3 layout <kn>
// CHECK-NEXT: return %[[G]], %[[U]], %[[S]]
func.func @rms_norm_f16_two_casts(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %r: tensor<4x64xf32>, %w: tensor<64x128xf16>) -> (tensor<4x128xf16>, tensor<4x128xf16>, tensor<4x64xf32>) {
  %n, %s = transformer.rms_norm %x, %g residual %r {epsilon = 1.0e-6 : f32} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>)
  %c0 = transformer.cast %n : tensor<4x64xf32> to tensor<4x64xf16>
  %gate = transformer.linear %c0, %w layout <kn> : (tensor<4x64xf16>, tensor<64x128xf16>) -> tensor<4x128xf16>
  %c1 = transformer.cast %n : tensor<4x64xf32> to tensor<4x64xf16>
  %up = transformer.linear %c1, %w layout <kn> : (tensor<4x64xf16>, tensor<64x128xf16>) -> tensor<4x128xf16>
  return %gate, %up, %s : tensor<4x128xf16>, tensor<4x128xf16>, tensor<4x64xf32>
}

// -----

// FP8: a bf16 norm writes e4m3 for an fp8 GEMM.
// CHECK-LABEL: func @fp8
// CHECK-NEXT: %[[N:.*]] = transformer.rms_norm %arg0, %arg1 {epsilon = 9.99999997E-7 : f32} : (tensor<4x64xbf16>, tensor<64xbf16>) -> tensor<4x64xf8E4M3FN>
// CHECK-NEXT: transformer.linear %[[N]], %arg2 layout <nk> : (tensor<4x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>) -> tensor<4x32xbf16>
func.func @fp8(%x: tensor<4x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xf8E4M3FN>) -> tensor<4x32xbf16> {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<4x64xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
  %c = transformer.cast %n : tensor<4x64xbf16> to tensor<4x64xf8E4M3FN>
  %y = transformer.linear %c, %w layout <nk> : (tensor<4x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>) -> tensor<4x32xbf16>
  return %y : tensor<4x32xbf16>
}

// -----

// negative_: the normalised value has a user that is not a cast.
// CHECK-LABEL: func @negative_other_user
// CHECK: transformer.layer_norm {{.*}} -> tensor<4x64xf32>
// CHECK: transformer.cast
func.func @negative_other_user(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %w: tensor<64x64xbf16>) -> (tensor<4x64xbf16>, tensor<4x64xf32>) {
  %n = transformer.layer_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %c = transformer.cast %n : tensor<4x64xf32> to tensor<4x64xbf16>
  %y = transformer.linear %c, %w layout <kn> : (tensor<4x64xbf16>, tensor<64x64xbf16>) -> tensor<4x64xbf16>
  return %y, %n : tensor<4x64xbf16>, tensor<4x64xf32>
}

// -----

// negative_: the casts go to different types.
// CHECK-LABEL: func @negative_two_types
// CHECK: transformer.layer_norm {{.*}} -> tensor<4x64xf32>
// CHECK-COUNT-2: transformer.cast
func.func @negative_two_types(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %wb: tensor<64x64xbf16>, %wh: tensor<64x64xf16>) -> (tensor<4x64xbf16>, tensor<4x64xf16>) {
  %n = transformer.layer_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %cb = transformer.cast %n : tensor<4x64xf32> to tensor<4x64xbf16>
  %yb = transformer.linear %cb, %wb layout <kn> : (tensor<4x64xbf16>, tensor<64x64xbf16>) -> tensor<4x64xbf16>
  %ch = transformer.cast %n : tensor<4x64xf32> to tensor<4x64xf16>
  %yh = transformer.linear %ch, %wh layout <kn> : (tensor<4x64xf16>, tensor<64x64xf16>) -> tensor<4x64xf16>
  return %yb, %yh : tensor<4x64xbf16>, tensor<4x64xf16>
}

// -----

// negative_: the cast value also goes elsewhere than a GEMM input (here a
// residual).
// CHECK-LABEL: func @negative_cast_not_gemm_input
// CHECK: transformer.rms_norm {{.*}} -> tensor<4x64xf32>
// CHECK: transformer.cast
func.func @negative_cast_not_gemm_input(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %w: tensor<64x64xbf16>) -> tensor<4x64xbf16> {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %c = transformer.cast %n : tensor<4x64xf32> to tensor<4x64xbf16>
  %y = transformer.linear %c, %w residual %c layout <kn> : (tensor<4x64xbf16>, tensor<64x64xbf16>, tensor<4x64xbf16>) -> tensor<4x64xbf16>
  return %y : tensor<4x64xbf16>
}

// -----

// negative_: a widening cast stays: the norm would write more bytes, and
// the GEMM would see values it did not before.
// CHECK-LABEL: func @negative_widening
// CHECK: transformer.layer_norm {{.*}} -> tensor<4x64xbf16>
// CHECK: transformer.cast
func.func @negative_widening(%x: tensor<4x64xbf16>, %g: tensor<64xbf16>, %w: tensor<64x64xf32>) -> tensor<4x64xf32> {
  %n = transformer.layer_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<4x64xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
  %c = transformer.cast %n : tensor<4x64xbf16> to tensor<4x64xf32>
  %y = transformer.linear %c, %w layout <kn> : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
