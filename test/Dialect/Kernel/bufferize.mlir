// RUN: mte-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s

// A kernel reads its inputs where it runs. Here the fill between the two
// calls cannot write %x's buffer in place, because the second call still
// reads %x: it gets a buffer of its own, and both calls read the ones. (A
// bufferization.to_buffer taken at the first call and reused by the second,
// which CSE makes of two equal ones, let the fill overwrite the second
// call's input: GPT-J / NeoX / Phi blocks were wrong on CUDA that way.)
// CHECK-LABEL: func.func @read_where_called
// CHECK: %[[X:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[X]] : memref<4x8xf32>)
// CHECK: %[[A:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: call @kernel(%[[X]], %[[A]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK: %[[Y:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[Y]] : memref<4x8xf32>)
// CHECK: %[[B:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: call @kernel(%[[X]], %[[B]])
// CHECK: return %[[A]], %[[Y]], %[[B]]
func.func private @kernel(memref<4x8xf32>, memref<4x8xf32>)
func.func @read_where_called() -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %x = linalg.fill ins(%one : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %a = kernel.call @kernel(%x : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.fill ins(%two : f32) outs(%x : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %b = kernel.call @kernel(%x : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %y, %b : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Operands are passed as the declaration takes them: a reshaped view of a
// contiguous buffer, a cast to a dynamic layout, scalars as they are. The
// output is written in place into a dead input's buffer, never copied in
// first: a kernel overwrites its outputs whole.
// CHECK-LABEL: func.func @views
// CHECK-SAME: (%[[X:.*]]: memref<2x4x8xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2]]
// CHECK: %[[ROWS:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [8, 8]
// CHECK-NOT: memref.copy
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<2x4x8xf32>
// CHECK-NOT: memref.copy
// CHECK: %[[DYN:.*]] = memref.cast %[[X]] : memref<2x4x8xf32> to memref<2x4x8xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: %[[OF:.*]] = memref.collapse_shape %[[OUT]]
// CHECK: %[[OV:.*]] = memref.expand_shape %[[OF]] {{.*}} output_shape [8, 8]
// CHECK: call @mixed(%[[ROWS]], %[[DYN]], %{{.*}}, %[[OV]]) : (memref<8x8xf32>, memref<2x4x8xf32, strided<[?, ?, 1], offset: ?>>, f32, memref<8x8xf32>) -> ()
func.func private @mixed(memref<8x8xf32>, memref<2x4x8xf32, strided<[?, ?, 1], offset: ?>>, f32, memref<8x8xf32>)
func.func @views(%x: tensor<2x4x8xf32>, %eps: f32) -> tensor<2x4x8xf32> {
  %rows = tensor.collapse_shape %x [[0, 1, 2]] : tensor<2x4x8xf32> into tensor<64xf32>
  %r = tensor.expand_shape %rows [[0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
  %e = tensor.empty() : tensor<2x4x8xf32>
  %y = kernel.call @mixed(%r, %x, %eps : tensor<8x8xf32>, tensor<2x4x8xf32>, f32) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// An operand whose buffer no view can pass (a strided column slice where the
// kernel takes a contiguous buffer) goes through a contiguous copy; an
// output written through a temporary is copied back after the call.
// CHECK-LABEL: func.func @copies
// CHECK: %[[SLICE:.*]] = memref.subview
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: memref.copy %[[SLICE]], %[[TMP]]
// CHECK: %[[OUTTMP:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: call @contiguous(%[[TMP]], %[[OUTTMP]])
// CHECK: memref.copy %[[OUTTMP]], %{{.*}} : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1]>>
func.func private @contiguous(memref<4x8xf32>, memref<4x8xf32>)
func.func @copies(%x: tensor<4x16xf32>, %d: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = tensor.extract_slice %x[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %o = tensor.extract_slice %d[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %y = kernel.call @contiguous(%s : tensor<4x8xf32>) outs(%o : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tensor.insert_slice %y into %d[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
