// RUN: mte-opt %s -split-input-file -mte-pipeline-parallel=pp-size=2 | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-pipeline-parallel="pp-size=2 micro-batches=2" | FileCheck %s --check-prefix=MICRO

// Two layers of equal cost, each a linear and a residual add: the cut goes
// between them, where only the residual stream crosses (the first layer's
// hidden activation would be four times its bytes). Stage 0 sends the
// stream to stage 1, which returns the output; every rank gets it by a
// broadcast from stage 1. The weights are constants each stage makes.
// CHECK: shard.grid @pp(shape = 2)
// CHECK-LABEL: func.func private @layers_stage0
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> attributes {transformer.pipeline_stage = 0 : i64}
// CHECK: %[[H:.*]] = transformer.linear %[[X]]
// CHECK: %[[Y:.*]] = transformer.linear %[[H]]
// CHECK: %[[R:.*]] = transformer.add %[[Y]], %[[X]]
// CHECK: return %[[R]]
// CHECK-LABEL: func.func private @layers_stage1
// CHECK-SAME: (%[[R1:.*]]: tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK: transformer.linear %[[R1]]
// CHECK: return
// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[IN:.*]]: tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[STAGE:.*]] = shard.process_multi_index on @pp axes = [0] : index
// CHECK: %[[OUT:.*]] = scf.index_switch %[[STAGE]] {transformer.pipeline_dispatch} -> tensor<2x8x16xf32>
// CHECK: case 0 {
// CHECK: %[[S0:.*]] = func.call @layers_stage0(%[[IN]])
// CHECK: shard.send %[[S0]] on @pp grid_axes = [0] destination = [1]
// CHECK: default {
// CHECK: %[[GOT:.*]] = shard.recv %{{.*}} on @pp grid_axes = [0] source = [0]
// CHECK: %[[S1:.*]] = func.call @layers_stage1(%[[GOT]])
// CHECK: scf.yield %[[S1]]
// CHECK: %[[ALL:.*]] = shard.broadcast %[[OUT]] on @pp grid_axes = [0] root = [1]
// CHECK: return %[[ALL]]

// Two micro-batches: each stage runs twice, on the batch's halves, and the
// outputs are joined along the batch.
// MICRO-LABEL: func.func @layers
// MICRO-SAME: (%[[IN:.*]]: tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
// MICRO: case 0 {
// MICRO: %[[A:.*]] = tensor.extract_slice %[[IN]][0, 0, 0] [2, 8, 16] [1, 1, 1]
// MICRO: %[[SA:.*]] = func.call @layers_stage0(%[[A]])
// MICRO: shard.send %[[SA]]
// MICRO: %[[B:.*]] = tensor.extract_slice %[[IN]][2, 0, 0] [2, 8, 16] [1, 1, 1]
// MICRO: %[[SB:.*]] = func.call @layers_stage0(%[[B]])
// MICRO: shard.send %[[SB]]
// MICRO: default {
// MICRO: shard.recv
// MICRO: %[[OA:.*]] = func.call @layers_stage1
// MICRO: %[[JA:.*]] = tensor.insert_slice %[[OA]] into %{{.*}}[0, 0, 0] [2, 8, 16] [1, 1, 1]
// MICRO: shard.recv
// MICRO: %[[OB:.*]] = func.call @layers_stage1
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
// CHECK-LABEL: func.func private @forwarded_stage1
// CHECK-SAME: (%{{.*}}: tensor<2x8x16xf32>, %{{.*}}: tensor<2x8x16xf32>)
// CHECK-LABEL: func.func @forwarded
// CHECK: %[[S0:.*]]:2 = func.call @forwarded_stage0
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

// -----

// What depends on no input (a table computed from constants, as Llama's
// rotary cos and sin are) is made by each stage that reads it, not sent:
// only the stream crosses, and stage 1 computes the table again from its
// own constants.
// CHECK-LABEL: func.func private @independent_stage0
// CHECK: %[[T0:.*]] = transformer.cos %{{.*}} : tensor<2x8x16xf32>
// CHECK: transformer.mul %{{.*}}, %[[T0]]
// CHECK: return %{{.*}} : tensor<2x8x16xf32>
// CHECK-LABEL: func.func private @independent_stage1
// CHECK-SAME: (%[[R:[a-z0-9]+]]: tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[P:.*]] = arith.constant dense<3.000000e-01> : tensor<2x8x16xf32>
// CHECK: %[[T1:.*]] = transformer.cos %[[P]] : tensor<2x8x16xf32>
// CHECK: transformer.mul %{{.*}}, %[[T1]]
// CHECK-LABEL: func.func @independent
// CHECK: func.call @independent_stage0
// CHECK-COUNT-1: shard.send
// CHECK-NOT: shard.send
// CHECK: shard.recv
// CHECK-NOT: shard.recv
// CHECK: func.call @independent_stage1
func.func @independent(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w1 = arith.constant dense<0.5> : tensor<16x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<64x16xf32>
  %p = arith.constant dense<0.3> : tensor<2x8x16xf32>
  %t = transformer.cos %p : tensor<2x8x16xf32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y = transformer.linear %h, %w2 layout <kn> : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %r = transformer.mul %y, %t : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %h2 = transformer.linear %r, %w1 layout <kn> : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y2 = transformer.linear %h2, %w2 layout <kn> : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %r2 = transformer.mul %y2, %t : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %r2 : tensor<2x8x16xf32>
}


