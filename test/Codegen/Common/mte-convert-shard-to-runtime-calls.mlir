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
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[INP:.*]] = memref.extract_aligned_pointer_as_index %[[IN]]
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

shard.grid @g(shape = 2)
func.func @gather(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'shard.all_gather' op has no lowering for sharded models yet}}
  %r = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @product(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'shard.all_reduce' op reduces by product, which the runtime does not provide}}
  %r = shard.all_reduce %x on @g grid_axes = [0] reduction = product : tensor<4x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
