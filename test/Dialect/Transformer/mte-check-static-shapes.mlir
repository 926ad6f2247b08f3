// RUN: mte-opt %s -split-input-file -allow-unregistered-dialect -mte-check-static-shapes -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @static
// CHECK: transformer.add
func.func @static(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = transformer.add %x, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// expected-error @+1 {{argument #0 of @dynamic_argument has type 'tensor<?x8xf32>', which is not static; give its size with --input-shape}}
func.func @dynamic_argument(%x: tensor<?x8xf32>) {
  return
}

// -----

func.func @dynamic_result(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result #0 has type 'tensor<?x8xf32>', which is not static}}
  %0 = "test.dynamic"(%x) : (tensor<2x8xf32>) -> tensor<?x8xf32>
  return
}
