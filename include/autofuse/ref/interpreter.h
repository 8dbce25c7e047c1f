// The reference interpreter: the slow, obviously-correct oracle that every
// fused kernel is checked against. It runs one op at a time on HostTensors,
// following the semantics written at the top of autofuse/graph/ops.h.
// Floats: f32 computed in f32, f64 in f64, f16/bf16/float8 computed in f32
// and rounded to the storage type after every op. Integers wrap in their
// width (computed in int64, u64 in uint64, and truncated; i4/u4 to 4 bits).
// On purpose more accurate than the kernels it checks: float reduce_sum,
// reduce_mean, reduce_prod and matmul accumulate in double (in row-major
// order) and round to the storage type once; every conversion (cast,
// constants, iota) rounds once, to nearest even (f64 -> f16 never goes
// through a rounded f32). Defined where C++ is not: cast float -> int
// truncates toward zero, saturates out-of-range values to the target type and
// maps NaN to 0; integer x/0 and x mod 0 are 0 and INT_MIN / -1 wraps.
#pragma once

#include <span>
#include <vector>

#include "autofuse/graph/graph.h"
#include "autofuse/ref/tensor.h"
#include "autofuse/sym/expr.h"

namespace autofuse {

/// Binds the graph's symbols from the shapes of the actual inputs (a dim
/// that is a lone symbol binds it; every dim is then checked) and checks the
/// graph's guards. UserError on a wrong input count, dtype, rank or size, a
/// guard violation, or a symbol that no input determines and `given` lacks.
/// Symbols in `given` are used as is and checked against the inputs.
sym::Binding bind_symbols(const Graph& graph, std::span<const HostTensor> inputs,
                          const sym::Binding& given = {});

/// Runs the graph. Inputs in graph-input order. Returns the graph outputs.
/// UserError on input mismatch (see bind_symbols) and on run-time data
/// errors (gather index out of range).
std::vector<HostTensor> run_reference(const Graph& graph, std::span<const HostTensor> inputs,
                                      const sym::Binding& given = {});

/// `x` converted as the cast op converts it (e.g. to fold a cast of a
/// constant at import).
HostTensor cast_tensor(const HostTensor& x, const CastAttrs& attrs);

}  // namespace autofuse