// -----

// FP8 delayed scaling: the state (history, scale) is whole for every
// micro-batch; the update leaves the stages. Its amax vector is an output
// of the stage that gathers it (the amax, a scalar, crosses from stage 0
// as a tensor of one element), joined by MAX over the micro-batches and
// broadcast; the update then runs once on every rank and its results are
// the function's.
// MICRO-LABEL: func.func private @delayed_stage0
// MICRO-SAME: (%[[X:.*]]: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<1xf32>)
// MICRO: %[[A:.*]] = transformer.amax
// MICRO: %[[A1:.*]] = transformer.reshape %[[A]] : tensor<f32> -> tensor<1xf32>
// MICRO: return %{{.*}}, %[[A1]]
// MICRO-LABEL: func.func private @delayed_stage1
// MICRO-SAME: (%{{.*}}: tensor<2x4xf32>, %[[R:.*]]: tensor<1xf32>) -> (tensor<2x4xf32>, tensor<1xf32>)
// MICRO: %[[R0:.*]] = transformer.reshape %[[R]] : tensor<1xf32> -> tensor<f32>
// MICRO: %[[V:.*]] = transformer.reshape %[[R0]] : tensor<f32> -> tensor<1xf32>
// MICRO: return %{{.*}}, %[[V]]
// MICRO-LABEL: func.func @delayed
// MICRO-SAME: (%[[XS:.*]]: tensor<4x4xf32>, %[[H:.*]]: tensor<4x1xf32> {transformer.state = {{.*}}}, %[[S:.*]]: tensor<1xf32> {transformer.state = {{.*}}}) -> (tensor<4x4xf32>, tensor<4x1xf32>, tensor<1xf32>)
// MICRO: %[[SW:.*]]:4 = scf.index_switch
// MICRO: %[[C0:.*]]:2 = func.call @delayed_stage1
// MICRO: %[[C1:.*]]:2 = func.call @delayed_stage1
// MICRO: %[[M:.*]] = transformer.max %[[C0]]#1, %[[C1]]#1
// MICRO: scf.yield %{{.*}}, %[[H]], %[[S]], %[[M]]
// MICRO: %[[Y:.*]] = shard.broadcast %[[SW]]#0
// MICRO-NOT: shard.broadcast %[[SW]]#1
// MICRO-NOT: shard.broadcast %[[SW]]#2
// MICRO: %[[AM:.*]] = shard.broadcast %[[SW]]#3 on @pp grid_axes = [0] root = [1]
// MICRO: %[[NH:.*]], %[[NS:.*]] = transformer.fp8_scale_update %[[H]], %[[AM]], %[[S]]
// MICRO: return %[[Y]], %[[NH]], %[[NS]] : tensor<4x4xf32>, tensor<4x1xf32>, tensor<1xf32>
func.func @delayed(%x: tensor<2x4xf32>,
    %h: tensor<4x1xf32> {transformer.state = #transformer.model_state<name = "fp8.amax_history", kind = <fp8_amax_history>, initial = dense<0.0> : tensor<4x1xf32>, labels = ["a.input"]>},
    %s: tensor<1xf32> {transformer.state = #transformer.model_state<name = "fp8.scale", kind = <fp8_scale>, initial = dense<1.0> : tensor<1xf32>, labels = ["a.input"]>})
    -> (tensor<2x4xf32>, tensor<4x1xf32>, tensor<1xf32>) {
  %y = transformer.sigmoid %x : tensor<2x4xf32>
  %a = transformer.amax %y : tensor<2x4xf32> -> tensor<f32>
  %e = transformer.exp %y : tensor<2x4xf32>
  %z = transformer.exp %e : tensor<2x4xf32>
  %v = transformer.reshape %a : tensor<f32> -> tensor<1xf32>
  %nh, %ns = transformer.fp8_scale_update %h, %v, %s {algorithm = #transformer.amax_algorithm<max>, fp8_max = 448.0 : f32, margin = 0 : i64} : (tensor<4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x1xf32>, tensor<1xf32>)
  return %z, %nh, %ns : tensor<2x4xf32>, tensor<4x1xf32>, tensor<1xf32>
}
