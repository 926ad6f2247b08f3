// RUN: mte-opt %s -split-input-file -mte-build-row-kernels -verify-diagnostics | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-build-row-kernels -verify-diagnostics | FileCheck %s --check-prefix=ABSENT

// Rows of 768 f32 are 192 vectors of 4: a block of 64 threads per row, each
// loading 3 vectors (all in the row: no guards). Each thread's mean and sum
// of squared deviations (M2) over its 12 elements are merged pairwise (Chan
// et al.) by a butterfly in each warp, then across the two warps through
// workgroup memory: one barrier.
// CHECK-LABEL: func.func private @mte_row_layer_norm_16x768xf32_bias_residual(
// CHECK-SAME: %[[X:[^:]*]]: memref<16x768xf32>, %[[G:[^:]*]]: memref<768xf32>, %[[B:[^:]*]]: memref<768xf32>, %[[R:[^:]*]]: memref<16x768xf32>, %[[EPS:[^:]*]]: f32, %[[OUT:[^:]*]]: memref<16x768xf32>, %[[SUM:[^:]*]]: memref<16x768xf32>)
// CHECK-NOT: mte.row_kernel
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 64 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], %{{.*}}, %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], %{{.*}}, %{{.*}}) workgroup(%[[RED0:.*]] : memref<32xf32, #gpu.address_space<workgroup>>, %[[RED1:.*]] : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[XV:.*]] = vector.load %[[X]][%[[ROW:.*]], %[[OFF:.*]]] {alignment = 16 : i64} : memref<16x768xf32>, vector<4xf32>
// CHECK: vector.load %[[R]][%[[ROW]], %[[OFF]]] {alignment = 16 : i64} : memref<16x768xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[SUM]][%[[ROW]], %[[OFF]]] {alignment = 16 : i64} : memref<16x768xf32>, vector<4xf32>
// CHECK: %[[MEAN:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[OTHER_MEAN:.*]], %{{.*}} = gpu.shuffle  xor %[[MEAN]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[OTHER_M2:.*]], %{{.*}} = gpu.shuffle  xor %[[M2:.*]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[DELTA:.*]] = arith.subf %[[OTHER_MEAN]], %[[MEAN]] : f32
// CHECK: arith.addf %[[M2]], %[[OTHER_M2]] : f32
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[RED0]][%{{.*}}] : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[RED1]][%{{.*}}] : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: memref.load %[[RED0]]
// CHECK: memref.load %[[RED1]]
// CHECK: memref.load %[[RED0]]
// CHECK: memref.load %[[RED1]]
// CHECK: arith.divf
// CHECK: math.rsqrt
// CHECK: vector.load %[[G]][%{{.*}}] {alignment = 16 : i64} : memref<768xf32>, vector<4xf32>
// CHECK: vector.load %[[B]][%{{.*}}] {alignment = 16 : i64} : memref<768xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[ROW]], %{{.*}}] {alignment = 16 : i64}
// CHECK: gpu.terminator
// CHECK: return
func.func private @mte_row_layer_norm_16x768xf32_bias_residual(memref<16x768xf32>, memref<768xf32>, memref<768xf32>, memref<16x768xf32>, f32, memref<16x768xf32>, memref<16x768xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = layer_norm, bias = true, residual = true>}

// -----

// Rows of 64 bf16 are 8 vectors of 8 (16 bytes): 8 threads per row, 16 rows
// to a block of 128 threads; 5 rows leave threads past the last row, which
// load and store nothing but still shuffle (xor 4, 2, 1). No workgroup
// memory, no barrier.
// ABSENT-LABEL: func.func private @mte_row_rms_norm_5x64xbf16(
// ABSENT-NOT: gpu.barrier
// ABSENT-COUNT-3: gpu.shuffle
// ABSENT-NOT: gpu.shuffle
// ABSENT-NOT: gpu.barrier
// ABSENT: {{^}}}
// CHECK-LABEL: func.func private @mte_row_rms_norm_5x64xbf16(
// CHECK-DAG: %[[ONE_BLOCK:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 128 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE_BLOCK]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[THREADS]], {{.*}}) {
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: scf.if %[[IN]] -> (vector<8xbf16>)
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<5x64xbf16>, vector<8xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-COUNT-3: gpu.shuffle  xor
// CHECK: math.rsqrt
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<5x64xbf16>, vector<8xbf16>
func.func private @mte_row_rms_norm_5x64xbf16(memref<5x64xbf16>, memref<64xbf16>, f32, memref<5x64xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm>}

// -----

// With amax, the norm also writes each row's max |y| of its bf16 output:
// the lanes' |y| maxima, one more row reduction (xor 4, 2, 1), rounded to
// bf16 as the output is stored, written by the row's first thread.
// CHECK-LABEL: func.func private @mte_row_rms_norm_5x64xbf16_amax(
// CHECK: math.rsqrt
// CHECK: vector.store %{{.*}} : memref<5x64xbf16>, vector<8xbf16>
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK-COUNT-3: gpu.shuffle  xor
// CHECK: %[[ROUNDED:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[AMAX:.*]] = arith.extf %[[ROUNDED]] : bf16 to f32
// CHECK: scf.if
// CHECK: memref.store %[[AMAX]], %{{.*}}[%{{.*}}] : memref<5xf32>
func.func private @mte_row_rms_norm_5x64xbf16_amax(memref<5x64xbf16>, memref<64xbf16>, f32, memref<5x64xbf16>, memref<5xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm, amax = true>}

// -----

