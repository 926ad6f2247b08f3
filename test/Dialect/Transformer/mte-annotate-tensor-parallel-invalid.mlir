// RUN: mte-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mte-annotate-tensor-parallel{tp-size=3})'

func.func @heads(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x48xf32>
  %wo = arith.constant dense<0.5> : tensor<16x16xf32>
  %qkv = transformer.linear %x, %w layout <kn> : (tensor<1x4x16xf32>, tensor<16x48xf32>) -> tensor<1x4x48xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : tensor<1x4x48xf32> -> tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>
  // expected-error @+1 {{tensor parallelism: 4 attention heads do not divide among --tp=3 ranks}}
  %a = transformer.attention %p#0, %p#1, %p#2 {num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.5 : f32} : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %y = transformer.linear %a, %wo layout <kn> : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

func.func @kv_heads(%x: tensor<1x4x12xf32>) -> tensor<1x4x12xf32> {
  %w = arith.constant dense<0.5> : tensor<12x20xf32>
  %wo = arith.constant dense<0.5> : tensor<12x12xf32>
  %qkv = transformer.linear %x, %w layout <kn> : (tensor<1x4x12xf32>, tensor<12x20xf32>) -> tensor<1x4x20xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 12, 4, 4>} : tensor<1x4x20xf32> -> tensor<1x4x12xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
  // expected-error @+1 {{tensor parallelism: 2 key/value heads neither divide among nor divide --tp=3 ranks}}
  %a = transformer.attention %p#0, %p#1, %p#2 {num_heads = 6 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f32} : (tensor<1x4x12xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x12xf32>
  %y = transformer.linear %a, %wo layout <kn> : (tensor<1x4x12xf32>, tensor<12x12xf32>) -> tensor<1x4x12xf32>
  return %y : tensor<1x4x12xf32>
}

// -----

func.func @mlp_width(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x10xf32>
  %w2 = arith.constant dense<0.5> : tensor<10x8xf32>
  // expected-error @+1 {{tensor parallelism: an output of 10 columns does not divide among --tp=3 ranks}}
  %h = transformer.linear %x, %w1 layout <kn> activation <gelu> : (tensor<1x4x8xf32>, tensor<8x10xf32>) -> tensor<1x4x10xf32>
  %y = transformer.linear %h, %w2 layout <kn> : (tensor<1x4x10xf32>, tensor<10x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// A linear whose output is also read elsewhere is no block: the model runs
// replicated, and the pass says so.
// expected-warning @+1 {{--tp=3: no block to split}}
func.func @escaping(%x: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x6xf32>) {
  %w1 = arith.constant dense<0.5> : tensor<8x6xf32>
  %w2 = arith.constant dense<0.5> : tensor<6x8xf32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<1x4x8xf32>, tensor<8x6xf32>) -> tensor<1x4x6xf32>
  %g = transformer.gelu %h : tensor<1x4x6xf32>
  %y = transformer.linear %g, %w2 layout <kn> : (tensor<1x4x6xf32>, tensor<6x8xf32>) -> tensor<1x4x8xf32>
  return %y, %h : tensor<1x4x8xf32>, tensor<1x4x6xf32>
}

// -----

// An MLP whose hidden values pass through a [..., 2, 12] view: 2 does not
// divide among 3 ranks although 24 does.
func.func @view_heads(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x24xf32>
  %w2 = arith.constant dense<0.5> : tensor<24x8xf32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<1x4x8xf32>, tensor<8x24xf32>) -> tensor<1x4x24xf32>
  // expected-error @+1 {{tensor parallelism: a dimension of 2 (heads) does not divide among --tp=3 ranks}}
  %v = transformer.reshape %h : tensor<1x4x24xf32> -> tensor<1x4x2x12xf32>
  %g = transformer.gelu %v : tensor<1x4x2x12xf32>
  %b = transformer.reshape %g : tensor<1x4x2x12xf32> -> tensor<1x4x24xf32>
  %y = transformer.linear %b, %w2 layout <kn> : (tensor<1x4x24xf32>, tensor<24x8xf32>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}
