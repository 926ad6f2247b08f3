// RUN: mte-opt %s -split-input-file -mte-convert-transformer-to-row-kernels | FileCheck %s

// A LayerNorm with bias and residual over the last dimension: a kernel.call
// of the declaration on the [rows, length] views, writing two fresh tensors
// in the op's shape (output and residual sum), which the declaration takes
// as [rows, length] buffers. A second norm of the same shape calls the same
// declaration.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x768xf32>, %[[G:.*]]: tensor<768xf32>, %[[B:.*]]: tensor<768xf32>, %[[R:.*]]: tensor<2x8x768xf32>)
// CHECK: %[[XR:.*]] = tensor.expand_shape %{{.*}} output_shape [16, 768]
// CHECK: %[[RR:.*]] = tensor.expand_shape %{{.*}} output_shape [16, 768]
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[OUT:.*]] = bufferization.alloc_tensor() : tensor<2x8x768xf32>
// CHECK: %[[SUM:.*]] = bufferization.alloc_tensor() : tensor<2x8x768xf32>
// CHECK: %[[Y:.*]]:2 = kernel.call @mte_row_layer_norm_16x768xf32_bias_residual(%[[XR]], %[[G]], %[[B]], %[[RR]], %[[EPS]] : tensor<16x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<16x768xf32>, f32) outs(%[[OUT]], %[[SUM]] : tensor<2x8x768xf32>, tensor<2x8x768xf32>) -> tensor<2x8x768xf32>, tensor<2x8x768xf32>
// CHECK: kernel.call @mte_row_layer_norm_16x768xf32_bias_residual(
// CHECK-NOT: transformer.layer_norm
// CHECK: func.func private @mte_row_layer_norm_16x768xf32_bias_residual(memref<16x768xf32>, memref<768xf32>, memref<768xf32>, memref<16x768xf32>, f32, memref<16x768xf32>, memref<16x768xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = layer_norm, bias = true, residual = true>}
// CHECK-NOT: func.func private @mte_row_layer_norm
func.func @layer_norm(%x: tensor<2x8x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>, %r: tensor<2x8x768xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>) {
  %0, %1 = transformer.layer_norm %x, %g bias %b residual %r {epsilon = 1.0e-5 : f32} : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<2x8x768xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>)
  %2, %3 = transformer.layer_norm %0, %g bias %b residual %1 {epsilon = 1.0e-5 : f32} : (tensor<2x8x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<2x8x768xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>)
  return %2, %3 : tensor<2x8x768xf32>, tensor<2x8x768xf32>
}

// -----

// A bf16 RMSNorm that writes f32, normalising the last two dimensions.
// CHECK-LABEL: func.func @rms_norm
// CHECK: kernel.call @mte_row_rms_norm_4x256xbf16_to_f32(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x256xbf16>, tensor<256xbf16>, f32) outs(%{{.*}} : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
// CHECK: func.func private @mte_row_rms_norm_4x256xbf16_to_f32(memref<4x256xbf16>, memref<256xbf16>, f32, memref<4x256xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm>}
func.func @rms_norm(%x: tensor<4x16x16xbf16>, %g: tensor<16x16xbf16>) -> tensor<4x16x16xf32> {
  %0 = transformer.rms_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<4x16x16xbf16>, tensor<16x16xbf16>) -> tensor<4x16x16xf32>
  return %0 : tensor<4x16x16xf32>
}

// -----

// Attention is lowered with named matmuls; between Q·Kᵀ and P·V the scores
// [B * H * Sq, Skv] go through the softmax kernel with the boolean mask as
// given (flattened) and the scale.
// CHECK-LABEL: func.func @attention
// CHECK: linalg.batch_matmul
// CHECK: %[[S:.*]] = tensor.expand_shape %{{.*}} output_shape [32, 4] : tensor<128xf32> into tensor<32x4xf32>
// CHECK: %[[M:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x1x1x4xi1> into tensor<8xi1>
// CHECK: %[[P:.*]] = bufferization.alloc_tensor() : tensor<2x4x4x4xf32>
// CHECK: %[[PT:.*]] = kernel.call @mte_attention_softmax_2x4x4x4xf32_causal_mask_2x1x1x4xi1(%[[S]], %[[M]], %{{.*}} : tensor<32x4xf32>, tensor<8xi1>, f32) outs(%[[P]] : tensor<2x4x4x4xf32>)
// CHECK: tensor.collapse_shape %[[PT]]
// CHECK: linalg.batch_matmul
// CHECK-NOT: transformer.attention
// CHECK: func.func private @mte_attention_softmax_2x4x4x4xf32_causal_mask_2x1x1x4xi1(memref<32x4xf32>, memref<8xi1>, f32, memref<32x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 4, queries = 4, mask_shape = [2, 1, 1, 4], causal = true>}
func.func @attention(%q: tensor<2x4x32xf32>, %k: tensor<2x4x16xf32>, %v: tensor<2x4x16xf32>, %m: tensor<2x1x1x4xi1>) -> tensor<2x4x32xf32> {
  %0 = transformer.attention %q, %k, %v mask %m {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.35 : f32, causal} : (tensor<2x4x32xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x1x1x4xi1>) -> tensor<2x4x32xf32>
  return %0 : tensor<2x4x32xf32>
}

// -----

// bf16 attention: the kernel reads the f32 scores and writes the
// probabilities in bf16, which P·V reads (rounded once, no cast kernel).
// CHECK-LABEL: func.func @attention_bf16
// CHECK: %[[P:.*]] = bufferization.alloc_tensor() : tensor<2x4x4x4xbf16>
// CHECK: kernel.call @mte_attention_softmax_2x4x4x4xbf16_causal(%{{.*}}, %{{.*}} : tensor<32x4xf32>, f32) outs(%[[P]] : tensor<2x4x4x4xbf16>)
// CHECK-NOT: arith.truncf
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x8x4xbf16>, tensor<4x4x8xbf16>) outs(%{{.*}} : tensor<4x8x8xf32>)
// CHECK: func.func private @mte_attention_softmax_2x4x4x4xbf16_causal(memref<32x4xf32>, f32, memref<32x4xbf16>)
func.func @attention_bf16(%q: tensor<2x4x32xbf16>, %k: tensor<2x4x16xbf16>, %v: tensor<2x4x16xbf16>) -> tensor<2x4x32xbf16> {
  %0 = transformer.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.35 : f32, causal} : (tensor<2x4x32xbf16>, tensor<2x4x16xbf16>, tensor<2x4x16xbf16>) -> tensor<2x4x32xbf16>
  return %0 : tensor<2x4x32xbf16>
}

// -----

