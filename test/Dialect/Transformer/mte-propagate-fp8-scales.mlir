// RUN: mte-opt %s -split-input-file -mte-propagate-fp8-scales | FileCheck %s

// A linear of two dequantizations reads the fp8 values with their scales;
// the [K, N] constant weight is stored [N, K] (transposed bytes).
// CHECK-LABEL: func @linear_of_dequantized
// CHECK: %[[NK:.*]] = arith.constant dense_resource<fp8_weight_nk> : tensor<32x16xf8E4M3FN>
// CHECK: %[[Q:.*]] = transformer.quantize %arg0, %arg1
// CHECK-NOT: transformer.dequantize
// CHECK: transformer.linear %[[Q]], %[[NK]] bias %arg3 input_scale %arg1 weight_scale %arg2 layout <nk>
// Row n of the [N, K] weight is column n of the [K, N] one (byte n here).
// CHECK: fp8_weight_nk: "0x01000000000000000000000000000000000000000101010101010101010101010101010102020202020202020202020202020202
func.func @linear_of_dequantized(%x: tensor<4x16xf32>, %sx: tensor<f32>, %sw: tensor<f32>, %b: tensor<32xf32>)
    -> tensor<4x32xf32> {
  %w = arith.constant dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"> : tensor<16x32xf8E4M3FN>
  %q = transformer.quantize %x, %sx : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf8E4M3FN>
  %xd = transformer.dequantize %q, %sx : (tensor<4x16xf8E4M3FN>, tensor<f32>) -> tensor<4x16xf32>
  %wd = transformer.dequantize %w, %sw : (tensor<16x32xf8E4M3FN>, tensor<f32>) -> tensor<16x32xf32>
  %y = transformer.linear %xd, %wd bias %b layout <kn> : (tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// Data movement moves before the dequantization, so the GEMM sees it:
// reshape and transpose; a concat of one scale.
// CHECK-LABEL: func @through_data_movement
// CHECK: %[[R:.*]] = transformer.reshape %arg0 : tensor<2x8x16xf8E4M3FN> -> tensor<16x16xf8E4M3FN>
// CHECK: %[[T:.*]] = transformer.transpose %arg2 [1, 0] : tensor<16x32xf8E4M3FN> -> tensor<32x16xf8E4M3FN>
// CHECK: transformer.linear %[[R]], %[[T]] input_scale %arg1 weight_scale %arg3 layout <nk>
// CHECK: %[[C:.*]] = transformer.concat %arg0, %arg0 {axis = 0 : i64} : (tensor<2x8x16xf8E4M3FN>, tensor<2x8x16xf8E4M3FN>) -> tensor<4x8x16xf8E4M3FN>
// CHECK: transformer.dequantize %[[C]], %arg1
func.func @through_data_movement(%q: tensor<2x8x16xf8E4M3FN>, %s: tensor<f32>, %w: tensor<16x32xf8E4M3FN>, %sw: tensor<f32>)
    -> (tensor<16x32xbf16>, tensor<4x8x16xf32>) {
  %d = transformer.dequantize %q, %s : (tensor<2x8x16xf8E4M3FN>, tensor<f32>) -> tensor<2x8x16xf32>
  %r = transformer.reshape %d : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %wd = transformer.dequantize %w, %sw : (tensor<16x32xf8E4M3FN>, tensor<f32>) -> tensor<16x32xf32>
  %wt = transformer.transpose %wd [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
  %y = transformer.linear %r, %wt layout <nk> : (tensor<16x16xf32>, tensor<32x16xf32>) -> tensor<16x32xbf16>
  %c = transformer.concat %d, %d {axis = 0 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
  return %y, %c : tensor<16x32xbf16>, tensor<4x8x16xf32>
}

// -----

// A quantize of a dequantization with the same scale (one value or equal
// constants) is the fp8 value; another scale, or one operand alone
// dequantized, or a concat of two scales, stays.
// CHECK-LABEL: func @requantize
// CHECK: %[[D:.*]] = transformer.dequantize %arg0, %[[S1:.*]] :
// CHECK: %[[Q2:.*]] = transformer.quantize %[[D]], %[[S2:.*]] :
// CHECK: transformer.linear %{{.*}}, %arg2 layout <nk>
// CHECK: transformer.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK: return %arg0, %[[Q2]]
func.func @requantize(%q: tensor<4x16xf8E4M3FN>, %x: tensor<4x16xf32>, %w: tensor<32x16xf32>)
    -> (tensor<4x16xf8E4M3FN>, tensor<4x16xf8E4M3FN>, tensor<4x32xf32>, tensor<8x16xf32>) {
  %s1 = arith.constant dense<0.5> : tensor<f32>
  %s1b = arith.constant dense<0.5> : tensor<f32>
  %s2 = arith.constant dense<0.25> : tensor<f32>
  %d = transformer.dequantize %q, %s1 : (tensor<4x16xf8E4M3FN>, tensor<f32>) -> tensor<4x16xf32>
  %same = transformer.quantize %d, %s1b : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf8E4M3FN>
  %other = transformer.quantize %d, %s2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf8E4M3FN>
  %y = transformer.linear %d, %w layout <nk> : (tensor<4x16xf32>, tensor<32x16xf32>) -> tensor<4x32xf32>
  %d2 = transformer.dequantize %q, %s2 : (tensor<4x16xf8E4M3FN>, tensor<f32>) -> tensor<4x16xf32>
  %c = transformer.concat %d, %d2 {axis = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %same, %other, %y, %c : tensor<4x16xf8E4M3FN>, tensor<4x16xf8E4M3FN>, tensor<4x32xf32>, tensor<8x16xf32>
}
