// RUN: mte-opt %s -split-input-file -mte-promote-loop-accumulators | FileCheck %s

// A column maximum as upstream lowers a linalg reduction: the output
// element goes into iter_args, read once before the loop and written once
// after it; the input stays a load in the loop, unrolled by 8 with the
// maxima one chain in the original order.
// CHECK-LABEL: func @column_max
// CHECK: scf.parallel (%[[C:.*]]) =
// CHECK: %[[INIT:.*]] = memref.load %[[OUT:.*]][%[[C]]]
// CHECK-NEXT: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[MAX:.*]] = scf.for %[[R:.*]] = {{.*}} step %[[EIGHT]] iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// CHECK-NEXT: %[[X:.*]] = memref.load %{{.*}}[%[[R]], %[[C]]]
// CHECK-NEXT: %[[NEXT:.*]] = arith.maximumf %[[ACC]], %[[X]]
// CHECK-COUNT-7: memref.load
// CHECK: %[[LAST:.*]] = arith.maximumf
// CHECK-NEXT: scf.yield %[[LAST]]
// CHECK: memref.store %[[MAX]], %[[OUT]][%[[C]]]
func.func @column_max(%in: memref<1024x8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    scf.for %r = %c0 to %c1024 step %c1 {
      %x = memref.load %in[%r, %c] : memref<1024x8xf32>
      %acc = memref.load %out[%c] : memref<8xf32>
      %m = arith.maximumf %acc, %x : f32
      memref.store %m, %out[%c] : memref<8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Several elements of one loop, in views of one arena at constant byte
// offsets whose bytes are disjoint (as mte-plan-activation-memory places
// buffers), read beside a view of another argument.
// CHECK-LABEL: func @disjoint_views
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (i64, i64)
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK: memref.store
// CHECK: memref.store
func.func @disjoint_views(%arena: memref<4096xi8>, %ids: memref<128x64xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %off_count = arith.constant 0 : index
  %off_first = arith.constant 1024 : index
  %count = memref.view %arena[%off_count][] : memref<4096xi8> to memref<128xi64>
  %first = memref.view %arena[%off_first][] : memref<4096xi8> to memref<128xi64>
  scf.parallel (%row) = (%c0) to (%c128) step (%c1) {
    scf.for %col = %c0 to %c64 step %c1 {
      %v = memref.load %ids[%row, %col] : memref<128x64xi64>
      %n = memref.load %count[%row] : memref<128xi64>
      %f = memref.load %first[%row] : memref<128xi64>
      %n1 = arith.addi %n, %v : i64
      %f1 = arith.minsi %f, %v : i64
      memref.store %n1, %count[%row] : memref<128xi64>
      memref.store %f1, %first[%row] : memref<128xi64>
    }
    scf.reduce
  }
  return
}

// -----

// Views whose bytes overlap may be the same element: nothing moves.
// CHECK-LABEL: func @overlapping_views
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.load
// CHECK: memref.store
func.func @overlapping_views(%arena: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %off_acc = arith.constant 0 : index
  %off_in = arith.constant 32 : index
  %acc = memref.view %arena[%off_acc][] : memref<4096xi8> to memref<16xf32>
  %in = memref.view %arena[%off_in][] : memref<4096xi8> to memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %in[%i] : memref<16xf32>
    %a = memref.load %acc[%c0] : memref<16xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %acc[%c0] : memref<16xf32>
  }
  return
}

// -----

// Arguments of a private function may be views of one caller buffer.
// CHECK-LABEL: func private @private_arguments
// CHECK-NOT: iter_args
func.func private @private_arguments(%in: memref<16xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %in[%i] : memref<16xf32>
    %a = memref.load %out[] : memref<f32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// -----

// A second store to the same memref at an index that may equal the
// element's, an index that changes with the loop, and an opaque call each
// keep the element in memory.
// CHECK-LABEL: func @not_promoted
// CHECK-NOT: iter_args
// CHECK: return
func.func private @opaque()
func.func @not_promoted(%in: memref<16xf32>, %out: memref<16xf32>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %in[%i] : memref<16xf32>
    %a = memref.load %out[%c0] : memref<16xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[%c0] : memref<16xf32>
    memref.store %x, %out[%k] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %a = memref.load %out[%i] : memref<16xf32>
    %s = arith.addf %a, %a : f32
    memref.store %s, %out[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %in[%i] : memref<16xf32>
    %a = memref.load %out[%c1] : memref<16xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[%c1] : memref<16xf32>
    func.call @opaque() : () -> ()
  }
  return
}

// -----

// Nested loops: the inner loop's element first, then the outer loop's,
// now a load and a store around the inner loop.
// CHECK-LABEL: func @nested
// CHECK: memref.load %{{.*}}[] : memref<f32>
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
// CHECK-NEXT: return
func.func @nested(%in: memref<16x16xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %j] : memref<16x16xf32>
      %a = memref.load %out[] : memref<f32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %out[] : memref<f32>
    }
  }
  return
}

