//===- Pipelines.cpp - mte pass pipelines ---------------------------------===//

#include "mte/Pipelines/Pipelines.h"

#include "mte/Dialect/Transformer/Transforms/Passes.h"

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

void mte::registerPipelines() {
  PassPipelineRegistration<SimplifyPipelineOptions>(
      "mte-simplify",
      "Fold shape arithmetic and structural identities of the transformer "
      "dialect, then CSE",
      buildSimplifyPipeline);
}
