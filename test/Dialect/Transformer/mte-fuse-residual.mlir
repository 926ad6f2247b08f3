// RUN: mte-opt %s -split-input-file -mte-fuse-residual | FileCheck %s

// A projection plus the residual stream (BERT's attention output, Llama's
// o_proj and down_proj): the GEMM adds it in its epilogue, after the
// activation.
// CHECK-LABEL: func @linear_residual
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[W:.*]]: tensor<64x64xf32>, %[[B:.*]]: tensor<64xf32>, %[[R:.*]]: tensor<2x8x64xf32>)
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %[[X]], %[[W]] bias %[[B]] residual %[[R]] layout <nk> activation <gelu> : (tensor<2x8x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: return %[[Y]]
func.func @linear_residual(%x: tensor<2x8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %r: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  %0 = transformer.linear %x, %w bias %b layout <nk> activation <gelu> : (tensor<2x8x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %1 = transformer.add %r, %0 : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %1 : tensor<2x8x64xf32>
}

// -----

// The residual may be defined after the linear: the fused linear takes the
// add's place.
// CHECK-LABEL: func @residual_defined_later
// CHECK-NEXT: %[[R:.*]] = transformer.neg %arg2
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %arg0, %arg1 residual %[[R]] layout <kn>
// CHECK-NEXT: return %[[Y]]
func.func @residual_defined_later(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %s: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %r = transformer.neg %s : tensor<4x16xf32>
  %1 = transformer.add %0, %r : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Pre-LN (GPT-2's Conv1D leaves a reshape between GEMM and add): the norm
// takes the add, and its residual_sum replaces the sum where the next
// residual add reads it.
// CHECK-LABEL: func @norm_residual
// CHECK-SAME: (%[[A:.*]]: tensor<2x8x64xf32>, %[[B:.*]]: tensor<2x8x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[BETA:.*]]: tensor<64xf32>)
// CHECK-NEXT: %[[N:.*]], %[[SUM:.*]] = transformer.layer_norm %[[A]], %[[G]] bias %[[BETA]] residual %[[B]] {epsilon = 9.99999974E-6 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>)
// CHECK-NEXT: %[[M:.*]] = transformer.neg %[[N]]
// CHECK-NEXT: %[[NEXT:.*]] = transformer.add %[[SUM]], %[[M]]
// CHECK-NEXT: return %[[NEXT]]
func.func @norm_residual(%a: tensor<2x8x64xf32>, %b: tensor<2x8x64xf32>, %g: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %h = transformer.add %a, %b : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %n = transformer.layer_norm %h, %g bias %beta {epsilon = 1.0e-5 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %m = transformer.neg %n : tensor<2x8x64xf32>
  %next = transformer.add %h, %m : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %next : tensor<2x8x64xf32>
}

// -----

// RMSNorm likewise, the sum used only by the norm.
// CHECK-LABEL: func @rms_norm_residual
// CHECK-NEXT: %[[N:.*]], %{{.*}} = transformer.rms_norm %arg0, %arg2 residual %arg1 {epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT: return %[[N]]
func.func @rms_norm_residual(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>, %g: tensor<64xf32>) -> tensor<4x64xf32> {
  %h = transformer.add %a, %b : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %n = transformer.rms_norm %h, %g {epsilon = 1.0e-6 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %n : tensor<4x64xf32>
}

// -----

// Post-LN (BERT): the add of a linear goes into the linear, not into the
// norm after it, whichever op the driver visits first.
// CHECK-LABEL: func @linear_before_norm
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %arg0, %arg1 residual %arg2 layout <kn>
// CHECK-NEXT: %[[N:.*]] = transformer.layer_norm %[[Y]], %arg3 {epsilon
// CHECK-NEXT: return %[[N]]
func.func @linear_before_norm(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>, %r: tensor<4x64xf32>, %g: tensor<64xf32>) -> tensor<4x64xf32> {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  %h = transformer.add %0, %r : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %n = transformer.layer_norm %h, %g {epsilon = 1.0e-12 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %n : tensor<4x64xf32>
}

// -----

// negative_: the product has another user, so the linear cannot return the
// sum instead; the add then goes into the norm.
// CHECK-LABEL: func @negative_shared_product
// CHECK-NEXT: %[[Y:.*]] = transformer.linear %arg0, %arg1 layout <kn> :
// CHECK-NEXT: %[[N:.*]], %{{.*}} = transformer.rms_norm %[[Y]], %arg3 residual %arg2
// CHECK-NEXT: return %[[N]], %[[Y]]
func.func @negative_shared_product(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>, %r: tensor<4x64xf32>, %g: tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  %h = transformer.add %0, %r : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %n = transformer.rms_norm %h, %g {epsilon = 1.0e-6 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %n, %0 : tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

// negative_: a broadcasting add is no residual (BERT's position embeddings
// before the embedding LayerNorm), neither for a linear nor for a norm.
// CHECK-LABEL: func @negative_broadcast
// CHECK: transformer.linear %arg0, %arg1 layout <kn> :
// CHECK: transformer.add
// CHECK: transformer.add
// CHECK: transformer.layer_norm %{{.*}}, %arg4 {epsilon
func.func @negative_broadcast(%x: tensor<2x8x64xf32>, %w: tensor<64x64xf32>, %p: tensor<1x8x64xf32>, %e: tensor<2x8x64xf32>, %g: tensor<64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  %0 = transformer.linear %x, %w layout <kn> : (tensor<2x8x64xf32>, tensor<64x64xf32>) -> tensor<2x8x64xf32>
  %1 = transformer.add %0, %p : (tensor<2x8x64xf32>, tensor<1x8x64xf32>) -> tensor<2x8x64xf32>
  %2 = transformer.add %e, %p : (tensor<2x8x64xf32>, tensor<1x8x64xf32>) -> tensor<2x8x64xf32>
  %n = transformer.layer_norm %2, %g {epsilon = 1.0e-12 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  return %1, %n : tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// -----

// negative_: the linear adds a residual already; the norm has one too.
// CHECK-LABEL: func @negative_already_fused
// CHECK: %[[Y:.*]] = transformer.linear %arg0, %arg1 residual %arg2 layout <kn> :
// CHECK-NEXT: %[[H:.*]] = transformer.add %[[Y]], %arg2
// CHECK-NEXT: %[[N:.*]], %[[S:.*]] = transformer.rms_norm %[[H]], %arg3 residual %arg2
func.func @negative_already_fused(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>, %r: tensor<4x64xf32>, %g: tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %0 = transformer.linear %x, %w residual %r layout <kn> : (tensor<4x64xf32>, tensor<64x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %h = transformer.add %0, %r : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %n, %s = transformer.rms_norm %h, %g residual %r {epsilon = 1.0e-6 : f32} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>)
  return %n, %s : tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

// negative_: the sum is read before the norm, where its residual_sum does
// not exist yet.
// CHECK-LABEL: func @negative_sum_used_before
// CHECK: %[[H:.*]] = transformer.add %arg0, %arg1
// CHECK-NEXT: transformer.neg %[[H]]
// CHECK-NEXT: transformer.rms_norm %[[H]], %arg2 {epsilon
func.func @negative_sum_used_before(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>, %g: tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %h = transformer.add %a, %b : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %m = transformer.neg %h : tensor<4x64xf32>
  %n = transformer.rms_norm %h, %g {epsilon = 1.0e-6 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %n, %m : tensor<4x64xf32>, tensor<4x64xf32>
}
