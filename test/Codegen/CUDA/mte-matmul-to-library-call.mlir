// RUN: mte-opt %s -split-input-file -mte-matmul-to-library-call | FileCheck %s

// Matmuls on dense buffers whose A and B share a type (f32, bf16 or f16)
// and which accumulate into f32 become cuBLASLt calls: pointers as i64, the
// shape, transB for [N, K] weights, alpha (1 unless the epilogue says),
// beta = 0 when a zero fill of the output
// right before is dropped (beta = 1 otherwise: linalg.matmul accumulates),
// the mte_dtype codes of A and B and of the output (1 f32, 2 f16, 3 bf16),
// cuBLASLt's epilogue (1: none), the bias and C pointers, the fp8 scale
// pointers (0: none), the scale mode, C's type and the E4M3 output's scale
// and amax pointers (0: none).
// CHECK: func.func private @mte_cuda_gemm(i64, i64, i64, i64, i64, i64, i64, i32, f32, f32, i32, i32, i32, i64, i64, i64, i64, i32, i32, i64, i64)
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
// CHECK: call @mte_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[M]], %[[N]], %[[K]], %[[NK]], %[[ALPHA1:.*]], %[[BETA0]], %[[F32]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[T:.*]] = arith.constant 1 : i32
// CHECK: %[[ALPHA_T:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BETA1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[T]], %[[ALPHA_T]], %[[BETA1]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[F16:.*]] = arith.constant 2 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[F16]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[BF16:.*]] = arith.constant 3 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[BF16]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// Batched (attention's products): the batch count leads the shape.
// CHECK-DAG: %[[B3:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[M5:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[N7:.*]] = arith.constant 7 : i64
// CHECK-DAG: %[[K2:.*]] = arith.constant 2 : i64
// CHECK: call @mte_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[B3]], %[[M5]], %[[N7]], %[[K2]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
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

// -----

