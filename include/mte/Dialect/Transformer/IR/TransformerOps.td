//===- TransformerOps.td - transformer dialect operations --*- tablegen -*-===//
//
// Operations of the `transformer` dialect. Primitives follow ONNX semantics so
// that the importer maps nodes one-to-one; fused ops are what the recognition
// and fusion passes produce; fp8 ops carry per-tensor scaling.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD
#define MTE_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD

include "mte/Dialect/Transformer/IR/TransformerDialect.td"
include "mte/Dialect/Transformer/IR/TransformerAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Floating-point types that elementwise arithmetic is defined on. FP8 values
// only enter and leave through quantize/dequantize/cast and GEMM operands.
def Transformer_ArithFloat : AnyTypeOf<[F16, BF16, F32, F64]>;
def Transformer_Fp8 : AnyTypeOf<[F8E4M3FN, F8E5M2]>;

def Transformer_FloatTensor : RankedTensorOf<[Transformer_ArithFloat]>;
def Transformer_NumericTensor
    : RankedTensorOf<[Transformer_ArithFloat, AnySignlessInteger,
                      AnyUnsignedInteger]>;
def Transformer_SignedTensor
    : RankedTensorOf<[Transformer_ArithFloat, I8, I16, I32, I64]>;
def Transformer_BoolTensor : RankedTensorOf<[I1]>;
def Transformer_IndexTensor : RankedTensorOf<[I32, I64]>;
def Transformer_IntegerTensor
    : RankedTensorOf<[AnySignlessInteger, AnyUnsignedInteger]>;
def Transformer_Fp8Tensor : RankedTensorOf<[Transformer_Fp8]>;
def Transformer_GemmTensor
    : RankedTensorOf<[Transformer_ArithFloat, Transformer_Fp8]>;
def Transformer_ScalarF32 : 0DTensorOf<[F32]>;
// An FP8 scale: rank 0 (one per tensor) or one per block of
// transformer::kFp8BlockSize values (the ops' verifiers say which shapes).
def Transformer_Fp8ScaleTensor : RankedTensorOf<[F32]>;
// What transformer.check_indices reports: [count, first position, value].
def Transformer_IndexStatusTensor : 1DTensorOf<[I64]> {
  let builderCall = "::mlir::RankedTensorType::get({3}, $_builder.getI64Type())";
}
def Transformer_ScalarTensor : 0DTensorOf<[Transformer_ArithFloat, I32, I64]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Transformer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Transformer_Dialect, mnemonic, traits>;

// Binary elementwise op with numpy broadcasting. The result element type is
// the operands' (which must agree) unless the op overrides `resultElement`.
class Transformer_BroadcastBinaryOp<string mnemonic, TypeConstraint operandType,
                                    string resultElement = "nullptr",
                                    list<Trait> traits = []>
    : Transformer_Op<mnemonic,
                     !listconcat(traits, [Pure, InferTypeOpAdaptor])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      return inferBroadcastBinaryType(
          location, adaptor.getLhs().getType(), adaptor.getRhs().getType(),
          }] # resultElement # [{, inferredReturnTypes);
    }
  }];
}

class Transformer_UnaryOp<string mnemonic, TypeConstraint type,
                          list<Trait> traits = []>
    : Transformer_Op<mnemonic, !listconcat(traits,
          [Pure, Elementwise, SameOperandsAndResultType])> {
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Elementwise binary primitives
//===----------------------------------------------------------------------===//

def Transformer_AddOp : Transformer_BroadcastBinaryOp<"add",
    Transformer_NumericTensor, "nullptr", [Commutative]> {
  let summary = "elementwise addition with numpy broadcasting (ONNX Add)";
  let hasFolder = 1;
}
def Transformer_SubOp : Transformer_BroadcastBinaryOp<"sub",
    Transformer_NumericTensor> {
  let summary = "elementwise subtraction with numpy broadcasting (ONNX Sub)";
  let hasFolder = 1;
}
def Transformer_MulOp : Transformer_BroadcastBinaryOp<"mul",
    Transformer_NumericTensor, "nullptr", [Commutative]> {
  let summary = "elementwise multiplication with numpy broadcasting (ONNX Mul)";
  let hasFolder = 1;
}
def Transformer_DivOp : Transformer_BroadcastBinaryOp<"div",
    Transformer_NumericTensor> {
  let summary = "elementwise division with numpy broadcasting (ONNX Div)";
  let description = [{
    Integer division truncates toward zero, as ONNX Div does.
  }];
  let hasFolder = 1;
}
def Transformer_ModOp : Transformer_BroadcastBinaryOp<"mod",
    Transformer_NumericTensor> {
  let summary = "elementwise remainder with numpy broadcasting (ONNX Mod)";
  let description = [{
    With `fmod`, the remainder of truncated division (C's `fmod`: the sign
    of the dividend); without it, of floored division (Python's `%`: the
    sign of the divisor), which ONNX defines for integers only.
  }];
  let arguments = (ins Transformer_NumericTensor:$lhs,
                       Transformer_NumericTensor:$rhs, UnitAttr:$fmod);
  let hasVerifier = 1;
}
def Transformer_PowOp : Transformer_BroadcastBinaryOp<"pow",
    Transformer_NumericTensor> {
  let summary = "elementwise power with numpy broadcasting (ONNX Pow)";
  let hasFolder = 1;
}
def Transformer_MinOp : Transformer_BroadcastBinaryOp<"min",
    Transformer_NumericTensor, "nullptr", [Commutative]> {
  let summary = "elementwise minimum with numpy broadcasting (ONNX Min)";
  let description = [{
    ONNX Min is variadic; the importer chains it pairwise. A NaN operand
    propagates, as in ONNX.
  }];
}
def Transformer_MaxOp : Transformer_BroadcastBinaryOp<"max",
    Transformer_NumericTensor, "nullptr", [Commutative]> {
  let summary = "elementwise maximum with numpy broadcasting (ONNX Max)";
}
def Transformer_AndOp : Transformer_BroadcastBinaryOp<"and",
    Transformer_BoolTensor, "nullptr", [Commutative]> {
  let summary = "elementwise logical and (ONNX And)";
}
def Transformer_OrOp : Transformer_BroadcastBinaryOp<"or",
    Transformer_BoolTensor, "nullptr", [Commutative]> {
  let summary = "elementwise logical or (ONNX Or)";
}

def Transformer_CompareOp : Transformer_Op<"compare",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise comparison with numpy broadcasting";
  let description = [{
    Compares `lhs` and `rhs` elementwise under numpy broadcasting and yields an
    `i1` tensor (ONNX Equal, Greater, Less, GreaterOrEqual, LessOrEqual).

    ```mlir
    %m = transformer.compare <lt> %a, %b
        : (tensor<4x1xi64>, tensor<1x4xi64>) -> tensor<4x4xi1>
    ```
  }];
  let arguments = (ins Transformer_ComparePredicateAttr:$predicate,
                       Transformer_NumericTensor:$lhs,
                       Transformer_NumericTensor:$rhs);
  let results = (outs Transformer_BoolTensor:$result);
  let assemblyFormat = "$predicate $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
}

