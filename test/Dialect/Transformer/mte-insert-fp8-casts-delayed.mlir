// RUN: mte-opt %s -split-input-file -verify-diagnostics -mte-insert-fp8-casts="min-macs=0 recipe=delayed amax-history=8 margin=1 amax-algorithm=most_recent" | FileCheck %s

// Delayed scaling: the function gains the two FP8 states, labelled with
// the linears' nodes; each input is quantized times scale[t] (the linear
// reading 1 / scale[t]; one fp8_scale op at the top gives both for every
// input, each four times so that it sits 16-byte aligned for cuBLASLt,
// sliced per linear), the scales 1 at first
// as TE's; the amaxes feed only the update, which takes every amax of the
// run and the states' next values go out after the outputs, ahead of the
// index status.
// CHECK-LABEL: func @mlp
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x16xf32>
// CHECK-SAME: %[[HIST:[^:]*]]: tensor<8x2xf32> {transformer.state = #transformer.model_state<name = "fp8.amax_history", kind = <fp8_amax_history>, initial = dense<0.000000e+00> : tensor<8x2xf32>, labels = ["fc1.input", "fc2.input"]>}
// CHECK-SAME: %[[SCALE:[^:]*]]: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<1.000000e+00> : tensor<2xf32>, labels = ["fc1.input", "fc2.input"]>}
// CHECK-SAME: -> (tensor<4x16xf32>, tensor<8x2xf32> {transformer.next_state = "fp8.amax_history"}, tensor<2xf32> {transformer.next_state = "fp8.scale"}, tensor<1x3xi64> {transformer.index_status})
// CHECK: %[[COL:.*]] = transformer.reshape %[[SCALE]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[WIDE:.*]] = transformer.expand %[[COL]] : tensor<2x1xf32> -> tensor<2x4xf32>
// CHECK: %[[ALL:.*]], %[[ALLI:.*]] = transformer.fp8_scale delayed %[[WIDE]] {fp8_max = 4.480000e+02 : f32} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: %[[A0:.*]] = transformer.amax %[[X]]
// CHECK: %[[S0:.*]] = transformer.slice %[[ALL]] {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 1>, strides = array<i64: 1, 1>}
// CHECK: %[[XS0:.*]] = transformer.reshape %[[S0]] : tensor<1x1xf32> -> tensor<f32>
// CHECK: %[[SI0:.*]] = transformer.slice %[[ALLI]] {offsets = array<i64: 0, 0>
// CHECK: %[[XSI0:.*]] = transformer.reshape %[[SI0]] : tensor<1x1xf32> -> tensor<f32>
// CHECK: %[[Q0:.*]] = transformer.quantize %[[X]], %[[XS0]] {multiply}
// CHECK: %[[H:.*]] = transformer.linear %[[Q0]], %{{.*}} input_scale %[[XSI0]]
// CHECK: %[[A1:.*]] = transformer.amax %[[H]]
// CHECK: transformer.slice %[[ALL]] {offsets = array<i64: 1, 0>
// CHECK: %[[Y:.*]] = transformer.linear
// CHECK: %[[R0:.*]] = transformer.reshape %[[A0]] : tensor<f32> -> tensor<1xf32>
// CHECK: %[[R1:.*]] = transformer.reshape %[[A1]] : tensor<f32> -> tensor<1xf32>
// CHECK: %[[AMAX:.*]] = transformer.concat %[[R0]], %[[R1]] {axis = 0 : i64}
// CHECK: %[[NH:.*]], %[[NS:.*]] = transformer.fp8_scale_update %[[HIST]], %[[AMAX]], %[[SCALE]] {algorithm = #transformer.amax_algorithm<most_recent>, fp8_max = 4.480000e+02 : f32, margin = 1 : i64}
// CHECK: return %[[Y]], %[[NH]], %[[NS]], %{{.*}} : tensor<4x16xf32>, tensor<8x2xf32>, tensor<2xf32>, tensor<1x3xi64>
func.func @mlp(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<1x3xi64> {transformer.index_status}) {
  %w1 = arith.constant dense<0.5> : tensor<16x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x16xf32>
  %h = transformer.linear %x, %w1 layout <nk> activation <relu> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> loc("fc1")
  %y = transformer.linear %h, %w2 layout <nk> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> loc("fc2")
  %status = arith.constant dense<0> : tensor<1x3xi64>
  return %y, %status : tensor<4x16xf32>, tensor<1x3xi64>
}

// -----

// Without an FP8 GEMM the function keeps its signature.
// CHECK-LABEL: func @nothing_quantized
// CHECK-SAME: (%{{.*}}: tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @nothing_quantized(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<0.5> : tensor<8x8xf32>
  %y = transformer.linear %x, %w layout <nk> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A private function may have callers, whose calls its new state would
// break.
// expected-error @+1 {{delayed FP8 scaling adds model state to @helper, which must be a public function with a body}}
func.func private @helper(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x16xf32>
  %y = transformer.linear %x, %w layout <nk> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
