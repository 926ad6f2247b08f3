// RUN: mte-opt %s -split-input-file -mte-build-row-kernels -verify-diagnostics | FileCheck %s

// Rows of 768 f32 are 192 vectors of 4: a block of 64 threads per row, each
// loading 3 vectors (all in the row: no guards), partial sums combined by a
// butterfly in each warp, then across the two warps through workgroup
// memory.
// CHECK-LABEL: func.func private @mte_row_layer_norm_16x768xf32_bias_residual(
// CHECK-SAME: %[[X:[^:]*]]: memref<16x768xf32>, %[[G:[^:]*]]: memref<768xf32>, %[[B:[^:]*]]: memref<768xf32>, %[[R:[^:]*]]: memref<16x768xf32>, %[[EPS:[^:]*]]: f32, %[[OUT:[^:]*]]: memref<16x768xf32>, %[[SUM:[^:]*]]: memref<16x768xf32>)
// CHECK-NOT: mte.row_kernel
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 64 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], %{{.*}}, %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], %{{.*}}, %{{.*}}) workgroup(%[[RED0:.*]] : memref<32xf32, #gpu.address_space<workgroup>>, %[[RED1:.*]] : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[XV:.*]] = vector.load %[[X]][%[[ROW:.*]], %[[OFF:.*]]] {alignment = 16 : i64} : memref<16x768xf32>, vector<4xf32>
// CHECK: vector.load %[[R]][%[[ROW]], %[[OFF]]] {alignment = 16 : i64} : memref<16x768xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[SUM]][%[[ROW]], %[[OFF]]] {alignment = 16 : i64} : memref<16x768xf32>, vector<4xf32>
// CHECK: gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: memref.store %{{.*}}, %[[RED0]][%{{.*}}] : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load %[[RED0]]
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %[[RED1]]
// CHECK: gpu.barrier
// CHECK: math.rsqrt
// CHECK: vector.load %[[G]][%{{.*}}] {alignment = 16 : i64} : memref<768xf32>, vector<4xf32>
// CHECK: vector.load %[[B]][%{{.*}}] {alignment = 16 : i64} : memref<768xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[ROW]], %{{.*}}] {alignment = 16 : i64}
// CHECK: gpu.terminator
// CHECK: return
func.func private @mte_row_layer_norm_16x768xf32_bias_residual(memref<16x768xf32>, memref<768xf32>, memref<768xf32>, memref<16x768xf32>, f32, memref<16x768xf32>, memref<16x768xf32>) attributes {mte.row_kernel = {bias, kind = "layer_norm", residual}}

// -----

// Rows of 64 bf16 are 8 vectors of 8 (16 bytes): 8 threads per row, 16 rows
// to a block of 128 threads; 5 rows leave threads past the last row, which
// load and store nothing but still shuffle (xor 4, 2, 1). No workgroup
// memory, no barrier.
// CHECK-LABEL: func.func private @mte_row_rms_norm_5x64xbf16(
// CHECK-DAG: %[[ONE_BLOCK:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 128 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE_BLOCK]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[THREADS]], {{.*}}) {
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: scf.if %[[IN]] -> (vector<8xbf16>)
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<5x64xbf16>, vector<8xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-COUNT-3: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: math.rsqrt
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<5x64xbf16>, vector<8xbf16>
func.func private @mte_row_rms_norm_5x64xbf16(memref<5x64xbf16>, memref<64xbf16>, f32, memref<5x64xbf16>) attributes {mte.row_kernel = {kind = "rms_norm"}}

// -----

// Rows of 7 f32 take scalar accesses: 8 threads per row, the eighth with no
// element.
// CHECK-LABEL: func.func private @mte_row_layer_norm_4x7xf32(
// CHECK-NOT: vector.load
// CHECK: memref.load %{{.*}} : memref<4x7xf32>
// CHECK-NOT: vector.store
// CHECK: memref.store %{{.*}} : memref<4x7xf32>
func.func private @mte_row_layer_norm_4x7xf32(memref<4x7xf32>, memref<7xf32>, f32, memref<4x7xf32>) attributes {mte.row_kernel = {kind = "layer_norm"}}

// -----

// Rows of 16 keys: 4 vectors, 4 threads per row (shuffles xor 2 and 1).
// Scale, boolean mask (one byte an element, loaded one by one), causal mask,
// max, exp, sum and the guard of a query that sees no key.
// CHECK-LABEL: func.func private @mte_attention_softmax_2x4x4x16_causal_mask_2x1x1x16xi1(
// CHECK-SAME: %[[S:[^:]*]]: memref<32x16xf32>, %[[M:[^:]*]]: memref<32xi1>, %[[SCALE:[^:]*]]: f32, %[[P:[^:]*]]: memref<32x16xf32>)
// CHECK: gpu.launch
// CHECK: vector.load %[[S]]
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: memref.load %[[M]][%{{.*}}] : memref<32xi1>
// CHECK: arith.select
// CHECK: arith.cmpi sle
// CHECK: arith.maximumf
// CHECK-COUNT-2: gpu.shuffle  xor
// CHECK: math.exp
// CHECK-COUNT-2: gpu.shuffle  xor
// CHECK: %[[SEES:.*]] = arith.cmpf ogt
// CHECK: arith.divf
// CHECK: arith.select %[[SEES]]
// CHECK: vector.store %{{.*}}, %[[P]]
func.func private @mte_attention_softmax_2x4x4x16_causal_mask_2x1x1x16xi1(memref<32x16xf32>, memref<32xi1>, f32, memref<32x16xf32>) attributes {mte.row_kernel = {causal, heads = 4 : i64, kind = "attention_softmax", mask_shape = array<i64: 2, 1, 1, 16>, queries = 4 : i64}}

// -----

// A function with a body or without the attribute is left alone.
// CHECK-LABEL: func.func private @other(memref<4x4xf32>)
func.func private @other(memref<4x4xf32>)

// -----

// expected-error @below {{'func.func' op is not a valid row kernel: unknown kind}}
func.func private @bad(memref<4x4xf32>, f32, memref<4x4xf32>) attributes {mte.row_kernel = {kind = "group_norm"}}
