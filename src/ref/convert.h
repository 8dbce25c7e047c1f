// Scalar conversions between the interpreter's value types, all without UB
// and each rounding exactly once:
//  * double -> f32 rounds to nearest even and overflows to inf explicitly
//    (a finite double beyond the float range is not converted by the cast).
//  * double / int64 / uint64 -> f16 / bf16 / float8 go through a round-to-odd
//    float (24 bits, more than the 2 extra bits round-to-odd needs), so the
//    final round-to-nearest-even is the only rounding: no double rounding.
//  * float -> int truncates toward zero; NaN becomes 0. `saturate` clamps to
//    the target range (casts); `wrap` clamps to int64 (uint64 for u64) and
//    then wraps like a C++20 integer conversion (HostTensor::set_f64).
//  * float -> 4-bit int (casts) rounds half to even, then clamps (ONNX).
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

/// `mag` rounded to float by round-to-odd (exact below 2^24).
inline float u64_to_f32_round_odd(uint64_t mag) {
  if (mag < (uint64_t{1} << 24)) return static_cast<float>(mag);
  int shift = std::bit_width(mag) - 24;
  uint64_t top = mag >> shift;
  if ((mag & ((uint64_t{1} << shift) - 1)) != 0) top |= 1;
  return std::ldexp(static_cast<float>(top), shift);
}
/// `v` rounded to float by round-to-odd (exact below 2^24).
inline float i64_to_f32_round_odd(int64_t v) {
  float f = u64_to_f32_round_odd(v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v));
  return v < 0 ? -f : f;
}
inline float int_to_f32_round_odd(int64_t v) {
  return i64_to_f32_round_odd(v);
}
inline float int_to_f32_round_odd(uint64_t v) {
  return u64_to_f32_round_odd(v);
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

/// Truncation toward zero clamped to uint64; NaN -> 0.
template <typename F>
uint64_t float_to_u64_saturating(F v) {
  static_assert(std::is_floating_point_v<F>);
  constexpr F kTwo64 = static_cast<F>(0x1p64);
  if (!(v > 0)) return 0;  // NaN, <= 0 (and (-1, 0) truncates to 0)
  if (v >= kTwo64) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(v);  // in (0, 2^64): defined, truncates
}

/// Float -> an integer range [lo, hi] (int64 values, or uint64 when `I` is):
/// truncate, NaN -> 0, clamp. `I` is the type the result is returned in.
template <typename I, typename F>
I float_to_int_saturating(F v, I lo = std::numeric_limits<I>::lowest(),
                          I hi = std::numeric_limits<I>::max()) {
  if constexpr (std::is_same_v<I, uint64_t>) {
    uint64_t t = float_to_u64_saturating(v);
    return t < lo ? lo : t > hi ? hi : t;
  } else {
    int64_t t = float_to_i64_saturating(v);
    if (t < static_cast<int64_t>(lo)) return lo;
    if (t > static_cast<int64_t>(hi)) return hi;
    return static_cast<I>(t);
  }
}

/// Float -> a 4-bit integer range [lo, hi]: round half to even, clamp, NaN
/// -> 0 (ONNX Cast-21 to INT4/UINT4).
template <typename F>
int64_t float_to_int4(F v, int64_t lo, int64_t hi) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<F>(lo)) return lo;
  if (v >= static_cast<F>(hi)) return hi;
  return static_cast<int64_t>(std::nearbyint(v));  // default mode: half to even
}

/// Float -> integer type I: truncate, NaN -> 0, clamp to int64 (to uint64
/// above 2^63 when I is uint64), then wrap (C++20 modular).
template <typename I, typename F>
I float_to_int_wrapping(F v) {
  if (std::is_same_v<I, uint64_t> && v >= static_cast<F>(0x1p63))
    return static_cast<I>(float_to_u64_saturating(v));
  return static_cast<I>(float_to_i64_saturating(v));
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
