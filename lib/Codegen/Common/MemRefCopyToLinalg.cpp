//===- MemRefCopyToLinalg.cpp - memref.copy as linalg.copy ----------------===//

#include "mte/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mte {
#define GEN_PASS_DEF_CONVERTMEMREFCOPYTOLINALG
#include "mte/Codegen/Common/Passes.h.inc"
} // namespace mte

using namespace mlir;

namespace {
struct ConvertMemRefCopyToLinalgPass
    : mte::impl::ConvertMemRefCopyToLinalgBase<ConvertMemRefCopyToLinalgPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](memref::CopyOp copy) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    });
  }
};
} // namespace
