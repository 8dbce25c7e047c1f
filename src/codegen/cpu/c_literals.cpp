// C++ literals, type names and rounding helpers of the CPU code generator
// (see c_literals.h).
#include "codegen/cpu/c_literals.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/support/half.h"
#include "support/float8.h"

namespace autofuse::codegen::cpu {

bool is_f32_computed(DType d) {
  return d == DType::f32 || d == DType::f16 || d == DType::bf16 || is_float8(d);
}

const char* float8_name(DType d) {
  switch (d) {
    case DType::f8e4m3fn:
      return "f8e4m3fn";
    case DType::f8e4m3fnuz:
      return "f8e4m3fnuz";
    case DType::f8e5m2:
      return "f8e5m2";
    case DType::f8e5m2fnuz:
      return "f8e5m2fnuz";
    default:
      AF_CHECK(false, "{} is not a float8 type", dtype_name(d));
  }
  return nullptr;
}

namespace {

/// A float rounded to the float8 type `d` as a store does (no saturation),
/// widened back to float.
float round_to_float8(DType d, float v) {
  switch (d) {
    case DType::f8e4m3fn:
      return f8e4m3fn_to_f32(f32_to_f8e4m3fn(v, false));
    case DType::f8e4m3fnuz:
      return f8e4m3fnuz_to_f32(f32_to_f8e4m3fnuz(v, false));
    case DType::f8e5m2:
      return f8e5m2_to_f32(f32_to_f8e5m2(v, false));
    case DType::f8e5m2fnuz:
      return f8e5m2fnuz_to_f32(f32_to_f8e5m2fnuz(v, false));
    default:
      AF_CHECK(false, "{} is not a float8 type", dtype_name(d));
  }
  return v;
}

/// A double rounded to float toward zero with the last bit set when
/// inexact (round-to-odd), so that a second rounding to f16/bf16 is exact.
float round_to_odd_f32(double d) {
  if (std::isnan(d) || std::isinf(d)) return static_cast<float>(d);
  constexpr double kMax = std::numeric_limits<float>::max();
  if (std::fabs(d) > kMax) return static_cast<float>(d < 0 ? -kMax : kMax);
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  uint32_t u = float_bits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) u -= 1;
  return bits_float(u | 1u);
}

}  // namespace

double round_to_dtype(DType d, double v) {
  switch (d) {
    case DType::f64:
      return v;
    case DType::f32: {
      constexpr double kMax = std::numeric_limits<float>::max();
      constexpr double kOverflow = 0x1.ffffffp127;  // FLT_MAX + half an ulp: ties to inf
      if (std::isnan(v) || std::fabs(v) <= kMax) return static_cast<float>(v);
      if (std::fabs(v) >= kOverflow) return v < 0 ? -INFINITY : INFINITY;
      return v < 0 ? -kMax : kMax;
    }
    case DType::f16:
      return f16_to_f32(f32_to_f16(round_to_odd_f32(v)));
    case DType::bf16:
      return bf16_to_f32(f32_to_bf16(round_to_odd_f32(v)));
    case DType::f8e4m3fn:
    case DType::f8e4m3fnuz:
    case DType::f8e5m2:
    case DType::f8e5m2fnuz:
      return round_to_float8(d, round_to_odd_f32(v));
    default:
      AF_CHECK(false, "round_to_dtype of {}", dtype_name(d));
  }
  return v;
}

std::string float_literal(double v, bool is_float) {
  const char* suffix = is_float ? "f" : "";
  if (std::isnan(v)) return is_float ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  if (std::isinf(v)) {
    const char* inf = is_float ? "__builtin_inff()" : "__builtin_inf()";
    return v < 0 ? fmt::format("(-{})", inf) : std::string(inf);
  }
  // 9 / 17 significant digits round-trip a float / double exactly.
  std::string text = is_float ? fmt::format("{:.9g}", v) : fmt::format("{:.17g}", v);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  text += suffix;
  return text[0] == '-' ? "(" + text + ")" : text;
}

