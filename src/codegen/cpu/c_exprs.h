// C++ spellings of values, conversions and elementwise ops for the CPU code
// generator. Every function returns an expression (no statement) over the
// given operand expressions; the prelude (kernel_prelude.h) defines the
// af_* helpers they call. Semantics follow graph/ops.h and the reference
// interpreter: values are in their compute type (compute_dtype), f16/bf16
// and float8 as f32, i4/u4 as 8-bit integers holding a 4-bit value.
#pragma once

#include <string>
#include <vector>

#include "autofuse/graph/dtype.h"
#include "autofuse/graph/ops.h"

namespace autofuse::codegen::cpu {

/// C type of a value of `dtype` inside a kernel: float (f32/f16/bf16/float8),
/// double, the integer of that width (i4/u4: int8_t/uint8_t), bool.
std::string c_compute_type(DType dtype);
/// C type of an element of `dtype` in memory (f16/bf16: uint16_t; float8,
/// bool: uint8_t).
std::string c_storage_type(DType dtype);

/// Storage element -> compute value.
std::string load_expr(DType dtype, const std::string& element);
/// Compute value of `value_dtype` -> storage element of `storage_dtype`
/// (same compute type; f32 -> f16 rounds to nearest even; float8 rounds
/// without saturating, as the reference's store).
std::string store_expr(DType value_dtype, DType storage_dtype, const std::string& value);
/// The f32 value that a store of `storage_dtype` f16 or bf16 rounds
/// (store_expr without its last rounding): what a bf16 chunk buffer holds
/// where the prelude rounds whole chunks (AF_BF16_CHUNK_VALUE,
/// inner_loop.cpp), and what a word pair rounds each half from
/// (word_pairs.cpp).
std::string half_store_value(DType value_dtype, DType storage_dtype, const std::string& value);
/// Cast between any two dtypes with the reference's rounding: one rounding
/// to nearest even, float -> int truncates, saturates and maps NaN to 0,
/// int -> int wraps, x -> i4/u4 rounds half to even and saturates, x -> bool
/// is x != 0. A cast to f16/bf16/float8 gives the rounded value (in f32);
/// `saturate` is CastAttrs::saturate (false: float8 targets only).
std::string cast_expr(DType from, DType to, const std::string& value, bool saturate = true);
/// A literal of `dtype`'s compute type (rounded to the dtype first).
std::string scalar_literal(DType dtype, double value);
/// The integer `index` (an int64_t expression) as a value of `dtype`.
std::string index_expr(DType dtype, const std::string& index);
/// An elementwise op (unary, binary, compare, logical, where) on operands of
/// compute type `operand_dtype` (the first operand's for where). A float8 or
/// i4/u4 result is rounded / wrapped to its type, as in the reference.
std::string compute_expr(OpKind op, DType operand_dtype, const std::vector<std::string>& args);
/// Float Max or Min of `a` and `b` where operand `constant` (0 or 1) is a
/// compile-time constant that is not NaN: the same result as compute_expr's
/// in two vector instructions instead of four (af_fmax_vk & co.).
std::string min_max_with_constant(OpKind op, int constant, const std::string& a,
                                  const std::string& b);

/// How a Reduce accumulates inside the vectorized loop over its row.
struct ReduceCode {
  std::string acc_type;     ///< accumulator C type
  std::string identity;     ///< its initial value (the op's identity)
  std::string clause;       ///< OpenMP reduction operator: "+", "*", "max" or "min"
  bool tracks_nan = false;  ///< float max/min: an int flag "saw a NaN", reduction(|:...)
};
ReduceCode reduce_code(OpKind op, DType dtype);
/// Statement(s) folding `value` into `acc` (and the NaN flag `nan`).
std::string reduce_update(OpKind op, DType dtype, const std::string& acc, const std::string& nan,
                          const std::string& value);
/// The Reduce's result in `dtype`'s compute type from the accumulator, the
/// NaN flag and the element count (an int64_t expression).
std::string reduce_result(OpKind op, DType dtype, const std::string& acc, const std::string& nan,
                          const std::string& count);

}  // namespace autofuse::codegen::cpu
