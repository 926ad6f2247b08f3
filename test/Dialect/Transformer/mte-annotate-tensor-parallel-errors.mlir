// The pass's errors that need other ranks or inputs than
// mte-annotate-tensor-parallel-invalid.mlir.
// RUN: mte-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mte-annotate-tensor-parallel{tp-size=2})'
// RUN: not mte-opt %s --split-input-file --pass-pipeline='builtin.module(mte-annotate-tensor-parallel{tp-size=0})' 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: tp-size must be at least 1, not 0

// One key/value head for two ranks, read through views: the heads cannot be
// replicated in the weights.
func.func @kv_through_views(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x24xf32>
  %wo = arith.constant dense<0.5> : tensor<16x16xf32>
  %qkv = transformer.linear %x, %w layout <kn> : (tensor<1x4x16xf32>, tensor<16x24xf32>) -> tensor<1x4x24xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 4, 4>} : tensor<1x4x24xf32> -> tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
  %k4 = transformer.reshape %p#1 : tensor<1x4x4xf32> -> tensor<1x4x1x4xf32>
  %k = transformer.reshape %k4 : tensor<1x4x1x4xf32> -> tensor<1x4x4xf32>
  // expected-error @+1 {{tensor parallelism: cannot replicate key/value heads that do not come from a linear through packed rotary embeddings}}
  %a = transformer.attention %p#0, %k, %p#2 {num_heads = 4 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f32} : (tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x16xf32>
  %y = transformer.linear %a, %wo layout <kn> : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// expected-error @+1 {{the module already has a symbol 'tp'}}
module {
  func.func private @tp()
}
