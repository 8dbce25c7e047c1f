// float8 <-> f32 conversions for the four ONNX float8 types, bit-exact and
// header-only. The reference interpreter uses them, and the kernel prelude
// embeds this file (after half.h), so generated kernels convert alike. Plain
// C++14 with no include beyond <stdint.h> (kernel compile time), no float
// arithmetic on f32 subnormals (right under FTZ/DAZ), and integer selects
// rather than branches so that loops over them vectorize.
//
// The formats (ONNX Cast, "Float 8"):
//   type        exp/mant  bias  max finite  inf   NaN            -0
//   E4M3FN        4/3       7     448       no    S.1111.111     yes
//   E4M3FNUZ      4/3       8     240       no    0x80 only      no
//   E5M2          5/2      15     57344     yes   S.11111.{01,10,11}  yes
//   E5M2FNUZ      5/2      16     57344     no    0x80 only      no
//
// f32 -> float8 rounds to nearest even in a format with the same precision
// and unbounded exponent (gradual underflow below), then applies the ONNX
// Cast table: a result beyond the max finite value is +-max when
// `saturate`, else +-inf (E5M2) or NaN (the others); inf is +-max when
// `saturate`, else inf (E5M2) or NaN; NaN is NaN; the FNUZ types turn -0
// into +0. (The ONNX Python reference and onnxruntime, which ports it,
// differ in two corners, both with saturate=0: E4M3FN gives +-448 for |x|
// in [480, 496) and E5M2 NaN for |x| in [61440, 65536), where the table
// says NaN and inf. We follow the table; tests/ref/float8_test.cpp checks
// both.)
#ifndef AUTOFUSE_SUPPORT_FLOAT8_H_
#define AUTOFUSE_SUPPORT_FLOAT8_H_

#include <stdint.h>