// With quantize_from = bf16, the norm writes E4M3 as the quantize of its
// bf16 output would: y rounded to bf16 and back, times the scale (element
// `at` of the vector, loaded once), clamped to +-448 and truncated; eight
// codes a vector store. The row maxima are of the bf16 y.
// CHECK-LABEL: func.func private @mte_row_rms_norm_5x64xbf16_amax_e4m3(
// CHECK-SAME: %{{[^:]*}}: memref<5x64xbf16>, %{{[^:]*}}: memref<64xbf16>, %{{[^:]*}}: f32, %[[SCALES:[^:]*]]: memref<4xf32>, %[[AT:[^:]*]]: i64, %[[OUT:[^:]*]]: memref<5x64xf8E4M3FN>, %{{[^:]*}}: memref<5xf32>)
// CHECK: gpu.launch
// CHECK: %[[I:.*]] = arith.index_cast %[[AT]] : i64 to index
// CHECK: %[[S:.*]] = memref.load %[[SCALES]][%[[I]]] : memref<4xf32>
// CHECK: math.rsqrt
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[W:.*]] = arith.extf %[[R]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[W]], %[[S]] : f32
// CHECK: %[[LO:.*]] = arith.minimumf %[[P]]
// CHECK: %[[HI:.*]] = arith.maximumf %[[LO]]
// CHECK: arith.truncf %[[HI]] : f32 to f8E4M3FN
// CHECK: vector.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}] {{.*}} : memref<5x64xf8E4M3FN>, vector<8xf8E4M3FN>
// CHECK-COUNT-3: gpu.shuffle  xor
// CHECK: %[[ROUNDED:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[AMAX:.*]] = arith.extf %[[ROUNDED]] : bf16 to f32
// CHECK: memref.store %[[AMAX]], %{{.*}}[%{{.*}}] : memref<5xf32>
func.func private @mte_row_rms_norm_5x64xbf16_amax_e4m3(memref<5x64xbf16>, memref<64xbf16>, f32, memref<4xf32>, i64, memref<5x64xf8E4M3FN>, memref<5xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm, amax = true, quantize_from = bf16>}

// -----

// Rows of 7 f32 take scalar accesses: 8 threads per row, the eighth with no
// element.
// CHECK-LABEL: func.func private @mte_row_layer_norm_4x7xf32(
// CHECK: memref.load %{{.*}} : memref<4x7xf32>
// CHECK: memref.store %{{.*}} : memref<4x7xf32>
// ABSENT-LABEL: func.func private @mte_row_layer_norm_4x7xf32(
// ABSENT-NOT: vector.load
// ABSENT-NOT: vector.store
// ABSENT: {{^}}}
func.func private @mte_row_layer_norm_4x7xf32(memref<4x7xf32>, memref<7xf32>, f32, memref<4x7xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = layer_norm>}

// -----

// Rows of 16 keys: 4 vectors, 4 threads per row (shuffles xor 2 and 1).
// Scale, boolean mask (one byte an element, loaded one by one), causal mask;
// then an online softmax: each thread's exponentials against its own
// maximum, one butterfly over (maximum, sum) that rescales the sums it
// merges, and each exponential scaled by exp(own max - row max) / sum, or
// zeros for a query that sees no key.
// CHECK-LABEL: func.func private @mte_attention_softmax_2x4x4x16_causal_mask_2x1x1x16xi1(
// CHECK-SAME: %[[S:[^:]*]]: memref<32x16xf32>, %[[M:[^:]*]]: memref<32xi1>, %[[SCALE:[^:]*]]: f32, %[[P:[^:]*]]: memref<32x16xf32>)
// CHECK: gpu.launch
// CHECK: vector.load %[[S]]
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: memref.load %[[M]][%{{.*}}] : memref<32xi1>
// CHECK: arith.select
// CHECK: arith.cmpi sle
// CHECK: %[[MAX:.*]] = arith.maximumf %cst{{.*}}, %{{.*}} : f32
// CHECK: %[[HIDDEN:.*]] = arith.cmpf oeq, %[[MAX]]
// CHECK: %[[SHIFT:.*]] = arith.select %[[HIDDEN]], %{{.*}}, %[[MAX]] : f32
// CHECK: %[[D0:.*]] = arith.subf %{{.*}}, %[[SHIFT]] : f32
// CHECK: %[[E0:.*]] = math.exp %[[D0]] : f32
// CHECK: %[[OTHER_MAX:.*]], %{{.*}} = gpu.shuffle  xor %[[MAX]], %c2_i32
// CHECK: %[[OTHER_SUM:.*]], %{{.*}} = gpu.shuffle  xor %[[SUM:.*]], %c2_i32
// CHECK: %[[MAX2:.*]] = arith.maximumf %[[MAX]], %[[OTHER_MAX]] : f32
// CHECK: math.exp
// CHECK: math.exp
// CHECK: gpu.shuffle  xor %[[MAX2]], %c1_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: %[[FACTOR:.*]] = arith.divf %{{.*}}, %[[ROWSUM:.*]] : f32
// CHECK: %[[POSITIVE:.*]] = arith.cmpf ogt, %[[ROWSUM]]
// CHECK: %[[SEEN:.*]] = arith.cmpf one, %[[MAX]]
// CHECK: %[[SEES:.*]] = arith.andi %[[POSITIVE]], %[[SEEN]] : i1
// CHECK: %[[F:.*]] = arith.select %[[SEES]], %[[FACTOR]], %{{.*}} : f32
// CHECK: arith.mulf %[[E0]], %[[F]] : f32
// CHECK: vector.store %{{.*}}, %[[P]]
// ABSENT-LABEL: func.func private @mte_attention_softmax_2x4x4x16_causal_mask_2x1x1x16xi1(
// ABSENT-NOT: gpu.barrier
// ABSENT: {{^}}}
func.func private @mte_attention_softmax_2x4x4x16_causal_mask_2x1x1x16xi1(memref<32x16xf32>, memref<32xi1>, f32, memref<32x16xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 4, queries = 4, mask_shape = [2, 1, 1, 16], causal = true>}

