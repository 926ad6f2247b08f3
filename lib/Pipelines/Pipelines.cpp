//===- Pipelines.cpp - mte pass pipelines ---------------------------------===//

#include "mte/Pipelines/Pipelines.h"

#include "mte/Codegen/CUDA/Passes.h"
#include "mte/Codegen/Common/Passes.h"
#include "mte/Conversion/Passes.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mte::buildSimplifyPipeline(OpPassManager &pm,
                                const SimplifyPipelineOptions &options) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
  if (options.requireStaticShapes)
    funcPm.addPass(transformer::createCheckStaticShapes());
}

void mte::buildTransformerFusionPipeline(OpPassManager &pm) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(transformer::createRecognizeLayerNorm());
  funcPm.addPass(transformer::createRecognizeRMSNorm());
  funcPm.addPass(transformer::createRecognizeGelu());
  funcPm.addPass(transformer::createRecognizeSilu());
  // Rotary first: it moves RoPE onto the packed projections, where the
  // attention recognizer then finds Q and K.
  funcPm.addPass(transformer::createRecognizeRotaryEmbedding());
  funcPm.addPass(transformer::createRecognizeAttention());
  funcPm.addPass(transformer::createRecognizePatchEmbedding());
  funcPm.addPass(transformer::createRecognizeLinear());
  // Imported FP8 (Q/DQ around GEMMs) becomes FP8 linears.
  funcPm.addPass(transformer::createPropagateFP8Scales());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());

  // Fusion of the recognised ops. Horizontal merging comes first, while the
  // linears are still plain GEMMs; the epilogue then takes the activation
  // before the residual add, as the linear computes them.
  funcPm.addPass(transformer::createFuseHorizontalLinear());
  funcPm.addPass(transformer::createFuseBiasActivation());
  funcPm.addPass(transformer::createFuseResidual());
  funcPm.addPass(transformer::createFuseNormLinear());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

void mte::buildPrecisionPipeline(OpPassManager &pm,
                                 const PrecisionPipelineOptions &options) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  bool fp8 = options.precision == "fp8";
  transformer::ConvertPrecisionOptions convert;
  convert.precision = fp8 ? std::string("bf16") : options.precision.getValue();
  funcPm.addPass(transformer::createConvertPrecision(convert));
  // The casts it puts between a norm and its GEMMs become the norm's output.
  funcPm.addPass(transformer::createFuseNormLinear());
  if (fp8) {
    transformer::InsertFP8CastsOptions casts;
    casts.minMacs = options.fp8MinMacs;
    casts.recipe = options.fp8Recipe;
    casts.margin = options.fp8Margin;
    casts.historyLength = options.amaxHistory;
    casts.amaxAlgorithm = options.amaxAlgorithm;
    funcPm.addPass(transformer::createInsertFP8Casts(casts));
    funcPm.addPass(transformer::createPropagateFP8Scales());
  }
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

void mte::buildTensorParallelPipeline(
    OpPassManager &pm, const TensorParallelPipelineOptions &options) {
  transformer::AnnotateTensorParallelOptions annotate;
  annotate.tpSize = options.tpSize;
  annotate.sequenceParallel = options.sequenceParallel;
  annotate.vocabParallel = options.vocabParallel;
  pm.addPass(transformer::createAnnotateTensorParallel(annotate));
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(shard::createPartition());
  // A row-parallel linear adds its residual after the all-reduce; the next
  // norm takes that add again.
  funcPm.addPass(transformer::createFuseResidual());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

/// The reference lowering to linalg on tensors, with elementwise fusion.
static void buildLinalgLowering(OpPassManager &pm, bool fuseElementwise,
                                bool namedMatmul = false) {
  mte::ConvertTransformerToLinalgOptions lowering;
  lowering.namedMatmul = namedMatmul;
  pm.addPass(mte::createConvertTransformerToLinalg(lowering));
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createCanonicalizerPass());
  if (fuseElementwise)
    funcPm.addPass(mte::createFuseElementwise());
  funcPm.addPass(createCSEPass());
}

