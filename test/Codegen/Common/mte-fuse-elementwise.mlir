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

// A block-scaled product keeps its operands and tag (mte-matmul-to-library-call
// hands it to cuBLASLt) even where a scale is a splat constant: upstream's
// splat folding would rebuild it untagged.
// CHECK-LABEL: func.func @block_scaled
// CHECK: %[[WS:.*]] = arith.constant dense<5.000000e-01> : tensor<2x4xf32>
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %arg2, %[[WS]] :
// CHECK-SAME: mte.block_scaled_gemm
#bx = affine_map<(m, n, k) -> (m, k)>
#bw = affine_map<(m, n, k) -> (n, k)>
#bxs = affine_map<(m, n, k) -> (k floordiv 128, m)>
#bws = affine_map<(m, n, k) -> (n floordiv 128, k floordiv 128)>
#bo = affine_map<(m, n, k) -> (m, n)>
func.func @block_scaled(%x: tensor<8x256xf8E4M3FN>, %w: tensor<144x256xf8E4M3FN>, %sx: tensor<2x8xf32>) -> tensor<8x144xf32> {
  %sw = arith.constant dense<0.5> : tensor<2x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x144xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<8x144xf32>) -> tensor<8x144xf32>
  %p = linalg.generic {indexing_maps = [#bx, #bw, #bxs, #bws, #bo], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %sx, %sw : tensor<8x256xf8E4M3FN>, tensor<144x256xf8E4M3FN>, tensor<2x8xf32>, tensor<2x4xf32>)
      outs(%fill : tensor<8x144xf32>) attrs = {mte.block_scaled_gemm} {
  ^bb0(%a: f8E4M3FN, %c: f8E4M3FN, %s: f32, %t: f32, %acc: f32):
    %a32 = arith.extf %a : f8E4M3FN to f32
    %c32 = arith.extf %c : f8E4M3FN to f32
    %st = arith.mulf %s, %t : f32
    %q = arith.mulf %a32, %c32 : f32
    %r = arith.mulf %q, %st : f32
    %u = arith.addf %acc, %r : f32
    linalg.yield %u : f32
  } -> tensor<8x144xf32>
  return %p : tensor<8x144xf32>
}
