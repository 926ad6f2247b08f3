// RUN: mte-opt %s -split-input-file -mte-pipeline-parallel=pp-size=2 | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-pipeline-parallel="pp-size=2 micro-batches=2" | FileCheck %s --check-prefix=MICRO

// Two layers of equal cost, each a linear and a residual add: the cut goes
// between them, where only the residual stream crosses (the first layer's
// hidden activation would be four times its bytes). Stage 0 sends the
// stream to stage 1, which returns the output; every rank gets it by a
// broadcast from stage 1. The weights are constants each stage makes.
// CHECK: shard.grid @pp(shape = 2)
// CHECK-LABEL: func.func private @layers.stage0
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> attributes {transformer.pipeline_stage = 0 : i64}
// CHECK: %[[H:.*]] = transformer.linear %[[X]]
// CHECK: %[[Y:.*]] = transformer.linear %[[H]]
// CHECK: %[[R:.*]] = transformer.add %[[Y]], %[[X]]
// CHECK: return %[[R]]
// CHECK-LABEL: func.func private @layers.stage1
// CHECK-SAME: (%[[R1:.*]]: tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK: transformer.linear %[[R1]]
// CHECK: return
// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[IN:.*]]: tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[STAGE:.*]] = shard.process_multi_index on @pp axes = [0] : index
// CHECK: %[[OUT:.*]] = scf.index_switch %[[STAGE]] -> tensor<2x8x16xf32>
// CHECK: case 0 {
// CHECK: %[[S0:.*]] = func.call @layers.stage0(%[[IN]])
// CHECK: shard.send %[[S0]] on @pp grid_axes = [0] destination = [1]
// CHECK: default {
// CHECK: %[[GOT:.*]] = shard.recv %{{.*}} on @pp grid_axes = [0] source = [0]
// CHECK: %[[S1:.*]] = func.call @layers.stage1(%[[GOT]])
// CHECK: scf.yield %[[S1]]
// CHECK: %[[ALL:.*]] = shard.broadcast %[[OUT]] on @pp grid_axes = [0] root = [1]
// CHECK: return %[[ALL]]

// Two micro-batches: each stage runs twice, on the batch's halves, and the
// outputs are joined along the batch.
// MICRO-LABEL: func.func @layers
// MICRO-SAME: (%[[IN:.*]]: tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
// MICRO: case 0 {
// MICRO: %[[A:.*]] = tensor.extract_slice %[[IN]][0, 0, 0] [2, 8, 16] [1, 1, 1]
// MICRO: %[[SA:.*]] = func.call @layers.stage0(%[[A]])
// MICRO: shard.send %[[SA]]
// MICRO: %[[B:.*]] = tensor.extract_slice %[[IN]][2, 0, 0] [2, 8, 16] [1, 1, 1]
// MICRO: %[[SB:.*]] = func.call @layers.stage0(%[[B]])
// MICRO: shard.send %[[SB]]
// MICRO: default {
// MICRO: shard.recv
// MICRO: %[[OA:.*]] = func.call @layers.stage1
// MICRO: %[[JA:.*]] = tensor.insert_slice %[[OA]] into %{{.*}}[0, 0, 0] [2, 8, 16] [1, 1, 1]
// MICRO: shard.recv
// MICRO: %[[OB:.*]] = func.call @layers.stage1
// MICRO: %[[JB:.*]] = tensor.insert_slice %[[OB]] into %[[JA]][2, 0, 0] [2, 8, 16] [1, 1, 1]
// MICRO: scf.yield %[[JB]]
// MICRO: shard.broadcast %{{.*}} on @pp grid_axes = [0] root = [1] : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
func.func @layers(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w1 = arith.constant dense<0.5> : tensor<16x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<64x16xf32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y = transformer.linear %h, %w2 layout <kn> : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %r = transformer.add %y, %x : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %h2 = transformer.linear %r, %w1 layout <kn> : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y2 = transformer.linear %h2, %w2 layout <kn> : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %r2 = transformer.add %y2, %r : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %r2 : tensor<2x8x16xf32>
}

// -----

// A value the first stage makes and the last reads (a gate computed from
// the input, as a mask is) is handed over with the stream: stage 1 takes
// both.
// CHECK-LABEL: func.func private @forwarded.stage1
// CHECK-SAME: (%{{.*}}: tensor<2x8x16xf32>, %{{.*}}: tensor<2x8x16xf32>)
// CHECK-LABEL: func.func @forwarded
// CHECK: %[[S0:.*]]:2 = func.call @forwarded.stage0
// CHECK: shard.send %[[S0]]#0
// CHECK: shard.send %[[S0]]#1
// CHECK: shard.recv
// CHECK: shard.recv
func.func @forwarded(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w1 = arith.constant dense<0.5> : tensor<16x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<64x16xf32>
  %m = transformer.sigmoid %x : tensor<2x8x16xf32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y = transformer.linear %h, %w2 layout <kn> : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %h2 = transformer.linear %y, %w1 layout <kn> : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y2 = transformer.linear %h2, %w2 layout <kn> : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %r = transformer.mul %y2, %m : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