// -----

// bf16 probabilities set the vector width: 8 lanes, f32 scores loaded 32
// bytes at a time (LLVM splits them), 16-byte stores; 1024 keys are 128
// vectors, a warp per row (4 rows to a block), so no barrier.
// CHECK-LABEL: func.func private @mte_attention_softmax_1x2x2x1024xbf16(
// CHECK: gpu.launch
// CHECK: vector.load %{{.*}} {alignment = 32 : i64} : memref<4x1024xf32>, vector<8xf32>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<4x1024xbf16>, vector<8xbf16>
// ABSENT-LABEL: func.func private @mte_attention_softmax_1x2x2x1024xbf16(
// ABSENT-NOT: gpu.barrier
// ABSENT: {{^}}}
func.func private @mte_attention_softmax_1x2x2x1024xbf16(memref<4x1024xf32>, f32, memref<4x1024xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 2, queries = 2>}

// -----

// A function with a body or without the attribute is left alone.
// CHECK-LABEL: func.func private @other(memref<4x4xf32>)
func.func private @other(memref<4x4xf32>)

// -----

// An unknown kind, or parameters the kind does not take, do not parse.
// expected-error @+2 {{expected ::mte::kernel::RowKernelKind to be one of: layer_norm, rms_norm, rotary, attention_softmax, flash_attention, amax, swiglu, geglu, geglu_tanh, amaxes}}
// expected-error @+1 {{failed to parse Kernel_RowKernelAttr parameter 'kind'}}
func.func private @bad(memref<4x4xf32>, f32, memref<4x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = group_norm>}

// -----

// expected-error @+1 {{a rms_norm kernel takes no 'bias'}}
func.func private @bad_bias(memref<4x4xf32>, memref<4xf32>, f32, memref<4x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm, bias = true>}

// -----

// expected-error @+1 {{a rotary kernel takes no 'amax'}}
func.func private @bad_amax(memref<4x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 1, seq = 4, amax = true>}

// -----

