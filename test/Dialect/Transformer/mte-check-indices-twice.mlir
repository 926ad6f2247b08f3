// RUN: mte-opt %s -mte-check-indices -verify-diagnostics

// A function that already reports index checks cannot take more (its status
// table would no longer be the last result the ABI expects).
// expected-error @+1 {{already returns an index status; run mte-check-indices once}}
func.func @checked_twice(%data: tensor<3x4xf32>, %ids: tensor<2xi64>) -> tensor<2x4xf32> attributes {transformer.index_checks = []} {
  %0 = transformer.gather %data[%ids] : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
