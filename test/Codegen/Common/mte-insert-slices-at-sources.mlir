// RUN: mte-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(mte-insert-slices-at-sources))' | FileCheck %s
// RUN: mte-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(mte-insert-slices-at-sources),eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries},cse,canonicalize)' | FileCheck %s --check-prefix=BUFFER

// A concatenation of rank-0 values (FP8 delayed scaling's amaxes): the
// chain gets an empty of its own at the top, the unit expansions fold into
// rank-reducing insertions and each insertion sits right after its value.
// CHECK-LABEL: func.func @gather_amaxes
// CHECK-NEXT: %[[EMPTY:.*]] = tensor.empty() : tensor<2xf32>
// CHECK: %[[A:.*]] = linalg.generic
// CHECK: } -> tensor<f32>
// CHECK-NEXT: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[EMPTY]][0] [1] [1] : tensor<f32> into tensor<2xf32>
// CHECK: %[[B:.*]] = linalg.generic
// CHECK: } -> tensor<f32>
// CHECK-NEXT: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][1] [1] [1] : tensor<f32> into tensor<2xf32>
// CHECK-NOT: expand_shape
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2xf32>)
// CHECK: return %[[I1]], %{{.*}}
// After empty-tensor elimination each amax is computed in its slot: no
// copy is left.
// BUFFER-LABEL: func.func @gather_amaxes
// BUFFER: %[[VEC:.*]] = memref.alloc() {{.*}} : memref<2xf32>
// BUFFER: %[[SLOT0:.*]] = memref.subview %[[VEC]][0] [1] [1]
// BUFFER: linalg.generic {{.*}} outs(%[[SLOT0]]
// BUFFER: %[[SLOT1:.*]] = memref.subview %[[VEC]][1] [1] [1]
// BUFFER: linalg.generic {{.*}} outs(%[[SLOT1]]
// BUFFER-NOT: memref.copy
// BUFFER: return %[[VEC]]
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<() -> ()>
func.func @gather_amaxes(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // The last level of an amax: one rank-0 loop into a (shared) empty.
  %empty = tensor.empty() : tensor<f32>
  %a = linalg.generic {indexing_maps = [#scalar], iterator_types = []}
      outs(%empty : tensor<f32>) {
  ^bb0(%out: f32):
    %x0 = tensor.extract %x[%c0] : tensor<2xf32>
    %x1 = tensor.extract %x[%c1] : tensor<2xf32>
    %m = arith.maximumf %x0, %x1 : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %b = linalg.generic {indexing_maps = [#scalar], iterator_types = []}
      outs(%empty : tensor<f32>) {
  ^bb0(%out: f32):
    %y0 = tensor.extract %y[%c0] : tensor<2xf32>
    %y1 = tensor.extract %y[%c1] : tensor<2xf32>
    %m = arith.maximumf %y0, %y1 : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  // The vector's empty, shared (as CSE leaves it) with another op's init.
  %vec = tensor.empty() : tensor<2xf32>
  %other = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%vec : tensor<2xf32>) {
  ^bb0(%out: f32):
    linalg.yield %zero : f32
  } -> tensor<2xf32>
  %ea = tensor.expand_shape %a [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %eb = tensor.expand_shape %b [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %i0 = tensor.insert_slice %ea into %vec[0] [1] [1] : tensor<1xf32> into tensor<2xf32>
  %i1 = tensor.insert_slice %eb into %i0[1] [1] [1] : tensor<1xf32> into tensor<2xf32>
  return %i1, %other : tensor<2xf32>, tensor<2xf32>
}

// -----

// An expansion that adds a non-unit dimension, and an insertion with a
// dynamic offset, stay where they are.
// CHECK-LABEL: func.func @left_alone
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2xf32>
// CHECK: tensor.expand_shape
// CHECK: tensor.insert_slice %{{.*}} into %[[E]][0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x2xf32>
// CHECK: tensor.insert_slice %{{.*}}[%{{.*}}, 0] [1, 2]
func.func @left_alone(%x: tensor<4xf32>, %y: tensor<1x2xf32>, %i: index) -> tensor<4x2xf32> {
  %e = tensor.expand_shape %x [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %empty = tensor.empty() : tensor<4x2xf32>
  %i0 = tensor.insert_slice %e into %empty[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x2xf32>
  %i1 = tensor.insert_slice %y into %i0[%i, 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<4x2xf32>
  return %i1 : tensor<4x2xf32>
}
