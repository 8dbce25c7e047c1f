// support/float8.h against two independent sources of truth:
//  * float8_onnx_tables.inc, generated once from onnx 1.17's Python reference
//    by float8_tables.py: all 256 codes -> f32 per type, and f32 -> float8 for
//    every boundary input of each type (each finite value, each halfway point
//    between neighbours, 0, the smallest f32 subnormal, FLT_MAX, inf, NaN),
//    saturate=1 and 0;
//  * an oracle written here from the ONNX Cast description alone: it lists
//    the type's values with std::ldexp and picks the nearest by search (ties
//    to the even code), then applies the saturate table. It checks a large
//    seeded set of f32 values of every kind, both signs.
// The reference deviates from the ONNX Cast table in two corners (it does
// not round before its range check there); we follow the table, and the
// test names both: E4M3FN saturate=0 maps |x| in [480, 496) to +-448 in the
// reference (the table: NaN; 480 rounds to 480 = 1.111b * 2^8, which E4M3FN
// lacks), and E5M2 saturate=0 maps |x| in [61440, 65536) to NaN (the table:
// inf).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ref/dtype_traits.h"
#include "support/float8.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace float8_test_local {

struct Float8EncodeRow {
  uint32_t f32_bits;
  uint8_t saturate, no_saturate;
};
#include "float8_onnx_tables.inc"

// One format, described as in the ONNX Cast documentation.
struct Format {
  const char* name;
  int mant_bits;
  int bias;
  bool has_inf;  // E5M2: exponent all ones is inf / NaN
  bool uz;       // FNUZ: 0x80 is NaN, no -0
  float (*decode)(uint8_t);
  uint8_t (*encode)(float, bool);
  const uint32_t* onnx_decode;
  const Float8EncodeRow* onnx_encode;
  size_t onnx_encode_rows;
};

const Format kFormats[] = {
    {"E4M3FN", 3, 7, false, false, f8e4m3fn_to_f32, f32_to_f8e4m3fn, kDecodeE4M3FN, kEncodeE4M3FN,
     std::size(kEncodeE4M3FN)},
    {"E4M3FNUZ", 3, 8, false, true, f8e4m3fnuz_to_f32, f32_to_f8e4m3fnuz, kDecodeE4M3FNUZ,
     kEncodeE4M3FNUZ, std::size(kEncodeE4M3FNUZ)},
    {"E5M2", 2, 15, true, false, f8e5m2_to_f32, f32_to_f8e5m2, kDecodeE5M2, kEncodeE5M2,
     std::size(kEncodeE5M2)},
    {"E5M2FNUZ", 2, 16, false, true, f8e5m2fnuz_to_f32, f32_to_f8e5m2fnuz, kDecodeE5M2FNUZ,
     kEncodeE5M2FNUZ, std::size(kEncodeE5M2FNUZ)},
};

float from_bits(uint32_t u) {
  return std::bit_cast<float>(u);
}
uint32_t to_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

// ---- The oracle -------------------------------------------------------------

/// Whether magnitude code c (0..127) is NaN or inf rather than a number.
bool is_special_code(const Format& f, int c) {
  const int exp_all_ones = (0x7f >> f.mant_bits);
  if (f.has_inf) return (c >> f.mant_bits) == exp_all_ones;
  if (f.uz) return false;  // only 0x80, which has the sign bit
  return c == 0x7f;        // E4M3FN: S.1111.111
}

/// The value of a finite magnitude code, from the fields.
double field_value(const Format& f, int c) {
  const int e = c >> f.mant_bits, m = c & ((1 << f.mant_bits) - 1);
  if (e == 0) return std::ldexp(m, 1 - f.bias - f.mant_bits);
  return std::ldexp((1 << f.mant_bits) + m, e - f.bias - f.mant_bits);
}

struct Oracle {
  explicit Oracle(const Format& fmt) : f(fmt) {
    for (int c = 0; c < 128 && !is_special_code(f, c); ++c)
      values.push_back(field_value(f, c));
    max_code = static_cast<int>(values.size()) - 1;
    // The next value in the same binade spacing: what rounding would give
    // with an unbounded exponent (its code is max_code + 1, for the parity).
    values.push_back(values[max_code] + (values[max_code] - values[max_code - 1]));
  }

