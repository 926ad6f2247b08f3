//===- mte-opt.cpp - mte optimizer driver ---------------------------------===//
//
// Runs transformer-dialect passes and pipelines on .mlir files; the driver
// behind the lit tests.
//
//===----------------------------------------------------------------------===//

#include "mte/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mte::registerAllDialects(registry);
  mte::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mte optimizer driver\n", registry));
}
