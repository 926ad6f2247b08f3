// RUN: mte-opt %s -mte-read-only-arguments | FileCheck %s
// RUN: mte-opt %s -mte-read-only-arguments -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUFFER

// Every tensor argument of a public function becomes read-only; private
// functions and non-tensor arguments are left alone.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %{{.*}}: tensor<4xf32> {bufferization.writable = false, transformer.name = "x"}
// CHECK-SAME: %{{.*}}: index)
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: writable
// An insert into an argument writes into a copy, not the caller's buffer.
// BUFFER-LABEL: func.func @forward
// BUFFER: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// BUFFER: memref.copy %arg0, %[[COPY]]
// BUFFER: memref.store %{{.*}}, %[[COPY]][%arg1]
func.func @forward(%x: tensor<4xf32> {transformer.name = "x"}, %i: index) -> tensor<4xf32> {
  %c = arith.constant 1.0 : f32
  %y = tensor.insert %c into %x[%i] : tensor<4xf32>
  return %y : tensor<4xf32>
}

func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