/// One-shot bufferization of the whole module, results as out-parameters,
/// deallocation made explicit.
static void buildBufferization(OpPassManager &pm) {
  // A concatenation's insertions moved beside the parts they insert, so
  // that the elimination below can root each part in its slice (FP8
  // amaxes into the delayed update's vector).
  pm.addNestedPass<func::FuncOp>(mte::createInsertSlicesAtSources());
  // An op that writes a slice of a tensor.empty (canonicalization folds
  // extract_slice(empty) into a smaller empty) writes into the slice of the
  // result instead of a buffer of its own copied there.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(mte::createReadOnlyArguments());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(mte::createDistinctResults());
  // Results become caller-owned out-parameters; the final allocation of each
  // is hoisted away so the forward writes straight into the caller's buffer.
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);
}

/// Loops and strided views to plain control flow and address arithmetic;
/// math expanded; bf16 and fp8 conversions as integer code (LLVM would call
/// compiler-rt helpers that libgcc does not provide). With `gpuKernels`,
/// the kernels of GPU modules keep their math ops, which the NVVM lowering
/// maps to libdevice (tanh: no exp and IEEE division), and their bf16
/// conversions, which NVPTX emits as single cvt instructions from sm_80 on
/// (the integer expansion costs six per conversion).
static void buildScalarLowering(OpPassManager &pm, bool gpuKernels = false) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  if (gpuKernels)
    pm.addNestedPass<func::FuncOp>(math::createMathExpandOpsPass());
  else
    pm.addPass(math::createMathExpandOpsPass());
  // Arithmetic on bf16 and f16 runs in f32 (canonicalization can fold an
  // extf/op/truncf chain back into narrow arithmetic, which neither libgcc
  // nor NVPTX before sm_90 provides).
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  if (gpuKernels) {
    pm.addNestedPass<func::FuncOp>(arith::createArithExpandOpsPass(expand));
    expand.includeBf16 = false;
    pm.addNestedPass<gpu::GPUModuleOp>(arith::createArithExpandOpsPass(expand));
  } else {
    pm.addPass(arith::createArithExpandOpsPass(expand));
  }
  pm.addPass(mte::createExpandFP8Conversions());
}

/// The host function to the LLVM dialect, every buffer a bare pointer.
static void buildHostToLLVM(OpPassManager &pm) {
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
}

