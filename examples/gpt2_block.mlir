// One pre-LayerNorm GPT-2 block (hidden 64, 4 heads, batch 2 x 16 tokens) as
// the ONNX importer produces it: decomposed LayerNorm, tanh-GELU via Pow,
// MatMul + Add projections, head split/merge through Shape/Gather/Concat
// chains, and a causal mask from Range + comparison.
func.func @gpt2_block(%x: tensor<2x16x64xf32>,
                      %ln1_g: tensor<64xf32>, %ln1_b: tensor<64xf32>,
                      %w_qkv: tensor<64x192xf32>, %b_qkv: tensor<192xf32>,
                      %w_proj: tensor<64x64xf32>, %b_proj: tensor<64xf32>,
                      %ln2_g: tensor<64xf32>, %ln2_b: tensor<64xf32>,
                      %w_fc: tensor<64x256xf32>, %b_fc: tensor<256xf32>,
                      %w_out: tensor<256x64xf32>, %b_out: tensor<64xf32>)
    -> tensor<2x16x64xf32> {
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %three = arith.constant dense<3.0> : tensor<f32>
  %gelu_c = arith.constant dense<0.044715> : tensor<f32>
  %sqrt_2_pi = arith.constant dense<0.797884583> : tensor<f32>
  %score_scale = arith.constant dense<4.0> : tensor<f32>
  %neg_inf = arith.constant dense<-3.40282347E+38> : tensor<f32>

  // ln_1, decomposed.
  %m1 = transformer.reduce <mean> %x {axes = array<i64: -1>} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  %d1 = transformer.sub %x, %m1 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %sq1 = transformer.pow %d1, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %v1 = transformer.reduce <mean> %sq1 {axes = array<i64: -1>} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  %ve1 = transformer.add %v1, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %s1 = transformer.sqrt %ve1 : tensor<2x16x1xf32>
  %n1 = transformer.div %d1, %s1 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %g1 = transformer.mul %n1, %ln1_g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %h1 = transformer.add %g1, %ln1_b : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>

  // c_attn: one projection to Q, K and V, split along the features.
  %qkv0 = transformer.matmul %h1, %w_qkv : (tensor<2x16x64xf32>, tensor<64x192xf32>) -> tensor<2x16x192xf32>
  %qkv = transformer.add %qkv0, %b_qkv : (tensor<2x16x192xf32>, tensor<192xf32>) -> tensor<2x16x192xf32>
  %q, %k, %v = transformer.split %qkv {axis = 2, sizes = array<i64: 64, 64, 64>} : tensor<2x16x192xf32> -> tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>

  // Head split target shape, computed the way the TorchScript exporter does.
  %shape = transformer.shape %q : tensor<2x16x64xf32> -> tensor<3xi64>
  %i0 = arith.constant dense<0> : tensor<i64>
  %i1 = arith.constant dense<1> : tensor<i64>
  %b = transformer.gather %shape[%i0] : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %t = transformer.gather %shape[%i1] : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %b1 = transformer.reshape %b : tensor<i64> -> tensor<1xi64>
  %t1 = transformer.reshape %t : tensor<i64> -> tensor<1xi64>
  %heads = arith.constant dense<4> : tensor<1xi64>
  %hd = arith.constant dense<16> : tensor<1xi64>
  %split_shape = transformer.concat %b1, %t1, %heads, %hd {axis = 0} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %qh0 = transformer.reshape %q : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %kh0 = transformer.reshape %k : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %vh0 = transformer.reshape %v : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %qh = transformer.transpose %qh0 [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %kt = transformer.transpose %kh0 [0, 2, 3, 1] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %vh = transformer.transpose %vh0 [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>

  // Scores, causal mask from Range + comparison, softmax, context.
  %sc0 = transformer.matmul %qh, %kt : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %sc = transformer.div %sc0, %score_scale : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %start = arith.constant dense<0> : tensor<i64>
  %seq_len = transformer.reshape %t : tensor<i64> -> tensor<i64>
  %step = arith.constant dense<1> : tensor<i64>
  %pos = transformer.range %start, %seq_len, %step : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<16xi64>
  %rows = transformer.reshape %pos : tensor<16xi64> -> tensor<16x1xi64>
  %causal = transformer.compare <le> %pos, %rows : (tensor<16xi64>, tensor<16x1xi64>) -> tensor<16x16xi1>
  %masked = transformer.where %causal, %sc, %neg_inf : (tensor<16x16xi1>, tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %p = transformer.softmax %masked {axis = -1} : tensor<2x4x16x16xf32>
  %ctx = transformer.matmul %p, %vh : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %ctx_t = transformer.transpose %ctx [0, 2, 1, 3] : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %merged = transformer.reshape %ctx_t : tensor<2x16x4x16xf32> -> tensor<2x16x64xf32>

  // c_proj and the first residual.
  %a0 = transformer.matmul %merged, %w_proj : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
  %a1 = transformer.add %a0, %b_proj : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %r1 = transformer.add %x, %a1 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>

  // ln_2, decomposed.
  %m2 = transformer.reduce <mean> %r1 {axes = array<i64: -1>} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  %d2 = transformer.sub %r1, %m2 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %sq2 = transformer.pow %d2, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %v2 = transformer.reduce <mean> %sq2 {axes = array<i64: -1>} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  %ve2 = transformer.add %v2, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %s2 = transformer.sqrt %ve2 : tensor<2x16x1xf32>
  %n2 = transformer.div %d2, %s2 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %g2 = transformer.mul %n2, %ln2_g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %h2 = transformer.add %g2, %ln2_b : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>

  // MLP with the tanh GELU that GPT-2 uses (x^3 through Pow).
  %f0 = transformer.matmul %h2, %w_fc : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
  %f1 = transformer.add %f0, %b_fc : (tensor<2x16x256xf32>, tensor<256xf32>) -> tensor<2x16x256xf32>
  %cube = transformer.pow %f1, %three : (tensor<2x16x256xf32>, tensor<f32>) -> tensor<2x16x256xf32>
  %cc = transformer.mul %cube, %gelu_c : (tensor<2x16x256xf32>, tensor<f32>) -> tensor<2x16x256xf32>
  %inner = transformer.add %f1, %cc : (tensor<2x16x256xf32>, tensor<2x16x256xf32>) -> tensor<2x16x256xf32>
  %scaled = transformer.mul %inner, %sqrt_2_pi : (tensor<2x16x256xf32>, tensor<f32>) -> tensor<2x16x256xf32>
  %th = transformer.tanh %scaled : tensor<2x16x256xf32>
  %th1 = transformer.add %th, %one : (tensor<2x16x256xf32>, tensor<f32>) -> tensor<2x16x256xf32>
  %hx = transformer.mul %f1, %half : (tensor<2x16x256xf32>, tensor<f32>) -> tensor<2x16x256xf32>
  %gelu = transformer.mul %hx, %th1 : (tensor<2x16x256xf32>, tensor<2x16x256xf32>) -> tensor<2x16x256xf32>
  %o0 = transformer.matmul %gelu, %w_out : (tensor<2x16x256xf32>, tensor<256x64xf32>) -> tensor<2x16x64xf32>
  %o1 = transformer.add %o0, %b_out : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %y = transformer.add %r1, %o1 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}