// SwiGLU on the column halves of a packed [5, 2 x 64] projection (up at
// offset 64, rows 128 apart): silu(g) * u in f32 from 16-byte loads of
// each half, the E4M3 codes of the bf16 product times the scale, and each
// row's max |y| rounded to bf16.
// CHECK-LABEL: func.func private @mte_row_swiglu_5x64xbf16_amax_e4m3(
// CHECK-SAME: %[[G:[^:]*]]: memref<5x64xbf16, strided<[128, 1]>>, %[[U:[^:]*]]: memref<5x64xbf16, strided<[128, 1], offset: 64>>, %[[SCALES:[^:]*]]: memref<2xf32>, %[[AT:[^:]*]]: i64, %[[OUT:[^:]*]]: memref<5x64xf8E4M3FN>, %[[MAX:[^:]*]]: memref<5xf32>)
// CHECK: gpu.launch
// CHECK: %[[S:.*]] = memref.load %[[SCALES]][%{{.*}}] : memref<2xf32>
// CHECK: vector.load %[[G]]{{.*}} : memref<5x64xbf16, strided<[128, 1]>>, vector<8xbf16>
// CHECK: vector.load %[[U]]{{.*}} : memref<5x64xbf16, strided<[128, 1], offset: 64>>, vector<8xbf16>
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.mulf %{{.*}}, %[[S]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FN
// CHECK: vector.store %{{.*}}, %[[OUT]]{{.*}} : memref<5x64xf8E4M3FN>, vector<8xf8E4M3FN>
// CHECK: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[MAX]][%{{.*}}] : memref<5xf32>
func.func private @mte_row_swiglu_5x64xbf16_amax_e4m3(memref<5x64xbf16, strided<[128, 1]>>, memref<5x64xbf16, strided<[128, 1], offset: 64>>, memref<2xf32>, i64, memref<5x64xf8E4M3FN>, memref<5xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = swiglu, amax = true, quantize_from = bf16>}

// -----

// GeGLU: the same kernel with GELU for silu -- its tanh approximation, or
// erf.
// CHECK-LABEL: func.func private @mte_row_geglu_tanh_5x64xbf16_amax(
// CHECK: gpu.launch
// CHECK-NOT: math.exp
// CHECK: math.tanh
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-LABEL: func.func private @mte_row_geglu_5x64xbf16_amax(
// CHECK: gpu.launch
// CHECK: math.erf
func.func private @mte_row_geglu_tanh_5x64xbf16_amax(memref<5x64xbf16, strided<[128, 1]>>, memref<5x64xbf16, strided<[128, 1], offset: 64>>, memref<5x64xbf16>, memref<5xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = geglu_tanh, amax = true>}
func.func private @mte_row_geglu_5x64xbf16_amax(memref<5x64xbf16, strided<[128, 1]>>, memref<5x64xbf16, strided<[128, 1], offset: 64>>, memref<5x64xbf16>, memref<5xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = geglu, amax = true>}

// -----

// expected-error @+1 {{not a valid geglu kernel: needs an f32 [rows] output for the rows' amaxes}}
func.func private @bad_geglu_maxima(memref<5x64xbf16>, memref<5x64xbf16>, memref<5x64xbf16>, memref<4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = geglu, amax = true>}

// -----

// expected-error @+1 {{not a valid swiglu kernel: gate and up must be [rows, length] views of one shape and type with static strides, the last 1}}
func.func private @bad_swiglu_views(memref<5x64xbf16>, memref<5x32xbf16>, memref<5x64xbf16>, memref<5xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = swiglu, amax = true>}

// -----

// expected-error @+1 {{not a valid swiglu kernel: quantizes to an f8E4M3FN output}}
func.func private @bad_swiglu_output(memref<5x64xbf16>, memref<5x64xbf16>, memref<2xf32>, i64, memref<5x64xbf16>, memref<5xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = swiglu, amax = true, quantize_from = bf16>}

// -----

// expected-error @+1 {{not a valid swiglu kernel: needs an f32 [T] vector of scales and an i64 index into it to quantize its output}}
func.func private @bad_swiglu_scales(memref<5x64xbf16>, memref<5x64xbf16>, memref<f32>, i64, memref<5x64xf8E4M3FN>, memref<5xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = swiglu, amax = true, quantize_from = bf16>}

// -----

// expected-error @+1 {{not a valid swiglu kernel: needs an f32 [rows] output for the rows' amaxes}}
func.func private @bad_swiglu_maxima(memref<5x64xbf16>, memref<5x64xbf16>, memref<5x64xbf16>, memref<4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = swiglu, amax = true>}

// -----

// expected-error @+1 {{a rotary kernel takes no 'quantize_from'}}
func.func private @bad_quantize_kind(memref<4x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 1, seq = 4, quantize_from = bf16>}

// -----

// expected-error @+1 {{a rms_norm kernel quantizes from a float type, not 'i8'}}
func.func private @bad_quantize_type(memref<4x8xbf16>, memref<8xbf16>, f32, memref<1xf32>, i64, memref<4x8xf8E4M3FN>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm, quantize_from = i8>}

// -----

// expected-error @+1 {{quantizes to an f8E4M3FN output}}
func.func private @bad_quantize_output(memref<4x8xbf16>, memref<8xbf16>, f32, memref<1xf32>, i64, memref<4x8xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm, quantize_from = bf16>}

// -----

// expected-error @+1 {{needs an f32 [T] vector of scales and an i64 index into it to quantize its output}}
func.func private @bad_quantize_scale(memref<4x8xbf16>, memref<8xbf16>, f32, memref<f32>, i64, memref<4x8xf8E4M3FN>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm, quantize_from = bf16>}

// -----

// expected-error @+1 {{is not a valid row kernel: needs an f32 [rows] output for the rows' amaxes}}
func.func private @bad_amax_output(memref<4x8xf32>, memref<8xf32>, f32, memref<4x8xf32>, memref<4x8xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm, amax = true>}

// -----

// expected-error @+1 {{kv_heads 3 must divide heads 4}}
func.func private @bad_heads(memref<4x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 4, kv_heads = 3>}

// -----

// expected-error @+1 {{a mask has at most 4 dimensions, not 5}}
func.func private @bad_mask(memref<4x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 1, queries = 4, mask_shape = [1, 1, 1, 4, 4]>}

// -----

// expected-error @+1 {{a flash_attention key bias is [batch, keys], not 4-D}}
func.func private @bad_key_bias(memref<4x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 1, kv_heads = 1, mask_shape = [2, 1, 1, 4]>}

// -----

// A fused-attention declaration is not given a body: each call becomes a
// call of the runtime's mte_cuda_attention with every buffer's address (its
// aligned pointer plus offset, in bytes) and batch and row strides, then
// batch, heads, kv heads, queries, keys, head dimension, scale, causal,
// the type (3: bf16) and no key bias (address 0, batch stride 0).
// CHECK-LABEL: func.func @forward_flash_attention(
// CHECK-SAME: %[[QKV:.*]]: memref<2x5x256xbf16>, %[[O:.*]]: memref<2x5x128xbf16>)
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:3, %[[STRIDES:.*]]:3 = memref.extract_strided_metadata %{{.*}} : memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %{{.*}} : index
// CHECK: %[[ADDR:.*]] = arith.addi %[[PTR]], %[[BYTES]] : index
// CHECK: %[[Q:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: %[[QB:.*]] = arith.index_cast %[[STRIDES]]#0 : index to i64
// CHECK: %[[QR:.*]] = arith.index_cast %[[STRIDES]]#1 : index to i64
// CHECK: call @mte_cuda_attention(%[[Q]], %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64{{.*}}, %c2_i64{{.*}}, %c1_i64{{.*}}, %c5_i64{{.*}}, %c5_i64{{.*}}, %c64_i64{{.*}}, %[[QB]], %[[QR]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}}) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, i32, i32, i64, i64, i64, i64) -> ()
// CHECK-NOT: mte_flash_attention
// CHECK: func.func private @mte_cuda_attention(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, i32, i32, i64, i64, i64, i64)
func.func private @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal(memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x64xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x64xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<2x5x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 1, causal = true>}
func.func @forward_flash_attention(%qkv: memref<2x5x256xbf16>, %o: memref<2x5x128xbf16>) {
  %scale = arith.constant 0.125 : f32
  %q = memref.subview %qkv[0, 0, 0] [2, 5, 128] [1, 1, 1] : memref<2x5x256xbf16> to memref<2x5x128xbf16, strided<[1280, 256, 1]>>
  %k = memref.subview %qkv[0, 0, 128] [2, 5, 64] [1, 1, 1] : memref<2x5x256xbf16> to memref<2x5x64xbf16, strided<[1280, 256, 1], offset: 128>>
  %v = memref.subview %qkv[0, 0, 192] [2, 5, 64] [1, 1, 1] : memref<2x5x256xbf16> to memref<2x5x64xbf16, strided<[1280, 256, 1], offset: 192>>
  %qc = memref.cast %q : memref<2x5x128xbf16, strided<[1280, 256, 1]>> to memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>
  %kc = memref.cast %k : memref<2x5x64xbf16, strided<[1280, 256, 1], offset: 128>> to memref<2x5x64xbf16, strided<[?, ?, 1], offset: ?>>
  %vc = memref.cast %v : memref<2x5x64xbf16, strided<[1280, 256, 1], offset: 192>> to memref<2x5x64xbf16, strided<[?, ?, 1], offset: ?>>
  call @mte_flash_attention_2x5x128_2x5x64xbf16_h2_kv1_causal(%qc, %kc, %vc, %scale, %o) : (memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x64xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x64xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<2x5x128xbf16>) -> ()
  return
}

// -----

// A key bias: its address, and its row length as the batch stride (one row
// a batch); a bias of one row has batch stride 0.
// CHECK-LABEL: func.func @forward_flash_attention_key_bias(
// CHECK-SAME: %{{.*}}: memref<2x5x128xbf16>, %[[B2:.*]]: memref<2x5xf32>, %[[B1:.*]]: memref<1x5xf32>, %{{.*}}: memref<2x5x128xbf16>)
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[B2]]
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %c4{{.*}} : index
// CHECK: %[[ADDR:.*]] = arith.addi %[[PTR]], %[[BYTES]] : index
// CHECK: %[[BIAS:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: call @mte_cuda_attention({{.*}}, %c0_i32{{.*}}, %c3_i32{{.*}}, %[[BIAS]], %c5_i64{{.*}})
// CHECK: memref.extract_strided_metadata %[[B1]]
// CHECK: call @mte_cuda_attention({{.*}}, %c0_i32{{.*}}, %c3_i32{{.*}}, %{{.*}}, %c0_i64{{.*}})
func.func private @mte_flash_attention_keys(memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<2x5xf32>, memref<2x5x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 2, mask_shape = [2, 5]>}
func.func private @mte_flash_attention_keys1(memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<1x5xf32>, memref<2x5x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 2, mask_shape = [1, 5]>}
func.func @forward_flash_attention_key_bias(%x: memref<2x5x128xbf16>, %b2: memref<2x5xf32>, %b1: memref<1x5xf32>, %o: memref<2x5x128xbf16>) {
  %scale = arith.constant 0.125 : f32
  %xc = memref.cast %x : memref<2x5x128xbf16> to memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>
  call @mte_flash_attention_keys(%xc, %xc, %xc, %scale, %b2, %o) : (memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<2x5xf32>, memref<2x5x128xbf16>) -> ()
  call @mte_flash_attention_keys1(%xc, %xc, %xc, %scale, %b1, %o) : (memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<1x5xf32>, memref<2x5x128xbf16>) -> ()
  return
}

// -----

// An E4M3 output: the output's address counts 1-byte elements, the scale's
// is its vector's plus 4 x its index, and the row maxima's is last.
// CHECK-LABEL: func.func @forward_flash_attention_e4m3(
// CHECK-SAME: %{{.*}}: memref<2x5x128xbf16>, %[[S:.*]]: memref<3xf32>, %[[O:.*]]: memref<2x5x128xf8E4M3FN>, %[[M:.*]]: memref<20xf32>)
// CHECK: %[[OBASE:.*]], %[[OOFF:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[O]]
// CHECK: %[[OPTR:.*]] = memref.extract_aligned_pointer_as_index %[[OBASE]]
// CHECK: arith.muli %[[OOFF]], %c1{{.*}} : index
// CHECK: %[[SBASE:.*]], {{.*}} = memref.extract_strided_metadata %[[S]]
// CHECK: %[[SADDR:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[AT:.*]] = arith.muli %c2_i64{{.*}}, %c4_i64{{.*}} : i64
// CHECK: %[[SCALE:.*]] = arith.addi %[[SADDR]], %[[AT]] : i64
// CHECK: memref.extract_strided_metadata %[[M]]
// CHECK: %[[MAX:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: call @mte_cuda_attention({{.*}}, %c0_i32{{.*}}, %c3_i32{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}}, %[[SCALE]], %[[MAX]])
func.func private @mte_flash_attention_e4m3(memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<3xf32>, i64, memref<2x5x128xf8E4M3FN>, memref<20xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 2, amax = true, quantize_from = bf16>}
func.func @forward_flash_attention_e4m3(%x: memref<2x5x128xbf16>, %s: memref<3xf32>, %o: memref<2x5x128xf8E4M3FN>, %m: memref<20xf32>) {
  %scale = arith.constant 0.125 : f32
  %at = arith.constant 2 : i64
  %xc = memref.cast %x : memref<2x5x128xbf16> to memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>
  call @mte_flash_attention_e4m3(%xc, %xc, %xc, %scale, %s, %at, %o, %m) : (memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, memref<2x5x128xbf16, strided<[?, ?, 1], offset: ?>>, f32, memref<3xf32>, i64, memref<2x5x128xf8E4M3FN>, memref<20xf32>) -> ()
  return
}

// -----

// expected-error @below {{cannot lower fused attention 'mte_flash_attention_bad_scales': the scales must be a contiguous f32 vector and an i64 index}}
func.func private @mte_flash_attention_bad_scales(memref<2x5x128xbf16>, memref<2x5x128xbf16>, memref<2x5x128xbf16>, f32, memref<3xf32>, i32, memref<2x5x128xf8E4M3FN>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 2, quantize_from = bf16>}

// -----

// expected-error @below {{cannot lower fused attention 'mte_flash_attention_bad_maxima': the row maxima must be a contiguous f32 vector}}
func.func private @mte_flash_attention_bad_maxima(memref<2x5x128xbf16>, memref<2x5x128xbf16>, memref<2x5x128xbf16>, f32, memref<2x5x128xbf16>, memref<5x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 2, amax = true>}

// -----

// expected-error @below {{cannot lower fused attention 'mte_flash_attention_bad_output': the output must be E4M3}}
func.func private @mte_flash_attention_bad_output(memref<2x5x128xbf16>, memref<2x5x128xbf16>, memref<2x5x128xbf16>, f32, memref<3xf32>, i64, memref<2x5x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 2, quantize_from = bf16>}

// -----

// expected-error @below {{cannot lower fused attention 'mte_flash_attention_bad_bias': the key bias must be a contiguous f32 [B, Skv] buffer}}
func.func private @mte_flash_attention_bad_bias(memref<2x5x128xbf16>, memref<2x5x128xbf16>, memref<2x5x128xbf16>, f32, memref<2x5xf16>, memref<2x5x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 2, mask_shape = [2, 5]>}

// -----

// expected-error @below {{cannot lower fused attention 'mte_flash_attention_bad': needs (q, k, v, scale, [key bias,] [scales, index,] output[, row maxima])}}
func.func private @mte_flash_attention_bad(memref<2x5x128xbf16>, f32, memref<2x5x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 1>}

// -----

// A rotary kernel reads x through a view with dynamic strides; each call
// site's static layout gets a declaration of its own (_v0, _v1, ...), so the
// kernel knows its strides and how its vectors align: Q at offset 0 takes
// 16-byte vectors, a slice at column 132 8-byte ones. The second call with
// Q's layout reuses _v0; an operand with no static layout is copied into a
// fresh buffer for its call. A thread loads a vector of each half of a head
// (x and both tables at the same columns), row (i, j) = (r / 4, r % 4),
// table row i % 5, and stores both halves.
// CHECK-LABEL: func.func @forward_rotary(
// CHECK-SAME: %[[QKV:[^:]*]]: memref<2x5x384xbf16>, %[[COS:[^:]*]]: memref<5x32xbf16>, %[[SIN:[^:]*]]: memref<5x32xbf16>, %[[DYN:[^:]*]]: memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>
// CHECK: %[[Q:.*]] = memref.expand_shape {{.*}} into memref<10x4x32xbf16, strided<[384, 32, 1]>>
// CHECK: call @mte_rotary_10x4x32xbf16_table_5x32_v0(%[[Q]], %[[COS]], %[[SIN]], %{{.*}}) : (memref<10x4x32xbf16, strided<[384, 32, 1]>>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) -> ()
// CHECK: %[[K:.*]] = memref.expand_shape {{.*}} into memref<10x4x32xbf16, strided<[384, 32, 1], offset: 132>>
// CHECK: call @mte_rotary_10x4x32xbf16_table_5x32_v1(%[[K]],
// CHECK: call @mte_rotary_10x4x32xbf16_table_5x32_v0(%[[Q]],
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<10x4x32xbf16>
// CHECK: memref.copy %[[DYN]], %[[COPY]]
// CHECK: call @mte_rotary_10x4x32xbf16_table_5x32_v2(%[[COPY]],
// CHECK: memref.dealloc %[[COPY]]
// CHECK-LABEL: func.func private @mte_rotary_10x4x32xbf16_table_5x32_v0(
// CHECK-SAME: %[[X:[^:]*]]: memref<10x4x32xbf16, strided<[384, 32, 1]>>, %[[C:[^:]*]]: memref<5x32xbf16>, %[[S:[^:]*]]: memref<5x32xbf16>, %[[OUT:[^:]*]]: memref<10x4x32xbf16>)
// CHECK-NOT: mte.row_kernel
// CHECK: gpu.launch
// CHECK: %[[I:.*]] = arith.divui %[[ROW:.*]], %c4{{.*}} : index
// CHECK: %[[J:.*]] = arith.remui %[[ROW]], %c4{{.*}} : index
// CHECK: %[[T:.*]] = arith.remui %[[I]], %c5{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %c8{{.*}} : index
// CHECK: %[[SECOND:.*]] = arith.addi %[[FIRST]], %c16{{.*}} : index
// CHECK: vector.load %[[X]][%[[I]], %[[J]], %[[FIRST]]] {alignment = 16 : i64} : memref<10x4x32xbf16, strided<[384, 32, 1]>>, vector<8xbf16>
// CHECK: vector.load %[[X]][%[[I]], %[[J]], %[[SECOND]]] {alignment = 16 : i64}
// CHECK: vector.load %[[C]][%[[T]], %[[FIRST]]]
// CHECK: vector.load %[[S]][%[[T]], %[[FIRST]]]
// CHECK: arith.subf
// CHECK: arith.addf
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[I]], %[[J]], %[[FIRST]]] {alignment = 16 : i64}
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[I]], %[[J]], %[[SECOND]]] {alignment = 16 : i64}
// CHECK-LABEL: func.func private @mte_rotary_10x4x32xbf16_table_5x32_v1(
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<10x4x32xbf16, strided<[384, 32, 1], offset: 132>>, vector<4xbf16>
// CHECK-LABEL: func.func private @mte_rotary_10x4x32xbf16_table_5x32_v2(
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<10x4x32xbf16>, vector<8xbf16>
func.func private @mte_rotary_10x4x32xbf16_table_5x32(memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 4, seq = 5>}
func.func @forward_rotary(%qkv: memref<2x5x384xbf16>, %cos: memref<5x32xbf16>, %sin: memref<5x32xbf16>, %dyn: memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>, %o0: memref<10x4x32xbf16>, %o1: memref<10x4x32xbf16>, %o2: memref<10x4x32xbf16>, %o3: memref<10x4x32xbf16>) {
  %q = memref.subview %qkv[0, 0, 0] [2, 5, 128] [1, 1, 1] : memref<2x5x384xbf16> to memref<2x5x128xbf16, strided<[1920, 384, 1]>>
  %q1 = memref.collapse_shape %q [[0, 1], [2]] : memref<2x5x128xbf16, strided<[1920, 384, 1]>> into memref<10x128xbf16, strided<[384, 1]>>
  %q2 = memref.expand_shape %q1 [[0], [1, 2]] output_shape [10, 4, 32] : memref<10x128xbf16, strided<[384, 1]>> into memref<10x4x32xbf16, strided<[384, 32, 1]>>
  %qc = memref.cast %q2 : memref<10x4x32xbf16, strided<[384, 32, 1]>> to memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>
  call @mte_rotary_10x4x32xbf16_table_5x32(%qc, %cos, %sin, %o0) : (memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) -> ()
  %k = memref.subview %qkv[0, 0, 132] [2, 5, 128] [1, 1, 1] : memref<2x5x384xbf16> to memref<2x5x128xbf16, strided<[1920, 384, 1], offset: 132>>
  %k1 = memref.collapse_shape %k [[0, 1], [2]] : memref<2x5x128xbf16, strided<[1920, 384, 1], offset: 132>> into memref<10x128xbf16, strided<[384, 1], offset: 132>>
  %k2 = memref.expand_shape %k1 [[0], [1, 2]] output_shape [10, 4, 32] : memref<10x128xbf16, strided<[384, 1], offset: 132>> into memref<10x4x32xbf16, strided<[384, 32, 1], offset: 132>>
  %kc = memref.cast %k2 : memref<10x4x32xbf16, strided<[384, 32, 1], offset: 132>> to memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>
  call @mte_rotary_10x4x32xbf16_table_5x32(%kc, %cos, %sin, %o1) : (memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) -> ()
  call @mte_rotary_10x4x32xbf16_table_5x32(%qc, %cos, %sin, %o2) : (memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) -> ()
  call @mte_rotary_10x4x32xbf16_table_5x32(%dyn, %cos, %sin, %o3) : (memref<10x4x32xbf16, strided<[?, ?, 1], offset: ?>>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) -> ()
  return
}