// A linear's epilogue (tagged by the lowering) runs in cuBLASLt: bias and
// GELU (36 = GELU_BIAS) writing bf16, the product's f32 buffer unused; with
// a residual, C is the residual and beta = 1 (4 = BIAS). An untagged
// elementwise op after a GEMM stays a kernel.
// CHECK-LABEL: func.func @epilogues
// CHECK: memref.extract_aligned_pointer_as_index %arg3
// CHECK: %[[BF16A:.*]] = arith.constant 3 : i32
// CHECK: %[[BF16D:.*]] = arith.constant 3 : i32
// CHECK: %[[GELU_BIAS:.*]] = arith.constant 36 : i32
// CHECK: memref.extract_aligned_pointer_as_index %arg2
// CHECK: call @mte_cuda_gemm({{.*}}, %[[BF16A]], %[[BF16D]], %[[GELU_BIAS]], %{{.*}}, %{{.*}})
// CHECK-NOT: linalg.generic
// CHECK: %[[ALPHA_R:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BETA1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BIAS:.*]] = arith.constant 4 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[ALPHA_R]], %[[BETA1]], %{{.*}}, %{{.*}}, %[[BIAS]], %{{.*}}, %{{.*}})
// CHECK: linalg.generic
// CHECK-NOT: mte.gemm_epilogue
func.func @epilogues(%x: memref<6x8xbf16>, %w: memref<4x8xbf16>, %b: memref<4xbf16>,
                     %y: memref<2x3x4xbf16>, %r: memref<6x4xbf16>, %z: memref<6x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<6x4xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<6x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<6x8xbf16>, memref<4x8xbf16>) outs(%tmp : memref<6x4xf32>)
  %view = memref.expand_shape %tmp [[0, 1], [2]] output_shape [2, 3, 4] : memref<6x4xf32> into memref<2x3x4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%view, %b : memref<2x3x4xf32>, memref<4xbf16>) outs(%y : memref<2x3x4xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<gelu_tanh>, bias}} {
  ^bb0(%p: f32, %bias: bf16, %o: bf16):
    %e = arith.extf %bias : bf16 to f32
    %s = arith.addf %p, %e : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %tmp : memref<6x4xf32>
  %tmp2 = memref.alloc() : memref<6x4xf32>
  linalg.fill ins(%zero : f32) outs(%tmp2 : memref<6x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<6x8xbf16>, memref<4x8xbf16>) outs(%tmp2 : memref<6x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp2, %b, %r : memref<6x4xf32>, memref<4xbf16>, memref<6x4xbf16>) outs(%r : memref<6x4xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, bias, residual}} {
  ^bb0(%p: f32, %bias: bf16, %res: bf16, %o: bf16):
    %e = arith.extf %bias : bf16 to f32
    %s = arith.addf %p, %e : f32
    %q = arith.extf %res : bf16 to f32
    %u = arith.addf %s, %q : f32
    %t = arith.truncf %u : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %tmp2 : memref<6x4xf32>
  %tmp3 = memref.alloc() : memref<6x4xf32>
  linalg.fill ins(%zero : f32) outs(%tmp3 : memref<6x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<6x8xbf16>, memref<4x8xbf16>) outs(%tmp3 : memref<6x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp3 : memref<6x4xf32>) outs(%z : memref<6x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.mulf %p, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %tmp3 : memref<6x4xf32>
  return
}

// -----

// Zeros copied from a zero-filled buffer (bufferization's copy of a zero
// tensor that CSE shared between GEMMs) start the product as a fill does:
// beta = 0 and the copy goes; when something reads the zeros between the
// copy and the GEMM, the copy stays (beta still 0).
// CHECK-LABEL: func.func @zeros_copied
// CHECK: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: %[[BETA0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[BETA0]],
// CHECK: linalg.copy ins(%{{.*}} : memref<6x4xf32>) outs(%[[O2:.*]] : memref<6x4xf32>)
// CHECK: linalg.copy ins(%[[O2]] : memref<6x4xf32>)
// CHECK: %[[BETA0B:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[BETA0B]],
func.func @zeros_copied(%x: memref<6x8xf32>, %w: memref<4x8xf32>, %o1: memref<6x4xf32>, %o2: memref<6x4xf32>, %seen: memref<6x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %zeros = memref.alloc() : memref<6x4xf32>
  linalg.fill ins(%zero : f32) outs(%zeros : memref<6x4xf32>)
  linalg.copy ins(%zeros : memref<6x4xf32>) outs(%o1 : memref<6x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<6x8xf32>, memref<4x8xf32>) outs(%o1 : memref<6x4xf32>)
  linalg.copy ins(%zeros : memref<6x4xf32>) outs(%o2 : memref<6x4xf32>)
  linalg.copy ins(%o2 : memref<6x4xf32>) outs(%seen : memref<6x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<6x8xf32>, memref<4x8xf32>) outs(%o2 : memref<6x4xf32>)
  memref.dealloc %zeros : memref<6x4xf32>
  return
}

// -----

// E4M3 operands with B [N, K] and K, N multiples of 16 run in cuBLASLt
// (11: f8e4m3fn), the scales of the tagged epilogue passed as the last two
// pointers (x's, then W's), its alpha (the constant scales) as alpha, and
// the scaled epilogue dropped. Not for the
// library: W [K, N] (FP8 GEMMs take both operands K-major), K = 8; with a
// bias and an f32 output the GEMM runs, unscaled, and the epilogue stays.
// CHECK-LABEL: func.func @fp8
// CHECK: %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[E4M3:.*]] = arith.constant 11 : i32
// CHECK: %[[BF16:.*]] = arith.constant 3 : i32
// CHECK: %[[XS:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[XSI:.*]] = arith.index_cast %[[XS]]
// CHECK: %[[WS:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: %[[WSI:.*]] = arith.index_cast %[[WS]]
// CHECK: %[[TENSOR:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[C:.*]] = arith.constant 3 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[ALPHA]], %{{.*}}, %[[E4M3]], %[[BF16]], %{{.*}}, %{{.*}}, %{{.*}}, %[[XSI]], %[[WSI]], %[[TENSOR]], %[[C]], %{{.*}}, %{{.*}})
// CHECK-NOT: mte.gemm_epilogue
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<32x16xf8E4M3FN>, memref<16x32xf8E4M3FN>)
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : memref<32x8xf8E4M3FN>, memref<32x8xf8E4M3FN>)
// CHECK: call @mte_cuda_gemm(
// CHECK-NEXT: linalg.generic
// CHECK-SAME: mte.gemm_epilogue
func.func @fp8(%x: memref<32x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>, %sx: memref<f32>, %sw: memref<f32>,
               %y: memref<32x32xbf16>, %wkn: memref<16x32xf8E4M3FN>, %o: memref<32x32xf32>,
               %x8: memref<32x8xf8E4M3FN>, %w8: memref<32x8xf8E4M3FN>, %b: memref<32xf32>, %y32: memref<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<32x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%tmp : memref<32x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %sx, %sw : memref<32x32xf32>, memref<f32>, memref<f32>) outs(%y : memref<32x32xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, alpha = 2.0 : f32, input_scale, weight_scale}} {
  ^bb0(%p: f32, %a: f32, %c: f32, %out: bf16):
    %two = arith.constant 2.0 : f32
    %s0 = arith.mulf %a, %c : f32
    %s = arith.mulf %s0, %two : f32
    %v = arith.mulf %p, %s : f32
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %tmp : memref<32x32xf32>
  linalg.matmul ins(%x, %wkn : memref<32x16xf8E4M3FN>, memref<16x32xf8E4M3FN>) outs(%o : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x8, %w8 : memref<32x8xf8E4M3FN>, memref<32x8xf8E4M3FN>) outs(%o : memref<32x32xf32>)
  %tmp2 = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp2 : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<32x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%tmp2 : memref<32x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp2, %b : memref<32x32xf32>, memref<32xf32>) outs(%y32 : memref<32x32xf32>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, bias}} {
  ^bb0(%p: f32, %bias: f32, %out: f32):
    %v = arith.addf %p, %bias : f32
    linalg.yield %v : f32
  }
  memref.dealloc %tmp2 : memref<32x32xf32>
  return
}

