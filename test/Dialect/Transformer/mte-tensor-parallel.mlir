// RUN: mte-opt %s --split-input-file --pass-pipeline='builtin.module(mte-tensor-parallel{tp-size=2})' | FileCheck %s --check-prefix=TP2
// RUN: mte-opt %s --split-input-file --pass-pipeline='builtin.module(mte-tensor-parallel{tp-size=4})' | FileCheck %s --check-prefix=TP4
// RUN: mte-opt %s --split-input-file --pass-pipeline='builtin.module(mte-tensor-parallel{tp-size=2 sequence-parallel=true})' | FileCheck %s --check-prefix=SP2
// RUN: mte-opt %s --split-input-file --pass-pipeline='builtin.module(mte-tensor-parallel{tp-size=4 sequence-parallel=true})' | FileCheck %s --check-prefix=SP4

// A GPT-2 block as mte-transformer-fusion leaves it: fused QKV with bias
// and a split, attention, the output projection with the residual, the MLP
// with GELU in FC1's epilogue. Hidden 16, 4 heads of 4, MLP 32.

// TP2: shard.grid @tp(shape = 2)
// TP2-LABEL: func.func @gpt2_block
// TP2-SAME: (%[[X:.*]]: tensor<2x8x16xf32>)
// TP2: %[[LN:.*]] = transformer.layer_norm %[[X]]
// The QKV weight's columns are regrouped by rank: rank r's 24 columns are
// its 8 of Q, of K and of V.
// TP2: %[[WQKV:.*]] = shard.all_slice %{{.*}} on @tp grid_axes = [0] slice_axis = 1 : tensor<16x48xf32> -> tensor<16x24xf32>
// TP2: %[[BQKV:.*]] = shard.all_slice %{{.*}} on @tp grid_axes = [0] slice_axis = 0 : tensor<48xf32> -> tensor<24xf32>
// TP2: %[[QKV:.*]] = transformer.linear %[[LN]], %[[WQKV]] bias %[[BQKV]] layout <kn> : (tensor<2x8x16xf32>, tensor<16x24xf32>, tensor<24xf32>) -> tensor<2x8x24xf32>
// TP2: %[[VIEW:.*]] = transformer.reshape %[[QKV]] : tensor<2x8x24xf32> -> tensor<2x8x1x24xf32>
// TP2: %[[PARTS:.*]]:3 = transformer.split %[[VIEW]] {axis = 3 : i64, sizes = array<i64: 8, 8, 8>}
// TP2: %[[Q:.*]] = transformer.reshape %[[PARTS]]#0 : tensor<2x8x1x8xf32> -> tensor<2x8x8xf32>
// TP2: %[[A:.*]] = transformer.attention %[[Q]], %{{.*}}, %{{.*}} {causal, num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
// The output projection: rows split, a partial product, its sum, then the
// bias and the residual on the whole sum (the next norm takes the residual
// add).
// TP2: %[[WO:.*]] = shard.all_slice %{{.*}} on @tp grid_axes = [0] slice_axis = 0 : tensor<16x16xf32> -> tensor<8x16xf32>
// TP2: %[[P:.*]] = transformer.linear %[[A]], %[[WO]] layout <kn> : (tensor<2x8x8xf32>, tensor<8x16xf32>) -> tensor<2x8x16xf32>
// TP2: %[[S:.*]] = shard.all_reduce %[[P]] on @tp grid_axes = [0] : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// TP2: %[[SB:.*]] = transformer.add %[[S]], %{{.*}} : (tensor<2x8x16xf32>, tensor<16xf32>)
// TP2: %[[LN2:.*]], %[[H:.*]] = transformer.layer_norm %[[SB]], %{{.*}} bias %{{.*}} residual %[[X]]
// TP2: transformer.linear %[[LN2]], %{{.*}} bias %{{.*}} layout <kn> activation <gelu_tanh> : (tensor<2x8x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// TP2: shard.all_reduce
// TP2-NOT: shard.
// TP2: return

// TP4: shard.grid @tp(shape = 4)
// TP4-LABEL: func.func @gpt2_block
// TP4: transformer.linear {{.*}} -> tensor<2x8x12xf32>
// TP4: transformer.attention {{.*}}num_heads = 1 : i64, num_kv_heads = 1 : i64{{.*}} -> tensor<2x8x4xf32>
// TP4: shard.all_reduce {{.*}} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// TP4: activation <gelu_tanh> : (tensor<2x8x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
// TP4: shard.all_reduce

