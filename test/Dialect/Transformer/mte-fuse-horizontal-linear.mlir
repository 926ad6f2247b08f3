// RUN: mte-opt %s -split-input-file -mte-fuse-horizontal-linear | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-fuse-horizontal-linear | FileCheck %s --check-prefix=ABSENT

// Q, K and V projections of one input, nn.Linear layout ([N, K]), K and V
// narrower as under GQA: the weights concatenate by rows, the biases (one a
// splat) likewise, and a split hands back the three results.
// ABSENT-LABEL: func @qkv_nk
// ABSENT-COUNT-1: transformer.linear
// ABSENT-NOT: transformer.linear
// ABSENT: {{^}}}
// CHECK-LABEL: func @qkv_nk
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00, 9.000000e+00], [1.000000e+01, 1.100000e+01, 1.200000e+01]]> : tensor<4x3xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[5.000000e-01, 1.500000e+00, 2.500000e+00, 3.500000e+00]> : tensor<4xf32>
// CHECK: %[[Y:.*]] = transformer.linear %[[X]], %[[W]] bias %[[B]] layout <nk> : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[S:.*]]:3 = transformer.split %[[Y]] {axis = 1 : i64, sizes = array<i64: 2, 1, 1>} : tensor<2x4xf32> -> tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1, %[[S]]#2
func.func @qkv_nk(%x: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %wq = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %wk = arith.constant dense<[[7.0, 8.0, 9.0]]> : tensor<1x3xf32>
  %wv = arith.constant dense<[[10.0, 11.0, 12.0]]> : tensor<1x3xf32>
  %bq = arith.constant dense<[0.5, 1.5]> : tensor<2xf32>
  %bk = arith.constant dense<2.5> : tensor<1xf32>
  %bv = arith.constant dense<3.5> : tensor<1xf32>
  %q = transformer.linear %x, %wq bias %bq layout <nk> : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %k = transformer.linear %x, %wk bias %bk layout <nk> : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xf32>) -> tensor<2x1xf32>
  %v = transformer.linear %x, %wv bias %bv layout <nk> : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xf32>) -> tensor<2x1xf32>
  return %q, %k, %v : tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