// -----

// An fp8 linear writing E4M3 (mte-fuse-linear-fp8-output): the epilogue's
// f32 value, the tagged cast of it times the output scale and the tagged
// amax (from a zero copied in) become one call: output type 11 (E4M3), C
// and bias bf16 (3), GELU + bias (36), the D scale and amax pointers. The
// buffer of the f32 value is written again after (the next layer's): the
// readers are those before.
// CHECK-LABEL: func.func @fp8_output
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: %[[Q:.*]] = memref.extract_aligned_pointer_as_index %arg6
// CHECK: %[[QI:.*]] = arith.index_cast %[[Q]]
// CHECK-DAG: %[[FP8:.*]] = arith.constant 11 : i32
// CHECK-DAG: %[[GELU_BIAS:.*]] = arith.constant 36 : i32
// CHECK-DAG: %[[C_BF16:.*]] = arith.constant 3 : i32
// CHECK: %[[DS:.*]] = memref.extract_aligned_pointer_as_index %arg4
// CHECK: %[[DSI:.*]] = arith.index_cast %[[DS]]
// CHECK: %[[AMAX:.*]] = memref.extract_aligned_pointer_as_index %arg7
// CHECK: %[[AMAXI:.*]] = arith.index_cast %[[AMAX]]
// CHECK: call @mte_cuda_gemm(%{{.*}}, %{{.*}}, %[[QI]], {{.*}}, %[[FP8]], %c11_i32{{.*}}, %[[GELU_BIAS]], {{.*}}, %[[C_BF16]], %[[DSI]], %[[AMAXI]])
// CHECK-NOT: linalg.generic
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: return
func.func @fp8_output(%x: memref<32x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>, %sx: memref<f32>, %b: memref<32xbf16>,
                      %scale: memref<f32>, %zero_src: memref<f32>, %q: memref<32x32xf8E4M3FN>, %amax: memref<f32>,
                      %later: memref<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<32x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%tmp : memref<32x32xf32>)
  %y = memref.alloc() : memref<32x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %sx, %b : memref<32x32xf32>, memref<f32>, memref<32xbf16>) outs(%y : memref<32x32xf32>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<gelu_tanh>, input_scale, bias, fp8_output}} {
  ^bb0(%p: f32, %a: f32, %c: bf16, %out: f32):
    %v = arith.mulf %p, %a : f32
    %e = arith.extf %c : bf16 to f32
    %r = arith.addf %v, %e : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y, %scale : memref<32x32xf32>, memref<f32>) outs(%q : memref<32x32xf8E4M3FN>)
      attrs = {mte.gemm_fp8_output} {
  ^bb0(%v: f32, %s: f32, %out: f8E4M3FN):
    %m = arith.mulf %v, %s : f32
    %t = arith.truncf %m : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  %init = memref.alloc() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%init : memref<f32>)
  linalg.copy ins(%init : memref<f32>) outs(%amax : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%y : memref<32x32xf32>) outs(%amax : memref<f32>)
      attrs = {mte.gemm_output_amax} {
  ^bb0(%v: f32, %acc: f32):
    %a = math.absf %v : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  // The next layer's value in the same buffer, read by another op.
  linalg.fill ins(%zero : f32) outs(%y : memref<32x32xf32>)
  linalg.copy ins(%y : memref<32x32xf32>) outs(%later : memref<32x32xf32>)
  memref.dealloc %y : memref<32x32xf32>
  memref.dealloc %tmp : memref<32x32xf32>
  return
}

