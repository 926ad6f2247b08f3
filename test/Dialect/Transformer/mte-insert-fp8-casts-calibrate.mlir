// RUN: mte-opt %s -mte-insert-fp8-casts="min-macs=0 recipe=delayed amax-history=4 calibrate=true" | FileCheck %s
// RUN: not mte-opt %s -mte-insert-fp8-casts="min-macs=0 calibrate=true" 2>&1 | FileCheck %s --check-prefix=CURRENT

// The calibration build: the states, amaxes and update of delayed scaling,
// labelled as the FP8 build labels them, while both linears stay in f32
// (no quantize, no scales on the linears).
// CHECK-LABEL: func @mlp
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x16xf32>
// CHECK-SAME: %[[HIST:[^:]*]]: tensor<4x2xf32> {transformer.state = #transformer.model_state<name = "fp8.amax_history", kind = <fp8_amax_history>, initial = dense<0.000000e+00> : tensor<4x2xf32>, labels = ["fc1.input", "fc2.input"]>}
// CHECK-SAME: %[[SCALE:[^:]*]]: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<1.000000e+00> : tensor<2xf32>, labels = ["fc1.input", "fc2.input"]>}
// CHECK-SAME: -> (tensor<4x16xf32>, tensor<4x2xf32> {transformer.next_state = "fp8.amax_history"}, tensor<2xf32> {transformer.next_state = "fp8.scale"})
// CHECK-NOT: transformer.quantize
// CHECK: %[[A0:.*]] = transformer.amax %[[X]]
// CHECK: %[[H:.*]] = transformer.linear %[[X]], %{{.*}} layout <nk> activation <relu> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
// CHECK: %[[A1:.*]] = transformer.amax %[[H]]
// CHECK: %[[Y:.*]] = transformer.linear %[[H]], %{{.*}} layout <nk> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
// CHECK: %[[R0:.*]] = transformer.reshape %[[A0]]
// CHECK: %[[R1:.*]] = transformer.reshape %[[A1]]
// CHECK: %[[AMAX:.*]] = transformer.concat %[[R0]], %[[R1]]
// CHECK: %[[NH:.*]], %[[NS:.*]] = transformer.fp8_scale_update %[[HIST]], %[[AMAX]], %[[SCALE]] {algorithm = #transformer.amax_algorithm<max>, fp8_max = 4.480000e+02 : f32, margin = 0 : i64}
// CHECK: return %[[Y]], %[[NH]], %[[NS]]

// Calibration records delayed scaling's state; current scaling has none.
// CURRENT: error: calibrate records delayed scaling's amaxes: it needs recipe=delayed
func.func @mlp(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w1 = arith.constant dense<0.5> : tensor<16x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x16xf32>
  %h = transformer.linear %x, %w1 layout <nk> activation <relu> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> loc("fc1")
  %y = transformer.linear %h, %w2 layout <nk> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> loc("fc2")
  return %y : tensor<4x16xf32>
}
