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

// Rowwise scaling (mte-insert-fp8-casts recipe=rowwise): one power-of-two
// scale per input row and per weight channel. FC1 (column parallel, its
// gate and up halves fused) reads its input's row scales whole and its
// channel scales split and regrouped with its weight's columns by rank.
// FC2's input rows are split along their length: each rank takes the
// maxima of its part of every row (block_size 32 / 2) and MAX-all-reduces
// them, so that every rank quantises each row with the whole row's scale;
// the row-parallel FC2 scales its partial product by the rows' and the
// channels' scales (whole on every rank) before the sum.

// CHECK-LABEL: func.func @rowwise_mlp
// CHECK: %[[A1:.*]] = transformer.block_amax %[[X:.*]] {block_size = 16 : i64} : tensor<2x8x16xbf16> -> tensor<2x8x1xf32>
// CHECK-NOT: shard.all_reduce %[[A1]]
// CHECK: %[[S1:.*]], %[[SI1:.*]] = transformer.fp8_scale %[[A1]]
// CHECK: %[[Q1:.*]] = transformer.quantize %[[X]], %[[S1]] {multiply}
// CHECK-DAG: %[[WS1:.*]] = shard.all_slice %{{.*}} on @tp grid_axes = [0] slice_axis = 0 : tensor<64xf32> -> tensor<32xf32>
// CHECK-DAG: %[[W1:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<64x16xf8E4M3FN> -> tensor<32x16xf8E4M3FN>
// CHECK: transformer.linear %[[Q1]], %[[W1]] input_scale %[[SI1]] weight_scale %[[WS1]] layout <nk> : (tensor<2x8x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>, tensor<2x8x1xf32>, tensor<32xf32>) -> tensor<2x8x32xbf16>
// CHECK: %[[H:.*]] = transformer.mul %{{.*}}, %{{.*}} : (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>) -> tensor<2x8x16xbf16>
// CHECK: %[[A2:.*]] = transformer.block_amax %[[H]] {block_size = 16 : i64} : tensor<2x8x16xbf16> -> tensor<2x8x1xf32>
// CHECK: %[[M2:.*]] = shard.all_reduce %[[A2]] on @tp grid_axes = [0] reduction = max : tensor<2x8x1xf32> -> tensor<2x8x1xf32>
// CHECK: %[[S2:.*]], %[[SI2:.*]] = transformer.fp8_scale %[[M2]]
// CHECK: %[[Q2:.*]] = transformer.quantize %[[H]], %[[S2]] {multiply} : (tensor<2x8x16xbf16>, tensor<2x8x1xf32>) -> tensor<2x8x16xf8E4M3FN>
// CHECK: %[[W2:.*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<16x32xf8E4M3FN> -> tensor<16x16xf8E4M3FN>
// CHECK: %[[P:.*]] = transformer.linear %[[Q2]], %[[W2]] input_scale %[[SI2]] weight_scale %{{.*}} layout <nk> : (tensor<2x8x16xf8E4M3FN>, tensor<16x16xf8E4M3FN>, tensor<2x8x1xf32>, tensor<16xf32>) -> tensor<2x8x16xbf16>
// CHECK: %[[SUM:.*]] = shard.all_reduce %[[P]] on @tp grid_axes = [0] : tensor<2x8x16xbf16> -> tensor<2x8x16xbf16>
// CHECK: transformer.add %[[SUM]]

// Under sequence parallelism the rows FC2's sum is reduce-scattered into
// are each a rank's: the next linear's row maxima, scales and quantisation
// run on the rank's tokens, and the FP8 values and their rows' scale_inv,
// not the bf16 values, are all-gathered for the column-parallel GEMM.
// SP-LABEL: func.func @rowwise_mlp
// SP: %[[RS:.*]] = shard.reduce_scatter
// SP: %[[H:.*]] = transformer.add %{{.*}}, %{{.*}} : (tensor<2x4x16xbf16>, tensor<2x4x16xbf16>) -> tensor<2x4x16xbf16>
// SP: %[[A:.*]] = transformer.block_amax %[[H]] {block_size = 16 : i64} : tensor<2x4x16xbf16> -> tensor<2x4x1xf32>
// SP: %[[S:.*]], %[[SI:.*]] = transformer.fp8_scale %[[A]] {{.*}} : (tensor<2x4x1xf32>) -> (tensor<2x4x1xf32>, tensor<2x4x1xf32>)
// SP: %[[SIALL:.*]] = shard.all_gather %[[SI]] on @tp grid_axes = [0] gather_axis = 1 : tensor<2x4x1xf32> -> tensor<2x8x1xf32>
// SP: %[[Q:.*]] = transformer.quantize %[[H]], %[[S]] {multiply} : (tensor<2x4x16xbf16>, tensor<2x4x1xf32>) -> tensor<2x4x16xf8E4M3FN>
// SP: %[[QALL:.*]] = shard.all_gather %[[Q]] on @tp grid_axes = [0] gather_axis = 1 : tensor<2x4x16xf8E4M3FN> -> tensor<2x8x16xf8E4M3FN>
// SP: transformer.linear %[[QALL]], %{{.*}} input_scale %[[SIALL]] weight_scale %{{.*}} : (tensor<2x8x16xf8E4M3FN>, tensor<16x16xf8E4M3FN>, tensor<2x8x1xf32>, tensor<16xf32>) -> tensor<2x8x16xbf16>

