// RUN: mte-opt %s --mte-host-pipeline | FileCheck %s

// The backend pipelines run on a module with FP8 delayed-scaling state as
// mte-compile's driver does: the state attributes stay valid on the
// bufferized function and on the llvm.func it becomes.
// CHECK: llvm.func @forward
// CHECK-SAME: transformer.state = #transformer.model_state<name = "fp8.amax_history"
// CHECK-SAME: transformer.state = #transformer.model_state<name = "fp8.scale"
func.func @forward(
    %x: tensor<4x8xf32> {transformer.name = "x"},
    %y: tensor<4x8xf32> {transformer.name = "y"},
    %history: tensor<3x2xf32> {transformer.state = #transformer.model_state<name = "fp8.amax_history", kind = <fp8_amax_history>, initial = dense<0.0> : tensor<3x2xf32>, labels = ["x", "y"]>},
    %scale: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<1.0> : tensor<2xf32>, labels = ["x", "y"]>})
    -> (tensor<4x8xf32> {transformer.name = "z"},
        tensor<3x2xf32> {transformer.next_state = "fp8.amax_history"},
        tensor<2xf32> {transformer.next_state = "fp8.scale"}) {
  %sum = transformer.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ax = transformer.amax %x : tensor<4x8xf32> -> tensor<f32>
  %ay = transformer.amax %y : tensor<4x8xf32> -> tensor<f32>
  %rx = transformer.reshape %ax : tensor<f32> -> tensor<1xf32>
  %ry = transformer.reshape %ay : tensor<f32> -> tensor<1xf32>
  %amaxes = transformer.concat %rx, %ry {axis = 0 : i64} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
  %next_history, %next_scale = transformer.fp8_scale_update %history, %amaxes, %scale {algorithm = #transformer.amax_algorithm<max>, fp8_max = 4.480000e+02 : f32, margin = 0 : i64} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>)
  return %sum, %next_history, %next_scale : tensor<4x8xf32>, tensor<3x2xf32>, tensor<2xf32>
}
