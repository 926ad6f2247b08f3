// RUN: mte-opt %s -split-input-file -mte-recognize-gelu | FileCheck %s

// Exact GELU as the TorchScript exporter writes it (BERT).
// CHECK-LABEL: func @erf_div
// CHECK-NEXT: %[[G:.*]] = transformer.gelu %arg0 : tensor<4x128xf32>
// CHECK-NEXT: return %[[G]]
func.func @erf_div(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %0 = transformer.div %x, %sqrt2 : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %1 = transformer.erf %0 : tensor<4x128xf32>
  %2 = transformer.add %1, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %3 = transformer.mul %x, %2 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %4 = transformer.mul %3, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  return %4 : tensor<4x128xf32>
}

// -----

// The dynamo form: Mul by 1/sqrt(2), 0.5 applied to x first.
// CHECK-LABEL: func @erf_mul
// CHECK-NEXT: transformer.gelu %arg0 : tensor<4x128xf32>
func.func @erf_mul(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %rsqrt2 = arith.constant dense<0.707106769> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %h = transformer.mul %half, %x : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %0 = transformer.mul %x, %rsqrt2 : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %1 = transformer.erf %0 : tensor<4x128xf32>
  %2 = transformer.add %one, %1 : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %3 = transformer.mul %h, %2 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %3 : tensor<4x128xf32>
}

// -----

// GPT-2's tanh approximation with Pow(x, 3).
// CHECK-LABEL: func @tanh_pow
// CHECK-NEXT: transformer.gelu %arg0 approximate <tanh> : tensor<4x128xf32>
func.func @tanh_pow(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %three = arith.constant dense<3.0> : tensor<f32>
  %k = arith.constant dense<0.044715> : tensor<f32>
  %c = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %h = transformer.mul %x, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %cube = transformer.pow %x, %three : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %kc = transformer.mul %k, %cube : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %p = transformer.add %x, %kc : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %s = transformer.mul %c, %p : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %t = transformer.tanh %s : tensor<4x128xf32>
  %t1 = transformer.add %t, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %y = transformer.mul %h, %t1 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %y : tensor<4x128xf32>
}

// -----

// The cube as x * x * x.
// CHECK-LABEL: func @tanh_cube_products
// CHECK-NEXT: transformer.gelu %arg0 approximate <tanh>
func.func @tanh_cube_products(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %k = arith.constant dense<0.044715> : tensor<f32>
  %c = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %h = transformer.mul %x, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %sq = transformer.mul %x, %x : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %cube = transformer.mul %sq, %x : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %kc = transformer.mul %cube, %k : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %p = transformer.add %kc, %x : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %s = transformer.mul %p, %c : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %t = transformer.tanh %s : tensor<4x128xf32>
  %t1 = transformer.add %t, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %y = transformer.mul %h, %t1 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %y : tensor<4x128xf32>
}

// -----

// negative_: 0.6 is not 0.5.
// CHECK-LABEL: func @negative_wrong_half
// CHECK-NOT: transformer.gelu
func.func @negative_wrong_half(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.6> : tensor<f32>
  %0 = transformer.div %x, %sqrt2 : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %1 = transformer.erf %0 : tensor<4x128xf32>
  %2 = transformer.add %1, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %3 = transformer.mul %x, %2 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %4 = transformer.mul %3, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  return %4 : tensor<4x128xf32>
}

// -----

// negative_: the erf has another user.
// CHECK-LABEL: func @negative_shared_erf
// CHECK-NOT: transformer.gelu
func.func @negative_shared_erf(%x: tensor<4x128xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>) {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %0 = transformer.div %x, %sqrt2 : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %1 = transformer.erf %0 : tensor<4x128xf32>
  %2 = transformer.add %1, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %3 = transformer.mul %x, %2 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %4 = transformer.mul %3, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  return %4, %1 : tensor<4x128xf32>, tensor<4x128xf32>
}

// -----

// negative_: erf of a different value than the one multiplied.
// CHECK-LABEL: func @negative_other_argument
// CHECK-NOT: transformer.gelu
func.func @negative_other_argument(%x: tensor<4x128xf32>, %z: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %0 = transformer.div %z, %sqrt2 : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %1 = transformer.erf %0 : tensor<4x128xf32>
  %2 = transformer.add %1, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %3 = transformer.mul %x, %2 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %4 = transformer.mul %3, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  return %4 : tensor<4x128xf32>
}

// -----

// negative_: the tanh coefficient is not 0.044715.
// CHECK-LABEL: func @negative_tanh_coefficient
// CHECK-NOT: transformer.gelu
func.func @negative_tanh_coefficient(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %three = arith.constant dense<3.0> : tensor<f32>
  %k = arith.constant dense<0.05> : tensor<f32>
  %c = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %h = transformer.mul %x, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %cube = transformer.pow %x, %three : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %kc = transformer.mul %k, %cube : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %p = transformer.add %x, %kc : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %s = transformer.mul %c, %p : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %t = transformer.tanh %s : tensor<4x128xf32>
  %t1 = transformer.add %t, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %y = transformer.mul %h, %t1 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %y : tensor<4x128xf32>
}

