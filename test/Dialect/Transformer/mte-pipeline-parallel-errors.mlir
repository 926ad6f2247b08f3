// RUN: mte-opt %s -split-input-file -mte-pipeline-parallel="pp-size=2 micro-batches=2" -verify-diagnostics

// expected-error @below {{pipeline stages and micro-batches do not run a model with state (FP8 delayed scaling) yet: each micro-batch would update it}}
func.func @state(%x: tensor<2x4xf32>, %s: tensor<1xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<0.000000e+00> : tensor<1xf32>, labels = ["a.input"]>})
    -> (tensor<2x4xf32>, tensor<1xf32> {transformer.next_state = "fp8.scale"}) {
  %y = transformer.sigmoid %x : tensor<2x4xf32>
  %z = transformer.exp %y : tensor<2x4xf32>
  return %z, %s : tensor<2x4xf32>, tensor<1xf32>
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
