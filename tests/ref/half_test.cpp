// f16/bf16 conversions (support/half.h) and the interpreter's scalar
// conversions (src/ref/convert.h), checked exhaustively where the domain is
// small and against the compiler's _Float16 where it has one.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "autofuse/support/half.h"
#include "ref/convert.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace half_test_local {

bool is_f16_nan(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

/// Reference f16 value of bits h, by definition (not by bit tricks).
double f16_value_by_definition(uint16_t h) {
  const int sign = (h & 0x8000u) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(HalfTest, F16ToF32MatchesDefinitionForAllPatterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = f16_to_f32(static_cast<uint16_t>(h));
    double want = f16_value_by_definition(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
    } else {
      EXPECT_EQ(static_cast<double>(f), want) << std::hex << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << h;
    }
  }
}

// IEEE 754's conversion (and F16C's vcvtph2ps, which the kernels' f16
// vectors use): a NaN keeps its sign and payload and comes out quiet.
TEST(HalfTest, F16NanWidensQuietWithItsPayload) {
  EXPECT_EQ(float_bits(f16_to_f32(0x7c01)), 0x7fc02000u);  // signaling
  EXPECT_EQ(float_bits(f16_to_f32(0xfd55)), 0xffeaa000u);  // signaling, negative
  EXPECT_EQ(float_bits(f16_to_f32(0x7e00)), 0x7fc00000u);  // quiet
  EXPECT_EQ(float_bits(f16_to_f32(0x7fff)), 0x7fffe000u);
  EXPECT_EQ(float_bits(f16_to_f32(0x7c00)), 0x7f800000u);  // inf stays inf
  EXPECT_EQ(float_bits(f16_to_f32(0xfc00)), 0xff800000u);
}

TEST(HalfTest, F16RoundTripsThroughF32ForAllPatterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    uint16_t back = f32_to_f16(f16_to_f32(static_cast<uint16_t>(h)));
    if (is_f16_nan(static_cast<uint16_t>(h))) {
      EXPECT_TRUE(is_f16_nan(back)) << std::hex << h;
      EXPECT_EQ(back & 0x8000u, h & 0x8000u) << std::hex << h;
    } else {
      EXPECT_EQ(back, h) << std::hex << h;
    }
  }
}

TEST(HalfTest, F32ToF16Table) {
  struct Case {
    float in;
    uint16_t want;
  };
  const Case cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {65504.0f, 0x7bff},   // max finite
      {65519.99f, 0x7bff},  // below the overflow tie
      {65520.0f, 0x7c00},   // tie with max: rounds to even = inf
      {1e10f, 0x7c00},
      {-INFINITY, 0xfc00},
      {0x1p-14f, 0x0400},         // min normal
      {0x1p-24f, 0x0001},         // min subnormal
      {0x1p-25f, 0x0000},         // tie with 0: even
      {0x1.000002p-25f, 0x0001},  // just above the tie
      {0x3p-25f, 0x0002},         // 1.5 ulp: tie, rounds to even (2)
      {0x5p-25f, 0x0002},         // 2.5 ulp: tie, rounds to even (2)
      {0x1.ff8p-15f, 0x03ff},     // max subnormal
      {0x1.ffcp-15f, 0x0400},     // tie between max subnormal and min normal
      {1.0f + 0x1p-11f, 0x3c00},  // tie: even
      {1.0f + 0x3p-11f, 0x3c02},  // tie: even (up)
      {2.718281828f, 0x4170},     // e -> 2.71875
  };
  for (const Case& c : cases)
    EXPECT_EQ(f32_to_f16(c.in), c.want) << c.in;
}

#ifdef __FLT16_MAX__
uint16_t compiler_f16(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
uint16_t compiler_f16_from_double(double d) {
  _Float16 h = static_cast<_Float16>(d);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

void expect_same_f16(uint16_t got, uint16_t want, float in) {
  if (is_f16_nan(want)) {
    EXPECT_TRUE(is_f16_nan(got)) << in;
  } else {
    EXPECT_EQ(got, want) << std::hexfloat << in;
  }
}

TEST(HalfTest, F32ToF16MatchesCompilerOnEveryExponent) {
  std::mt19937_64 rng(1234);
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exp = 0; exp < 256; ++exp) {
      // Mantissas: edges, ties (the 13 dropped bits = 0x1000), near ties, random.
      std::vector<uint32_t> mantissas = {0,      1,      0x7fffff, 0x1000,   0x0fff,  0x1001,
                                         0x3000, 0x2000, 0x7ff000, 0x7fe000, 0x400000};
      for (int i = 0; i < 400; ++i)
        mantissas.push_back(static_cast<uint32_t>(rng()) & 0x7fffffu);
      for (uint32_t m : mantissas) {
        const float f = bits_float((sign << 31) | (exp << 23) | m);
        expect_same_f16(f32_to_f16(f), compiler_f16(f), f);
      }
    }
  }
}

TEST(HalfTest, F32ToF16MatchesCompilerOnAllSubnormalAndOverflowBoundaries) {
  // Every f32 in the binade range where f16 becomes subnormal / overflows,
  // sampled densely: all f32 whose top 20 bits vary and low bits are in a
  // small set.
  for (uint32_t top = 0x3300; top <= 0x3880; ++top) {  // [2^-25, 2^-14]: subnormal results
    for (uint32_t low : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      const float f = bits_float((top << 16) | low);
      expect_same_f16(f32_to_f16(f), compiler_f16(f), f);
    }
  }
  for (uint32_t u = 0x477fe000u; u <= 0x47800000u; ++u) {  // 65504 .. 65536
    const float f = bits_float(u);
    expect_same_f16(f32_to_f16(f), compiler_f16(f), f);
  }
}

TEST(HalfTest, F32ToF16MatchesCompilerOnStridedSweepOfAllFloats) {
  // Every 4099th bit pattern (odd stride: all low-bit residues get visited).
  // The full 2^32 sweep agreed with the hardware F16C conversion when run by hand.
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) {
    const float f = bits_float(static_cast<uint32_t>(u));
    expect_same_f16(f32_to_f16(f), compiler_f16(f), f);
  }
}

TEST(HalfTest, F64ToF16RoundsOnceLikeCompiler) {
  std::mt19937_64 rng(99);
  // Values whose f32 rounding would land exactly on an f16 tie: double
  // rounding through f32 would get them wrong.
  const double tricky[] = {1.0 + 0x1p-11 + 0x1p-40,
                           1.0 + 0x1p-11 - 0x1p-40,
                           0x1p-25 + 0x1p-60,
                           0x1p-25 - 0x1p-60,
                           65520.0 - 0x1p-30,
                           65520.0,
                           1e300,
                           -1e-300,
                           0.1,
                           1.0 / 3.0};
  for (double d : tricky)
    EXPECT_EQ(ref::f64_to_f16(d), compiler_f16_from_double(d)) << d;
  for (int i = 0; i < 200000; ++i) {
    // Random f16 neighbourhoods: an f16 value plus a small double offset.
    const uint16_t h = static_cast<uint16_t>(rng() & 0x7bffu);
    const double base = f16_to_f32(h);
    const double scale = std::ldexp(1.0, static_cast<int>(rng() % 60) - 70);
    const double d =
        (rng() & 1 ? -1 : 1) * (base + scale * (static_cast<double>(rng() % 2048) - 1024));
    EXPECT_EQ(ref::f64_to_f16(d), compiler_f16_from_double(d)) << std::hexfloat << d;
  }
}

TEST(HalfTest, I64ToF16MatchesCompiler) {
  const int64_t values[] = {0,    1,     -1,    2047,  2048,   2049,          2050,      2051,
                            4097, 65504, 65519, 65520, -65520, (1 << 24) + 1, INT64_MAX, INT64_MIN};
  for (int64_t v : values)
    EXPECT_EQ(ref::i64_to_f16(v), compiler_f16_from_double(static_cast<double>(v))) << v;
}
#endif  // __FLT16_MAX__

TEST(HalfTest, Bf16ToF32IsExactForAllPatterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = bf16_to_f32(static_cast<uint16_t>(h));
    EXPECT_EQ(float_bits(f), h << 16);
    if (!std::isnan(f))
      EXPECT_EQ(f32_to_bf16(f), h) << std::hex << h;
    else
      EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f)))) << std::hex << h;
  }
}

TEST(HalfTest, F32ToBf16RoundsToNearestEven) {
  struct Case {
    uint32_t in;
    uint16_t want;
  };
  const Case cases[] = {
      {0x3f800000u, 0x3f80},  // 1.0
      {0x3f808000u, 0x3f80},  // tie, even stays
      {0x3f818000u, 0x3f82},  // tie, odd rounds up
      {0x3f808001u, 0x3f81},  // above tie
      {0x3f807fffu, 0x3f80},  // below tie
      {0xbf808001u, 0xbf81},  // negative
      {0x7f7fffffu, 0x7f80},  // FLT_MAX rounds to inf
      {0x7f7f7fffu, 0x7f7f},  // below that tie stays finite
      {0x7f800000u, 0x7f80},  // inf
      {0xff800000u, 0xff80},  // -inf
      {0x00000001u, 0x0000},  // tiny subnormal
      {0x00008000u, 0x0000},  // tie with zero: even
      {0x00018000u, 0x0002},  // subnormal tie, odd -> up
  };
  for (const Case& c : cases)
    EXPECT_EQ(f32_to_bf16(bits_float(c.in)), c.want) << std::hex << c.in;
  // NaN stays NaN even when truncation would give inf (payload only in the low bits).
  for (uint32_t nan : {0x7f800001u, 0xff800001u, 0x7fc00000u, 0x7f80ffffu}) {
    uint16_t b = f32_to_bf16(bits_float(nan));
    EXPECT_TRUE(std::isnan(bf16_to_f32(b))) << std::hex << nan;
    EXPECT_EQ(b & 0x8000u, (nan >> 16) & 0x8000u);
  }
}

TEST(HalfTest, F64ToBf16RoundsOnce) {
  // 1 + 2^-8 is the bf16 tie between 1 and 1 + 2^-7; a hair above must go up
  // even though the nearest float is the tie itself.
  EXPECT_EQ(ref::f64_to_bf16(1.0 + 0x1p-8 + 0x1p-40), 0x3f81);
  EXPECT_EQ(ref::f64_to_bf16(1.0 + 0x1p-8), 0x3f80);
  EXPECT_EQ(ref::f64_to_bf16(1.0 + 0x1p-8 - 0x1p-40), 0x3f80);
  EXPECT_EQ(ref::f64_to_bf16(1e300), 0x7f80);
  EXPECT_EQ(ref::i64_to_bf16((int64_t{1} << 40) + (int64_t{1} << 32) + 1), 0x5381);
  EXPECT_EQ(ref::i64_to_bf16((int64_t{1} << 40) + (int64_t{1} << 32)), 0x5380);
}

TEST(ConvertTest, F64ToF32OverflowsWithoutUb) {
  EXPECT_EQ(ref::f64_to_f32(1e300), INFINITY);
  EXPECT_EQ(ref::f64_to_f32(-1e300), -INFINITY);
  EXPECT_EQ(ref::f64_to_f32(0x1.fffffefp127), std::numeric_limits<float>::max());
  EXPECT_EQ(ref::f64_to_f32(0x1.ffffffp127), INFINITY);  // tie rounds to even (inf)
  EXPECT_EQ(ref::f64_to_f32(0.1), 0.1f);
  EXPECT_TRUE(std::isnan(ref::f64_to_f32(std::nan(""))));
}

TEST(ConvertTest, FloatToIntSaturatesAndWraps) {
  using ref::float_to_int_saturating;
  using ref::float_to_int_wrapping;
  EXPECT_EQ(float_to_int_saturating<int8_t>(300.0f), 127);
  EXPECT_EQ(float_to_int_saturating<int8_t>(-300.0), -128);
  EXPECT_EQ(float_to_int_saturating<uint8_t>(-1.5f), 0);
  EXPECT_EQ(float_to_int_saturating<uint8_t>(255.9f), 255);
  EXPECT_EQ(float_to_int_saturating<int32_t>(-2.9), -2);
  EXPECT_EQ(float_to_int_saturating<int64_t>(1e30), INT64_MAX);
  EXPECT_EQ(float_to_int_saturating<int64_t>(-1e30f), INT64_MIN);
  EXPECT_EQ(float_to_int_saturating<int64_t>(-0x1p63), INT64_MIN);
  EXPECT_EQ(float_to_int_saturating<int32_t>(std::nanf("")), 0);
  EXPECT_EQ(float_to_int_saturating<int32_t>(INFINITY), INT32_MAX);
  EXPECT_EQ(float_to_int_wrapping<int8_t>(300.0), 44);
  EXPECT_EQ(float_to_int_wrapping<uint8_t>(-1.0), 255);
  EXPECT_EQ(float_to_int_wrapping<int8_t>(std::nan("")), 0);
  EXPECT_EQ(float_to_int_wrapping<int64_t>(1e30), INT64_MAX);
}

}  // namespace half_test_local
}  // namespace autofuse
