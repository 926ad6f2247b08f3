// RUN: mte-opt %s -split-input-file -mte-data-parallel=dp-size=2 | FileCheck %s

// Each replica takes its half of the batch of every graph input and the
// outputs are gathered whole; the per-replica program is unchanged.
// CHECK: shard.grid @dp(shape = 2)
// CHECK-LABEL: func.func @embed
// CHECK-SAME: (%[[IDS:.*]]: tensor<4x5xi64> {transformer.name = "input_ids"}) -> tensor<4x5x4xf32>
// CHECK: %[[MINE:.*]] = shard.all_slice %[[IDS]] on @dp grid_axes = [0] slice_axis = 0 : tensor<4x5xi64> -> tensor<2x5xi64>
// CHECK: %[[ROWS:.*]] = transformer.gather %{{.*}}[%[[MINE]]]
// CHECK: %[[ALL:.*]] = shard.all_gather %[[ROWS]] on @dp grid_axes = [0] gather_axis = 0 : tensor<2x5x4xf32> -> tensor<4x5x4xf32>
// CHECK: return %[[ALL]]
func.func @embed(%ids: tensor<2x5xi64> {transformer.name = "input_ids"})
    -> tensor<2x5x4xf32> {
  %table = arith.constant dense<1.0> : tensor<50x4xf32>
  %0 = transformer.gather %table[%ids] : (tensor<50x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}

// -----

// A tensor-parallel program: its grid takes the data-parallel axis in
// front ([dp, tp]), and its collectives and rank indices move to axis 1.
// CHECK: shard.grid @grid(shape = 2x4)
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @tensor_parallel
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[MINE:.*]] = shard.all_slice %[[X]] on @grid grid_axes = [0] slice_axis = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK: shard.process_multi_index on @grid axes = [1] : index
// CHECK: shard.all_reduce %[[MINE]] on @grid grid_axes = [1] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK: shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 0 : tensor<2x8xf32> -> tensor<4x8xf32>
shard.grid @tp(shape = 4)
func.func @tensor_parallel(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %i = shard.process_multi_index on @tp : index
  %s = shard.all_reduce %x on @tp grid_axes = [0] : tensor<2x8xf32> -> tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}

// -----

// Model state stays whole; an activation's FP8 amax is the whole batch's
// (MAX over the replicas), a constant's is left alone.
// CHECK-LABEL: func.func @fp8_state
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[S:.*]]: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale"
// CHECK-SAME: -> (tensor<4x8xbf16>, tensor<2xf32> {transformer.next_state = "fp8.scale"})
// CHECK: %[[MINE:.*]] = shard.all_slice %[[X]]
// CHECK: %[[A:.*]] = transformer.amax %[[MINE]]
// CHECK: %[[ALL:.*]] = shard.all_reduce %[[A]] on @dp grid_axes = [0] reduction = max
// CHECK: transformer.amax %{{.*}} : tensor<8xbf16>
// CHECK-NOT: shard.all_reduce
// CHECK: transformer.reshape %[[ALL]]
// CHECK: shard.all_gather
// CHECK: return %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<2xf32>
func.func @fp8_state(%x: tensor<2x8xbf16>, %s: tensor<2xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<0.000000e+00> : tensor<2xf32>, labels = ["a.input", "b.input"]>})
    -> (tensor<2x8xbf16>, tensor<2xf32> {transformer.next_state = "fp8.scale"}) {
  %w = arith.constant dense<2.0> : tensor<8xbf16>
  %a = transformer.amax %x : tensor<2x8xbf16> -> tensor<f32>
  %b = transformer.amax %w : tensor<8xbf16> -> tensor<f32>
  %r = transformer.reshape %a : tensor<f32> -> tensor<1xf32>
  %q = transformer.reshape %b : tensor<f32> -> tensor<1xf32>
  %c = transformer.concat %r, %q {axis = 0 : i64} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
  return %x, %c : tensor<2x8xbf16>, tensor<2xf32>
}

// -----

// The index-check status: counts summed over the replicas, the position
// and value of the first replica (least index) that found a bad index, the
// position counted in the whole batch (this check reads a graph input: 10
// indices a replica); [0, -1, 0] as it was when no replica found one.
// CHECK-LABEL: func.func @index_status
// CHECK-SAME: -> (tensor<4x5x4xf32>, tensor<1x3xi64> {transformer.index_status})
// CHECK: %[[R:.*]] = shard.process_multi_index on @dp axes = [0] : index
// CHECK: %[[RI:.*]] = arith.index_cast %[[R]] : index to i64
// CHECK: %[[ME:.*]] = tensor.splat %[[RI]] : tensor<1x1xi64>
// CHECK: %[[COUNT:.*]] = transformer.slice %[[STATUS:.*]] {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 1>, strides = array<i64: 1, 1>}
// CHECK: %[[FAIL:.*]] = transformer.compare <ne> %[[COUNT]]
// CHECK: %[[KEY:.*]] = transformer.where %[[FAIL]], %[[ME]]
// CHECK: %[[FIRST:.*]] = shard.all_reduce %[[KEY]] on @dp grid_axes = [0] reduction = min
// CHECK: %[[MINE:.*]] = transformer.compare <eq> %[[FIRST]], %[[ME]]
// CHECK: %[[KEPT:.*]] = transformer.where %[[MINE]], %[[STATUS]]
// CHECK: %[[PICK:.*]] = shard.all_reduce %[[KEPT]] on @dp grid_axes = [0] : tensor<1x3xi64>
// CHECK: %[[TOTAL:.*]] = shard.all_reduce %[[COUNT]] on @dp grid_axes = [0] : tensor<1x1xi64>
// CHECK: %[[POS:.*]] = transformer.slice %[[PICK]] {offsets = array<i64: 0, 1>, sizes = array<i64: 1, 1>
// CHECK: %[[TEN:.*]] = arith.constant dense<10> : tensor<1x1xi64>
// CHECK: %[[OFF:.*]] = transformer.mul %[[FIRST]], %[[TEN]]
// CHECK: %[[GLOBAL:.*]] = transformer.add %[[POS]], %[[OFF]]
// CHECK: %[[ANY:.*]] = transformer.compare <ne> %[[TOTAL]]
// CHECK: %[[P:.*]] = transformer.where %[[ANY]], %[[GLOBAL]]
// CHECK: %[[V:.*]] = transformer.where %[[ANY]]
// CHECK: %[[ROW:.*]] = transformer.concat %[[TOTAL]], %[[P]], %[[V]] {axis = 1 : i64}
// CHECK: return %{{.*}}, %[[ROW]]
func.func @index_status(%ids: tensor<2x5xi64> {transformer.name = "input_ids"})
    -> (tensor<2x5x4xf32>, tensor<1x3xi64> {transformer.index_status})
    attributes {transformer.index_checks = [#transformer.index_check<op = "Gather", node = "/wte/Gather", source = "input_ids", bounds = 50>]} {
  %table = arith.constant dense<1.0> : tensor<50x4xf32>
  %safe, %status = transformer.check_indices %ids {bounds = array<i64: 50>} : tensor<2x5xi64>
  %0 = transformer.gather %table[%safe] : (tensor<50x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
  %row = transformer.reshape %status : tensor<3xi64> -> tensor<1x3xi64>
  return %0, %row : tensor<2x5x4xf32>, tensor<1x3xi64>
}
