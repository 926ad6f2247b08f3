// RUN: mte-opt %s -split-input-file -mte-convert-transformer-to-linalg -verify-diagnostics | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-convert-transformer-to-linalg=named-matmul -verify-diagnostics | FileCheck %s --check-prefix=NAMED

// Broadcasting lives in the indexing maps: size-1 dims read index 0.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func @add_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
func.func @add_broadcast(%a: tensor<4x1xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = transformer.add %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// bf16 contractions accumulate in f32 and round once.
// CHECK-LABEL: func @matmul_bf16
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x8x4xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @matmul_bf16(%a: tensor<2x8x16xbf16>, %b: tensor<16x4xbf16>) -> tensor<2x8x4xbf16> {
  %0 = transformer.matmul %a, %b : (tensor<2x8x16xbf16>, tensor<16x4xbf16>) -> tensor<2x8x4xbf16>
  return %0 : tensor<2x8x4xbf16>
}

// -----

// GQA: query head h reads key/value head h floordiv (num_heads / num_kv_heads).
// CHECK-DAG: affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1 floordiv 2, d4)>
// CHECK-LABEL: func @attention_gqa
// CHECK: math.exp
// CHECK-NOT: transformer.attention
func.func @attention_gqa(%q: tensor<1x8x64xf32>, %k: tensor<1x8x32xf32>, %v: tensor<1x8x32xf32>) -> tensor<1x8x64xf32> {
  %0 = transformer.attention %q, %k, %v {num_heads = 4, num_kv_heads = 2, scale = 0.25 : f32, causal} : (tensor<1x8x64xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32>) -> tensor<1x8x64xf32>
  return %0 : tensor<1x8x64xf32>
}

// -----

// Softcapping after the scale, before the causal mask:
// cap * tanh((scale * s) / cap).
// CHECK-LABEL: func @attention_softcap
// CHECK: %[[CAP:.*]] = arith.constant 5.000000e+01 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %{{.*}}, %[[CAP]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[D]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.mulf %[[CAP]], %[[T]] : f32
// CHECK: arith.select %{{.*}}, %[[C]], %{{.*}} : f32
func.func @attention_softcap(%q: tensor<1x8x64xf32>) -> tensor<1x8x64xf32> {
  %0 = transformer.attention %q, %q, %q {num_heads = 4, num_kv_heads = 4, scale = 0.25 : f32, causal, softcap = 50.0 : f32} : (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return %0 : tensor<1x8x64xf32>
}

// -----

// CHECK-LABEL: func @norm_and_quantize
// CHECK: math.rsqrt
// CHECK: arith.minimumf
// CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FN
func.func @norm_and_quantize(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %s: tensor<f32>) -> tensor<4x64xf8E4M3FN> {
  %0 = transformer.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %1 = transformer.quantize %0, %s : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf8E4M3FN>
  return %1 : tensor<4x64xf8E4M3FN>
}

// -----

func.func @unsigned(%a: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{the host backend does not support unsigned integer tensors ('tensor<4xui8>')}}
  %0 = transformer.add %a, %a : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// With named-matmul (the CUDA pipeline), an f32 linear's product is a
// linalg.matmul on the [M, K] view, the nk layout through transposed maps;
// the epilogue stays elementwise.
// CHECK-LABEL: func @linear_f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// NAMED-LABEL: func @linear_f32
// NAMED: tensor.expand_shape {{.*}} into tensor<6x8xf32>
// NAMED: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %arg1 : tensor<6x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<6x4xf32>) -> tensor<6x4xf32>
// NAMED: tensor.expand_shape {{.*}} into tensor<2x3x4xf32>
// NAMED: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
func.func @linear_f32(%x: tensor<2x3x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = transformer.linear %x, %w bias %b layout <nk> activation <gelu> : (tensor<2x3x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// An fp8 linear's scales multiply the f32 product before the bias: the
// epilogue reads the product, both scales (rank 0) and the bias. With
// named-matmul an E4M3 linear with an [N, K] weight and K, N multiples of 16
// is a library GEMM, its epilogue tagged with the scales; a [K, N] weight
// stays a generic contraction.
// CHECK-LABEL: func @linear_fp8
// CHECK: arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %arg2, %arg3, %arg4 : tensor<16x32xf32>, tensor<f32>, tensor<f32>, tensor<32xbf16>)
// CHECK: ^bb0(%[[P:.*]]: f32, %[[SX:.*]]: f32, %[[SW:.*]]: f32, %[[B:.*]]: bf16
// CHECK: %[[S:.*]] = arith.mulf %[[SX]], %[[SW]] : f32
// CHECK: %[[V:.*]] = arith.mulf %[[P]], %[[S]] : f32
// CHECK: arith.addf %[[V]]
// NAMED-LABEL: func @linear_fp8
// NAMED: linalg.matmul {{.*}} ins(%arg0, %arg1 : tensor<16x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>)
// NAMED: mte.gemm_epilogue = {activation = #transformer.activation<none>, bias, input_scale, weight_scale}
// NAMED-NOT: linalg.matmul
// NAMED: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
func.func @linear_fp8(%x: tensor<16x16xf8E4M3FN>, %w: tensor<32x16xf8E4M3FN>, %sx: tensor<f32>, %sw: tensor<f32>,
                      %b: tensor<32xbf16>, %wkn: tensor<16x32xf8E4M3FN>) -> (tensor<16x32xbf16>, tensor<16x32xbf16>) {
  %0 = transformer.linear %x, %w bias %b input_scale %sx weight_scale %sw layout <nk> : (tensor<16x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>, tensor<32xbf16>, tensor<f32>, tensor<f32>) -> tensor<16x32xbf16>
  %1 = transformer.linear %x, %wkn weight_scale %sw layout <kn> : (tensor<16x16xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<f32>) -> tensor<16x32xbf16>
  return %0, %1 : tensor<16x32xbf16>, tensor<16x32xbf16>
}

// -----

// Constant scales (a compile-time quantized weight, imported Q/DQ): with
// named-matmul they fold into one factor, the epilogue's alpha, and are no
// operands of it; the reference lowering keeps them as operands.
// CHECK-LABEL: func @linear_fp8_constant_scales
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg1, %{{.*}} : tensor<16x32xf32>, tensor<f32>, tensor<f32>)
// NAMED-LABEL: func @linear_fp8_constant_scales
// NAMED: linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<16x32xf32>, tensor<f32>)
// NAMED-SAME: mte.gemm_epilogue = {activation = #transformer.activation<none>, alpha = 2.500000e-01 : f32, input_scale}
// NAMED: arith.constant 2.500000e-01 : f32
func.func @linear_fp8_constant_scales(%x: tensor<16x16xf8E4M3FN>, %sx: tensor<f32>) -> tensor<16x32xbf16> {
  %w = arith.constant dense<1.0> : tensor<32x16xf8E4M3FN>
  %sw = arith.constant dense<0.25> : tensor<f32>
  %0 = transformer.linear %x, %w input_scale %sx weight_scale %sw layout <nk> : (tensor<16x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<16x32xbf16>
  return %0 : tensor<16x32xbf16>
}

// -----

// With named-matmul, f32 attention's two products are batch_matmuls over
// (batch, kv head): 2 x 2 batches of the 2 query heads' stacked rows (GQA),
// Kᵀ through transposed maps; scale, mask and softmax stay elementwise.
// NAMED-LABEL: func @attention_f32
// NAMED: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<4x8x8xf32>, tensor<4x4x8xf32>) outs(%{{.*}} : tensor<4x8x4xf32>)
// NAMED: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x8x4xf32>, tensor<4x4x8xf32>) outs(%{{.*}} : tensor<4x8x8xf32>)
// CHECK-LABEL: func @attention_f32
// CHECK-NOT: linalg.batch_matmul
func.func @attention_f32(%q: tensor<2x4x32xf32>, %k: tensor<2x4x16xf32>, %v: tensor<2x4x16xf32>) -> tensor<2x4x32xf32> {
  %0 = transformer.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.35 : f32, causal} : (tensor<2x4x32xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x32xf32>
  return %0 : tensor<2x4x32xf32>
}

// -----

// Rotate-half RoPE over whole heads of a packed [B, S, H * D] projection
// with full-width tables [S, D]: two elementwise ops on the halves of each
// head, no index arithmetic, each writing its half of one result in place
// (x1' = x1 cos1 - x2 sin1, x2' = x2 cos2 + x1 sin2); the tables' halves are
// slices read at (s, f) for every head.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[TABLE:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-LABEL: func @rotary_halves
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2, 3]] output_shape [2, 5, 3, 8]
// CHECK-DAG: %[[X1:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [2, 5, 3, 4] [1, 1, 1, 1]
// CHECK-DAG: %[[X2:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 4] [2, 5, 3, 4] [1, 1, 1, 1]
// CHECK: %[[C1:.*]] = tensor.extract_slice %{{.*}}[0, 0] [5, 4] [1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %{{.*}}[0, 0] [5, 4] [1, 1]
// CHECK: %[[FIRST:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[TABLE]], #[[TABLE]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X1]], %[[X2]], %[[C1]], %[[S1]] :
// CHECK-NOT: linalg.index
// CHECK: arith.subf
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[FIRST]] into %{{.*}}[0, 0, 0, 0] [2, 5, 3, 4] [1, 1, 1, 1]
// CHECK: %[[C2:.*]] = tensor.extract_slice %{{.*}}[0, 4] [5, 4] [1, 1]
// CHECK: %[[SECOND:.*]] = linalg.generic {{.*}} ins(%[[X2]], %[[X1]], %[[C2]], %{{.*}} :
// CHECK-NOT: linalg.index
// CHECK: arith.addf
// CHECK: tensor.insert_slice %[[SECOND]] into %[[R1]][0, 0, 0, 4] [2, 5, 3, 4] [1, 1, 1, 1]
func.func @rotary_halves(%x: tensor<2x5x24xf32>, %cos: tensor<5x8xf32>, %sin: tensor<5x8xf32>) -> tensor<2x5x24xf32> {
  %0 = transformer.rotary_embedding %x, %cos, %sin {num_heads = 3 : i64} : (tensor<2x5x24xf32>, tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x24xf32>
  return %0 : tensor<2x5x24xf32>
}

// -----

// CumSum is one reduction over a second copy of the axis (d2 here): the
// output at i adds the inputs at j that the mode keeps (reverse, exclusive:
// j > i), from a zero fill.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @cumsum_reverse_exclusive
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x5xi64>) outs(%[[ZERO]] : tensor<2x5xi64>)
// CHECK: %[[I:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[KEEP:.*]] = arith.cmpi sgt, %[[J]], %[[I]]
// CHECK: arith.select %[[KEEP]]
// CHECK: arith.addi
func.func @cumsum_reverse_exclusive(%x: tensor<2x5xi64>) -> tensor<2x5xi64> {
  %0 = transformer.cumsum %x {axis = 1 : i64, exclusive, reverse} : tensor<2x5xi64>
  return %0 : tensor<2x5xi64>
}

// -----

// Degenerate shapes: a linear over K = 0 is its zero fill (then the
// epilogue); an op whose result has no elements is an empty tensor.
// NAMED-LABEL: func @linear_k0
// NAMED: %[[ZERO:.*]] = linalg.fill
// NAMED: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x0xf32>, tensor<0x4xf32>) outs(%[[ZERO]] : tensor<2x4xf32>)
// CHECK-LABEL: func @linear_k0
// CHECK-LABEL: func @rotary_no_tokens
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<1x4x0x8xf32>
// CHECK-NEXT: return %[[E]]
func.func @linear_k0(%x: tensor<2x0xf32>, %w: tensor<0x4xf32>) -> tensor<2x4xf32> {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<2x0xf32>, tensor<0x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @rotary_no_tokens(%x: tensor<1x4x0x8xf32>, %c: tensor<0x8xf32>) -> tensor<1x4x0x8xf32> {
  %0 = transformer.rotary_embedding %x, %c, %c : (tensor<1x4x0x8xf32>, tensor<0x8xf32>, tensor<0x8xf32>) -> tensor<1x4x0x8xf32>
  return %0 : tensor<1x4x0x8xf32>
}

// -----

// check_indices: a clamp into [-b, b - 1] (b per component of the last
// dimension), and a reduction of the indices viewed as [R, C] (C the
// largest divisor of n up to sqrt(n): 10 = 5 x 2) into per-row counts,
// first bad positions and values, then over the rows, packed into [3]
// with -1 for no position.
// CHECK-LABEL: func @check_indices
// CHECK: %[[CLAMPED:.*]] = linalg.generic {{.*}} ins(%[[IDS:[^ ]*]] : tensor<5x2xi32>)
// CHECK:   %[[COMPONENT:.*]] = linalg.index 1
// CHECK:   arith.select {{.*}} : i32
// CHECK:   %[[LOW:.*]] = arith.maxsi
// CHECK:   arith.minsi %[[LOW]]
// CHECK: %[[ROWS:.*]]:3 = linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[IDS]] : tensor<5x2xi32>)
// CHECK-SAME: outs({{.*}} : tensor<5xi64>, tensor<5xi64>, tensor<5xi64>)
// CHECK:   arith.remui
// CHECK:   %[[BAD:.*]] = arith.ori
// CHECK:   arith.extsi {{.*}} : i32 to i64
// CHECK:   arith.extui %[[BAD]] : i1 to i64
// CHECK: %[[TOTAL:.*]]:3 = linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]]#0, %[[ROWS]]#1, %[[ROWS]]#2 : tensor<5xi64>, tensor<5xi64>, tensor<5xi64>) outs({{.*}} : tensor<1xi64>, tensor<1xi64>, tensor<1xi64>)
// CHECK: %[[STATUS:.*]] = linalg.generic {{.*}} ins(%[[TOTAL]]#0, %[[TOTAL]]#1, %[[TOTAL]]#2 : tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) outs({{.*}} : tensor<3xi64>)
// CHECK: return %[[CLAMPED]], %[[STATUS]]
func.func @check_indices(%i: tensor<5x2xi32>) -> (tensor<5x2xi32>, tensor<3xi64>) {
  %safe, %status = transformer.check_indices %i {bounds = array<i64: 3, 4>} : tensor<5x2xi32>
  return %safe, %status : tensor<5x2xi32>, tensor<3xi64>
}

// -----

// Delayed scaling's update: this run's amaxes become row 0 of the history,
// the window's amax is its column maximum, the next scale (448 / 2^1) /
// amax where that is finite and positive (capped at the largest f32),
// else the old scale; the next history is a fresh tensor of zeros with
// rows 2.. at 1.. and this run's amaxes in the last row.
// CHECK-LABEL: func @fp8_scale_update
// CHECK-SAME: (%[[H:.*]]: tensor<4x3xf32>, %[[A:.*]]: tensor<3xf32>, %[[S:.*]]: tensor<3xf32>)
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[A]] {{\[\[}}0, 1]] output_shape [1, 3]
// CHECK: %[[AMAXES:.*]] = tensor.extract_slice %[[ROW]][0, 0] [1, 3] [1, 1]
// CHECK: %[[CUR:.*]] = tensor.insert_slice %[[AMAXES]] into %[[H]][0, 0] [1, 3] [1, 1]
// CHECK: %[[WINDOW:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[CUR]] : tensor<4x3xf32>)
// CHECK: arith.maximumf
// CHECK: %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<4x3xf32>
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[CUR]][2, 0] [2, 3] [1, 1]
// CHECK: %[[MOVED:.*]] = tensor.insert_slice %[[OLD]] into %[[ZEROS]][1, 0] [2, 3] [1, 1]
// CHECK: %[[NEWEST:.*]] = tensor.extract_slice %[[ROW]][0, 0] [1, 3] [1, 1]
// CHECK: %[[NEXT:.*]] = tensor.insert_slice %[[NEWEST]] into %[[MOVED]][3, 0] [1, 3] [1, 1]
// CHECK: %[[SCALE:.*]] = linalg.generic {{.*}} ins(%[[WINDOW]], %[[S]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: ^bb0(%[[AMAX:.*]]: f32, %[[PREV:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[FINITE:.*]] = arith.cmpf olt, %[[AMAX]], %[[INF]]
// CHECK: %[[POSITIVE:.*]] = arith.cmpf ogt, %[[AMAX]]
// CHECK: %[[USABLE:.*]] = arith.andi %[[POSITIVE]], %[[FINITE]]
// CHECK: %[[SCALED_MAX:.*]] = arith.constant 2.240000e+02 : f32
// CHECK: %[[Q:.*]] = arith.divf %[[SCALED_MAX]], %[[AMAX]]
// CHECK: %[[LARGEST:.*]] = arith.constant 3.40282347E+38 : f32
// CHECK: %[[CAPPED:.*]] = arith.minimumf %[[Q]], %[[LARGEST]]
// CHECK: arith.select %[[USABLE]], %[[CAPPED]], %[[PREV]]
// CHECK: return %[[NEXT]], %[[SCALE]]
func.func @fp8_scale_update(%h: tensor<4x3xf32>, %a: tensor<3xf32>, %s: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>) {
  %nh, %ns = transformer.fp8_scale_update %h, %a, %s {algorithm = #transformer.amax_algorithm<max>, fp8_max = 4.480000e+02 : f32, margin = 1 : i64} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  return %nh, %ns : tensor<4x3xf32>, tensor<3xf32>
}

// -----

// A long history reduces in two levels: TransformerEngine's 1024 rows as
// [32, 32 * T] to [32 * T], then [32, T] to [T], so that no loop reads a
// whole column.
// CHECK-LABEL: func @fp8_scale_update_long_history
// CHECK: %[[CUR:.*]] = tensor.insert_slice {{.*}} : tensor<1x3xf32> into tensor<1024x3xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[CUR]] {{.*}} : tensor<1024x3xf32> into tensor<3072xf32>
// CHECK: %[[WIDE:.*]] = tensor.expand_shape %[[FLAT]] {{.*}} : tensor<3072xf32> into tensor<32x96xf32>
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[WIDE]] : tensor<32x96xf32>) outs(%{{.*}} : tensor<96xf32>)
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[PARTIAL]] {{.*}} : tensor<96xf32> into tensor<32x3xf32>
// CHECK: %[[WINDOW:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<32x3xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[WINDOW]], %{{.*}} : tensor<3xf32>, tensor<3xf32>)
func.func @fp8_scale_update_long_history(%h: tensor<1024x3xf32>, %a: tensor<3xf32>, %s: tensor<3xf32>) -> (tensor<1024x3xf32>, tensor<3xf32>) {
  %nh, %ns = transformer.fp8_scale_update %h, %a, %s {algorithm = #transformer.amax_algorithm<max>, fp8_max = 4.480000e+02 : f32, margin = 0 : i64} : (tensor<1024x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<1024x3xf32>, tensor<3xf32>)
  return %nh, %ns : tensor<1024x3xf32>, tensor<3xf32>
}

// -----

// most_recent: the scale comes from this run's amaxes, no reduction; a
// history of one row is all zeros next.
// CHECK-LABEL: func @fp8_scale_update_most_recent
// CHECK-SAME: (%[[H:.*]]: tensor<1x2xf32>, %[[A:.*]]: tensor<2xf32>, %[[S:.*]]: tensor<2xf32>)
// CHECK-NOT: "reduction"
// CHECK: %[[ZEROS:.*]] = linalg.fill
// CHECK: %[[SCALE:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[S]] : tensor<2xf32>, tensor<2xf32>)
// CHECK: return %[[ZEROS]], %[[SCALE]]
func.func @fp8_scale_update_most_recent(%h: tensor<1x2xf32>, %a: tensor<2xf32>, %s: tensor<2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>) {
  %nh, %ns = transformer.fp8_scale_update %h, %a, %s {algorithm = #transformer.amax_algorithm<most_recent>, fp8_max = 4.480000e+02 : f32, margin = 0 : i64} : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>)
  return %nh, %ns : tensor<1x2xf32>, tensor<2xf32>
}

// -----

// A multiplying quantize (TE's cast_to_fp8) multiplies by its scale where
// ONNX's divides; both saturate.
// CHECK-LABEL: func @quantize_multiply
// CHECK: linalg.generic
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK-NOT: arith.divf
// CHECK: arith.minimumf
// CHECK: arith.truncf {{.*}} : f32 to f8E4M3FN
func.func @quantize_multiply(%x: tensor<4x64xbf16>, %s: tensor<f32>) -> tensor<4x64xf8E4M3FN> {
  %0 = transformer.quantize %x, %s {multiply} : (tensor<4x64xbf16>, tensor<f32>) -> tensor<4x64xf8E4M3FN>
  return %0 : tensor<4x64xf8E4M3FN>
}

// -----

// fp8_scale is one rank-0 loop with both results: 448 / amax where the
// amax is finite and positive (capped at the largest f32), else 1; under
// delayed scaling the state's scale where it is finite and positive, else
// 1, read without an amax; scale_inv the reciprocal.
// CHECK-LABEL: func @fp8_scale
// CHECK-SAME: (%[[A:.*]]: tensor<f32>, %[[D:.*]]: tensor<f32>)
// CHECK: %[[CUR:.*]]:2 = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = []} ins(%[[A]] : tensor<f32>)
// CHECK: ^bb0(%[[AMAX:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[USABLE:.*]] = arith.andi
// CHECK: %[[Q:.*]] = arith.divf %{{.*}}, %[[AMAX]]
// CHECK: %[[CAPPED:.*]] = arith.minimumf %[[Q]]
// CHECK: %[[SCALE:.*]] = arith.select %[[USABLE]], %[[CAPPED]]
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[SCALE]]
// CHECK: linalg.yield %[[SCALE]], %[[INV]]
// CHECK: %[[DEL:.*]]:2 = linalg.generic {{.*}} ins(%[[D]] : tensor<f32>)
// CHECK: ^bb0(%[[PREV:[^:]*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-DAG: %[[FIN:.*]] = arith.cmpf olt, %[[PREV]]
// CHECK-DAG: %[[POS:.*]] = arith.cmpf ogt, %[[PREV]]
// CHECK: %[[OK:.*]] = arith.andi %[[POS]], %[[FIN]]
// CHECK: %[[S:.*]] = arith.select %[[OK]], %[[PREV]], %{{.*}}
// CHECK: %[[SI:.*]] = arith.divf %{{.*}}, %[[S]]
// CHECK: linalg.yield %[[S]], %[[SI]]
func.func @fp8_scale(%a: tensor<f32>, %d: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %s, %si = transformer.fp8_scale %a {fp8_max = 4.480000e+02 : f32} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %t, %ti = transformer.fp8_scale delayed %d {fp8_max = 4.480000e+02 : f32} : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %s, %si, %t, %ti : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// amax of 64 values or fewer is one rank-0 loop reading each (|x| in f32,
// maximumf: NaN propagates), an elementwise op that fuses with its
// fp8_scale; more values first go through a level of column maxima.
// CHECK-LABEL: func @amax_small
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = []} outs(
// CHECK-COUNT-24: tensor.extract
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
// CHECK-LABEL: func @amax_levels
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x256xbf16>)
// CHECK: math.absf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = []} outs(
// CHECK-COUNT-16: tensor.extract
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @amax_small(%x: tensor<4x6xbf16>) -> tensor<f32> {
  %0 = transformer.amax %x : tensor<4x6xbf16> -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @amax_levels(%x: tensor<64x64xbf16>) -> tensor<f32> {
  %0 = transformer.amax %x : tensor<64x64xbf16> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// block_amax: max |x| over each block of the [4, 2, 128] view of the input.
// CHECK-LABEL: func @block_amax
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape {{.*}} output_shape [4, 2, 128] : tensor<1024xbf16> into tensor<4x2x128xbf16>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[BLOCKS]] : tensor<4x2x128xbf16>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK: math.absf
// CHECK: arith.maximumf
func.func @block_amax(%x: tensor<4x256xbf16>) -> tensor<4x2xf32> {
  %0 = transformer.block_amax %x {block_size = 128 : i64} : tensor<4x256xbf16> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// fp8_scale of block amaxes: one loop over them; power_of_two keeps the
// scale's sign and exponent bits.
// CHECK-LABEL: func @fp8_scale_blocks
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<4x2xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK: %[[SCALE:.*]] = arith.select
// CHECK: %[[BITS:.*]] = arith.bitcast %[[SCALE]] : f32 to i32
// CHECK: %[[MASK:.*]] = arith.constant -8388608 : i32
// CHECK: %[[POW2:.*]] = arith.andi %[[BITS]], %[[MASK]]
// CHECK: %[[ROUNDED:.*]] = arith.bitcast %[[POW2]] : i32 to f32
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[ROUNDED]]
// CHECK: linalg.yield %[[ROUNDED]], %[[INV]]
func.func @fp8_scale_blocks(%a: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %s, %si = transformer.fp8_scale %a {fp8_max = 448.0 : f32, power_of_two} : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
  return %s, %si : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// A block-scaled quantize reads scale [m, b] for element [m, b, j] of the
// [4, 2, 128] view.
// CHECK-DAG: #[[ELT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BLK:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-LABEL: func @quantize_blocks
// CHECK: %[[S:.*]] = tensor.expand_shape %{{.*}} output_shape [4, 2, 1]
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} output_shape [4, 2, 128]
// CHECK: linalg.generic {indexing_maps = [#[[ELT]], #[[BLK]], #[[ELT]]]{{.*}} ins(%[[X]], %[[S]] : tensor<4x2x128xbf16>, tensor<4x2x1xf32>)
// CHECK: arith.mulf
// CHECK: tensor.collapse_shape {{.*}} : tensor<4x2x128xf8E4M3FN> into tensor<1024xf8E4M3FN>
func.func @quantize_blocks(%x: tensor<4x256xbf16>, %s: tensor<4x2xf32>) -> tensor<4x256xf8E4M3FN> {
  %0 = transformer.quantize %x, %s {multiply} : (tensor<4x256xbf16>, tensor<4x2xf32>) -> tensor<4x256xf8E4M3FN>
  return %0 : tensor<4x256xf8E4M3FN>
}

// -----

// A block-scaled linear: one contraction reading the input's scales
// transposed to [K / 128, M] and the weight's with rows padded to 4 blocks
// (a constant, folded), each term times both; the epilogue has no scales.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[XS:.*]] = affine_map<(d0, d1, d2) -> (d2 floordiv 128, d0)>
// CHECK-DAG: #[[WS:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 128, d2 floordiv 128)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @linear_blocks
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<6x2xf32>) outs(%{{.*}} : tensor<2x6xf32>) permutation = [1, 0]
// CHECK: %[[PADDED:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 2.500000e-01, 0.000000e+00, 0.000000e+00], [1.250000e-01, 6.250000e-02, 0.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[XS]], #[[WS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %[[T]], %[[PADDED]] : tensor<6x256xf8E4M3FN>, tensor<144x256xf8E4M3FN>, tensor<2x6xf32>, tensor<2x4xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x144xf32>, tensor<144xbf16>)
// CHECK-NOT: arith.mulf
// CHECK: arith.addf
func.func @linear_blocks(%x: tensor<2x3x256xf8E4M3FN>, %w: tensor<144x256xf8E4M3FN>, %xs: tensor<2x3x2xf32>, %b: tensor<144xbf16>) -> tensor<2x3x144xbf16> {
  %ws = arith.constant dense<[[0.5, 0.25], [0.125, 0.0625]]> : tensor<2x2xf32>
  %0 = transformer.linear %x, %w bias %b input_scale %xs weight_scale %ws layout <nk> : (tensor<2x3x256xf8E4M3FN>, tensor<144x256xf8E4M3FN>, tensor<144xbf16>, tensor<2x3x2xf32>, tensor<2x2xf32>) -> tensor<2x3x144xbf16>
  return %0 : tensor<2x3x144xbf16>
}

// -----

// Integer abs is max(x, 0 - x) (math.absi has no lowering in the host
// pipeline's math-to-libm); float abs stays math.absf.
// CHECK-LABEL: func @abs_int_and_float
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[N:.*]] = arith.subi %{{.*}}, %[[X]] : i64
// CHECK: %[[A:.*]] = arith.maxsi %[[X]], %[[N]] : i64
// CHECK: linalg.yield %[[A]]
// CHECK: math.absf
func.func @abs_int_and_float(%i: tensor<4xi64>, %f: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>) {
  %a = transformer.abs %i : tensor<4xi64>
  %b = transformer.abs %f : tensor<4xf32>
  return %a, %b : tensor<4xi64>, tensor<4xf32>
}