// -----

// expected-error @below {{'func.func' op is not a valid rotary kernel: x must be [outer, mid, D] with static strides, the last 1}}
func.func private @mte_rotary_bad(memref<10x128xbf16>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x128xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 4, seq = 5>}

// -----

// expected-error @below {{a rotary kernel needs a positive 'seq', not 0}}
func.func private @mte_rotary_no_seq(memref<10x4x32xbf16>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 4>}

// -----

// expected-error @below {{'func.func' op is not a valid rotary kernel: cos and sin must be [T, W], the output like x}}
func.func private @mte_rotary_bad_output(memref<10x4x32xbf16>, memref<5x32xbf16>, memref<5x32xbf16>, memref<10x4x32xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 4, seq = 5>}

// -----

// A 24-column table is neither D (32) nor D / 2 wide.
// expected-error @below {{'func.func' op is not a valid rotary kernel: tables do not match the view}}
func.func private @mte_rotary_bad_table(memref<10x4x32xbf16>, memref<5x24xbf16>, memref<5x24xbf16>, memref<10x4x32xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 4, seq = 5>}

// -----

// expected-error @below {{'func.func' op is not a valid row kernel: the probabilities must be [rows, keys] like the scores}}
func.func private @mte_softmax_bad(memref<4x16xf32>, f32, memref<4x8xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 1, queries = 4>}

