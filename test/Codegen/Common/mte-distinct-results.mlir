// RUN: mte-opt %s -mte-distinct-results | FileCheck %s
// RUN: mte-opt %s -mte-distinct-results -buffer-results-to-out-params=modify-public-functions | FileCheck %s --check-prefix=OUT

// A buffer returned three times is returned once and as two copies; each
// result then gets an out-parameter of its own.
// CHECK-LABEL: func.func @thrice
// CHECK-SAME: (%[[X:.*]]: memref<2x3xf32>)
// CHECK: %[[A:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK: memref.copy %[[X]], %[[A]]
// CHECK: %[[B:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK: memref.copy %[[X]], %[[B]]
// CHECK: return %[[X]], %[[A]], %[[B]] :
// OUT-LABEL: func.func @thrice
// OUT-SAME: (%{{.*}}: memref<2x3xf32>, %{{.*}}: memref<2x3xf32>, %{{.*}}: memref<2x3xf32>, %{{.*}}: memref<2x3xf32>)
// OUT-NOT: return %
func.func @thrice(%x: memref<2x3xf32>) -> (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) {
  return %x, %x, %x : memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>
}
