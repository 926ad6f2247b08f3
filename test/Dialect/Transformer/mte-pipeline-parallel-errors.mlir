// RUN: mte-opt %s -split-input-file -mte-pipeline-parallel="pp-size=2 micro-batches=2" -verify-diagnostics

func.func @update_of_values(%x: tensor<2x4xf32>, %h: tensor<4x1xf32>, %s: tensor<1xf32>)
    -> (tensor<2x4xf32>, tensor<4x1xf32>, tensor<1xf32>) {
  %y = transformer.sigmoid %x : tensor<2x4xf32>
  %a = transformer.amax %y : tensor<2x4xf32> -> tensor<f32>
  %v = transformer.reshape %a : tensor<f32> -> tensor<1xf32>
  %z = transformer.exp %y : tensor<2x4xf32>
  // expected-error @below {{pipeline stages and micro-batches: the update does not read the model's state}}
  %nh, %ns = transformer.fp8_scale_update %h, %v, %s {algorithm = #transformer.amax_algorithm<max>, fp8_max = 448.0 : f32, margin = 0 : i64} : (tensor<4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x1xf32>, tensor<1xf32>)
  return %z, %nh, %ns : tensor<2x4xf32>, tensor<4x1xf32>, tensor<1xf32>
}

// -----

func.func @update_read(%x: tensor<2x4xf32>,
    %h: tensor<4x1xf32> {transformer.state = #transformer.model_state<name = "fp8.amax_history", kind = <fp8_amax_history>, initial = dense<0.0> : tensor<4x1xf32>, labels = ["a.input"]>},
    %s: tensor<1xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<1.0> : tensor<1xf32>, labels = ["a.input"]>})
    -> (tensor<2x4xf32>, tensor<4x1xf32>, tensor<1xf32>) {
  %y = transformer.sigmoid %x : tensor<2x4xf32>
  %a = transformer.amax %y : tensor<2x4xf32> -> tensor<f32>
  %v = transformer.reshape %a : tensor<f32> -> tensor<1xf32>
  // expected-error @below {{pipeline stages and micro-batches: the update's results must only be returned}}
  %nh, %ns = transformer.fp8_scale_update %h, %v, %s {algorithm = #transformer.amax_algorithm<max>, fp8_max = 448.0 : f32, margin = 0 : i64} : (tensor<4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x1xf32>, tensor<1xf32>)
  %z = transformer.mul %y, %ns : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xf32>
  return %z, %nh, %ns : tensor<2x4xf32>, tensor<4x1xf32>, tensor<1xf32>
}

// -----

// expected-error @below {{micro-batches split the graph inputs along their first dimension (the batch); argument 1 has type 'tensor<f32>'}}
func.func @scalar_input(%x: tensor<2x4xf32>, %t: tensor<f32>) -> tensor<2x4xf32> {
  %y = transformer.mul %x, %t : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %z = transformer.exp %y : tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}

// -----

// expected-error @below {{--pp=2: the model has 1 ops to run, fewer than the stages}}
func.func @one_op(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = transformer.exp %x : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
