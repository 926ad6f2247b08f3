// RUN: mte-opt %s -split-input-file -mte-split-pipeline-stages -verify-diagnostics | FileCheck %s

// Two stages: each program is the entry with the dispatch replaced by its
// stage's ops (case 0: stage 0; the default region: the last stage); what
// follows the dispatch (the outputs' broadcast) is in both. The module
// lists the programs in stage order.

// CHECK: module attributes {mte.stage_programs = {layers = [@layers_pp0, @layers_pp1]}}
// CHECK-LABEL: func.func @layers_pp0
// CHECK-SAME: (%[[IN:.*]]: tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NOT: scf.index_switch
// CHECK: %[[G:.*]] = transformer.gelu %[[IN]]
// CHECK: shard.send %[[G]] on @pp grid_axes = [0] destination = [1]
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: %[[B:.*]] = shard.broadcast %[[E]] on @pp grid_axes = [0] root = [1]
// CHECK: return %[[B]]
// CHECK-LABEL: func.func @layers_pp1
// CHECK-NOT: scf.index_switch
// CHECK: %[[R:.*]] = shard.recv
// CHECK: %[[T:.*]] = transformer.tanh %[[R]]
// CHECK: %[[B1:.*]] = shard.broadcast %[[T]] on @pp grid_axes = [0] root = [1]
// CHECK: return %[[B1]]
// CHECK-NOT: func.func @layers(
shard.grid @pp(shape = 2)
func.func @layers(%in: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %stage = shard.process_multi_index on @pp axes = [0] : index
  %out = scf.index_switch %stage {transformer.pipeline_dispatch} -> tensor<2x8xf32>
  case 0 {
    %g = transformer.gelu %in : tensor<2x8xf32>
    %s = shard.send %g on @pp grid_axes = [0] destination = [1] : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %e = tensor.empty() : tensor<2x8xf32>
    scf.yield %e : tensor<2x8xf32>
  }
  default {
    %e = tensor.empty() : tensor<2x8xf32>
    %r = shard.recv %e on @pp grid_axes = [0] source = [0] : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %t = transformer.tanh %r : tensor<2x8xf32>
    scf.yield %t : tensor<2x8xf32>
  }
  %b = shard.broadcast %out on @pp grid_axes = [0] root = [1] : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// -----

// A switch that is not a pipeline's dispatch, and an entry without one,
// stay as they are.

// CHECK-NOT: mte.stage_programs
// CHECK-LABEL: func.func @plain
// CHECK: scf.index_switch
func.func @plain(%i: index, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = scf.index_switch %i -> tensor<2xf32>
  case 0 {
    scf.yield %x : tensor<2xf32>
  }
  default {
    %g = transformer.gelu %x : tensor<2xf32>
    scf.yield %g : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

shard.grid @pp(shape = 2)
func.func @twice(%in: tensor<2xf32>) -> tensor<2xf32> {
  %stage = shard.process_multi_index on @pp axes = [0] : index
  %0 = scf.index_switch %stage {transformer.pipeline_dispatch} -> tensor<2xf32>
  case 0 {
    scf.yield %in : tensor<2xf32>
  }
  default {
    scf.yield %in : tensor<2xf32>
  }
  // expected-error @+1 {{'twice' has more than one pipeline dispatch; a program per stage needs exactly one}}
  %1 = scf.index_switch %stage {transformer.pipeline_dispatch} -> tensor<2xf32>
  case 0 {
    scf.yield %0 : tensor<2xf32>
  }
  default {
    scf.yield %0 : tensor<2xf32>
  }
  return %1 : tensor<2xf32>
}