// -----

// The declarations' own errors: arguments that do not fit the kind, rows
// longer than a block keeps in registers, heads and queries that do not
// divide the rows, 32-bit attention operands.
// expected-error @below {{'func.func' op is not a valid rotary kernel: needs buffers x, cos, sin and output}}
func.func private @mte_rotary_bad_args(memref<10x4x32xbf16>, memref<5x32xbf16>, memref<10x4x32xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rotary, heads = 4, seq = 5>}

// -----

// expected-error @below {{'func.func' op is not a valid row kernel: its first argument must be a static [rows, length] buffer}}
func.func private @norm_rank1(memref<4xf32>, memref<4xf32>, f32, memref<4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm>}

// -----

// expected-error @below {{'func.func' op is not a valid row kernel: wrong number of arguments or no f32 epsilon}}
func.func private @norm_no_epsilon(memref<4x4xf32>, memref<4xf32>, memref<4x4xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm>}

// -----

// expected-error @below {{'func.func' op is not a valid row kernel: rows too long}}
func.func private @norm_too_long(memref<2x100000xf32>, memref<100000xf32>, f32, memref<2x100000xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = rms_norm>}

// -----

// expected-error @below {{'func.func' op is not a valid row kernel: needs heads and queries that divide the rows}}
func.func private @softmax_rows(memref<4x16xf32>, f32, memref<4x16xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 3, queries = 1>}

