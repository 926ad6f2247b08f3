// RUN: mte-opt %s -mte-plan-activation-memory -split-input-file | FileCheck %s

// Buffer deallocation frees every buffer at the end of the block; a buffer
// lives from its allocation to its last use, through any value computed
// from it (%a2 here). Four buffers: %a (1024 bytes) and %b (256) live
// together; %c (512) and %d (12 i1, one byte each) are allocated after %a's
// last use. Largest first: %a at 0; %c at 0, in %a's bytes; %b above %a, at
// 1024, since both %a and %c overlap its lifetime; %d in the smallest gap
// between the live %c and %b, at 512 (256-byte aligned). Peak 1280 bytes
// instead of 1804; the deallocations go.
// CHECK: module attributes {mte.activation_arena = {forward = {buffers = 4 : i64, bytes = 1280 : i64, bytes_without_reuse = 1804 : i64}}}
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: memref<256xf32>, %[[OUT:[^:]*]]: memref<12xi1>, %[[ARENA:[^:]*]]: memref<1280xi8> {mte.arena})
// CHECK-NEXT: %[[A_AT:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%[[A_AT]]][] : memref<1280xi8> to memref<256xf32>
// CHECK-NEXT: %[[B_AT:.*]] = arith.constant 1024 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[ARENA]][%[[B_AT]]][] : memref<1280xi8> to memref<64xf32>
// CHECK-NEXT: memref.copy %[[X]], %[[A]]
// CHECK-NEXT: %[[A2:.*]] = memref.expand_shape %[[A]]
// CHECK-NEXT: memref.copy %[[A2]], %[[A2]]
// CHECK-NEXT: %[[C_AT:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = memref.view %[[ARENA]][%[[C_AT]]][] : memref<1280xi8> to memref<128xf32>
// CHECK-NEXT: %[[D_AT:.*]] = arith.constant 512 : index
// CHECK-NEXT: %[[D:.*]] = memref.view %[[ARENA]][%[[D_AT]]][] : memref<1280xi8> to memref<12xi1>
// CHECK-NEXT: memref.copy %[[B]], %[[B]]
// CHECK-NEXT: memref.copy %[[C]], %[[C]]
// CHECK-NEXT: memref.copy %[[D]], %[[OUT]]
// CHECK-NEXT: return
func.func @forward(%x: memref<256xf32>, %out: memref<12xi1>) {
  %a = memref.alloc() : memref<256xf32>
  %b = memref.alloc() : memref<64xf32>
  memref.copy %x, %a : memref<256xf32> to memref<256xf32>
  %a2 = memref.expand_shape %a [[0, 1]] output_shape [16, 16] : memref<256xf32> into memref<16x16xf32>
  memref.copy %a2, %a2 : memref<16x16xf32> to memref<16x16xf32>
  %c = memref.alloc() : memref<128xf32>
  %d = memref.alloc() : memref<12xi1>
  memref.copy %b, %b : memref<64xf32> to memref<64xf32>
  memref.copy %c, %c : memref<128xf32> to memref<128xf32>
  memref.copy %d, %out : memref<12xi1> to memref<12xi1>
  memref.dealloc %a : memref<256xf32>
  memref.dealloc %b : memref<64xf32>
  memref.dealloc %c : memref<128xf32>
  memref.dealloc %d : memref<12xi1>
  return
}

// -----

// Offsets are 256-byte aligned, all the runtime guarantees the arena: an
// allocation asking for more stays an allocation.
// CHECK: mte.activation_arena = {aligned = {buffers = 1 : i64, bytes = 1200 : i64, bytes_without_reuse = 1200 : i64}}
// CHECK-LABEL: func.func @aligned(
// CHECK-SAME: %{{.*}}: memref<1200xi8> {mte.arena}
// CHECK: memref.view {{.*}} to memref<300xf32>
// CHECK: memref.alloc() {alignment = 1024 : i64} : memref<128xf32>
func.func @aligned(%x: memref<128xf32>) {
  %a = memref.alloc() {alignment = 256 : i64} : memref<300xf32>
  %b = memref.alloc() {alignment = 1024 : i64} : memref<128xf32>
  memref.copy %a, %a : memref<300xf32> to memref<300xf32>
  memref.copy %x, %b : memref<128xf32> to memref<128xf32>
  memref.dealloc %a : memref<300xf32>
  memref.dealloc %b : memref<128xf32>
  return
}

// -----

// What the plan cannot bound stays an allocation: a dynamic shape, an
// allocation inside a region, one never freed, one freed only on a path,
// one whose pointer a call receives after its deallocation; private
// functions are not planned. Nothing planned: no arena argument.
// CHECK: mte.activation_arena = {left_alone = {buffers = 0 : i64, bytes = 0 : i64, bytes_without_reuse = 0 : i64}}
// CHECK-LABEL: func.func @left_alone(
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: i1)
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: scf.if
// CHECK-NEXT: memref.alloc() : memref<8xf32>
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: memref.alloc() : memref<3xf32>
// CHECK: memref.alloc() : memref<2xf32>
// CHECK-NOT: memref.view
// CHECK-LABEL: func.func private @helper(
// CHECK: memref.alloc() : memref<16xf32>
// CHECK-NOT: memref.view
func.func private @keep(index)
func.func @left_alone(%n: index, %flag: i1) {
  %dynamic = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %dynamic : memref<?xf32>
  scf.if %flag {
    %nested = memref.alloc() : memref<8xf32>
    memref.dealloc %nested : memref<8xf32>
  }
  %leaked = memref.alloc() : memref<4xf32>
  %maybe = memref.alloc() : memref<3xf32>
  scf.if %flag {
    memref.dealloc %maybe : memref<3xf32>
  }
  %kept = memref.alloc() : memref<2xf32>
  %pointer = memref.extract_aligned_pointer_as_index %kept : memref<2xf32> -> index
  memref.dealloc %kept : memref<2xf32>
  func.call @keep(%pointer) : (index) -> ()
  return
}
func.func private @helper() {
  %a = memref.alloc() : memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  return
}