// A softcapped attention (Gemma 2) takes neither the fused kernel nor the
// softmax kernel, which do not cap: it stays for the library GEMMs and the
// elementwise softmax of the linalg lowering.
// CHECK-LABEL: func.func @attention_softcap_bf16
// CHECK-NOT: kernel.call
// CHECK: transformer.attention {{.*}}softcap = 5.000000e+01 : f32
// CHECK-NOT: kernel.call
func.func @attention_softcap_bf16(%q: tensor<2x4x32xbf16>, %k: tensor<2x4x16xbf16>, %v: tensor<2x4x16xbf16>) -> tensor<2x4x32xbf16> {
  %0 = transformer.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.35 : f32, causal, softcap = 50.0 : f32} : (tensor<2x4x32xbf16>, tensor<2x4x16xbf16>, tensor<2x4x16xbf16>) -> tensor<2x4x32xbf16>
  return %0 : tensor<2x4x32xbf16>
}

// -----

// Not matched: f64 (no f64 kernels), a row of 32771 elements (a prime: one
// element a vector, more than 1024 threads x 8 vectors), a softmax over
// 40000 keys.
// CHECK-LABEL: func.func @not_matched
// CHECK: transformer.layer_norm
// CHECK: transformer.rms_norm
// CHECK: transformer.attention
// CHECK-NOT: call
// CHECK-NOT: mte.row_kernel
func.func @not_matched(%x: tensor<2x64xf64>, %g: tensor<64xf64>, %y: tensor<1x32771xf32>, %h: tensor<32771xf32>, %q: tensor<1x1x16xf32>, %k: tensor<1x40000x16xf32>) -> (tensor<2x64xf64>, tensor<1x32771xf32>, tensor<1x1x16xf32>) {
  %0 = transformer.layer_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<2x64xf64>, tensor<64xf64>) -> tensor<2x64xf64>
  %1 = transformer.rms_norm %y, %h {epsilon = 1.0e-5 : f32} : (tensor<1x32771xf32>, tensor<32771xf32>) -> tensor<1x32771xf32>
  %2 = transformer.attention %q, %k, %k {num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 0.25 : f32} : (tensor<1x1x16xf32>, tensor<1x40000x16xf32>, tensor<1x40000x16xf32>) -> tensor<1x1x16xf32>
  return %0, %1, %2 : tensor<2x64xf64>, tensor<1x32771xf32>, tensor<1x1x16xf32>
}

// -----

// bf16 attention with a head dimension of 64 and no mask operand goes to the
// runtime's fused kernel: the declaration reads Q, K and V through buffers
// with any batch and row strides (here column slices of one packed
// projection), the output is a fresh tensor; no GEMMs, no scores.
// CHECK-LABEL: func.func @flash_attention
// CHECK: %[[QKV:.*]]:3 = transformer.split
// CHECK: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: %[[O:.*]] = bufferization.alloc_tensor() : tensor<2x5x128xbf16>
// CHECK: %[[T:.*]] = kernel.call @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal(%[[QKV]]#0, %[[QKV]]#1, %[[QKV]]#2, %[[SCALE]] : tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>, f32) outs(%[[O]] : tensor<2x5x128xbf16>)
// CHECK: return %[[T]]
// CHECK-NOT: linalg
// CHECK: func.func private @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal(memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x64xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x64xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<2x5x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 1, causal = true>}
func.func @flash_attention(%qkv: tensor<2x5x256xbf16>) -> tensor<2x5x128xbf16> {
  %q, %k, %v = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 128, 64, 64>} : tensor<2x5x256xbf16> -> tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>
  %0 = transformer.attention %q, %k, %v {num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.125 : f32, causal} : (tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>) -> tensor<2x5x128xbf16>
  return %0 : tensor<2x5x128xbf16>
}

// -----

// Delayed scaling: attention whose output only an amax and a quantize read
// (the output projection's FP8 input) writes the E4M3 codes and each row's
// and head's max |o| ([2 * 5 * 2] f32) for the amax; the quantize goes.
// CHECK-LABEL: func.func @flash_attention_quantize
// CHECK: %[[SC:.*]], %{{.*}} = transformer.fp8_scale delayed
// CHECK: %[[AT:.*]] = arith.constant 1 : i64
// CHECK: %[[T:.*]]:2 = kernel.call @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal_amax_e4m3(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SC]], %[[AT]] : tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>, f32, tensor<2xf32>, i64) outs(%{{.*}}, %{{.*}} : tensor<2x5x128xf8E4M3FN>, tensor<20xf32>)
// CHECK: %[[A:.*]] = transformer.amax %[[T]]#1 : tensor<20xf32> -> tensor<f32>
// CHECK-NOT: transformer.quantize
// CHECK: return %[[T]]#0, %[[A]]
// CHECK: func.func private @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal_amax_e4m3({{.*}}, f32, memref<2xf32>, i64, memref<2x5x128xf8E4M3FN>, memref<20xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 1, causal = true, amax = true, quantize_from = bf16>}
func.func @flash_attention_quantize(%qkv: tensor<2x5x256xbf16>, %s: tensor<2xf32>) -> (tensor<2x5x128xf8E4M3FN>, tensor<f32>) {
  %q, %k, %v = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 128, 64, 64>} : tensor<2x5x256xbf16> -> tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>
  %0 = transformer.attention %q, %k, %v {num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.125 : f32, causal} : (tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>) -> tensor<2x5x128xbf16>
  %1 = transformer.amax %0 : tensor<2x5x128xbf16> -> tensor<f32>
  %scales, %scales_inv = transformer.fp8_scale delayed %s {fp8_max = 4.480000e+02 : f32} : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %slot = transformer.slice %scales {offsets = array<i64: 1>, sizes = array<i64: 1>, strides = array<i64: 1>} : tensor<2xf32> -> tensor<1xf32>
  %scale = transformer.reshape %slot : tensor<1xf32> -> tensor<f32>
  %2 = transformer.quantize %0, %scale {multiply} : (tensor<2x5x128xbf16>, tensor<f32>) -> tensor<2x5x128xf8E4M3FN>
  return %2, %1 : tensor<2x5x128xf8E4M3FN>, tensor<f32>
}

// -----

// Current scaling: the scale needs the output's amax, so the output is
// written as it is, with its rows' maxima, which the amax reads instead.
// CHECK-LABEL: func.func @flash_attention_amax
// CHECK: %[[T:.*]]:2 = kernel.call @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal_amax({{.*}}) outs(%{{.*}}, %{{.*}} : tensor<2x5x128xbf16>, tensor<20xf32>)
// CHECK: %[[A:.*]] = transformer.amax %[[T]]#1 : tensor<20xf32> -> tensor<f32>
// CHECK: %[[SC:.*]], %{{.*}} = transformer.fp8_scale %[[A]]
// CHECK: transformer.quantize %[[T]]#0, %[[SC]] {multiply}
// CHECK: func.func private @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal_amax({{.*}}, f32, memref<2x5x128xbf16>, memref<20xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 1, causal = true, amax = true>}
func.func @flash_attention_amax(%qkv: tensor<2x5x256xbf16>) -> (tensor<2x5x128xf8E4M3FN>, tensor<f32>) {
  %q, %k, %v = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 128, 64, 64>} : tensor<2x5x256xbf16> -> tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>
  %0 = transformer.attention %q, %k, %v {num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.125 : f32, causal} : (tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>) -> tensor<2x5x128xbf16>
  %1 = transformer.amax %0 : tensor<2x5x128xbf16> -> tensor<f32>
  %scale, %scale_inv = transformer.fp8_scale %1 {fp8_max = 4.480000e+02 : f32} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %2 = transformer.quantize %0, %scale {multiply} : (tensor<2x5x128xbf16>, tensor<f32>) -> tensor<2x5x128xf8E4M3FN>
  return %2, %scale_inv : tensor<2x5x128xf8E4M3FN>, tensor<f32>
}

