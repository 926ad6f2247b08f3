// RUN: mte-opt %s -mte-pipeline-parallel=pp-size=2 | FileCheck %s

// One micro-batch: a graph input without a batch (a scalar) passes to the
// stage that reads it as it is.
// CHECK-LABEL: func.func private @scalar_input_stage1
// CHECK-SAME: (%{{.*}}: tensor<f32>, %{{.*}}: tensor<2x8x16xf32>)
// CHECK-LABEL: func.func @scalar_input
// CHECK-SAME: (%{{.*}}: tensor<2x8x16xf32>, %[[T:.*]]: tensor<f32>)
// CHECK: func.call @scalar_input_stage1(%[[T]], %{{.*}})
func.func @scalar_input(%x: tensor<2x8x16xf32>, %t: tensor<f32>) -> tensor<2x8x16xf32> {
  %w1 = arith.constant dense<0.5> : tensor<16x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<64x16xf32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y = transformer.linear %h, %w2 layout <kn> : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %h2 = transformer.linear %y, %w1 layout <kn> : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
  %y2 = transformer.linear %h2, %w2 layout <kn> : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %r = transformer.mul %y2, %t : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}
