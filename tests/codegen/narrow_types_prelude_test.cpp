// The kernel prelude's float8 and 4-bit integer helpers, compiled the way
// modules are (inside `#pragma omp simd` loops), against the host build of
// support/float8.h and the reference's conversions: every float8 code, and
// f32 -> float8 for a sweep of bit patterns plus every rounding edge, in
// both saturate modes.
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "autofuse/support/half.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen_test_util.h"
#include "support/float8.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace narrow_types_prelude_test_local {

constexpr const char* kFloat8[] = {"f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz"};

const jit::Module& narrow_module() {
  static const std::shared_ptr<jit::Module> module = [] {
    codegen::ModuleSource source;
    source.code = std::string(codegen::kernel_prelude());
    const auto loop = [&](const std::string& name, const char* in, const char* out,
                          const std::string& body) {
      source.code += fmt::format(
          "extern \"C\" void t_{0}(const {1}* __restrict x, {2}* __restrict y, int64_t n) {{\n"
          "#pragma omp simd\n"
          "  for (int64_t i = 0; i < n; ++i) y[i] = {3};\n}}\n",
          name, in, out, body);
    };
    for (const char* f : kFloat8) {
      loop(fmt::format("{}_to_f32", f), "uint8_t", "float", fmt::format("af_{}_to_f32(x[i])", f));
      loop(fmt::format("f32_to_{}", f), "float", "uint8_t", fmt::format("af_f32_to_{}(x[i])", f));
      loop(fmt::format("round_{}_sat", f), "float", "float",
           fmt::format("af_round_{}(x[i], 1)", f));
      loop(fmt::format("round_{}_nosat", f), "float", "float",
           fmt::format("af_round_{}(x[i], 0)", f));
    }
    loop("f2i4", "float", "int8_t", "af_f2i4(x[i])");
    loop("f2u4", "float", "uint8_t", "af_f2u4(x[i])");
    loop("sat_i4", "int64_t", "int8_t", "af_sat_i4<int64_t>(x[i])");
    loop("sat_u4_u64", "uint64_t", "uint8_t", "af_sat_u4<uint64_t>(x[i])");
    loop("wrap_i4", "int64_t", "int8_t", "af_wrap_i4(x[i])");
    loop("wrap_u4", "int64_t", "uint8_t", "af_wrap_u4(x[i])");
    loop("u64_to_f32_odd", "uint64_t", "float", "af_u64_to_f32_odd(x[i])");
    return compile(source);
  }();
  return *module;
}

template <typename In, typename Out>
std::vector<Out> run(const std::string& name, const std::vector<In>& x) {
  using Fn = void (*)(const In*, Out*, int64_t);
  std::vector<Out> y(x.size());
  reinterpret_cast<Fn>(narrow_module().symbol("t_" + name))(x.data(), y.data(),
                                                            static_cast<int64_t>(x.size()));
  return y;
}

float decode(int f, uint8_t b) {
  switch (f) {
    case 0:
      return f8e4m3fn_to_f32(b);
    case 1:
      return f8e4m3fnuz_to_f32(b);
    case 2:
      return f8e5m2_to_f32(b);
    default:
      return f8e5m2fnuz_to_f32(b);
  }
}
uint8_t encode(int f, float x, bool saturate) {
  switch (f) {
    case 0:
      return f32_to_f8e4m3fn(x, saturate);
    case 1:
      return f32_to_f8e4m3fnuz(x, saturate);
    case 2:
      return f32_to_f8e5m2(x, saturate);
    default:
      return f32_to_f8e5m2fnuz(x, saturate);
  }
}

TEST(NarrowPrelude, Float8ToFloatForEveryCode) {
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c)
    codes[c] = static_cast<uint8_t>(c);
  for (int f = 0; f < 4; ++f) {
    const std::vector<float> y = run<uint8_t, float>(fmt::format("{}_to_f32", kFloat8[f]), codes);
    for (int c = 0; c < 256; ++c)
      ASSERT_EQ(float_bits(y[c]), float_bits(decode(f, static_cast<uint8_t>(c))))
          << kFloat8[f] << " code " << c;
  }
}

TEST(NarrowPrelude, FloatToFloat8MatchesTheHeader) {
  // Every 65537th pattern, and every pattern whose top 16 bits vary with the
  // low 16 at the rounding edges of 2- and 3-bit mantissas (bits 19-21).
  std::vector<float> x;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 65537)
    x.push_back(bits_float(static_cast<uint32_t>(u)));
  for (uint32_t top = 0; top < 0x10000; top += 3)
    for (uint32_t low : {0x0000u, 0x0001u, 0xffffu, 0x8000u})
      x.push_back(bits_float(top << 16 | low));
  for (int f = 0; f < 4; ++f) {
    const std::vector<uint8_t> store = run<float, uint8_t>(fmt::format("f32_to_{}", kFloat8[f]), x);
    const std::vector<float> sat = run<float, float>(fmt::format("round_{}_sat", kFloat8[f]), x);
    const std::vector<float> nosat =
        run<float, float>(fmt::format("round_{}_nosat", kFloat8[f]), x);
    for (size_t i = 0; i < x.size(); ++i) {
      const std::string at = fmt::format("{} x={} ({:#x})", kFloat8[f], x[i], float_bits(x[i]));
      ASSERT_EQ(store[i], encode(f, x[i], false)) << at;  // a store does not saturate
      ASSERT_EQ(float_bits(sat[i]), float_bits(decode(f, encode(f, x[i], true)))) << at;
      ASSERT_EQ(float_bits(nosat[i]), float_bits(decode(f, encode(f, x[i], false)))) << at;
    }
  }
}