std::string int_literal(DType d, double v) {
  int64_t i = 0;
  if (!std::isnan(v)) {
    if (d == DType::u64 && v >= 0x1p63)
      i = static_cast<int64_t>(v >= 0x1p64 ? ~uint64_t{0} : static_cast<uint64_t>(v));
    else if (v >= 0x1p63)
      i = std::numeric_limits<int64_t>::max();
    else if (v < -0x1p63)
      i = std::numeric_limits<int64_t>::min();
    else
      i = static_cast<int64_t>(v);
  }
  switch (d) {
    case DType::i4:  // sign-extend the low 4 bits
      return fmt::format("(int8_t)({})", static_cast<int>((static_cast<uint64_t>(i) & 15) ^ 8) - 8);
    case DType::u4:
      return fmt::format("(uint8_t)({})", static_cast<uint64_t>(i) & 15);
    case DType::i8:
      return fmt::format("(int8_t)({})", static_cast<int8_t>(i));
    case DType::u8:
      return fmt::format("(uint8_t)({})", static_cast<uint8_t>(i));
    case DType::i16:
      return fmt::format("(int16_t)({})", static_cast<int16_t>(i));
    case DType::u16:
      return fmt::format("(uint16_t)({})", static_cast<uint16_t>(i));
    case DType::i32:
      if (static_cast<int32_t>(i) == std::numeric_limits<int32_t>::min())
        return "(int32_t)(-2147483647 - 1)";
      return fmt::format("(int32_t)({})", static_cast<int32_t>(i));
    case DType::u32:
      return fmt::format("(uint32_t)({}u)", static_cast<uint32_t>(i));
    case DType::i64:
      if (i == std::numeric_limits<int64_t>::min()) return "(int64_t)(-9223372036854775807LL - 1)";
      return fmt::format("(int64_t)({}LL)", i);
    case DType::u64:
      return fmt::format("(uint64_t)({}ULL)", static_cast<uint64_t>(i));
    default:
      AF_CHECK(false, "int_literal of {}", dtype_name(d));
  }
  return {};
}

std::string f2i_helper(DType to) {
  switch (to) {
    case DType::i4:
      return "af_f2i4";
    case DType::u4:
      return "af_f2u4";
    case DType::i8:
      return "af_f2i8";
    case DType::u8:
      return "af_f2u8";
    case DType::i16:
      return "af_f2i16";
    case DType::u16:
      return "af_f2u16";
    case DType::i32:
      return "af_f2i32";
    case DType::u32:
      return "af_f2u32";
    case DType::i64:
      return "af_f2i64";
    case DType::u64:
      return "af_f2u64";
    default:
      AF_CHECK(false, "float -> {} is not a float-to-int cast", dtype_name(to));
  }
  return {};
}

std::string int_lowest(DType d) {
  switch (d) {
    case DType::i4:
      return "(int8_t)(-8)";
    case DType::i8:
      return "(int8_t)(-128)";
    case DType::u4:
    case DType::u8:
      return "(uint8_t)0";
    case DType::i16:
      return "(int16_t)(-32768)";
    case DType::u16:
      return "(uint16_t)0";
    case DType::u32:
      return "(uint32_t)0";
    case DType::u64:
      return "(uint64_t)0";
    case DType::i32:
      return "(int32_t)(-2147483647 - 1)";
    case DType::i64:
      return "(int64_t)(-9223372036854775807LL - 1)";
    default:
      AF_CHECK(false, "int_lowest of {}", dtype_name(d));
  }
  return {};
}

std::string int_highest(DType d) {
  switch (d) {
    case DType::i4:
      return "(int8_t)7";
    case DType::u4:
      return "(uint8_t)15";
    case DType::i8:
      return "(int8_t)127";
    case DType::u8:
      return "(uint8_t)255";
    case DType::i16:
      return "(int16_t)32767";
    case DType::u16:
      return "(uint16_t)65535";
    case DType::u32:
      return "(uint32_t)4294967295u";
    case DType::u64:
      return "(uint64_t)18446744073709551615ULL";
    case DType::i32:
      return "(int32_t)2147483647";
    case DType::i64:
      return "(int64_t)9223372036854775807LL";
    default:
      AF_CHECK(false, "int_highest of {}", dtype_name(d));
  }
  return {};
}

std::string unsigned_type(DType d) {
  switch (d) {
    case DType::i4:
    case DType::u4:
    case DType::i8:
    case DType::u8:
      return "uint8_t";
    case DType::i16:
    case DType::u16:
      return "uint16_t";
    case DType::i32:
    case DType::u32:
      return "uint32_t";
    case DType::i64:
    case DType::u64:
      return "uint64_t";
    default:
      AF_CHECK(false, "unsigned_type of {}", dtype_name(d));
  }
  return {};
}

std::string wrap_int4(DType d, const std::string& v) {
  if (d == DType::i4) return fmt::format("af_wrap_i4({})", v);
  if (d == DType::u4) return fmt::format("af_wrap_u4({})", v);
  return v;
}

}  // namespace autofuse::codegen::cpu