namespace autofuse {
namespace float8_detail {

inline uint32_t bits_of(float f) {
  return __builtin_bit_cast(uint32_t, f);
}
inline float float_of(uint32_t u) {
  return __builtin_bit_cast(float, u);
}
/// c ? a : b as bit masks (g++ does not if-convert every ternary, and then
/// does not vectorize the loop).
inline uint32_t select(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return (a & m) | (b & ~m);
}

/// The magnitude code (sign bit clear) of |x| rounded to nearest even in a
/// format of `mant` mantissa bits and exponent bias `bias`, with no upper
/// exponent limit: codes above the format's max may come out (the caller
/// handles overflow). `a` is |x|'s f32 bits, finite.
inline uint32_t round_magnitude(uint32_t a, int mant, int bias) {
  // f32 exponent of the smallest float8 normal: 1 - bias.
  const uint32_t min_normal = static_cast<uint32_t>(128 - bias) << 23;
  // Normal: drop 23 - mant bits with round-to-nearest-even, then re-bias the
  // exponent from 127 to `bias` (no wrap: a >= min_normal).
  const int drop = 23 - mant;
  const uint32_t half = (1u << (drop - 1)) - 1u;
  const uint32_t normal =
      ((a + half + ((a >> drop) & 1u)) >> drop) - (static_cast<uint32_t>(127 - bias) << mant);
  // Subnormal: |x| / 2^(1 - bias - mant), an integer in [0, 2^mant] after
  // rounding (2^mant is the smallest normal's code). The f32 significand
  // (implicit bit set) is shifted right by `shift` >= drop + 1; f32
  // subnormals and zero are far below half the smallest subnormal: 0.
  const uint32_t exp = a >> 23;
  const uint32_t sig = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift_raw = static_cast<uint32_t>(128 - bias - mant + 23) - exp;  // exp small
  // Clamped to [1, 31] so the shifts below are defined also for normal
  // inputs, whose (unused) subnormal result is computed branch-free too.
  const uint32_t shift = shift_raw > 31u ? 31u : shift_raw == 0u ? 1u : shift_raw;
  const uint32_t kept = sig >> shift;
  const uint32_t rest = sig - (kept << shift);
  const uint32_t halfway = 1u << (shift - 1);
  const uint32_t round_up = (rest > halfway || (rest == halfway && (kept & 1u))) ? 1u : 0u;
  const uint32_t subnormal = exp == 0 ? 0u : kept + round_up;
  return a >= min_normal ? normal : subnormal;
}

/// f32 -> float8 bits. `max_code`: the largest finite magnitude code;
/// `e5m2`: the format has inf (0x7c) and NaN codes above it; `uz`: FNUZ.
inline uint8_t encode(float f, int mant, int bias, uint32_t max_code, bool e5m2, bool uz,
                      bool saturate) {
  const uint32_t u = bits_of(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7fffffffu;
  // Below: magnitude codes, then the sign for the non-NaN cases.
  const uint32_t nan = uz ? 0x80u : (sign | 0x7fu);
  const uint32_t overflow = saturate ? (sign | max_code) : e5m2 ? (sign | 0x7cu) : nan;
  const uint32_t finite_a = a >= 0x7f800000u ? 0u : a;
  const uint32_t code = round_magnitude(finite_a, mant, bias);
  // FNUZ has no -0: a magnitude that rounds to 0 is +0.
  const uint32_t rounded = (uz && code == 0u) ? 0u : (sign | code);
  const uint32_t r = a > 0x7f800000u                         ? nan
                     : (a == 0x7f800000u || code > max_code) ? overflow
                                                             : rounded;
  return static_cast<uint8_t>(r);
}

/// float8 bits -> f32, exact. NaN comes out as a quiet NaN with the code's
/// sign (FNUZ: positive).
inline float decode(uint8_t b, int mant, int bias, bool e5m2, bool uz) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t em = b & 0x7fu;
  const uint32_t exp = em >> mant;
  const uint32_t m = em & ((1u << mant) - 1u);
  // Normal: re-bias the exponent to 127 and left-align the mantissa.
  const uint32_t normal = ((exp + static_cast<uint32_t>(127 - bias)) << 23) | (m << (23 - mant));
  // Subnormal m * 2^(1 - bias - mant): exact in float (a small integer times
  // a power of two, both normal floats).
  const float scale = float_of(static_cast<uint32_t>(127 + 1 - bias - mant) << 23);
  const uint32_t subnormal = bits_of(static_cast<float>(m) * scale);
  const bool is_nan = uz ? b == 0x80u : e5m2 ? em > 0x7cu : em == 0x7fu;
  const bool is_inf = e5m2 & (em == 0x7cu);
  uint32_t mag = select(exp == 0, subnormal, normal);
  mag = select(is_inf, 0x7f800000u, mag);
  mag = select(is_nan, 0x7fc00000u, mag);
  return float_of(select(is_nan & uz, 0u, sign) | mag);
}

}  // namespace float8_detail

inline float f8e4m3fn_to_f32(uint8_t b) {
  return float8_detail::decode(b, 3, 7, false, false);
}
inline float f8e4m3fnuz_to_f32(uint8_t b) {
  return float8_detail::decode(b, 3, 8, false, true);
}
inline float f8e5m2_to_f32(uint8_t b) {
  return float8_detail::decode(b, 2, 15, true, false);
}
inline float f8e5m2fnuz_to_f32(uint8_t b) {
  return float8_detail::decode(b, 2, 16, false, true);
}

inline uint8_t f32_to_f8e4m3fn(float f, bool saturate = true) {
  return float8_detail::encode(f, 3, 7, 0x7eu, false, false, saturate);
}
inline uint8_t f32_to_f8e4m3fnuz(float f, bool saturate = true) {
  return float8_detail::encode(f, 3, 8, 0x7fu, false, true, saturate);
}
inline uint8_t f32_to_f8e5m2(float f, bool saturate = true) {
  return float8_detail::encode(f, 2, 15, 0x7bu, true, false, saturate);
}
inline uint8_t f32_to_f8e5m2fnuz(float f, bool saturate = true) {
  return float8_detail::encode(f, 2, 16, 0x7fu, false, true, saturate);
}

}  // namespace autofuse

#endif  // AUTOFUSE_SUPPORT_FLOAT8_H_
