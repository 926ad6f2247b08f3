// RUN: mte-opt %s -split-input-file -mte-check-indices -verify-diagnostics | FileCheck %s
// RUN: mte-opt %s -split-input-file -mte-check-indices=clamp -verify-diagnostics | FileCheck %s --check-prefix=CLAMP

// An embedding lookup on a graph input: the gather reads the clamped ids,
// and the status is the function's last result.
// CHECK-LABEL: func @embedding
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x5xi64> {transformer.name = "input_ids"})
// CHECK-SAME: -> (tensor<2x5x4xf32>, tensor<1x3xi64> {transformer.index_status})
// CHECK-SAME: transformer.index_checks = [#transformer.index_check<op = "Gather", node = "/wte/Gather", source = "input_ids", bounds = 50>]
// CHECK: %[[SAFE:.*]], %[[STATUS:.*]] = transformer.check_indices %[[IDS]] {bounds = array<i64: 50>} : tensor<2x5xi64>
// CHECK: %[[OUT:.*]] = transformer.gather %{{.*}}[%[[SAFE]]]
// CHECK: %[[ROW:.*]] = transformer.reshape %[[STATUS]] : tensor<3xi64> -> tensor<1x3xi64>
// CHECK: return %[[OUT]], %[[ROW]]
// CLAMP-LABEL: func @embedding
// CLAMP-SAME: -> tensor<2x5x4xf32>
// CLAMP-NOT: index_checks
// CLAMP: %[[SAFE:.*]], %{{.*}} = transformer.check_indices
// CLAMP: transformer.gather %{{.*}}[%[[SAFE]]]
// CLAMP-NOT: transformer.reshape
// CLAMP: return %{{.*}} : tensor<2x5x4xf32>
func.func @embedding(%ids: tensor<2x5xi64> {transformer.name = "input_ids"})
    -> tensor<2x5x4xf32> {
  %table = arith.constant dense<1.0> : tensor<50x4xf32>
  %0 = transformer.gather %table[%ids] : (tensor<50x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32> loc("/wte/Gather")
  return %0 : tensor<2x5x4xf32>
}

// -----

// Every indexing op is guarded, in order; the source is followed through
// casts and reshapes, and indices computed in the model have none. GatherND
// and ScatterND get one bound per component of their index tuples.
// CHECK-LABEL: func @every_op
// CHECK-SAME: -> (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2xf32>, tensor<3x4xf32>, tensor<4x3xi64> {transformer.index_status})
// CHECK-SAME: #transformer.index_check<op = "Gather", node = "g", source = "ids", bounds = 3>
// CHECK-SAME: #transformer.index_check<op = "GatherElements", node = "ge", source = "", bounds = 3>
// CHECK-SAME: #transformer.index_check<op = "GatherND", node = "gnd", source = "tuples", bounds = 3, 4>
// CHECK-SAME: #transformer.index_check<op = "ScatterND", node = "snd", source = "tuples", bounds = 3, 4>
// CHECK: transformer.check_indices %{{.*}} {bounds = array<i64: 3>} : tensor<3xi32>
// CHECK: transformer.check_indices %{{.*}} {bounds = array<i64: 3>} : tensor<2x4xi64>
// CHECK: transformer.check_indices %{{.*}} {bounds = array<i64: 3, 4>} : tensor<2x2xi64>
// CHECK: transformer.check_indices %{{.*}} {bounds = array<i64: 3, 4>} : tensor<2x2xi64>
// CHECK: %[[TABLE:.*]] = transformer.concat %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64}
// CHECK: return {{.*}}, %[[TABLE]]
func.func @every_op(%data: tensor<3x4xf32>, %ids: tensor<3xi64> {transformer.name = "ids"},
                    %raw: tensor<2x2xi32> {transformer.name = "tuples"},
                    %updates: tensor<2xf32>)
    -> (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2xf32>, tensor<3x4xf32>) {
  %narrow = transformer.cast %ids : tensor<3xi64> to tensor<3xi32>
  %0 = transformer.gather %data[%narrow] : (tensor<3x4xf32>, tensor<3xi32>) -> tensor<3x4xf32> loc("g")
  %one = arith.constant dense<1> : tensor<2x4xi64>
  %wide = transformer.cast %raw : tensor<2x2xi32> to tensor<2x2xi64>
  %sliced = transformer.slice %wide {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 1>, strides = array<i64: 1, 1>} : tensor<2x2xi64> -> tensor<2x1xi64>
  %spread = transformer.expand %sliced : tensor<2x1xi64> -> tensor<2x4xi64>
  %computed = transformer.add %spread, %one : (tensor<2x4xi64>, tensor<2x4xi64>) -> tensor<2x4xi64>
  %1 = transformer.gather_elements %data[%computed] : (tensor<3x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32> loc("ge")
  %tuples = transformer.reshape %wide : tensor<2x2xi64> -> tensor<2x2xi64>
  %2 = transformer.gather_nd %data[%tuples] : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<2xf32> loc("gnd")
  %3 = transformer.scatter_nd %data[%tuples], %updates : (tensor<3x4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<3x4xf32> loc("snd")
  return %0, %1, %2, %3 : tensor<3x4xf32>, tensor<2x4xf32>, tensor<2xf32>, tensor<3x4xf32>
}

// -----

// Constant indices are checked at compile time: in range, nothing changes.
// CHECK-LABEL: func @constant_in_range
// CHECK-NOT: check_indices
// CHECK: return %{{.*}} : tensor<2x4xf32>
func.func @constant_in_range(%data: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %ids = arith.constant dense<[-3, 2]> : tensor<2xi64>
  %0 = transformer.gather %data[%ids] : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @constant_out_of_range(%data: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %ids = arith.constant dense<[0, 3]> : tensor<2xi64>
  // expected-error @+1 {{index 3 (element 1 of the constant indices) is outside [-3, 2]}}
  %0 = transformer.gather %data[%ids] : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @constant_tuple_out_of_range(%data: tensor<3x4xf32>) -> tensor<2xf32> {
  %ids = arith.constant dense<[[2, 3], [1, -5]]> : tensor<2x2xi64>
  // expected-error @+1 {{index -5 (element 3 of the constant indices) is outside [-4, 3]}}
  %0 = transformer.gather_nd %data[%ids] : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @empty_axis(%data: tensor<0x4xf32>, %ids: tensor<2xi64>) -> tensor<2x4xf32> {
  // expected-error @+1 {{indexes an empty dimension, so no index is valid}}
  %0 = transformer.gather %data[%ids] : (tensor<0x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Indices already guarded are left alone (the pass may run twice when no
// status was added).
// CHECK-LABEL: func @guarded
// CHECK-COUNT-1: transformer.check_indices
// CHECK-NOT: transformer.check_indices
func.func @guarded(%data: tensor<3x4xf32>, %ids: tensor<2xi64>) -> tensor<2x4xf32> {
  %safe, %status = transformer.check_indices %ids {bounds = array<i64: 3>} : tensor<2xi64>
  %0 = transformer.gather %data[%safe] : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @dynamic_table(%data: tensor<?x4xf32>, %ids: tensor<2xi64>) -> tensor<2x4xf32> {
  // expected-error @+1 {{needs static shapes to check its indices}}
  %0 = transformer.gather %data[%ids] : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