// Sequence parallelism: each row-parallel sum is reduce-scattered over the
// 8 tokens; its bias, the residual add (the block's input, sliced to the
// rank's tokens) and the next norm run on 8 / tp tokens, which FC1 reads
// all-gathered; the block's output is gathered for the caller.
// SP2-LABEL: func.func @gpt2_block
// SP2-SAME: (%[[X:.*]]: tensor<2x8x16xf32>)
// SP2: %[[LN:.*]] = transformer.layer_norm %[[X]], {{.*}} -> tensor<2x8x16xf32>
// SP2: transformer.linear %[[LN]]
// SP2: transformer.attention {{.*}} -> tensor<2x8x8xf32>
// SP2: %[[XS:.*]] = shard.all_slice %[[X]] on @tp grid_axes = [0] slice_axis = 1 : tensor<2x8x16xf32> -> tensor<2x4x16xf32>
// SP2: %[[P:.*]] = transformer.linear {{.*}} -> tensor<2x8x16xf32>
// SP2: %[[RS:.*]] = shard.reduce_scatter %[[P]] on @tp grid_axes = [0] scatter_axis = 1 : tensor<2x8x16xf32> -> tensor<2x4x16xf32>
// SP2: %[[B:.*]] = transformer.add %[[RS]], %{{.*}} : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// SP2: %[[LN2:.*]], %[[H:.*]] = transformer.layer_norm %[[B]], %{{.*}} bias %{{.*}} residual %[[XS]] {{.*}} -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>)
// SP2: %[[G:.*]] = shard.all_gather %[[LN2]] on @tp grid_axes = [0] gather_axis = 1 : tensor<2x4x16xf32> -> tensor<2x8x16xf32>
// SP2: transformer.linear %[[G]], {{.*}} activation <gelu_tanh> : {{.*}} -> tensor<2x8x16xf32>
// SP2: %[[RS2:.*]] = shard.reduce_scatter %{{.*}} scatter_axis = 1 : tensor<2x8x16xf32> -> tensor<2x4x16xf32>
// SP2: %[[B2:.*]] = transformer.add %[[RS2]]
// SP2: %[[Y:.*]] = transformer.add %[[B2]], %[[H]] : (tensor<2x4x16xf32>, tensor<2x4x16xf32>)
// SP2: %[[YG:.*]] = shard.all_gather %[[Y]] {{.*}} gather_axis = 1 : tensor<2x4x16xf32> -> tensor<2x8x16xf32>
// SP2-NOT: shard.all_reduce
// SP2: return %[[YG]]

// SP4-LABEL: func.func @gpt2_block
// SP4: shard.reduce_scatter {{.*}} scatter_axis = 1 : tensor<2x8x16xf32> -> tensor<2x2x16xf32>
// SP4: transformer.layer_norm {{.*}} -> (tensor<2x2x16xf32>, tensor<2x2x16xf32>)
// SP4: shard.all_gather {{.*}} gather_axis = 1 : tensor<2x2x16xf32> -> tensor<2x8x16xf32>
// SP4-NOT: shard.all_reduce
// SP4: return