// -----

// Key-padding masks (the same keys hidden from every head and query) go to
// the fused kernel as an f32 [B | 1, Skv] bias: a keep mask as 0 / -inf, an
// additive one as its values with torch.finfo(dtype).min fills made -inf;
// a mask of one row serves every batch.
// CHECK-LABEL: func.func @flash_attention_key_masks
// CHECK: %[[KEEP:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 5] : tensor<10xi1> into tensor<2x5xi1>
// CHECK-DAG: %[[NINF:.*]] = arith.constant dense<0xFF800000> : tensor<f32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[B1:.*]] = transformer.where %[[KEEP]], %[[ZERO]], %[[NINF]]
// CHECK: kernel.call @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal_keys2x5(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[B1]] : tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>, f32, tensor<2x5xf32>)
// CHECK: %[[ADD:.*]] = tensor.expand_shape %arg2 {{.*}} output_shape [1, 5] : tensor<5xbf16> into tensor<1x5xbf16>
// CHECK: %[[F:.*]] = transformer.cast %[[ADD]] : tensor<1x5xbf16> to tensor<1x5xf32>
// CHECK: %[[HALF_LOWEST:.*]] = arith.constant dense<-1.69476569E+38> : tensor<f32>
// CHECK: %[[HIDDEN:.*]] = transformer.compare <le> %[[F]], %[[HALF_LOWEST]] : (tensor<1x5xf32>, tensor<f32>) -> tensor<1x5xi1>
// CHECK: %[[B2:.*]] = transformer.where %[[HIDDEN]], %{{.*}}, %[[F]]
// CHECK: kernel.call @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_keys1x5({{.*}}, %[[B2]] :
// CHECK: func.func private @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal_keys2x5({{.*}}, f32, memref<2x5xf32>, memref<2x5x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 1, mask_shape = [2, 5], causal = true>}
func.func @flash_attention_key_masks(%qkv: tensor<2x5x256xbf16>, %keep: tensor<2x1x1x5xi1>, %bias: tensor<5xbf16>) -> (tensor<2x5x128xbf16>, tensor<2x5x128xbf16>) {
  %q, %k, %v = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 128, 64, 64>} : tensor<2x5x256xbf16> -> tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>
  %0 = transformer.attention %q, %k, %v mask %keep {num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.125 : f32, causal} : (tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>, tensor<2x1x1x5xi1>) -> tensor<2x5x128xbf16>
  %1 = transformer.attention %q, %k, %v mask %bias {num_heads = 2 : i64, num_kv_heads = 1 : i64, scale = 0.125 : f32} : (tensor<2x5x128xbf16>, tensor<2x5x64xbf16>, tensor<2x5x64xbf16>, tensor<5xbf16>) -> tensor<2x5x128xbf16>
  return %0, %1 : tensor<2x5x128xbf16>, tensor<2x5x128xbf16>
}

// -----

// Not for the fused kernel, so GEMMs around the softmax kernel: a mask
// operand, a head dimension of 8, f32.
// CHECK-LABEL: func.func @no_flash_attention
// CHECK-NOT: mte_flash_attention
// CHECK-COUNT-3: kernel.call @mte_attention_softmax
// CHECK-NOT: mte_flash_attention
func.func @no_flash_attention(%q: tensor<1x4x64xf16>, %m: tensor<1x1x4x4xf16>, %q8: tensor<1x4x16xf16>, %q32: tensor<1x4x64xf32>) -> (tensor<1x4x64xf16>, tensor<1x4x16xf16>, tensor<1x4x64xf32>) {
  %0 = transformer.attention %q, %q, %q mask %m {num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 0.125 : f32} : (tensor<1x4x64xf16>, tensor<1x4x64xf16>, tensor<1x4x64xf16>, tensor<1x1x4x4xf16>) -> tensor<1x4x64xf16>
  %1 = transformer.attention %q8, %q8, %q8 {num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 0.125 : f32} : (tensor<1x4x16xf16>, tensor<1x4x16xf16>, tensor<1x4x16xf16>) -> tensor<1x4x16xf16>
  %2 = transformer.attention %q32, %q32, %q32 {num_heads = 1 : i64, num_kv_heads = 1 : i64, scale = 0.125 : f32} : (tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>) -> tensor<1x4x64xf32>
  return %0, %1, %2 : tensor<1x4x64xf16>, tensor<1x4x16xf16>, tensor<1x4x64xf32>
}

// -----

// Rotate-half RoPE over whole heads of the Q and K column slices of a packed
// projection: the declaration reads x in place through a [B * S, H, D] view
// with dynamic strides (mte-build-row-kernels specialises them) and writes a
// fresh tensor in the op's shape through its [B * S, H, D] view. Q and K
// share the declaration.
// CHECK-LABEL: func.func @rotary
// CHECK: %[[X1:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x5x128xbf16> into tensor<10x128xbf16>
// CHECK: %[[X:.*]] = tensor.expand_shape %[[X1]] {{\[\[}}0], [1, 2]] output_shape [10, 4, 32]
// CHECK: %[[OUT:.*]] = bufferization.alloc_tensor() : tensor<2x5x128xbf16>
// CHECK: kernel.call @mte_rotary_10x4x32xbf16_table_5x32(%[[X]], %{{.*}}, %{{.*}} : tensor<10x4x32xbf16>, tensor<5x32xbf16>, tensor<5x32xbf16>) outs(%[[OUT]] : tensor<2x5x128xbf16>) -> tensor<2x5x128xbf16>
// CHECK: kernel.call @mte_rotary_10x4x32xbf16_table_5x32(
// CHECK-NOT: transformer.rotary_embedding
// CHECK: func.func private @mte_rotary_10x4x32xbf16_table_5x32(memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 4, seq = 5>}
func.func @rotary(%qkv: tensor<2x5x384xbf16>, %cos: tensor<5x32xbf16>, %sin: tensor<5x32xbf16>) -> (tensor<2x5x128xbf16>, tensor<2x5x128xbf16>) {
  %q, %k, %v = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 128, 128, 128>} : tensor<2x5x384xbf16> -> tensor<2x5x128xbf16>, tensor<2x5x128xbf16>, tensor<2x5x128xbf16>
  %0 = transformer.rotary_embedding %q, %cos, %sin {num_heads = 4 : i64} : (tensor<2x5x128xbf16>, tensor<5x32xbf16>, tensor<5x32xbf16>) -> tensor<2x5x128xbf16>
  %1 = transformer.rotary_embedding %k, %cos, %sin {num_heads = 4 : i64} : (tensor<2x5x128xbf16>, tensor<5x32xbf16>, tensor<5x32xbf16>) -> tensor<2x5x128xbf16>
  return %0, %1 : tensor<2x5x128xbf16>, tensor<2x5x128xbf16>
}

