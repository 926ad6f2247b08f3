// RUN: mte-opt %s -split-input-file -verify-diagnostics

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{operand element types 'f32' and 'f16' differ}}
  %0 = transformer.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @binary_broadcast(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{operand types 'tensor<4x3xf32>' and 'tensor<4xf32>' are not broadcast-compatible}}
  %0 = transformer.mul %a, %b : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @binary_result_type(%a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf32>'}}
  %0 = transformer.sub %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @pow_fp8(%a: tensor<4xf8E4M3FN>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or signless integer or unsigned integer values}}
  %0 = transformer.pow %a, %a : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  return
}

// -----

func.func @compare_result(%a: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<4xi1>' are incompatible with return type(s) of operation 'tensor<5xi1>'}}
  %0 = transformer.compare <eq> %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xi1>
  return
}

// -----

func.func @where_condition(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{condition type 'tensor<3xi1>' is not broadcast-compatible with 'tensor<4xf32>'}}
  %0 = transformer.where %c, %a, %a : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_values(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{operand element types 'f32' and 'f16' differ}}
  %0 = transformer.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @clip_bounds(%a: tensor<4xf32>) {
  // expected-error @+1 {{min 6.000000e+00 exceeds max 0.000000e+00}}
  %0 = transformer.clip %a {min = 6.0 : f64, max = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @unary_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "transformer.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = transformer.cast %a : tensor<4xf32> to tensor<5xf16>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x8x16xf32>, %b: tensor<12x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{contracting dimensions differ: lhs 'tensor<2x8x16xf32>' has 16, rhs 'tensor<12x4xf32>' has 12}}
  %0 = transformer.matmul %a, %b : (tensor<2x8x16xf32>, tensor<12x4xf32>) -> tensor<2x8x4xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x8x16xf32>, %b: tensor<3x16x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{batch dimensions of 'tensor<2x8x16xf32>' and 'tensor<3x16x4xf32>' are not broadcast-compatible}}
  %0 = transformer.matmul %a, %b : (tensor<2x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x8x4xf32>
  return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<3x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{operands must have rank >= 1}}
  %0 = transformer.matmul %a, %b : (tensor<f32>, tensor<3x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<3xf32>, %b: tensor<3x4xf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{operand element types 'f32' and 'f16' differ}}
  %0 = transformer.matmul %a, %b : (tensor<3xf32>, tensor<3x4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @reduce_axis(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = transformer.reduce <sum> %a {axes = array<i64: 2>} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_repeated_axis(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis -1 is repeated}}
  %0 = transformer.reduce <sum> %a {axes = array<i64: 1, -1>} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x8xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = transformer.softmax %a {axis = -3} : tensor<2x8xf32>
  return
}

// -----

func.func @transpose_length(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{permutation has 3 entries for an input of rank 2}}
  %0 = transformer.transpose %a [0, 1, 2] : tensor<2x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @transpose_not_permutation(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{permutation is not a permutation of [0, 2)}}
  %0 = transformer.transpose %a [1, 1] : tensor<2x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x8xf32>) {
  // expected-error @+1 {{cannot reshape 16 elements into 15}}
  %0 = transformer.reshape %a : tensor<2x8xf32> -> tensor<3x5xf32>
  return
}

// -----

func.func @reshape_element_type(%a: tensor<2x8xf32>) {
  // expected-error @+1 {{element type changes from 'f32' to 'f16'}}
  %0 = transformer.reshape %a : tensor<2x8xf32> -> tensor<16xf16>
  return
}

// -----

func.func @reshape_dynamic(%a: tensor<?x8xf32>) {
  // expected-error @+1 {{requires static shapes}}
  %0 = transformer.reshape %a : tensor<?x8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @expand_rank(%a: tensor<2x8xf32>) {
  // expected-error @+1 {{cannot expand rank 2 to rank 1}}
  %0 = transformer.expand %a : tensor<2x8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @expand_dim(%a: tensor<2x8xf32>) {
  // expected-error @+1 {{input dimension 0 of size 2 cannot broadcast to 4}}
  %0 = transformer.expand %a : tensor<2x8xf32> -> tensor<3x4x8xf32>
  return
}

// -----

func.func @expand_element_type(%a: tensor<1x8xf32>) {
  // expected-error @+1 {{element type changes from 'f32' to 'f16'}}
  %0 = transformer.expand %a : tensor<1x8xf32> -> tensor<4x8xf16>
  return
}

// -----

func.func @slice_entries(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{offsets, sizes and strides need one entry per dimension of the rank-2 input}}
  %0 = transformer.slice %a {offsets = array<i64: 0>, sizes = array<i64: 2>, strides = array<i64: 1>} : tensor<2x8xf32> -> tensor<2xf32>
  return
}

// -----

func.func @slice_zero_stride(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{stride of dimension 1 is zero}}
  %0 = transformer.slice %a {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 0>} : tensor<2x8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @slice_negative_size(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{size of dimension 0 is negative}}
  %0 = transformer.slice %a {offsets = array<i64: 0, 0>, sizes = array<i64: -1, 4>, strides = array<i64: 1, 1>} : tensor<2x8xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @slice_bounds(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{dimension 1 slice [6 : 2 x 2] is out of bounds for size 8}}
  %0 = transformer.slice %a {offsets = array<i64: 0, 6>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 2>} : tensor<2x8xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{requires at least one input}}
  %0 = transformer.concat {axis = 0} : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = transformer.concat %a, %a {axis = 2} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{input 'tensor<8xf32>' does not match the first input 'tensor<2x8xf32>'}}
  %0 = transformer.concat %a, %b {axis = 1} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{input 'tensor<3x8xf32>' differs from the first input 'tensor<2x8xf32>' outside the concatenation axis}}
  %0 = transformer.concat %a, %b {axis = 1} : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @split_axis(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 3 is out of range for rank 2}}
  %0:2 = transformer.split %a {axis = 3, sizes = array<i64: 4, 4>} : tensor<2x8xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @split_negative(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{split size -4 is negative}}
  %0:2 = transformer.split %a {axis = 1, sizes = array<i64: 12, -4>} : tensor<2x8xf32> -> tensor<2x12xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @split_sum(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{split sizes add up to 9 but dimension 1 has size 8}}
  %0:2 = transformer.split %a {axis = 1, sizes = array<i64: 4, 5>} : tensor<2x8xf32> -> tensor<2x4xf32>, tensor<2x5xf32>
  return
}