func.func @gpt2_block(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %g = arith.constant dense<1.0> : tensor<16xf32>
  %b = arith.constant dense<0.0> : tensor<16xf32>
  %wqkv = arith.constant dense<0.5> : tensor<16x48xf32>
  %bqkv = arith.constant dense<0.25> : tensor<48xf32>
  %wo = arith.constant dense<0.125> : tensor<16x16xf32>
  %bo = arith.constant dense<0.75> : tensor<16xf32>
  %w1 = arith.constant dense<0.5> : tensor<16x32xf32>
  %b1 = arith.constant dense<0.25> : tensor<32xf32>
  %w2 = arith.constant dense<0.125> : tensor<32x16xf32>
  %b2 = arith.constant dense<0.5> : tensor<16xf32>
  %ln = transformer.layer_norm %x, %g bias %b {epsilon = 1.0e-5 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %qkv = transformer.linear %ln, %wqkv bias %bqkv layout <kn> : (tensor<2x8x16xf32>, tensor<16x48xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
  %a = transformer.attention %p#0, %p#1, %p#2 {causal, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.5 : f32} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %h = transformer.linear %a, %wo bias %bo residual %x layout <kn> : (tensor<2x8x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %ln2 = transformer.layer_norm %h, %g bias %b {epsilon = 1.0e-5 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %f = transformer.linear %ln2, %w1 bias %b1 layout <kn> activation <gelu_tanh> : (tensor<2x8x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %y = transformer.linear %f, %w2 bias %b2 residual %h layout <kn> : (tensor<2x8x32xf32>, tensor<32x16xf32>, tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// A Llama block: fused QKV with GQA (4 query heads, 2 key/value heads of 4),
// rotary embeddings on Q and K, fused gate/up, SwiGLU; weights [N, K].
// At tp=4 the key/value heads are fewer than the ranks: each is repeated
// twice in the weights, and every rank runs one query and one key/value
// head.

// TP2-LABEL: func.func @llama_block
// TP2: shard.all_slice %{{.*}} slice_axis = 0 : tensor<32x16xf32> -> tensor<16x16xf32>
// TP2: %[[QKV:.*]] = transformer.linear %{{.*}}, %{{.*}} layout <nk> : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
// TP2: transformer.split %{{.*}} {axis = 3 : i64, sizes = array<i64: 8, 4, 4>}
// TP2: transformer.rotary_embedding %{{.*}} {num_heads = 2 : i64} : (tensor<2x8x8xf32>
// TP2: transformer.rotary_embedding %{{.*}} {num_heads = 1 : i64} : (tensor<2x8x4xf32>
// TP2: transformer.attention {{.*}}num_heads = 2 : i64, num_kv_heads = 1 : i64{{.*}} -> tensor<2x8x8xf32>
// TP2: shard.all_reduce
// TP2: transformer.split %{{.*}} {axis = 3 : i64, sizes = array<i64: 16, 16>}
// TP2: transformer.swiglu %{{.*}}, %{{.*}} : tensor<2x8x16xf32>
// TP2: shard.all_slice %{{.*}} slice_axis = 1 : tensor<16x32xf32> -> tensor<16x16xf32>
// TP2: shard.all_reduce

// TP4-LABEL: func.func @llama_block
// The QKV weight grows from 32 to 16 + 2 * 16 rows: K and V have 4 heads.
// TP4: shard.all_slice %{{.*}} slice_axis = 0 : tensor<48x16xf32> -> tensor<12x16xf32>
// TP4: transformer.split %{{.*}} {axis = 3 : i64, sizes = array<i64: 4, 4, 4>}
// TP4: transformer.rotary_embedding %{{.*}} {num_heads = 1 : i64} : (tensor<2x8x4xf32>
// TP4: transformer.rotary_embedding %{{.*}} {num_heads = 1 : i64} : (tensor<2x8x4xf32>
// TP4: transformer.attention {{.*}}num_heads = 1 : i64, num_kv_heads = 1 : i64{{.*}} -> tensor<2x8x4xf32>
// TP4: shard.all_reduce
// TP4: transformer.swiglu %{{.*}}, %{{.*}} : tensor<2x8x8xf32>
// TP4: shard.all_reduce

// SP4-LABEL: func.func @llama_block
// SP4-SAME: (%[[X:[^:]*]]: tensor<2x8x16xf32>
// SP4: transformer.rms_norm %[[X]], {{.*}} -> tensor<2x8x16xf32>
// SP4: transformer.attention {{.*}}num_heads = 1 : i64, num_kv_heads = 1 : i64{{.*}} -> tensor<2x8x4xf32>
// SP4: %[[XS:.*]] = shard.all_slice %[[X]] on @tp grid_axes = [0] slice_axis = 1 : tensor<2x8x16xf32> -> tensor<2x2x16xf32>
// SP4: %[[RS:.*]] = shard.reduce_scatter %{{.*}} scatter_axis = 1 : tensor<2x8x16xf32> -> tensor<2x2x16xf32>
// SP4: %[[N:.*]], %[[H:.*]] = transformer.rms_norm %[[RS]], %{{.*}} residual %[[XS]] {{.*}} -> (tensor<2x2x16xf32>, tensor<2x2x16xf32>)
// SP4: %[[G:.*]] = shard.all_gather %[[N]] {{.*}} gather_axis = 1 : tensor<2x2x16xf32> -> tensor<2x8x16xf32>
// SP4: transformer.linear %[[G]], {{.*}} -> tensor<2x8x16xf32>
// SP4: transformer.swiglu {{.*}} : tensor<2x8x8xf32>
// SP4: %[[RS2:.*]] = shard.reduce_scatter
// SP4: %[[Y:.*]] = transformer.add %[[RS2]], %[[H]]
// SP4: %[[YG:.*]] = shard.all_gather %[[Y]]
// SP4-NOT: shard.all_reduce
// SP4: return %[[YG]]

func.func @llama_block(%x: tensor<2x8x16xf32>, %cos: tensor<8x4xf32>, %sin: tensor<8x4xf32>) -> tensor<2x8x16xf32> {
  %g = arith.constant dense<1.0> : tensor<16xf32>
  %wqkv = arith.constant dense<0.5> : tensor<32x16xf32>
  %wo = arith.constant dense<0.125> : tensor<16x16xf32>
  %wgu = arith.constant dense<0.5> : tensor<64x16xf32>
  %wd = arith.constant dense<0.125> : tensor<16x32xf32>
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %qkv = transformer.linear %n, %wqkv layout <nk> : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 8, 8>} : tensor<2x8x32xf32> -> tensor<2x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>
  %q = transformer.rotary_embedding %p#0, %cos, %sin {num_heads = 4 : i64} : (tensor<2x8x16xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<2x8x16xf32>
  %k = transformer.rotary_embedding %p#1, %cos, %sin {num_heads = 2 : i64} : (tensor<2x8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<2x8x8xf32>
  %a = transformer.attention %q, %k, %p#2 {causal, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f32} : (tensor<2x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
  %h = transformer.linear %a, %wo residual %x layout <nk> : (tensor<2x8x16xf32>, tensor<16x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %n2 = transformer.rms_norm %h, %g {epsilon = 1.0e-6 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %gu = transformer.linear %n2, %wgu layout <nk> : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
  %s:2 = transformer.split %gu {axis = 2 : i64, sizes = array<i64: 32, 32>} : tensor<2x8x64xf32> -> tensor<2x8x32xf32>, tensor<2x8x32xf32>
  %m = transformer.swiglu %s#0, %s#1 : tensor<2x8x32xf32>
  %y = transformer.linear %m, %wd residual %h layout <nk> : (tensor<2x8x32xf32>, tensor<16x32xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// A parallel block whose Q, K, V and FC1 are one GEMM that feeds both
// the attention and the MLP (one block with two row-parallel linears), and
// a partial rotary embedding on the first half of each head in the
// [B, H, S, D] layout: the heads dimension stays split through the views.

// TP2-LABEL: func.func @parallel_block
// TP2: transformer.linear {{.*}} -> tensor<1x4x40xf32>
// TP2: transformer.split %{{.*}} {axis = 3 : i64, sizes = array<i64: 8, 8, 8, 16>}
// TP2: transformer.reshape %{{.*}} : tensor<1x4x1x8xf32> -> tensor<1x4x2x4xf32>
// TP2: transformer.transpose %{{.*}} [0, 2, 1, 3] : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
// TP2: transformer.slice %{{.*}} {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 4, 2>
// TP2: transformer.rotary_embedding %{{.*}} : (tensor<1x2x4x2xf32>
// TP2: transformer.concat {{.*}} -> tensor<1x2x4x4xf32>
// TP2: transformer.attention {{.*}}num_heads = 2 : i64, num_kv_heads = 2 : i64{{.*}} -> tensor<1x4x8xf32>
// TP2-COUNT-2: shard.all_reduce

// Under sequence parallelism both halves' sums are reduce-scattered, and
// added with the input's tokens.
// SP2-LABEL: func.func @parallel_block
// SP2: %[[A:.*]] = shard.reduce_scatter {{.*}} : tensor<1x4x16xf32> -> tensor<1x2x16xf32>
// SP2: %[[M:.*]] = shard.reduce_scatter {{.*}} : tensor<1x4x16xf32> -> tensor<1x2x16xf32>
// SP2: %[[S:.*]] = transformer.add %[[A]], %[[M]]
// SP2: %[[XS:.*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<1x4x16xf32> -> tensor<1x2x16xf32>
// SP2: %[[Y:.*]] = transformer.add %[[S]], %[[XS]]
// SP2: shard.all_gather %[[Y]] {{.*}} -> tensor<1x4x16xf32>

func.func @parallel_block(%x: tensor<1x4x16xf32>, %cos: tensor<4x2xf32>, %sin: tensor<4x2xf32>) -> tensor<1x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x80xf32>
  %wo = arith.constant dense<0.125> : tensor<16x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<32x16xf32>
  %f = transformer.linear %x, %w layout <kn> : (tensor<1x4x16xf32>, tensor<16x80xf32>) -> tensor<1x4x80xf32>
  %p:4 = transformer.split %f {axis = 2 : i64, sizes = array<i64: 16, 16, 16, 32>} : tensor<1x4x80xf32> -> tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x32xf32>
  %q4 = transformer.reshape %p#0 : tensor<1x4x16xf32> -> tensor<1x4x4x4xf32>
  %qt = transformer.transpose %q4 [0, 2, 1, 3] : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %qr = transformer.slice %qt {offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 4, 4, 2>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x2xf32>
  %qp = transformer.slice %qt {offsets = array<i64: 0, 0, 0, 2>, sizes = array<i64: 1, 4, 4, 2>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x2xf32>
  %qrot = transformer.rotary_embedding %qr, %cos, %sin : (tensor<1x4x4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x4x2xf32>
  %qc = transformer.concat %qrot, %qp {axis = -1 : i64} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32>
  %qb = transformer.transpose %qc [0, 2, 1, 3] : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %q = transformer.reshape %qb : tensor<1x4x4x4xf32> -> tensor<1x4x16xf32>
  %a = transformer.attention %q, %p#1, %p#2 {causal, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.5 : f32} : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %o = transformer.linear %a, %wo layout <kn> : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  %g = transformer.gelu %p#3 : tensor<1x4x32xf32>
  %m = transformer.linear %g, %w2 layout <kn> : (tensor<1x4x32xf32>, tensor<32x16xf32>) -> tensor<1x4x16xf32>
  %y0 = transformer.add %o, %m : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %y = transformer.add %y0, %x : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// Qwen3's attention: per-head RMS norms on the [B, S, H, D] views of Q and
// K (gains of one head's width), rotary embeddings in [B, H, S, D], GQA
// with 4 query and 2 key/value heads of 4. The norms keep the heads split.
// At tp=4 the key/value heads are repeated through the views: each rank's
// K view is [2, 8, 1, 4] and the QKV weight grows from 32 to 48 rows.

// TP2-LABEL: func.func @qk_norm_block
// TP2: shard.all_slice %{{.*}} slice_axis = 0 : tensor<32x16xf32> -> tensor<16x16xf32>
// TP2: transformer.rms_norm %{{.*}} {axis = 3 : i64{{.*}} -> tensor<2x8x2x4xf32>
// TP2: transformer.rms_norm %{{.*}} {axis = 3 : i64{{.*}} -> tensor<2x8x1x4xf32>
// TP2: transformer.rotary_embedding %{{.*}} : (tensor<2x2x8x4xf32>
// TP2: transformer.rotary_embedding %{{.*}} : (tensor<2x1x8x4xf32>
// TP2: transformer.attention {{.*}}num_heads = 2 : i64, num_kv_heads = 1 : i64{{.*}} -> tensor<2x8x8xf32>
// TP2: shard.all_reduce

// TP4-LABEL: func.func @qk_norm_block
// TP4: shard.all_slice %{{.*}} slice_axis = 0 : tensor<48x16xf32> -> tensor<12x16xf32>
// TP4: transformer.rms_norm %{{.*}} {axis = 3 : i64{{.*}} -> tensor<2x8x1x4xf32>
// TP4: transformer.rms_norm %{{.*}} {axis = 3 : i64{{.*}} -> tensor<2x8x1x4xf32>
// TP4: transformer.attention {{.*}}num_heads = 1 : i64, num_kv_heads = 1 : i64{{.*}} -> tensor<2x8x4xf32>
// TP4: shard.all_reduce

func.func @qk_norm_block(%x: tensor<2x8x16xf32>, %cos: tensor<8x4xf32>, %sin: tensor<8x4xf32>) -> tensor<2x8x16xf32> {
  %g = arith.constant dense<1.0> : tensor<4xf32>
  %wqkv = arith.constant dense<0.5> : tensor<32x16xf32>
  %wo = arith.constant dense<0.125> : tensor<16x16xf32>
  %qkv = transformer.linear %x, %wqkv layout <nk> : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
  %p:3 = transformer.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 8, 8>} : tensor<2x8x32xf32> -> tensor<2x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>
  %q0 = transformer.reshape %p#0 : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
  %k0 = transformer.reshape %p#1 : tensor<2x8x8xf32> -> tensor<2x8x2x4xf32>
  %qn = transformer.rms_norm %q0, %g {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x8x4x4xf32>, tensor<4xf32>) -> tensor<2x8x4x4xf32>
  %kn = transformer.rms_norm %k0, %g {axis = 3 : i64, epsilon = 1.0e-6 : f32} : (tensor<2x8x2x4xf32>, tensor<4xf32>) -> tensor<2x8x2x4xf32>
  %q1 = transformer.transpose %qn [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
  %k1 = transformer.transpose %kn [0, 2, 1, 3] : tensor<2x8x2x4xf32> -> tensor<2x2x8x4xf32>
  %q2 = transformer.rotary_embedding %q1, %cos, %sin : (tensor<2x4x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<2x4x8x4xf32>
  %k2 = transformer.rotary_embedding %k1, %cos, %sin : (tensor<2x2x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<2x2x8x4xf32>
  %q3 = transformer.transpose %q2 [0, 2, 1, 3] : tensor<2x4x8x4xf32> -> tensor<2x8x4x4xf32>
  %k3 = transformer.transpose %k2 [0, 2, 1, 3] : tensor<2x2x8x4xf32> -> tensor<2x8x2x4xf32>
  %q = transformer.reshape %q3 : tensor<2x8x4x4xf32> -> tensor<2x8x16xf32>
  %k = transformer.reshape %k3 : tensor<2x8x2x4xf32> -> tensor<2x8x8xf32>
  %a = transformer.attention %q, %k, %p#2 {causal, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f32} : (tensor<2x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
  %y = transformer.linear %a, %wo residual %x layout <nk> : (tensor<2x8x16xf32>, tensor<16x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// GPT-NeoX's query_key_value: one projection whose columns hold each
// head's q, k and v together, viewed [B, S, H, 3 * D] and split along D.
// A rank's contiguous columns are its heads' q, k and v: no regrouping,
// the split keeps the heads split.

// TP2-LABEL: func.func @packed_heads_block
// TP2: shard.all_slice %{{.*}} slice_axis = 1 : tensor<16x48xf32> -> tensor<16x24xf32>
// TP2: transformer.reshape %{{.*}} : tensor<1x4x24xf32> -> tensor<1x4x2x12xf32>
// TP2: transformer.split %{{.*}} {axis = 3 : i64, sizes = array<i64: 4, 4, 4>} : tensor<1x2x4x12xf32>
// TP2: transformer.attention {{.*}}num_heads = 2 : i64, num_kv_heads = 2 : i64{{.*}} -> tensor<1x4x8xf32>
// TP2: shard.all_reduce

// TP4-LABEL: func.func @packed_heads_block
// TP4: transformer.split %{{.*}} {axis = 3 : i64, sizes = array<i64: 4, 4, 4>} : tensor<1x1x4x12xf32>
// TP4: transformer.attention {{.*}}num_heads = 1 : i64, num_kv_heads = 1 : i64{{.*}} -> tensor<1x4x4xf32>

func.func @packed_heads_block(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x48xf32>
  %wo = arith.constant dense<0.125> : tensor<16x16xf32>
  %f = transformer.linear %x, %w layout <kn> : (tensor<1x4x16xf32>, tensor<16x48xf32>) -> tensor<1x4x48xf32>
  %v4 = transformer.reshape %f : tensor<1x4x48xf32> -> tensor<1x4x4x12xf32>
  %t = transformer.transpose %v4 [0, 2, 1, 3] : tensor<1x4x4x12xf32> -> tensor<1x4x4x12xf32>
  %p:3 = transformer.split %t {axis = 3 : i64, sizes = array<i64: 4, 4, 4>} : tensor<1x4x4x12xf32> -> tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
  %qt = transformer.transpose %p#0 [0, 2, 1, 3] : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %q = transformer.reshape %qt : tensor<1x4x4x4xf32> -> tensor<1x4x16xf32>
  %kt = transformer.transpose %p#1 [0, 2, 1, 3] : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %k = transformer.reshape %kt : tensor<1x4x4x4xf32> -> tensor<1x4x16xf32>
  %vt = transformer.transpose %p#2 [0, 2, 1, 3] : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %v = transformer.reshape %vt : tensor<1x4x4x4xf32> -> tensor<1x4x16xf32>
  %a = transformer.attention %q, %k, %v {causal, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.5 : f32} : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %y = transformer.linear %a, %wo residual %x layout <kn> : (tensor<1x4x16xf32>, tensor<16x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// An attention mask with one plane per head (BLOOM's ALiBi slopes times the
// key positions): each rank reads the planes of its heads.

// TP2-LABEL: func.func @per_head_mask_block
// TP2: %[[M:.*]] = shard.all_slice %{{.*}} on @tp grid_axes = [0] slice_axis = 1 : tensor<1x4x1x4xf32> -> tensor<1x2x1x4xf32>
// TP2: transformer.attention %{{.*}}, %{{.*}}, %{{.*}} mask %[[M]] {causal, num_heads = 2 : i64, num_kv_heads = 2 : i64{{.*}} -> tensor<1x4x8xf32>
// TP2: shard.all_reduce

// TP4-LABEL: func.func @per_head_mask_block
// TP4: %[[M:.*]] = shard.all_slice %{{.*}} slice_axis = 1 : tensor<1x4x1x4xf32> -> tensor<1x1x1x4xf32>
// TP4: transformer.attention {{.*}} mask %[[M]] {causal, num_heads = 1 : i64

func.func @per_head_mask_block(%x: tensor<1x4x16xf32>, %m: tensor<1x4x1x4xf32>) -> tensor<1x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<16x48xf32>
  %wo = arith.constant dense<0.125> : tensor<16x16xf32>
  %f = transformer.linear %x, %w layout <kn> : (tensor<1x4x16xf32>, tensor<16x48xf32>) -> tensor<1x4x48xf32>
  %p:3 = transformer.split %f {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : tensor<1x4x48xf32> -> tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>
  %a = transformer.attention %p#0, %p#1, %p#2 mask %m {causal, num_heads = 4 : i64, num_kv_heads = 4 : i64, scale = 0.5 : f32} : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x1x4xf32>) -> tensor<1x4x16xf32>
  %y = transformer.linear %a, %wo residual %x layout <kn> : (tensor<1x4x16xf32>, tensor<16x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// An activation the recognizers leave decomposed (CLIP's quick GELU,
// x * sigmoid(1.702 x)) between FC1 and FC2: elementwise on the split
// features, the MLP splits as around a recognised GELU.

// TP2-LABEL: func.func @decomposed_activation_block
// TP2: %[[H:.*]] = transformer.linear %{{.*}} -> tensor<1x4x16xf32>
// TP2: %[[S:.*]] = transformer.mul %[[H]], %{{.*}} : (tensor<1x4x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
// TP2: %[[G:.*]] = transformer.sigmoid %[[S]] : tensor<1x4x16xf32>
// TP2: %[[A:.*]] = transformer.mul %[[H]], %[[G]] : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
// TP2: transformer.linear %[[A]], %{{.*}} : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
// TP2: shard.all_reduce

func.func @decomposed_activation_block(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %w1 = arith.constant dense<0.5> : tensor<16x32xf32>
  %w2 = arith.constant dense<0.125> : tensor<32x16xf32>
  %c = arith.constant dense<1.702> : tensor<f32>
  %h = transformer.linear %x, %w1 layout <kn> : (tensor<1x4x16xf32>, tensor<16x32xf32>) -> tensor<1x4x32xf32>
  %s = transformer.mul %h, %c : (tensor<1x4x32xf32>, tensor<f32>) -> tensor<1x4x32xf32>
  %g = transformer.sigmoid %s : tensor<1x4x32xf32>
  %a = transformer.mul %h, %g : (tensor<1x4x32xf32>, tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %y = transformer.linear %a, %w2 residual %x layout <kn> : (tensor<1x4x32xf32>, tensor<32x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}
