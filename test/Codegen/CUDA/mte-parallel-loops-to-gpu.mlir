// RUN: mte-opt %s -mte-parallel-loops-to-gpu=block-size=128 | FileCheck %s --implicit-check-not=scf.parallel

// A 3 x 100 loop (300 iterations) runs as 3 blocks of 128 threads; thread i
// runs iteration i in row-major order (the last dimension fastest), guarded
// by i < 300; the reduction loop stays inside the thread.
// CHECK-LABEL: func.func @forward
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[NT:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[NB:.*]] = arith.constant 3 : index
// CHECK-NEXT: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[NB]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[NT]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: %[[N:.*]] = arith.constant 300 : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[N]] : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.*]] = arith.remui %[[ID]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.divui %[[ID]], %{{.*}} : index
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<3x100xf32>
// CHECK: gpu.terminator
func.func @forward(%x: memref<3x100x8xf32>, %y: memref<3x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c100 = arith.constant 100 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c100) step (%c1, %c1) {
    %s = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %x[%i, %j, %k] : memref<3x100x8xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %y[%i, %j] : memref<3x100xf32>
    scf.reduce
  }
  return
}
