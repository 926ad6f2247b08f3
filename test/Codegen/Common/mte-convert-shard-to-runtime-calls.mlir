// RUN: mte-opt %s --split-input-file --verify-diagnostics --mte-convert-shard-to-runtime-calls | FileCheck %s

// A row-parallel linear's sum and a weight slice on a 2x4 grid: the slice
// offset is the rank's coordinate on axis 1 times the slice; the
// all-reduce over axis 1 hands its buffers to the runtime (mask 0b10).

// CHECK-NOT: shard.grid
// CHECK: func.func private @mte_comm_all_reduce(i64, i64, i64, i32, i32, i32)
// CHECK: func.func private @mte_comm_rank() -> i64
// CHECK-LABEL: func.func @rank_program
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>)
// CHECK: %[[RANK:.*]] = call @mte_comm_rank() : () -> i64
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i64 to index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[DIV:.*]] = arith.divui %[[R]], %c1
// CHECK: %[[COORD:.*]] = arith.remui %[[DIV]], %[[C4]]
// CHECK: %[[INDEX:.*]] = arith.addi %{{.*}}, %[[COORD]]
// CHECK: %[[OFFSET:.*]] = arith.muli %[[INDEX]], %c4
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[W]][0, %[[OFFSET]]] [8, 4] [1, 1] : tensor<8x16xf32> to tensor<8x4xf32>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<4x8xf32> to memref<4x8xf32>
// CHECK: %[[INP:.*]] = memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[OUTP:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[COUNT:.*]] = arith.constant 32 : i64
// CHECK: %[[F32:.*]] = arith.constant 1 : i32
// CHECK: %[[SUM:.*]] = arith.constant 0 : i32
// CHECK: %[[MASK:.*]] = arith.constant 2 : i32
// CHECK: call @mte_comm_all_reduce(%{{.*}}, %{{.*}}, %[[COUNT]], %[[F32]], %[[SUM]], %[[MASK]]) : (i64, i64, i64, i32, i32, i32) -> ()
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[T]], %[[SLICE]]

shard.grid @g(shape = 2x4)
func.func @rank_program(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>) {
  %s = shard.all_slice %w on @g grid_axes = [1] slice_axis = 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  %r = shard.all_reduce %x on @g grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %r, %s : tensor<4x8xf32>, tensor<8x4xf32>
}

// -----

// Sequence parallelism's collectives. Along the outermost dimension the
// runtime's contiguous parts are the result.

// CHECK-LABEL: func.func @gather_outer
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK: call @mte_comm_all_gather(%{{.*}}, %{{.*}}, %c32_i64, %c1_i32, %c1_i32{{.*}}) : (i64, i64, i64, i32, i32) -> ()
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[OUT]]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[T]]
shard.grid @g(shape = 2)
func.func @gather_outer(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %r = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// The tokens of [B, S, H] after a batch of 2: the ranks' parts arrive as
// [ranks, B, S / ranks, H], transposed to [B, ranks, S / ranks, H] and
// merged into [B, S, H].

// CHECK-LABEL: func.func @gather_tokens
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x2x4x8xf32>
// CHECK: call @mte_comm_all_gather(%{{.*}}, %{{.*}}, %c64_i64, %c1_i32, %c1_i32{{.*}})
// CHECK: %[[J:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<2x2x4x8xf32> to tensor<2x2x4x8xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x2x4x8xf32>
// CHECK: %[[TR:.*]] = linalg.transpose ins(%[[J]] : tensor<2x2x4x8xf32>) outs(%[[E]] : tensor<2x2x4x8xf32>) permutation = [1, 0, 2, 3]
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[TR]] {{\[\[}}0], [1, 2], [3]] : tensor<2x2x4x8xf32> into tensor<2x8x8xf32>
// CHECK: return %[[R]]
shard.grid @g(shape = 2)
func.func @gather_tokens(%x: tensor<2x4x8xf32>) -> tensor<2x8x8xf32> {
  %r = shard.all_gather %x on @g grid_axes = [0] gather_axis = 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
  return %r : tensor<2x8x8xf32>
}

// -----

// A reduce-scatter of the tokens over 4 ranks: [B, S, H] viewed as
// [B, 4, S / 4, H], the ranks first, then the runtime's contiguous parts.