// -----

// cuBLASLt wants its scalar pointers 16-byte aligned: an amax in slot 1 of
// a vector (4 bytes in) keeps the epilogue, cast and amax as they are; slot
// 4 (16 bytes in) is written by cuBLASLt.
// CHECK-LABEL: func.func @fp8_output_amax_alignment
// CHECK: %[[SLOT:.*]] = memref.subview %arg5[4]
// CHECK: call @mte_cuda_gemm({{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}})
// CHECK: mte.gemm_epilogue
// CHECK: mte.gemm_fp8_output
// CHECK: mte.gemm_output_amax
// CHECK: %[[AMAX:.*]] = memref.extract_aligned_pointer_as_index %[[SLOT]]
// CHECK: call @mte_cuda_gemm(
// CHECK-NOT: mte.gemm_output_amax
// CHECK: return
func.func @fp8_output_amax_alignment(%x: memref<32x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>, %sx: memref<f32>,
                                     %scale: memref<f32>, %q: memref<32x32xf8E4M3FN>, %amaxes: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %slot1 = memref.subview %amaxes[1] [1] [1] : memref<8xf32> to memref<f32, strided<[], offset: 1>>
  %slot4 = memref.subview %amaxes[4] [1] [1] : memref<8xf32> to memref<f32, strided<[], offset: 4>>
  %tmp = memref.alloc() : memref<32x32xf32>
  %y = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<32x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%tmp : memref<32x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %sx : memref<32x32xf32>, memref<f32>) outs(%y : memref<32x32xf32>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, input_scale, fp8_output}} {
  ^bb0(%p: f32, %a: f32, %out: f32):
    %v = arith.mulf %p, %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y, %scale : memref<32x32xf32>, memref<f32>) outs(%q : memref<32x32xf8E4M3FN>)
      attrs = {mte.gemm_fp8_output} {
  ^bb0(%v: f32, %s: f32, %out: f8E4M3FN):
    %m = arith.mulf %v, %s : f32
    %t = arith.truncf %m : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  linalg.fill ins(%zero : f32) outs(%slot1 : memref<f32, strided<[], offset: 1>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%y : memref<32x32xf32>) outs(%slot1 : memref<f32, strided<[], offset: 1>>)
      attrs = {mte.gemm_output_amax} {
  ^bb0(%v: f32, %acc: f32):
    %a = math.absf %v : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  %tmp2 = memref.alloc() : memref<32x32xf32>
  %y2 = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp2 : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<32x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%tmp2 : memref<32x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp2, %sx : memref<32x32xf32>, memref<f32>) outs(%y2 : memref<32x32xf32>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, input_scale, fp8_output}} {
  ^bb0(%p: f32, %a: f32, %out: f32):
    %v = arith.mulf %p, %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y2, %scale : memref<32x32xf32>, memref<f32>) outs(%q : memref<32x32xf8E4M3FN>)
      attrs = {mte.gemm_fp8_output} {
  ^bb0(%v: f32, %s: f32, %out: f8E4M3FN):
    %m = arith.mulf %v, %s : f32
    %t = arith.truncf %m : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  linalg.fill ins(%zero : f32) outs(%slot4 : memref<f32, strided<[], offset: 4>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%y2 : memref<32x32xf32>) outs(%slot4 : memref<f32, strided<[], offset: 4>>)
      attrs = {mte.gemm_output_amax} {
  ^bb0(%v: f32, %acc: f32):
    %a = math.absf %v : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  memref.dealloc %y2 : memref<32x32xf32>
  memref.dealloc %tmp2 : memref<32x32xf32>
  memref.dealloc %y : memref<32x32xf32>
  memref.dealloc %tmp : memref<32x32xf32>
  return
}

// -----

// An E4M3-writing epilogue whose f32 value something else reads as well
// stays as it is: the GEMM writes f32.
// CHECK-LABEL: func.func @fp8_output_other_reader
// CHECK: call @mte_cuda_gemm({{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}})
// CHECK: mte.gemm_epilogue
// CHECK: mte.gemm_fp8_output
func.func @fp8_output_other_reader(%x: memref<32x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>, %sx: memref<f32>,
                                   %scale: memref<f32>, %q: memref<32x32xf8E4M3FN>, %seen: memref<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<32x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%tmp : memref<32x32xf32>)
  %y = memref.alloc() : memref<32x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %sx : memref<32x32xf32>, memref<f32>) outs(%y : memref<32x32xf32>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, input_scale, fp8_output}} {
  ^bb0(%p: f32, %a: f32, %out: f32):
    %v = arith.mulf %p, %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y, %scale : memref<32x32xf32>, memref<f32>) outs(%q : memref<32x32xf8E4M3FN>)
      attrs = {mte.gemm_fp8_output} {
  ^bb0(%v: f32, %s: f32, %out: f8E4M3FN):
    %m = arith.mulf %v, %s : f32
    %t = arith.truncf %m : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  linalg.copy ins(%y : memref<32x32xf32>) outs(%seen : memref<32x32xf32>)
  memref.dealloc %y : memref<32x32xf32>
  memref.dealloc %tmp : memref<32x32xf32>
  return
}

