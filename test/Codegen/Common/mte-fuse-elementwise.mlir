// RUN: mte-opt %s -mte-fuse-elementwise | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
// Two elementwise ops fuse into one loop nest; neither fuses into the
// matmul that reads the result (it stays a named op for cuBLASLt), and the
// matmul's consumer epilogue stays separate from it.
// CHECK-LABEL: func.func @chain
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[E]], %arg1
// CHECK: linalg.generic {{.*}} ins(%[[P]]
func.func @chain(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x2xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = linalg.matmul ins(%1, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%fill : tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%2 : tensor<4x2xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}
