// Scalar conversions between the interpreter's value types, all without UB
// and each rounding exactly once:
//  * double -> f32 rounds to nearest even and overflows to inf explicitly
//    (a finite double beyond the float range is not converted by the cast).
//  * double / int64 -> f16 / bf16 go through a round-to-odd float (24 bits,
//    more than the 2 extra bits round-to-odd needs), so the final
//    round-to-nearest-even is the only rounding: no double rounding.
//  * float -> int truncates toward zero; NaN becomes 0. `saturate` clamps to
//    the target range (casts); `wrap` clamps to int64 and then wraps like a
//    C++20 integer conversion (HostTensor::set_f64).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "autofuse/support/half.h"

namespace autofuse::ref {

inline float f64_to_f32(double d) {
  constexpr double kMax = std::numeric_limits<float>::max();
  // FLT_MAX plus half an ulp: the tie rounds to even, which is infinity.
  constexpr double kOverflow = 0x1.ffffffp127;
  if (std::fabs(d) <= kMax || std::isnan(d)) return static_cast<float>(d);
  float big = std::fabs(d) >= kOverflow ? std::numeric_limits<float>::infinity()
                                        : std::numeric_limits<float>::max();
  return d < 0 ? -big : big;
}

/// `d` rounded to float by truncation toward zero, with the last mantissa bit
/// set when inexact (round-to-odd).
inline float f64_to_f32_round_odd(double d) {
  if (std::isnan(d) || std::isinf(d)) return static_cast<float>(d);
  if (std::fabs(d) > std::numeric_limits<float>::max())
    return d < 0 ? -std::numeric_limits<float>::max() : std::numeric_limits<float>::max();
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  uint32_t u = float_bits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) u -= 1;  // one step toward zero
  return bits_float(u | 1u);
}

/// `v` rounded to float by round-to-odd (exact below 2^24).
inline float i64_to_f32_round_odd(int64_t v) {
  uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (mag < (uint64_t{1} << 24)) return static_cast<float>(v);
  int shift = std::bit_width(mag) - 24;
  uint64_t top = mag >> shift;
  if ((mag & ((uint64_t{1} << shift) - 1)) != 0) top |= 1;
  float f = std::ldexp(static_cast<float>(top), shift);
  return v < 0 ? -f : f;
}

inline uint16_t f64_to_f16(double d) {
  return f32_to_f16(f64_to_f32_round_odd(d));
}
inline uint16_t f64_to_bf16(double d) {
  return f32_to_bf16(f64_to_f32_round_odd(d));
}
inline uint16_t i64_to_f16(int64_t v) {
  return f32_to_f16(i64_to_f32_round_odd(v));
}
inline uint16_t i64_to_bf16(int64_t v) {
  return f32_to_bf16(i64_to_f32_round_odd(v));
}

/// Truncation toward zero clamped to int64; NaN -> 0.
template <typename F>
int64_t float_to_i64_saturating(F v) {
  static_assert(std::is_floating_point_v<F>);
  constexpr F kTwo63 = static_cast<F>(0x1p63);
  if (std::isnan(v)) return 0;
  if (v >= kTwo63) return std::numeric_limits<int64_t>::max();
  if (v < -kTwo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);  // in [-2^63, 2^63): defined, truncates
}

/// Float -> integer type I: truncate, NaN -> 0, clamp to I's range.
template <typename I, typename F>
I float_to_int_saturating(F v) {
  int64_t t = float_to_i64_saturating(v);
  constexpr int64_t kLo = static_cast<int64_t>(std::numeric_limits<I>::min());
  constexpr int64_t kHi = static_cast<int64_t>(std::numeric_limits<I>::max());
  if (t < kLo) return std::numeric_limits<I>::min();
  if (t > kHi) return std::numeric_limits<I>::max();
  return static_cast<I>(t);
}

/// Float -> integer type I: truncate, NaN -> 0, clamp to int64, then wrap.
template <typename I, typename F>
I float_to_int_wrapping(F v) {
  return static_cast<I>(float_to_i64_saturating(v));  // C++20: modular
}

// Integer arithmetic that wraps modulo 2^64 (the storage type then keeps the
// low bits, which is the same as wrapping in the narrower type).
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrap_neg(int64_t a) {
  return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
}

}  // namespace autofuse::ref
