// RUN: mte-opt %s -split-input-file -mte-data-parallel=dp-size=2 -verify-diagnostics

// expected-error @below {{data parallelism splits the graph inputs along their first dimension (the batch); argument 0 has type 'tensor<f32>'}}
func.func @scalar_input(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

// expected-error @below {{data parallelism gathers the outputs along their first dimension (the batch); result 1 has type 'tensor<f32>'}}
func.func @scalar_output(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<f32>) {
  %a = transformer.amax %x : tensor<2x4xf32> -> tensor<f32>
  return %x, %a : tensor<2x4xf32>, tensor<f32>
}

// -----

shard.grid @tp(shape = 2)
func.func @linear_index(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{reads a linear index of the grid that takes another axis}}
  %i = shard.process_linear_index on @tp : index
  return %x : tensor<2x4xf32>
}

// -----

shard.grid @tp(shape = 2)
// expected-error @below {{is a second device grid; a parallel model runs on one}}
shard.grid @other(shape = 2)
func.func @two_grids(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}

// -----

shard.grid @tp(shape = 2)
func.func @unpartitioned(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{is not partitioned yet: the grid takes another axis after shard-partition}}
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  return %x : tensor<2x4xf32>
}