// ONNX MatMul layout ([K, N]): the weights concatenate by columns, row by
// row; a splat weight is expanded.
// CHECK-LABEL: func @columns_kn
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 9.000000e+00], [3.000000e+00, 4.000000e+00, 9.000000e+00]]> : tensor<2x3xf32>
// CHECK: %[[Y:.*]] = transformer.linear %arg0, %[[W]] layout <kn> : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[S:.*]]:2 = transformer.split %[[Y]] {axis = 1 : i64, sizes = array<i64: 2, 1>}
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1
func.func @columns_kn(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x1xf32>) {
  %w0 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w1 = arith.constant dense<9.0> : tensor<2x1xf32>
  %a = transformer.linear %x, %w0 layout <kn> : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %b = transformer.linear %x, %w1 layout <kn> : (tensor<4x2xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  return %a, %b : tensor<4x2xf32>, tensor<4x1xf32>
}

// -----

// Llama's gate and up projections, f16 weights in resource blobs (as the
// importer stores them), both [K, N] = [2, 2]: the fused blob holds row 0 of
// both (1 2, 3 4), then row 1 (5 6, 7 8), bytes copied unconverted. The
// results come back in block order, and the fused linear sits where the
// first one did.
// CHECK-LABEL: func @gate_up_f16_resource
// CHECK: %[[W:.*]] = arith.constant dense_resource<fused_weight> : tensor<2x4xf16>
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %arg0, %[[W]] layout <kn> : (tensor<3x2xf16>, tensor<2x4xf16>) -> tensor<3x4xf16>
// CHECK-NEXT: %[[S:.*]]:2 = transformer.split %[[Y]] {axis = 1 : i64, sizes = array<i64: 2, 2>} : tensor<3x4xf16> -> tensor<3x2xf16>, tensor<3x2xf16>
// CHECK-NEXT: %[[N:.*]] = transformer.neg %[[S]]#0
// CHECK-NEXT: transformer.swiglu %[[N]], %[[S]]#1
// CHECK: fused_weight: "0x02000000003C0040004200440045004600470048"
func.func @gate_up_f16_resource(%x: tensor<3x2xf16>) -> tensor<3x2xf16> {
  %wg = arith.constant dense_resource<gate> : tensor<2x2xf16>
  %wu = arith.constant dense_resource<up> : tensor<2x2xf16>
  %g = transformer.linear %x, %wg layout <kn> : (tensor<3x2xf16>, tensor<2x2xf16>) -> tensor<3x2xf16>
  %n = transformer.neg %g : tensor<3x2xf16>
  %u = transformer.linear %x, %wu layout <kn> : (tensor<3x2xf16>, tensor<2x2xf16>) -> tensor<3x2xf16>
  %y = transformer.swiglu %n, %u : tensor<3x2xf16>
  return %y : tensor<3x2xf16>
}

{-#
  dialect_resources: {
    builtin: {
      gate: "0x02000000003C004000450046",
      up: "0x020000000042004400470048"
    }
  }
#-}

// -----

// bf16 [N, K] weights, one inline and one a resource blob: the result is a
// blob, the rows of the inline one first.
// CHECK-LABEL: func @bf16_mixed_storage
// CHECK: arith.constant dense_resource<fused_weight> : tensor<3x2xbf16>
// CHECK: fused_weight: "0x02000000803F0040404080400000C03F"
func.func @bf16_mixed_storage(%x: tensor<5x2xbf16>) -> (tensor<5x1xbf16>, tensor<5x2xbf16>) {
  %w0 = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xbf16>
  %w1 = arith.constant dense_resource<w1> : tensor<2x2xbf16>
  %a = transformer.linear %x, %w0 layout <nk> : (tensor<5x2xbf16>, tensor<1x2xbf16>) -> tensor<5x1xbf16>
  %b = transformer.linear %x, %w1 layout <nk> : (tensor<5x2xbf16>, tensor<2x2xbf16>) -> tensor<5x2xbf16>
  return %a, %b : tensor<5x1xbf16>, tensor<5x2xbf16>
}

{-#
  dialect_resources: {
    builtin: {
      w1: "0x02000000404080400000C03F"
    }
  }
#-}

// -----

// Only the linears that agree merge: the two with a bias, not the one
// without, which stays where it was.
// CHECK-LABEL: func @partition
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00], [2.000000e+00]]> : tensor<2x1xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = transformer.linear %arg0, %[[W]] bias %[[B]] layout <nk>
// CHECK-NEXT: %[[S:.*]]:2 = transformer.split %[[Y]]
// CHECK-NEXT: %[[C:.*]] = transformer.linear %arg0, %{{.*}} layout <nk> :
// CHECK-NEXT: return %[[S]]#0, %[[C]], %[[S]]#1
func.func @partition(%x: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %w0 = arith.constant dense<1.0> : tensor<1x1xf32>
  %w1 = arith.constant dense<2.0> : tensor<1x1xf32>
  %w2 = arith.constant dense<3.0> : tensor<1x1xf32>
  %b0 = arith.constant dense<0.1> : tensor<1xf32>
  %b1 = arith.constant dense<0.2> : tensor<1xf32>
  %a = transformer.linear %x, %w0 bias %b0 layout <nk> : (tensor<4x1xf32>, tensor<1x1xf32>, tensor<1xf32>) -> tensor<4x1xf32>
  %c = transformer.linear %x, %w2 layout <nk> : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %b = transformer.linear %x, %w1 bias %b1 layout <nk> : (tensor<4x1xf32>, tensor<1x1xf32>, tensor<1xf32>) -> tensor<4x1xf32>
  return %a, %c, %b : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// negative_: the weights are not constants.
// ABSENT-LABEL: func @negative_weight_argument
// ABSENT-NOT: transformer.split
// ABSENT-COUNT-2: transformer.linear
// ABSENT-NOT: transformer.linear
// ABSENT-NOT: transformer.split
// ABSENT: {{^}}}
// CHECK-LABEL: func @negative_weight_argument
// CHECK-COUNT-2: transformer.linear
func.func @negative_weight_argument(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w1 = arith.constant dense<1.0> : tensor<8x8xf32>
  %a = transformer.linear %x, %w0 layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = transformer.linear %x, %w1 layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// negative_: one has a bias, the other none.
// ABSENT-LABEL: func @negative_bias_mismatch
// ABSENT-NOT: transformer.split
// ABSENT-COUNT-2: transformer.linear
// ABSENT-NOT: transformer.linear
// ABSENT-NOT: transformer.split
// ABSENT: {{^}}}
// CHECK-LABEL: func @negative_bias_mismatch
// CHECK-COUNT-2: transformer.linear
func.func @negative_bias_mismatch(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = arith.constant dense<1.0> : tensor<8x8xf32>
  %bias = arith.constant dense<1.0> : tensor<8xf32>
  %a = transformer.linear %x, %w bias %bias layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %b = transformer.linear %x, %w layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// negative_: the weight layouts differ.
// ABSENT-LABEL: func @negative_layout_mismatch
// ABSENT-NOT: transformer.split
// ABSENT-COUNT-2: transformer.linear
// ABSENT-NOT: transformer.linear
// ABSENT-NOT: transformer.split
// ABSENT: {{^}}}
// CHECK-LABEL: func @negative_layout_mismatch
// CHECK-COUNT-2: transformer.linear
func.func @negative_layout_mismatch(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = arith.constant dense<1.0> : tensor<8x8xf32>
  %a = transformer.linear %x, %w layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = transformer.linear %x, %w layout <nk> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// negative_: the outputs have different element types.
// ABSENT-LABEL: func @negative_output_types
// ABSENT-NOT: transformer.split
// ABSENT-COUNT-2: transformer.linear
// ABSENT-NOT: transformer.linear
// ABSENT-NOT: transformer.split
// ABSENT: {{^}}}
// CHECK-LABEL: func @negative_output_types
// CHECK-COUNT-2: transformer.linear
func.func @negative_output_types(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %w = arith.constant dense<1.0> : tensor<8x8xf32>
  %a = transformer.linear %x, %w layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = transformer.linear %x, %w layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xbf16>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xbf16>
}

// -----

// negative_: an activation or a residual in the epilogue belongs to one
// linear only.
// ABSENT-LABEL: func @negative_epilogue
// ABSENT-NOT: transformer.split
// ABSENT-COUNT-3: transformer.linear
// ABSENT-NOT: transformer.linear
// ABSENT-NOT: transformer.split
// ABSENT: {{^}}}
// CHECK-LABEL: func @negative_epilogue
// CHECK-COUNT-3: transformer.linear
func.func @negative_epilogue(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = arith.constant dense<1.0> : tensor<8x8xf32>
  %a = transformer.linear %x, %w layout <kn> activation <gelu> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = transformer.linear %x, %w residual %r layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = transformer.linear %x, %w layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %a, %b, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// negative_: different inputs.
// ABSENT-LABEL: func @negative_different_inputs
// ABSENT-NOT: transformer.split
// ABSENT-COUNT-2: transformer.linear
// ABSENT-NOT: transformer.linear
// ABSENT-NOT: transformer.split
// ABSENT: {{^}}}
// CHECK-LABEL: func @negative_different_inputs
// CHECK-COUNT-2: transformer.linear
func.func @negative_different_inputs(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = arith.constant dense<1.0> : tensor<8x8xf32>
  %a = transformer.linear %x, %w layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = transformer.linear %y, %w layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A parallel block's FC1 (GPT-J, Phi, Falcon), whose GELU goes into its
// epilogue, stays out of the QKV GEMM: merged, the GELU would be a separate
// pass over the block's widest activation. A linear whose activation has
// another reader besides merges.
// CHECK-LABEL: func @epilogue_activation_stays_alone
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[QKV:.*]] = transformer.linear %[[X]], %{{.*}} : (tensor<4x8xf32>, tensor<8x24xf32>) -> tensor<4x24xf32>
// CHECK: transformer.split %[[QKV]] {axis = 1 : i64, sizes = array<i64: 8, 8, 8>}
// CHECK: %[[FC1:.*]] = transformer.linear %[[X]], %{{.*}} : (tensor<4x8xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
// CHECK: transformer.gelu %[[FC1]]
// CHECK-NOT: transformer.linear %[[X]]
// CHECK: return
func.func @epilogue_activation_stays_alone(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x32xf32>) {
  %wq = arith.constant dense<1.0> : tensor<8x8xf32>
  %wk = arith.constant dense<2.0> : tensor<8x8xf32>
  %wv = arith.constant dense<3.0> : tensor<8x8xf32>
  %w1 = arith.constant dense<4.0> : tensor<8x32xf32>
  %q = transformer.linear %x, %wq layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k = transformer.linear %x, %wk layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %v = transformer.linear %x, %wv layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<4x8xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
  %g = transformer.gelu %h : tensor<4x32xf32>
  return %q, %k, %v, %g : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func @activation_read_twice_merges
// CHECK: transformer.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 8, 32>}
func.func @activation_read_twice_merges(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x32xf32>, tensor<4x32xf32>) {
  %wq = arith.constant dense<1.0> : tensor<8x8xf32>
  %w1 = arith.constant dense<4.0> : tensor<8x32xf32>
  %q = transformer.linear %x, %wq layout <kn> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<4x8xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
  %g = transformer.gelu %h : tensor<4x32xf32>
  return %q, %h, %g : tensor<4x8xf32>, tensor<4x32xf32>, tensor<4x32xf32>
}
