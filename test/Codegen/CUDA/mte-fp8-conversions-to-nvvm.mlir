// RUN: mte-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(mte-fp8-conversions-to-nvvm))' | FileCheck %s

// In a kernel, a truncation to E4M3 of a value clamped to [-448, 448] is a
// cvt.rn.satfinite of the unclamped value per pair of elements (the odd
// element first: cvt puts its first operand in the upper byte), the clamp
// gone; an unclamped one (saturate = false: out of range is NaN) and one on
// the host stay truncations.
// CHECK-LABEL: func @quantize
// CHECK-SAME: (%[[X:.*]]: vector<4xf32>
// CHECK: gpu.launch
// CHECK-NOT: arith.maximumf
// CHECK: %[[E0:.*]] = vector.extract %[[X]][0] : f32 from vector<4xf32>
// CHECK: %[[E1:.*]] = vector.extract %[[X]][1] : f32 from vector<4xf32>
// CHECK: %[[P0:.*]] = nvvm.convert.f32x2.to.f8x2 %[[E1]], %[[E0]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: %[[CODES:.*]] = vector.from_elements {{.*}} : vector<4xi8>
// CHECK: arith.bitcast %[[CODES]] : vector<4xi8> to vector<4xf8E4M3FN>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf8E4M3FN>
// CHECK: gpu.terminator
// CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FN
func.func @quantize(%x: vector<4xf32>, %out: memref<2xvector<4xf8E4M3FN>>, %s: f32) -> f8E4M3FN {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %max = arith.constant dense<448.0> : vector<4xf32>
  %min = arith.constant dense<-448.0> : vector<4xf32>
  %smax = arith.constant 448.0 : f32
  %smin = arith.constant -448.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %a = arith.minimumf %x, %max : vector<4xf32>
    %b = arith.maximumf %a, %min : vector<4xf32>
    %q = arith.truncf %b : vector<4xf32> to vector<4xf8E4M3FN>
    memref.store %q, %out[%c0] : memref<2xvector<4xf8E4M3FN>>
    %r = arith.truncf %x : vector<4xf32> to vector<4xf8E4M3FN>
    memref.store %r, %out[%c1] : memref<2xvector<4xf8E4M3FN>>
    gpu.terminator
  }
  %a = arith.minimumf %s, %smax : f32
  %b = arith.maximumf %a, %smin : f32
  %q = arith.truncf %b : f32 to f8E4M3FN
  return %q : f8E4M3FN
}
