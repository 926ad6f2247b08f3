// RUN: mte-opt %s -mte-expand-fp8-conversions | FileCheck %s

// CHECK-LABEL: func @decode
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @decode(%x: f8E4M3FN) -> f16 {
  %0 = arith.extf %x : f8E4M3FN to f16
  return %0 : f16
}

// CHECK-LABEL: func @encode
// CHECK-NOT: arith.truncf
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: math.roundeven
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: arith.bitcast %{{.*}} : i8 to f8E5M2
func.func @encode(%x: bf16) -> f8E5M2 {
  %0 = arith.truncf %x : bf16 to f8E5M2
  return %0 : f8E5M2
}

// Other conversions are left alone.
// CHECK-LABEL: func @other
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
func.func @other(%x: f32) -> bf16 {
  %0 = arith.truncf %x : f32 to bf16
  return %0 : bf16
}

// Vectorized kernels (mte-vectorize-elementwise) convert whole vectors: the
// same integer code, lane by lane, with splat constants.
// CHECK-LABEL: func @vectors
// CHECK-NOT: arith.truncf %{{.*}} to vector<8xf8E4M3FN>
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.andi %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: arith.trunci %{{.*}} : vector<8xi32> to vector<8xi8>
// CHECK: arith.bitcast %{{.*}} : vector<8xi8> to vector<8xf8E4M3FN>
// CHECK: arith.bitcast %{{.*}} : vector<8xf8E4M3FN> to vector<8xi8>
// CHECK: arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK-NOT: arith.extf %{{.*}} : vector<8xf8E4M3FN>
func.func @vectors(%x: vector<8xbf16>, %q: vector<8xf8E4M3FN>) -> (vector<8xf8E4M3FN>, vector<8xf32>) {
  %0 = arith.truncf %x : vector<8xbf16> to vector<8xf8E4M3FN>
  %1 = arith.extf %q : vector<8xf8E4M3FN> to vector<8xf32>
  return %0, %1 : vector<8xf8E4M3FN>, vector<8xf32>
}
