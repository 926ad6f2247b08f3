//===- Passes.h - mte conversion passes -------------------------*- C++ -*-===//

#ifndef MTE_CONVERSION_PASSES_H
#define MTE_CONVERSION_PASSES_H

#include "mte/Conversion/BuildRowKernels/BuildRowKernels.h"
#include "mte/Conversion/DistinctResults/DistinctResults.h"
#include "mte/Conversion/ExpandFP8Conversions/ExpandFP8Conversions.h"
#include "mte/Conversion/FuseElementwise/FuseElementwise.h"
#include "mte/Conversion/HoistConstantsToArguments/HoistConstantsToArguments.h"
#include "mte/Conversion/HostBuffersToGPU/HostBuffersToGPU.h"
#include "mte/Conversion/MatmulToLibraryCall/MatmulToLibraryCall.h"
#include "mte/Conversion/MemRefCopyToLinalg/MemRefCopyToLinalg.h"
#include "mte/Conversion/ParallelLoopsToGPU/ParallelLoopsToGPU.h"
#include "mte/Conversion/PlanActivationMemory/PlanActivationMemory.h"
#include "mte/Conversion/TransformerToLinalg/TransformerToLinalg.h"
#include "mte/Conversion/TransformerToRowKernels/TransformerToRowKernels.h"
#include "mte/Conversion/VectorizeElementwise/VectorizeElementwise.h"

namespace mte {

#define GEN_PASS_REGISTRATION
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_PASSES_H
