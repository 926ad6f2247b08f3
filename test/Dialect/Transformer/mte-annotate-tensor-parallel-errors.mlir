// The pass's errors that need other ranks or inputs than
// mte-annotate-tensor-parallel-invalid.mlir.
// RUN: mte-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mte-annotate-tensor-parallel{tp-size=2})'
// RUN: not mte-opt %s --split-input-file --pass-pipeline='builtin.module(mte-annotate-tensor-parallel{tp-size=0})' 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: tp-size must be at least 1, not 0

// One key/value head for two ranks, read through a [B, S, 1, D] view: the
// view splits D, which cannot grow into the replicated heads.
func.func @kv_through_views(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x24xf32>
  %wo = arith.constant dense<0.5> : tensor<16x16xf32>
  %qkv = transformer.linear %x, %w layout <kn> : (tensor<1x4x16xf32>, tensor<16x24xf32>) -> tensor<1x4x24xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 4, 4>} : tensor<1x4x24xf32> -> tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
  // expected-error @+1 {{tensor parallelism: cannot replicate the 1 key/value heads of 'tensor<1x4x1x4xf32>' (split along dimension 3)}}
  %k4 = transformer.reshape %p#1 : tensor<1x4x4xf32> -> tensor<1x4x1x4xf32>
  %k = transformer.reshape %k4 : tensor<1x4x1x4xf32> -> tensor<1x4x4xf32>
  %a = transformer.attention %p#0, %k, %p#2 {num_heads = 4 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f32} : (tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x16xf32>
  %y = transformer.linear %a, %wo layout <kn> : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// A key computed from the projection by arithmetic: its heads are not
// replicated through it.
func.func @kv_through_arithmetic(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x24xf32>
  %wo = arith.constant dense<0.5> : tensor<16x16xf32>
  %qkv = transformer.linear %x, %w layout <kn> : (tensor<1x4x16xf32>, tensor<16x24xf32>) -> tensor<1x4x24xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 4, 4>} : tensor<1x4x24xf32> -> tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
  // expected-error @+1 {{tensor parallelism: cannot replicate key/value heads computed by this op}}
  %k = transformer.mul %p#1, %p#1 : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %a = transformer.attention %p#0, %k, %p#2 {num_heads = 4 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f32} : (tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x16xf32>
  %y = transformer.linear %a, %wo layout <kn> : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// Keys joined from two parts of the projection along the tokens.
func.func @kv_from_two_parts(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x24xf32>
  %wo = arith.constant dense<0.5> : tensor<16x16xf32>
  %qkv = transformer.linear %x, %w layout <kn> : (tensor<1x4x16xf32>, tensor<16x24xf32>) -> tensor<1x4x24xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 4, 4>} : tensor<1x4x24xf32> -> tensor<1x4x16xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
  %k = transformer.concat %p#1, %p#2 {axis = 1 : i64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x8x4xf32>
  // expected-error @+1 {{tensor parallelism: cannot replicate key/value heads joined from two projected parts}}
  %a = transformer.attention %p#0, %k, %k {num_heads = 4 : i64, num_kv_heads = 1 : i64, scale = 0.5 : f32} : (tensor<1x4x16xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x4x16xf32>
  %y = transformer.linear %a, %wo layout <kn> : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// expected-error @+1 {{the module already has a symbol 'tp'}}
module {
  func.func private @tp()
}