def Transformer_WhereOp : Transformer_Op<"where", [Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise select with three-way numpy broadcasting";
  let description = [{
    `result = condition ? true_value : false_value` (ONNX Where); the three
    operands broadcast together.
  }];
  let arguments = (ins Transformer_BoolTensor:$condition,
                       AnyRankedTensor:$true_value,
                       AnyRankedTensor:$false_value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$condition `,` $true_value `,` $false_value attr-dict "
                       "`:` functional-type(operands, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary primitives
//===----------------------------------------------------------------------===//

def Transformer_SqrtOp : Transformer_UnaryOp<"sqrt", Transformer_FloatTensor> {
  let summary = "elementwise square root (ONNX Sqrt)";
}
def Transformer_RsqrtOp : Transformer_UnaryOp<"rsqrt", Transformer_FloatTensor> {
  let summary = "elementwise reciprocal square root";
}
def Transformer_ReciprocalOp
    : Transformer_UnaryOp<"reciprocal", Transformer_FloatTensor> {
  let summary = "elementwise 1/x (ONNX Reciprocal)";
}
def Transformer_ExpOp : Transformer_UnaryOp<"exp", Transformer_FloatTensor> {
  let summary = "elementwise exponential (ONNX Exp)";
}
def Transformer_LogOp : Transformer_UnaryOp<"log", Transformer_FloatTensor> {
  let summary = "elementwise natural logarithm (ONNX Log)";
}
def Transformer_ErfOp : Transformer_UnaryOp<"erf", Transformer_FloatTensor> {
  let summary = "elementwise error function (ONNX Erf)";
}
def Transformer_TanhOp : Transformer_UnaryOp<"tanh", Transformer_FloatTensor> {
  let summary = "elementwise hyperbolic tangent (ONNX Tanh)";
}
def Transformer_SigmoidOp
    : Transformer_UnaryOp<"sigmoid", Transformer_FloatTensor> {
  let summary = "elementwise logistic sigmoid (ONNX Sigmoid)";
}
def Transformer_SinOp : Transformer_UnaryOp<"sin", Transformer_FloatTensor> {
  let summary = "elementwise sine (ONNX Sin; rotary tables)";
}
def Transformer_CosOp : Transformer_UnaryOp<"cos", Transformer_FloatTensor> {
  let summary = "elementwise cosine (ONNX Cos; rotary tables)";
}
def Transformer_FloorOp : Transformer_UnaryOp<"floor", Transformer_FloatTensor> {
  let summary = "elementwise floor (ONNX Floor)";
}
def Transformer_NegOp : Transformer_UnaryOp<"neg", Transformer_SignedTensor> {
  let summary = "elementwise negation (ONNX Neg)";
  let hasFolder = 1;
}
def Transformer_AbsOp : Transformer_UnaryOp<"abs", Transformer_SignedTensor> {
  let summary = "elementwise absolute value (ONNX Abs)";
}
def Transformer_SignOp : Transformer_UnaryOp<"sign", Transformer_SignedTensor> {
  let summary = "elementwise sign: -1, 0 or 1 (ONNX Sign)";
  let description = [{
    NaN stays NaN and a zero keeps its sign bit, as numpy's `sign`.
  }];
}
def Transformer_ReluOp : Transformer_UnaryOp<"relu", Transformer_SignedTensor> {
  let summary = "elementwise max(x, 0) (ONNX Relu)";
}
def Transformer_NotOp : Transformer_UnaryOp<"not", Transformer_BoolTensor> {
  let summary = "elementwise logical negation (ONNX Not)";
}

def Transformer_IsNanOp : Transformer_Op<"is_nan", [Pure, Elementwise]> {
  let summary = "elementwise NaN test (ONNX IsNaN)";
  let arguments = (ins Transformer_FloatTensor:$input);
  let results = (outs Transformer_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Transformer_ClipOp : Transformer_UnaryOp<"clip", Transformer_NumericTensor> {
  let summary = "elementwise clamp to [min, max] (ONNX Clip)";
  let description = [{
    Clamps every element to `[min, max]`; a missing bound is unbounded. The
    bounds are attributes: exporters always give constant bounds, and the
    importer rejects a Clip whose bounds are computed.
  }];
  let arguments = (ins Transformer_NumericTensor:$input,
                       OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let hasVerifier = 1;
}

def Transformer_CastOp : Transformer_Op<"cast", [Pure, Elementwise]> {
  let summary = "elementwise element-type conversion (ONNX Cast, CastLike)";
  let description = [{
    Converts each element to the result's element type with ONNX Cast
    semantics: float to integer truncates toward zero, to `i1` tests `!= 0`,
    and float narrowing rounds to nearest even (fp8 targets saturate).
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

def Transformer_MatmulOp : Transformer_Op<"matmul",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "batched matrix product with numpy semantics (ONNX MatMul)";
  let description = [{
    Multiplies the two innermost dimensions; leading (batch) dimensions
    broadcast as in numpy. A rank-1 `lhs` is promoted to a row vector and a
    rank-1 `rhs` to a column vector, and the added dimension is removed from
    the result, as `numpy.matmul` does.
  }];
  let arguments = (ins Transformer_NumericTensor:$lhs,
                       Transformer_NumericTensor:$rhs);
  let results = (outs Transformer_NumericTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Transformer_ReduceOp : Transformer_Op<"reduce",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "reduction over a set of axes (ONNX ReduceMean/Sum/Max/...)";
  let description = [{
    Reduces `input` over `axes` (negative values count from the back; empty
    means all axes) with `kind`. With `keepdims` the reduced axes stay as
    size 1.

    ```mlir
    %m = transformer.reduce <mean> %x {axes = array<i64: -1>}
        : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
    ```
  }];
  let arguments = (ins Transformer_ReduceKindAttr:$kind,
                       Transformer_NumericTensor:$input,
                       DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Transformer_NumericTensor:$result);
  let assemblyFormat =
      "$kind $input attr-dict `:` functional-type(operands, results)";
}

def Transformer_SoftmaxOp : Transformer_Op<"softmax",
    [Pure, SameOperandsAndResultType]> {
  let summary = "softmax along one axis (ONNX Softmax-13)";
  let arguments = (ins Transformer_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Transformer_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Transformer_TransposeOp : Transformer_Op<"transpose",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "permutes dimensions (ONNX Transpose)";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input $permutation attr-dict `:` "
                       "type($input) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Transformer_ReshapeOp : Transformer_Op<"reshape", [Pure]> {
  let summary = "reinterprets a tensor with a new static shape";
  let description = [{
    Row-major reshape to the result type's shape (ONNX Reshape, Flatten,
    Squeeze, Unsqueeze). The importer resolves ONNX's `0` and `-1` target
    entries, so both shapes are static and hold the same number of elements.
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Transformer_ExpandOp : Transformer_Op<"expand", [Pure]> {
  let summary = "broadcasts a tensor to a larger static shape (ONNX Expand)";
  let description = [{
    Broadcasts `input` to the result shape under numpy rules: the result shape
    is the broadcast of the input's shape with itself, so it may add leading
    dimensions and stretch size-1 dimensions only.
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Transformer_SliceOp : Transformer_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "strided slice, one (offset, size, stride) per dimension";
  let description = [{
    `result[i0, ..., in] = input[offsets[0] + i0 * strides[0], ...]`. Strides
    are non-zero and may be negative (ONNX Slice with negative steps). The
    importer resolves ONNX's clamping of starts and ends into this normal form,
    which lists every dimension.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes,
                       DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Transformer_ConcatOp : Transformer_Op<"concat",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "concatenates tensors along an axis (ONNX Concat)";
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasFolder = 1;
}

def Transformer_SplitOp : Transformer_Op<"split", [Pure, InferTypeOpAdaptor]> {
  let summary = "splits a tensor along an axis into pieces of given sizes";
  let description = [{
    ONNX Split with its `split` sizes resolved (from the attribute, the input
    or an even division by the number of outputs).
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasCanonicalizer = 1;
}

def Transformer_GatherOp : Transformer_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "gathers slices along an axis by index (ONNX Gather)";
  let description = [{
    `result.shape = data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end of the axis.
  }];
  let arguments = (ins AnyRankedTensor:$data, Transformer_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `[` $indices `]` attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
}

def Transformer_GatherNDOp : Transformer_Op<"gather_nd",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "gathers slices by index tuples (ONNX GatherND)";
  let description = [{
    With `b = batch_dims` and `indices` of shape `[..., k]`, each index
    tuple of `k` values picks a slice of `data` along its dimensions
    `b .. b + k - 1`; the first `b` dimensions of `data` and `indices` are
    batch dimensions taken together:
    `result.shape = indices.shape[:-1] + data.shape[b + k:]`. Negative
    indices count from the end.
  }];
  let arguments = (ins AnyRankedTensor:$data, Transformer_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `[` $indices `]` attr-dict `:` "
                       "functional-type(operands, results)";
}

def Transformer_ScatterNDOp : Transformer_Op<"scatter_nd",
    [Pure, AllTypesMatch<["data", "result"]>]> {
  let summary = "writes slices at index tuples (ONNX ScatterND)";
  let description = [{
    `result` is `data` with, for each index tuple `indices[u]` (shape
    `[..., k]`), the slice `data[indices[u]]` replaced by (or, with
    `reduction`, combined with) `updates[u]`, where `updates.shape =
    indices.shape[:-1] + data.shape[k:]`. Negative indices count from the
    end. With no reduction, a position named twice takes the last update.
  }];
  let arguments = (ins AnyRankedTensor:$data, Transformer_IndexTensor:$indices,
                       AnyRankedTensor:$updates,
                       OptionalAttr<Transformer_ReduceKindAttr>:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `[` $indices `]` `,` $updates attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Transformer_GatherElementsOp : Transformer_Op<"gather_elements",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise gather along an axis (ONNX GatherElements)";
  let arguments = (ins AnyRankedTensor:$data, Transformer_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$data `[` $indices `]` attr-dict `:` "
                       "functional-type(operands, results)";
}

def Transformer_CheckIndicesOp : Transformer_Op<"check_indices",
    [Pure, AllTypesMatch<["indices", "clamped"]>]> {
  let summary = "clamps indices into their range and reports those outside it";
  let description = [{
    Guards the index operand of a gather or scatter whose indices come from
    the model's inputs. An index `v` at flat position `p` is valid when
    `-b <= v < b`, where `b` is `bounds[0]` when `bounds` has one entry and
    `bounds[p mod k]` when it has `k` entries, `k` being the size of the
    last dimension of `indices` (GatherND's index tuples, one bound per
    component). `clamped` is `indices` with every value clamped into
    `[-b, b - 1]`, so the consumer never reads outside its table;
    `status` is `[number of invalid indices, flat position of the first,
    its value]`, or `[0, -1, 0]` when all are valid. mte-check-indices
    inserts the op and returns the statuses from the entry function, which
    the runtime reads after the run.

    ```mlir
    %safe, %status = transformer.check_indices %ids {bounds = array<i64: 50257>}
        : tensor<1x16xi64>
    ```
  }];
  let arguments = (ins Transformer_IndexTensor:$indices,
                       DenseI64ArrayAttr:$bounds);
  let results = (outs Transformer_IndexTensor:$clamped,
                      Transformer_IndexStatusTensor:$status);
  let assemblyFormat = "$indices attr-dict `:` type($indices)";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$indices,
                   "::llvm::ArrayRef<int64_t>":$bounds)>
  ];
  let hasVerifier = 1;
}

def Transformer_ConvOp : Transformer_Op<"conv",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d convolution, channels first (ONNX Conv)";
  let description = [{
    `input` is `[N, C, D1, .., Dn]`, `weight` `[M, C / group, K1, .., Kn]`,
    the optional `bias` `[M]`; `pads` holds the begin then the end padding
    of each spatial dimension (zeros), and output dimension `i` is
    `(Di + begin_i + end_i - dilation_i * (Ki - 1) - 1) / stride_i + 1`.
    Output channel `m` reads input channels of group `m / (M / group)`.
  }];
  let arguments = (ins Transformer_FloatTensor:$input,
                       Transformer_FloatTensor:$weight,
                       Optional<Transformer_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Transformer_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`bias` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
}

def Transformer_CumSumOp : Transformer_Op<"cumsum",
    [Pure, SameOperandsAndResultType]> {
  let summary = "cumulative sum along one axis (ONNX CumSum)";
  let description = [{
    `result[.., i, ..] = sum(input[.., j, ..])` over `j <= i` along `axis`;
    `j < i` with `exclusive`; `j >= i` (`j > i`) with `reverse`. 16-bit
    floats accumulate in f32.
  }];
  let arguments = (ins Transformer_NumericTensor:$input, I64Attr:$axis,
                       UnitAttr:$exclusive, UnitAttr:$reverse);
  let results = (outs Transformer_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Transformer_TopKOp : Transformer_Op<"topk", [Pure]> {
  let summary = "the k largest or smallest elements along one axis (ONNX TopK)";
  let description = [{
    `values` holds the `k` largest (`largest`) or smallest elements of
    `input` along `axis`, in that order, and `indices` their positions
    along the axis. Equal elements keep their order: the lower index comes
    first (as ONNX specifies). NaN orders above every number (as the
    largest value), and NaNs among themselves by index.
  }];
  let arguments = (ins Transformer_NumericTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$k,
                       I64Attr:$axis, BoolAttr:$largest);
  let results = (outs Transformer_NumericTensor:$values,
                      RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` "
                       "type($values) `,` type($indices)";
  let hasVerifier = 1;
}

def Transformer_TriluOp : Transformer_Op<"trilu",
    [Pure, SameOperandsAndResultType]> {
  let summary = "keeps the upper or lower triangle of the last two dims";
  let description = [{
    ONNX Trilu: with `upper`, keeps elements with `col - row >= k`, otherwise
    those with `col - row <= k`; the rest become zero.
  }];
  let arguments = (ins AnyRankedTensor:$input, BoolAttr:$upper,
                       DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape-computing primitives (folded away once shapes are static)
//===----------------------------------------------------------------------===//

def Transformer_ShapeOp : Transformer_Op<"shape", [Pure, InferTypeOpAdaptor]> {
  let summary = "the shape of a tensor as a 1-D i64 tensor (ONNX Shape)";
  let arguments = (ins AnyRankedTensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs 1DTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The [start, end) dimension range after ONNX's clamping.
    static std::pair<int64_t, int64_t>
    getDimRange(int64_t rank, int64_t start, std::optional<int64_t> end);
  }];
}

def Transformer_SizeOp : Transformer_Op<"size", [Pure]> {
  let summary = "the number of elements of a tensor (ONNX Size)";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs 0DTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Transformer_RangeOp : Transformer_Op<"range", [Pure]> {
  let summary = "arithmetic sequence (ONNX Range)";
  let description = [{
    `result[i] = start + i * delta`; the result length is
    `max(ceil((limit - start) / delta), 0)` and must match the static result
    type when the operands are constants.
  }];
  let arguments = (ins Transformer_ScalarTensor:$start,
                       Transformer_ScalarTensor:$limit,
                       Transformer_ScalarTensor:$delta);
  let results = (outs 1DTensorOf<[Transformer_ArithFloat, I32, I64]>:$result);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Transformer_ConstantOfShapeOp : Transformer_Op<"constant_of_shape",
    [Pure]> {
  let summary = "a tensor filled with one value (ONNX ConstantOfShape)";
  let description = [{
    The result type gives the static shape; `shape` is the 1-D tensor ONNX
    computed it from and is checked against it when constant.
  }];
  let arguments = (ins 1DTensorOf<[I64]>:$shape, TypedAttrInterface:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$shape `,` $value attr-dict `:` "
                       "type($shape) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Fused Transformer operations
//===----------------------------------------------------------------------===//

def Transformer_LayerNormOp : Transformer_Op<"layer_norm",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "layer normalization, optionally fused with a residual add";
  let description = [{
    Normalises over the dimensions from `axis` to the last:

        s = residual ? input + residual : input
        output = (s - mean(s)) / sqrt(var(s) + epsilon) * scale + bias

    `scale` and `bias` have the shape of the normalised dimensions. With a
    `residual` operand the sum `s` is the second result, which the next block
    consumes (add + norm fusion). The output element type may differ from the
    input's (the norm writes the following GEMM's input type); the statistics
    are computed in f32 at least.
  }];
  let arguments = (ins Transformer_FloatTensor:$input,
                       Transformer_FloatTensor:$scale,
                       Optional<Transformer_FloatTensor>:$bias,
                       Optional<Transformer_FloatTensor>:$residual,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       F32Attr:$epsilon);
  let results = (outs Transformer_GemmTensor:$output,
                      Optional<Transformer_FloatTensor>:$residual_sum);
  let assemblyFormat = "$input `,` $scale (`bias` $bias^)? "
                       "(`residual` $residual^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Transformer_RMSNormOp : Transformer_Op<"rms_norm", [Pure]> {
  let summary = "RMS normalization, optionally fused with a residual add";
  let description = [{
    Normalises over the dimensions from `axis` to the last:

        s = residual ? input + residual : input
        output = s / sqrt(mean(s * s) + epsilon) * scale

    With a `residual` operand the sum `s` is the second result.
  }];
  let arguments = (ins Transformer_FloatTensor:$input,
                       Transformer_FloatTensor:$scale,
                       Optional<Transformer_FloatTensor>:$residual,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       F32Attr:$epsilon);
  let results = (outs Transformer_GemmTensor:$output,
                      Optional<Transformer_FloatTensor>:$residual_sum);
  let assemblyFormat = "$input `,` $scale (`residual` $residual^)? attr-dict "
                       "`:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Transformer_LinearOp : Transformer_Op<"linear",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "GEMM with bias, activation and residual epilogue";
  let description = [{
    `output = activation(input · W + bias) + residual`, where `input` is
    `[..., K]`, `W` is the weight read as `K x N` (`weight_layout = kn`, as
    ONNX MatMul stores it) or `N x K` (`nk`, as Gemm with transB and PyTorch's
    nn.Linear store it), `bias` is `[N]` and `residual` has the output's
    shape. Accumulation is in f32; the output element type is the result
    type's, so a linear can write bf16 from fp8 operands.

    An fp8 `input` or `weight` may carry its per-tensor dequantisation
    factor (`input_scale`, `weight_scale`: ONNX DequantizeLinear's scale,
    TransformerEngine's `scale_inv`); the product is then multiplied by both
    before the bias: `activation((input · W) * input_scale * weight_scale +
    bias) + residual`, which is what cuBLASLt's A/B scale pointers compute.
    An absent scale is 1.

    Block-scaled (TransformerEngine's Float8BlockScaling, cuBLASLt's VEC128
    and BLK128x128 scale modes): `input_scale` is `[..., K / 128]`, one
    factor per 1 x 128 block of the input's rows, and `weight_scale` is
    `[ceil(N / 128), K / 128]`, one per 128 x 128 block of W (laid out
    `nk`); K is a multiple of 128 and both scales are given. Each block's partial
    product is scaled before it is summed:
    `sum_b (sum_{k in b} input[m, k] W[k, n]) * input_scale[m, b] *
    weight_scale[n / 128, b]`.

    Row-scaled (torchao's rowwise recipe, cuBLASLt's OUTER_VEC_32F scale
    mode): `input_scale` is `[..., 1]`, one factor per row of the input,
    and `weight_scale` is `[N]`, one per output channel (W laid out `nk`):
    `(input · W)[m, n] * input_scale[m] * weight_scale[n]`, the scales an
    outer product applied to the f32 sum.

    With an `output_scale` (a per-tensor fp8 input; TransformerEngine's
    `scale` of the tensor the output feeds), the output is E4M3:
    `saturate(cast<f8E4M3FN>(y * output_scale))` of the f32 value `y` the
    epilogue computes, rounded once (cuBLASLt's D scale: no 16-bit step in
    between), and the optional `output_amax` result is `max(|y|)` before
    the scale (cuBLASLt's `AMAX_D`; NaN propagates). The GEMM then writes
    what a following `quantize` and `amax` would have read, without the
    16-bit tensor between them (`mte-fuse-linear-fp8-output`).

    ```mlir
    %y = transformer.linear %x, %w bias %b layout <nk> activation <gelu>
        : (tensor<8x128x768xbf16>, tensor<3072x768xbf16>, tensor<3072xbf16>)
          -> tensor<8x128x3072xbf16>
    ```
  }];
  let arguments = (ins Transformer_GemmTensor:$input,
                       Transformer_GemmTensor:$weight,
                       Optional<Transformer_FloatTensor>:$bias,
                       Optional<Transformer_FloatTensor>:$residual,
                       Optional<Transformer_Fp8ScaleTensor>:$input_scale,
                       Optional<Transformer_Fp8ScaleTensor>:$weight_scale,
                       Optional<Transformer_ScalarF32>:$output_scale,
                       Transformer_WeightLayoutAttr:$weight_layout,
                       DefaultValuedAttr<Transformer_ActivationAttr,
                           "::mte::transformer::Activation::None">:$activation);
  let results = (outs Transformer_GemmTensor:$output,
                      Optional<Transformer_ScalarF32>:$output_amax);
  let assemblyFormat = "$input `,` $weight (`bias` $bias^)? "
                       "(`residual` $residual^)? "
                       "(`input_scale` $input_scale^)? "
                       "(`weight_scale` $weight_scale^)? "
                       "(`output_scale` $output_scale^)? `layout` $weight_layout "
                       "(`activation` $activation^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [
    // A linear writing a 16- or 32-bit output (no output scale or amax).
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$input,
                   "::mlir::Value":$weight, "::mlir::Value":$bias,
                   "::mlir::Value":$residual, "::mlir::Value":$input_scale,
                   "::mlir::Value":$weight_scale,
                   "::mte::transformer::WeightLayoutAttr":$weight_layout,
                   "::mte::transformer::ActivationAttr":$activation), [{
      build($_builder, $_state, output, /*output_amax=*/::mlir::Type(), input,
            weight, bias, residual, input_scale, weight_scale,
            /*output_scale=*/::mlir::Value(), weight_layout, activation);
    }]>,
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$input,
                   "::mlir::Value":$weight, "::mlir::Value":$bias,
                   "::mlir::Value":$residual, "::mlir::Value":$input_scale,
                   "::mlir::Value":$weight_scale,
                   "::mte::transformer::WeightLayout":$weight_layout,
                   "::mte::transformer::Activation":$activation), [{
      build($_builder, $_state, output, /*output_amax=*/::mlir::Type(), input,
            weight, bias, residual, input_scale, weight_scale,
            /*output_scale=*/::mlir::Value(), weight_layout, activation);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether the GEMM writes E4M3 through an output scale.
    bool hasFp8Output() { return static_cast<bool>(getOutputScale()); }
    /// The output's type (the amax, if any, is a scalar).
    ::mlir::RankedTensorType getType() { return getOutput().getType(); }

    /// Whether the fp8 scales are per 128 x 128 block of the weight (and
    /// 1 x 128 of the input) rather than per tensor.
    bool isBlockScaled() { return getWeightScaleRank() == 2; }
    /// Whether the fp8 scales are per output channel of the weight and per
    /// row of the input.
    bool isRowScaled() { return getWeightScaleRank() == 1; }
    /// Whether the fp8 scales (if any) are per tensor.
    bool hasTensorScales() { return getWeightScaleRank() == 0; }
    /// The rank of the weight's scale: 0 per tensor (or none), 1 per
    /// channel, 2 per block.
    int64_t getWeightScaleRank() {
      return getWeightScale()
                 ? ::llvm::cast<::mlir::RankedTensorType>(
                       getWeightScale().getType()).getRank()
                 : 0;
    }
  }];
}

def Transformer_AttentionOp : Transformer_Op<"attention", [Pure]> {
  let summary = "multi-head scaled dot-product attention, with GQA";
  let description = [{
    `query` is `[B, Sq, Hq * D]`, `key` `[B, Skv, Hkv * D]` and `value`
    `[B, Skv, Hkv * Dv]`, heads packed in the last dimension as the
    projections produce them. Each query head `h` attends to key/value head
    `h / (Hq / Hkv)`:

        scores = scale * Q_h · K_hᵀ
        scores = softcap * tanh(scores / softcap)   (with `softcap`)
        scores = scores (+ mask)  (causal: -inf above diagonal)
        output_h = softmax(scores) · V_h

    The output is `[B, Sq, Hq * Dv]`. `mask` broadcasts to `[B, Hq, Sq, Skv]`:
    an `i1` mask keeps the positions where it is true, a float mask is added
    to the scores. `causal` aligns the diagonal to the bottom right (the last
    query sees every key), as with a KV cache. A query that sees no key at
    all (every score masked to -inf) gets a zero output, as PyTorch's
    scaled_dot_product_attention guarantees and its ONNX export spells with
    IsNaN + Where. `softcap` (Gemma 2's attention logit softcapping) bounds
    the scaled scores to (-softcap, softcap) before the mask, which still
    hides what it hides.
  }];
  let arguments = (ins Transformer_FloatTensor:$query,
                       Transformer_FloatTensor:$key,
                       Transformer_FloatTensor:$value,
                       Optional<AnyRankedTensor>:$mask,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_kv_heads,
                       F32Attr:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<F32Attr>:$softcap);
  let results = (outs Transformer_FloatTensor:$output);
  let assemblyFormat = "$query `,` $key `,` $value (`mask` $mask^)? attr-dict "
                       "`:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Transformer_RotaryEmbeddingOp : Transformer_Op<"rotary_embedding", [Pure]> {
  let summary = "rotary position embedding (RoPE)";
  let description = [{
    Rotates the first `rotary_dim` features of every head by position-dependent
    angles. `input` is `[B, H, S, D]`, or `[B, S, H * D]` with `num_heads`
    set. `cos` and `sin` are `[S, W]` or `[B, S, W]` tables. Without
    `interleaved`, feature `i` pairs with `i + rotary_dim / 2` (the
    rotate_half form of GPT-NeoX and Llama); with it, feature `2i` pairs with
    `2i + 1` (GPT-J):

        x1' = x1 * cos1 - x2 * sin1
        x2' = x2 * cos2 + x1 * sin2

    With half-width tables (`W = rotary_dim / 2`) both features of a pair
    read the pair's column (`cos1 = cos2`). With full-width tables
    (`W = rotary_dim`, as Hugging Face models compute `cat(freqs, freqs)`)
    every feature reads its own column, which is exactly
    `x * cos + rotate_half(x) * sin`.
  }];
  let arguments = (ins Transformer_FloatTensor:$input,
                       Transformer_FloatTensor:$cos,
                       Transformer_FloatTensor:$sin,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$num_heads,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$rotary_dim,
                       UnitAttr:$interleaved);
  let results = (outs Transformer_FloatTensor:$output);
  let assemblyFormat = "$input `,` $cos `,` $sin attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Transformer_GeluOp : Transformer_Op<"gelu",
    [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = none`: `0.5 x (1 + erf(x / √2))`;
    `approximate = tanh`: `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`.
  }];
  let arguments = (ins Transformer_FloatTensor:$input,
                       DefaultValuedAttr<Transformer_GeluApproximationAttr,
                           "::mte::transformer::GeluApproximation::None">:$approximate);
  let results = (outs Transformer_FloatTensor:$result);
  let assemblyFormat =
      "$input (`approximate` $approximate^)? attr-dict `:` type($result)";
}

def Transformer_SiluOp : Transformer_UnaryOp<"silu", Transformer_FloatTensor> {
  let summary = "x · sigmoid(x)";
}

def Transformer_SwigluOp : Transformer_Op<"swiglu",
    [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "silu(gate) · up, the gated MLP activation of Llama";
  let arguments = (ins Transformer_FloatTensor:$gate,
                       Transformer_FloatTensor:$up);
  let results = (outs Transformer_FloatTensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def Transformer_GegluOp : Transformer_Op<"geglu",
    [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "gelu(gate) · up, the gated MLP activation of Gemma and T5 v1.1";
  let description = [{
    `approximate` selects the GELU as in `transformer.gelu` (Gemma's is
    `tanh`, T5 v1.1's `gelu_new` too).
  }];
  let arguments = (ins Transformer_FloatTensor:$gate,
                       Transformer_FloatTensor:$up,
                       DefaultValuedAttr<Transformer_GeluApproximationAttr,
                           "::mte::transformer::GeluApproximation::None">:$approximate);
  let results = (outs Transformer_FloatTensor:$result);
  let assemblyFormat = "$gate `,` $up (`approximate` $approximate^)? attr-dict "
                       "`:` type($result)";
}

//===----------------------------------------------------------------------===//
// FP8
//===----------------------------------------------------------------------===//

def Transformer_QuantizeOp : Transformer_Op<"quantize",
    [Pure, AllShapesMatch<["input", "result"]>]> {
  let summary = "converts to fp8 with a per-tensor scale";
  let description = [{
    `result = saturate(cast<fp8>(input / scale))`: `scale` is the per-tensor
    dequantisation factor (ONNX QuantizeLinear's `y_scale`; TransformerEngine's
    `scale_inv`). With `multiply`, `result = saturate(cast<fp8>(input *
    scale))`: `scale` is the quantisation factor, TransformerEngine's `scale`
    (its cast_to_fp8), whose reciprocal the GEMM reads; one multiply an
    element where the division costs a dozen instructions, and a different
    rounding, so the two are separate forms. Values beyond the fp8 range
    clamp to its largest finite value when `saturate` is set, and become NaN
    (E4M3) or inf (E5M2) otherwise.

    A `scale` of shape `[..., G]` for an input `[..., K]` (K a multiple of
    G, the other dimensions the input's) holds one factor per 1 x (K / G)
    block of the last dimension: element `[..., k]` uses `scale[..., k /
    (K / G)]`. G = K / 128 is TransformerEngine's 1-D block scaling, G = 1
    one factor per row (the rowwise recipe).
  }];
  let arguments = (ins Transformer_FloatTensor:$input,
                       Transformer_Fp8ScaleTensor:$scale,
                       DefaultValuedAttr<BoolAttr, "true">:$saturate,
                       UnitAttr:$multiply);
  let results = (outs Transformer_Fp8Tensor:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the scale is per block of each row (1 x 128, or the whole
    /// row) rather than per tensor.
    bool isBlockScaled() { return getScale().getType().getRank() != 0; }
    /// The values each factor of a block scale covers along the last
    /// dimension: K / G.
    int64_t getBlockLength() {
      return getInput().getType().getShape().back() /
             getScale().getType().getShape().back();
    }
  }];
}

def Transformer_DequantizeOp : Transformer_Op<"dequantize",
    [Pure, AllShapesMatch<["input", "result"]>]> {
  let summary = "converts from fp8 with a per-tensor scale";
  let description = [{
    `result = cast<float>(input) * scale` (ONNX DequantizeLinear).
  }];
  let arguments = (ins Transformer_Fp8Tensor:$input,
                       Transformer_ScalarF32:$scale);
  let results = (outs Transformer_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale attr-dict `:` "
                       "functional-type(operands, results)";
}

def Transformer_AmaxOp : Transformer_Op<"amax", [Pure]> {
  let summary = "the largest absolute value of a tensor, as f32";
  let description = [{
    `max(|input|)` over all elements, as a rank-0 f32 tensor; NaN propagates.
    Delayed scaling records it into the amax history
    (`transformer.fp8_scale_update`).
  }];
  let arguments = (ins Transformer_FloatTensor:$input);
  let results = (outs Transformer_ScalarF32:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Transformer_BlockAmaxOp : Transformer_Op<"block_amax", [Pure]> {
  let summary = "the largest absolute value of each block of a row, as f32";
  let description = [{
    For an input `[..., K]` (K a multiple of `block_size`), `result[..., b]
    = max(|input[..., b * block_size : (b + 1) * block_size]|)`; NaN
    propagates. Block scaling's scales (`block_size` 128) and rowwise
    scaling's (`block_size` K, one per row) come from it
    (`transformer.fp8_scale`).
  }];
  let arguments = (ins Transformer_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$block_size);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Transformer_Fp8ScaleOp : Transformer_Op<"fp8_scale",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "the FP8 scale and scale_inv of a tensor";
  let description = [{
    TransformerEngine's per-tensor scale for the quantisation of one tensor,
    and `scale_inv = 1 / scale`, what the GEMM reads. One op, so that both
    scales come from one kernel. Exactly one of:

    * `amax` (current scaling): `scale = fp8_max / amax` when `amax` is
      finite and positive (an infinite quotient becomes the largest f32),
      else 1 (TE's Float8CurrentScaling keeps such a tensor at scale 1);
    * `delayed` (delayed scaling's scales, from the model's state, set by
      earlier runs): `scale = delayed` when it is finite and positive, else
      1. It does not depend on the run's values, so the tensor's producer
      can quantise as it writes.

    Either may be any f32 tensor (block scaling's amaxes, one per block; a
    delayed state's scales, one per quantised tensor, computed at once):
    the rule applies to each element. With `power_of_two`, `scale` keeps only
    its sign and exponent (rounded down to a power of two, as
    TransformerEngine's block scaling does by default), so that quantising
    and dequantising by it are exact.
  }];
  let arguments = (ins Optional<RankedTensorOf<[F32]>>:$amax,
                       Optional<RankedTensorOf<[F32]>>:$delayed,
                       F32Attr:$fp8_max,
                       UnitAttr:$power_of_two);
  let results = (outs RankedTensorOf<[F32]>:$scale,
                      RankedTensorOf<[F32]>:$scale_inv);
  let assemblyFormat = "($amax^)? (`delayed` $delayed^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Transformer_Fp8ScaleUpdateOp : Transformer_Op<"fp8_scale_update",
    [Pure]> {
  let summary = "delayed scaling: record this run's amaxes, next scales";
  let description = [{
    TransformerEngine's delayed-scaling update for `T` quantised tensors at
    once. `history` is `[L, T]`, row 0 the current slot; `amax` `[T]` this
    run's amaxes; `scale` `[T]` the scales (multipliers, TE's `scale`) this
    run used. With `h` the history whose row 0 is `amax`:

    * the window's amax is `max` over the rows of `h` (`max`, NaN
      propagating) or `h[0]` (`most_recent`);
    * `next_scale = (fp8_max / 2^margin) / window` when the window's amax is
      finite and positive (an infinite quotient becomes the largest f32),
      else `scale` (TE keeps the previous scale);
    * `next_history` is `h` rolled by one towards row 0, with row 0 zeroed:
      `next[L-1] = h[0]`, `next[i] = h[i+1]` for `0 < i < L-1`, `next[0] =
      0` (TE's `roll(-1)` and reset).
  }];
  let arguments = (ins 2DTensorOf<[F32]>:$history,
                       1DTensorOf<[F32]>:$amax,
                       1DTensorOf<[F32]>:$scale,
                       F32Attr:$fp8_max,
                       I64Attr:$margin,
                       Transformer_AmaxAlgorithmAttr:$algorithm);
  let results = (outs 2DTensorOf<[F32]>:$next_history,
                      1DTensorOf<[F32]>:$next_scale);
  let assemblyFormat = "$history `,` $amax `,` $scale attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // MTE_DIALECT_TRANSFORMER_IR_TRANSFORMEROPS_TD
