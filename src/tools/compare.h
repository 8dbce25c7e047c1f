// Comparison of a compiled result with the reference interpreter's.
#pragma once

#include <string>

#include "autofuse/graph/graph.h"
#include "autofuse/ref/tensor.h"

namespace autofuse::tools {

/// Per-dtype tolerance: |got - want| <= atol + rtol * |want| elementwise
/// (integers: |got - want| <= atol).
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

/// The tolerance `run --check` uses for an output dtype. Why these values:
///  * f32: kernels use vectorized exp/tanh/erf (a few ulp) and sum in a
///    different order than the reference (which sums in f64): ~1e-6 relative
///    per op over chains of ~10-30 ops -> rtol 1e-4, atol 1e-5 for values
///    near 0 (e.g. LayerNorm outputs, whose error scales with the row's
///    spread, not the value).
///  * f64: the reference and kernels both compute in f64: rtol 1e-10.
///  * f16 (11-bit significand, ulp 2^-10 ~ 1e-3 relative): the reference
///    rounds to f16 after every op while kernels compute in f32 and round
///    once, so the two differ by up to ~0.5 ulp per op: 1e-2 covers ~10 ops.
///  * bf16 (8-bit significand, ulp 2^-7 ~ 7.8e-3): the same argument gives
///    ~4e-2 over ~10 ops, plus the final rounding: rtol 6e-2, atol 6e-2.
///  * float8: kernels round every float8 result with the reference's code
///    (support/float8.h), so casts and exact ops match bit for bit. They
///    differ where an f32 value differs in its last bits (vector exp/tanh,
///    float vs double sums) and lands on the other side of a float8
///    rounding boundary: one float8 ulp, 2^-3 (e4m3) / 2^-2 (e5m2)
///    relative at most, which a following op may carry into a second ulp.
///    We allow 2 ulps: rtol 0.25 (e4m3) / 0.5 (e5m2), and the same as atol
///    for results near 0 after cancellation (values are O(1): the random
///    inputs are in [-1, 1)).
///  * integers (i4 to u64) and bool: exact.
Tolerance tolerance_for(DType dtype);

/// The tolerance for graph output `value`: tolerance_for(its dtype), except
/// that an integer output computed from floats (a cast from a float type to
/// an integer type upstream, as QuantizeLinear's) may differ by one: the
/// kernels' float values differ from the reference's in their last bits
/// (matmul and sum order, vector math), which now and then moves a value
/// across a rounding boundary (a u8 DQ -> MatMul -> Q model: one element in
/// ~1200 one step apart).
Tolerance tolerance_for_output(const Graph& graph, ValueId value);

struct Comparison {
  double max_abs_err = 0;
  double max_rel_err = 0;  ///< |got - want| / max(|want|, 1e-30), over elements with want != 0
  int64_t mismatches = 0;  ///< elements outside the tolerance (NaN vs number counts)
  int64_t first_mismatch = -1;
  bool ok() const { return mismatches == 0; }
};

/// Compares elementwise (shapes and dtypes must match: UserError otherwise).
/// NaN matches NaN; inf matches the same inf.
Comparison compare(const HostTensor& got, const HostTensor& want, Tolerance tolerance);

}  // namespace autofuse::tools