TEST(NarrowPrelude, Int4Helpers) {
  const std::vector<float> x = {-9,  -8.5, -7.5, -0.5, 0.5, 1.5,
                                2.5, 7.49, 7.5,  15.5, NAN, -INFINITY};
  const std::vector<int8_t> i4 = run<float, int8_t>("f2i4", x);
  const std::vector<int8_t> want_i4 = {-8, -8, -8, 0, 0, 2, 2, 7, 7, 7, 0, -8};
  EXPECT_EQ(i4, want_i4);
  const std::vector<uint8_t> u4 = run<float, uint8_t>("f2u4", x);
  const std::vector<uint8_t> want_u4 = {0, 0, 0, 0, 0, 2, 2, 7, 8, 15, 0, 0};
  EXPECT_EQ(u4, want_u4);
  const std::vector<int64_t> ints = {-100, -9, -8, 7, 8, 15, 16, INT64_MIN, INT64_MAX};
  EXPECT_EQ((run<int64_t, int8_t>("sat_i4", ints)),
            (std::vector<int8_t>{-8, -8, -8, 7, 7, 7, 7, -8, 7}));
  EXPECT_EQ((run<int64_t, int8_t>("wrap_i4", ints)),
            (std::vector<int8_t>{-4, 7, -8, 7, -8, -1, 0, 0, -1}));
  EXPECT_EQ((run<int64_t, uint8_t>("wrap_u4", ints)),
            (std::vector<uint8_t>{12, 7, 8, 7, 8, 15, 0, 0, 15}));
  const std::vector<uint64_t> big = {0, 15, 16, UINT64_MAX, uint64_t{1} << 63};
  EXPECT_EQ((run<uint64_t, uint8_t>("sat_u4_u64", big)), (std::vector<uint8_t>{0, 15, 15, 15, 15}));
}

TEST(NarrowPrelude, U64ToFloatRoundsToOdd) {
  const std::vector<uint64_t> x = {0, 1, (uint64_t{1} << 24) + 1, UINT64_MAX,
                                   (uint64_t{1} << 63) + (uint64_t{1} << 55) + 1};
  const std::vector<float> y = run<uint64_t, float>("u64_to_f32_odd", x);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_EQ(float_bits(y[2]), float_bits(16777216.0f) | 1u);  // inexact: last bit set
  EXPECT_EQ(float_bits(y[3]), float_bits(0x1p64f) - 1u);      // below 2^64, odd
  EXPECT_EQ(f32_to_bf16(y[4]), f32_to_bf16(0x1p63f + 0x1p56f));
}

TEST(NarrowCExprs, Float8CastsFollowSaturateAndResultsRound) {
  using codegen::cpu::cast_expr;
  using codegen::cpu::compute_expr;
  EXPECT_EQ(cast_expr(DType::f32, DType::f8e5m2, "v", true), "af_round_f8e5m2(v, 1)");
  EXPECT_EQ(cast_expr(DType::f32, DType::f8e5m2, "v", false), "af_round_f8e5m2(v, 0)");
  EXPECT_EQ(cast_expr(DType::f64, DType::f8e4m3fn, "v", false),
            "af_round_f8e4m3fn(af_f64_to_f32_odd(v), 0)");
  EXPECT_THROW(cast_expr(DType::f32, DType::f16, "v", false), InternalError);
  // A float8 result is rounded to its type (a store's rounding: no saturation).
  EXPECT_EQ(compute_expr(OpKind::Add, DType::f8e4m3fnuz, {"a", "b"}),
            "af_round_f8e4m3fnuz((a + b), 0)");
  EXPECT_EQ(compute_expr(OpKind::Lt, DType::f8e4m3fnuz, {"a", "b"}), "(a < b)");
  // i4 results wrap to 4 bits; max/min cannot leave the range.
  EXPECT_EQ(compute_expr(OpKind::Add, DType::i4, {"a", "b"}), "af_wrap_i4(af_wadd(a, b))");
  EXPECT_EQ(compute_expr(OpKind::Max, DType::u4, {"a", "b"}), "(a > b ? a : b)");
}

}  // namespace narrow_types_prelude_test_local
}  // namespace autofuse::codegen_test
