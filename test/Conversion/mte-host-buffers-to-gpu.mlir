// RUN: mte-opt %s -mte-host-buffers-to-gpu | FileCheck %s

// Host-code buffers live on the device; an alloca is freed at the end of its
// block; a loop nest left sequential at the top level runs as one thread.
// CHECK-LABEL: func.func @forward
// CHECK: %[[A:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: %[[B:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: scf.for
// CHECK: gpu.dealloc %[[A]] : memref<16xf32>
// CHECK-NEXT: gpu.dealloc %[[B]] : memref<4xf32>
// CHECK-NEXT: return
// CHECK-NOT: memref.alloc
func.func @forward(%out: memref<f32>) {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloca() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    memref.store %v, %out[] : memref<f32>
  }
  memref.dealloc %a : memref<16xf32>
  return
}