// -----

// [B, H, S, D] with batched full-width tables is viewed as [B * H, S, D].
// Interleaved pairs (GPT-J) and a partial rotary_dim keep the reference
// lowering.
// CHECK-LABEL: func.func @rotary_heads_major
// CHECK: kernel.call @mte_rotary_8x5x64xf32_table_10x64_heads_major(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8x5x64xf32>, tensor<10x64xf32>, tensor<10x64xf32>) outs(%{{.*}} : tensor<2x4x5x64xf32>)
// CHECK: transformer.rotary_embedding %{{.*}} {interleaved}
// CHECK: transformer.rotary_embedding %{{.*}} {rotary_dim = 32 : i64}
// CHECK: attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 4, seq = 5, heads_major = true>}
func.func @rotary_heads_major(%x: tensor<2x4x5x64xf32>, %cos: tensor<2x5x64xf32>, %sin: tensor<2x5x64xf32>, %ch: tensor<5x16xf32>) -> (tensor<2x4x5x64xf32>, tensor<2x4x5x64xf32>, tensor<2x4x5x64xf32>) {
  %0 = transformer.rotary_embedding %x, %cos, %sin : (tensor<2x4x5x64xf32>, tensor<2x5x64xf32>, tensor<2x5x64xf32>) -> tensor<2x4x5x64xf32>
  %1 = transformer.rotary_embedding %x, %cos, %sin {interleaved} : (tensor<2x4x5x64xf32>, tensor<2x5x64xf32>, tensor<2x5x64xf32>) -> tensor<2x4x5x64xf32>
  %2 = transformer.rotary_embedding %x, %ch, %ch {rotary_dim = 32 : i64} : (tensor<2x4x5x64xf32>, tensor<5x16xf32>, tensor<5x16xf32>) -> tensor<2x4x5x64xf32>
  return %0, %1, %2 : tensor<2x4x5x64xf32>, tensor<2x4x5x64xf32>, tensor<2x4x5x64xf32>
}

// -----

// A softmax over the last axis (not attention's) is the attention softmax
// kernel with one head, a query per row, no mask and a scale of 1, in its
// own type; over another axis it keeps the reference lowering.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} output_shape [6, 1024] : tensor<6144xbf16> into tensor<6x1024xbf16>
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[OUT:.*]] = bufferization.alloc_tensor() : tensor<2x3x1024xbf16>
// CHECK: kernel.call @mte_softmax_6x1024xbf16(%[[X]], %[[ONE]] : tensor<6x1024xbf16>, f32) outs(%[[OUT]] : tensor<2x3x1024xbf16>)
// CHECK: transformer.softmax %{{.*}} {axis = 0 : i64} : tensor<4x8xf32>
// CHECK: func.func private @mte_softmax_6x1024xbf16(memref<6x1024xbf16>, f32, memref<6x1024xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 1, queries = 6>}
func.func @softmax(%x: tensor<2x3x1024xbf16>, %y: tensor<4x8xf32>) -> (tensor<2x3x1024xbf16>, tensor<4x8xf32>) {
  %0 = transformer.softmax %x : tensor<2x3x1024xbf16>
  %1 = transformer.softmax %y {axis = 0 : i64} : tensor<4x8xf32>
  return %0, %1 : tensor<2x3x1024xbf16>, tensor<4x8xf32>
}

// -----

// FP8 scaling's amax of a large tensor: one read by the amax row kernel
// ([rows, 16384]: each row's max |x|), and again over the row maxima while
// more than 32 are left; then amax of the few left, or, when one row was
// left, its maximum is the amax: the kernel writes it into a tensor.empty
// (which empty-tensor elimination can give the buffer it goes to: the
// kernel takes it at any offset, such as an element of the delayed
// update's vector) and no amax is left. A tensor of 32 elements or fewer
// keeps the reference lowering.
// CHECK-LABEL: func.func @amax
// CHECK: %[[R:.*]] = tensor.expand_shape %{{.*}} output_shape [6, 16384] : tensor<98304xbf16> into tensor<6x16384xbf16>
// CHECK: %[[M:.*]] = kernel.call @mte_row_amax_6x16384xbf16(%[[R]] : tensor<6x16384xbf16>) outs(%{{.*}} : tensor<6xf32>) -> tensor<6xf32>
// CHECK: transformer.amax %[[M]] : tensor<6xf32> -> tensor<f32>
// CHECK: %[[M1:.*]] = kernel.call @mte_row_amax_1024x16384xbf16({{.*}}) -> tensor<1024xf32>
// CHECK: %[[R2:.*]] = tensor.expand_shape %[[M1]] {{.*}} output_shape [1, 1024] : tensor<1024xf32> into tensor<1x1024xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1xf32>
// CHECK: %[[M2:.*]] = kernel.call @mte_row_amax_1x1024xf32(%[[R2]] : tensor<1x1024xf32>) outs(%[[E]] : tensor<1xf32>) -> tensor<1xf32>
// CHECK: %[[A2:.*]] = tensor.collapse_shape %[[M2]] [] : tensor<1xf32> into tensor<f32>
// CHECK: %[[A3:.*]] = transformer.amax %arg2 : tensor<4x8xf32> -> tensor<f32>
// CHECK: return %{{.*}}, %[[A2]], %[[A3]]
// CHECK: func.func private @mte_row_amax_6x16384xbf16(memref<6x16384xbf16>, memref<6xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = amax>}
// CHECK: func.func private @mte_row_amax_1x1024xf32(memref<1x1024xf32>, memref<1xf32, strided<[1], offset: ?>>)
func.func @amax(%x: tensor<64x1536xbf16>, %big: tensor<2048x8192xbf16>, %small: tensor<4x8xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = transformer.amax %x : tensor<64x1536xbf16> -> tensor<f32>
  %1 = transformer.amax %big : tensor<2048x8192xbf16> -> tensor<f32>
  %2 = transformer.amax %small : tensor<4x8xf32> -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// A norm whose output an FP8 amax reads writes the rows' max |y| too (the
// `_amax` kernel's last output, [rows] f32), and the amax reads those 16
// values instead of the [16, 4096] output.
// CHECK-LABEL: func.func @norm_amax
// CHECK: %[[N:.*]]:2 = kernel.call @mte_row_rms_norm_16x4096xbf16_amax({{.*}}) outs(%{{.*}}, %{{.*}} : tensor<16x4096xbf16>, tensor<16xf32>) -> tensor<16x4096xbf16>, tensor<16xf32>
// CHECK: %[[A:.*]] = transformer.amax %[[N]]#1 : tensor<16xf32> -> tensor<f32>
// CHECK: return %[[N]]#0, %[[A]]
// CHECK: func.func private @mte_row_rms_norm_16x4096xbf16_amax(memref<16x4096xbf16>, memref<4096xbf16>, f32, memref<16x4096xbf16>, memref<16xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm, amax = true>}
func.func @norm_amax(%x: tensor<16x4096xbf16>, %g: tensor<4096xbf16>) -> (tensor<16x4096xbf16>, tensor<f32>) {
  %0 = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<16x4096xbf16>, tensor<4096xbf16>) -> tensor<16x4096xbf16>
  %1 = transformer.amax %0 : tensor<16x4096xbf16> -> tensor<f32>
  return %0, %1 : tensor<16x4096xbf16>, tensor<f32>
}

