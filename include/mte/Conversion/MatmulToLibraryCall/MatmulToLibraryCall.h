//===- MatmulToLibraryCall.h - matmuls as cuBLASLt calls ---------------*- C++ -*-===//

#ifndef MTE_CONVERSION_MATMULTOLIBRARYCALL_MATMULTOLIBRARYCALL_H
#define MTE_CONVERSION_MATMULTOLIBRARYCALL_MATMULTOLIBRARYCALL_H

#include "mlir/Pass/Pass.h"

namespace mte {

#define GEN_PASS_DECL_MATMULTOLIBRARYCALL
#include "mte/Conversion/Passes.h.inc"

} // namespace mte

#endif // MTE_CONVERSION_MATMULTOLIBRARYCALL_MATMULTOLIBRARYCALL_H