// -----

// Delayed scaling's scales are elements of one vector: a scale read
// through a rank-0 view at an offset is passed as the vector's address
// plus the offset's bytes.
// CHECK-LABEL: func.func @fp8_scale_views
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<f32, strided<[], offset: 3>>
// CHECK: %[[BUF:.*]], %[[OFF:.*]] = memref.extract_strided_metadata %{{.*}} : memref<f32, strided<[], offset: 3>>
// CHECK: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %[[FOUR]]
// CHECK: %[[ADDR:.*]] = arith.addi %[[BASE]], %[[BYTES]]
// CHECK: %[[XS:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: call @mte_cuda_gemm({{.*}}, %[[XS]], %{{.*}}, %{{.*}})
// CHECK-NOT: mte.gemm_epilogue
func.func @fp8_scale_views(%x: memref<32x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>, %scales: memref<4xf32>, %sw: memref<f32>,
                           %y: memref<32x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  %slot = memref.subview %scales[3] [1] [1] : memref<4xf32> to memref<1xf32, strided<[1], offset: 3>>
  %sx = memref.collapse_shape %slot [] : memref<1xf32, strided<[1], offset: 3>> into memref<f32, strided<[], offset: 3>>
  %tmp = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<32x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<32x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%tmp : memref<32x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %sx, %sw : memref<32x32xf32>, memref<f32, strided<[], offset: 3>>, memref<f32>) outs(%y : memref<32x32xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, input_scale, weight_scale}} {
  ^bb0(%p: f32, %a: f32, %c: f32, %out: bf16):
    %s = arith.mulf %a, %c : f32
    %v = arith.mulf %p, %s : f32
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %tmp : memref<32x32xf32>
  return
}

