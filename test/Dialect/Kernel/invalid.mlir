// RUN: mte-opt %s -split-input-file -verify-diagnostics

func.func @no_callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{calls 'missing', which is not a function in the module}}
  %y = kernel.call @missing(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @two(memref<4xf32>, memref<4xf32>)
func.func @arity(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  // expected-error @+1 {{passes 3 operands to 'two', which takes 2 arguments and must return nothing}}
  %y = kernel.call @two(%x, %s : tensor<4xf32>, f32) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @ints(memref<4xi32>, memref<4xf32>)
func.func @element_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{tensor operand 0 of type 'tensor<4xf32>' is passed as 'memref<4xi32>', not a static buffer of its elements}}
  %y = kernel.call @ints(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @bigger(memref<8xf32>, memref<4xf32>)
func.func @element_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{tensor operand 0 of type 'tensor<4xf32>' is passed as 'memref<8xf32>'}}
  %y = kernel.call @bigger(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @scalar(memref<4xf32>, f64, memref<4xf32>)
func.func @scalar_type(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  // expected-error @+1 {{operand 1 of type 'f32' is passed as 'f64'}}
  %y = kernel.call @scalar(%x, %s : tensor<4xf32>, f32) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @k(memref<4xf32>, memref<4xf32>)
func.func @result_type(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{result 0 has type 'tensor<2x2xf32>', its output has 'tensor<4xf32>'}}
  %y = kernel.call @k(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
