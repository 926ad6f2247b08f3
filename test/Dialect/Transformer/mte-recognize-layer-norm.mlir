// RUN: mte-opt %s -split-input-file -mte-recognize-layer-norm | FileCheck %s
// RUN: mte-opt %s -split-input-file -cse -mte-recognize-layer-norm | FileCheck %s --check-prefix=CSE

// The TorchScript-era decomposition: Pow(d, 2), Div by Sqrt.
// CHECK-LABEL: func @pow_div
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>)
// CHECK: %[[Y:.*]] = transformer.layer_norm %[[X]], %{{.*}} bias %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NEXT: return %[[Y]]
func.func @pow_div(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  %g = arith.constant dense<1.5> : tensor<64xf32>
  %b = arith.constant dense<0.25> : tensor<64xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  %d = transformer.sub %x, %m : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %sq = transformer.pow %d, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  %ve = transformer.add %v, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = transformer.sqrt %ve : tensor<2x8x1xf32>
  %n = transformer.div %d, %s : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %y0 = transformer.mul %n, %g : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %y = transformer.add %y0, %b : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

// Mul(d, d), Reciprocal of Sqrt, operands in the other order.
// CHECK-LABEL: func @mul_reciprocal
// CHECK: transformer.layer_norm %arg0, %{{.*}} bias %{{.*}} {axis = 1 : i64
// CHECK-NOT: transformer.reciprocal
func.func @mul_reciprocal(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %g = arith.constant dense<2.0> : tensor<32xf32>
  %b = arith.constant dense<-1.0> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-12> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %d = transformer.sub %x, %m : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %sq = transformer.mul %d, %d : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %eps, %v : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %s = transformer.sqrt %ve : tensor<4x1xf32>
  %r = transformer.reciprocal %s : tensor<4x1xf32>
  %n = transformer.mul %r, %d : (tensor<4x1xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %y0 = transformer.mul %g, %n : (tensor<32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = transformer.add %b, %y0 : (tensor<32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// negative_: an intermediate (the variance) has another user.
// CHECK-LABEL: func @negative_shared_variance
// CHECK-NOT: transformer.layer_norm
func.func @negative_shared_variance(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x1xf32>) {
  %g = arith.constant dense<2.0> : tensor<32xf32>
  %b = arith.constant dense<-1.0> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %d = transformer.sub %x, %m : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %sq = transformer.mul %d, %d : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = transformer.sqrt %ve : tensor<4x1xf32>
  %n = transformer.div %d, %s : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y0 = transformer.mul %n, %g : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %y = transformer.add %y0, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y, %v : tensor<4x32xf32>, tensor<4x1xf32>
}

// -----

// negative_: epsilon added after the square root.
// CHECK-LABEL: func @negative_eps_after_sqrt
// CHECK-NOT: transformer.layer_norm
func.func @negative_eps_after_sqrt(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %g = arith.constant dense<2.0> : tensor<32xf32>
  %b = arith.constant dense<-1.0> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %d = transformer.sub %x, %m : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %sq = transformer.mul %d, %d : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %s = transformer.sqrt %v : tensor<4x1xf32>
  %se = transformer.add %s, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %n = transformer.div %d, %se : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y0 = transformer.mul %n, %g : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %y = transformer.add %y0, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// negative_: the mean runs over the wrong axis.
// CHECK-LABEL: func @negative_wrong_axis
// CHECK-NOT: transformer.layer_norm
func.func @negative_wrong_axis(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %g = arith.constant dense<2.0> : tensor<32xf32>
  %b = arith.constant dense<-1.0> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: 0>} : (tensor<4x32xf32>) -> tensor<1x32xf32>
  %d = transformer.sub %x, %m : (tensor<4x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32>
  %sq = transformer.mul %d, %d : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: 0>} : (tensor<4x32xf32>) -> tensor<1x32xf32>
  %ve = transformer.add %v, %eps : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %s = transformer.sqrt %ve : tensor<1x32xf32>
  %n = transformer.div %d, %s : (tensor<4x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32>
  %y0 = transformer.mul %n, %g : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %y = transformer.add %y0, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// negative_: gamma is not a constant.
// CHECK-LABEL: func @negative_runtime_gamma
// CHECK-NOT: transformer.layer_norm
func.func @negative_runtime_gamma(%x: tensor<4x32xf32>, %g: tensor<32xf32>) -> tensor<4x32xf32> {
  %b = arith.constant dense<-1.0> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %d = transformer.sub %x, %m : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %sq = transformer.mul %d, %d : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = transformer.sqrt %ve : tensor<4x1xf32>
  %n = transformer.div %d, %s : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y0 = transformer.mul %n, %g : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %y = transformer.add %y0, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// A norm without bias (bias=False, T5-style): gamma * normalized is the root.
// CHECK-LABEL: func @without_bias
// CHECK: %[[Y:.*]] = transformer.layer_norm %arg0, %{{.*}} {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT: %[[R:.*]] = transformer.add %[[Y]], %arg1
// CHECK-NEXT: return %[[R]]
func.func @without_bias(%x: tensor<4x32xf32>, %r: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %g = arith.constant dense<1.5> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %d = transformer.sub %x, %m : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %sq = transformer.mul %d, %d : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = transformer.sqrt %ve : tensor<4x1xf32>
  %n = transformer.div %d, %s : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y = transformer.mul %g, %n : (tensor<32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  // A residual add after it is not a bias.
  %z = transformer.add %y, %r : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %z : tensor<4x32xf32>
}

// -----

// Mixed precision (an fp16 export of an opset < 17 model): the statistics in
// f32 between Cast(x0 -> f32) and Cast(-> f16), gamma and beta in f16. The
// op runs on the f16 tensor and computes its statistics in f32 itself.
// CHECK-LABEL: func @cast_wrapped
// CHECK: %[[Y:.*]] = transformer.layer_norm %arg0, %{{.*}} bias %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x8x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<2x8x64xf16>
// CHECK-NEXT: return %[[Y]]
func.func @cast_wrapped(%x0: tensor<2x8x64xf16>) -> tensor<2x8x64xf16> {
  %g = arith.constant dense<1.5> : tensor<64xf16>
  %b = arith.constant dense<0.25> : tensor<64xf16>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %x = transformer.cast %x0 : tensor<2x8x64xf16> to tensor<2x8x64xf32>
  %m = transformer.reduce <mean> %x {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  %d = transformer.sub %x, %m : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %sq = transformer.pow %d, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  %ve = transformer.add %v, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %s = transformer.sqrt %ve : tensor<2x8x1xf32>
  %n = transformer.div %d, %s : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %n16 = transformer.cast %n : tensor<2x8x64xf32> to tensor<2x8x64xf16>
  %y0 = transformer.mul %n16, %g : (tensor<2x8x64xf16>, tensor<64xf16>) -> tensor<2x8x64xf16>
  %y = transformer.add %y0, %b : (tensor<2x8x64xf16>, tensor<64xf16>) -> tensor<2x8x64xf16>
  return %y : tensor<2x8x64xf16>
}

// -----

// Only the output Cast: gamma would multiply a different type than the
// statistics were taken of.
// CHECK-LABEL: func @negative_output_cast_only
// CHECK-NOT: transformer.layer_norm
func.func @negative_output_cast_only(%x: tensor<2x64xf32>) -> tensor<2x64xf16> {
  %g = arith.constant dense<1.5> : tensor<64xf16>
  %b = arith.constant dense<0.25> : tensor<64xf16>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: -1>} : (tensor<2x64xf32>) -> tensor<2x1xf32>
  %d = transformer.sub %x, %m : (tensor<2x64xf32>, tensor<2x1xf32>) -> tensor<2x64xf32>
  %sq = transformer.mul %d, %d : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: -1>} : (tensor<2x64xf32>) -> tensor<2x1xf32>
  %ve = transformer.add %v, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = transformer.sqrt %ve : tensor<2x1xf32>
  %n = transformer.div %d, %s : (tensor<2x64xf32>, tensor<2x1xf32>) -> tensor<2x64xf32>
  %n16 = transformer.cast %n : tensor<2x64xf32> to tensor<2x64xf16>
  %y0 = transformer.mul %n16, %g : (tensor<2x64xf16>, tensor<64xf16>) -> tensor<2x64xf16>
  %y = transformer.add %y0, %b : (tensor<2x64xf16>, tensor<64xf16>) -> tensor<2x64xf16>
  return %y : tensor<2x64xf16>
}

// -----

// Some exporters compute x - mean(x) twice (one Sub for the variance, one
// for the normalisation). mte-simplify's CSE, which runs before the fusion
// pipeline, merges them; without it the duplicate is another user.
// CHECK-LABEL: func @duplicated_sub
// CHECK-NOT: transformer.layer_norm
// CSE-LABEL: func @duplicated_sub
// CSE: transformer.layer_norm %arg0
// CSE-NOT: transformer.sub
func.func @duplicated_sub(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %g = arith.constant dense<1.5> : tensor<32xf32>
  %b = arith.constant dense<0.25> : tensor<32xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %m = transformer.reduce <mean> %x {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %d1 = transformer.sub %x, %m : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %sq = transformer.mul %d1, %d1 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %v = transformer.reduce <mean> %sq {axes = array<i64: 1>} : (tensor<4x32xf32>) -> tensor<4x1xf32>
  %ve = transformer.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = transformer.sqrt %ve : tensor<4x1xf32>
  %d2 = transformer.sub %x, %m : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %n = transformer.div %d2, %s : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y0 = transformer.mul %n, %g : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %y = transformer.add %y0, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