// -----

// A block-scaled FP8 product (mte::buildBlockScaledProduct's, tagged) runs
// in cuBLASLt with scale mode 1 (MTE_GEMM_SCALE_BLOCK128), x's [K/128, M]
// and W's [N/128, 4] scales as the scale pointers, and takes its tagged
// bias epilogue along. Untagged, the same loop nest stays.
// CHECK-LABEL: func.func @fp8_blocks
// CHECK: %[[XS:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[XSI:.*]] = arith.index_cast %[[XS]]
// CHECK: %[[WS:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: %[[WSI:.*]] = arith.index_cast %[[WS]]
// CHECK: %[[BLOCKS:.*]] = arith.constant 1 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[XSI]], %[[WSI]], %[[BLOCKS]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: mte.gemm_epilogue
// CHECK: linalg.generic
// CHECK-NOT: mte.block_scaled_gemm
// CHECK: return
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#xs = affine_map<(m, n, k) -> (k floordiv 128, m)>
#ws = affine_map<(m, n, k) -> (n floordiv 128, k floordiv 128)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @fp8_blocks(%x: memref<8x256xf8E4M3FN>, %w: memref<144x256xf8E4M3FN>, %sx: memref<2x8xf32>, %sw: memref<2x4xf32>,
                      %b: memref<144xbf16>, %y: memref<8x144xbf16>, %o2: memref<8x144xf32>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<8x144xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<8x144xf32>)
  linalg.generic {indexing_maps = [#x, #w, #xs, #ws, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %sx, %sw : memref<8x256xf8E4M3FN>, memref<144x256xf8E4M3FN>, memref<2x8xf32>, memref<2x4xf32>)
      outs(%tmp : memref<8x144xf32>) attrs = {mte.block_scaled_gemm} {
  ^bb0(%a: f8E4M3FN, %c: f8E4M3FN, %s: f32, %t: f32, %acc: f32):
    %a32 = arith.extf %a : f8E4M3FN to f32
    %c32 = arith.extf %c : f8E4M3FN to f32
    %st = arith.mulf %s, %t : f32
    %p = arith.mulf %a32, %c32 : f32
    %q = arith.mulf %p, %st : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %b : memref<8x144xf32>, memref<144xbf16>) outs(%y : memref<8x144xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, bias}} {
  ^bb0(%p: f32, %bias: bf16, %out: bf16):
    %bf = arith.extf %bias : bf16 to f32
    %v = arith.addf %p, %bf : f32
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %tmp : memref<8x144xf32>
  linalg.generic {indexing_maps = [#x, #w, #xs, #ws, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %sx, %sw : memref<8x256xf8E4M3FN>, memref<144x256xf8E4M3FN>, memref<2x8xf32>, memref<2x4xf32>)
      outs(%o2 : memref<8x144xf32>) {
  ^bb0(%a: f8E4M3FN, %c: f8E4M3FN, %s: f32, %t: f32, %acc: f32):
    %a32 = arith.extf %a : f8E4M3FN to f32
    %r = arith.addf %acc, %a32 : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A block-scaled product keeps a ReLU epilogue out of cuBLASLt (its 128-block
// scale modes run the DEFAULT and BIAS epilogues only): the call writes the
// f32 product (E4M3 in, f32 out, epilogue 1: DEFAULT, no bias) and the
// tagged epilogue stays a loop nest. With 12 rows (not a multiple of 8) the product stays a loop nest.
// CHECK-LABEL: func.func @fp8_blocks_relu
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<8x144xf32>
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: memref.extract_aligned_pointer_as_index %arg1
// CHECK: memref.extract_aligned_pointer_as_index %[[TMP]]
// CHECK: arith.constant 11 : i32
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[CODE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[NOBIAS:.*]] = arith.constant 0 : i64
// CHECK: call @mte_cuda_gemm({{.*}}, %[[CODE]], %[[NOBIAS]],
// CHECK: linalg.generic {{.*}} ins(%[[TMP]], %arg4 : memref<8x144xf32>, memref<144xbf16>)
// CHECK: arith.maximumf
// CHECK-LABEL: func.func @fp8_blocks_ragged_rows
// CHECK-NOT: call @mte_cuda_gemm
// CHECK: linalg.generic {{.*}}mte.block_scaled_gemm
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#xs = affine_map<(m, n, k) -> (k floordiv 128, m)>
#ws = affine_map<(m, n, k) -> (n floordiv 128, k floordiv 128)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @fp8_blocks_relu(%x: memref<8x256xf8E4M3FN>, %w: memref<144x256xf8E4M3FN>, %sx: memref<2x8xf32>, %sw: memref<2x4xf32>,
                           %b: memref<144xbf16>, %y: memref<8x144xbf16>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<8x144xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<8x144xf32>)
  linalg.generic {indexing_maps = [#x, #w, #xs, #ws, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %sx, %sw : memref<8x256xf8E4M3FN>, memref<144x256xf8E4M3FN>, memref<2x8xf32>, memref<2x4xf32>)
      outs(%tmp : memref<8x144xf32>) attrs = {mte.block_scaled_gemm} {
  ^bb0(%a: f8E4M3FN, %c: f8E4M3FN, %s: f32, %t: f32, %acc: f32):
    %a32 = arith.extf %a : f8E4M3FN to f32
    %c32 = arith.extf %c : f8E4M3FN to f32
    %st = arith.mulf %s, %t : f32
    %p = arith.mulf %a32, %c32 : f32
    %q = arith.mulf %p, %st : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %b : memref<8x144xf32>, memref<144xbf16>) outs(%y : memref<8x144xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<relu>, bias}} {
  ^bb0(%p: f32, %bias: bf16, %out: bf16):
    %bf = arith.extf %bias : bf16 to f32
    %v = arith.addf %p, %bf : f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %v, %z : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %tmp : memref<8x144xf32>
  return
}
func.func @fp8_blocks_ragged_rows(%x: memref<12x256xf8E4M3FN>, %w: memref<144x256xf8E4M3FN>, %sx: memref<2x12xf32>, %sw: memref<2x4xf32>,
                                  %y: memref<12x144xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #xs, #ws, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %sx, %sw : memref<12x256xf8E4M3FN>, memref<144x256xf8E4M3FN>, memref<2x12xf32>, memref<2x4xf32>)
      outs(%y : memref<12x144xf32>) attrs = {mte.block_scaled_gemm} {
  ^bb0(%a: f8E4M3FN, %c: f8E4M3FN, %s: f32, %t: f32, %acc: f32):
    %a32 = arith.extf %a : f8E4M3FN to f32
    %c32 = arith.extf %c : f8E4M3FN to f32
    %st = arith.mulf %s, %t : f32
    %p = arith.mulf %a32, %c32 : f32
    %q = arith.mulf %p, %st : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A row-scaled FP8 GEMM: the tagged epilogue reads x's scales [M, 1]
// broadcast along the channels and W's [N], one per channel; cuBLASLt takes
// both as vectors (scale mode 2, MTE_GEMM_SCALE_OUTER_VEC) with the bias.
// CHECK-LABEL: func.func @fp8_rows
// CHECK: %[[XS:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[XSI:.*]] = arith.index_cast %[[XS]]
// CHECK: %[[WS:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: %[[WSI:.*]] = arith.index_cast %[[WS]]
// CHECK: %[[ROWS:.*]] = arith.constant 2 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[XSI]], %[[WSI]], %[[ROWS]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @fp8_rows(%x: memref<8x64xf8E4M3FN>, %w: memref<32x64xf8E4M3FN>, %sx: memref<8x1xf32>, %sw: memref<32xf32>,
                    %b: memref<32xbf16>, %y: memref<8x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<8x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<8x64xf8E4M3FN>, memref<32x64xf8E4M3FN>) outs(%tmp : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %sx, %sw, %b : memref<8x32xf32>, memref<8x1xf32>, memref<32xf32>, memref<32xbf16>) outs(%y : memref<8x32xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, bias, input_scale, row_scales, weight_scale}} {
  ^bb0(%p: f32, %s: f32, %t: f32, %bias: bf16, %out: bf16):
    %st = arith.mulf %s, %t : f32
    %v = arith.mulf %p, %st : f32
    %bf = arith.extf %bias : bf16 to f32
    %a = arith.addf %v, %bf : f32
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %tmp : memref<8x32xf32>
  return
}

// -----

// Row scales with an activation: cuBLASLt's outer-vector mode takes every
// epilogue its per-tensor mode does (RELU, code 2). Scales read through a
// map other than the row's broadcast: the product runs alone (no scales,
// scale mode 0) and the epilogue stays a loop nest.
// CHECK-LABEL: func.func @fp8_rows_relu
// CHECK-DAG: %[[RELU:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 2 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[RELU]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ROWS]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @fp8_rows_transposed
// CHECK: %[[NONE:.*]] = arith.constant 0 : i32
// CHECK: call @mte_cuda_gemm({{.*}}, %[[NONE]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: linalg.generic {{.*}}mte.gemm_epilogue
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @fp8_rows_relu(%x: memref<8x64xf8E4M3FN>, %w: memref<32x64xf8E4M3FN>, %sx: memref<8x1xf32>, %sw: memref<32xf32>,
                         %y: memref<8x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<8x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<8x64xf8E4M3FN>, memref<32x64xf8E4M3FN>) outs(%tmp : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %sx, %sw : memref<8x32xf32>, memref<8x1xf32>, memref<32xf32>) outs(%y : memref<8x32xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<relu>, input_scale, row_scales, weight_scale}} {
  ^bb0(%p: f32, %s: f32, %t: f32, %out: bf16):
    %st = arith.mulf %s, %t : f32
    %v = arith.mulf %p, %st : f32
    %m = arith.maximumf %v, %zero : f32
    %r = arith.truncf %m : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %tmp : memref<8x32xf32>
  return
}
func.func @fp8_rows_transposed(%x: memref<8x64xf8E4M3FN>, %w: memref<32x64xf8E4M3FN>, %sx: memref<32x1xf32>, %sw: memref<8xf32>,
                               %y: memref<8x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<8x32xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<8x64xf8E4M3FN>, memref<32x64xf8E4M3FN>) outs(%tmp : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1, 0)>, affine_map<(d0, d1) -> (d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tmp, %sx, %sw : memref<8x32xf32>, memref<32x1xf32>, memref<8xf32>) outs(%y : memref<8x32xbf16>)
      attrs = {mte.gemm_epilogue = {activation = #transformer.activation<none>, input_scale, row_scales, weight_scale}} {
  ^bb0(%p: f32, %s: f32, %t: f32, %out: bf16):
    %st = arith.mulf %s, %t : f32
    %v = arith.mulf %p, %st : f32
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %tmp : memref<8x32xf32>
  return
}
