// RUN: mte-opt %s -split-input-file -mte-insert-fp8-casts="min-macs=0 recipe=block" | FileCheck %s

// Block scaling: the weight [N = 16, K = 256] quantized at compile time with
// one power-of-two scale per 128 x 128 block ([1, 2] here: 448 / 0.5 = 896,
// rounded down to 512, scale_inv 2^-9; the codes of 0.5 * 512 = 256 are
// 0x78), the input with one per 1 x 128 block of its rows, from
// block_amax and fp8_scale {power_of_two}, on every run. No state.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x256xbf16>) -> tensor<4x16xbf16>
// CHECK: %[[AMAX:.*]] = transformer.block_amax %[[X]] {block_size = 128 : i64} : tensor<4x256xbf16> -> tensor<4x2xf32>
// CHECK: %[[S:.*]], %[[SI:.*]] = transformer.fp8_scale %[[AMAX]] {fp8_max = 4.480000e+02 : f32, power_of_two} : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK: %[[Q:.*]] = transformer.quantize %[[X]], %[[S]] {multiply} : (tensor<4x256xbf16>, tensor<4x2xf32>) -> tensor<4x256xf8E4M3FN>
// CHECK-DAG: %[[WS:.*]] = arith.constant dense<0.001953125> : tensor<1x2xf32>
// CHECK-DAG: %[[W8:.*]] = arith.constant dense_resource<weight.e4m3> : tensor<16x256xf8E4M3FN>
// CHECK: transformer.linear %[[Q]], %[[W8]] input_scale %[[SI]] weight_scale %[[WS]] layout <nk> : (tensor<4x256xf8E4M3FN>, tensor<16x256xf8E4M3FN>, tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x16xbf16>
// CHECK-NOT: fp8_scale_update
// CHECK: weight.e4m3: "0x0100000078787878
func.func @linear(%x: tensor<4x256xbf16>) -> tensor<4x16xbf16> {
  %w = arith.constant dense<0.5> : tensor<16x256xbf16>
  %y = transformer.linear %x, %w layout <nk> : (tensor<4x256xbf16>, tensor<16x256xbf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// Leading dimensions keep their place in the scales; a [K, N] weight is
// stored [N, K]; N = 144 needs two row blocks, the second partial. A
// weight of zeros has amax 0: scale 1.
// CHECK-LABEL: func @batched
// CHECK: transformer.block_amax %{{.*}} {block_size = 128 : i64} : tensor<2x3x128xbf16> -> tensor<2x3x1xf32>
// CHECK: %[[WS:.*]] = arith.constant dense<1.000000e+00> : tensor<2x1xf32>
// CHECK: transformer.linear %{{.*}}, %{{.*}} input_scale %{{.*}} weight_scale %[[WS]] layout <nk> : (tensor<2x3x128xf8E4M3FN>, tensor<144x128xf8E4M3FN>, tensor<2x3x1xf32>, tensor<2x1xf32>) -> tensor<2x3x144xbf16>
func.func @batched(%x: tensor<2x3x128xbf16>) -> tensor<2x3x144xbf16> {
  %w = arith.constant dense<0.0> : tensor<128x144xbf16>
  %y = transformer.linear %x, %w layout <kn> : (tensor<2x3x128xbf16>, tensor<128x144xbf16>) -> tensor<2x3x144xbf16>
  return %y : tensor<2x3x144xbf16>
}

// -----

// K = 64 is a multiple of 16 but not of the block: the linear stays bf16.
// CHECK-LABEL: func @misaligned
// CHECK-NOT: transformer.block_amax
// CHECK: transformer.linear %{{.*}} {transformer.fp8_skipped = #transformer.fp8_skip<misaligned>}
func.func @misaligned(%x: tensor<4x64xbf16>) -> tensor<4x16xbf16> {
  %w = arith.constant dense<0.5> : tensor<16x64xbf16>
  %y = transformer.linear %x, %w layout <nk> : (tensor<4x64xbf16>, tensor<16x64xbf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}
