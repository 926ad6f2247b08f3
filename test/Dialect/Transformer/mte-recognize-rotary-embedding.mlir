// RUN: mte-opt %s -split-input-file -mte-recognize-rotary-embedding -canonicalize | FileCheck %s

// Llama as the dynamo exporter writes it: q * cos + rotate_half(q) * sin on
// the head split of the projection, tables [1, 1, S, D]. The op is applied to
// the packed projection; the head split moves after it.
// CHECK-LABEL: func @llama_head_split
// CHECK-SAME: (%[[P:.*]]: tensor<2x8x64xf32>, %[[COS:.*]]: tensor<1x1x8x16xf32>, %[[SIN:.*]]: tensor<1x1x8x16xf32>)
// CHECK-DAG: %[[C:.*]] = transformer.reshape %[[COS]] : tensor<1x1x8x16xf32> -> tensor<8x16xf32>
// CHECK-DAG: %[[S:.*]] = transformer.reshape %[[SIN]] : tensor<1x1x8x16xf32> -> tensor<8x16xf32>
// CHECK: %[[R:.*]] = transformer.rotary_embedding %[[P]], %[[C]], %[[S]] {num_heads = 4 : i64} : (tensor<2x8x64xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<2x8x64xf32>
// CHECK: %[[H:.*]] = transformer.reshape %[[R]] : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
// CHECK: %[[T:.*]] = transformer.transpose %[[H]] [0, 2, 1, 3]
// CHECK: return %[[T]]
func.func @llama_head_split(%p: tensor<2x8x64xf32>, %cos: tensor<1x1x8x16xf32>, %sin: tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %h = transformer.reshape %p : tensor<2x8x64xf32> -> tensor<2x8x4x16xf32>
  %x = transformer.transpose %h [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %a = transformer.mul %x, %cos : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  %x1 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 4, 8, 8>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %x2 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 8>, sizes = array<i64: 2, 4, 8, 8>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %n = transformer.neg %x2 : tensor<2x4x8x8xf32>
  %r = transformer.concat %n, %x1 {axis = -1 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %b = transformer.mul %r, %sin : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  %y = transformer.add %a, %b : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// The TorchScript order (sin term first, cos operand first), on a plain
// [B, H, S, D] value with per-batch tables [B, 1, S, D].
// CHECK-LABEL: func @bhsd_batched_tables
// CHECK: %[[C:.*]] = transformer.reshape %arg1 : tensor<2x1x4x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[S:.*]] = transformer.reshape %arg2 : tensor<2x1x4x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[R:.*]] = transformer.rotary_embedding %arg0, %[[C]], %[[S]] : (tensor<2x3x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x3x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @bhsd_batched_tables(%x: tensor<2x3x4x8xf32>, %cos: tensor<2x1x4x8xf32>, %sin: tensor<2x1x4x8xf32>) -> tensor<2x3x4x8xf32> {
  %x2 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 2, 3, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x3x4x8xf32> -> tensor<2x3x4x4xf32>
  %n = transformer.neg %x2 : tensor<2x3x4x4xf32>
  %x1 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 3, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<2x3x4x8xf32> -> tensor<2x3x4x4xf32>
  %r = transformer.concat %n, %x1 {axis = 3 : i64} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x8xf32>
  %b = transformer.mul %sin, %r : (tensor<2x1x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  %a = transformer.mul %cos, %x : (tensor<2x1x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  %y = transformer.add %b, %a : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  return %y : tensor<2x3x4x8xf32>
}

// -----

// RoPE applied before the head transpose ([B, S, H, D], tables [S, 1, D]).
// CHECK-LABEL: func @bshd_layout
// CHECK: %[[P:.*]] = transformer.reshape %arg0 : tensor<1x4x2x8xf32> -> tensor<1x4x16xf32>
// CHECK: %[[R:.*]] = transformer.rotary_embedding %[[P]], %{{.*}}, %{{.*}} {num_heads = 2 : i64} : (tensor<1x4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<1x4x16xf32>
// CHECK: transformer.reshape %[[R]] : tensor<1x4x16xf32> -> tensor<1x4x2x8xf32>
func.func @bshd_layout(%x: tensor<1x4x2x8xf32>, %cos: tensor<4x1x8xf32>, %sin: tensor<4x1x8xf32>) -> tensor<1x4x2x8xf32> {
  %a = transformer.mul %x, %cos : (tensor<1x4x2x8xf32>, tensor<4x1x8xf32>) -> tensor<1x4x2x8xf32>
  %x1 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x4x2x8xf32> -> tensor<1x4x2x4xf32>
  %x2 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x4x2x8xf32> -> tensor<1x4x2x4xf32>
  %n = transformer.neg %x2 : tensor<1x4x2x4xf32>
  %r = transformer.concat %n, %x1 {axis = -1 : i64} : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x2x8xf32>
  %b = transformer.mul %r, %sin : (tensor<1x4x2x8xf32>, tensor<4x1x8xf32>) -> tensor<1x4x2x8xf32>
  %y = transformer.add %a, %b : (tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32>
  return %y : tensor<1x4x2x8xf32>
}

// -----

// The halves in the wrong order: cat(x1, -x2) rotates the other way.
// CHECK-LABEL: func @negative_halves_swapped
// CHECK-NOT: transformer.rotary_embedding
func.func @negative_halves_swapped(%x: tensor<1x2x4x8xf32>, %cos: tensor<1x1x4x8xf32>, %sin: tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = transformer.mul %x, %cos : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %x1 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %x2 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = transformer.neg %x2 : tensor<1x2x4x4xf32>
  %r = transformer.concat %x1, %n {axis = -1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %b = transformer.mul %r, %sin : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = transformer.add %a, %b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// The negated half has another user.
// CHECK-LABEL: func @negative_neg_other_user
// CHECK-NOT: transformer.rotary_embedding
func.func @negative_neg_other_user(%x: tensor<1x2x4x8xf32>, %cos: tensor<1x1x4x8xf32>, %sin: tensor<1x1x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %a = transformer.mul %x, %cos : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %x1 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %x2 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = transformer.neg %x2 : tensor<1x2x4x4xf32>
  %r = transformer.concat %n, %x1 {axis = -1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %b = transformer.mul %r, %sin : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = transformer.add %a, %b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y, %n : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// A table that varies over heads is not a rotary table.
// CHECK-LABEL: func @negative_table_per_head
// CHECK-NOT: transformer.rotary_embedding
func.func @negative_table_per_head(%x: tensor<1x2x4x8xf32>, %cos: tensor<1x2x4x8xf32>, %sin: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = transformer.mul %x, %cos : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %x1 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %x2 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = transformer.neg %x2 : tensor<1x2x4x4xf32>
  %r = transformer.concat %n, %x1 {axis = -1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %b = transformer.mul %r, %sin : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = transformer.add %a, %b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// The cos term multiplies another tensor than the one rotated.
// CHECK-LABEL: func @negative_other_input
// CHECK-NOT: transformer.rotary_embedding
func.func @negative_other_input(%x: tensor<1x2x4x8xf32>, %z: tensor<1x2x4x8xf32>, %cos: tensor<1x1x4x8xf32>, %sin: tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = transformer.mul %z, %cos : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %x1 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %x2 = transformer.slice %x {offsets = array<i64: 0, 0, 0, 4>, sizes = array<i64: 1, 2, 4, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %n = transformer.neg %x2 : tensor<1x2x4x4xf32>
  %r = transformer.concat %n, %x1 {axis = -1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %b = transformer.mul %r, %sin : (tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = transformer.add %a, %b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// GPT-J's rotate_every_two on [B, S, H, D], with repeat-interleaved tables
// [1, S, 1, D]: the op's interleaved form on the packed [B, S, H * D] view.
// CHECK-LABEL: func @gptj_rotate_every_two
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x4x8xf32>, %[[COS:.*]]: tensor<1x5x1x8xf32>, %[[SIN:.*]]: tensor<1x5x1x8xf32>)
// CHECK-DAG: %[[C:.*]] = transformer.reshape %[[COS]] : tensor<1x5x1x8xf32> -> tensor<5x8xf32>
// CHECK-DAG: %[[S:.*]] = transformer.reshape %[[SIN]] : tensor<1x5x1x8xf32> -> tensor<5x8xf32>
// CHECK-DAG: %[[P:.*]] = transformer.reshape %[[X]] : tensor<2x5x4x8xf32> -> tensor<2x5x32xf32>
// CHECK: %[[R:.*]] = transformer.rotary_embedding %[[P]], %[[C]], %[[S]] {interleaved, num_heads = 4 : i64} : (tensor<2x5x32xf32>, tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x32xf32>
// CHECK: %[[Y:.*]] = transformer.reshape %[[R]] : tensor<2x5x32xf32> -> tensor<2x5x4x8xf32>
// CHECK: return %[[Y]]
func.func @gptj_rotate_every_two(%x: tensor<2x5x4x8xf32>, %cos: tensor<1x5x1x8xf32>, %sin: tensor<1x5x1x8xf32>) -> tensor<2x5x4x8xf32> {
  %a = transformer.mul %x, %cos : (tensor<2x5x4x8xf32>, tensor<1x5x1x8xf32>) -> tensor<2x5x4x8xf32>
  %even = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 5, 4, 4>, strides = array<i64: 1, 1, 1, 2>} : tensor<2x5x4x8xf32> -> tensor<2x5x4x4xf32>
  %e = transformer.reshape %even : tensor<2x5x4x4xf32> -> tensor<2x5x4x4x1xf32>
  %odd = transformer.slice %x {offsets = array<i64: 0, 0, 0, 1>, sizes = array<i64: 2, 5, 4, 4>, strides = array<i64: 1, 1, 1, 2>} : tensor<2x5x4x8xf32> -> tensor<2x5x4x4xf32>
  %n = transformer.neg %odd : tensor<2x5x4x4xf32>
  %o = transformer.reshape %n : tensor<2x5x4x4xf32> -> tensor<2x5x4x4x1xf32>
  %pairs = transformer.concat %o, %e {axis = -1 : i64} : (tensor<2x5x4x4x1xf32>, tensor<2x5x4x4x1xf32>) -> tensor<2x5x4x4x2xf32>
  %r = transformer.reshape %pairs : tensor<2x5x4x4x2xf32> -> tensor<2x5x4x8xf32>
  %b = transformer.mul %r, %sin : (tensor<2x5x4x8xf32>, tensor<1x5x1x8xf32>) -> tensor<2x5x4x8xf32>
  %y = transformer.add %a, %b : (tensor<2x5x4x8xf32>, tensor<2x5x4x8xf32>) -> tensor<2x5x4x8xf32>
  return %y : tensor<2x5x4x8xf32>
}

// -----

// The even and odd features swapped (x[::2] negated): not rotate_every_two.
// CHECK-LABEL: func @not_rotate_every_two
// CHECK-NOT: transformer.rotary_embedding
// CHECK: return
func.func @not_rotate_every_two(%x: tensor<2x5x4x8xf32>, %cos: tensor<1x5x1x8xf32>, %sin: tensor<1x5x1x8xf32>) -> tensor<2x5x4x8xf32> {
  %a = transformer.mul %x, %cos : (tensor<2x5x4x8xf32>, tensor<1x5x1x8xf32>) -> tensor<2x5x4x8xf32>
  %even = transformer.slice %x {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 2, 5, 4, 4>, strides = array<i64: 1, 1, 1, 2>} : tensor<2x5x4x8xf32> -> tensor<2x5x4x4xf32>
  %n = transformer.neg %even : tensor<2x5x4x4xf32>
  %e = transformer.reshape %n : tensor<2x5x4x4xf32> -> tensor<2x5x4x4x1xf32>
  %odd = transformer.slice %x {offsets = array<i64: 0, 0, 0, 1>, sizes = array<i64: 2, 5, 4, 4>, strides = array<i64: 1, 1, 1, 2>} : tensor<2x5x4x8xf32> -> tensor<2x5x4x4xf32>
  %o = transformer.reshape %odd : tensor<2x5x4x4xf32> -> tensor<2x5x4x4x1xf32>
  %pairs = transformer.concat %e, %o {axis = -1 : i64} : (tensor<2x5x4x4x1xf32>, tensor<2x5x4x4x1xf32>) -> tensor<2x5x4x4x2xf32>
  %r = transformer.reshape %pairs : tensor<2x5x4x4x2xf32> -> tensor<2x5x4x8xf32>
  %b = transformer.mul %r, %sin : (tensor<2x5x4x8xf32>, tensor<1x5x1x8xf32>) -> tensor<2x5x4x8xf32>
  %y = transformer.add %a, %b : (tensor<2x5x4x8xf32>, tensor<2x5x4x8xf32>) -> tensor<2x5x4x8xf32>
  return %y : tensor<2x5x4x8xf32>
}
