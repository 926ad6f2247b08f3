// RUN: mte-opt %s -mte-convert-precision | FileCheck %s

// mte-convert-precision frees the f32 bytes of a weight it has converted
// (ConvertPrecision.cpp, releaseDeadWeight), but not while another constant
// holds the same blob in another shape, as a reshape fold leaves it: the
// view keeps its eight values.
// CHECK-LABEL: func @view_keeps_bytes
// CHECK-DAG: arith.constant dense_resource<w> : tensor<8xf32>
// CHECK-DAG: transformer.linear {{.*}} : (tensor<1x4xbf16>, tensor<2x4xbf16>) -> tensor<1x2xbf16>
// CHECK: w: "0x040000000000803F0000004000004040000080400000804000004040000000400000803F"
func.func @view_keeps_bytes(%x: tensor<1x4xf32>) -> (tensor<1x2xf32>, tensor<8xf32>) {
  %w = arith.constant dense_resource<w> : tensor<2x4xf32>
  %v = arith.constant dense_resource<w> : tensor<8xf32>
  %y = transformer.linear %x, %w layout <nk> : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<1x2xf32>
  return %y, %v : tensor<1x2xf32>, tensor<8xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000004000004040000080400000804000004040000000400000803F"
    }
  }
#-}
