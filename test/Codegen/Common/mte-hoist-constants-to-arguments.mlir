// RUN: mte-opt %s -mte-hoist-constants-to-arguments | FileCheck %s

// Every tensor constant of a public function becomes an argument appended
// after the others, its value a public constant global the ABI table
// points at; scalars and private functions are left alone.
// CHECK: memref.global "public" constant @__mte_weight_0 : memref<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> {alignment = 64 : i64}
// CHECK: memref.global "public" constant @__mte_weight_1 : memref<2x2xi64> = dense<7> {alignment = 64 : i64}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[W0:.*]]: tensor<4xf32> {mte.weight = @__mte_weight_0}, %[[W1:.*]]: tensor<2x2xi64> {mte.weight = @__mte_weight_1})
// CHECK: %[[C:.*]] = arith.constant 5 : index
// CHECK-NOT: arith.constant dense
// CHECK: return %[[W0]], %[[W1]], %[[C]]
func.func @forward(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xi64>, index) {
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %i = arith.constant dense<7> : tensor<2x2xi64>
  %c = arith.constant 5 : index
  return %w, %i, %c : tensor<4xf32>, tensor<2x2xi64>, index
}

// CHECK-LABEL: func.func private @helper
// CHECK: arith.constant dense<1.000000e+00> : tensor<2xf32>
func.func private @helper() -> tensor<2xf32> {
  %w = arith.constant dense<1.0> : tensor<2xf32>
  return %w : tensor<2xf32>
}
