//===- Pipelines.cpp - mte pass pipelines ---------------------------------===//

#include "mte/Pipelines/Pipelines.h"

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
  funcPm.addPass(transformer::createRecognizeLinear());
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

void mte::buildHostPipeline(OpPassManager &pm,
                            const HostPipelineOptions &options) {
  pm.addPass(createConvertTransformerToLinalg());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createCanonicalizerPass());
  if (options.fuseElementwise)
    funcPm.addPass(createLinalgElementwiseOpFusionPass());
  funcPm.addPass(createCSEPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Results become caller-owned out-parameters; the final allocation of each
  // is hoisted away so the forward writes straight into the caller's buffer.
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);

  pm.addPass(createConvertMemRefCopyToLinalg());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(math::createMathExpandOpsPass());
  // bf16 conversions become integer code (LLVM would call compiler-rt
  // helpers that libgcc does not provide).
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createExpandFP8Conversions());
  pm.addPass(createConvertMathToFuncs()); // integer powers
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mte::registerPipelines() {
  PassPipelineRegistration<>(
      "mte-transformer-fusion",
      "Recognise Transformer building blocks (norms, activations, rotary "
      "embeddings, attention, linear) in primitive-level transformer IR, then "
      "fuse them (QKV, epilogues, residuals, norm + linear)",
      buildTransformerFusionPipeline);
  PassPipelineRegistration<HostPipelineOptions>(
      "mte-host-pipeline",
      "Lower a static-shaped transformer module to the LLVM dialect for the "
      "host backend",
      buildHostPipeline);
  PassPipelineRegistration<SimplifyPipelineOptions>(
      "mte-simplify",
      "Fold shape arithmetic and structural identities of the transformer "
      "dialect, then CSE",
      buildSimplifyPipeline);
}