void mte::buildHostPipeline(OpPassManager &pm,
                            const HostPipelineOptions &options) {
  buildLinalgLowering(pm, options.fuseElementwise);
  // A sharded model's collectives become runtime calls on its buffers.
  pm.addPass(createConvertShardToRuntimeCalls());
  buildBufferization(pm);
  pm.addPass(createConvertMemRefCopyToLinalg());
  pm.addPass(createConvertLinalgToLoopsPass());
  buildScalarLowering(pm);
  pm.addPass(createConvertMathToFuncs()); // integer powers
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertMathToLLVMPass());
  buildHostToLLVM(pm);
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mte::buildCudaPipeline(OpPassManager &pm,
                            const CudaPipelineOptions &options) {
  // One straight-line program per public function: a pipeline-parallel
  // entry becomes a program per stage, and the stage calls (one per
  // micro-batch) become copies of the stage.
  pm.addPass(createSplitPipelineStages());
  pm.addPass(createInlinePipelineStages());
  // Norms and attention's softmax become calls of row kernels, defined once
  // buffers exist; the rest goes through the reference lowering.
  pm.addPass(createConvertTransformerToRowKernels());
  buildLinalgLowering(pm, options.fuseElementwise, /*namedMatmul=*/true);
  pm.addPass(createHoistConstantsToArguments());
  // A sharded model's collectives become runtime calls (NCCL); each rank's
  // device holds only its slices of the weights, cut when they are
  // uploaded, and its kernels read dense buffers.
  mte::ConvertShardToRuntimeCallsOptions collectives;
  collectives.denseSlices = true;
  pm.addPass(createConvertShardToRuntimeCalls(collectives));
  buildBufferization(pm);
  pm.addPass(createBuildRowKernels());
  pm.addPass(createConvertMemRefCopyToLinalg());
  // GEMMs go to cuBLASLt; everything else becomes a kernel.
  pm.addPass(createMatmulToLibraryCall());
  // The statically shaped intermediates share one arena, which the runtime
  // allocates once; the rest stay allocations. Canonicalization first drops
  // the buffers the library calls left unused (a GEMM's f32 product whose
  // epilogue cuBLASLt now runs), which would otherwise take arena space.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createPlanActivationMemory());

  // Every loop nest becomes a kernel over its flattened parallel
  // dimensions; reductions stay sequential inside a thread.
  pm.addPass(createHostBuffersToGPU());
  // Elementwise ops: a thread a 16-byte vector, not an element.
  pm.addNestedPass<func::FuncOp>(createVectorizeElementwise());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // A reduction's sequential steps accumulate in registers, not through a
  // store and load of its output element each step.
  pm.addPass(createPromoteLoopAccumulators());
  ParallelLoopsToGPUOptions launch;
  launch.blockSize = options.blockSize;
  pm.addPass(createParallelLoopsToGPU(launch));
  // Integer powers as helper functions, which outlining copies into the
  // kernel modules that call them.
  pm.addPass(createConvertMathToFuncs());
  // Quantization as cvt.rn.satfinite.e4m3x2 where PTX has it at the PTX
  // version LLVM picks by default (sm_90; sm_89 needs PTX 8.1), while the
  // clamp it recognises still has its constant bounds in view.
  unsigned sm = 0;
  StringRef chip(options.chip);
  if (chip.consume_front("sm_") && !chip.consumeInteger(10, sm) && sm >= 90)
    pm.addNestedPass<func::FuncOp>(createFP8ConversionsToNVVM());
  pm.addPass(createGpuKernelOutliningPass());
  buildScalarLowering(pm, /*gpuKernels=*/true);

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // Every buffer is a dense, statically shaped device allocation: kernels
  // take bare pointers, as the host code passes them.
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.indexBitwidth = 64;
  toNVVM.useBarePtrCallConv = true;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(toNVVM));
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  buildHostToLLVM(pm);
  GpuToLLVMConversionPassOptions gpuToLLVM;
  gpuToLLVM.hostBarePtrCallConv = true;
  gpuToLLVM.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(gpuToLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkitPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mte::registerPipelines() {
  PassPipelineRegistration<>(
      "mte-transformer-fusion",
      "Recognise Transformer building blocks (norms, activations, rotary "
      "embeddings, attention, linear) in primitive-level transformer IR, then "
      "fuse them (QKV, epilogues, residuals, norm + linear)",
      buildTransformerFusionPipeline);
  PassPipelineRegistration<PrecisionPipelineOptions>(
      "mte-precision",
      "Convert f32 weights and activations to bf16 or f16, then let norms "
      "write their GEMMs' input type",
      buildPrecisionPipeline);
  PassPipelineRegistration<TensorParallelPipelineOptions>(
      "mte-tensor-parallel",
      "Split the blocks Megatron-style over tp-size ranks: annotate, then "
      "partition into one rank's program (upstream shard-partition)",
      buildTensorParallelPipeline);
  PassPipelineRegistration<HostPipelineOptions>(
      "mte-host-pipeline",
      "Lower a static-shaped transformer module to the LLVM dialect for the "
      "host backend",
      buildHostPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "mte-cuda-pipeline",
      "Lower a static-shaped transformer module to kernels (NVVM, PTX, cubin) "
      "and LLVM host code that launches them",
      buildCudaPipeline);
  PassPipelineRegistration<SimplifyPipelineOptions>(
      "mte-simplify",
      "Fold shape arithmetic and structural identities of the transformer "
      "dialect, then CSE",
      buildSimplifyPipeline);
}
