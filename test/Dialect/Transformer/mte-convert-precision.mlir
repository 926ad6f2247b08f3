// RUN: mte-opt %s -split-input-file -mte-convert-precision | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-convert-precision="precision=f16" | FileCheck %s --check-prefix=F16
// RUN: not mte-opt %s -split-input-file -mte-convert-precision="precision=fp8" 2>&1 | FileCheck %s --check-prefix=BAD

// A linear's weight is a weight: it is rounded at compile time (1 + 2^-9 is 1.0 in bf16, exact in f16), the
// f32 input is cast, the linear writes bf16 and the return casts back.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>) -> tensor<2x8xf32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 1.000000e+00, 3.000000e+00], {{.*}}> : tensor<8x4xbf16>
// CHECK-DAG: %[[XB:.*]] = transformer.cast %[[X]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: %[[Y:.*]] = transformer.linear %[[XB]], %[[W]] layout <nk> : (tensor<2x4xbf16>, tensor<8x4xbf16>) -> tensor<2x8xbf16>
// CHECK: %[[R:.*]] = transformer.cast %[[Y]] : tensor<2x8xbf16> to tensor<2x8xf32>
// CHECK: return %[[R]]
// F16-LABEL: func @linear
// F16: arith.constant dense<{{\[}}[1.001950e+00, 3.000000e+00, {{.*}}> : tensor<8x4xf16>
// F16: transformer.linear {{.*}} -> tensor<2x8xf16>
// BAD: error: unknown precision 'fp8' (expected bf16 or f16)
func.func @linear(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %w = arith.constant dense<[[1.001953125, 3.0, 1.001953125, 3.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]> : tensor<8x4xf32>
  %y = transformer.linear %x, %w layout <nk> : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Position arithmetic never meets a weight and stays f32 (integers above
// 256 are not exact in bf16); the table is rounded once, where the narrow
// activation reads it. A small constant (the exponent) is converted in place.
// CHECK-LABEL: func @tables_stay_f32
// CHECK: %[[P:.*]] = transformer.cast %arg1 : tensor<4x1xi64> to tensor<4x1xf32>
// CHECK: %[[F:.*]] = transformer.mul %[[P]], %{{.*}} : (tensor<4x1xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[C:.*]] = transformer.cos %[[F]] : tensor<4x4xf32>
// CHECK: %[[G:.*]] = transformer.gather %{{.*}}[%arg0] : (tensor<16x4xbf16>, tensor<4xi64>) -> tensor<4x4xbf16>
// CHECK: %[[CB:.*]] = transformer.cast %[[C]] : tensor<4x4xf32> to tensor<4x4xbf16>
// CHECK: %[[M:.*]] = transformer.mul %[[G]], %[[CB]] : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
// CHECK: %[[E:.*]] = arith.constant dense<2.000000e+00> : tensor<bf16>
// CHECK: transformer.pow %[[M]], %[[E]] : (tensor<4x4xbf16>, tensor<bf16>) -> tensor<4x4xbf16>
func.func @tables_stay_f32(%ids: tensor<4xi64>, %pos: tensor<4x1xi64>) -> tensor<4x4xf32> {
  %table = arith.constant dense<0.5> : tensor<16x4xf32>
  %freq = arith.constant dense<[[1.0, 0.1, 0.01, 0.001]]> : tensor<1x4xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %p = transformer.cast %pos : tensor<4x1xi64> to tensor<4x1xf32>
  %f = transformer.mul %p, %freq : (tensor<4x1xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %c = transformer.cos %f : tensor<4x4xf32>
  %e = transformer.gather %table[%ids] : (tensor<16x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  %m = transformer.mul %e, %c : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = transformer.pow %m, %two : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// An explicit cast up to f32 of a narrow value keeps it narrow; integer
// results (shape, comparisons) are untouched.
// CHECK-LABEL: func @casts_up_stay_narrow
// CHECK: %[[G:.*]] = transformer.gather {{.*}} -> tensor<4x4xbf16>
// CHECK: %[[C:.*]] = transformer.cast %[[G]] : tensor<4x4xbf16> to tensor<4x4xbf16>
// CHECK: transformer.compare {{.*}} -> tensor<4x4xi1>
func.func @casts_up_stay_narrow(%ids: tensor<4xi64>) -> (tensor<4x4xf32>, tensor<4x4xi1>) {
  %table = arith.constant dense<0.5> : tensor<16x4xf32>
  %e = transformer.gather %table[%ids] : (tensor<16x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  %c = transformer.cast %e : tensor<4x4xf32> to tensor<4x4xf32>
  %z = arith.constant dense<0.0> : tensor<f32>
  %b = transformer.compare <gt> %c, %z : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
  return %c, %b : tensor<4x4xf32>, tensor<4x4xi1>
}

// -----

// Constants that are no parameter start no narrow flow.
// CHECK-LABEL: func @no_weights
// CHECK-NOT: bf16
func.func @no_weights(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %b = arith.constant dense<1.0> : tensor<4xf32>
  %y = transformer.add %x, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Positions and inverse frequencies stay f32 however many there are: a
// rotary table of 2048 positions in bf16 would be wrong past position 256.
// Only the linear's weight and the gathered table are rounded.
// CHECK-LABEL: func @large_constants_that_are_not_weights
// CHECK: %[[P:.*]] = arith.constant dense<{{.*}}> : tensor<1x1x300xf32>
// CHECK: %[[I:.*]] = arith.constant dense<{{.*}}> : tensor<1x4x1xf32>
// CHECK: transformer.matmul %[[I]], %[[P]] : (tensor<1x4x1xf32>, tensor<1x1x300xf32>) -> tensor<1x4x300xf32>
// CHECK: transformer.gather {{.*}} : (tensor<16x4xbf16>, tensor<300xi64>) -> tensor<300x4xbf16>
// CHECK: transformer.linear {{.*}} : (tensor<300x4xbf16>, tensor<4x4xbf16>) -> tensor<300x4xbf16>
func.func @large_constants_that_are_not_weights(%ids: tensor<300xi64>) -> (tensor<1x4x300xf32>, tensor<300x4xf32>) {
  %pos = arith.constant dense<299.0> : tensor<1x1x300xf32>
  %inv = arith.constant dense<0.5> : tensor<1x4x1xf32>
  %angles = transformer.matmul %inv, %pos : (tensor<1x4x1xf32>, tensor<1x1x300xf32>) -> tensor<1x4x300xf32>
  %table = arith.constant dense<0.25> : tensor<16x4xf32>
  %e = transformer.gather %table[%ids] : (tensor<16x4xf32>, tensor<300xi64>) -> tensor<300x4xf32>
  %w = arith.constant dense<0.125> : tensor<4x4xf32>
  %y = transformer.linear %e, %w layout <nk> : (tensor<300x4xf32>, tensor<4x4xf32>) -> tensor<300x4xf32>
  return %angles, %y : tensor<1x4x300xf32>, tensor<300x4xf32>
}

// -----

// An unfused vision or audio model has no embedding table: its parameters
// are a convolution's weight and bias and the rank-2 right operands of its
// matmuls, where the narrow type starts (the f32 input is rounded once,
// where it meets the conv).
// CHECK-LABEL: func @unfused_conv_and_matmul
// CHECK: %[[X:.*]] = transformer.cast %arg0 : tensor<1x3x8xf32> to tensor<1x3x8xbf16>
// CHECK: %[[C:.*]] = transformer.conv %[[X]], %{{.*}} bias %{{.*}} {{.*}} : (tensor<1x3x8xbf16>, tensor<4x3x3xbf16>, tensor<4xbf16>) -> tensor<1x4x6xbf16>
// CHECK: transformer.matmul %{{.*}}, %{{.*}} : (tensor<1x6x4xbf16>, tensor<4x4xbf16>) -> tensor<1x6x4xbf16>
func.func @unfused_conv_and_matmul(%x: tensor<1x3x8xf32>) -> tensor<1x6x4xf32> {
  %w = arith.constant dense<0.5> : tensor<4x3x3xf32>
  %b = arith.constant dense<0.25> : tensor<4xf32>
  %c = transformer.conv %x, %w bias %b {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x3x8xf32>, tensor<4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6xf32>
  %t = transformer.transpose %c [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %p = arith.constant dense<0.125> : tensor<4x4xf32>
  %y = transformer.matmul %t, %p : (tensor<1x6x4xf32>, tensor<4x4xf32>) -> tensor<1x6x4xf32>
  return %y : tensor<1x6x4xf32>
}