// -----

// Delayed scaling: a norm whose output only an amax and a quantize read,
// by a scale that does not depend on it (the state's, whose fp8_scale
// moves above the norm), writes the E4M3 codes itself (`_e4m3`:
// quantize_from the output type it had), with the rows' maxima for the
// amax; the quantize goes.
// CHECK-LABEL: func.func @norm_quantize
// CHECK-SAME: (%[[X:.*]]: tensor<16x4096xbf16>, %[[G:.*]]: tensor<4096xbf16>, %[[B:.*]]: tensor<4096xbf16>, %[[S:.*]]: tensor<3xf32>)
// CHECK: %[[SC:.*]], %[[SI:.*]] = transformer.fp8_scale delayed %[[S]]
// CHECK: %[[AT:.*]] = arith.constant 2 : i64
// CHECK: %[[N:.*]]:2 = kernel.call @mte_row_layer_norm_16x4096xbf16_bias_amax_e4m3(%[[X]], %[[G]], %[[B]], %{{.*}}, %[[SC]], %[[AT]] : tensor<16x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>, f32, tensor<3xf32>, i64) outs(%{{.*}}, %{{.*}} : tensor<16x4096xf8E4M3FN>, tensor<16xf32>)
// CHECK: %[[A:.*]] = transformer.amax %[[N]]#1 : tensor<16xf32> -> tensor<f32>
// CHECK-NOT: transformer.quantize
// CHECK: return %[[N]]#0, %{{.*}}, %[[A]]
// CHECK: func.func private @mte_row_layer_norm_16x4096xbf16_bias_amax_e4m3(memref<16x4096xbf16>, memref<4096xbf16>, memref<4096xbf16>, f32, memref<3xf32>, i64, memref<16x4096xf8E4M3FN>, memref<16xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = layer_norm, bias = true, amax = true, quantize_from = bf16>}
func.func @norm_quantize(%x: tensor<16x4096xbf16>, %g: tensor<4096xbf16>, %b: tensor<4096xbf16>, %s: tensor<3xf32>) -> (tensor<16x4096xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  %0 = transformer.layer_norm %x, %g bias %b {epsilon = 1.0e-5 : f32} : (tensor<16x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<16x4096xbf16>
  %1 = transformer.amax %0 : tensor<16x4096xbf16> -> tensor<f32>
  %scales, %scales_inv = transformer.fp8_scale delayed %s {fp8_max = 4.480000e+02 : f32} : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %slot = transformer.slice %scales {offsets = array<i64: 2>, sizes = array<i64: 1>, strides = array<i64: 1>} : tensor<3xf32> -> tensor<1xf32>
  %scale = transformer.reshape %slot : tensor<1xf32> -> tensor<f32>
  %slot_inv = transformer.slice %scales_inv {offsets = array<i64: 2>, sizes = array<i64: 1>, strides = array<i64: 1>} : tensor<3xf32> -> tensor<1xf32>
  %scale_inv = transformer.reshape %slot_inv : tensor<1xf32> -> tensor<f32>
  %2 = transformer.quantize %0, %scale {multiply} : (tensor<16x4096xbf16>, tensor<f32>) -> tensor<16x4096xf8E4M3FN>
  return %2, %scale_inv, %1 : tensor<16x4096xf8E4M3FN>, tensor<f32>, tensor<f32>
}

// -----

// A scale that is no element of a vector is passed as a vector of one.
// CHECK-LABEL: func.func @norm_quantize_scalar
// CHECK: %[[V:.*]] = tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[AT:.*]] = arith.constant 0 : i64
// CHECK: kernel.call @mte_row_rms_norm_16x4096xbf16_amax_e4m3({{.*}}, %[[V]], %[[AT]] : {{.*}}, tensor<1xf32>, i64)
func.func @norm_quantize_scalar(%x: tensor<16x4096xbf16>, %g: tensor<4096xbf16>, %s: tensor<f32>) -> (tensor<16x4096xf8E4M3FN>, tensor<f32>) {
  %0 = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<16x4096xbf16>, tensor<4096xbf16>) -> tensor<16x4096xbf16>
  %1 = transformer.amax %0 : tensor<16x4096xbf16> -> tensor<f32>
  %scale, %scale_inv = transformer.fp8_scale delayed %s {fp8_max = 4.480000e+02 : f32} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %2 = transformer.quantize %0, %scale {multiply} : (tensor<16x4096xbf16>, tensor<f32>) -> tensor<16x4096xf8E4M3FN>
  return %2, %1 : tensor<16x4096xf8E4M3FN>, tensor<f32>
}

// -----

// Current scaling's scale comes from the norm's own output, and a norm
// output read by anything else is needed as it is: both keep the quantize.
// CHECK-LABEL: func.func @norm_quantize_kept
// CHECK: kernel.call @mte_row_rms_norm_16x4096xbf16_amax(
// CHECK: transformer.quantize
// CHECK: kernel.call @mte_row_rms_norm_16x4096xbf16_amax(
// CHECK: transformer.quantize
func.func @norm_quantize_kept(%x: tensor<16x4096xbf16>, %g: tensor<4096xbf16>, %s: tensor<f32>) -> (tensor<16x4096xf8E4M3FN>, tensor<16x4096xf8E4M3FN>, tensor<16x4096xbf16>) {
  %0 = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<16x4096xbf16>, tensor<4096xbf16>) -> tensor<16x4096xbf16>
  %1 = transformer.amax %0 : tensor<16x4096xbf16> -> tensor<f32>
  %scale, %scale_inv = transformer.fp8_scale %1 {fp8_max = 4.480000e+02 : f32} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %2 = transformer.quantize %0, %scale {multiply} : (tensor<16x4096xbf16>, tensor<f32>) -> tensor<16x4096xf8E4M3FN>
  %3 = transformer.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<16x4096xbf16>, tensor<4096xbf16>) -> tensor<16x4096xbf16>
  %4 = transformer.amax %3 : tensor<16x4096xbf16> -> tensor<f32>
  %5, %6 = transformer.fp8_scale delayed %s {fp8_max = 4.480000e+02 : f32} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %7 = transformer.quantize %3, %5 {multiply} : (tensor<16x4096xbf16>, tensor<f32>) -> tensor<16x4096xf8E4M3FN>
  return %2, %7, %3 : tensor<16x4096xf8E4M3FN>, tensor<16x4096xf8E4M3FN>, tensor<16x4096xbf16>
}

