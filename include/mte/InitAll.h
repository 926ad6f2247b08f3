//===- InitAll.h - dialect and pass registration for mte tools -*- C++ -*-===//

#ifndef MTE_INITALL_H
#define MTE_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mte {

/// Adds the transformer dialect and every upstream dialect the mte pipelines
/// produce or consume.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every mte pass and pipeline, and the upstream passes the
/// pipelines are built from.
void registerAllPasses();

} // namespace mte

#endif // MTE_INITALL_H
