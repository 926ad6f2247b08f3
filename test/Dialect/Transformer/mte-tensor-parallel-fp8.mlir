// RUN: mte-opt %s --pass-pipeline='builtin.module(mte-tensor-parallel{tp-size=2})' | FileCheck %s
// RUN: mte-opt %s --pass-pipeline='builtin.module(mte-tensor-parallel{tp-size=2 sequence-parallel=true})' | FileCheck %s --check-prefix=SP

// An FP8 MLP as mte-insert-fp8-casts leaves it (current scaling): FC1 and
// FC2 quantise their inputs with scales from this run's amax. FC1's input
// is whole on every rank, so its amax is too; FC2's input (GELU's output)
// is split along the hidden dimension, so its amax is each rank's part's,
// MAX-all-reduced: every rank quantises with the whole tensor's scale. The
// row-parallel FC2 scales its partial product before the sum (the scales
// are the same on every rank), then adds the bias.

// CHECK-LABEL: func.func @fp8_mlp
// CHECK: %[[A1:.*]] = transformer.amax %[[X:.*]] : tensor<2x8x16xbf16> -> tensor<f32>
// CHECK-NOT: shard.all_reduce %[[A1]]
// CHECK: %[[Q1:.*]] = transformer.quantize %[[X]], %[[S1:[^ ]*]]
// CHECK: %[[W1:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<32x16xf8E4M3FN> -> tensor<16x16xf8E4M3FN>
// CHECK: %[[H:.*]] = transformer.linear %[[Q1]], %[[W1]] bias %{{.*}} input_scale %[[S1]] weight_scale %{{.*}} layout <nk> activation <gelu_tanh> : (tensor<2x8x16xf8E4M3FN>, tensor<16x16xf8E4M3FN>, tensor<16xbf16>, tensor<f32>, tensor<f32>) -> tensor<2x8x16xbf16>
// CHECK: %[[A2:.*]] = transformer.amax %[[H]] : tensor<2x8x16xbf16> -> tensor<f32>
// CHECK: %[[M2:.*]] = shard.all_reduce %[[A2]] on @tp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
// CHECK: transformer.div %[[M2]]
// CHECK: %[[Q2:.*]] = transformer.quantize %[[H]], %[[S2:[^ ]*]] : (tensor<2x8x16xbf16>, tensor<f32>) -> tensor<2x8x16xf8E4M3FN>
// CHECK: %[[W2:.*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<16x32xf8E4M3FN> -> tensor<16x16xf8E4M3FN>
// CHECK: %[[P:.*]] = transformer.linear %[[Q2]], %[[W2]] input_scale %[[S2]] weight_scale %{{.*}} layout <nk> : (tensor<2x8x16xf8E4M3FN>, tensor<16x16xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2x8x16xbf16>
// CHECK: %[[SUM:.*]] = shard.all_reduce %[[P]] on @tp grid_axes = [0] : tensor<2x8x16xbf16> -> tensor<2x8x16xbf16>
// CHECK: transformer.add %[[SUM]]

// Under sequence parallelism FC2's sum is reduce-scattered over the tokens;
// the amax of the tokens' next use reads each rank's tokens and is
// MAX-reduced too, and the FP8 values, not the bf16 ones, are gathered.
// SP-LABEL: func.func @fp8_mlp
// SP: shard.reduce_scatter
// SP: %[[A3:.*]] = transformer.amax %{{.*}} : tensor<2x4x16xbf16> -> tensor<f32>
// SP: shard.all_reduce %[[A3]] on @tp grid_axes = [0] reduction = max
// SP: %[[Q3:.*]] = transformer.quantize %{{.*}} : (tensor<2x4x16xbf16>, tensor<f32>) -> tensor<2x4x16xf8E4M3FN>
// SP: shard.all_gather %[[Q3]] on @tp grid_axes = [0] gather_axis = 1 : tensor<2x4x16xf8E4M3FN> -> tensor<2x8x16xf8E4M3FN>

func.func @fp8_mlp(%x: tensor<2x8x16xbf16>) -> tensor<2x8x16xbf16> {
  %w1 = arith.constant dense<1.0> : tensor<32x16xf8E4M3FN>
  %b1 = arith.constant dense<0.5> : tensor<32xbf16>
  %w2 = arith.constant dense<2.0> : tensor<16x32xf8E4M3FN>
  %b2 = arith.constant dense<0.25> : tensor<16xbf16>
  %w3 = arith.constant dense<2.0> : tensor<16x32xbf16>
  %ws1 = arith.constant dense<0.01> : tensor<f32>
  %ws2 = arith.constant dense<0.02> : tensor<f32>
  %fp8max = arith.constant dense<448.0> : tensor<f32>
  %a1 = transformer.amax %x : tensor<2x8x16xbf16> -> tensor<f32>
  %s1 = transformer.div %a1, %fp8max : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %q1 = transformer.quantize %x, %s1 : (tensor<2x8x16xbf16>, tensor<f32>) -> tensor<2x8x16xf8E4M3FN>
  %h = transformer.linear %q1, %w1 bias %b1 input_scale %s1 weight_scale %ws1 layout <nk> activation <gelu_tanh> : (tensor<2x8x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>, tensor<32xbf16>, tensor<f32>, tensor<f32>) -> tensor<2x8x32xbf16>
  %a2 = transformer.amax %h : tensor<2x8x32xbf16> -> tensor<f32>
  %s2 = transformer.div %a2, %fp8max : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %q2 = transformer.quantize %h, %s2 : (tensor<2x8x32xbf16>, tensor<f32>) -> tensor<2x8x32xf8E4M3FN>
  %y = transformer.linear %q2, %w2 bias %b2 residual %x input_scale %s2 weight_scale %ws2 layout <nk> : (tensor<2x8x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16xbf16>, tensor<2x8x16xbf16>, tensor<f32>, tensor<f32>) -> tensor<2x8x16xbf16>
  %a3 = transformer.amax %y : tensor<2x8x16xbf16> -> tensor<f32>
  %s3 = transformer.div %a3, %fp8max : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %q3 = transformer.quantize %y, %s3 : (tensor<2x8x16xbf16>, tensor<f32>) -> tensor<2x8x16xf8E4M3FN>
  %z = transformer.linear %q3, %w1 input_scale %s3 weight_scale %ws1 layout <nk> : (tensor<2x8x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2x8x32xbf16>
  %o = transformer.linear %z, %w3 layout <nk> : (tensor<2x8x32xbf16>, tensor<16x32xbf16>) -> tensor<2x8x16xbf16>
  return %o : tensor<2x8x16xbf16>
}