// -----

// expected-error @below {{'func.func' op is not a valid row kernel: wrong number of arguments, or no float scores and f32}}
func.func private @softmax_no_scale(memref<4x16xf32>, memref<4x16xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 1, queries = 4>}

// -----

// expected-error @below {{'func.func' op is not a valid row kernel: rows too long}}
func.func private @softmax_too_long(memref<2x100000xf32>, f32, memref<2x100000xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = attention_softmax, heads = 1, queries = 2>}

// -----

// expected-error @below {{q and k must be 16-bit [B, S, H * D] buffers}}
func.func private @mte_flash_attention_f32(memref<2x5x128xf32>, memref<2x5x64xf32>, memref<2x5x64xf32>, f32, memref<2x5x128xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = flash_attention, heads = 2, kv_heads = 1>}

// -----

// The amax kernel: a row's vectors loaded, |x| and maximumf (NaN
// propagates) over lanes, threads (shuffles, then workgroup memory past a
// warp), the row's first thread storing its maximum.
// CHECK-LABEL: func.func private @mte_row_amax_6x16384xbf16(
// CHECK: gpu.launch
// CHECK: vector.load
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<6xf32>
func.func private @mte_row_amax_6x16384xbf16(memref<6x16384xbf16>, memref<6xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = amax>}

