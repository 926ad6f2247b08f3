// RUN: mte-opt %s -split-input-file -mte-inline-pipeline-stages -verify-diagnostics | FileCheck %s

// Two micro-batches through one stage: each call becomes its own copy of
// the stage's body, reading that call's operands; the stage goes.

// CHECK-NOT: func.func private @layers_stage0
// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[IN:.*]]: tensor<4x8xf32>)
// CHECK-NOT: func.call
// CHECK: %[[A:.*]] = tensor.extract_slice %[[IN]][0, 0]
// CHECK: %[[SA:.*]] = transformer.gelu %[[A]]
// CHECK: %[[MA:.*]] = transformer.mul %[[SA]], %[[A]]
// CHECK: %[[B:.*]] = tensor.extract_slice %[[IN]][2, 0]
// CHECK: %[[SB:.*]] = transformer.gelu %[[B]]
// CHECK: %[[MB:.*]] = transformer.mul %[[SB]], %[[B]]
// CHECK: tensor.insert_slice %[[MA]] into %{{.*}}[0, 0]
// CHECK: tensor.insert_slice %[[MB]] into %{{.*}}[2, 0]
func.func private @layers_stage0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {transformer.pipeline_stage = 0 : i64} {
  %s = transformer.gelu %x : tensor<2x8xf32>
  %m = transformer.mul %s, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %m : tensor<2x8xf32>
}
func.func @layers(%in: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = tensor.extract_slice %in[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %ra = func.call @layers_stage0(%a) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = tensor.extract_slice %in[2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %rb = func.call @layers_stage0(%b) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = tensor.insert_slice %ra into %e[0, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<4x8xf32>
  %1 = tensor.insert_slice %rb into %0[2, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A stage that returns its argument: the call's result is the operand.
// Functions that are not stages keep their calls.

// CHECK-LABEL: func.func private @helper
// CHECK-LABEL: func.func @forwarded
// CHECK-SAME: (%[[IN:.*]]: tensor<2xf32>)
// CHECK: %[[H:.*]] = call @helper(%[[IN]])
// CHECK: return %[[IN]], %[[H]]
func.func private @forwarded_stage1(%x: tensor<2xf32>) -> tensor<2xf32> attributes {transformer.pipeline_stage = 1 : i64} {
  return %x : tensor<2xf32>
}
func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func @forwarded(%in: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = func.call @forwarded_stage1(%in) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = func.call @helper(%in) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// expected-error @+1 {{pipeline stage 'branchy_stage0' has more than one block; only a straight-line stage can be inlined}}
func.func private @branchy_stage0(%x: tensor<2xf32>) -> tensor<2xf32> attributes {transformer.pipeline_stage = 0 : i64} {
  cf.br ^bb1
^bb1:
  return %x : tensor<2xf32>
}
func.func @branchy(%in: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @branchy_stage0(%in) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
