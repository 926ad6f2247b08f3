// RUN: mte-opt %s -split-input-file -mte-recognize-rms-norm | FileCheck %s

// Llama as the dynamo exporter writes it: Pow, Reciprocal(Sqrt), weight last.
// CHECK-LABEL: func @reciprocal_form
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>)
// CHECK: %[[Y:.*]] = transformer.rms_norm %[[X]], %{{.*}} {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT: return %[[Y]], %[[X]]
func.func @reciprocal_form(%x: tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  %w = arith.constant dense<1.25> : tensor<64xf32>
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %sq = transformer.pow %x, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %m = transformer.reduce <mean> %sq {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  %ve = transformer.add %m, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = transformer.sqrt %ve : tensor<2x8x1xf32>
  %r = transformer.reciprocal %s : tensor<2x8x1xf32>
  %n = transformer.mul %x, %r : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %y = transformer.mul %w, %n : (tensor<64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // The input keeps its other user (the residual stream).
  return %y, %x : tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// -----

// The TorchScript export of torch.rsqrt: Div(1, Sqrt); and Mul(x, x).
// CHECK-LABEL: func @div_one_form
// CHECK: transformer.rms_norm %arg0
// CHECK-NOT: transformer.sqrt
func.func @div_one_form(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %w = arith.constant dense<0.5> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %sq = transformer.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %eps, %m : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %s = transformer.sqrt %ve : tensor<4x1xf32>
  %r = transformer.div %one, %s : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = transformer.mul %r, %x : (tensor<4x1xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = transformer.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func @rsqrt_form
// CHECK: transformer.rms_norm %arg0
func.func @rsqrt_form(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %w = arith.constant dense<0.5> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %sq = transformer.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %m, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = transformer.rsqrt %ve : tensor<4x1xf32>
  %n = transformer.mul %x, %r : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y = transformer.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// negative_: the weight is computed at run time.
// CHECK-LABEL: func @negative_runtime_weight
// CHECK-NOT: transformer.rms_norm
func.func @negative_runtime_weight(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %sq = transformer.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %m, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = transformer.rsqrt %ve : tensor<4x1xf32>
  %n = transformer.mul %x, %r : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y = transformer.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// negative_: the mean of squares has another user.
// CHECK-LABEL: func @negative_shared_mean
// CHECK-NOT: transformer.rms_norm
func.func @negative_shared_mean(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x1xf32>) {
  %w = arith.constant dense<0.5> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %sq = transformer.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %m, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = transformer.rsqrt %ve : tensor<4x1xf32>
  %n = transformer.mul %x, %r : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y = transformer.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y, %m : tensor<4x32xf32>, tensor<4x1xf32>
}

// -----

// negative_: no epsilon (a zero row would divide by zero).
// CHECK-LABEL: func @negative_no_epsilon
// CHECK-NOT: transformer.rms_norm
func.func @negative_no_epsilon(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %w = arith.constant dense<0.5> : tensor<32xf32>
  %sq = transformer.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %r = transformer.rsqrt %m : tensor<4x1xf32>
  %n = transformer.mul %x, %r : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y = transformer.mul %n, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// Hugging Face's LlamaRMSNorm in bf16: hidden_states.to(float32), the
// statistics in f32, .to(input_dtype), then weight * that.
// CHECK-LABEL: func @cast_wrapped
// CHECK: %[[Y:.*]] = transformer.rms_norm %arg0, %{{.*}} {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x8x64xbf16>, tensor<64xbf16>) -> tensor<2x8x64xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @cast_wrapped(%x0: tensor<2x8x64xbf16>) -> tensor<2x8x64xbf16> {
  %w = arith.constant dense<1.25> : tensor<64xbf16>
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %x = transformer.cast %x0 : tensor<2x8x64xbf16> to tensor<2x8x64xf32>
  %sq = transformer.pow %x, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %m = transformer.reduce <mean> %sq {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  %ve = transformer.add %m, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %r = transformer.rsqrt %ve : tensor<2x8x1xf32>
  %n = transformer.mul %x, %r : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %n16 = transformer.cast %n : tensor<2x8x64xf32> to tensor<2x8x64xbf16>
  %y = transformer.mul %w, %n16 : (tensor<64xbf16>, tensor<2x8x64xbf16>) -> tensor<2x8x64xbf16>
  return %y : tensor<2x8x64xbf16>
}

// -----

// The Casts disagree: f16 in, bf16 out.
// CHECK-LABEL: func @negative_casts_disagree
// CHECK-NOT: transformer.rms_norm
func.func @negative_casts_disagree(%x0: tensor<2x64xf16>) -> tensor<2x64xbf16> {
  %w = arith.constant dense<1.25> : tensor<64xbf16>
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %x = transformer.cast %x0 : tensor<2x64xf16> to tensor<2x64xf32>
  %sq = transformer.mul %x, %x : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %m = transformer.reduce <mean> %sq {axes = array<i64: -1>} : (tensor<2x64xf32>) -> tensor<2x1xf32>
  %ve = transformer.add %m, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %r = transformer.rsqrt %ve : tensor<2x1xf32>
  %n = transformer.mul %x, %r : (tensor<2x64xf32>, tensor<2x1xf32>) -> tensor<2x64xf32>
  %n16 = transformer.cast %n : tensor<2x64xf32> to tensor<2x64xbf16>
  %y = transformer.mul %w, %n16 : (tensor<64xbf16>, tensor<2x64xbf16>) -> tensor<2x64xbf16>
  return %y : tensor<2x64xbf16>
}
