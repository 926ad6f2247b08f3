// RUN: mte-opt %s -split-input-file -mte-recognize-attention -canonicalize | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-recognize-attention -canonicalize | FileCheck %s --check-prefix=ABSENT

// BERT as TorchScript exports it: heads split from the projections, K
// transposed straight to [B, H, D, S], Div by sqrt(d), additive padding mask.
// CHECK-LABEL: func @bert_torchscript
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x64xf32>, %[[K:.*]]: tensor<2x8x64xf32>, %[[V:.*]]: tensor<2x8x64xf32>, %[[M:.*]]: tensor<2x1x1x8xf32>)
// CHECK: %[[A:.*]] = transformer.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f32}
// CHECK-NEXT: return %[[A]] : tensor<2x8x64xf32>
func.func @bert_torchscript(%q: tensor<2x8x64xf32>, %k: tensor<2x8x64xf32>, %v: tensor<2x8x64xf32>, %mask: tensor<2x1x1x8xf32>) -> tensor<2x8x64xf32> {
  %c4 = arith.constant dense<4.0> : tensor<f32>
  %k0 = transformer.reshape %k : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %kt = transformer.transpose %k0 [0, 2, 3, 1] : tensor<2x8x4x16xf32> -> tensor<2x4x16x8xf32>
  %v0 = transformer.reshape %v : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %v1 = transformer.transpose %v0 [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %q0 = transformer.reshape %q : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %q1 = transformer.transpose %q0 [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %s = transformer.matmul %q1, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %s1 = transformer.div %s, %c4 : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %s2 = transformer.add %s1, %mask : (tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x8xf32>
  %p = transformer.softmax %s2 : tensor<2x4x8x8xf32>
  %o = transformer.matmul %p, %v1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %o1 = transformer.transpose %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %o2 = transformer.reshape %o1 : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  return %o2 : tensor<2x8x64xf32>
}

// -----

// GPT-2 as TorchScript exports it: the causal mask is a slice of a boolean
// buffer (a constant after folding) used in Where(mask, s, finfo.min).
// ABSENT-LABEL: func @where_causal_constant
// ABSENT-NOT: transformer.where
// ABSENT: {{^}}}
// CHECK-LABEL: func @where_causal_constant
// CHECK: transformer.attention %arg0, %arg1, %arg2 {causal, num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 1.250000e-01 : f32}
func.func @where_causal_constant(%q: tensor<1x4x32xf32>, %k: tensor<1x4x32xf32>, %v: tensor<1x4x32xf32>) -> tensor<1x4x32xf32> {
  %keep = arith.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %c8 = arith.constant dense<8.0> : tensor<f32>
  %q0 = transformer.reshape %q : tensor<1x4x32xf32> -> tensor<1x4x2x16xf32>
  %q1 = transformer.transpose %q0 [0, 2, 1, 3] : tensor<1x4x2x16xf32> -> tensor<1x2x4x16xf32>
  %k0 = transformer.reshape %k : tensor<1x4x32xf32> -> tensor<1x4x2x16xf32>
  %kt = transformer.transpose %k0 [0, 2, 3, 1] : tensor<1x4x2x16xf32> -> tensor<1x2x16x4xf32>
  %v0 = transformer.reshape %v : tensor<1x4x32xf32> -> tensor<1x4x2x16xf32>
  %v1 = transformer.transpose %v0 [0, 2, 1, 3] : tensor<1x4x2x16xf32> -> tensor<1x2x4x16xf32>
  %s = transformer.matmul %q1, %kt : (tensor<1x2x4x16xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x4x4xf32>
  %s1 = transformer.div %s, %c8 : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %s2 = transformer.where %keep, %s1, %min : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = transformer.softmax %s2 : tensor<1x2x4x4xf32>
  %o = transformer.matmul %p, %v1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  %o1 = transformer.transpose %o [0, 2, 1, 3] : tensor<1x2x4x16xf32> -> tensor<1x4x2x16xf32>
  %o2 = transformer.reshape %o1 : tensor<1x4x2x16xf32> -> tensor<1x4x32xf32>
  return %o2 : tensor<1x4x32xf32>
}

// -----

// Llama as TorchScript exports it: the causal mask built at run time from
// Trilu of a finfo.min matrix, sliced to the key length and added; GQA with
// K and V repeated through Unsqueeze/Expand/Reshape; K transposed on its
// last two dimensions.
// ABSENT-LABEL: func @llama_trilu_gqa
// ABSENT-NOT: transformer.expand
// ABSENT-NOT: transformer.trilu
// ABSENT: {{^}}}
// CHECK-LABEL: func @llama_trilu_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x4x8xf32>, %[[K:.*]]: tensor<2x2x4x8xf32>, %[[V:.*]]: tensor<2x2x4x8xf32>)
// CHECK: %[[QT:.*]] = transformer.transpose %[[Q]] [0, 2, 1, 3]
// CHECK: %[[QP:.*]] = transformer.reshape %[[QT]] : tensor<2x4x4x8xf32> -> tensor<2x4x32xf32>
// CHECK: %[[KT:.*]] = transformer.transpose %[[K]] [0, 2, 1, 3]
// CHECK: %[[KP:.*]] = transformer.reshape %[[KT]] : tensor<2x4x2x8xf32> -> tensor<2x4x16xf32>
// CHECK: %[[VT:.*]] = transformer.transpose %[[V]] [0, 2, 1, 3]
// CHECK: %[[VP:.*]] = transformer.reshape %[[VT]] : tensor<2x4x2x8xf32> -> tensor<2x4x16xf32>
// CHECK: transformer.attention %[[QP]], %[[KP]], %[[VP]] {causal, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.353553385 : f32}
func.func @llama_trilu_gqa(%q: tensor<2x4x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x4x4x8xf32> {
  %full = arith.constant dense<-3.40282347E+38> : tensor<4x5xf32>
  %scale = arith.constant dense<2.82842708> : tensor<f32>
  %upper = transformer.trilu %full {upper = true, k = 1} : tensor<4x5xf32>
  %m0 = transformer.reshape %upper : tensor<4x5xf32> -> tensor<1x1x4x5xf32>
  %m1 = transformer.expand %m0 : tensor<1x1x4x5xf32> -> tensor<2x1x4x5xf32>
  %mask = transformer.slice %m1 {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 1, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x1x4x5xf32> -> tensor<2x1x4x4xf32>
  %k0 = transformer.reshape %k : tensor<2x2x4x8xf32> -> tensor<2x2x1x4x8xf32>
  %k1 = transformer.expand %k0 : tensor<2x2x1x4x8xf32> -> tensor<2x2x2x4x8xf32>
  %k2 = transformer.reshape %k1 : tensor<2x2x2x4x8xf32> -> tensor<2x4x4x8xf32>
  %kt = transformer.transpose %k2 [0, 1, 3, 2] : tensor<2x4x4x8xf32> -> tensor<2x4x8x4xf32>
  %v0 = transformer.reshape %v : tensor<2x2x4x8xf32> -> tensor<2x2x1x4x8xf32>
  %v1 = transformer.expand %v0 : tensor<2x2x1x4x8xf32> -> tensor<2x2x2x4x8xf32>
  %v2 = transformer.reshape %v1 : tensor<2x2x2x4x8xf32> -> tensor<2x4x4x8xf32>
  %s = transformer.matmul %q, %kt : (tensor<2x4x4x8xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x4x4xf32>
  %s1 = transformer.div %s, %scale : (tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x4x4xf32>
  %s2 = transformer.add %s1, %mask : (tensor<2x4x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x4x4x4xf32>
  %p = transformer.softmax %s2 : tensor<2x4x4x4xf32>
  %o = transformer.matmul %p, %v2 : (tensor<2x4x4x4xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  return %o : tensor<2x4x4x8xf32>
}

// -----

// Multi-query attention (Gemma, Falcon) as TorchScript exports it: with one
// KV head the head view of the packed key, [B, S, D] -> [B, 1, S, D], is a
// reshape (the transpose moves no element and canonicalization drops it),
// and repeat_kv's unsqueeze folds into it. The repeat is peeled anyway:
// one KV head, read packed, and no expand left.
// ABSENT-LABEL: func @multi_query_folded_view
// ABSENT-NOT: transformer.expand
// ABSENT-NOT: transformer.transpose
// ABSENT: {{^}}}
// CHECK-LABEL: func @multi_query_folded_view
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x32xf32>, %[[K:.*]]: tensor<2x4x8xf32>, %[[V:.*]]: tensor<2x4x8xf32>)
// CHECK: transformer.attention %[[Q]], %[[K]], %[[V]] {causal, num_heads = 4 : i64, num_kv_heads = 1 : i64, scale = 0.353553385 : f32} : (tensor<2x4x32xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x32xf32>
func.func @multi_query_folded_view(%q: tensor<2x4x32xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x32xf32> {
  %causal = arith.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %scale = arith.constant dense<2.82842708> : tensor<f32>
  %q0 = transformer.reshape %q : tensor<2x4x32xf32> -> tensor<2x4x4x8xf32>
  %q1 = transformer.transpose %q0 [0, 2, 1, 3] : tensor<2x4x4x8xf32> -> tensor<2x4x4x8xf32>
  %k0 = transformer.reshape %k : tensor<2x4x8xf32> -> tensor<2x1x1x4x8xf32>
  %k1 = transformer.expand %k0 : tensor<2x1x1x4x8xf32> -> tensor<2x1x4x4x8xf32>
  %k2 = transformer.reshape %k1 : tensor<2x1x4x4x8xf32> -> tensor<2x4x4x8xf32>
  %kt = transformer.transpose %k2 [0, 1, 3, 2] : tensor<2x4x4x8xf32> -> tensor<2x4x8x4xf32>
  %v0 = transformer.reshape %v : tensor<2x4x8xf32> -> tensor<2x1x1x4x8xf32>
  %v1 = transformer.expand %v0 : tensor<2x1x1x4x8xf32> -> tensor<2x1x4x4x8xf32>
  %v2 = transformer.reshape %v1 : tensor<2x1x4x4x8xf32> -> tensor<2x4x4x8xf32>
  %s = transformer.matmul %q1, %kt : (tensor<2x4x4x8xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x4x4xf32>
  %s1 = transformer.div %s, %scale : (tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x4x4xf32>
  %s2 = transformer.add %s1, %causal : (tensor<2x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x4x4x4xf32>
  %p = transformer.softmax %s2 : tensor<2x4x4x4xf32>
  %o = transformer.matmul %p, %v2 : (tensor<2x4x4x4xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  %o1 = transformer.transpose %o [0, 2, 1, 3] : tensor<2x4x4x8xf32> -> tensor<2x4x4x8xf32>
  %o2 = transformer.reshape %o1 : tensor<2x4x4x8xf32> -> tensor<2x4x32xf32>
  return %o2 : tensor<2x4x32xf32>
}

// -----

// A causal mask from Range + comparison (key index > query index hides the
// key) in Where(hidden, -inf, s); the diagonal aligned to the bottom right
// when the query is shorter than the keys (a KV cache).
// ABSENT-LABEL: func @range_compare_kv_cache
// ABSENT-NOT: transformer.compare
// ABSENT: {{^}}}
// CHECK-LABEL: func @range_compare_kv_cache
// CHECK: transformer.attention {{.*}} {causal, num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 1.000000e+00 : f32}
func.func @range_compare_kv_cache(%q: tensor<1x1x2x4xf32>, %kt: tensor<1x1x4x3xf32>, %v: tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32> {
  %zero = arith.constant dense<0> : tensor<i64>
  %one = arith.constant dense<1> : tensor<i64>
  %two = arith.constant dense<2> : tensor<i64>
  %three = arith.constant dense<3> : tensor<i64>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %keys = transformer.range %zero, %three, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %rows = transformer.range %one, %three, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2xi64>
  %col = transformer.reshape %rows : tensor<2xi64> -> tensor<2x1xi64>
  %hidden = transformer.compare <gt> %keys, %col : (tensor<3xi64>, tensor<2x1xi64>) -> tensor<2x3xi1>
  %s = transformer.matmul %q, %kt : (tensor<1x1x2x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x2x3xf32>
  %s1 = transformer.where %hidden, %ninf, %s : (tensor<2x3xi1>, tensor<f32>, tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xf32>
  %p = transformer.softmax %s1 {axis = 3} : tensor<1x1x2x3xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x2x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x2x4xf32>
  return %o : tensor<1x1x2x4xf32>
}

// -----

// The dynamo exporter's SDPA: Q and Kᵀ each scaled by sqrt(scale), Kᵀ built
// through [B*H, S, D], a boolean padding mask made additive, the IsNaN guard
// after the softmax.
// ABSENT-LABEL: func @sdpa_dynamo
// ABSENT-NOT: transformer.is_nan
// ABSENT: {{^}}}
// CHECK-LABEL: func @sdpa_dynamo
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x64xf32>, %[[K:.*]]: tensor<2x8x64xf32>, %[[V:.*]]: tensor<2x8x64xf32>, %[[M:.*]]: tensor<2x1x8x8xf32>)
// CHECK: transformer.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 2.500000e-01 : f32}
func.func @sdpa_dynamo(%q: tensor<2x8x64xf32>, %k: tensor<2x8x64xf32>, %v: tensor<2x8x64xf32>, %mask: tensor<2x1x8x8xf32>) -> tensor<2x8x64xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %q0 = transformer.reshape %q : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %q1 = transformer.transpose %q0 [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %q2 = transformer.mul %q1, %half : (tensor<2x4x8x16xf32>, tensor<f32>) -> tensor<2x4x8x16xf32>
  %k0 = transformer.reshape %k : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %k1 = transformer.transpose %k0 [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %k2 = transformer.reshape %k1 : tensor<2x4x8x16xf32> -> tensor<8x8x16xf32>
  %k3 = transformer.transpose %k2 [0, 2, 1] : tensor<8x8x16xf32> -> tensor<8x16x8xf32>
  %k4 = transformer.reshape %k3 : tensor<8x16x8xf32> -> tensor<2x4x16x8xf32>
  %k5 = transformer.mul %k4, %half : (tensor<2x4x16x8xf32>, tensor<f32>) -> tensor<2x4x16x8xf32>
  %s = transformer.matmul %q2, %k5 : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %s1 = transformer.add %s, %mask : (tensor<2x4x8x8xf32>, tensor<2x1x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = transformer.softmax %s1 : tensor<2x4x8x8xf32>
  %nan = transformer.is_nan %p : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xi1>
  %p1 = transformer.where %nan, %zero, %p : (tensor<2x4x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %v0 = transformer.reshape %v : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %v1 = transformer.transpose %v0 [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %o = transformer.matmul %p1, %v1 : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %o1 = transformer.transpose %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %o2 = transformer.reshape %o1 : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  return %o2 : tensor<2x8x64xf32>
}

// -----

// Input-dependent boolean masks stay operands: a keep mask as is, a hide
// mask (Where(m, -big, s)) negated.
// CHECK-LABEL: func @boolean_masks
// CHECK: transformer.attention {{.*}} mask %arg3 {num_heads = 1 : i64
// CHECK: %[[N:.*]] = transformer.not %arg3
// CHECK: transformer.attention {{.*}} mask %[[N]] {num_heads = 1 : i64
func.func @boolean_masks(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>, %m: tensor<1x1x4x4xi1>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.where %m, %s, %min : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s1 : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  %t = transformer.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %t1 = transformer.where %m, %min, %t : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %r = transformer.softmax %t1 : tensor<1x1x4x4xf32>
  %u = transformer.matmul %r, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o, %u : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// -----

// A constant mask that is not causal (here: one visible key hidden) stays a
// mask operand.
// ABSENT-LABEL: func @constant_not_causal
// ABSENT-NOT: causal
// ABSENT: {{^}}}
// CHECK-LABEL: func @constant_not_causal
// CHECK: transformer.attention {{.*}} mask %{{.*}} {num_heads = 1 : i64
func.func @constant_not_causal(%q: tensor<1x1x2x8xf32>, %kt: tensor<1x1x8x2xf32>, %v: tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xf32> {
  %mask = arith.constant dense<[[0.0, -3.40282347E+38], [-3.40282347E+38, 0.0]]> : tensor<2x2xf32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x2x8xf32>, tensor<1x1x8x2xf32>) -> tensor<1x1x2x2xf32>
  %s1 = transformer.add %mask, %s : (tensor<2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p = transformer.softmax %s1 : tensor<1x1x2x2xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x2x2xf32>, tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xf32>
  return %o : tensor<1x1x2x8xf32>
}

// -----

// The scores have another user: nothing may be fused.
// CHECK-LABEL: func @negative_scores_other_user
// CHECK-NOT: transformer.attention
func.func @negative_scores_other_user(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x4xf32>) {
  %c = arith.constant dense<0.5> : tensor<f32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.mul %s, %c : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s1 : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o, %s1 : tensor<1x1x4x8xf32>, tensor<1x1x4x4xf32>
}

// -----

// Softmax over the query axis is not attention.
// CHECK-LABEL: func @negative_softmax_axis
// CHECK-NOT: transformer.attention
func.func @negative_softmax_axis(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s {axis = 2} : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// A scale that is not a constant.
// CHECK-LABEL: func @negative_dynamic_scale
// CHECK-NOT: transformer.attention
func.func @negative_dynamic_scale(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>, %c: tensor<f32>) -> tensor<1x1x4x8xf32> {
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.div %s, %c : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s1 : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// A float mask added before the scale would have to be scaled as well.
// CHECK-LABEL: func @negative_mask_before_scale
// CHECK-NOT: transformer.attention
func.func @negative_mask_before_scale(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>, %m: tensor<1x1x4x4xf32>) -> tensor<1x1x4x8xf32> {
  %c = arith.constant dense<3.0> : tensor<f32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.add %s, %m : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %s2 = transformer.div %s1, %c : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s2 : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// Where with a fill that does not hide (-1 is an ordinary score).
// CHECK-LABEL: func @negative_fill_not_hidden
// CHECK-NOT: transformer.attention
func.func @negative_fill_not_hidden(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>, %m: tensor<1x1x4x4xi1>) -> tensor<1x1x4x8xf32> {
  %fill = arith.constant dense<-1.0> : tensor<f32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.where %m, %s, %fill : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s1 : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// A padding mask from an input merged with the causal one, as transformers
// builds it (and_masks of causal and padding, then Where(allowed, 0, min)
// added): the causal flag and a keep mask of the padding part, so that the
// fused kernels still run.
// CHECK-LABEL: func @causal_and_padding
// CHECK-SAME: %[[PAD:[a-z0-9]+]]: tensor<2x1x1x4xi1>)
// CHECK: transformer.attention {{.*}} mask %[[PAD]] {causal, num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 5.000000e-01 : f32}
func.func @causal_and_padding(%q: tensor<2x1x4x8xf32>, %kt: tensor<2x1x8x4xf32>, %v: tensor<2x1x4x8xf32>, %pad: tensor<2x1x1x4xi1>) -> tensor<2x1x4x8xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %causal = arith.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %allowed = transformer.and %causal, %pad : (tensor<4x4xi1>, tensor<2x1x1x4xi1>) -> tensor<2x1x4x4xi1>
  %mask = transformer.where %allowed, %zero, %min : (tensor<2x1x4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x4x4xf32>
  %s = transformer.matmul %q, %kt : (tensor<2x1x4x8xf32>, tensor<2x1x8x4xf32>) -> tensor<2x1x4x4xf32>
  %s1 = transformer.mul %s, %half : (tensor<2x1x4x4xf32>, tensor<f32>) -> tensor<2x1x4x4xf32>
  %s2 = transformer.add %s1, %mask : (tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x1x4x4xf32>
  %p = transformer.softmax %s2 : tensor<2x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<2x1x4x4xf32>, tensor<2x1x4x8xf32>) -> tensor<2x1x4x8xf32>
  return %o : tensor<2x1x4x8xf32>
}

// -----

// Two input-dependent conjuncts beside the causal one are ANDed into one
// keep mask.
// CHECK-LABEL: func @causal_and_two_masks
// CHECK: %[[BOTH:.*]] = transformer.and %arg3, %arg4
// CHECK: transformer.attention {{.*}} mask %[[BOTH]] {causal,
func.func @causal_and_two_masks(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>, %a: tensor<1x1x1x4xi1>, %b: tensor<1x1x4x4xi1>) -> tensor<1x1x4x8xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %causal = arith.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %ca = transformer.and %causal, %a : (tensor<4x4xi1>, tensor<1x1x1x4xi1>) -> tensor<1x1x4x4xi1>
  %allowed = transformer.and %ca, %b : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
  %mask = transformer.where %allowed, %zero, %min : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %s2 = transformer.add %s, %mask : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s2 : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// Near miss: the conjunct that is constant is not causal (one visible key
// hidden), so the merged mask stays one additive operand.
// CHECK-LABEL: func @and_not_causal
// CHECK: transformer.attention {{.*}} mask %{{.*}} {num_heads = 1 : i64
// CHECK-NOT: causal
func.func @and_not_causal(%q: tensor<1x1x2x8xf32>, %kt: tensor<1x1x8x2xf32>, %v: tensor<1x1x2x8xf32>, %pad: tensor<1x1x1x2xi1>) -> tensor<1x1x2x8xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %keep = arith.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
  %allowed = transformer.and %keep, %pad : (tensor<2x2xi1>, tensor<1x1x1x2xi1>) -> tensor<1x1x2x2xi1>
  %mask = transformer.where %allowed, %zero, %min : (tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x2x8xf32>, tensor<1x1x8x2xf32>) -> tensor<1x1x2x2xf32>
  %s1 = transformer.add %s, %mask : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p = transformer.softmax %s1 : tensor<1x1x2x2xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x2x2xf32>, tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xf32>
  return %o : tensor<1x1x2x8xf32>
}

// -----

// BART-era eager attention (Whisper under TorchScript): heads merged into
// the batch, bmm, softmax, bmm on [B * H, S, D], the mask added between
// views to [B, H, Sq, Skv] and back. The merges move past the products and
// the softmax and cancel.
// ABSENT-LABEL: func @merged_heads
// ABSENT-NOT: transformer.matmul
// ABSENT-NOT: transformer.softmax
// ABSENT: {{^}}}
// CHECK-LABEL: func @merged_heads
// CHECK: transformer.attention {{.*}} mask %arg3 {num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 1.000000e+00 : f32}
func.func @merged_heads(%q: tensor<2x4x32xf32>, %k: tensor<2x4x32xf32>, %v: tensor<2x4x32xf32>, %mask: tensor<2x1x4x4xf32>) -> tensor<2x4x32xf32> {
  %q0 = transformer.reshape %q : tensor<2x4x32xf32> -> tensor<2x4x2x16xf32>
  %q1 = transformer.transpose %q0 [0, 2, 1, 3] : tensor<2x4x2x16xf32> -> tensor<2x2x4x16xf32>
  %q2 = transformer.reshape %q1 : tensor<2x2x4x16xf32> -> tensor<4x4x16xf32>
  %k0 = transformer.reshape %k : tensor<2x4x32xf32> -> tensor<2x4x2x16xf32>
  %k1 = transformer.transpose %k0 [0, 2, 1, 3] : tensor<2x4x2x16xf32> -> tensor<2x2x4x16xf32>
  %k2 = transformer.reshape %k1 : tensor<2x2x4x16xf32> -> tensor<4x4x16xf32>
  %kt = transformer.transpose %k2 [0, 2, 1] : tensor<4x4x16xf32> -> tensor<4x16x4xf32>
  %v0 = transformer.reshape %v : tensor<2x4x32xf32> -> tensor<2x4x2x16xf32>
  %v1 = transformer.transpose %v0 [0, 2, 1, 3] : tensor<2x4x2x16xf32> -> tensor<2x2x4x16xf32>
  %v2 = transformer.reshape %v1 : tensor<2x2x4x16xf32> -> tensor<4x4x16xf32>
  %s = transformer.matmul %q2, %kt : (tensor<4x4x16xf32>, tensor<4x16x4xf32>) -> tensor<4x4x4xf32>
  %s4 = transformer.reshape %s : tensor<4x4x4xf32> -> tensor<2x2x4x4xf32>
  %m4 = transformer.add %s4, %mask : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %m3 = transformer.reshape %m4 : tensor<2x2x4x4xf32> -> tensor<4x4x4xf32>
  %p = transformer.softmax %m3 {axis = -1} : tensor<4x4x4xf32>
  %o = transformer.matmul %p, %v2 : (tensor<4x4x4xf32>, tensor<4x4x16xf32>) -> tensor<4x4x16xf32>
  %o4 = transformer.reshape %o : tensor<4x4x16xf32> -> tensor<2x2x4x16xf32>
  %o5 = transformer.transpose %o4 [0, 2, 1, 3] : tensor<2x2x4x16xf32> -> tensor<2x4x2x16xf32>
  %o6 = transformer.reshape %o5 : tensor<2x4x2x16xf32> -> tensor<2x4x32xf32>
  return %o6 : tensor<2x4x32xf32>
}

// -----

// The dynamo exporter's BERT mask: the padding mask expanded to [B, 1, Sq,
// Skv] before it is made additive. The op broadcasts its mask, so the
// arithmetic is redone on the [B, 1, 1, Skv] mask (a key-padding mask the
// fused kernels take).
// CHECK-LABEL: func @expanded_padding_mask
// CHECK-SAME: %[[PAD:[a-z0-9]+]]: tensor<2x1x1x4xf32>)
// CHECK: %[[INV:.*]] = transformer.sub %{{.*}}, %[[PAD]] : (tensor<f32>, tensor<2x1x1x4xf32>) -> tensor<2x1x1x4xf32>
// CHECK: %[[ADD:.*]] = transformer.mul %[[INV]], %{{.*}} : (tensor<2x1x1x4xf32>, tensor<f32>) -> tensor<2x1x1x4xf32>
// CHECK: transformer.attention {{.*}} mask %[[ADD]] {num_heads = 1 : i64
func.func @expanded_padding_mask(%q: tensor<2x1x4x8xf32>, %kt: tensor<2x1x8x4xf32>, %v: tensor<2x1x4x8xf32>, %pad: tensor<2x1x1x4xf32>) -> tensor<2x1x4x8xf32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %e = transformer.expand %pad : tensor<2x1x1x4xf32> -> tensor<2x1x4x4xf32>
  %inv = transformer.sub %one, %e : (tensor<f32>, tensor<2x1x4x4xf32>) -> tensor<2x1x4x4xf32>
  %mask = transformer.mul %inv, %min : (tensor<2x1x4x4xf32>, tensor<f32>) -> tensor<2x1x4x4xf32>
  %s = transformer.matmul %q, %kt : (tensor<2x1x4x8xf32>, tensor<2x1x8x4xf32>) -> tensor<2x1x4x4xf32>
  %s1 = transformer.add %s, %mask : (tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x1x4x4xf32>
  %p = transformer.softmax %s1 : tensor<2x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<2x1x4x4xf32>, tensor<2x1x4x8xf32>) -> tensor<2x1x4x8xf32>
  return %o : tensor<2x1x4x8xf32>
}

// -----

// transformers 5's traced causal mask when position_ids are given and no
// attention_mask: causal AND psm[b, q] == psm[b, kv], where psm (the
// packed-sequence indices) is the cumulative count of position jumps
// (CumSum) and the lookups are GatherNDs of broadcast index tensors. With
// positions 0..3 there is one sequence: the mask is exactly causal.
// CHECK-LABEL: func @packed_sequence_causal
// CHECK: transformer.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 1.000000e+00 : f32}
// CHECK-NOT: transformer.softmax
func.func @packed_sequence_causal(%q: tensor<1x1x4x4xf32>, %kt: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %pos = arith.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>
  %one = arith.constant dense<1> : tensor<i64>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %head = transformer.slice %pos {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<1x4xi64> -> tensor<1x1xi64>
  %first = transformer.sub %head, %one : (tensor<1x1xi64>, tensor<i64>) -> tensor<1x1xi64>
  %rest = transformer.slice %pos {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 3>, strides = array<i64: 1, 1>} : tensor<1x4xi64> -> tensor<1x3xi64>
  %prev = transformer.concat %first, %rest {axis = 1 : i64} : (tensor<1x1xi64>, tensor<1x3xi64>) -> tensor<1x4xi64>
  %diff = transformer.sub %pos, %prev : (tensor<1x4xi64>, tensor<1x4xi64>) -> tensor<1x4xi64>
  %step = transformer.compare <eq> %diff, %one : (tensor<1x4xi64>, tensor<i64>) -> tensor<1x4xi1>
  %jump = transformer.not %step : tensor<1x4xi1>
  %jumps = transformer.cast %jump : tensor<1x4xi1> to tensor<1x4xi64>
  %psm = transformer.cumsum %jumps {axis = 1 : i64} : tensor<1x4xi64>
  %qi = arith.constant dense<[[[[[0, 0]], [[0, 1]], [[0, 2]], [[0, 3]]]]]> : tensor<1x1x4x1x2xi64>
  %ki = arith.constant dense<[[[[[0, 0], [0, 1], [0, 2], [0, 3]]]]]> : tensor<1x1x1x4x2xi64>
  %pq = transformer.gather_nd %psm[%qi] : (tensor<1x4xi64>, tensor<1x1x4x1x2xi64>) -> tensor<1x1x4x1xi64>
  %pk = transformer.gather_nd %psm[%ki] : (tensor<1x4xi64>, tensor<1x1x1x4x2xi64>) -> tensor<1x1x1x4xi64>
  %same = transformer.compare <eq> %pq, %pk : (tensor<1x1x4x1xi64>, tensor<1x1x1x4xi64>) -> tensor<1x1x4x4xi1>
  %rows = arith.constant dense<[[[[0], [1], [2], [3]]]]> : tensor<1x1x4x1xi64>
  %cols = arith.constant dense<[[[[0, 1, 2, 3]]]]> : tensor<1x1x1x4xi64>
  %causal = transformer.compare <le> %cols, %rows : (tensor<1x1x1x4xi64>, tensor<1x1x4x1xi64>) -> tensor<1x1x4x4xi1>
  %keep = transformer.and %causal, %same : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
  %mask = transformer.where %keep, %zero, %ninf : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.add %s, %mask : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s1 {axis = 3} : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}

// -----

// Two packed sequences (positions 0, 1, 0, 1): the mask is block-causal,
// not causal. It stays the op's mask (the causal conjunct becomes the
// flag, the other the keep mask).
// CHECK-LABEL: func @packed_sequences_not_causal
// CHECK: transformer.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {causal
func.func @packed_sequences_not_causal(%q: tensor<1x1x4x4xf32>, %kt: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %psm = arith.constant dense<[[0, 0, 1, 1]]> : tensor<1x4xi64>
  %plus = arith.constant dense<[[1, 1, 0, 0]]> : tensor<1x4xi64>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %jumps = transformer.cumsum %psm {axis = 1 : i64, exclusive, reverse} : tensor<1x4xi64>
  %ids = transformer.add %jumps, %plus : (tensor<1x4xi64>, tensor<1x4xi64>) -> tensor<1x4xi64>
  %qi = arith.constant dense<[[[[[0, 0]], [[0, 1]], [[0, 2]], [[0, 3]]]]]> : tensor<1x1x4x1x2xi64>
  %ki = arith.constant dense<[[[[[0, 0], [0, 1], [0, 2], [0, 3]]]]]> : tensor<1x1x1x4x2xi64>
  %pq = transformer.gather_nd %ids[%qi] : (tensor<1x4xi64>, tensor<1x1x4x1x2xi64>) -> tensor<1x1x4x1xi64>
  %pk = transformer.gather_nd %ids[%ki] : (tensor<1x4xi64>, tensor<1x1x1x4x2xi64>) -> tensor<1x1x1x4xi64>
  %same = transformer.compare <eq> %pq, %pk : (tensor<1x1x4x1xi64>, tensor<1x1x1x4xi64>) -> tensor<1x1x4x4xi1>
  %rows = arith.constant dense<[[[[0], [1], [2], [3]]]]> : tensor<1x1x4x1xi64>
  %cols = arith.constant dense<[[[[0, 1, 2, 3]]]]> : tensor<1x1x1x4xi64>
  %causal = transformer.compare <le> %cols, %rows : (tensor<1x1x1x4xi64>, tensor<1x1x4x1xi64>) -> tensor<1x1x4x4xi1>
  %keep = transformer.and %causal, %same : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
  %mask = transformer.where %keep, %zero, %ninf : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.add %s, %mask : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s1 {axis = 3} : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}

// -----

// Gemma 2's attention logit softcapping, cap * tanh(scores / cap), between
// the scale and the mask: the op's softcap. The cap's reciprocal as a
// product works too.
// CHECK-LABEL: func @softcap
// CHECK: transformer.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 2.500000e-01 : f32, softcap = 5.000000e+01 : f32}
// CHECK: transformer.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 2.500000e-01 : f32, softcap = 5.000000e+01 : f32}
func.func @softcap(%q: tensor<1x1x4x4xf32>, %kt: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %scale = arith.constant dense<0.25> : tensor<f32>
  %cap = arith.constant dense<50.0> : tensor<f32>
  %inv = arith.constant dense<0.02> : tensor<f32>
  %mask = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.mul %s, %scale : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %s2 = transformer.div %s1, %cap : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %s3 = transformer.tanh %s2 : tensor<1x1x4x4xf32>
  %s4 = transformer.mul %s3, %cap : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %s5 = transformer.add %s4, %mask : (tensor<1x1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s5 {axis = 3} : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %t = transformer.matmul %q, %kt : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %t1 = transformer.mul %t, %scale : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %t2 = transformer.mul %inv, %t1 : (tensor<f32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %t3 = transformer.tanh %t2 : tensor<1x1x4x4xf32>
  %t4 = transformer.mul %cap, %t3 : (tensor<f32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %t5 = transformer.add %mask, %t4 : (tensor<4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %tp = transformer.softmax %t5 {axis = 3} : tensor<1x1x4x4xf32>
  %to = transformer.matmul %tp, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o, %to : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// negative_: a mask under the softcap would be capped (-inf becomes -cap,
// which does not hide), a scale above it would scale the capped scores,
// and the cap and the divisor must agree: none of these is the op.
// ABSENT-LABEL: func @negative_softcap
// ABSENT-NOT: transformer.attention
// ABSENT: {{^}}}
// CHECK-LABEL: func @negative_softcap
func.func @negative_softcap(%q: tensor<1x1x4x4xf32>, %kt: tensor<1x1x4x4xf32>, %v: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %cap = arith.constant dense<50.0> : tensor<f32>
  %other = arith.constant dense<30.0> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %mask = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %s = transformer.matmul %q, %kt : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = transformer.add %s, %mask : (tensor<1x1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x1x4x4xf32>
  %s2 = transformer.div %s1, %cap : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %s3 = transformer.tanh %s2 : tensor<1x1x4x4xf32>
  %s4 = transformer.mul %s3, %cap : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %p = transformer.softmax %s4 {axis = 3} : tensor<1x1x4x4xf32>
  %o = transformer.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %t = transformer.matmul %q, %kt : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %t2 = transformer.div %t, %cap : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %t3 = transformer.tanh %t2 : tensor<1x1x4x4xf32>
  %t4 = transformer.mul %t3, %cap : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %t5 = transformer.mul %t4, %two : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %tp = transformer.softmax %t5 {axis = 3} : tensor<1x1x4x4xf32>
  %to = transformer.matmul %tp, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %u = transformer.matmul %q, %kt : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %u2 = transformer.div %u, %other : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %u3 = transformer.tanh %u2 : tensor<1x1x4x4xf32>
  %u4 = transformer.mul %u3, %cap : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %up = transformer.softmax %u4 {axis = 3} : tensor<1x1x4x4xf32>
  %uo = transformer.matmul %up, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o, %to, %uo : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}
