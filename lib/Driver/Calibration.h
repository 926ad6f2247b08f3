//===- Calibration.h - FP8 calibration at compile time ----------*- C++ -*-===//
//
// mte-compile --calibration: the initial delayed-scaling state of an FP8
// build, measured by running the model in fp32 on sample inputs.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_DRIVER_CALIBRATION_H
#define MTE_LIB_DRIVER_CALIBRATION_H

#include "mte/Driver/Driver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mte::driver {

/// A model state as the calibration runs left it.
struct CalibratedState {
  std::string name;
  std::vector<std::string> labels;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

/// The states of the calibration build after its last sample.
struct FP8Calibration {
  std::vector<CalibratedState> states;
};

/// Adds the calibration build's passes: the model pipeline's simplification,
/// index checks and fusion, in fp32, then mte-insert-fp8-casts with
/// `calibrate` and the options' delayed-scaling settings.
void buildCalibrationPipeline(mlir::OpPassManager &pm,
                              const CompilerOptions &options);

/// Compiles the calibration build of `imported` (an imported module, which
/// this changes) for the host, runs it on every sample of
/// `options.calibrationPath` in order and returns the states it is left
/// with. Errors in the samples name the file, the array and the input.
mlir::FailureOr<FP8Calibration>
calibrateFP8(mlir::ModuleOp imported, const CompilerOptions &options,
             llvm::StringRef toolPath,
             llvm::SmallVectorImpl<std::string> &notes, std::string &error);

/// Makes the calibrated values the initial values of the model states of
/// `forward`, whose FP8 build must label its states as the calibration
/// build does.
mlir::LogicalResult applyCalibration(mlir::func::FuncOp forward,
                                     const FP8Calibration &calibration,
                                     std::string &error);

} // namespace mte::driver

#endif // MTE_LIB_DRIVER_CALIBRATION_H