// -----

// A SwiGLU whose product an FP8 amax reads becomes its row kernel on
// [rows, length] views of gate and up (read in place, any row stride and
// offset), writing the rows' maxima for the amax; when the product is only
// quantized by a delayed scale, the kernel writes the E4M3 codes instead.
// CHECK-LABEL: func.func @swiglu_amax
// CHECK: %[[G:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x8x256xbf16> into tensor<16x256xbf16>
// CHECK: %[[U:.*]] = tensor.collapse_shape
// CHECK: %[[K:.*]]:2 = kernel.call @mte_row_swiglu_16x256xbf16_amax(%[[G]], %[[U]] : tensor<16x256xbf16>, tensor<16x256xbf16>) outs(%{{.*}}, %{{.*}} : tensor<2x8x256xbf16>, tensor<16xf32>)
// CHECK: %[[A:.*]] = transformer.amax %[[K]]#1
// CHECK: return %[[K]]#0, %[[A]]
// CHECK-LABEL: func.func @swiglu_quantize
// CHECK: %[[Q:.*]]:2 = kernel.call @mte_row_swiglu_16x256xbf16_amax_e4m3(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x256xbf16>, tensor<16x256xbf16>, tensor<4xf32>, i64) outs(%{{.*}}, %{{.*}} : tensor<2x8x256xf8E4M3FN>, tensor<16xf32>)
// CHECK-NOT: transformer.quantize
// CHECK-LABEL: func.func @swiglu_alone
// CHECK: transformer.swiglu
// CHECK: func.func private @mte_row_swiglu_16x256xbf16_amax(memref<16x256xbf16, strided<[?, 1], offset: ?>>, memref<16x256xbf16, strided<[?, 1], offset: ?>>, memref<16x256xbf16>, memref<16xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = swiglu, amax = true>}
// CHECK: func.func private @mte_row_swiglu_16x256xbf16_amax_e4m3(memref<16x256xbf16, strided<[?, 1], offset: ?>>, memref<16x256xbf16, strided<[?, 1], offset: ?>>, memref<4xf32>, i64, memref<16x256xf8E4M3FN>, memref<16xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = swiglu, amax = true, quantize_from = bf16>}
func.func @swiglu_amax(%gu: tensor<2x8x512xbf16>) -> (tensor<2x8x256xbf16>, tensor<f32>) {
  %g, %u = transformer.split %gu {axis = 2 : i64, sizes = array<i64: 256, 256>} : tensor<2x8x512xbf16> -> tensor<2x8x256xbf16>, tensor<2x8x256xbf16>
  %y = transformer.swiglu %g, %u : tensor<2x8x256xbf16>
  %a = transformer.amax %y : tensor<2x8x256xbf16> -> tensor<f32>
  return %y, %a : tensor<2x8x256xbf16>, tensor<f32>
}
func.func @swiglu_quantize(%gu: tensor<2x8x512xbf16>, %s: tensor<4xf32>) -> (tensor<2x8x256xf8E4M3FN>, tensor<f32>) {
  %g, %u = transformer.split %gu {axis = 2 : i64, sizes = array<i64: 256, 256>} : tensor<2x8x512xbf16> -> tensor<2x8x256xbf16>, tensor<2x8x256xbf16>
  %y = transformer.swiglu %g, %u : tensor<2x8x256xbf16>
  %a = transformer.amax %y : tensor<2x8x256xbf16> -> tensor<f32>
  %scales, %inv = transformer.fp8_scale delayed %s {fp8_max = 4.480000e+02 : f32} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %slot = transformer.slice %scales {offsets = array<i64: 1>, sizes = array<i64: 1>, strides = array<i64: 1>} : tensor<4xf32> -> tensor<1xf32>
  %scale = transformer.reshape %slot : tensor<1xf32> -> tensor<f32>
  %q = transformer.quantize %y, %scale {multiply} : (tensor<2x8x256xbf16>, tensor<f32>) -> tensor<2x8x256xf8E4M3FN>
  return %q, %a : tensor<2x8x256xf8E4M3FN>, tensor<f32>
}
func.func @swiglu_alone(%g: tensor<2x8x256xbf16>, %u: tensor<2x8x256xbf16>) -> tensor<2x8x256xbf16> {
  %y = transformer.swiglu %g, %u : tensor<2x8x256xbf16>
  return %y : tensor<2x8x256xbf16>
}

// -----

// GeGLU (Gemma's MLP) the same way, its kind saying which GELU: the tanh
// approximation, or erf when `approximate` is absent.
// CHECK-LABEL: func.func @geglu_quantize
// CHECK: kernel.call @mte_row_geglu_tanh_16x256xbf16_amax_e4m3({{.*}} : tensor<16x256xbf16>, tensor<16x256xbf16>, tensor<4xf32>, i64) outs(%{{.*}}, %{{.*}} : tensor<2x8x256xf8E4M3FN>, tensor<16xf32>)
// CHECK-NOT: transformer.quantize
// CHECK-LABEL: func.func @geglu_erf_amax
// CHECK: kernel.call @mte_row_geglu_16x256xbf16_amax({{.*}}) outs(%{{.*}}, %{{.*}} : tensor<2x8x256xbf16>, tensor<16xf32>)
// CHECK: func.func private @mte_row_geglu_tanh_16x256xbf16_amax_e4m3({{.*}}) attributes {mte.row_kernel = #kernel.row_kernel<kind = geglu_tanh, amax = true, quantize_from = bf16>}
// CHECK: func.func private @mte_row_geglu_16x256xbf16_amax({{.*}}) attributes {mte.row_kernel = #kernel.row_kernel<kind = geglu, amax = true>}
func.func @geglu_quantize(%gu: tensor<2x8x512xbf16>, %s: tensor<4xf32>) -> (tensor<2x8x256xf8E4M3FN>, tensor<f32>) {
  %g, %u = transformer.split %gu {axis = 2 : i64, sizes = array<i64: 256, 256>} : tensor<2x8x512xbf16> -> tensor<2x8x256xbf16>, tensor<2x8x256xbf16>
  %y = transformer.geglu %g, %u approximate <tanh> : tensor<2x8x256xbf16>
  %a = transformer.amax %y : tensor<2x8x256xbf16> -> tensor<f32>
  %scales, %inv = transformer.fp8_scale delayed %s {fp8_max = 4.480000e+02 : f32} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %slot = transformer.slice %scales {offsets = array<i64: 1>, sizes = array<i64: 1>, strides = array<i64: 1>} : tensor<4xf32> -> tensor<1xf32>
  %scale = transformer.reshape %slot : tensor<1xf32> -> tensor<f32>
  %q = transformer.quantize %y, %scale {multiply} : (tensor<2x8x256xbf16>, tensor<f32>) -> tensor<2x8x256xf8E4M3FN>
  return %q, %a : tensor<2x8x256xf8E4M3FN>, tensor<f32>
}
func.func @geglu_erf_amax(%g: tensor<2x8x256xbf16>, %u: tensor<2x8x256xbf16>) -> (tensor<2x8x256xbf16>, tensor<f32>) {
  %y = transformer.geglu %g, %u : tensor<2x8x256xbf16>
  %a = transformer.amax %y : tensor<2x8x256xbf16> -> tensor<f32>
  return %y, %a : tensor<2x8x256xbf16>, tensor<f32>
}

