// RUN: mte-opt %s -split-input-file -mte-vectorize-elementwise | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-vectorize-elementwise | FileCheck %s --check-prefix=ABSENT

// SwiGLU on the two halves of a packed gate/up buffer: 8 lanes of bf16 a
// thread, each half read with one aligned 16-byte load, the arithmetic on
// vectors (the constant broadcast), one 16-byte store.
// ABSENT-LABEL: func.func @swiglu
// ABSENT-NOT: linalg.generic
// ABSENT: {{^}}}
// CHECK-LABEL: func.func @swiglu(
// CHECK-SAME: %[[GU:.*]]: memref<4x256xbf16>, %[[OUT:.*]]: memref<4x128xbf16>)
// CHECK-DAG: %[[G:.*]] = memref.subview %[[GU]][0, 0]
// CHECK-DAG: %[[U:.*]] = memref.subview %[[GU]][0, 128]
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to ({{.*}}) step (%{{.*}}, %[[C8]])
// CHECK: %[[GV:.*]] = vector.load %[[G]][%[[I]], %[[J]]] {alignment = 16 : i64} : memref<4x128xbf16, strided<[256, 1]>>, vector<8xbf16>
// CHECK: %[[UV:.*]] = vector.load %[[U]][%[[I]], %[[J]]] {alignment = 16 : i64} : memref<4x128xbf16, strided<[256, 1], offset: 128>>, vector<8xbf16>
// CHECK: arith.extf %[[GV]] : vector<8xbf16> to vector<8xf32>
// CHECK: math.exp %{{.*}} : vector<8xf32>
// CHECK: vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store %[[R]], %[[OUT]][%[[I]], %[[J]]] {alignment = 16 : i64} : memref<4x128xbf16>, vector<8xbf16>
func.func @swiglu(%gu: memref<4x256xbf16>, %out: memref<4x128xbf16>) {
  %cst = arith.constant 1.000000e+00 : f32
  %g = memref.subview %gu[0, 0] [4, 128] [1, 1] : memref<4x256xbf16> to memref<4x128xbf16, strided<[256, 1]>>
  %u = memref.subview %gu[0, 128] [4, 128] [1, 1] : memref<4x256xbf16> to memref<4x128xbf16, strided<[256, 1], offset: 128>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g, %u : memref<4x128xbf16, strided<[256, 1]>>, memref<4x128xbf16, strided<[256, 1], offset: 128>>) outs(%out : memref<4x128xbf16>) {
  ^bb0(%in: bf16, %in_1: bf16, %o: bf16):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_1 : bf16 to f32
    %2 = arith.negf %0 : f32
    %3 = math.exp %2 : f32
    %4 = arith.addf %3, %cst : f32
    %5 = arith.divf %cst, %4 : f32
    %6 = arith.mulf %0, %5 : f32
    %7 = arith.mulf %6, %1 : f32
    %8 = arith.truncf %7 : f32 to bf16
    linalg.yield %8 : bf16
  }
  return
}

// -----

// f32 plus a row broadcast [N] and a scalar per row [M, 1] (not varying
// along the vector: read once, broadcast): 4 lanes of f32.
// CHECK-LABEL: func.func @broadcast_add
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = {{.*}} step (%{{.*}}, %c4)
// CHECK-DAG: vector.load %arg0[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<6x12xf32>, vector<4xf32>
// CHECK-DAG: vector.load %arg1[%[[J]]] {alignment = 16 : i64} : memref<12xf32>, vector<4xf32>
// CHECK-DAG: %[[S:.*]] = memref.load %arg2[%[[I]], %{{.*}}] : memref<6x1xf32>
// CHECK-DAG: vector.broadcast %[[S]] : f32 to vector<4xf32>
// CHECK: vector.store %{{.*}}, %arg3[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<6x12xf32>, vector<4xf32>
func.func @broadcast_add(%x: memref<6x12xf32>, %b: memref<12xf32>, %s: memref<6x1xf32>, %out: memref<6x12xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b, %s : memref<6x12xf32>, memref<12xf32>, memref<6x1xf32>) outs(%out : memref<6x12xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %0 = arith.addf %a, %c : f32
    %1 = arith.mulf %0, %d : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Left as they are: an innermost extent that is not a multiple of the
// vector (6 bf16), a transpose (the innermost dimension is not the input's
// last), a subview whose offset breaks 16-byte alignment, a gather
// (linalg.index and a load in the body), a reduction, i1 elements.
// ABSENT-LABEL: func.func @not_vectorized
// ABSENT-NOT: vector.
// ABSENT: {{^}}}
// CHECK-LABEL: func.func @not_vectorized
// CHECK-COUNT-6: linalg.generic
func.func @not_vectorized(%a: memref<4x6xbf16>, %t: memref<8x16xf32>, %u: memref<16x8xf32>, %w: memref<4x20xbf16>, %x: memref<4x16xbf16>, %table: memref<10x16xbf16>, %ids: memref<4xi64>, %r: memref<8xf32>, %m: memref<4x16xi1>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<4x6xbf16>) outs(%a : memref<4x6xbf16>) {
  ^bb0(%in: bf16, %o: bf16):
    %0 = arith.negf %in : bf16
    linalg.yield %0 : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : memref<8x16xf32>) outs(%u : memref<16x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %sv = memref.subview %w[0, 4] [4, 16] [1, 1] : memref<4x20xbf16> to memref<4x16xbf16, strided<[20, 1], offset: 4>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sv : memref<4x16xbf16, strided<[20, 1], offset: 4>>) outs(%x : memref<4x16xbf16>) {
  ^bb0(%in: bf16, %o: bf16):
    linalg.yield %in : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xi64>) outs(%x : memref<4x16xbf16>) {
  ^bb0(%id: i64, %o: bf16):
    %0 = arith.index_cast %id : i64 to index
    %1 = linalg.index 1 : index
    %2 = arith.addi %1, %0 : index
    %3 = memref.load %table[%0, %2] : memref<10x16xbf16>
    linalg.yield %3 : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t : memref<8x16xf32>) outs(%r : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %0 = arith.addf %in, %o : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : memref<4x16xi1>) outs(%x : memref<4x16xbf16>) {
  ^bb0(%in: i1, %o: bf16):
    %0 = arith.uitofp %in : i1 to bf16
    linalg.yield %0 : bf16
  }
  return
}

