// C++ literals, type names and rounding helpers of the CPU code generator:
// the pieces c_exprs.cpp spells its expressions with. Internal to
// codegen/cpu; literals are exact (a float literal round-trips, an integer
// literal is wrapped to its dtype as the reference stores it).
#pragma once

#include <string>

#include "autofuse/graph/dtype.h"

namespace autofuse::codegen::cpu {

/// f32, f16, bf16 and float8 values are computed in float.
bool is_f32_computed(DType d);
/// The float8 type's name in support/float8.h and the prelude (af_<name>_*).
const char* float8_name(DType d);
/// A double rounded once to the float dtype `d` (as a double holding it).
double round_to_dtype(DType d, double v);
/// A float (`is_float`) or double literal of `v`; inf and NaN as builtins.
std::string float_literal(double v, bool is_float);
/// Truncates toward zero, clamps to int64 (u64: uint64; NaN -> 0), then
/// wraps to the integer dtype: how the reference stores a double into an
/// integer.
std::string int_literal(DType d, double v);
/// The prelude's saturating float -> `to` conversion (af_f2i32 & co.).
std::string f2i_helper(DType to);
/// The least and the greatest value of an integer dtype, as literals.
std::string int_lowest(DType d);
std::string int_highest(DType d);
/// The unsigned C type of an integer dtype's width (i4/u4: uint8_t).
std::string unsigned_type(DType d);
/// i4/u4 results wrap to 4 bits (their compute type has 8).
std::string wrap_int4(DType d, const std::string& v);

}  // namespace autofuse::codegen::cpu
