// RUN: mte-opt %s -mte-matmul-to-library-call | FileCheck %s

// Matmuls on dense buffers whose A and B share a type (f32, bf16 or f16)
// and which accumulate into f32 become cuBLASLt calls: pointers as i64, the
// shape, transB for [N, K] weights, beta = 0 when a zero fill of the output
// right before is dropped (beta = 1 otherwise: linalg.matmul accumulates),
// and the mte_dtype code of A and B (1 f32, 2 f16, 3 bf16).
// CHECK: func.func private @mte_cuda_gemm(i64, i64, i64, i64, i64, i64, i64, i32, f32, i32)
// CHECK-LABEL: func.func @forward
// CHECK-NOT: linalg.fill
// CHECK: %[[X:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[W:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[O:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 6 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[NK:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[BETA0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[F32:.*]] = arith.constant 1 : i32
// CHECK: call @mte_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[M]], %[[N]], %[[K]], %[[NK]], %[[BETA0]], %[[F32]])
// CHECK: %[[T:.*]] = arith.constant 1 : i32
// CHECK: %[[BETA1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[T]], %[[BETA1]], %{{.*}})
// CHECK: %[[F16:.*]] = arith.constant 2 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[F16]])
// CHECK: %[[BF16:.*]] = arith.constant 3 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[BF16]])
// Batched (attention's products): the batch count leads the shape.
// CHECK-DAG: %[[B3:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[M5:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[N7:.*]] = arith.constant 7 : i64
// CHECK-DAG: %[[K2:.*]] = arith.constant 2 : i64
// CHECK: call @mte_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[B3]], %[[M5]], %[[N7]], %[[K2]], %{{.*}}, %{{.*}}, %{{.*}})
// Not for the library: a narrow accumulator, mixed A and B types.
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<6x8xf16>, memref<8x4xf16>) outs(%{{.*}} : memref<6x4xf16>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<6x8xf32>, memref<8x4xbf16>)
func.func @forward(%x: memref<6x8xf32>, %w: memref<8x4xf32>, %wt: memref<4x8xf32>,
                   %out: memref<6x4xf32>, %acc: memref<6x4xf32>,
                   %xh: memref<6x8xf16>, %wh: memref<8x4xf16>, %oh: memref<6x4xf32>,
                   %xb: memref<6x8xbf16>, %wb: memref<8x4xbf16>, %ob: memref<6x4xf32>,
                   %bx: memref<3x5x2xf32>, %bw: memref<3x2x7xf32>, %bo: memref<3x5x7xf32>,
                   %oh16: memref<6x4xf16>, %om: memref<6x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<6x4xf32>)
  linalg.matmul ins(%x, %w : memref<6x8xf32>, memref<8x4xf32>) outs(%out : memref<6x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wt : memref<6x8xf32>, memref<4x8xf32>) outs(%acc : memref<6x4xf32>)
  linalg.matmul ins(%xh, %wh : memref<6x8xf16>, memref<8x4xf16>) outs(%oh : memref<6x4xf32>)
  linalg.matmul ins(%xb, %wb : memref<6x8xbf16>, memref<8x4xbf16>) outs(%ob : memref<6x4xf32>)
  linalg.batch_matmul ins(%bx, %bw : memref<3x5x2xf32>, memref<3x2x7xf32>) outs(%bo : memref<3x5x7xf32>)
  linalg.matmul ins(%xh, %wh : memref<6x8xf16>, memref<8x4xf16>) outs(%oh16 : memref<6x4xf16>)
  linalg.matmul ins(%x, %wb : memref<6x8xf32>, memref<8x4xbf16>) outs(%om : memref<6x4xf32>)
  return
}
