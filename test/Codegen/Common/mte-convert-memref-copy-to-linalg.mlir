// RUN: mte-opt %s -mte-convert-memref-copy-to-linalg | FileCheck %s

// CHECK-LABEL: func @strided_copy
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<2x4xf32, strided<[8, 1], offset: 4>>) outs(%{{.*}} : memref<2x4xf32>)
func.func @strided_copy(%src: memref<2x4xf32, strided<[8, 1], offset: 4>>, %dst: memref<2x4xf32>) {
  memref.copy %src, %dst : memref<2x4xf32, strided<[8, 1], offset: 4>> to memref<2x4xf32>
  return
}
