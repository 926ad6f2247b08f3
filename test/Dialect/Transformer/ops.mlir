// RUN: mte-opt %s | mte-opt | FileCheck %s
// RUN: mte-opt %s --mlir-print-op-generic | mte-opt | FileCheck %s

// CHECK-LABEL: func @elementwise_binary
func.func @elementwise_binary(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>,
                              %i: tensor<4xi64>, %c: tensor<2x3x4xi1>)
    -> (tensor<2x3x4xf32>, tensor<4xi64>, tensor<2x3x4xi1>) {
  // CHECK: transformer.add %{{.*}}, %{{.*}} : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = transformer.add %a, %b : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK: transformer.sub
  %1 = transformer.sub %0, %a : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: transformer.mul
  %2 = transformer.mul %1, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK: transformer.div
  %3 = transformer.div %2, %a : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: transformer.pow
  %4 = transformer.pow %3, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK: transformer.min
  %5 = transformer.min %4, %a : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: transformer.max
  %6 = transformer.max %5, %a : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: transformer.div %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %7 = transformer.div %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  // CHECK: transformer.compare <ge> %{{.*}} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xi1>
  %8 = transformer.compare <ge> %6, %a : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xi1>
  // CHECK: transformer.and
  %9 = transformer.and %8, %c : (tensor<2x3x4xi1>, tensor<2x3x4xi1>) -> tensor<2x3x4xi1>
  // CHECK: transformer.or
  %10 = transformer.or %9, %c : (tensor<2x3x4xi1>, tensor<2x3x4xi1>) -> tensor<2x3x4xi1>
  // CHECK: transformer.where %{{.*}} : (tensor<2x3x4xi1>, tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %11 = transformer.where %10, %6, %b : (tensor<2x3x4xi1>, tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %11, %7, %10 : tensor<2x3x4xf32>, tensor<4xi64>, tensor<2x3x4xi1>
}

// CHECK-LABEL: func @elementwise_unary
func.func @elementwise_unary(%x: tensor<8x16xf32>, %i: tensor<8xi64>,
                             %m: tensor<8xi1>)
    -> (tensor<8x16xf32>, tensor<8xi64>, tensor<8xi1>, tensor<8x16xi1>) {
  // CHECK: transformer.sqrt %{{.*}} : tensor<8x16xf32>
  %0 = transformer.sqrt %x : tensor<8x16xf32>
  // CHECK: transformer.rsqrt
  %1 = transformer.rsqrt %0 : tensor<8x16xf32>
  // CHECK: transformer.reciprocal
  %2 = transformer.reciprocal %1 : tensor<8x16xf32>
  // CHECK: transformer.exp
  %3 = transformer.exp %2 : tensor<8x16xf32>
  // CHECK: transformer.log
  %4 = transformer.log %3 : tensor<8x16xf32>
  // CHECK: transformer.erf
  %5 = transformer.erf %4 : tensor<8x16xf32>
  // CHECK: transformer.tanh
  %6 = transformer.tanh %5 : tensor<8x16xf32>
  // CHECK: transformer.sigmoid
  %7 = transformer.sigmoid %6 : tensor<8x16xf32>
  // CHECK: transformer.sin
  %8 = transformer.sin %7 : tensor<8x16xf32>
  // CHECK: transformer.cos
  %9 = transformer.cos %8 : tensor<8x16xf32>
  // CHECK: transformer.floor
  %10 = transformer.floor %9 : tensor<8x16xf32>
  // CHECK: transformer.neg
  %11 = transformer.neg %10 : tensor<8x16xf32>
  // CHECK: transformer.abs
  %12 = transformer.abs %11 : tensor<8x16xf32>
  // CHECK: transformer.sign
  %s = transformer.sign %12 : tensor<8x16xf32>
  // CHECK: transformer.mod %{{.*}}, %{{.*}} {fmod} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = transformer.mod %s, %12 {fmod} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: transformer.cumsum %{{.*}} {axis = 1 : i64, exclusive} : tensor<8x16xf32>
  %c = transformer.cumsum %r {axis = 1 : i64, exclusive} : tensor<8x16xf32>
  // CHECK: transformer.relu
  %13 = transformer.relu %c : tensor<8x16xf32>
  // CHECK: transformer.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<8x16xf32>
  %14 = transformer.clip %13 {min = 0.0 : f64, max = 6.0 : f64} : tensor<8x16xf32>
  // CHECK: transformer.neg %{{.*}} : tensor<8xi64>
  %15 = transformer.neg %i : tensor<8xi64>
  // CHECK: transformer.not
  %16 = transformer.not %m : tensor<8xi1>
  // CHECK: transformer.is_nan %{{.*}} : tensor<8x16xf32> -> tensor<8x16xi1>
  %17 = transformer.is_nan %14 : tensor<8x16xf32> -> tensor<8x16xi1>
  return %14, %15, %16, %17 : tensor<8x16xf32>, tensor<8xi64>, tensor<8xi1>, tensor<8x16xi1>
}