// -----

// A copy (a model output written through a reshape) is generalised and
// vectorised like any elementwise op.
// ABSENT-LABEL: func.func @copy
// ABSENT-NOT: linalg.copy
// ABSENT: {{^}}}
// CHECK-LABEL: func.func @copy
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = {{.*}} step (%{{.*}}, %c8)
// CHECK: %[[V:.*]] = vector.load %arg0[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<4x64xbf16>, vector<8xbf16>
// CHECK: vector.store %[[V]], %arg1[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<4x64xbf16>, vector<8xbf16>
func.func @copy(%a: memref<4x64xbf16>, %b: memref<4x64xbf16>) {
  linalg.copy ins(%a : memref<4x64xbf16>) outs(%b : memref<4x64xbf16>)
  return
}

// -----

// Ops keep their properties on vectors: the comparison's predicate, the
// fast-math flags; the i1 intermediate is a vector of i1 (only i1 buffers
// are refused).
// CHECK-LABEL: func.func @relu_like
// CHECK: %[[X:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x8xf32>, vector<4xf32>
// CHECK: %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK: %[[C:.*]] = arith.cmpf ogt, %[[X]], %[[Z]] : vector<4xf32>
// CHECK: %[[S:.*]] = arith.select %[[C]], %[[X]], %{{.*}} : vector<4xi1>, vector<4xf32>
// CHECK: arith.addf %[[S]], %[[X]] fastmath<fast> : vector<4xf32>
func.func @relu_like(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %c = arith.cmpf ogt, %in, %z : f32
    %s = arith.select %c, %in, %z : f32
    %f = arith.addf %s, %in fastmath<fast> : f32
    linalg.yield %f : f32
  }
  return
}

// -----

// An embedding lookup plus a position table, as GPT-2's exports spell it:
// the row's index (a token id, clamped) does not vary along the vector and
// stays a scalar; each table row is read with 16-byte vector loads at the
// lanes' column, the sum stored as one vector.
// ABSENT-LABEL: func.func @embedding
// ABSENT-NOT: linalg.generic
// ABSENT: {{^}}}
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME: %[[IDS:.*]]: memref<2x4xi64>, %[[POS:.*]]: memref<1x4xi64>, %[[WTE:.*]]: memref<50x16xbf16>, %[[WPE:.*]]: memref<8x16xbf16>, %[[OUT:.*]]: memref<2x4x16xbf16>)
// CHECK: scf.parallel (%[[B:.*]], %[[S:.*]], %[[D:.*]]) = ({{.*}}) to ({{.*}}) step (%{{.*}}, %{{.*}}, %[[C8:.*]])
// CHECK: %[[ID:.*]] = memref.load %[[IDS]][%[[B]], %[[S]]] : memref<2x4xi64>
// CHECK: %[[P:.*]] = memref.load %[[POS]][%{{.*}}, %[[S]]] : memref<1x4xi64>
// CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[PV:.*]] = vector.load %[[WPE]][%{{.*}}, %[[D]]] {alignment = 16 : i64} : memref<8x16xbf16>, vector<8xbf16>
// CHECK: %[[TV:.*]] = vector.load %[[WTE]][%{{.*}}, %[[D]]] {alignment = 16 : i64} : memref<50x16xbf16>, vector<8xbf16>
// CHECK: %[[SUM:.*]] = arith.addf %[[TV]], %[[PV]] : vector<8xbf16>
// CHECK: vector.store %[[SUM]], %[[OUT]][%[[B]], %[[S]], %[[D]]] {alignment = 16 : i64} : memref<2x4x16xbf16>, vector<8xbf16>
func.func @embedding(%ids: memref<2x4xi64>, %pos: memref<1x4xi64>, %wte: memref<50x16xbf16>, %wpe: memref<8x16xbf16>, %out: memref<2x4x16xbf16>) {
  %lo = arith.constant -50 : i64
  %hi = arith.constant 49 : i64
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c50 = arith.constant 50 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids, %pos : memref<2x4xi64>, memref<1x4xi64>) outs(%out : memref<2x4x16xbf16>) {
  ^bb0(%id: i64, %p: i64, %o: bf16):
    %0 = arith.maxsi %id, %lo : i64
    %1 = arith.minsi %0, %hi : i64
    %2 = arith.index_cast %p : i64 to index
    %3 = linalg.index 2 : index
    %4 = memref.load %wpe[%2, %3] : memref<8x16xbf16>
    %5 = arith.index_cast %1 : i64 to index
    %6 = arith.cmpi slt, %5, %c0 : index
    %7 = arith.addi %5, %c50 : index
    %8 = arith.select %6, %7, %5 : index
    %9 = memref.load %wte[%8, %3] : memref<50x16xbf16>
    %10 = arith.addf %9, %4 : bf16
    linalg.yield %10 : bf16
  }
  return
}

