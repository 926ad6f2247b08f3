// RUN: mte-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func @reshape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x12xf32>)
// CHECK-NEXT: %[[R:.*]] = transformer.reshape %[[X]] : tensor<2x8x12xf32> -> tensor<16x12xf32>
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @reshape_chain(%x: tensor<2x8x12xf32>) -> (tensor<2x8x12xf32>, tensor<16x12xf32>) {
  %0 = transformer.reshape %x : tensor<2x8x12xf32> -> tensor<2x8x3x4xf32>
  %1 = transformer.reshape %0 : tensor<2x8x3x4xf32> -> tensor<2x8x12xf32>
  %2 = transformer.reshape %0 : tensor<2x8x3x4xf32> -> tensor<192xf32>
  %3 = transformer.reshape %2 : tensor<192xf32> -> tensor<16x12xf32>
  return %1, %3 : tensor<2x8x12xf32>, tensor<16x12xf32>
}

// -----

// CHECK-LABEL: func @reshape_identity
// CHECK-NEXT: return %arg0
func.func @reshape_identity(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = transformer.reshape %x : tensor<2x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Constants: integer data and splats are reshaped; float weights are not
// copied.
// CHECK-LABEL: func @reshape_constants
// CHECK-DAG: %[[I:.*]] = arith.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<1.500000e+00> : tensor<4x2xf32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK: %[[R:.*]] = transformer.reshape %[[W]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK: return %[[I]], %[[S]], %[[R]]
func.func @reshape_constants() -> (tensor<2x2xi64>, tensor<4x2xf32>, tensor<2x2xf32>) {
  %i = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %s = arith.constant dense<1.5> : tensor<8xf32>
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = transformer.reshape %i : tensor<4xi64> -> tensor<2x2xi64>
  %1 = transformer.reshape %s : tensor<8xf32> -> tensor<4x2xf32>
  %2 = transformer.reshape %w : tensor<4xf32> -> tensor<2x2xf32>
  return %0, %1, %2 : tensor<2x2xi64>, tensor<4x2xf32>, tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func @transpose_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x4x16xf32>)
// CHECK-NEXT: %[[T:.*]] = transformer.transpose %[[X]] [2, 0, 1, 3] : tensor<2x8x4x16xf32> -> tensor<4x2x8x16xf32>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transpose_chain(%x: tensor<2x8x4x16xf32>) -> (tensor<2x8x4x16xf32>, tensor<4x2x8x16xf32>) {
  // The head split and merge of attention cancel out.
  %0 = transformer.transpose %x [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %1 = transformer.transpose %0 [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %2 = transformer.transpose %0 [1, 0, 2, 3] : tensor<2x4x8x16xf32> -> tensor<4x2x8x16xf32>
  return %1, %2 : tensor<2x8x4x16xf32>, tensor<4x2x8x16xf32>
}

// -----

// CHECK-LABEL: func @transpose_identity
// CHECK-NEXT: return %arg0
func.func @transpose_identity(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = transformer.transpose %x [0, 1] : tensor<2x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @casts
// CHECK-DAG: %[[C:.*]] = arith.constant dense<[3, -1, 0]> : tensor<3xi32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[1, 0, 1]> : tensor<3xi64>
// CHECK-DAG: %[[F:.*]] = transformer.cast %arg0 : tensor<3xf32> to tensor<3xf16>
// CHECK: return %arg0, %[[C]], %[[B]], %[[F]]
func.func @casts(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xi64>, tensor<3xf16>) {
  %0 = transformer.cast %x : tensor<3xf32> to tensor<3xf32>
  %c = arith.constant dense<[3, -1, 0]> : tensor<3xi64>
  %1 = transformer.cast %c : tensor<3xi64> to tensor<3xi32>
  %b = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %2 = transformer.cast %b : tensor<3xi1> to tensor<3xi64>
  %3 = transformer.cast %x : tensor<3xf32> to tensor<3xf16>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xi32>, tensor<3xi64>, tensor<3xf16>
}

// -----

// A round trip through a type that holds every value folds away (f16 ->
// f32 -> f16, softmax(dtype=float32).to(float16); i8 -> i32 -> i8); through
// a narrower one (f32 -> f16 -> f32 rounds) or float -> int it stays.
// CHECK-LABEL: func @cast_round_trips
// CHECK-DAG: %[[N:.*]] = transformer.cast %arg1 : tensor<3xf32> to tensor<3xf16>
// CHECK-DAG: %[[W:.*]] = transformer.cast %[[N]] : tensor<3xf16> to tensor<3xf32>
// CHECK-DAG: %[[I:.*]] = transformer.cast %arg0 : tensor<3xf16> to tensor<3xi32>
// CHECK-DAG: %[[F:.*]] = transformer.cast %[[I]] : tensor<3xi32> to tensor<3xf16>
// CHECK: return %arg0, %arg2, %[[W]], %[[F]]
func.func @cast_round_trips(%h: tensor<3xf16>, %x: tensor<3xf32>, %b: tensor<3xi8>) -> (tensor<3xf16>, tensor<3xi8>, tensor<3xf32>, tensor<3xf16>) {
  %0 = transformer.cast %h : tensor<3xf16> to tensor<3xf32>
  %1 = transformer.cast %0 : tensor<3xf32> to tensor<3xf16>
  %2 = transformer.cast %b : tensor<3xi8> to tensor<3xi32>
  %3 = transformer.cast %2 : tensor<3xi32> to tensor<3xi8>
  %4 = transformer.cast %x : tensor<3xf32> to tensor<3xf16>
  %5 = transformer.cast %4 : tensor<3xf16> to tensor<3xf32>
  %6 = transformer.cast %h : tensor<3xf16> to tensor<3xi32>
  %7 = transformer.cast %6 : tensor<3xi32> to tensor<3xf16>
  return %1, %3, %5, %7 : tensor<3xf16>, tensor<3xi8>, tensor<3xf32>, tensor<3xf16>
}

// -----

// CHECK-LABEL: func @expand_and_slice
// CHECK-DAG: %[[E:.*]] = arith.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[5, 3, 1]> : tensor<3xi64>
// CHECK: return %arg0, %[[E]], %arg0, %[[S]]
func.func @expand_and_slice(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xi64>) {
  %0 = transformer.expand %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %splat = arith.constant dense<2.0> : tensor<1x8xf32>
  %1 = transformer.expand %splat : tensor<1x8xf32> -> tensor<4x8xf32>
  %2 = transformer.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 8>, strides = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x8xf32>
  %c = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %3 = transformer.slice %c {offsets = array<i64: 5>, sizes = array<i64: 3>, strides = array<i64: -2>} : tensor<6xi64> -> tensor<3xi64>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xi64>
}

// -----

// The Shape -> Gather -> Unsqueeze -> Concat chain an exporter emits for a
// head split folds to the constant target shape.
// CHECK-LABEL: func @shape_chain
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<[2, 8, 4, 3]> : tensor<4xi64>
// CHECK-NEXT: return %[[C]]
func.func @shape_chain(%x: tensor<2x8x12xf32>) -> tensor<4xi64> {
  %shape = transformer.shape %x : tensor<2x8x12xf32> -> tensor<3xi64>
  %i0 = arith.constant dense<0> : tensor<i64>
  %i1 = arith.constant dense<1> : tensor<i64>
  %b = transformer.gather %shape[%i0] : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %s = transformer.gather %shape[%i1] : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %b1 = transformer.reshape %b : tensor<i64> -> tensor<1xi64>
  %s1 = transformer.reshape %s : tensor<i64> -> tensor<1xi64>
  %heads = arith.constant dense<4> : tensor<1xi64>
  %last = transformer.shape %x {start = -1} : tensor<2x8x12xf32> -> tensor<1xi64>
  %dim = transformer.div %last, %heads : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %0 = transformer.concat %b1, %s1, %heads, %dim {axis = 0} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Expand's target as the TorchScript exporter computes it:
// Where(Equal(shape, -1), ones, shape).
// CHECK-LABEL: func @where_equal
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<[1, 16, 16]> : tensor<3xi64>
// CHECK-NEXT: return %[[C]]
func.func @where_equal() -> tensor<3xi64> {
  %shape = arith.constant dense<[-1, 16, 16]> : tensor<3xi64>
  %minus1 = arith.constant dense<-1> : tensor<i64>
  %cst3 = arith.constant dense<3> : tensor<1xi64>
  %ones = transformer.constant_of_shape %cst3, 1 : i64 : tensor<1xi64> -> tensor<3xi64>
  %eq = transformer.compare <eq> %shape, %minus1 : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %0 = transformer.where %eq, %ones, %shape : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// CHECK-LABEL: func @integer_arithmetic
// CHECK-DAG: %[[A:.*]] = arith.constant dense<{{\[}}[11, 12], [21, 22]]> : tensor<2x2xi64>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<{{\[}}[-9, -8], [-19, -18]]> : tensor<2x2xi64>
// CHECK-DAG: %[[M:.*]] = arith.constant dense<[2, 4]> : tensor<2xi64>
// CHECK-DAG: %[[D:.*]] = arith.constant dense<[-3, 3]> : tensor<2xi64>
// CHECK-DAG: %[[Z:.*]] = transformer.div
// CHECK: return %[[A]], %[[S]], %[[M]], %[[D]], %[[Z]]
func.func @integer_arithmetic() -> (tensor<2x2xi64>, tensor<2x2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) {
  %col = arith.constant dense<[[10], [20]]> : tensor<2x1xi64>
  %row = arith.constant dense<[1, 2]> : tensor<2xi64>
  %v = arith.constant dense<[-7, 7]> : tensor<2xi64>
  %two = arith.constant dense<2> : tensor<i64>
  %zero = arith.constant dense<[0, 1]> : tensor<2xi64>
  %0 = transformer.add %col, %row : (tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %1 = transformer.sub %row, %col : (tensor<2xi64>, tensor<2x1xi64>) -> tensor<2x2xi64>
  %2 = transformer.mul %row, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  // Integer division truncates toward zero, like ONNX Div.
  %3 = transformer.div %v, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  // Division by zero is left for run time.
  %4 = transformer.div %v, %zero : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0, %1, %2, %3, %4 : tensor<2x2xi64>, tensor<2x2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>
}

// -----

// Small float tensors (scalar computations of exporters) are evaluated;
// tensors above 4096 elements are not, so weights are never copied and
// large masks never materialised.
// CHECK-LABEL: func @float_and_large
// CHECK-DAG: %[[F:.*]] = arith.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[N:.*]] = arith.constant dense<-1.500000e+00> : tensor<f32>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<[3.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<[2, -1]> : tensor<2xi32>
// CHECK-DAG: %[[LT:.*]] = arith.constant dense<[false, true]> : tensor<2xi1>
// CHECK: %[[BIG:.*]] = transformer.add
// CHECK: return %[[F]], %[[N]], %[[C]], %[[I]], %[[LT]], %[[BIG]]
func.func @float_and_large() -> (tensor<2xf32>, tensor<f32>, tensor<2xf32>, tensor<2xi32>, tensor<2xi1>, tensor<8192xi64>) {
  %f = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = transformer.add %f, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %h = arith.constant dense<1.5> : tensor<f32>
  %1 = transformer.neg %h : tensor<f32>
  %i = arith.constant dense<[3, -2]> : tensor<2xi64>
  %2 = transformer.cast %i : tensor<2xi64> to tensor<2xf32>
  // Float to integer truncates toward zero.
  %g = arith.constant dense<[2.75, -1.5]> : tensor<2xf32>
  %3 = transformer.cast %g : tensor<2xf32> to tensor<2xi32>
  %4 = transformer.compare <lt> %g, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %s = arith.constant dense<1> : tensor<i64>
  %z = arith.constant dense<0> : tensor<i64>
  %n = arith.constant dense<8192> : tensor<i64>
  %r = transformer.range %z, %n, %s : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<8192xi64>
  %5 = transformer.add %r, %s : (tensor<8192xi64>, tensor<i64>) -> tensor<8192xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<2xf32>, tensor<f32>, tensor<2xf32>, tensor<2xi32>, tensor<2xi1>, tensor<8192xi64>
}

// -----

// CHECK-LABEL: func @shape_size_range
// CHECK-DAG: %[[SH:.*]] = arith.constant dense<[8, 12]> : tensor<2xi64>
// CHECK-DAG: %[[SZ:.*]] = arith.constant dense<192> : tensor<i64>
// CHECK-DAG: %[[R:.*]] = arith.constant dense<[0, 3, 6, 9]> : tensor<4xi64>
// CHECK-DAG: %[[RF:.*]] = arith.constant dense<[1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[CS:.*]] = arith.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: return %[[SH]], %[[SZ]], %[[R]], %[[RF]], %[[CS]]
func.func @shape_size_range(%x: tensor<2x8x12xf32>)
    -> (tensor<2xi64>, tensor<i64>, tensor<4xi64>, tensor<3xf32>, tensor<2x3xf32>) {
  %0 = transformer.shape %x {start = 1, end = 5} : tensor<2x8x12xf32> -> tensor<2xi64>
  %1 = transformer.size %x : tensor<2x8x12xf32> -> tensor<i64>
  %s = arith.constant dense<0> : tensor<i64>
  %l = arith.constant dense<10> : tensor<i64>
  %d = arith.constant dense<3> : tensor<i64>
  %2 = transformer.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %fs = arith.constant dense<1.0> : tensor<f32>
  %fl = arith.constant dense<2.25> : tensor<f32>
  %fd = arith.constant dense<0.5> : tensor<f32>
  %3 = transformer.range %fs, %fl, %fd : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  %shape = arith.constant dense<[2, 3]> : tensor<2xi64>
  %4 = transformer.constant_of_shape %shape, 0.0 : f32 : tensor<2xi64> -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2xi64>, tensor<i64>, tensor<4xi64>, tensor<3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @gather_concat
// CHECK-DAG: %[[G:.*]] = arith.constant dense<{{\[}}[30, 10], [60, 40]]> : tensor<2x2xi64>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<{{\[}}[1, 2, 7], [3, 4, 7]]> : tensor<2x3xi64>
// CHECK: return %[[G]], %[[C]]
func.func @gather_concat() -> (tensor<2x2xi64>, tensor<2x3xi64>) {
  %data = arith.constant dense<[[10, 20, 30], [40, 50, 60]]> : tensor<2x3xi64>
  %idx = arith.constant dense<[-1, 0]> : tensor<2xi64>
  %0 = transformer.gather %data[%idx] {axis = 1} : (tensor<2x3xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %a = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %b = arith.constant dense<7> : tensor<2x1xi64>
  %1 = transformer.concat %a, %b {axis = -1} : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  return %0, %1 : tensor<2x2xi64>, tensor<2x3xi64>
}

// -----

// Moving only unit dimensions moves no data: a reshape, which then folds
// into its neighbours; a real permutation stays.
// CHECK-LABEL: func @transpose_of_unit_dims
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>, %[[Y:.*]]: tensor<2x1x3xf32>)
// CHECK-NEXT: %[[T:.*]] = transformer.transpose %[[Y]] [2, 1, 0] : tensor<2x1x3xf32> -> tensor<3x1x2xf32>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transpose_of_unit_dims(%x: tensor<1x4x8xf32>, %y: tensor<2x1x3xf32>) -> (tensor<1x4x8xf32>, tensor<3x1x2xf32>) {
  %0 = transformer.reshape %x : tensor<1x4x8xf32> -> tensor<1x1x4x8xf32>
  %1 = transformer.transpose %0 [1, 0, 2, 3] : tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  %2 = transformer.transpose %1 [0, 2, 1, 3] : tensor<1x1x4x8xf32> -> tensor<1x4x1x8xf32>
  %3 = transformer.reshape %2 : tensor<1x4x1x8xf32> -> tensor<1x4x8xf32>
  %4 = transformer.transpose %y [2, 1, 0] : tensor<2x1x3xf32> -> tensor<3x1x2xf32>
  return %3, %4 : tensor<1x4x8xf32>, tensor<3x1x2xf32>
}

// -----

// TorchScript spells sqrt(head_dim) as Pow(16, 0.5).
// CHECK-LABEL: func @pow_of_constants
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<[4.000000e+00, 8.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: return %[[C]]
func.func @pow_of_constants() -> tensor<2xf32> {
  %b = arith.constant dense<[16.0, 2.0]> : tensor<2xf32>
  %e = arith.constant dense<[0.5, 3.0]> : tensor<2xf32>
  %0 = transformer.pow %b, %e : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// GPT-2's Conv1D flattens [B, S, K] to [B*S, K] around each GEMM; the linear
// takes the unflattened input and the reshapes between two GEMMs cancel.
// CHECK-LABEL: func @linear_of_flattened_input
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[W1:.*]]: tensor<64x128xf32>, %[[W2:.*]]: tensor<128x64xf32>, %[[R:.*]]: tensor<16x64xf32>)
// CHECK-NEXT: %[[H:.*]] = transformer.linear %[[X]], %[[W1]] layout <kn> activation <gelu_tanh> : (tensor<2x8x64xf32>, tensor<64x128xf32>) -> tensor<2x8x128xf32>
// CHECK-NEXT: %[[RR:.*]] = transformer.reshape %[[R]] : tensor<16x64xf32> -> tensor<2x8x64xf32>
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %[[H]], %[[W2]] residual %[[RR]] layout <kn> : (tensor<2x8x128xf32>, tensor<128x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @linear_of_flattened_input(%x: tensor<2x8x64xf32>, %w1: tensor<64x128xf32>, %w2: tensor<128x64xf32>, %r: tensor<16x64xf32>) -> tensor<2x8x64xf32> {
  %0 = transformer.reshape %x : tensor<2x8x64xf32> -> tensor<16x64xf32>
  %1 = transformer.linear %0, %w1 layout <kn> activation <gelu_tanh> : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  %2 = transformer.reshape %1 : tensor<16x128xf32> -> tensor<2x8x128xf32>
  %3 = transformer.reshape %2 : tensor<2x8x128xf32> -> tensor<16x128xf32>
  %4 = transformer.linear %3, %w2 residual %r layout <kn> : (tensor<16x128xf32>, tensor<128x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %5 = transformer.reshape %4 : tensor<16x64xf32> -> tensor<2x8x64xf32>
  return %5 : tensor<2x8x64xf32>
}

// -----

// A row-scaled FP8 linear's input scale has the input's rows ([16, 1]): the
// flattening stays where it is (moving it would leave the scale's shape
// behind).
// CHECK-LABEL: func @row_scaled_linear_of_flattened_input
// CHECK: %[[FLAT:.*]] = transformer.reshape %arg0 : tensor<2x8x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
// CHECK: transformer.linear %[[FLAT]], %arg1 input_scale %arg2 weight_scale %arg3 layout <nk> : (tensor<16x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>, tensor<16x1xf32>, tensor<32xf32>) -> tensor<16x32xbf16>
func.func @row_scaled_linear_of_flattened_input(%x: tensor<2x8x64xf8E4M3FN>, %w: tensor<32x64xf8E4M3FN>, %xs: tensor<16x1xf32>, %ws: tensor<32xf32>) -> tensor<16x32xbf16> {
  %0 = transformer.reshape %x : tensor<2x8x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
  %1 = transformer.linear %0, %w input_scale %xs weight_scale %ws layout <nk> : (tensor<16x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>, tensor<16x1xf32>, tensor<32xf32>) -> tensor<16x32xbf16>
  return %1 : tensor<16x32xbf16>
}

// -----

// A reshape that changes the feature dimension is not a flattening.
// CHECK-LABEL: func @linear_of_regrouped_input
// CHECK: transformer.reshape %arg0 : tensor<2x8x64xf32> -> tensor<2x512xf32>
// CHECK: transformer.linear %{{.*}} : (tensor<2x512xf32>, tensor<512x4xf32>) -> tensor<2x4xf32>
func.func @linear_of_regrouped_input(%x: tensor<2x8x64xf32>, %w: tensor<512x4xf32>) -> tensor<2x4xf32> {
  %0 = transformer.reshape %x : tensor<2x8x64xf32> -> tensor<2x512xf32>
  %1 = transformer.linear %0, %w layout <kn> : (tensor<2x512xf32>, tensor<512x4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// Falcon's multi-query projection viewed per head, its query, key and value
// heads sliced out of the view: the slices move onto the flat projection
// and, tiling its columns, become one split.
// CHECK-LABEL: func @slices_of_heads_view
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[W:.*]]: tensor<32x96xf32>)
// CHECK-NEXT: %[[P:.*]] = transformer.linear %[[X]], %[[W]]
// CHECK-NEXT: %[[S:.*]]:3 = transformer.split %[[P]] {axis = 2 : i64, sizes = array<i64: 64, 16, 16>}
// CHECK-NEXT: %[[Q:.*]] = transformer.reshape %[[S]]#0 : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
// CHECK-NEXT: %[[K:.*]] = transformer.reshape %[[S]]#1 : tensor<2x8x16xf32> -> tensor<2x8x1x16xf32>
// CHECK-NEXT: %[[V:.*]] = transformer.reshape %[[S]]#2 : tensor<2x8x16xf32> -> tensor<2x8x1x16xf32>
// CHECK-NEXT: return %[[Q]], %[[K]], %[[V]]
func.func @slices_of_heads_view(%x: tensor<2x8x32xf32>, %w: tensor<32x96xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x8x1x16xf32>, tensor<2x8x1x16xf32>) {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<2x8x32xf32>, tensor<32x96xf32>) -> tensor<2x8x96xf32>
  %1 = transformer.reshape %0 : tensor<2x8x96xf32> -> tensor<2x8x6x16xf32>
  %q = transformer.slice %1 {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 8, 4, 16>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x8x6x16xf32> -> tensor<2x8x4x16xf32>
  %k = transformer.slice %1 {offsets = array<i64: 0, 0, 4, 0>, sizes = array<i64: 2, 8, 1, 16>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x8x6x16xf32> -> tensor<2x8x1x16xf32>
  %v = transformer.slice %1 {offsets = array<i64: 0, 0, 5, 0>, sizes = array<i64: 2, 8, 1, 16>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x8x6x16xf32> -> tensor<2x8x1x16xf32>
  return %q, %k, %v : tensor<2x8x4x16xf32>, tensor<2x8x1x16xf32>, tensor<2x8x1x16xf32>
}

// -----

// A slice along the head dimension of a view (a strided slice of heads, a
// slice within a head, or of a view that regroups more than the last axis)
// stays.
// CHECK-LABEL: func @slices_of_heads_view_kept
// CHECK-COUNT-3: transformer.slice %{{.*}} : tensor<2x8x6x16xf32>
// CHECK: transformer.slice %{{.*}} : tensor<2x4x12x16xf32>
func.func @slices_of_heads_view_kept(%x: tensor<2x8x96xf32>) -> (tensor<2x8x3x16xf32>, tensor<2x8x6x8xf32>, tensor<2x8x1x8xf32>, tensor<2x4x1x16xf32>) {
  %1 = transformer.reshape %x : tensor<2x8x96xf32> -> tensor<2x8x6x16xf32>
  %a = transformer.slice %1 {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 8, 3, 16>, strides = array<i64: 1, 1, 2, 1>} : tensor<2x8x6x16xf32> -> tensor<2x8x3x16xf32>
  %b = transformer.slice %1 {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 8, 6, 8>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x8x6x16xf32> -> tensor<2x8x6x8xf32>
  %c = transformer.slice %1 {offsets = array<i64: 0, 0, 2, 8>, sizes = array<i64: 2, 8, 1, 8>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x8x6x16xf32> -> tensor<2x8x1x8xf32>
  %2 = transformer.reshape %x : tensor<2x8x96xf32> -> tensor<2x4x12x16xf32>
  %d = transformer.slice %2 {offsets = array<i64: 0, 0, 3, 0>, sizes = array<i64: 2, 4, 1, 16>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x4x12x16xf32> -> tensor<2x4x1x16xf32>
  return %a, %b, %c, %d : tensor<2x8x3x16xf32>, tensor<2x8x6x8xf32>, tensor<2x8x1x8xf32>, tensor<2x4x1x16xf32>
}

// -----

// Slices of a linear's columns become a split only when they tile them: a
// gap, an overlap, or a single slice keep their slices.
// CHECK-LABEL: func @linear_slices_not_tiling
// CHECK-NOT: transformer.split
// CHECK-COUNT-5: transformer.slice
// CHECK-NOT: transformer.split
func.func @linear_slices_not_tiling(%x: tensor<2x32xf32>, %w: tensor<32x96xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x48xf32>, tensor<2x64xf32>, tensor<2x48xf32>) {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<2x32xf32>, tensor<32x96xf32>) -> tensor<2x96xf32>
  %a = transformer.slice %0 {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 32>, strides = array<i64: 1, 1>} : tensor<2x96xf32> -> tensor<2x32xf32>
  %b = transformer.slice %0 {offsets = array<i64: 0, 64>, sizes = array<i64: 2, 32>, strides = array<i64: 1, 1>} : tensor<2x96xf32> -> tensor<2x32xf32>
  %1 = transformer.linear %x, %w layout <kn> activation <relu> : (tensor<2x32xf32>, tensor<32x96xf32>) -> tensor<2x96xf32>
  %c = transformer.slice %1 {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 48>, strides = array<i64: 1, 1>} : tensor<2x96xf32> -> tensor<2x48xf32>
  %d = transformer.slice %1 {offsets = array<i64: 0, 32>, sizes = array<i64: 2, 64>, strides = array<i64: 1, 1>} : tensor<2x96xf32> -> tensor<2x64xf32>
  %2 = transformer.linear %x, %w layout <kn> activation <gelu> : (tensor<2x32xf32>, tensor<32x96xf32>) -> tensor<2x96xf32>
  %e = transformer.slice %2 {offsets = array<i64: 0, 48>, sizes = array<i64: 2, 48>, strides = array<i64: 1, 1>} : tensor<2x96xf32> -> tensor<2x48xf32>
  return %a, %b, %c, %d, %e : tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x48xf32>, tensor<2x64xf32>, tensor<2x48xf32>
}

// -----

// A split of one piece of a split along the same axis (horizontal fusion's
// split of a projection that its model splits again) is one split; a piece
// that is read elsewhere too keeps two.
// CHECK-LABEL: func @compose_splits
// CHECK-SAME: (%[[X:.*]]: tensor<2x224xf32>, %[[Y:.*]]: tensor<2x224xf32>)
// CHECK-NEXT: %[[S:.*]]:4 = transformer.split %[[X]] {axis = 1 : i64, sizes = array<i64: 64, 16, 16, 128>}
// CHECK-NEXT: %[[T:.*]]:2 = transformer.split %[[Y]] {axis = 1 : i64, sizes = array<i64: 96, 128>}
// CHECK-NEXT: %[[U:.*]]:2 = transformer.split %[[T]]#0 {axis = -1 : i64, sizes = array<i64: 32, 64>}
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1, %[[S]]#2, %[[S]]#3, %[[U]]#0, %[[U]]#1, %[[T]]#0
func.func @compose_splits(%x: tensor<2x224xf32>, %y: tensor<2x224xf32>) -> (tensor<2x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x128xf32>, tensor<2x32xf32>, tensor<2x64xf32>, tensor<2x96xf32>) {
  %0:2 = transformer.split %x {axis = 1 : i64, sizes = array<i64: 96, 128>} : tensor<2x224xf32> -> tensor<2x96xf32>, tensor<2x128xf32>
  %1:3 = transformer.split %0#0 {axis = -1 : i64, sizes = array<i64: 64, 16, 16>} : tensor<2x96xf32> -> tensor<2x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>
  %2:2 = transformer.split %y {axis = 1 : i64, sizes = array<i64: 96, 128>} : tensor<2x224xf32> -> tensor<2x96xf32>, tensor<2x128xf32>
  %3:2 = transformer.split %2#0 {axis = -1 : i64, sizes = array<i64: 32, 64>} : tensor<2x96xf32> -> tensor<2x32xf32>, tensor<2x64xf32>
  return %1#0, %1#1, %1#2, %0#1, %3#0, %3#1, %2#0 : tensor<2x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x128xf32>, tensor<2x32xf32>, tensor<2x64xf32>, tensor<2x96xf32>
}

// -----

// A reshaped model parameter (a resource blob) is the same blob under the
// new shape: a patch embedding's kernel reshaped on its way to a linear is
// a constant to the passes that quantize weights.
// CHECK-LABEL: func @reshape_resource
// CHECK-NEXT: %[[W:.*]] = arith.constant dense_resource<kernel> : tensor<4x6xf32>
// CHECK-NEXT: return %[[W]]
// CHECK: kernel: "0x04000000000000000000803F
func.func @reshape_resource() -> tensor<4x6xf32> {
  %w = arith.constant dense_resource<kernel> : tensor<4x2x3xf32>
  %0 = transformer.reshape %w : tensor<4x2x3xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
{-#
  dialect_resources: {
    builtin: {
      kernel: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B841"
    }
  }
#-}
