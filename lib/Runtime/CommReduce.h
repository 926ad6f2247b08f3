//===- CommReduce.h - the reductions of collectives -------------*- C++ -*-===//
//
// Internal to libmte_runtime. The reductions of mte_comm_all_reduce and
// mte_comm_reduce_scatter (KernelABI.h), which every rank of a group
// computes over the same inputs in the same order, so that all get the
// same bits: f16 and bf16 accumulate in f32 and round once to nearest
// even, the other types in their own; MAX and MIN propagate NaN.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_COMMREDUCE_H
#define MTE_LIB_RUNTIME_COMMREDUCE_H

#include <cstddef>
#include <cstdint>

namespace mte::runtime {

/// Whether the collectives reduce elements of `dtype` (an mte_dtype): f32,
/// f64, f16, bf16, i32 and i64.
bool isReducibleDType(int32_t dtype);

/// Whether `op` is an mte_reduce_op.
bool isReduceOp(int32_t op);

/// The name of an mte_reduce_op in messages ("sum", "max", "min").
const char *reduceOpName(int32_t op);

/// out[i] = op over inputs[0][i], inputs[1][i], ... in that order, for
/// i < count, of a reducible `dtype` and an mte_reduce_op `op`. `out` may
/// be inputs[0] but no other input. f16 and bf16 accumulate in `scratch`
/// (count floats). Integer sums wrap around.
void reduceElements(int32_t dtype, int32_t op, const void *const *inputs,
                    size_t numInputs, size_t count, void *out, float *scratch);

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_COMMREDUCE_H
