// Sequence parallelism's errors (mte-annotate-tensor-parallel
// sequence-parallel=true).
// RUN: mte-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(mte-annotate-tensor-parallel{tp-size=2 sequence-parallel=true})'

// Sequence parallelism: an MLP over 3 tokens of a batch of 1, whose tokens
// no two ranks share evenly.
module {
  func.func @odd_tokens(%x: tensor<1x3x16xf32>) -> tensor<1x3x16xf32> {
    %w1 = arith.constant dense<0.5> : tensor<16x32xf32>
    %w2 = arith.constant dense<0.25> : tensor<32x16xf32>
    %h = transformer.linear %x, %w1 layout <kn> activation <gelu> : (tensor<1x3x16xf32>, tensor<16x32xf32>) -> tensor<1x3x32xf32>
    // expected-error @+1 {{sequence parallelism: no dimension of the output 'tensor<1x3x16xf32>' but the hidden one divides among --tp=2 ranks}}
    %y = transformer.linear %h, %w2 layout <kn> : (tensor<1x3x32xf32>, tensor<32x16xf32>) -> tensor<1x3x16xf32>
    return %y : tensor<1x3x16xf32>
  }
}
