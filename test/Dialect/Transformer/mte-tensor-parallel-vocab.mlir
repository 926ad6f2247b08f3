// RUN: mte-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mte-tensor-parallel{tp-size=2 vocab-parallel=true})' | FileCheck %s

// Vocabulary parallelism (Megatron-LM's VocabParallelEmbedding and parallel
// LM head) on an embedding and a tied LM head around no block: each rank
// holds 50 of the 100 rows; ids that fall in them (negative ids counted
// from the end) gather, the others read zeros, and an all-reduce sums the
// ranks' rows. The LM head computes the rank's 50 logits, cast column by
// column; the function returns them all-gathered. The position table,
// gathered by a computed index, stays whole.

// CHECK-LABEL: func.func @embed_and_head
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x8xi64>)
// CHECK: %[[TABLE:.*]] = shard.all_slice %[[WHOLE:.*]] on @tp grid_axes = [0] slice_axis = 0 : tensor<100x16xbf16> -> tensor<50x16xbf16>
// CHECK: %[[RANK:.*]] = shard.process_multi_index on @tp axes = [0] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANK]], %c50 : index
// CHECK: %[[NEG:.*]] = transformer.compare <lt> %[[IDS]]
// CHECK: %[[WRAPPED:.*]] = transformer.add %[[IDS]], %{{.*}} : (tensor<2x8xi64>, tensor<i64>)
// CHECK: %[[POS:.*]] = transformer.where %[[NEG]], %[[WRAPPED]], %[[IDS]]
// CHECK: %[[LOCAL:.*]] = transformer.sub %[[POS]], %{{.*}} : (tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi64>
// CHECK: %[[MINE:.*]] = transformer.and
// CHECK: %[[SAFE:.*]] = transformer.where %[[MINE]], %[[LOCAL]]
// CHECK: %[[ROWS:.*]] = transformer.gather %[[TABLE]][%[[SAFE]]] : (tensor<50x16xbf16>, tensor<2x8xi64>) -> tensor<2x8x16xbf16>
// CHECK: %[[MASK:.*]] = transformer.reshape %[[MINE]] : tensor<2x8xi1> -> tensor<2x8x1xi1>
// CHECK: %[[OWN:.*]] = transformer.where %[[MASK]], %[[ROWS]], %{{.*}} : (tensor<2x8x1xi1>, tensor<2x8x16xbf16>, tensor<bf16>) -> tensor<2x8x16xbf16>
// CHECK: %[[EMBED:.*]] = shard.all_reduce %[[OWN]] on @tp grid_axes = [0] : tensor<2x8x16xbf16> -> tensor<2x8x16xbf16>
// CHECK: transformer.gather %{{.*}}[%{{.*}}] : (tensor<8x16xbf16>, tensor<1x8xi64>)
// The tied head reads the same rows (one slice after CSE).
// CHECK: %[[LOGITS:.*]] = transformer.linear %{{.*}}, %[[TABLE]] layout <nk> : (tensor<2x8x16xbf16>, tensor<50x16xbf16>) -> tensor<2x8x50xbf16>
// CHECK: %[[F32:.*]] = transformer.cast %[[LOGITS]] : tensor<2x8x50xbf16> to tensor<2x8x50xf32>
// CHECK: %[[ALL:.*]] = shard.all_gather %[[F32]] on @tp grid_axes = [0] gather_axis = 2 : tensor<2x8x50xf32> -> tensor<2x8x100xf32>
// CHECK: return %[[ALL]]
func.func @embed_and_head(%ids: tensor<2x8xi64>) -> tensor<2x8x100xf32> {
  %table = arith.constant dense<0.5> : tensor<100x16xbf16>
  %pos_table = arith.constant dense<0.25> : tensor<8x16xbf16>
  %positions = arith.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>
  %e = transformer.gather %table[%ids] : (tensor<100x16xbf16>, tensor<2x8xi64>) -> tensor<2x8x16xbf16>
  %p = transformer.gather %pos_table[%positions] : (tensor<8x16xbf16>, tensor<1x8xi64>) -> tensor<1x8x16xbf16>
  %x = transformer.add %e, %p : (tensor<2x8x16xbf16>, tensor<1x8x16xbf16>) -> tensor<2x8x16xbf16>
  %logits = transformer.linear %x, %table layout <nk> : (tensor<2x8x16xbf16>, tensor<100x16xbf16>) -> tensor<2x8x100xbf16>
  %f = transformer.cast %logits : tensor<2x8x100xbf16> to tensor<2x8x100xf32>
  return %f : tensor<2x8x100xf32>
}

// -----

// A vocabulary that does not divide among the ranks.
func.func @odd_vocabulary(%ids: tensor<2x8xi64>) -> tensor<2x8x16xf32> {
  %table = arith.constant dense<0.5> : tensor<99x16xf32>
  // expected-error @below {{tensor parallelism: a vocabulary of 99 does not divide among --tp=2 ranks}}
  %e = transformer.gather %table[%ids] : (tensor<99x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  return %e : tensor<2x8x16xf32>
}

// -----

// A block but no vocabulary: a warning; the block is split.
// CHECK-LABEL: func.func @no_vocabulary
// CHECK: shard.all_reduce
// expected-warning @below {{--tp-vocab: no embedding table gathered by a graph input, and no LM head; the vocabulary stays whole}}
func.func @no_vocabulary(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w1 = arith.constant dense<0.5> : tensor<16x32xf32>
  %w2 = arith.constant dense<0.25> : tensor<32x16xf32>
  %h = transformer.linear %x, %w1 layout <kn> activation <gelu> : (tensor<2x8x16xf32>, tensor<16x32xf32>) -> tensor<2x8x32xf32>
  %y = transformer.linear %h, %w2 layout <kn> : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}