// -----

// expected-error @below {{is not a valid amax kernel: needs (input [rows, length], f32 output [rows])}}
func.func private @mte_row_amax_bad(memref<6x16384xbf16>, memref<6xbf16>) attributes {mte.row_kernel = #kernel.row_kernel<kind = amax>}

// -----

// An amaxes declaration is not given a body either: each call becomes a
// call of the runtime's mte_cuda_amaxes with a table on the host stack
// (an llvm.alloca of [3 x count] i64 at the caller's entry: a
// memref.alloca would become device memory): per input its address, its
// element count and its mte_dtype (1: f32, 3: bf16), then the count and
// the output's address.
// CHECK-LABEL: func.func @forward_amaxes(
// CHECK-SAME: %[[R:.*]]: memref<16xf32>, %[[X:.*]]: memref<4x8xbf16>, %[[D:.*]]: memref<f32>, %[[V:.*]]: memref<3xf32>)
// CHECK: %[[N:.*]] = llvm.mlir.constant(9 : i64) : i64
// CHECK: %[[T:.*]] = llvm.alloca %[[N]] x i64 {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK: memref.extract_strided_metadata %[[R]]
// CHECK: %[[RA:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[T]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: llvm.store %[[RA]], %[[S0]] : i64, !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[T]][1]
// CHECK: llvm.store %c16_i64{{.*}}, %[[S1]]
// CHECK: %[[S2:.*]] = llvm.getelementptr %[[T]][2]
// CHECK: llvm.store %c1_i64{{.*}}, %[[S2]]
// CHECK: memref.extract_strided_metadata %[[X]]
// CHECK: llvm.getelementptr %[[T]][4]
// CHECK: llvm.store %c32_i64
// CHECK: llvm.getelementptr %[[T]][5]
// CHECK: llvm.store %c3_i64
// CHECK: memref.extract_strided_metadata %[[D]]
// CHECK: llvm.getelementptr %[[T]][7]
// CHECK: llvm.store %c1_i64
// CHECK: %[[TA:.*]] = llvm.ptrtoint %[[T]] : !llvm.ptr to i64
// CHECK: memref.extract_strided_metadata %[[V]]
// CHECK: %[[VA:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: call @mte_cuda_amaxes(%[[TA]], %c3_i64{{.*}}, %[[VA]]) : (i64, i64, i64) -> ()
// CHECK-NOT: mte_amaxes_3
// CHECK: func.func private @mte_cuda_amaxes(i64, i64, i64)
func.func private @mte_amaxes_3(memref<16xf32>, memref<4x8xbf16>, memref<f32>, memref<3xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = amaxes>}
func.func @forward_amaxes(%r: memref<16xf32>, %x: memref<4x8xbf16>, %d: memref<f32>, %v: memref<3xf32>) {
  call @mte_amaxes_3(%r, %x, %d, %v) : (memref<16xf32>, memref<4x8xbf16>, memref<f32>, memref<3xf32>) -> ()
  return
}

// -----

// expected-error @+1 {{cannot lower the amaxes 'mte_amaxes_i32': an input of type memref<4xi32> is not a contiguous f32, bf16 or f16 buffer}}
func.func private @mte_amaxes_i32(memref<16xf32>, memref<4xi32>, memref<2xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = amaxes>}

// -----

// expected-error @+1 {{cannot lower the amaxes 'mte_amaxes_short': needs inputs, then a contiguous f32 output of one element per input}}
func.func private @mte_amaxes_short(memref<16xf32>, memref<4xf32>, memref<1xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = amaxes>}

// -----

// expected-error @+1 {{a amaxes kernel takes no 'heads'}}
func.func private @mte_amaxes_heads(memref<16xf32>, memref<1xf32>) attributes {mte.row_kernel = #kernel.row_kernel<kind = amaxes, heads = 2>}