// -----

// A float16 model holds its constants as float16 values: 0.044715 is
// 0.044708 (1.6e-4 off, beyond 1e-4 of the real value, within it of the
// float16 one), sqrt(2/pi) 0.79785.
// CHECK-LABEL: func @tanh_f16_constants
// CHECK-NEXT: transformer.gelu %arg0 approximate <tanh> : tensor<4x128xf16>
func.func @tanh_f16_constants(%x: tensor<4x128xf16>) -> tensor<4x128xf16> {
  %three = arith.constant dense<3.0> : tensor<f16>
  %k = arith.constant dense<0.044715> : tensor<f16>
  %c = arith.constant dense<0.797884583> : tensor<f16>
  %one = arith.constant dense<1.0> : tensor<f16>
  %half = arith.constant dense<0.5> : tensor<f16>
  %h = transformer.mul %x, %half : (tensor<4x128xf16>, tensor<f16>) -> tensor<4x128xf16>
  %cube = transformer.pow %x, %three : (tensor<4x128xf16>, tensor<f16>) -> tensor<4x128xf16>
  %kc = transformer.mul %k, %cube : (tensor<f16>, tensor<4x128xf16>) -> tensor<4x128xf16>
  %p = transformer.add %x, %kc : (tensor<4x128xf16>, tensor<4x128xf16>) -> tensor<4x128xf16>
  %s = transformer.mul %c, %p : (tensor<f16>, tensor<4x128xf16>) -> tensor<4x128xf16>
  %t = transformer.tanh %s : tensor<4x128xf16>
  %t1 = transformer.add %t, %one : (tensor<4x128xf16>, tensor<f16>) -> tensor<4x128xf16>
  %y = transformer.mul %h, %t1 : (tensor<4x128xf16>, tensor<4x128xf16>) -> tensor<4x128xf16>
  return %y : tensor<4x128xf16>
}

// -----

// negative_: a float32 constant 1.6e-4 off 0.044715 (what float16 rounding
// would give) is still rejected in a float32 model.
// CHECK-LABEL: func @negative_f32_rounded_coefficient
// CHECK-NOT: transformer.gelu
func.func @negative_f32_rounded_coefficient(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %three = arith.constant dense<3.0> : tensor<f32>
  %k = arith.constant dense<0.0447082519> : tensor<f32>
  %c = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %h = transformer.mul %x, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %cube = transformer.pow %x, %three : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %kc = transformer.mul %k, %cube : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %p = transformer.add %x, %kc : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %s = transformer.mul %c, %p : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %t = transformer.tanh %s : tensor<4x128xf32>
  %t1 = transformer.add %t, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %y = transformer.mul %h, %t1 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %y : tensor<4x128xf32>
}

// -----

// Gemma's GeGLU: the gate's tanh GELU times the up projection.
// CHECK-LABEL: func @geglu
// CHECK-NEXT: %[[G:.*]] = transformer.geglu %arg0, %arg1 approximate <tanh> : tensor<4x128xf32>
// CHECK-NEXT: return %[[G]]
func.func @geglu(%gate: tensor<4x128xf32>, %up: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %three = arith.constant dense<3.0> : tensor<f32>
  %k = arith.constant dense<0.044715> : tensor<f32>
  %c = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %h = transformer.mul %gate, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %cube = transformer.pow %gate, %three : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %kc = transformer.mul %k, %cube : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %p = transformer.add %gate, %kc : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %s = transformer.mul %c, %p : (tensor<f32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %t = transformer.tanh %s : tensor<4x128xf32>
  %t1 = transformer.add %t, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %y = transformer.mul %h, %t1 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %o = transformer.mul %up, %y : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %o : tensor<4x128xf32>
}

// -----

// negative_: a GELU with another user stays a GELU and a product.
// CHECK-LABEL: func @negative_geglu_shared_gelu
// CHECK: transformer.gelu
// CHECK-NOT: transformer.geglu
func.func @negative_geglu_shared_gelu(%gate: tensor<4x128xf32>, %up: tensor<4x128xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>) {
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %0 = transformer.div %gate, %sqrt2 : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %1 = transformer.erf %0 : tensor<4x128xf32>
  %2 = transformer.add %1, %one : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %3 = transformer.mul %gate, %2 : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %4 = transformer.mul %3, %half : (tensor<4x128xf32>, tensor<f32>) -> tensor<4x128xf32>
  %5 = transformer.mul %4, %up : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  return %5, %4 : tensor<4x128xf32>, tensor<4x128xf32>
}
