//===- TransformerAttrs.td - transformer dialect attributes -*- tablegen -*-===//

#ifndef MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD
#define MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD

include "mte/Dialect/Transformer/IR/TransformerDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Transformer_EnumAttr<EnumAttrInfo enumInfo, string mnemonic>
    : EnumAttr<Transformer_Dialect, enumInfo, mnemonic> {
  let assemblyFormat = "`<` $value `>`";
}

def Transformer_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
    I32EnumAttrCase<"Mean", 0, "mean">,
    I32EnumAttrCase<"Sum", 1, "sum">,
    I32EnumAttrCase<"Max", 2, "max">,
    I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"Prod", 4, "prod">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}
def Transformer_ReduceKindAttr
    : Transformer_EnumAttr<Transformer_ReduceKind, "reduce_kind">;

def Transformer_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "elementwise comparison predicate", [
    I32EnumAttrCase<"EQ", 0, "eq">,
    I32EnumAttrCase<"NE", 1, "ne">,
    I32EnumAttrCase<"LT", 2, "lt">,
    I32EnumAttrCase<"LE", 3, "le">,
    I32EnumAttrCase<"GT", 4, "gt">,
    I32EnumAttrCase<"GE", 5, "ge">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}
def Transformer_ComparePredicateAttr
    : Transformer_EnumAttr<Transformer_ComparePredicate, "predicate">;

def Transformer_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formulation", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Tanh", 1, "tanh">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}
def Transformer_GeluApproximationAttr
    : Transformer_EnumAttr<Transformer_GeluApproximation, "gelu_approximation">;

def Transformer_Activation : I32EnumAttr<"Activation",
    "activation applied in a linear's epilogue", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Relu", 1, "relu">,
    I32EnumAttrCase<"Gelu", 2, "gelu">,
    I32EnumAttrCase<"GeluTanh", 3, "gelu_tanh">,
    I32EnumAttrCase<"Silu", 4, "silu">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}
def Transformer_ActivationAttr
    : Transformer_EnumAttr<Transformer_Activation, "activation">;

def Transformer_WeightLayout : I32EnumAttr<"WeightLayout",
    "layout of a linear's weight matrix", [
    I32EnumAttrCase<"KN", 0, "kn">,
    I32EnumAttrCase<"NK", 1, "nk">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}
def Transformer_WeightLayoutAttr
    : Transformer_EnumAttr<Transformer_WeightLayout, "weight_layout">;

def Transformer_Fp8Skip : I32EnumAttr<"Fp8Skip",
    "why mte-insert-fp8-casts left a GEMM in its float type", [
    I32EnumAttrCase<"Small", 0, "small">,
    I32EnumAttrCase<"Misaligned", 1, "misaligned">,
    I32EnumAttrCase<"DynamicWeight", 2, "dynamic_weight">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}
/// On a linear that mte-insert-fp8-casts kept in its float type: why
/// (`transformer.fp8_skipped`, read by --fusion-stats).
def Transformer_Fp8SkipAttr
    : Transformer_EnumAttr<Transformer_Fp8Skip, "fp8_skip">;

def Transformer_AmaxAlgorithm : I32EnumAttr<"AmaxAlgorithm",
    "how delayed scaling reads a tensor's amax history", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"MostRecent", 1, "most_recent">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}
/// TransformerEngine's `amax_compute_algo`: the largest amax of the window,
/// or this run's.
def Transformer_AmaxAlgorithmAttr
    : Transformer_EnumAttr<Transformer_AmaxAlgorithm, "amax_algorithm">;

/// How mte-insert-fp8-casts scales activations (mte-compile --fp8-recipe).
def Transformer_Fp8Recipe : I32EnumAttr<"Fp8Recipe",
    "how FP8 activations get their scales", [
    I32EnumAttrCase<"Current", 0, "current">,
    I32EnumAttrCase<"Delayed", 1, "delayed">,
    I32EnumAttrCase<"Block", 2, "block">,
    I32EnumAttrCase<"Rowwise", 3, "rowwise">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}

def Transformer_StateKind : I32EnumAttr<"StateKind",
    "what a model state holds", [
    I32EnumAttrCase<"Fp8AmaxHistory", 0, "fp8_amax_history">,
    I32EnumAttrCase<"Fp8Scale", 1, "fp8_scale">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::transformer";
}
def Transformer_StateKindAttr
    : Transformer_EnumAttr<Transformer_StateKind, "state_kind">;

def Transformer_ModelStateAttr : AttrDef<Transformer_Dialect, "ModelState"> {
  let mnemonic = "model_state";
  let summary = "a tensor the model carries from one run to the next";
  let description = [{
    On an argument of an entry function (`transformer.state`): the argument
    is model state, not a graph input. The runtime owns it, starts it at
    `initial`, passes it to every run and replaces it with the function
    result marked `transformer.next_state = "<name>"` after each run (unless
    the state is frozen); `mte_model_get_state` / `set_state` read and write
    it by `name`. `labels` names what each index of the last dimension holds
    (for FP8 state: the quantised tensors); `kind` says what the values are,
    which the runtime checks when they are set.
  }];
  let parameters = (ins "::mlir::StringAttr":$name,
                        "::mte::transformer::StateKindAttr":$kind,
                        "::mlir::ElementsAttr":$initial,
                        "::mlir::ArrayAttr":$labels);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Transformer_IndexCheckAttr
    : AttrDef<Transformer_Dialect, "IndexCheck"> {
  let mnemonic = "index_check";
  let summary = "an index check the runtime reports on";
  let description = [{
    Describes one `transformer.check_indices` of an entry function, in the
    order of the function's `transformer.index_checks` array and of the rows
    of its index-status result: the ONNX op and node whose indices are
    checked, the graph input they come from (empty when computed inside the
    model) and the op's bounds. The runtime names these in the error it
    returns for an out-of-range index.
  }];
  let parameters = (ins "::mlir::StringAttr":$op, "::mlir::StringAttr":$node,
                        "::mlir::StringAttr":$source,
                        ArrayRefParameter<"int64_t">:$bounds);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Transformer_WeightSliceAttr
    : AttrDef<Transformer_Dialect, "WeightSlice"> {
  let mnemonic = "weight_slice";
  let summary = "the part of a weight each rank of a sharded model holds";
  let description = [{
    On a weight argument of a sharded CUDA model's entry function (beside
    `mte.weight`, the symbol of the whole weight), set by
    mte-convert-shard-to-runtime-calls: the argument is one of `parts`
    equal slices of that weight along dimension `axis`, the one of the
    rank's index in the group of ranks over `grid_axes` (as a collective's
    group, KernelABI.h). `outer` is the product of the whole weight's
    dimensions before `axis`: the runtime takes the rank's part of each of
    the `outer` contiguous chunks when it uploads the weight, so no device
    holds the parts of its peers.

    ```mlir
    #transformer.weight_slice<axis = 1, outer = 768, parts = 2, grid_axes = [0]>
    ```
  }];
  let parameters = (ins "int64_t":$axis, "int64_t":$outer, "int64_t":$parts,
                        ArrayRefParameter<"int16_t">:$grid_axes);
  let assemblyFormat = "`<` `axis` `=` $axis `,` `outer` `=` $outer `,` "
                       "`parts` `=` $parts `,` `grid_axes` `=` `[` $grid_axes "
                       "`]` `>`";
  let genVerifyDecl = 1;
}

#endif // MTE_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD
