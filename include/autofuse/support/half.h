// f16 (IEEE binary16) and bf16 (bfloat16) conversions, bit-exact and
// round-to-nearest-even, header-only. The reference interpreter uses them and
// generated kernels will include the same functions, so both round alike.
#pragma once

#include <cstdint>
#include <cstring>

namespace autofuse {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// bf16 -> f32 is exact.
inline float bf16_to_f32(uint16_t h) {
  return bits_float(static_cast<uint32_t>(h) << 16);
}

/// f32 -> bf16, round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t f32_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

/// f16 -> f32 is exact (subnormals included). A NaN keeps its payload and
/// comes out quiet, as IEEE 754's conversion and F16C's vcvtph2ps give it
/// (the kernels' f16 vectors convert with it: kernel_prelude_f16.h).
inline float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f && mant != 0) return bits_float(sign | 0x7fc00000u | (mant << 13));  // NaN
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u);                              // inf
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    // Subnormal: value = mant * 2^-24.
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

/// f32 -> f16, round to nearest even; overflow gives inf, NaN stays NaN.
inline uint16_t f32_to_f16(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: value / 2^-24 rounded to nearest even.
    // Adding 0.5f moves the bits to the right place with the FPU's rounding.
    float v = bits_float(abs) + 0.5f;
    return static_cast<uint16_t>(sign | (float_bits(v) - 0x3f000000u));
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mant_odd;  // re-bias exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (abs >> 13));
}

}  // namespace autofuse