func.func @rowwise_mlp(%x: tensor<2x8x16xbf16>) -> tensor<2x8x16xbf16> {
  %w1 = arith.constant dense<1.0> : tensor<64x16xf8E4M3FN>
  %w2 = arith.constant dense<2.0> : tensor<16x32xf8E4M3FN>
  %b2 = arith.constant dense<0.25> : tensor<16xbf16>
  %ws1 = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0]> : tensor<64xf32>
  %ws2 = arith.constant dense<0.5> : tensor<16xf32>
  %w3 = arith.constant dense<1.0> : tensor<32x16xf8E4M3FN>
  %ws3 = arith.constant dense<0.25> : tensor<32xf32>
  %w4 = arith.constant dense<2.0> : tensor<16x32xbf16>
  %a1 = transformer.block_amax %x {block_size = 16 : i64} : tensor<2x8x16xbf16> -> tensor<2x8x1xf32>
  %s1, %si1 = transformer.fp8_scale %a1 {fp8_max = 4.480000e+02 : f32, power_of_two} : (tensor<2x8x1xf32>) -> (tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  %q1 = transformer.quantize %x, %s1 {multiply} : (tensor<2x8x16xbf16>, tensor<2x8x1xf32>) -> tensor<2x8x16xf8E4M3FN>
  %gu = transformer.linear %q1, %w1 input_scale %si1 weight_scale %ws1 layout <nk> : (tensor<2x8x16xf8E4M3FN>, tensor<64x16xf8E4M3FN>, tensor<2x8x1xf32>, tensor<64xf32>) -> tensor<2x8x64xbf16>
  %p:2 = transformer.split %gu {axis = 2 : i64, sizes = array<i64: 32, 32>} : tensor<2x8x64xbf16> -> tensor<2x8x32xbf16>, tensor<2x8x32xbf16>
  %h = transformer.mul %p#0, %p#1 : (tensor<2x8x32xbf16>, tensor<2x8x32xbf16>) -> tensor<2x8x32xbf16>
  %a2 = transformer.block_amax %h {block_size = 32 : i64} : tensor<2x8x32xbf16> -> tensor<2x8x1xf32>
  %s2, %si2 = transformer.fp8_scale %a2 {fp8_max = 4.480000e+02 : f32, power_of_two} : (tensor<2x8x1xf32>) -> (tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  %q2 = transformer.quantize %h, %s2 {multiply} : (tensor<2x8x32xbf16>, tensor<2x8x1xf32>) -> tensor<2x8x32xf8E4M3FN>
  %y = transformer.linear %q2, %w2 bias %b2 residual %x input_scale %si2 weight_scale %ws2 layout <nk> : (tensor<2x8x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x1xf32>, tensor<16xf32>) -> tensor<2x8x16xbf16>
  %a3 = transformer.block_amax %y {block_size = 16 : i64} : tensor<2x8x16xbf16> -> tensor<2x8x1xf32>
  %s3, %si3 = transformer.fp8_scale %a3 {fp8_max = 4.480000e+02 : f32, power_of_two} : (tensor<2x8x1xf32>) -> (tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  %q3 = transformer.quantize %y, %s3 {multiply} : (tensor<2x8x16xbf16>, tensor<2x8x1xf32>) -> tensor<2x8x16xf8E4M3FN>
  %z = transformer.linear %q3, %w3 input_scale %si3 weight_scale %ws3 layout <nk> : (tensor<2x8x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>, tensor<2x8x1xf32>, tensor<32xf32>) -> tensor<2x8x32xbf16>
  %o = transformer.linear %z, %w4 layout <nk> : (tensor<2x8x32xbf16>, tensor<16x32xbf16>) -> tensor<2x8x16xbf16>
  return %o : tensor<2x8x16xbf16>
}