  uint8_t nan(bool negative) const { return f.uz ? 0x80 : (negative ? 0xff : 0x7f); }
  uint8_t overflow(bool negative, bool saturate) const {
    const uint8_t sign = negative ? 0x80 : 0;
    if (saturate) return static_cast<uint8_t>(sign | max_code);
    if (f.has_inf) return static_cast<uint8_t>(sign | 0x7c);
    return nan(negative);
  }

  uint8_t encode(float x, bool saturate) const {
    const bool negative = std::signbit(x);
    if (std::isnan(x)) return nan(negative);
    if (std::isinf(x)) return overflow(negative, saturate);
    const double a = std::fabs(static_cast<double>(x));
    // Nearest of the two neighbours, ties to the even code.
    auto hi = std::lower_bound(values.begin(), values.end(), a);
    int code;
    if (hi == values.end()) {
      code = max_code + 1;
    } else if (*hi == a || hi == values.begin()) {
      code = static_cast<int>(hi - values.begin());
    } else {
      const int up = static_cast<int>(hi - values.begin());
      const double d_up = *hi - a, d_down = a - *(hi - 1);
      code = d_up < d_down ? up : d_down < d_up ? up - 1 : (up % 2 == 0 ? up : up - 1);
    }
    if (code > max_code) return overflow(negative, saturate);
    if (code == 0 && f.uz) return 0;
    return static_cast<uint8_t>((negative ? 0x80 : 0) | code);
  }

  const Format& f;
  std::vector<double> values;  ///< by magnitude code, plus the one past the max
  int max_code = 0;
};

/// The ONNX reference's two known deviations from the Cast table (see the
/// top of the file), for saturate=0: the table's answer, or nullopt.
std::optional<uint8_t> table_over_reference(const Format& f, float x) {
  const float a = std::fabs(x);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::string_view(f.name) == "E4M3FN" && a >= 480 && a < 496) return sign | 0x7f;
  if (std::string_view(f.name) == "E5M2" && a >= 61440 && a < 65536) return sign | 0x7c;
  return std::nullopt;
}

// ---- Tests ------------------------------------------------------------------

TEST(Float8Test, DecodeMatchesOnnxForEveryCode) {
  for (const Format& f : kFormats) {
    for (int c = 0; c < 256; ++c) {
      const float got = f.decode(static_cast<uint8_t>(c));
      const uint32_t want = f.onnx_decode[c];
      if (want == 0x7fc00000u)
        EXPECT_TRUE(std::isnan(got)) << f.name << " code " << c;
      else
        EXPECT_EQ(to_bits(got), want) << f.name << " code " << c << ": " << got;
    }
  }
}

TEST(Float8Test, DecodeMatchesTheFields) {
  for (const Format& f : kFormats) {
    for (int c = 0; c < 128; ++c) {
      if (is_special_code(f, c)) continue;
      EXPECT_EQ(f.decode(static_cast<uint8_t>(c)), field_value(f, c)) << f.name << " " << c;
      const float neg = f.decode(static_cast<uint8_t>(c | 0x80));
      if (f.uz && c == 0)
        EXPECT_TRUE(std::isnan(neg)) << f.name << ": 0x80 is NaN";
      else
        EXPECT_EQ(to_bits(neg), to_bits(-static_cast<float>(field_value(f, c))))
            << f.name << " " << (c | 0x80);
    }
  }
}

TEST(Float8Test, EncodeMatchesOnnxOnBoundaryValues) {
  for (const Format& f : kFormats) {
    ASSERT_GT(f.onnx_encode_rows, 200u) << f.name;
    for (size_t i = 0; i < f.onnx_encode_rows; ++i) {
      const Float8EncodeRow& row = f.onnx_encode[i];
      const float x = from_bits(row.f32_bits);
      EXPECT_EQ(f.encode(x, true), row.saturate) << f.name << " saturate x=" << x;
      const uint8_t no_sat = table_over_reference(f, x).value_or(row.no_saturate);
      EXPECT_EQ(f.encode(x, false), no_sat) << f.name << " no saturate x=" << x;
    }
  }
}

TEST(Float8Test, ReferenceDeviationsAreWhereTheTestSaysTheyAre) {
  // The table rows include 61440 (E5M2's first overflowing halfway point):
  // the reference gives NaN there, the Cast table inf.
  bool seen = false;
  for (const Float8EncodeRow& row : kEncodeE5M2) {
    if (from_bits(row.f32_bits) != 61440.0f) continue;
    seen = true;
    EXPECT_EQ(row.no_saturate, 0x7f);
    EXPECT_EQ(f32_to_f8e5m2(61440.0f, false), 0x7c);
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(f32_to_f8e4m3fn(480.0f, false), 0x7f);
  EXPECT_EQ(f32_to_f8e4m3fn(480.0f, true), 0x7e);
}

TEST(Float8Test, EncodeMatchesTheOracleOnSeededValues) {
  std::mt19937 rng(20240601);  // deterministic on every platform
  for (const Format& f : kFormats) {
    const Oracle oracle(f);
    int checked = 0;
    const auto check = [&](float x) {
      for (bool saturate : {true, false}) {
        const uint8_t got = f.encode(x, saturate), want = oracle.encode(x, saturate);
        if (got != want) {
          ADD_FAILURE() << fmt::format("{} saturate={} x={} ({:#010x}): got {:#04x}, want {:#04x}",
                                       f.name, saturate, x, to_bits(x), got, want);
          return false;
        }
      }
      ++checked;
      return true;
    };
    // Every f32 bit pattern class: 200k uniformly random bit patterns
    // (NaNs, infs, subnormals, huge and tiny values, both signs) ...
    for (int i = 0; i < 200000; ++i)
      if (!check(from_bits(static_cast<uint32_t>(rng())))) return;
    // ... 300k with the exponent near the format's range (where rounding
    // happens), random mantissas ...
    const int lo_exp = 127 - f.bias - f.mant_bits - 3, hi_exp = 127 + 18;
    for (int i = 0; i < 300000; ++i) {
      const uint32_t exp =
          static_cast<uint32_t>(lo_exp + static_cast<int>(rng() % (hi_exp - lo_exp)));
      const uint32_t bits = (rng() & 0x807fffffu) | (exp << 23);
      if (!check(from_bits(bits))) return;
    }
    // ... and every halfway point, its float neighbours, each value and
    // its neighbours, both signs.
    for (size_t k = 0; k + 1 < oracle.values.size(); ++k) {
      const float v = static_cast<float>(oracle.values[k]);
      const float mid = static_cast<float>((oracle.values[k] + oracle.values[k + 1]) / 2);
      for (float x : {v, mid})
        for (float y : {x, std::nextafter(x, 0.0f), std::nextafter(x, INFINITY)})
          if (!check(y) || !check(-y)) return;
    }
    for (uint32_t bits :
         {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u,
          0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu})
      if (!check(from_bits(bits))) return;
    EXPECT_GT(checked, 500000) << f.name;
  }
}

TEST(Float8Test, EncodeDecodeRoundTripsEveryCode) {
  for (const Format& f : kFormats) {
    for (int c = 0; c < 256; ++c) {
      const float v = f.decode(static_cast<uint8_t>(c));
      if (std::isnan(v) || (std::isinf(v))) continue;
      EXPECT_EQ(f.encode(v, true), c) << f.name;
      EXPECT_EQ(f.encode(v, false), c) << f.name;
    }
  }
}

TEST(Float8Test, DoubleRoundsOnceThroughRoundToOdd) {
  // A double just above a halfway point rounds up; through a float rounded
  // to nearest it would first land on the halfway point and then tie down.
  const Oracle oracle(kFormats[0]);
  for (size_t k = 1; k + 1 < oracle.values.size() - 1; ++k) {
    const double mid = (oracle.values[k] + oracle.values[k + 1]) / 2;
    const uint8_t up = ref::store_f64<DType::f8e4m3fn>(mid * (1 + 0x1p-40));
    const uint8_t down = ref::store_f64<DType::f8e4m3fn>(mid * (1 - 0x1p-40));
    EXPECT_EQ(static_cast<size_t>(up), k + 1) << mid;
    EXPECT_EQ(static_cast<size_t>(down), k) << mid;
  }
  // A store does not saturate: beyond the range is NaN (E4M3FN) or inf (E5M2).
  EXPECT_EQ(ref::store_f64<DType::f8e4m3fn>(1e6), 0x7f);
  EXPECT_EQ(ref::store_f64<DType::f8e5m2>(-1e300), 0xfc);
  EXPECT_EQ(ref::store_f64<DType::f8e4m3fnuz>(-1e-30), 0x00);  // no -0
}

}  // namespace float8_test_local
}  // namespace autofuse
