// RUN: mte-opt %s --split-input-file --mte-convert-shard-to-runtime-calls=dense-slices | FileCheck %s

// CUDA models: a slice of a weight argument becomes a weight argument of
// the local type, which the runtime cuts when it uploads the weight
// (#transformer.weight_slice: dimension 1 of [8, 16] is 8 chunks of 16, cut
// into 4 parts over grid axis 1). Two slices of one weight along one axis
// share the argument; the whole weight's argument goes once unused.

// CHECK-LABEL: func.func @column_and_row
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>,
// CHECK-SAME: %[[WC:[^:]*]]: tensor<8x4xf32> {mte.weight = @w_col, mte.weight_slice = #transformer.weight_slice<axis = 1, outer = 8, parts = 4, grid_axes = [1]>},
// CHECK-SAME: %[[WR:[^:]*]]: tensor<4x8xf32> {mte.weight = @w_row, mte.weight_slice = #transformer.weight_slice<axis = 0, outer = 1, parts = 4, grid_axes = [1]>})
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: mte_comm_rank
// CHECK: return %[[WC]], %[[WC]], %[[WR]]
shard.grid @g(shape = 2x4)
memref.global "public" constant @w_col : memref<8x16xf32> = dense<1.0>
memref.global "public" constant @w_row : memref<16x8xf32> = dense<2.0>
func.func @column_and_row(%x: tensor<4x8xf32>,
                          %w: tensor<8x16xf32> {mte.weight = @w_col},
                          %v: tensor<16x8xf32> {mte.weight = @w_row})
    -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>) {
  %a = shard.all_slice %w on @g grid_axes = [1] slice_axis = 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  %b = shard.all_slice %w on @g grid_axes = [1] slice_axis = 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  %c = shard.all_slice %v on @g grid_axes = [1] slice_axis = 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  return %a, %b, %c : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>
}

// -----

// A weight read whole too keeps its argument; a slice of a value that is
// not a weight argument is a copy of the rank's rows (offset: its index
// times 2), not a view; a slice over a group of one rank is its input.

// CHECK-LABEL: func.func @whole_and_activation
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8x16xf32> {mte.weight = @w},
// CHECK-SAME: %[[WS:[^:]*]]: tensor<8x8xf32> {mte.weight = @w, mte.weight_slice = #transformer.weight_slice<axis = 1, outer = 8, parts = 2, grid_axes = [0]>})
// CHECK: %[[OFFSET:[^ ]*]] = arith.muli %{{[0-9]+}}, %c2{{[_0-9]*}}
// CHECK-NEXT: tensor.empty() : tensor<2x8xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[XS:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[ROW:.*]] = arith.addi %[[I]], %[[OFFSET]]
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: tensor.extract %[[X]][%[[ROW]], %[[J]]]
// CHECK: return %[[W]], %[[WS]], %[[XS]], %[[X]]
shard.grid @g(shape = 2x1)
memref.global "public" constant @w : memref<8x16xf32> = dense<1.0>
func.func @whole_and_activation(%x: tensor<4x8xf32>,
                                %w: tensor<8x16xf32> {mte.weight = @w})
    -> (tensor<8x16xf32>, tensor<8x8xf32>, tensor<2x8xf32>, tensor<4x8xf32>) {
  %a = shard.all_slice %w on @g grid_axes = [0] slice_axis = 1 : tensor<8x16xf32> -> tensor<8x8xf32>
  %s = shard.all_slice %x on @g grid_axes = [0] slice_axis = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
  %one = shard.all_slice %x on @g grid_axes = [1] slice_axis = 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %w, %a, %s, %one : tensor<8x16xf32>, tensor<8x8xf32>, tensor<2x8xf32>, tensor<4x8xf32>
}
