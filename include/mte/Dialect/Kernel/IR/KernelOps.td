//===- KernelOps.td - calls of hand-built kernels on tensors -*- tablegen -*-===//
//
// The `kernel` dialect: the CUDA backend's requests for kernels it builds
// itself (row kernels) or takes from the runtime (fused attention), made on
// tensors before bufferization. A request is an op that bufferization
// understands, so that the buffers a kernel reads are read where it runs.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_DIALECT_KERNEL_IR_KERNELOPS_TD
#define MTE_DIALECT_KERNEL_IR_KERNELOPS_TD

include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"

def Kernel_Dialect : Dialect {
  let name = "kernel";
  let cppNamespace = "::mte::kernel";
  let summary = "Calls of the CUDA backend's kernels on tensors";
  let description = [{
    The CUDA backend chooses its row kernels (norms, rotary embeddings,
    softmax) and the runtime's fused attention while the model is still on
    tensors, where each is one `transformer` op, but can only define or call
    them on buffers. `kernel.call` carries the choice across bufferization:
    a destination-style op whose inputs bufferize to reads and whose outputs
    bufferize to writes at the op itself, so One-Shot Bufferize orders every
    other write of those buffers around the call (a `bufferization.to_buffer`
    taken earlier would be a read at the wrong place: CSE merges equal ones).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
  let useDefaultAttributePrinterParser = 1;
}

def Kernel_RowKernelKind : I32EnumAttr<"RowKernelKind",
    "a kernel the CUDA backend builds or calls", [
    I32EnumAttrCase<"LayerNorm", 0, "layer_norm">,
    I32EnumAttrCase<"RMSNorm", 1, "rms_norm">,
    I32EnumAttrCase<"Rotary", 2, "rotary">,
    I32EnumAttrCase<"AttentionSoftmax", 3, "attention_softmax">,
    I32EnumAttrCase<"FlashAttention", 4, "flash_attention">,
    I32EnumAttrCase<"Amax", 5, "amax">,
    I32EnumAttrCase<"Swiglu", 6, "swiglu">,
    I32EnumAttrCase<"Geglu", 7, "geglu">,
    I32EnumAttrCase<"GegluTanh", 8, "geglu_tanh">,
    I32EnumAttrCase<"Amaxes", 9, "amaxes">,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mte::kernel";
}

def Kernel_RowKernelAttr : AttrDef<Kernel_Dialect, "RowKernel"> {
  let mnemonic = "row_kernel";
  let summary = "the kernel a function declaration stands for";
  let description = [{
    mte-convert-transformer-to-row-kernels declares each kernel it calls as
    a private function carrying this attribute (under `mte.row_kernel`);
    mte-build-row-kernels defines the function from it (norms, rotary,
    softmax) or lowers its calls to the runtime (flash attention, amaxes). Each
    kind takes its own parameters and no others, which the verifier checks:

    * `layer_norm`: `bias`, `residual`, `amax`, `quantize_from`;
      `rms_norm`: `residual`, `amax`, `quantize_from` (`amax`: a last
      output, f32 `[rows]`: each row's max |y| of the output as stored, the
      first level of an FP8 amax of it; `quantize_from`, a float type: the
      output is E4M3, y rounded to that type, times an f32 scale (element
      `at` of an f32 `[T]` vector: two inputs after epsilon, the vector and
      `at` as i64), saturated: the norm and the quantize of its output in
      one kernel, the row maxima those of the rounded y);
    * `rotary`: `heads` and `seq` (> 0), `heads_major` (the view is
      [batch * heads, seq, D] rather than [batch * seq, heads, D]);
    * `attention_softmax`: `heads` and `queries` (> 0), `causal`,
      `mask_shape` (the additive or boolean mask's shape, rank <= 4);
    * `flash_attention`: `heads` and `kv_heads` (> 0, `kv_heads` dividing
      `heads`), `causal`, `mask_shape` (`[B | 1, Skv]`: the key bias of a
      padding mask, rank 2), `amax` (a last output, f32 `[B * Sq * heads]`:
      each query row's and head's max |o|), `quantize_from` (the output is
      E4M3, o rounded to that type, times a scale given as the norms'
      are, after the key bias);
    * `amax`: nothing (each row's max |x|, of a [rows, length] input);
    * `swiglu`: `amax`, `quantize_from` (silu(gate) · up of two [rows,
      length] views, in f32, rounded to the output type or, with
      `quantize_from`, to that type and then cast to E4M3 as the norms do;
      `amax` as the norms'); `geglu`, `geglu_tanh`: the same with
      gelu(gate) (erf, or its tanh approximation) for silu(gate);
    * `amaxes`: nothing (f32 `[T]`: input i's max |x|, of T inputs of any
      shape in f32, bf16 or f16, in one launch; no body: each call becomes
      a call of the runtime's mte_cuda_amaxes).

    ```mlir
    #kernel.row_kernel<kind = attention_softmax, heads = 4, queries = 16, causal = true>
    ```
  }];
  let parameters = (ins
    EnumParameter<Kernel_RowKernelKind>:$kind,
    DefaultValuedParameter<"int64_t", "0">:$heads,
    DefaultValuedParameter<"int64_t", "0">:$kv_heads,
    DefaultValuedParameter<"int64_t", "0">:$seq,
    DefaultValuedParameter<"int64_t", "0">:$queries,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$mask_shape,
    DefaultValuedParameter<"bool", "false">:$bias,
    DefaultValuedParameter<"bool", "false">:$residual,
    DefaultValuedParameter<"bool", "false">:$causal,
    DefaultValuedParameter<"bool", "false">:$heads_major,
    DefaultValuedParameter<"bool", "false">:$amax,
    OptionalParameter<"::mlir::Type">:$quantize_from
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kernel_CallOp : Op<Kernel_Dialect, "call", [
    AttrSizedOperandSegments,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "calls a kernel declaration on the buffers of tensors";
  let description = [{
    Calls the function declaration `callee` with, in order, the buffers of
    `inputs` (tensors, which it only reads, and scalars, passed as they
    are) and of `outputs`, which it overwrites; result `i` is output `i`
    after the call. A tensor is passed as the callee's argument type says:
    through a `memref.cast` to a more dynamic layout (the kernel is then
    specialised on the layout it gets), as a reshaped view when only the
    shape differs (contiguous buffers, same element count), or else through
    a contiguous copy.

    ```mlir
    %y = kernel.call @mte_row_rms_norm_32x64xf32(%x, %w, %eps
           : tensor<32x64xf32>, tensor<64xf32>, f32)
           outs(%init : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$inputs,
                       Variadic<AnyRankedTensor>:$outputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee `(` ($inputs^ `:` type($inputs))? `)`
    `outs` `(` $outputs `:` type($outputs) `)` attr-dict `->` type($results)
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getOutputsMutable();
    }
  }];
  let hasVerifier = 1;
}

#endif // MTE_DIALECT_KERNEL_IR_KERNELOPS_TD