// -----

func.func @split_results(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<2x4xf32>', 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  %0 = "transformer.split"(%a) <{axis = 1 : i64, sizes = array<i64: 4, 4>}> : (tensor<2x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @gather_axis(%a: tensor<2x8xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = transformer.gather %a[%i] {axis = 2} : (tensor<2x8xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gather_index_type(%a: tensor<2x8xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = transformer.gather %a[%i] : (tensor<2x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @gather_elements_rank(%a: tensor<2x8xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{indices rank 1 differs from data rank 2}}
  %0 = transformer.gather_elements %a[%i] : (tensor<2x8xf32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @gather_elements_axis(%a: tensor<2x8xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = transformer.gather_elements %a[%i] {axis = -3} : (tensor<2x8xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @trilu_rank(%a: tensor<8xf32>) {
  // expected-error @+1 {{requires an input of rank >= 2}}
  %0 = transformer.trilu %a {upper = false} : tensor<8xf32>
  return
}

// -----

func.func @shape_result(%a: tensor<2x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<2xi64>' are incompatible with return type(s) of operation 'tensor<3xi64>'}}
  %0 = transformer.shape %a : tensor<2x8xf32> -> tensor<3xi64>
  return
}

// -----

func.func @range_types(%s: tensor<i64>, %l: tensor<i32>) {
  // expected-error @+1 {{operand type 'tensor<i32>' does not match the result element type 'i64'}}
  %0 = transformer.range %s, %l, %s : (tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<4xi64>
  return
}

// -----

func.func @range_zero_delta(%s: tensor<i64>) {
  %d = arith.constant dense<0> : tensor<i64>
  // expected-error @+1 {{delta is zero}}
  %0 = transformer.range %s, %s, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  return
}

// -----

func.func @range_length() {
  %s = arith.constant dense<0> : tensor<i64>
  %l = arith.constant dense<10> : tensor<i64>
  %d = arith.constant dense<3> : tensor<i64>
  // expected-error @+1 {{range from 0.000000e+00 to 1.000000e+01 by 3.000000e+00 does not have the 3 elements the result type holds}}
  %0 = transformer.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  return
}

// -----

// A count far beyond int64_t (the importer fuzzer's) is compared as a
// double, never converted.
func.func @range_huge_length() {
  %s = arith.constant dense<0.0> : tensor<f32>
  %l = arith.constant dense<1.0e30> : tensor<f32>
  %d = arith.constant dense<1.0e-10> : tensor<f32>
  // expected-error @+1 {{does not have the 3 elements the result type holds}}
  %0 = transformer.range %s, %l, %d : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  return
}

// -----

func.func @constant_of_shape_value(%s: tensor<2xi64>) {
  // expected-error @+1 {{value type 'f16' differs from the result element type 'f32'}}
  %0 = transformer.constant_of_shape %s, 1.0 : f16 : tensor<2xi64> -> tensor<2x3xf32>
  return
}

// -----

func.func @constant_of_shape_rank(%s: tensor<3xi64>) {
  // expected-error @+1 {{shape operand has 3 entries for a result of rank 2}}
  %0 = transformer.constant_of_shape %s, 1.0 : f32 : tensor<3xi64> -> tensor<2x3xf32>
  return
}

// -----

func.func @constant_of_shape_dims() {
  %s = arith.constant dense<[2, 4]> : tensor<2xi64>
  // expected-error @+1 {{shape operand does not match the result type 'tensor<2x3xf32>'}}
  %0 = transformer.constant_of_shape %s, 1.0 : f32 : tensor<2xi64> -> tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = transformer.layer_norm %x, %g {axis = 2, epsilon = 1.0e-5 : f32} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<2x64xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{parameter type 'tensor<32xf32>' does not match the normalized shape of 'tensor<2x64xf32>'}}
  %0 = transformer.layer_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<2x64xf32>, tensor<32xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @layer_norm_bias_type(%x: tensor<2x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf16>) {
  // expected-error @+1 {{parameter element type 'f16' differs from the input's 'f32'}}
  %0 = transformer.layer_norm %x, %g bias %b {epsilon = 1.0e-5 : f32} : (tensor<2x64xf32>, tensor<64xf32>, tensor<64xf16>) -> tensor<2x64xf32>
  return
}

// -----

func.func @layer_norm_output(%x: tensor<2x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{output shape differs from the input type 'tensor<2x64xf32>'}}
  %0 = transformer.layer_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @layer_norm_residual_pairing(%x: tensor<2x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{has a residual operand iff it has a residual_sum result}}
  %0:2 = transformer.layer_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<2x64xf32>, tensor<64xf32>) -> (tensor<2x64xf32>, tensor<2x64xf32>)
  return
}

// -----

func.func @layer_norm_residual_type(%x: tensor<2x64xf32>, %g: tensor<64xf32>, %r: tensor<1x64xf32>) {
  // expected-error @+1 {{residual type 'tensor<1x64xf32>' differs from the input type 'tensor<2x64xf32>'}}
  %0:2 = transformer.layer_norm %x, %g residual %r {epsilon = 1.0e-5 : f32} : (tensor<2x64xf32>, tensor<64xf32>, tensor<1x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xf32>)
  return
}

// -----

func.func @layer_norm_residual_sum_type(%x: tensor<2x64xf32>, %g: tensor<64xf32>, %r: tensor<2x64xf32>) {
  // expected-error @+1 {{residual_sum type 'tensor<2x64xf16>' differs from the input type 'tensor<2x64xf32>'}}
  %0:2 = transformer.layer_norm %x, %g residual %r {epsilon = 1.0e-5 : f32} : (tensor<2x64xf32>, tensor<64xf32>, tensor<2x64xf32>) -> (tensor<2x64xf32>, tensor<2x64xf16>)
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<2x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{epsilon must be positive and finite}}
  %0 = transformer.rms_norm %x, %g {epsilon = 0.0 : f32} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @rms_norm_scale(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{parameter type 'tensor<64xf32>' does not match the normalized shape of 'tensor<2x8x64xf32>'}}
  %0 = transformer.rms_norm %x, %g {axis = 1, epsilon = 1.0e-6 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  return
}

// -----

func.func @linear_pair(%x: tensor<2x64xf32>, %w: tensor<64x32xf16>) {
  // expected-error @+1 {{input element type 'f32' and weight element type 'f16' are not a supported GEMM pair}}
  %0 = transformer.linear %x, %w layout <kn> : (tensor<2x64xf32>, tensor<64x32xf16>) -> tensor<2x32xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x64xf32>, %w: tensor<1x64x32xf32>) {
  // expected-error @+1 {{weight must have rank 2, got 'tensor<1x64x32xf32>'}}
  %0 = transformer.linear %x, %w layout <kn> : (tensor<2x64xf32>, tensor<1x64x32xf32>) -> tensor<2x32xf32>
  return
}

// -----

func.func @linear_k(%x: tensor<2x64xf32>, %w: tensor<64x32xf32>) {
  // expected-error @+1 {{input feature size 64 differs from the weight's K = 32 (layout nk)}}
  %0 = transformer.linear %x, %w layout <nk> : (tensor<2x64xf32>, tensor<64x32xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @linear_output(%x: tensor<2x64xf32>, %w: tensor<64x32xf32>) {
  // expected-error @+1 {{output type 'tensor<2x64xf32>' does not have shape [..., N = 32]}}
  %0 = transformer.linear %x, %w layout <kn> : (tensor<2x64xf32>, tensor<64x32xf32>) -> tensor<2x64xf32>
  return
}

// -----

func.func @linear_bias_shape(%x: tensor<2x64xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{bias type 'tensor<64xf32>' is not [N = 32]}}
  %0 = transformer.linear %x, %w bias %b layout <kn> : (tensor<2x64xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x32xf32>
  return
}

// -----

func.func @linear_scale_not_fp8(%x: tensor<2x64xbf16>, %w: tensor<64x32xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{has an input_scale but its input is not fp8}}
  %0 = transformer.linear %x, %w input_scale %s layout <kn> : (tensor<2x64xbf16>, tensor<64x32xbf16>, tensor<f32>) -> tensor<2x32xbf16>
  return
}

// -----

func.func @linear_scale_shape(%x: tensor<2x64xf8E4M3FN>, %w: tensor<64x32xf8E4M3FN>, %s: tensor<1xf32>) {
  // expected-error @+1 {{row or block scaling needs both input_scale (one per row or per 1x128 block) and weight_scale (one per channel or per 128x128 block)}}
  %0 = transformer.linear %x, %w weight_scale %s layout <kn> : (tensor<2x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, tensor<1xf32>) -> tensor<2x32xbf16>
  return
}

// -----

func.func @linear_bias_type(%x: tensor<2x64xf8E4M3FN>, %w: tensor<64x32xf8E4M3FN>, %b: tensor<32xf32>) {
  // expected-error @+1 {{bias element type differs from the output's}}
  %0 = transformer.linear %x, %w bias %b layout <kn> : (tensor<2x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, tensor<32xf32>) -> tensor<2x32xbf16>
  return
}

// -----

func.func @linear_residual(%x: tensor<2x64xf32>, %w: tensor<64x32xf32>, %r: tensor<1x32xf32>) {
  // expected-error @+1 {{residual type 'tensor<1x32xf32>' differs from the output type 'tensor<2x32xf32>'}}
  %0 = transformer.linear %x, %w residual %r layout <kn> : (tensor<2x64xf32>, tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<2x32xf32>
  return
}

// -----

func.func @linear_fp8_output_type(%x: tensor<2x64xf8E4M3FN>, %w: tensor<32x64xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{has an output_scale but its output is 'bf16', not f8E4M3FN}}
  %0 = transformer.linear %x, %w input_scale %s output_scale %s layout <nk> : (tensor<2x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2x32xbf16>
  return
}

// -----

func.func @linear_fp8_output_operands(%x: tensor<2x64xbf16>, %w: tensor<32x64xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{writes fp8 but its operands are not fp8 with per-tensor scales}}
  %0 = transformer.linear %x, %w output_scale %s layout <nk> : (tensor<2x64xbf16>, tensor<32x64xbf16>, tensor<f32>) -> tensor<2x32xf8E4M3FN>
  return
}

// -----

func.func @linear_fp8_without_scale(%x: tensor<2x64xf8E4M3FN>, %w: tensor<32x64xf8E4M3FN>) {
  // expected-error @+1 {{writes fp8 without an output_scale}}
  %0 = transformer.linear %x, %w layout <nk> : (tensor<2x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>) -> tensor<2x32xf8E4M3FN>
  return
}

// -----

func.func @linear_amax_without_scale(%x: tensor<2x64xf8E4M3FN>, %w: tensor<32x64xf8E4M3FN>) {
  // expected-error @+1 {{has an output_amax but no output_scale}}
  %0:2 = transformer.linear %x, %w layout <nk> : (tensor<2x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>) -> (tensor<2x32xbf16>, tensor<f32>)
  return
}

// -----

func.func @linear_fp8_output_bias(%x: tensor<2x64xf8E4M3FN>, %w: tensor<32x64xf8E4M3FN>, %b: tensor<32xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{bias of an fp8 output must be bf16 or f16}}
  %0 = transformer.linear %x, %w bias %b output_scale %s layout <nk> : (tensor<2x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>, tensor<32xf32>, tensor<f32>) -> tensor<2x32xf8E4M3FN>
  return
}

// -----

func.func @linear_fp8_output_residual(%x: tensor<2x64xf8E4M3FN>, %w: tensor<32x64xf8E4M3FN>, %r: tensor<2x32xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{residual of an fp8 output must be bf16 or f16 of the output's shape}}
  %0 = transformer.linear %x, %w residual %r output_scale %s layout <nk> : (tensor<2x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>, tensor<2x32xf32>, tensor<f32>) -> tensor<2x32xf8E4M3FN>
  return
}

// -----

func.func @linear_fp8_output_c_types(%x: tensor<2x64xf8E4M3FN>, %w: tensor<32x64xf8E4M3FN>, %b: tensor<32xbf16>, %r: tensor<2x32xf16>, %s: tensor<f32>) {
  // expected-error @+1 {{bias and residual of an fp8 output differ in type}}
  %0 = transformer.linear %x, %w bias %b residual %r output_scale %s layout <nk> : (tensor<2x64xf8E4M3FN>, tensor<32x64xf8E4M3FN>, tensor<32xbf16>, tensor<2x32xf16>, tensor<f32>) -> tensor<2x32xf8E4M3FN>
  return
}

// -----

func.func @attention_rank(%q: tensor<2x4x16x64xf32>) {
  // expected-error @+1 {{query, key and value must be [batch, sequence, heads * head_dim], got 'tensor<2x4x16x64xf32>'}}
  %0 = transformer.attention %q, %q, %q {num_heads = 4, num_kv_heads = 4, scale = 0.125 : f32} : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @attention_types(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf16>) {
  // expected-error @+1 {{query, key, value and output element types differ}}
  %0 = transformer.attention %q, %k, %k {num_heads = 4, num_kv_heads = 4, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x16x64xf32>, %k: tensor<3x16x64xf32>) {
  // expected-error @+1 {{batch sizes of query, key and value differ}}
  %0 = transformer.attention %q, %k, %k {num_heads = 4, num_kv_heads = 4, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<3x16x64xf32>, tensor<3x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_kv_sequence(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>, %v: tensor<2x8x64xf32>) {
  // expected-error @+1 {{key and value sequence lengths differ}}
  %0 = transformer.attention %q, %k, %v {num_heads = 4, num_kv_heads = 4, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x8x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_gqa(%q: tensor<2x16x64xf32>) {
  // expected-error @+1 {{num_heads 4 is not a multiple of num_kv_heads 3}}
  %0 = transformer.attention %q, %q, %q {num_heads = 4, num_kv_heads = 3, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_heads_divide(%q: tensor<2x16x60xf32>) {
  // expected-error @+1 {{query hidden size 60 is not divisible by num_heads 8}}
  %0 = transformer.attention %q, %q, %q {num_heads = 8, num_kv_heads = 8, scale = 0.125 : f32} : (tensor<2x16x60xf32>, tensor<2x16x60xf32>, tensor<2x16x60xf32>) -> tensor<2x16x60xf32>
  return
}

// -----

func.func @attention_key_hidden(%q: tensor<2x16x64xf32>, %k: tensor<2x16x64xf32>) {
  // expected-error @+1 {{key hidden size 64 is not num_kv_heads * head_dim = 32}}
  %0 = transformer.attention %q, %k, %k {num_heads = 4, num_kv_heads = 2, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_value_hidden(%q: tensor<2x16x64xf32>, %k: tensor<2x16x32xf32>, %v: tensor<2x16x33xf32>) {
  // expected-error @+1 {{value hidden size 33 is not divisible by num_kv_heads 2}}
  %0 = transformer.attention %q, %k, %v {num_heads = 4, num_kv_heads = 2, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x32xf32>, tensor<2x16x33xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_output(%q: tensor<2x16x64xf32>) {
  // expected-error @+1 {{output type 'tensor<2x8x64xf32>' is not [batch, query sequence, num_heads * value_dim]}}
  %0 = transformer.attention %q, %q, %q {num_heads = 4, num_kv_heads = 4, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x8x64xf32>
  return
}

// -----

func.func @attention_mask_type(%q: tensor<2x16x64xf32>, %m: tensor<16x16xi64>) {
  // expected-error @+1 {{mask element type 'i64' is neither i1 nor the query's 'f32'}}
  %0 = transformer.attention %q, %q, %q mask %m {num_heads = 4, num_kv_heads = 4, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<16x16xi64>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<2x16x64xf32>, %m: tensor<2x1x16x8xi1>) {
  // expected-error @+1 {{mask type 'tensor<2x1x16x8xi1>' does not broadcast to the scores [2, 4, 16, 16]}}
  %0 = transformer.attention %q, %q, %q mask %m {num_heads = 4, num_kv_heads = 4, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x1x16x8xi1>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_softcap(%q: tensor<2x16x64xf32>) {
  // expected-error @+1 {{softcap must be positive and finite}}
  %0 = transformer.attention %q, %q, %q {num_heads = 4, num_kv_heads = 4, scale = 0.25 : f32, softcap = -5.0 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<2x16x64xf32>) {
  // expected-error @+1 {{scale must be positive and finite}}
  %0 = transformer.attention %q, %q, %q {num_heads = 4, num_kv_heads = 4, scale = -1.0 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @attention_heads_positive(%q: tensor<2x16x64xf32>) {
  // expected-error @+1 {{attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = transformer.attention %q, %q, %q {num_heads = 0, num_kv_heads = 4, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @rotary_output(%x: tensor<2x4x16x64xf32>, %c: tensor<16x32xf32>) {
  // expected-error @+1 {{output type differs from the input type 'tensor<2x4x16x64xf32>'}}
  %0 = transformer.rotary_embedding %x, %c, %c : (tensor<2x4x16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<2x16x256xf32>
  return
}

// -----

func.func @rotary_heads_on_4d(%x: tensor<2x4x16x64xf32>, %c: tensor<16x32xf32>) {
  // expected-error @+1 {{num_heads is only meaningful for a rank-3 input}}
  %0 = transformer.rotary_embedding %x, %c, %c {num_heads = 4} : (tensor<2x4x16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @rotary_needs_heads(%x: tensor<2x16x256xf32>, %c: tensor<16x32xf32>) {
  // expected-error @+1 {{a rank-3 input [batch, sequence, heads * head_dim] needs num_heads}}
  %0 = transformer.rotary_embedding %x, %c, %c : (tensor<2x16x256xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<2x16x256xf32>
  return
}

// -----

func.func @rotary_heads_divide(%x: tensor<2x16x256xf32>, %c: tensor<16x32xf32>) {
  // expected-error @+1 {{hidden size 256 is not divisible by num_heads 3}}
  %0 = transformer.rotary_embedding %x, %c, %c {num_heads = 3} : (tensor<2x16x256xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<2x16x256xf32>
  return
}

// -----

func.func @rotary_rank(%x: tensor<16x64xf32>, %c: tensor<16x32xf32>) {
  // expected-error @+1 {{input must be [batch, heads, sequence, head_dim] or [batch, sequence, heads * head_dim], got 'tensor<16x64xf32>'}}
  %0 = transformer.rotary_embedding %x, %c, %c : (tensor<16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @rotary_dim(%x: tensor<2x4x16x64xf32>, %c: tensor<16x32xf32>) {
  // expected-error @+1 {{rotary_dim 66 must be even and at most the head dimension 64}}
  %0 = transformer.rotary_embedding %x, %c, %c {rotary_dim = 66} : (tensor<2x4x16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @rotary_tables_differ(%x: tensor<2x4x16x64xf32>, %c: tensor<16x32xf32>, %s: tensor<1x16x32xf32>) {
  // expected-error @+1 {{cos and sin types differ}}
  %0 = transformer.rotary_embedding %x, %c, %s : (tensor<2x4x16x64xf32>, tensor<16x32xf32>, tensor<1x16x32xf32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @rotary_table_type(%x: tensor<2x4x16x64xf32>, %c: tensor<16x32xf16>) {
  // expected-error @+1 {{cos/sin element type differs from the input's}}
  %0 = transformer.rotary_embedding %x, %c, %c : (tensor<2x4x16x64xf32>, tensor<16x32xf16>, tensor<16x32xf16>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @rotary_table_shape(%x: tensor<2x4x16x64xf32>, %c: tensor<16x48xf32>) {
  // expected-error @+1 {{cos/sin type 'tensor<16x48xf32>' is not [sequence, width] or [batch, sequence, width] with width rotary_dim / 2 or rotary_dim}}
  %0 = transformer.rotary_embedding %x, %c, %c : (tensor<2x4x16x64xf32>, tensor<16x48xf32>, tensor<16x48xf32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @quantize_shape(%x: tensor<16x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{failed to verify that all of {input, result} have same shape}}
  %0 = transformer.quantize %x, %s : (tensor<16x64xf32>, tensor<f32>) -> tensor<64x16xf8E4M3FN>
  return
}

// -----

func.func @quantize_scale(%x: tensor<16x64xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{scale type 'tensor<1xf32>' is neither one scale (rank 0) nor one per block of the rows of the input 'tensor<16x64xf32>' ([..., G] with G dividing the last dimension)}}
  %0 = transformer.quantize %x, %s : (tensor<16x64xf32>, tensor<1xf32>) -> tensor<16x64xf8E4M3FN>
  return
}

// -----

func.func @quantize_target(%x: tensor<16x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values}}
  %0 = transformer.quantize %x, %s : (tensor<16x64xf32>, tensor<f32>) -> tensor<16x64xf16>
  return
}

// -----

func.func @dequantize_input(%x: tensor<16x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values}}
  %0 = transformer.dequantize %x, %s : (tensor<16x64xf32>, tensor<f32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @amax_result(%x: tensor<16x64xf32>) {
  // expected-error @+1 {{result #0 must be 0D tensor of 32-bit float values}}
  %0 = transformer.amax %x : tensor<16x64xf32> -> tensor<1xf32>
  return
}

// -----

func.func @mod_float_floored(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{of floats needs fmod (ONNX defines the floored remainder for integers only)}}
  %0 = transformer.mod %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cumsum_axis(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = transformer.cumsum %a {axis = -3 : i64} : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @topk_k(%a: tensor<2x4xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>) {
  // expected-error @+1 {{k = 5 exceeds the axis length 4}}
  %v, %i = transformer.topk %a {axis = 1 : i64, k = 5 : i64, largest = true} : tensor<2x4xf32> -> tensor<2x5xf32>, tensor<2x5xi64>
  return %v, %i : tensor<2x5xf32>, tensor<2x5xi64>
}

// -----

func.func @topk_shape(%a: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x3xi64>) {
  // expected-error @+1 {{indices must have the input's shape with k along the axis}}
  %v, %i = transformer.topk %a {axis = -1 : i64, k = 2 : i64, largest = false} : tensor<2x4xf32> -> tensor<2x2xf32>, tensor<2x3xi64>
  return %v, %i : tensor<2x2xf32>, tensor<2x3xi64>
}

// -----

func.func @conv_too_small(%x: tensor<1x4x2x2xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x1x1xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{spatial dimension 0 of 2 (padded 2) is smaller than the kernel's span 3}}
  %0 = transformer.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x2x2xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x1x1xf32>
  return %0 : tensor<1x6x1x1xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x4x8xf32>, %w: tensor<6x4x3xf32>, %b: tensor<4xf32>) -> tensor<1x6x6xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{bias must be [6]}}
  %0 = transformer.conv %x, %w bias %b {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x4x8xf32>, tensor<6x4x3xf32>, tensor<4xf32>) -> tensor<1x6x6xf32>
  return %0 : tensor<1x6x6xf32>
}

// -----

func.func @gather_nd_tuple(%d: tensor<2x3xf32>, %i: tensor<4x3xi64>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{index tuples of 3 values do not fit data of rank 2 after 0 batch dimensions}}
  %0 = transformer.gather_nd %d[%i] : (tensor<2x3xf32>, tensor<4x3xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_nd_batch(%d: tensor<2x3x4xf32>, %i: tensor<3x1xi64>) -> tensor<3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{batch dimension 0 differs: 2 in data, 3 in indices}}
  %0 = transformer.gather_nd %d[%i] {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x1xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @scatter_nd_updates(%d: tensor<4x5xf32>, %i: tensor<3x1xi64>, %u: tensor<3x4xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{updates must be 'tensor<3x5xf32>', not 'tensor<3x4xf32>'}}
  %0 = transformer.scatter_nd %d[%i], %u : (tensor<4x5xf32>, tensor<3x1xi64>, tensor<3x4xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @check_indices_bounds(%i: tensor<3x2xi64>) {
  // expected-error @+1 {{has 3 bounds, which must be one or one per entry of the last dimension of 'tensor<3x2xi64>'}}
  %safe, %status = transformer.check_indices %i {bounds = array<i64: 4, 5, 6>} : tensor<3x2xi64>
  return
}

// -----

func.func @check_indices_empty_bound(%i: tensor<3xi32>) {
  // expected-error @+1 {{bound 0 admits no index}}
  %safe, %status = transformer.check_indices %i {bounds = array<i64: 0>} : tensor<3xi32>
  return
}

// -----

// expected-error @+1 {{index-check bound -2 admits no index}}
func.func @index_check_attr() attributes {checks = #transformer.index_check<op = "Gather", node = "g", source = "", bounds = 3, -2>} {
  return
}

// -----

func.func @check_indices_status_type(%i: tensor<3xi64>) {
  // expected-error @+1 {{status must be tensor<3xi64>, not 'tensor<4xi64>'}}
  %safe, %status = "transformer.check_indices"(%i) {bounds = array<i64: 5>} : (tensor<3xi64>) -> (tensor<3xi64>, tensor<4xi64>)
  return
}

// -----

func.func @check_indices_no_bounds(%i: tensor<3xi64>) {
  // expected-error @+1 {{needs at least one bound}}
  %safe, %status = transformer.check_indices %i {bounds = array<i64>} : tensor<3xi64>
  return
}

// -----

// expected-error @+1 {{an index check names the op it guards}}
func.func @index_check_no_op() attributes {checks = #transformer.index_check<op = "", node = "g", source = "", bounds = 3>} {
  return
}

// -----

func.func @scatter_nd_rank0_indices(%d: tensor<4xf32>, %i: tensor<i64>, %u: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{indices need rank 1 or more}}
  %0 = transformer.scatter_nd %d[%i], %u : (tensor<4xf32>, tensor<i64>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @scatter_nd_mean(%d: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no mean reduction}}
  %0 = transformer.scatter_nd %d[%i], %u {reduction = #transformer.reduce_kind<mean>} : (tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @linear_rank0(%x: tensor<f32>, %w: tensor<4x1xf32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %0 = transformer.linear %x, %w layout <kn> : (tensor<f32>, tensor<4x1xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @fp8_scale_max(%a: tensor<f32>) {
  // expected-error @+1 {{fp8_max must be positive and finite, not INF}}
  %s, %si = transformer.fp8_scale %a {fp8_max = 0x7F800000 : f32} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @fp8_scale_both(%a: tensor<f32>, %d: tensor<f32>) {
  // expected-error @+1 {{takes either an amax (current scaling) or a delayed scale, not both}}
  %s, %si = transformer.fp8_scale %a delayed %d {fp8_max = 4.480000e+02 : f32} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @fp8_scale_neither() {
  // expected-error @+1 {{takes either an amax (current scaling) or a delayed scale, not neither}}
  %s, %si = transformer.fp8_scale {fp8_max = 4.480000e+02 : f32} : () -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @fp8_scale_delayed_power_of_two(%d: tensor<f32>) {
  // expected-error @+1 {{power_of_two rounds block scaling's scales, not a delayed scale}}
  %s, %si = transformer.fp8_scale delayed %d {fp8_max = 4.480000e+02 : f32, power_of_two} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @fp8_scale_update_tensors(%h: tensor<4x3xf32>, %a: tensor<2xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{amax must hold one value per tensor (3), not 2}}
  %nh, %ns = transformer.fp8_scale_update %h, %a, %s {algorithm = #transformer.amax_algorithm<max>, fp8_max = 4.480000e+02 : f32, margin = 0 : i64} : (tensor<4x3xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @fp8_scale_update_max(%h: tensor<4x3xf32>, %a: tensor<3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{fp8_max must be positive and finite, not 0}}
  %nh, %ns = transformer.fp8_scale_update %h, %a, %s {algorithm = #transformer.amax_algorithm<max>, fp8_max = 0.0 : f32, margin = 0 : i64} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @fp8_scale_update_margin(%h: tensor<4x3xf32>, %a: tensor<3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{margin must be in [0, 64], not -1}}
  %nh, %ns = transformer.fp8_scale_update %h, %a, %s {algorithm = #transformer.amax_algorithm<max>, fp8_max = 448.0 : f32, margin = -1 : i64} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  return
}

// -----

// expected-error @+1 {{'func.func' op state 'fp8.scale' is argument 0 of type 'tensor<2xf32>' but its initial value has type 'tensor<3xf32>'}}
func.func @state_type(%s: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<0.0> : tensor<3xf32>, labels = []>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op state 'fp8.scale' is argument 0 of type 'memref<2xf32>' but its initial value has type 'tensor<3xf32>'}}
func.func @state_buffer_type(%s: memref<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<0.0> : tensor<3xf32>, labels = []>}) {
  return
}

// -----

// expected-error @+1 {{model state 'fp8.scale' has 1 labels for a last dimension of 2}}
func.func @state_labels(%s: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<0.0> : tensor<2xf32>, labels = ["a"]>}) {
  return
}

// -----

// expected-error @+1 {{FP8 state 'fp8.amax_history' (fp8_amax_history) must have rank 2}}
func.func @state_rank(%s: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.amax_history", kind = <fp8_amax_history>, initial = dense<0.0> : tensor<2xf32>, labels = []>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result 0 is the next value of state 'fp8.scale', which no argument is}}
func.func @next_state_unknown(%s: tensor<2xf32>) -> (tensor<2xf32> {transformer.next_state = "fp8.scale"}) {
  return %s : tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 0, the next value of state 'fp8.scale', has type 'tensor<3xf32>', not the state's 'tensor<2xf32>'}}
func.func @next_state_type(%s: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<0.0> : tensor<2xf32>, labels = []>}, %t: tensor<3xf32>) -> (tensor<3xf32> {transformer.next_state = "fp8.scale"}) {
  return %t : tensor<3xf32>
}

// -----

func.func @quantize_block_scale_shape(%x: tensor<4x256xbf16>, %s: tensor<4x3xf32>) {
  // expected-error @+1 {{scale type 'tensor<4x3xf32>' is neither one scale (rank 0) nor one per block of the rows of the input 'tensor<4x256xbf16>' ([..., G] with G dividing the last dimension)}}
  %0 = transformer.quantize %x, %s {multiply} : (tensor<4x256xbf16>, tensor<4x3xf32>) -> tensor<4x256xf8E4M3FN>
  return
}

// -----

func.func @linear_one_block_scale(%x: tensor<4x256xf8E4M3FN>, %w: tensor<32x256xf8E4M3FN>, %xs: tensor<4x2xf32>, %ws: tensor<f32>) {
  // expected-error @+1 {{row or block scaling needs both input_scale (one per row or per 1x128 block) and weight_scale (one per channel or per 128x128 block)}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <nk> : (tensor<4x256xf8E4M3FN>, tensor<32x256xf8E4M3FN>, tensor<4x2xf32>, tensor<f32>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @linear_block_kn(%x: tensor<4x256xf8E4M3FN>, %w: tensor<256x32xf8E4M3FN>, %xs: tensor<4x2xf32>, %ws: tensor<1x2xf32>) {
  // expected-error @+1 {{row or block scaling needs the weight laid out nk}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <kn> : (tensor<4x256xf8E4M3FN>, tensor<256x32xf8E4M3FN>, tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @linear_block_k(%x: tensor<4x192xf8E4M3FN>, %w: tensor<32x192xf8E4M3FN>, %xs: tensor<4x2xf32>, %ws: tensor<1x2xf32>) {
  // expected-error @+1 {{block scaling needs K = 192 to be a multiple of 128}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <nk> : (tensor<4x192xf8E4M3FN>, tensor<32x192xf8E4M3FN>, tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @linear_row_input_scale(%x: tensor<2x4x256xf8E4M3FN>, %w: tensor<32x256xf8E4M3FN>, %xs: tensor<8x1xf32>, %ws: tensor<32xf32>) {
  // expected-error @+1 {{input_scale type 'tensor<8x1xf32>' is not one scale per row of the input}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <nk> : (tensor<2x4x256xf8E4M3FN>, tensor<32x256xf8E4M3FN>, tensor<8x1xf32>, tensor<32xf32>) -> tensor<2x4x32xbf16>
  return
}

// -----

func.func @linear_row_weight_scale(%x: tensor<4x256xf8E4M3FN>, %w: tensor<32x256xf8E4M3FN>, %xs: tensor<4x1xf32>, %ws: tensor<16xf32>) {
  // expected-error @+1 {{weight_scale type 'tensor<16xf32>' is not one scale per output channel (N = 32)}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <nk> : (tensor<4x256xf8E4M3FN>, tensor<32x256xf8E4M3FN>, tensor<4x1xf32>, tensor<16xf32>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @linear_row_kn(%x: tensor<4x256xf8E4M3FN>, %w: tensor<256x32xf8E4M3FN>, %xs: tensor<4x1xf32>, %ws: tensor<32xf32>) {
  // expected-error @+1 {{row or block scaling needs the weight laid out nk}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <kn> : (tensor<4x256xf8E4M3FN>, tensor<256x32xf8E4M3FN>, tensor<4x1xf32>, tensor<32xf32>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @linear_weight_scale_rank(%x: tensor<4x256xf8E4M3FN>, %w: tensor<32x256xf8E4M3FN>, %xs: tensor<4x1xf32>, %ws: tensor<1x1x1xf32>) {
  // expected-error @+1 {{row or block scaling needs both input_scale}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <nk> : (tensor<4x256xf8E4M3FN>, tensor<32x256xf8E4M3FN>, tensor<4x1xf32>, tensor<1x1x1xf32>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @linear_row_fp8_output(%x: tensor<4x256xf8E4M3FN>, %w: tensor<32x256xf8E4M3FN>, %xs: tensor<4x1xf32>, %ws: tensor<32xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{writes fp8 but its operands are not fp8 with per-tensor scales}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws output_scale %s layout <nk> : (tensor<4x256xf8E4M3FN>, tensor<32x256xf8E4M3FN>, tensor<4x1xf32>, tensor<32xf32>, tensor<f32>) -> tensor<4x32xf8E4M3FN>
  return
}

// -----

func.func @linear_block_input_scale(%x: tensor<4x256xf8E4M3FN>, %w: tensor<32x256xf8E4M3FN>, %xs: tensor<2x4xf32>, %ws: tensor<1x2xf32>) {
  // expected-error @+1 {{input_scale type 'tensor<2x4xf32>' is not one scale per 1x128 block of the input}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <nk> : (tensor<4x256xf8E4M3FN>, tensor<32x256xf8E4M3FN>, tensor<2x4xf32>, tensor<1x2xf32>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @linear_block_weight_scale(%x: tensor<4x256xf8E4M3FN>, %w: tensor<160x256xf8E4M3FN>, %xs: tensor<4x2xf32>, %ws: tensor<1x2xf32>) {
  // expected-error @+1 {{weight_scale type 'tensor<1x2xf32>' is not one scale per 128x128 block of the weight}}
  %0 = transformer.linear %x, %w input_scale %xs weight_scale %ws layout <nk> : (tensor<4x256xf8E4M3FN>, tensor<160x256xf8E4M3FN>, tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x160xbf16>
  return
}

// -----

func.func @block_amax_multiple(%x: tensor<4x200xbf16>) {
  // expected-error @+1 {{needs a last dimension that is a multiple of the block size 128, not 'tensor<4x200xbf16>'}}
  %0 = transformer.block_amax %x {block_size = 128 : i64} : tensor<4x200xbf16> -> tensor<4x1xf32>
  return
}

// -----

func.func @block_amax_result(%x: tensor<4x256xbf16>) {
  // expected-error @+1 {{result type 'tensor<2x4xf32>' is not one value per block of the input}}
  %0 = transformer.block_amax %x {block_size = 128 : i64} : tensor<4x256xbf16> -> tensor<2x4xf32>
  return
}

// -----

func.func @fp8_scale_block_delayed(%d: tensor<f32>) {
  // expected-error @+1 {{scale and scale_inv must have the type of its delayed scale 'tensor<f32>'}}
  %s, %si = transformer.fp8_scale delayed %d {fp8_max = 448.0 : f32} : (tensor<f32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
  return
}

// -----

func.func @fp8_scale_types(%a: tensor<4x2xf32>) {
  // expected-error @+1 {{scale and scale_inv must have the type of its amax 'tensor<4x2xf32>'}}
  %s, %si = transformer.fp8_scale %a {fp8_max = 448.0 : f32} : (tensor<4x2xf32>) -> (tensor<f32>, tensor<4x2xf32>)
  return
}
