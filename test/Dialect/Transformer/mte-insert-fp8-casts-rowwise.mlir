// RUN: mte-opt %s -split-input-file -mte-insert-fp8-casts="min-macs=0 recipe=rowwise" | FileCheck %s

// Rowwise scaling: the weight [N = 16, K = 16] quantized at compile time
// with one power-of-two scale per output channel (channel 0's amax 0.5:
// 448 / 0.5 = 896, rounded down to 512, scale_inv 2^-9, codes of 256 =
// 0x78; the others' amax 2: 224 -> 128, 2^-7, codes of 256 again;
// channel 2's -4: 112 -> 64, 2^-6, its 2s coded 128 = 0x70), the
// input with one per row, from block_amax over the whole row (block_size
// = K) and fp8_scale {power_of_two}, on every run. No state.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xbf16>) -> tensor<4x16xbf16>
// CHECK: %[[AMAX:.*]] = transformer.block_amax %[[X]] {block_size = 16 : i64} : tensor<4x16xbf16> -> tensor<4x1xf32>
// CHECK: %[[S:.*]], %[[SI:.*]] = transformer.fp8_scale %[[AMAX]] {fp8_max = 4.480000e+02 : f32, power_of_two} : (tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK: %[[Q:.*]] = transformer.quantize %[[X]], %[[S]] {multiply} : (tensor<4x16xbf16>, tensor<4x1xf32>) -> tensor<4x16xf8E4M3FN>
// CHECK-DAG: %[[WS:.*]] = arith.constant dense<[0.001953125, 7.812500e-03, 1.562500e-02, 7.812500e-03, {{.*}}]> : tensor<16xf32>
// CHECK-DAG: %[[W8:.*]] = arith.constant dense_resource<weight.e4m3> : tensor<16x16xf8E4M3FN>
// CHECK: transformer.linear %[[Q]], %[[W8]] input_scale %[[SI]] weight_scale %[[WS]] layout <nk> : (tensor<4x16xf8E4M3FN>, tensor<16x16xf8E4M3FN>, tensor<4x1xf32>, tensor<16xf32>) -> tensor<4x16xbf16>
// CHECK-NOT: fp8_scale_update
// CHECK: weight.e4m3: "0x010000007878787878787878787878787878787878787878787878787878787878787878707070F870707070707070707070707078
func.func @linear(%x: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
  %w = arith.constant dense<[[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, -4.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]]> : tensor<16x16xbf16>
  %y = transformer.linear %x, %w layout <nk> : (tensor<4x16xbf16>, tensor<16x16xbf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// Leading dimensions keep their place in the input's scales ([2, 3, 1]); a
// [K, N] weight is stored [N, K] with one scale per column of it; a weight
// of zeros has amax 0: scale 1. K = 48 is no multiple of 128: rowwise
// scaling takes any K that is a multiple of 16.
// CHECK-LABEL: func @batched
// CHECK: transformer.block_amax %{{.*}} {block_size = 48 : i64} : tensor<2x3x48xbf16> -> tensor<2x3x1xf32>
// CHECK: %[[WS:.*]] = arith.constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: transformer.linear %{{.*}}, %{{.*}} input_scale %{{.*}} weight_scale %[[WS]] layout <nk> : (tensor<2x3x48xf8E4M3FN>, tensor<32x48xf8E4M3FN>, tensor<2x3x1xf32>, tensor<32xf32>) -> tensor<2x3x32xbf16>
func.func @batched(%x: tensor<2x3x48xbf16>) -> tensor<2x3x32xbf16> {
  %w = arith.constant dense<0.0> : tensor<48x32xbf16>
  %y = transformer.linear %x, %w layout <kn> : (tensor<2x3x48xbf16>, tensor<48x32xbf16>) -> tensor<2x3x32xbf16>
  return %y : tensor<2x3x32xbf16>
}

// -----

// K = 40 is no multiple of 16: the linear stays bf16.
// CHECK-LABEL: func @misaligned
// CHECK-NOT: transformer.block_amax
// CHECK: transformer.linear %{{.*}} {transformer.fp8_skipped = #transformer.fp8_skip<misaligned>}
func.func @misaligned(%x: tensor<4x40xbf16>) -> tensor<4x16xbf16> {
  %w = arith.constant dense<0.5> : tensor<16x40xbf16>
  %y = transformer.linear %x, %w layout <nk> : (tensor<4x40xbf16>, tensor<16x40xbf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}