// -----

// A row of a table whose rows are not 16-byte aligned (12 bf16), and a
// gather that reads the output it writes, stay scalar.
// ABSENT-LABEL: func.func @gather_not_vectorized
// ABSENT-NOT: vector.
// ABSENT: {{^}}}
// CHECK-LABEL: func.func @gather_not_vectorized
// CHECK-COUNT-2: linalg.generic
func.func @gather_not_vectorized(%ids: memref<4xi64>, %narrow: memref<10x12xbf16>, %x: memref<4x16xbf16>, %y: memref<4x8xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xi64>) outs(%y : memref<4x8xbf16>) {
  ^bb0(%id: i64, %o: bf16):
    %0 = arith.index_cast %id : i64 to index
    %1 = linalg.index 1 : index
    %2 = memref.load %narrow[%0, %1] : memref<10x12xbf16>
    linalg.yield %2 : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xi64>) outs(%x : memref<4x16xbf16>) {
  ^bb0(%id: i64, %o: bf16):
    %0 = arith.index_cast %id : i64 to index
    %1 = linalg.index 1 : index
    %2 = memref.load %x[%0, %1] : memref<4x16xbf16>
    linalg.yield %2 : bf16
  }
  return
}

// -----

// A gather from a table with a leading unit dimension (its constant index
// defined outside the body, where canonicalization puts it), and an FP8
// table read into a bf16 output: the narrowest element (1 byte) sets 16
// lanes, so the table's vectors are 16 bytes and the output's 32.
// ABSENT-LABEL: func.func @gather_constant_index_fp8_table
// ABSENT-NOT: linalg.generic
// ABSENT: {{^}}}
// CHECK-LABEL: func.func @gather_constant_index_fp8_table(
// CHECK-SAME: %[[IDS:.*]]: memref<4xi64>, %[[T:.*]]: memref<1x10x32xbf16>, %[[Q:.*]]: memref<10x32xf8E4M3FN>, %[[X:.*]]: memref<4x32xbf16>, %[[Y:.*]]: memref<4x32xbf16>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = {{.*}} step (%{{.*}}, %[[C8:.*]])
// CHECK: vector.load %[[T]][%[[C0]], %{{.*}}, %[[J]]] {alignment = 16 : i64} : memref<1x10x32xbf16>, vector<8xbf16>
// CHECK: scf.parallel (%[[I2:.*]], %[[J2:.*]]) = {{.*}} step (%{{.*}}, %[[C16:.*]])
// CHECK: %[[CODES:.*]] = vector.load %[[Q]][%{{.*}}, %[[J2]]] {alignment = 16 : i64} : memref<10x32xf8E4M3FN>, vector<16xf8E4M3FN>
// CHECK: arith.extf %[[CODES]] : vector<16xf8E4M3FN> to vector<16xbf16>
// CHECK: vector.store %{{.*}}, %[[Y]][%[[I2]], %[[J2]]] {alignment = 16 : i64} : memref<4x32xbf16>, vector<16xbf16>
func.func @gather_constant_index_fp8_table(%ids: memref<4xi64>, %t: memref<1x10x32xbf16>, %q: memref<10x32xf8E4M3FN>, %x: memref<4x32xbf16>, %y: memref<4x32xbf16>) {
  %c0 = arith.constant 0 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xi64>) outs(%x : memref<4x32xbf16>) {
  ^bb0(%id: i64, %o: bf16):
    %0 = arith.index_cast %id : i64 to index
    %1 = linalg.index 1 : index
    %2 = memref.load %t[%c0, %0, %1] : memref<1x10x32xbf16>
    linalg.yield %2 : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xi64>) outs(%y : memref<4x32xbf16>) {
  ^bb0(%id: i64, %o: bf16):
    %0 = arith.index_cast %id : i64 to index
    %1 = linalg.index 1 : index
    %2 = memref.load %q[%0, %1] : memref<10x32xf8E4M3FN>
    %3 = arith.extf %2 : f8E4M3FN to bf16
    linalg.yield %3 : bf16
  }
  return
}