// CHECK-LABEL: func @casts
func.func @casts(%x: tensor<4x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>, tensor<4x8xi64>) {
  // CHECK: transformer.cast %{{.*}} : tensor<4x8xf32> to tensor<4x8xbf16>
  %0 = transformer.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  // CHECK: transformer.cast %{{.*}} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  %1 = transformer.cast %x : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  // CHECK: transformer.cast %{{.*}} : tensor<4x8xf32> to tensor<4x8xi64>
  %2 = transformer.cast %x : tensor<4x8xf32> to tensor<4x8xi64>
  return %0, %1, %2 : tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>, tensor<4x8xi64>
}

// CHECK-LABEL: func @contractions
func.func @contractions(%a: tensor<2x1x8x16xf32>, %b: tensor<3x16x4xf32>,
                        %v: tensor<16xf32>, %m: tensor<16x4xf32>)
    -> (tensor<2x3x8x4xf32>, tensor<4xf32>, tensor<2x1x8xf32>, tensor<2x1x1x1xf32>, tensor<2x1x8x16xf32>) {
  // CHECK: transformer.matmul %{{.*}} : (tensor<2x1x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x3x8x4xf32>
  %0 = transformer.matmul %a, %b : (tensor<2x1x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x3x8x4xf32>
  // CHECK: transformer.matmul %{{.*}} : (tensor<16xf32>, tensor<16x4xf32>) -> tensor<4xf32>
  %1 = transformer.matmul %v, %m : (tensor<16xf32>, tensor<16x4xf32>) -> tensor<4xf32>
  // CHECK: transformer.matmul %{{.*}} : (tensor<2x1x8x16xf32>, tensor<16xf32>) -> tensor<2x1x8xf32>
  %2 = transformer.matmul %a, %v : (tensor<2x1x8x16xf32>, tensor<16xf32>) -> tensor<2x1x8xf32>
  // CHECK: transformer.reduce <max> %{{.*}} {axes = array<i64: 1, -1, 2>} : (tensor<2x1x8x16xf32>) -> tensor<2x1x1x1xf32>
  %3 = transformer.reduce <max> %a {axes = array<i64: 1, -1, 2>} : (tensor<2x1x8x16xf32>) -> tensor<2x1x1x1xf32>
  // CHECK: transformer.reduce <sum> %{{.*}} {axes = array<i64: -1>, keepdims = false} : (tensor<2x1x8x16xf32>) -> tensor<2x1x8xf32>
  %4 = transformer.reduce <sum> %a {axes = array<i64: -1>, keepdims = false} : (tensor<2x1x8x16xf32>) -> tensor<2x1x8xf32>
  // CHECK: transformer.reduce <mean>
  %5 = transformer.reduce <mean> %a {axes = array<i64>} : (tensor<2x1x8x16xf32>) -> tensor<1x1x1x1xf32>
  // CHECK: transformer.reduce <min>
  %6 = transformer.reduce <min> %a {axes = array<i64: 0>} : (tensor<2x1x8x16xf32>) -> tensor<1x1x8x16xf32>
  // CHECK: transformer.reduce <prod>
  %7 = transformer.reduce <prod> %a {axes = array<i64: 0>, keepdims = false} : (tensor<2x1x8x16xf32>) -> tensor<1x8x16xf32>
  // CHECK: transformer.softmax %{{.*}} {axis = 3 : i64} : tensor<2x1x8x16xf32>
  %8 = transformer.softmax %a {axis = 3} : tensor<2x1x8x16xf32>
  // CHECK: transformer.softmax %{{.*}} : tensor<2x1x8x16xf32>
  %9 = transformer.softmax %8 : tensor<2x1x8x16xf32>
  return %0, %1, %4, %3, %9 : tensor<2x3x8x4xf32>, tensor<4xf32>, tensor<2x1x8xf32>, tensor<2x1x1x1xf32>, tensor<2x1x8x16xf32>
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<2x8x12xf32>, %ids: tensor<2x5xi64>, %table: tensor<100x12xf32>,
                         %e: tensor<1x8x1xf32>)
    -> (tensor<2x12x8xf32>, tensor<2x8x3x4xf32>, tensor<2x3x12xf32>, tensor<2x16x12xf32>,
        tensor<2x5x12xf32>, tensor<2x8x12xf32>, tensor<2x8x12xf32>, tensor<2x8x12xf32>) {
  // CHECK: transformer.transpose %{{.*}} [0, 2, 1] : tensor<2x8x12xf32> -> tensor<2x12x8xf32>
  %0 = transformer.transpose %x [0, 2, 1] : tensor<2x8x12xf32> -> tensor<2x12x8xf32>
  // CHECK: transformer.reshape %{{.*}} : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  %1 = transformer.reshape %x : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  // CHECK: transformer.slice %{{.*}} {offsets = array<i64: 0, 7, 0>, sizes = array<i64: 2, 3, 12>, strides = array<i64: 1, -2, 1>} : tensor<2x8x12xf32> -> tensor<2x3x12xf32>
  %2 = transformer.slice %x {offsets = array<i64: 0, 7, 0>, sizes = array<i64: 2, 3, 12>, strides = array<i64: 1, -2, 1>} : tensor<2x8x12xf32> -> tensor<2x3x12xf32>
  // CHECK: transformer.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x8x12xf32>, tensor<2x8x12xf32>) -> tensor<2x16x12xf32>
  %3 = transformer.concat %x, %x {axis = 1} : (tensor<2x8x12xf32>, tensor<2x8x12xf32>) -> tensor<2x16x12xf32>
  // CHECK: transformer.split %{{.*}} {axis = -1 : i64, sizes = array<i64: 4, 8>} : tensor<2x8x12xf32> -> tensor<2x8x4xf32>, tensor<2x8x8xf32>
  %4:2 = transformer.split %x {axis = -1, sizes = array<i64: 4, 8>} : tensor<2x8x12xf32> -> tensor<2x8x4xf32>, tensor<2x8x8xf32>
  // CHECK: transformer.gather %{{.*}}[%{{.*}}] : (tensor<100x12xf32>, tensor<2x5xi64>) -> tensor<2x5x12xf32>
  %5 = transformer.gather %table[%ids] : (tensor<100x12xf32>, tensor<2x5xi64>) -> tensor<2x5x12xf32>
  // CHECK: transformer.gather_elements %{{.*}}[%{{.*}}] {axis = 1 : i64}
  %idx = transformer.cast %x : tensor<2x8x12xf32> to tensor<2x8x12xi64>
  %6 = transformer.gather_elements %x[%idx] {axis = 1} : (tensor<2x8x12xf32>, tensor<2x8x12xi64>) -> tensor<2x8x12xf32>
  // CHECK: transformer.expand %{{.*}} : tensor<1x8x1xf32> -> tensor<2x8x12xf32>
  %7 = transformer.expand %e : tensor<1x8x1xf32> -> tensor<2x8x12xf32>
  // CHECK: transformer.trilu %{{.*}} {k = 1 : i64, upper = true} : tensor<2x8x12xf32>
  %8 = transformer.trilu %x {upper = true, k = 1} : tensor<2x8x12xf32>
  return %0, %1, %2, %3, %5, %6, %7, %8 : tensor<2x12x8xf32>, tensor<2x8x3x4xf32>, tensor<2x3x12xf32>, tensor<2x16x12xf32>,
        tensor<2x5x12xf32>, tensor<2x8x12xf32>, tensor<2x8x12xf32>, tensor<2x8x12xf32>
}

// CHECK-LABEL: func @shape_ops
func.func @shape_ops(%x: tensor<2x8x12xf32>, %s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>)
    -> (tensor<2xi64>, tensor<i64>, tensor<4xi64>, tensor<2x8xf32>) {
  // CHECK: transformer.shape %{{.*}} {start = 1 : i64} : tensor<2x8x12xf32> -> tensor<2xi64>
  %0 = transformer.shape %x {start = 1} : tensor<2x8x12xf32> -> tensor<2xi64>
  // CHECK: transformer.size %{{.*}} : tensor<2x8x12xf32> -> tensor<i64>
  %1 = transformer.size %x : tensor<2x8x12xf32> -> tensor<i64>
  // CHECK: transformer.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %2 = transformer.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %shape = arith.constant dense<[2, 8]> : tensor<2xi64>
  // CHECK: transformer.constant_of_shape %{{.*}}, 1.000000e+00 : f32 : tensor<2xi64> -> tensor<2x8xf32>
  %3 = transformer.constant_of_shape %shape, 1.0 : f32 : tensor<2xi64> -> tensor<2x8xf32>
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<i64>, tensor<4xi64>, tensor<2x8xf32>
}

// CHECK-LABEL: func @norms
func.func @norms(%x: tensor<2x8x64xbf16>, %r: tensor<2x8x64xbf16>, %g: tensor<64xbf16>, %b: tensor<64xbf16>)
    -> (tensor<2x8x64xbf16>, tensor<2x8x64xf8E4M3FN>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>) {
  // CHECK: transformer.layer_norm %{{.*}}, %{{.*}} bias %{{.*}} {epsilon = 9.99999974E-6 : f32} : (tensor<2x8x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<2x8x64xbf16>
  %0 = transformer.layer_norm %x, %g bias %b {epsilon = 1.0e-5 : f32} : (tensor<2x8x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<2x8x64xbf16>
  // CHECK: transformer.layer_norm %{{.*}}, %{{.*}} residual %{{.*}} {epsilon = 9.99999974E-6 : f32} : (tensor<2x8x64xbf16>, tensor<64xbf16>, tensor<2x8x64xbf16>) -> (tensor<2x8x64xf8E4M3FN>, tensor<2x8x64xbf16>)
  %1:2 = transformer.layer_norm %x, %g residual %r {epsilon = 1.0e-5 : f32} : (tensor<2x8x64xbf16>, tensor<64xbf16>, tensor<2x8x64xbf16>) -> (tensor<2x8x64xf8E4M3FN>, tensor<2x8x64xbf16>)
  // CHECK: transformer.rms_norm %{{.*}}, %{{.*}} {epsilon = 9.99999997E-7 : f32} : (tensor<2x8x64xbf16>, tensor<64xbf16>) -> tensor<2x8x64xbf16>
  %2 = transformer.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<2x8x64xbf16>, tensor<64xbf16>) -> tensor<2x8x64xbf16>
  // CHECK: transformer.rms_norm %{{.*}}, %{{.*}} residual %{{.*}} {axis = 2 : i64, epsilon
  %3:2 = transformer.rms_norm %x, %g residual %r {axis = 2, epsilon = 1.0e-6 : f32} : (tensor<2x8x64xbf16>, tensor<64xbf16>, tensor<2x8x64xbf16>) -> (tensor<2x8x64xbf16>, tensor<2x8x64xbf16>)
  return %0, %1#0, %1#1, %2, %3#0 : tensor<2x8x64xbf16>, tensor<2x8x64xf8E4M3FN>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>
}

// CHECK-LABEL: func @linear
func.func @linear(%x: tensor<2x8x64xbf16>, %wkn: tensor<64x256xbf16>, %wnk: tensor<256x64xbf16>,
                  %b: tensor<256xbf16>, %r: tensor<2x8x256xbf16>, %x8: tensor<16x64xf8E4M3FN>,
                  %w8: tensor<256x64xf8E4M3FN>)
    -> (tensor<2x8x256xbf16>, tensor<2x8x256xbf16>, tensor<16x256xbf16>) {
  // CHECK: transformer.linear %{{.*}}, %{{.*}} bias %{{.*}} layout <kn> activation <gelu_tanh> : (tensor<2x8x64xbf16>, tensor<64x256xbf16>, tensor<256xbf16>) -> tensor<2x8x256xbf16>
  %0 = transformer.linear %x, %wkn bias %b layout <kn> activation <gelu_tanh> : (tensor<2x8x64xbf16>, tensor<64x256xbf16>, tensor<256xbf16>) -> tensor<2x8x256xbf16>
  // CHECK: transformer.linear %{{.*}}, %{{.*}} residual %{{.*}} layout <nk> : (tensor<2x8x64xbf16>, tensor<256x64xbf16>, tensor<2x8x256xbf16>) -> tensor<2x8x256xbf16>
  %1 = transformer.linear %x, %wnk residual %r layout <nk> : (tensor<2x8x64xbf16>, tensor<256x64xbf16>, tensor<2x8x256xbf16>) -> tensor<2x8x256xbf16>
  // CHECK: transformer.linear %{{.*}}, %{{.*}} layout <nk> activation <silu> : (tensor<16x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>) -> tensor<16x256xbf16>
  %2 = transformer.linear %x8, %w8 layout <nk> activation <silu> : (tensor<16x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>) -> tensor<16x256xbf16>
  return %0, %1, %2 : tensor<2x8x256xbf16>, tensor<2x8x256xbf16>, tensor<16x256xbf16>
}

// CHECK-LABEL: func @linear_fp8_scales
func.func @linear_fp8_scales(%x8: tensor<16x64xf8E4M3FN>, %w8: tensor<256x64xf8E4M3FN>,
                             %b: tensor<256xbf16>, %sx: tensor<f32>, %sw: tensor<f32>)
    -> (tensor<16x256xbf16>, tensor<16x256xf32>) {
  // CHECK: transformer.linear %{{.*}}, %{{.*}} bias %{{.*}} input_scale %{{.*}} weight_scale %{{.*}} layout <nk> : (tensor<16x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<256xbf16>, tensor<f32>, tensor<f32>) -> tensor<16x256xbf16>
  %0 = transformer.linear %x8, %w8 bias %b input_scale %sx weight_scale %sw layout <nk> : (tensor<16x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<256xbf16>, tensor<f32>, tensor<f32>) -> tensor<16x256xbf16>
  // CHECK: transformer.linear %{{.*}}, %{{.*}} weight_scale %{{.*}} layout <nk> : (tensor<16x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<f32>) -> tensor<16x256xf32>
  %1 = transformer.linear %x8, %w8 weight_scale %sw layout <nk> : (tensor<16x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<f32>) -> tensor<16x256xf32>
  return %0, %1 : tensor<16x256xbf16>, tensor<16x256xf32>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<2x16x512xf16>, %k: tensor<2x32x128xf16>, %v: tensor<2x32x128xf16>,
                     %pad: tensor<2x1x1x32xi1>, %bias: tensor<16x32xf16>)
    -> (tensor<2x16x512xf16>, tensor<2x16x512xf16>, tensor<2x16x512xf16>) {
  // CHECK: transformer.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, num_heads = 8 : i64, num_kv_heads = 2 : i64, scale = 1.250000e-01 : f32} : (tensor<2x16x512xf16>, tensor<2x32x128xf16>, tensor<2x32x128xf16>) -> tensor<2x16x512xf16>
  %0 = transformer.attention %q, %k, %v {num_heads = 8, num_kv_heads = 2, scale = 0.125 : f32, causal} : (tensor<2x16x512xf16>, tensor<2x32x128xf16>, tensor<2x32x128xf16>) -> tensor<2x16x512xf16>
  // CHECK: transformer.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {num_heads = 8
  %1 = transformer.attention %q, %k, %v mask %pad {num_heads = 8, num_kv_heads = 2, scale = 0.125 : f32} : (tensor<2x16x512xf16>, tensor<2x32x128xf16>, tensor<2x32x128xf16>, tensor<2x1x1x32xi1>) -> tensor<2x16x512xf16>
  // CHECK: transformer.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {num_heads = 8
  %2 = transformer.attention %q, %k, %v mask %bias {num_heads = 8, num_kv_heads = 2, scale = 0.125 : f32} : (tensor<2x16x512xf16>, tensor<2x32x128xf16>, tensor<2x32x128xf16>, tensor<16x32xf16>) -> tensor<2x16x512xf16>
  return %0, %1, %2 : tensor<2x16x512xf16>, tensor<2x16x512xf16>, tensor<2x16x512xf16>
}

// CHECK-LABEL: func @rotary_and_activations
func.func @rotary_and_activations(%x: tensor<2x4x16x64xf32>, %xp: tensor<2x16x256xf32>,
                                  %cos: tensor<16x32xf32>, %sin: tensor<16x32xf32>,
                                  %bcos: tensor<2x16x16xf32>, %bsin: tensor<2x16x16xf32>)
    -> (tensor<2x4x16x64xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf32>) {
  // CHECK: transformer.rotary_embedding %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<2x4x16x64xf32>
  %0 = transformer.rotary_embedding %x, %cos, %sin : (tensor<2x4x16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<2x4x16x64xf32>
  // CHECK: transformer.rotary_embedding %{{.*}} {interleaved, num_heads = 4 : i64, rotary_dim = 32 : i64}
  %1 = transformer.rotary_embedding %xp, %bcos, %bsin {num_heads = 4, rotary_dim = 32, interleaved} : (tensor<2x16x256xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>) -> tensor<2x16x256xf32>
  // CHECK: transformer.gelu %{{.*}} : tensor<2x16x256xf32>
  %2 = transformer.gelu %1 : tensor<2x16x256xf32>
  // CHECK: transformer.gelu %{{.*}} approximate <tanh> : tensor<2x16x256xf32>
  %3 = transformer.gelu %1 approximate <tanh> : tensor<2x16x256xf32>
  // CHECK: transformer.silu %{{.*}} : tensor<2x16x256xf32>
  %4 = transformer.silu %3 : tensor<2x16x256xf32>
  // CHECK: transformer.swiglu %{{.*}}, %{{.*}} : tensor<2x16x256xf32>
  %5 = transformer.swiglu %4, %2 : tensor<2x16x256xf32>
  // CHECK: transformer.geglu %{{.*}}, %{{.*}} approximate <tanh> : tensor<2x16x256xf32>
  %6 = transformer.geglu %5, %2 approximate <tanh> : tensor<2x16x256xf32>
  return %0, %2, %3, %4, %6 : tensor<2x4x16x64xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf32>, tensor<2x16x256xf32>
}

// CHECK-LABEL: func @topk
func.func @topk(%x: tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  // CHECK: transformer.topk %{{.*}} {axis = 1 : i64, k = 3 : i64, largest = true} : tensor<2x8xf32> -> tensor<2x3xf32>, tensor<2x3xi64>
  %v, %i = transformer.topk %x {axis = 1 : i64, k = 3 : i64, largest = true} : tensor<2x8xf32> -> tensor<2x3xf32>, tensor<2x3xi64>
  return %v, %i : tensor<2x3xf32>, tensor<2x3xi64>
}

// CHECK-LABEL: func @fp8
func.func @fp8(%x: tensor<16x64xbf16>, %s: tensor<f32>)
    -> (tensor<16x64xf8E4M3FN>, tensor<16x64xf8E5M2>, tensor<16x64xf32>, tensor<f32>) {
  // CHECK: transformer.quantize %{{.*}}, %{{.*}} : (tensor<16x64xbf16>, tensor<f32>) -> tensor<16x64xf8E4M3FN>
  %0 = transformer.quantize %x, %s : (tensor<16x64xbf16>, tensor<f32>) -> tensor<16x64xf8E4M3FN>
  // CHECK: transformer.quantize %{{.*}}, %{{.*}} {saturate = false} : (tensor<16x64xbf16>, tensor<f32>) -> tensor<16x64xf8E5M2>
  %1 = transformer.quantize %x, %s {saturate = false} : (tensor<16x64xbf16>, tensor<f32>) -> tensor<16x64xf8E5M2>
  // CHECK: transformer.dequantize %{{.*}}, %{{.*}} : (tensor<16x64xf8E4M3FN>, tensor<f32>) -> tensor<16x64xf32>
  %2 = transformer.dequantize %0, %s : (tensor<16x64xf8E4M3FN>, tensor<f32>) -> tensor<16x64xf32>
  // CHECK: transformer.amax %{{.*}} : tensor<16x64xbf16> -> tensor<f32>
  %3 = transformer.amax %x : tensor<16x64xbf16> -> tensor<f32>
  return %0, %1, %2, %3 : tensor<16x64xf8E4M3FN>, tensor<16x64xf8E5M2>, tensor<16x64xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @conv_gather_nd
// CHECK: transformer.conv %{{.*}}, %{{.*}} bias %{{.*}} {dilations = array<i64: 1>, group = 2 : i64, pads = array<i64: 1, 1>, strides = array<i64: 2>} : (tensor<1x4x9xf32>, tensor<6x2x3xf32>, tensor<6xf32>) -> tensor<1x6x5xf32>
// CHECK: transformer.gather_nd %{{.*}}[%{{.*}}] {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi64>) -> tensor<2x5x4xf32>
// CHECK: transformer.scatter_nd %{{.*}}[%{{.*}}], %{{.*}} {reduction = #transformer.reduce_kind<sum>} : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
func.func @conv_gather_nd(%x: tensor<1x4x9xf32>, %w: tensor<6x2x3xf32>, %b: tensor<6xf32>, %d: tensor<2x3x4xf32>, %i: tensor<2x5x1xi64>, %j: tensor<5x2xi64>, %u: tensor<5x4xf32>) -> (tensor<1x6x5xf32>, tensor<2x5x4xf32>) {
  %0 = transformer.conv %x, %w bias %b {strides = array<i64: 2>, pads = array<i64: 1, 1>, dilations = array<i64: 1>, group = 2 : i64} : (tensor<1x4x9xf32>, tensor<6x2x3xf32>, tensor<6xf32>) -> tensor<1x6x5xf32>
  %1 = transformer.gather_nd %d[%i] {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi64>) -> tensor<2x5x4xf32>
  %2 = transformer.scatter_nd %d[%j], %u {reduction = #transformer.reduce_kind<sum>} : (tensor<2x3x4xf32>, tensor<5x2xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1 : tensor<1x6x5xf32>, tensor<2x5x4xf32>
}

// CHECK-LABEL: func @check_indices
// CHECK-SAME: checks = #transformer.index_check<op = "GatherND", node = "/gnd", source = "ids", bounds = 3, 4>
// CHECK: transformer.check_indices %{{.*}} {bounds = array<i64: 3, 4>} : tensor<5x2xi32>
func.func @check_indices(%i: tensor<5x2xi32>) -> tensor<3xi64>
    attributes {checks = #transformer.index_check<op = "GatherND", node = "/gnd", source = "ids", bounds = 3, 4>} {
  %safe, %status = transformer.check_indices %i {bounds = array<i64: 3, 4>} : tensor<5x2xi32>
  return %status : tensor<3xi64>
}

// A model state stays valid once bufferization has made its argument a
// buffer of the same shape and element type (mte-opt's backend pipelines
// run on stateful modules).
// CHECK-LABEL: func @bufferized_state
// CHECK-SAME: memref<3xf32> {transformer.state = #transformer.model_state<name = "fp8.scale"
func.func @bufferized_state(%s: memref<3xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<1.0> : tensor<3xf32>, labels = ["a", "b", "c"]>}) {
  return
}