// -----

// Rowwise FP8 scaling: block_amax over whole rows of a norm's output is
// the rows' max |y| the `_amax` norm kernel writes ([16] f32, viewed as
// [2, 8, 1]); the quantize by a scale computed from them stays. A
// block_amax over another tensor is one pass of the amax row kernel over
// it viewed as [blocks, block_size] (1 x 128 blocks of a [4, 512] tensor:
// [16, 128]); a block of fewer than 32 keeps the reference lowering.
// CHECK-LABEL: func.func @rowwise_amax
// CHECK: %[[N:.*]]:2 = kernel.call @mte_row_rms_norm_16x4096xbf16_amax({{.*}}) outs(%{{.*}}, %{{.*}} : tensor<2x8x4096xbf16>, tensor<16xf32>)
// CHECK: %[[M:.*]] = tensor.expand_shape %[[N]]#1 {{.*}} output_shape [2, 8, 1] : tensor<16xf32> into tensor<2x8x1xf32>
// CHECK: transformer.fp8_scale %[[M]]
// CHECK-NOT: transformer.block_amax %{{.*}} {block_size = 4096
// CHECK: %[[V:.*]] = tensor.collapse_shape %{{.*}} : tensor<4x512xbf16> into tensor<2048xbf16>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[V]] {{.*}} output_shape [16, 128] : tensor<2048xbf16> into tensor<16x128xbf16>
// CHECK: %[[B:.*]] = kernel.call @mte_row_amax_16x128xbf16(%[[R]] : tensor<16x128xbf16>) outs(%{{.*}} : tensor<16xf32>) -> tensor<16xf32>
// CHECK: tensor.expand_shape %[[B]] {{.*}} output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
// CHECK: transformer.block_amax %{{.*}} {block_size = 16 : i64} : tensor<4x32xf32> -> tensor<4x2xf32>
func.func @rowwise_amax(%x: tensor<2x8x4096xbf16>, %g: tensor<4096xbf16>, %y: tensor<4x512xbf16>, %z: tensor<4x32xf32>)
    -> (tensor<2x8x4096xf8E4M3FN>, tensor<2x8x1xf32>, tensor<4x4xf32>, tensor<4x2xf32>) {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-05 : f32} : (tensor<2x8x4096xbf16>, tensor<4096xbf16>) -> tensor<2x8x4096xbf16>
  %a = transformer.block_amax %n {block_size = 4096 : i64} : tensor<2x8x4096xbf16> -> tensor<2x8x1xf32>
  %s, %si = transformer.fp8_scale %a {fp8_max = 4.480000e+02 : f32, power_of_two} : (tensor<2x8x1xf32>) -> (tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  %q = transformer.quantize %n, %s {multiply} : (tensor<2x8x4096xbf16>, tensor<2x8x1xf32>) -> tensor<2x8x4096xf8E4M3FN>
  %b = transformer.block_amax %y {block_size = 128 : i64} : tensor<4x512xbf16> -> tensor<4x4xf32>
  %c = transformer.block_amax %z {block_size = 16 : i64} : tensor<4x32xf32> -> tensor<4x2xf32>
  return %q, %si, %b, %c : tensor<2x8x4096xf8E4M3FN>, tensor<2x8x1xf32>, tensor<4x4xf32>, tensor<4x2xf32>
}

// -----

// Delayed scaling's vector of amaxes (a concat of amaxes reshaped to [1])
// is one call of the runtime's amaxes kernel: it reads the rows' maxima a
// norm wrote, the maxima of one amax pass over a tensor too large to keep
// until the vector (2^20 elements, read where its amax was) and an amax
// that has another use, which stays and is only read. No concat, no
// reshape of a merged amax and no one-row amax kernel is left.
// CHECK-LABEL: func.func @amax_vector
// CHECK-SAME: (%{{.*}}: tensor<16x4096xbf16>, %{{.*}}: tensor<4096xbf16>, %{{.*}}: tensor<1024x1024xbf16>, %[[S:.*]]: tensor<4x8xf32>)
// CHECK: %[[N:.*]]:2 = kernel.call @mte_row_rms_norm_16x4096xbf16_amax(
// CHECK: %[[M:.*]] = kernel.call @mte_row_amax_64x16384xbf16(%{{.*}} : tensor<64x16384xbf16>) outs(%{{.*}} : tensor<64xf32>) -> tensor<64xf32>
// CHECK: %[[A:.*]] = transformer.amax %[[S]] : tensor<4x8xf32> -> tensor<f32>
// CHECK-NOT: transformer.amax
// CHECK: transformer.reshape %[[A]]
// CHECK-NOT: transformer.reshape
// CHECK: %[[V:.*]] = kernel.call @mte_amaxes_3_[[HASH:[0-9A-F]+]](%[[N]]#1, %[[M]], %[[A]] : tensor<16xf32>, tensor<64xf32>, tensor<f32>) outs(%{{.*}} : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NOT: transformer.concat
// CHECK: return %{{.*}}, %[[V]], %[[A]]
// CHECK: func.func private @mte_amaxes_3_[[HASH]](memref<16xf32>, memref<64xf32>, memref<f32>, memref<3xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = amaxes>}
func.func @amax_vector(%x: tensor<16x4096xbf16>, %g: tensor<4096xbf16>, %big: tensor<1024x1024xbf16>, %small: tensor<4x8xf32>) -> (tensor<16x4096xbf16>, tensor<3xf32>, tensor<f32>) {
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-5 : f32} : (tensor<16x4096xbf16>, tensor<4096xbf16>) -> tensor<16x4096xbf16>
  %a0 = transformer.amax %n : tensor<16x4096xbf16> -> tensor<f32>
  %a1 = transformer.amax %big : tensor<1024x1024xbf16> -> tensor<f32>
  %a3 = transformer.amax %small : tensor<4x8xf32> -> tensor<f32>
  %r0 = transformer.reshape %a0 : tensor<f32> -> tensor<1xf32>
  %r1 = transformer.reshape %a1 : tensor<f32> -> tensor<1xf32>
  %r3 = transformer.reshape %a3 : tensor<f32> -> tensor<1xf32>
  %v = transformer.concat %r0, %r1, %r3 {axis = 0 : i64} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<3xf32>
  return %n, %v, %a3 : tensor<16x4096xbf16>, tensor<3xf32>, tensor<f32>
}

