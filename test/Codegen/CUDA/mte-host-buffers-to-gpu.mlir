// RUN: mte-opt %s -mte-host-buffers-to-gpu | FileCheck %s --implicit-check-not=memref.alloc

#map = affine_map<(i) -> (i)>
#scalar = affine_map<(i) -> ()>
#none = affine_map<() -> ()>
// Host-code buffers live on the device; an alloca is freed at the end of its
// block. A full reduction and a rank-0 op (no parallel dimension) move into
// one-iteration scf.parallel loops, so they run on the device as one thread;
// an op with a parallel dimension stays where it is.
// CHECK-LABEL: func.func @forward
// CHECK: %[[A:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: %[[B:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = []}
// CHECK: gpu.dealloc %[[A]] : memref<16xf32>
// CHECK-NEXT: gpu.dealloc %[[B]] : memref<4xf32>
// CHECK-NEXT: return
func.func @forward(%x: memref<16xf32>, %sum: memref<f32>, %twice: memref<f32>) {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloca() : memref<4xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#map, #scalar], iterator_types = ["reduction"]}
      ins(%a : memref<16xf32>) outs(%sum : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#none, #none], iterator_types = []}
      ins(%sum : memref<f32>) outs(%twice : memref<f32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  }
  memref.dealloc %a : memref<16xf32>
  return
}