// CHECK: func.func private @mte_comm_reduce_scatter(i64, i64, i64, i32, i32, i32)
// CHECK-LABEL: func.func @scatter_tokens
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x6xf32>)
// CHECK: %[[V:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2], [3]] output_shape [2, 4, 2, 6] : tensor<2x8x6xf32> into tensor<2x4x2x6xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x2x6xf32>
// CHECK: %[[TR:.*]] = linalg.transpose ins(%[[V]] : tensor<2x4x2x6xf32>) outs(%[[E]] : tensor<4x2x2x6xf32>) permutation = [1, 0, 2, 3]
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[TR]] read_only
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x2x6xf32>
// CHECK: call @mte_comm_reduce_scatter(%{{.*}}, %{{.*}}, %c24_i64, %c1_i32, %c0_i32, %c1_i32{{.*}}) : (i64, i64, i64, i32, i32, i32) -> ()
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[OUT]]
// CHECK: return %[[T]]
shard.grid @g(shape = 4)
func.func @scatter_tokens(%x: tensor<2x8x6xf32>) -> tensor<2x2x6xf32> {
  %r = shard.reduce_scatter %x on @g grid_axes = [0] scatter_axis = 1 : tensor<2x8x6xf32> -> tensor<2x2x6xf32>
  return %r : tensor<2x2x6xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @all_to_all(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'shard.all_to_all' op has no lowering for sharded models yet}}
  %r = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x8xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @product(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'shard.all_reduce' op reduces by product, which the runtime does not provide}}
  %r = shard.all_reduce %x on @g grid_axes = [0] reduction = product : tensor<4x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Pipeline parallelism's hand-offs on a 2x2 grid ([pp, tp]), over the
// pipeline axis (mask 0b01): a receive into a new buffer from stage 0, a
// send of its input to stage 1, the broadcast from root 1 into a new buffer.
// CHECK-LABEL: func.func @hand_offs
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[RBUF:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK: %[[RP:.*]] = memref.extract_aligned_pointer_as_index %[[RBUF]]
// CHECK: %[[RPI:.*]] = arith.index_cast %[[RP]] : index to i64
// CHECK: %[[N:.*]] = arith.constant 16 : i64
// CHECK: %[[F32:.*]] = arith.constant 1 : i32
// CHECK: %[[FROM:.*]] = arith.constant 0 : i64
// CHECK: %[[AXIS0:.*]] = arith.constant 1 : i32
// CHECK: call @mte_comm_recv(%[[RPI]], %[[N]], %[[F32]], %[[FROM]], %[[AXIS0]]) : (i64, i64, i32, i64, i32) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[RBUF]] restrict writable
// CHECK: %[[SB:.*]] = bufferization.to_buffer %[[X]] read_only
// CHECK: %[[TO:.*]] = arith.constant 1 : i64
// CHECK: call @mte_comm_send(%{{.*}}, %{{.*}}, %{{.*}}, %[[TO]], %{{.*}}) : (i64, i64, i32, i64, i32) -> ()
// CHECK: %[[BIN:.*]] = bufferization.to_buffer %[[R]] read_only
// CHECK: %[[ROOT:.*]] = arith.constant 1 : i64
// CHECK: call @mte_comm_broadcast(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ROOT]], %{{.*}}) : (i64, i64, i64, i32, i64, i32) -> ()
// CHECK-NOT: shard.
shard.grid @grid(shape = 2x2)
func.func @hand_offs(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %r = shard.recv %e on @grid grid_axes = [0] source = [0] : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = shard.send %x on @grid grid_axes = [0] destination = [1] : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = shard.broadcast %r on @grid grid_axes = [0] root = [1] : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @axes_out_of_order(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @below {{names grid axes out of order}}
  %b = shard.broadcast %x on @grid grid_axes = [1, 0] root = [1, 0] : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @peer_dynamic(%x: tensor<2x8xf32>, %i: index) -> tensor<2x8xf32> {
  // expected-error @below {{names its peer at run time; the runtime takes static peers}}
  %r = shard.recv %x on @grid grid_axes = [0] source = [%i] : (tensor<2x8xf32>, index) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @no_source(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @below {{names no source}}
  %r = shard.recv %x on @grid grid_axes = [0] : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