// -----

// What the amaxes kernel reads in place of the amaxes is bounded in all
// too (2^22 elements, kMaxDeferredTotal): sixteen inputs of 2^18 elements
// each are read as they are, the seventeenth, past the bound, by one pass
// of the amax row kernel where its amax was (16 rows of 16384).
// CHECK-LABEL: func.func @amax_vector_total
// CHECK: tensor.collapse_shape %arg16 {{.*}} into tensor<262144xbf16>
// CHECK: %[[P:.*]] = kernel.call @mte_row_amax_16x16384xbf16(%{{.*}} : tensor<16x16384xbf16>) outs(%{{.*}} : tensor<16xf32>) -> tensor<16xf32>
// CHECK-NOT: transformer.amax
// CHECK: kernel.call @mte_amaxes_17_{{[0-9A-F]+}}(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10, %arg11, %arg12, %arg13, %arg14, %arg15, %[[P]] : {{(tensor<512x512xbf16>, )+}}tensor<16xf32>) outs(%{{.*}} : tensor<17xf32>) -> tensor<17xf32>
// CHECK-NOT: transformer.concat
func.func @amax_vector_total(%x0: tensor<512x512xbf16>, %x1: tensor<512x512xbf16>, %x2: tensor<512x512xbf16>, %x3: tensor<512x512xbf16>, %x4: tensor<512x512xbf16>, %x5: tensor<512x512xbf16>, %x6: tensor<512x512xbf16>, %x7: tensor<512x512xbf16>, %x8: tensor<512x512xbf16>, %x9: tensor<512x512xbf16>, %x10: tensor<512x512xbf16>, %x11: tensor<512x512xbf16>, %x12: tensor<512x512xbf16>, %x13: tensor<512x512xbf16>, %x14: tensor<512x512xbf16>, %x15: tensor<512x512xbf16>, %x16: tensor<512x512xbf16>) -> tensor<17xf32> {
  %a0 = transformer.amax %x0 : tensor<512x512xbf16> -> tensor<f32>
  %r0 = transformer.reshape %a0 : tensor<f32> -> tensor<1xf32>
  %a1 = transformer.amax %x1 : tensor<512x512xbf16> -> tensor<f32>
  %r1 = transformer.reshape %a1 : tensor<f32> -> tensor<1xf32>
  %a2 = transformer.amax %x2 : tensor<512x512xbf16> -> tensor<f32>
  %r2 = transformer.reshape %a2 : tensor<f32> -> tensor<1xf32>
  %a3 = transformer.amax %x3 : tensor<512x512xbf16> -> tensor<f32>
  %r3 = transformer.reshape %a3 : tensor<f32> -> tensor<1xf32>
  %a4 = transformer.amax %x4 : tensor<512x512xbf16> -> tensor<f32>
  %r4 = transformer.reshape %a4 : tensor<f32> -> tensor<1xf32>
  %a5 = transformer.amax %x5 : tensor<512x512xbf16> -> tensor<f32>
  %r5 = transformer.reshape %a5 : tensor<f32> -> tensor<1xf32>
  %a6 = transformer.amax %x6 : tensor<512x512xbf16> -> tensor<f32>
  %r6 = transformer.reshape %a6 : tensor<f32> -> tensor<1xf32>
  %a7 = transformer.amax %x7 : tensor<512x512xbf16> -> tensor<f32>
  %r7 = transformer.reshape %a7 : tensor<f32> -> tensor<1xf32>
  %a8 = transformer.amax %x8 : tensor<512x512xbf16> -> tensor<f32>
  %r8 = transformer.reshape %a8 : tensor<f32> -> tensor<1xf32>
  %a9 = transformer.amax %x9 : tensor<512x512xbf16> -> tensor<f32>
  %r9 = transformer.reshape %a9 : tensor<f32> -> tensor<1xf32>
  %a10 = transformer.amax %x10 : tensor<512x512xbf16> -> tensor<f32>
  %r10 = transformer.reshape %a10 : tensor<f32> -> tensor<1xf32>
  %a11 = transformer.amax %x11 : tensor<512x512xbf16> -> tensor<f32>
  %r11 = transformer.reshape %a11 : tensor<f32> -> tensor<1xf32>
  %a12 = transformer.amax %x12 : tensor<512x512xbf16> -> tensor<f32>
  %r12 = transformer.reshape %a12 : tensor<f32> -> tensor<1xf32>
  %a13 = transformer.amax %x13 : tensor<512x512xbf16> -> tensor<f32>
  %r13 = transformer.reshape %a13 : tensor<f32> -> tensor<1xf32>
  %a14 = transformer.amax %x14 : tensor<512x512xbf16> -> tensor<f32>
  %r14 = transformer.reshape %a14 : tensor<f32> -> tensor<1xf32>
  %a15 = transformer.amax %x15 : tensor<512x512xbf16> -> tensor<f32>
  %r15 = transformer.reshape %a15 : tensor<f32> -> tensor<1xf32>
  %a16 = transformer.amax %x16 : tensor<512x512xbf16> -> tensor<f32>
  %r16 = transformer.reshape %a16 : tensor<f32> -> tensor<1xf32>
  %v = transformer.concat %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16 {axis = 0 : i64} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<17xf32>
  return %v : tensor<17xf32>
}

// -----

// A concat of scalars that are not all amaxes (the kernel would return
// |x|) stays a concat.
// CHECK-LABEL: func.func @not_all_amaxes
// CHECK: transformer.amax
// CHECK: transformer.concat
// CHECK-NOT: mte_amaxes
func.func @not_all_amaxes(%x: tensor<4x8xf32>, %d: tensor<f32>) -> tensor<2xf32> {
  %a = transformer.amax %x : tensor<4x8xf32> -> tensor<f32>
  %r = transformer.reshape %a : tensor<f32> -> tensor<1xf32>
  %rd = transformer.reshape %d : tensor<f32> -> tensor<1xf32>
  %v = transformer.concat %r, %rd {axis = 0 : i64} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
  return %v : tensor<2xf32>
}

// -----

// A concat of anything but scalars is not a vector of amaxes.
// CHECK-LABEL: func.func @not_amax_vector
// CHECK: transformer.amax
// CHECK: transformer.concat
// CHECK-NOT: mte_amaxes
func.func @not_amax_vector(%x: tensor<4x8xf32>, %y: tensor<2xf32>) -> tensor<3xf32> {
  %a = transformer.amax %x : tensor<4x8xf32> -> tensor<f32>
  %r = transformer.reshape %a : tensor<f32> -> tensor<1xf32>
  %v = transformer.concat %r, %y {axis = 0 : i64} : (tensor<1xf32>, tensor<2xf32>) -> tensor<3xf32>
  return %v : tensor<3xf32>
}