// -----

// A reinterpret_cast may reach anywhere in its buffer: under a view it
// says nothing of the view's bytes, so %r[0] (byte 16 of the arena) may be
// %b[0], and nothing moves.
// CHECK-LABEL: func @reinterpret_cast_under_view
// CHECK-NOT: iter_args
// CHECK: return
func.func @reinterpret_cast_under_view(%arena: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  %a = memref.view %arena[%c0][] : memref<4096xi8> to memref<4xf32>
  %b = memref.view %arena[%c16][] : memref<4096xi8> to memref<4xf32>
  %r = memref.reinterpret_cast %a to offset: [4], sizes: [4], strides: [1] : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.for %i = %c0 to %c16 step %c1 {
    %acc = memref.load %b[%c0] : memref<4xf32>
    %s = arith.addf %acc, %one : f32
    memref.store %s, %b[%c0] : memref<4xf32>
    %y = memref.load %r[%c0] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %y, %r[%c1] : memref<4xf32, strided<[1], offset: 4>>
  }
  return
}

// -----

// A zero stride makes distinct indices one element; a loop that may not
// run (its trip count unknown) must not gain a load and a store; and an
// entry point called inside the module may be given overlapping buffers.
// CHECK-LABEL: func @zero_stride
// CHECK-NOT: iter_args
// CHECK-LABEL: func @unknown_trips
// CHECK-NOT: iter_args
// CHECK-LABEL: func @called
// CHECK-NOT: iter_args
// CHECK: return
func.func @zero_stride(%z: memref<4xf32, strided<[0]>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %acc = memref.load %z[%c0] : memref<4xf32, strided<[0]>>
    %x = memref.load %z[%c1] : memref<4xf32, strided<[0]>>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %z[%c0] : memref<4xf32, strided<[0]>>
  }
  return
}
func.func @unknown_trips(%in: memref<16xf32>, %out: memref<f32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<16xf32>
    %a = memref.load %out[] : memref<f32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}
func.func @called(%in: memref<16xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %in[%i] : memref<16xf32>
    %a = memref.load %out[] : memref<f32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}
func.func @caller(%buf: memref<16xf32>, %out: memref<f32>) {
  func.call @called(%buf, %out) : (memref<16xf32>, memref<f32>) -> ()
  return
}

// -----

// A loop of fewer than 8 steps is promoted but not unrolled; of an outer
// and an inner loop only the inner one is unrolled.
// CHECK-LABEL: func @short_and_nested
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.for {{.*}} step %[[ONE]] iter_args
// CHECK-NEXT: memref.load
// CHECK-NEXT: arith.addf
// CHECK-NEXT: scf.yield
// CHECK: scf.for {{.*}} step %[[ONE]] iter_args
// CHECK: scf.for {{.*}} step %[[EIGHT:.*]] iter_args
// CHECK-COUNT-8: arith.addf
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
func.func @short_and_nested(%in: memref<16x16xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %in[%c0, %i] : memref<16x16xf32>
    %a = memref.load %out[%c0] : memref<2xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %out[%c0] : memref<2xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %j] : memref<16x16xf32>
      %a = memref.load %out[%c1] : memref<2xf32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %out[%c1] : memref<2xf32>
    }
  }
  return
}
