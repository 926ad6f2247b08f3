//===- InitAll.cpp - dialect and pass registration for mte tools ----------===//

#include "mte/InitAll.h"

#include "mte/Codegen/CUDA/Passes.h"
#include "mte/Codegen/Common/Passes.h"
#include "mte/Conversion/Passes.h"
#include "mte/Dialect/Kernel/IR/KernelOps.h"
#include "mte/Dialect/Transformer/IR/TransformerDialect.h"
#include "mte/Dialect/Transformer/Transforms/Passes.h"
#include "mte/Dialect/Transformer/Transforms/ShardingInterfaceImpl.h"
#include "mte/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/ShardingExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

void mte::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<transformer::TransformerDialect, kernel::KernelDialect,
                  mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::shard::ShardDialect, mlir::tensor::TensorDialect,
                  mlir::cf::ControlFlowDialect>();
  // Bufferization of the host pipeline and translation to LLVM IR.
  mlir::arith::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  mlir::linalg::registerBufferizableOpInterfaceExternalModels(registry);
  // memref.alloc as an AllocationOpInterface: buffer-results-to-out-params
  // hoists a result's allocation, so the forward writes the caller's buffer
  // instead of copying into it.
  mlir::memref::registerAllocationOpInterfaceExternalModels(registry);
  mlir::tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // A pipeline-parallel model dispatches to its stage by scf.index_switch.
  mlir::scf::registerBufferizableOpInterfaceExternalModels(registry);
  // shard-partition asks each op of a tensor-parallel block for its local
  // form; func.return passes the (replicated) results through.
  transformer::registerShardingInterfaceExternalModels(registry);
  mlir::func::registerShardingInterfaceExternalModels(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  // The CUDA pipeline: to-LLVM interfaces of every dialect (the GPU-to-NVVM
  // conversion collects patterns through them), the NVVM target that
  // serialises gpu.modules, and the translation of kernels and launches.
  mlir::registerAllExtensions(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerGPUDialectTranslation(registry);
  mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  mlir::registerNVVMDialectTranslation(registry);
}

void mte::registerAllPasses() {
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  mlir::bufferization::registerBufferizationPasses();
  mlir::registerLinalgPasses();
  mlir::registerGPUPasses();
  mlir::registerSCFPasses();
  mlir::shard::registerShardPasses();
  mlir::bufferization::registerBufferizationPipelines();
  transformer::registerTransformerPasses();
  registerMTEConversionPasses();
  registerMTECodegenCommonPasses();
  registerMTECodegenCUDAPasses();
  registerPipelines();
}
