// Rough cost of an AscGraph node inside a kernel's vector loop, in vector
// instructions per vector of lanes. A cost hint for the code generator's
// row buffers and the tiling function's store choice: it never decides a
// result, only which of equivalent code shapes runs.
#pragma once

#include "autofuse/ascir/asc_graph.h"

namespace autofuse::ascir {

/// A float transcendental (exp, log, sin, cos, tanh, sigmoid, erf, pow):
/// inline vector math of 20-30 instructions (kernel_prelude_math.h).
bool is_transcendental(const AscNode& n);

/// Vector instructions per vector of lanes to compute `n` itself (not its
/// inputs), measured on AVX2 (g++ 12 -O3):
///  - Load / Gather: 1; a 16-bit value widens (3); f16 and float8 decode in
///    software (8);
///  - Compute: 1; a transcendental 20;
///  - Store: 1; bf16 rounds to nearest even on the bits and packs (13 per 8
///    lanes: no conversion instruction before AVX512-BF16); f16 and float8
///    encode in software (20);
///  - everything else (Data, Scalar, Broadcast, Reduce, Cast, ...): 0.
int vector_op_cost(const AscNode& n);

}  // namespace autofuse::ascir
