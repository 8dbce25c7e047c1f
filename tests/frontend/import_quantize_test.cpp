// The quantization converters (convert_quantize.cpp): QuantizeLinear,
// DequantizeLinear and DynamicQuantizeLinear against values computed here
// from the operator docs' formulas (rounding ties to even, saturation, NaN,
// infinities), per tensor, per axis and blocked, on the reference
// interpreter and in compiled kernels; a DQ -> op -> Q chain fuses into one
// kernel and matches the reference on many shapes; bad parameters are
// UserErrors naming what is wrong.
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/runtime/executable.h"
#include "composite_util.h"
#include "io_test_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_quantize_test_local {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// The model compiled and run on `inputs`.
std::vector<HostTensor> run_compiled(const OnnxModel& model,
                                     const std::vector<HostTensor>& inputs) {
  return compile_two_threads(model)->run(inputs);
}

/// Both the reference interpreter and the compiled model give `want`
/// exactly (NaN for NaN).
void expect_both(const OneNode& n, const std::vector<double>& want, const std::string& what) {
  const OnnxModel model = n.import();
  const std::vector<HostTensor> inputs = n.graph_inputs();
  const HostTensor ref = run(model, inputs)[0];
  const HostTensor got = run_compiled(model, inputs)[0];
  expect_close(ref, n.inputs[0].shape(), want, 0, 0, what + " (reference)");
  expect_close(got, n.inputs[0].shape(), want, 0, 0, what + " (compiled)");
  EXPECT_EQ(got.dtype(), ref.dtype()) << what;
}

/// saturate(round_half_even(x / scale) + zp) into [lo, hi], NaN -> lo, as
/// the doc specifies and x86 conversions of NaN give.
double quantize(double x, double scale, double zp, double lo, double hi) {
  const auto q = static_cast<float>(static_cast<float>(x) / static_cast<float>(scale));
  if (std::isnan(q)) return lo;
  const double r = std::nearbyint(static_cast<double>(q)) + zp;
  return std::min(hi, std::max(lo, r));
}

TEST(ImportQuantize, PerTensorRoundsTiesToEvenAndSaturates) {
  const std::vector<double> xs = {0,    0.5,  1.5,  2.5,   -0.5, -1.5,  -2.5, 1.25, 3.75,  100,
                                  -100, 1e30, kInf, -kInf, kNaN, 0.999, 127,  -129, 254.5, 255.5};
  struct Case {
    DType dt;
    double zp, lo, hi;
  };
  for (const Case& c : {Case{DType::u8, 128, 0, 255}, Case{DType::i8, -3, -128, 127},
                        Case{DType::u16, 30000, 0, 65535}, Case{DType::i16, 5, -32768, 32767},
                        Case{DType::u4, 2, 0, 15}, Case{DType::i4, -1, -8, 7}}) {
    for (double scale : {0.5, 1.0, 0.1}) {
      OneNode n{"QuantizeLinear"};
      n.opset = 21;
      n.inputs = {host(DType::f32, {static_cast<int64_t>(xs.size())}, xs),
                  host(DType::f32, {}, {scale}), host(c.dt, {}, {c.zp})};
      // (int4 initializers are packed two to a byte: the zero point stays a
      // graph input there.)
      n.initializer_inputs = is_int4(c.dt) ? std::vector<int>{1} : std::vector<int>{1, 2};
      std::vector<double> want;
      for (double x : xs)
        want.push_back(quantize(x, scale, c.zp, c.lo, c.hi));
      expect_both(n, want, fmt::format("{} scale {}", dtype_name(c.dt), scale));
    }
  }
}

TEST(ImportQuantize, OutputTypeComesFromZeroPointOrAttributeElseUint8) {
  OneNode n{"QuantizeLinear"};
  n.opset = 21;
  n.inputs = {host(DType::f32, {4}, {-2, -0.5, 3, 300}), host(DType::f32, {}, {1})};
  n.initializer_inputs = {1};
  EXPECT_EQ(n.run()[0].dtype(), DType::u8);
  expect_both(n, {0, 0, 3, 255}, "no zero point: uint8");
  n.attrs = {attr("output_dtype", static_cast<int64_t>(onnx::TensorProto::INT8))};
  EXPECT_EQ(n.run()[0].dtype(), DType::i8);
  expect_both(n, {-2, 0, 3, 127}, "output_dtype int8");
  n.inputs.push_back(host(DType::u8, {}, {0}));
  n.initializer_inputs = {1, 2};
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("output_dtype"));
    EXPECT_THAT(e.what(), HasSubstr("y_zero_point"));
  }
}

TEST(ImportQuantize, PerAxisScalesAndZeroPoints) {
  // x [2, 3, 4] quantized along axis 1 (the default) and along axis -1.
  const HostTensor x = random_host(DType::f32, {2, 3, 4}, 7, -40, 40);
  for (int64_t axis : {1, -1}) {
    const int64_t len = axis == 1 ? 3 : 4;
    std::vector<double> scales, zps;
    for (int64_t i = 0; i < len; ++i) {
      scales.push_back(0.25 * static_cast<double>(i + 1));
      zps.push_back(static_cast<double>(10 * i - 12));
    }
    OneNode q{"QuantizeLinear"};
    q.opset = 13;
    q.inputs = {x, host(DType::f32, {len}, scales), host(DType::i8, {len}, zps)};
    q.initializer_inputs = {1, 2};
    if (axis != 1) q.attrs = {attr("axis", axis)};
    std::vector<double> want;
    const AxisRows rows({2, 3, 4}, axis == 1 ? 1 : 2);
    want.resize(24);
    for (int64_t o = 0; o < rows.outer; ++o)
      for (int64_t i = 0; i < rows.len; ++i)
        for (int64_t j = 0; j < rows.inner; ++j) {
          const int64_t k = rows.at(o, i, j);
          want[static_cast<size_t>(k)] = quantize(x.get_f64(k), scales[static_cast<size_t>(i)],
                                                  zps[static_cast<size_t>(i)], -128, 127);
        }
    expect_both(q, want, fmt::format("QuantizeLinear axis {}", axis));

    OneNode dq{"DequantizeLinear"};
    dq.opset = 13;
    const HostTensor xq = q.run()[0];
    dq.inputs = {xq, host(DType::f32, {len}, scales), host(DType::i8, {len}, zps)};
    dq.initializer_inputs = {1, 2};
    if (axis != 1) dq.attrs = {attr("axis", axis)};
    std::vector<double> back(24);
    for (int64_t o = 0; o < rows.outer; ++o)
      for (int64_t i = 0; i < rows.len; ++i)
        for (int64_t j = 0; j < rows.inner; ++j) {
          const int64_t k = rows.at(o, i, j);
          back[static_cast<size_t>(k)] =
              static_cast<float>((xq.get_f64(k) - zps[static_cast<size_t>(i)]) *
                                 static_cast<float>(scales[static_cast<size_t>(i)]));
        }
    expect_both(dq, back, fmt::format("DequantizeLinear axis {}", axis));
  }
}

TEST(ImportQuantize, BlockedAlongAnAxisWithAPartialLastBlock) {
  // x [3, 5, 2], blocks of 2 along axis 1: 3 blocks, the last one of 1.
  const HostTensor x = random_host(DType::f32, {3, 5, 2}, 11, -20, 20);
  const HostTensor scale = random_host(DType::f32, {3, 3, 2}, 12, 0.1, 2);
  const HostTensor zp = random_host(DType::i8, {3, 3, 2}, 13, -20, 20);
  OneNode q{"QuantizeLinear"};
  q.opset = 21;
  q.inputs = {x, scale, zp};
  q.attrs = {attr("axis", int64_t{1}), attr("block_size", int64_t{2})};
  std::vector<double> want;
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t p = (a * 3 + i / 2) * 2 + j;
        want.push_back(
            quantize(x.get_f64((a * 5 + i) * 2 + j), scale.get_f64(p), zp.get_f64(p), -128, 127));
      }
  expect_both(q, want, "QuantizeLinear blocked");

  OneNode dq{"DequantizeLinear"};
  dq.opset = 21;
  const HostTensor xq = q.run()[0];
  dq.inputs = {xq, scale, zp};
  dq.attrs = q.attrs;
  std::vector<double> back;
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t p = (a * 3 + i / 2) * 2 + j;
        back.push_back(static_cast<float>((xq.get_f64((a * 5 + i) * 2 + j) - zp.get_f64(p)) *
                                          static_cast<float>(scale.get_f64(p))));
      }
  expect_both(dq, back, "DequantizeLinear blocked");

  // Two blocks cannot cover 5 elements with blocks of 2.
  dq.inputs = {xq, random_host(DType::f32, {3, 2, 2}, 12, 0.1, 2)};
  try {
    dq.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("block_size 2 needs ceil(5 / 2)"));
  }
}

TEST(ImportQuantize, DequantizeIsExactThenRoundedOnceToTheScaleType) {
  // int32 with a zero point: the difference is exact in double.
  OneNode d32{"DequantizeLinear"};
  d32.inputs = {host(DType::i32, {3}, {1073741825, -2147483647, 7}), host(DType::f32, {}, {1}),
                host(DType::i32, {}, {1})};
  d32.initializer_inputs = {1, 2};
  expect_both(d32, {1073741824, -2147483648.0, 6}, "int32");
  // An f16 scale: the product in f32, rounded to f16.
  OneNode d16{"DequantizeLinear"};
  d16.opset = 19;
  d16.inputs = {host(DType::u8, {4}, {0, 1, 200, 255}), host(DType::f16, {}, {0.0999755859375}),
                host(DType::u8, {}, {3})};
  const HostTensor got = d16.run()[0];
  EXPECT_EQ(got.dtype(), DType::f16);
  std::vector<double> want;
  for (double v : {0.0, 1.0, 200.0, 255.0}) {
    HostTensor h(DType::f16, {});
    h.set_f64(0, static_cast<float>((v - 3) * 0.0999755859375));
    want.push_back(h.get_f64(0));
  }
  expect_both(d16, want, "f16 scale");
}

TEST(ImportQuantize, Float8SaturatesOrOverflowsByTheAttribute) {
  const std::vector<double> xs = {0, -0.0, 1, 3.3, 500, -1000, kInf, kNaN};
  for (int64_t saturate : {1, 0}) {
    OneNode q{"QuantizeLinear"};
    q.opset = 21;
    q.inputs = {host(DType::f32, {8}, xs), host(DType::f32, {}, {0.5}),
                host(DType::f8e4m3fn, {}, {0})};
    q.initializer_inputs = {1, 2};  // a zero point known to be 0 is not added
    q.attrs = {attr("saturate", saturate)};
    std::vector<double> want;
    for (double x : xs) {
      HostTensor h(DType::f8e4m3fn, {});
      const double v = x / 0.5;
      // E4M3FN has no inf: beyond 448 it is +-448 with saturate, else NaN.
      h.set_f64(0, std::isnan(v)        ? kNaN
                   : std::abs(v) <= 448 ? v
                   : saturate != 0      ? std::copysign(448, v)
                                        : kNaN);
      want.push_back(h.get_f64(0));
    }
    expect_both(q, want, fmt::format("e4m3fn saturate {}", saturate));
    const HostTensor got = q.run()[0];
    EXPECT_TRUE(std::signbit(got.get_f64(1))) << "-0 / 0.5 stays -0";
  }
}

TEST(ImportQuantize, DynamicQuantizeMatchesTheDocsFormula) {
  for (const auto& [lo, hi] : {std::pair{-3.0, 5.0}, std::pair{1.0, 9.0}, std::pair{-7.0, -2.0}}) {
    OneNode n{"DynamicQuantizeLinear"};
    n.num_outputs = 3;
    n.inputs = {random_host(DType::f32, {7, 13}, 21, lo, hi)};
    float mx = 0, mn = 0;
    for (double v : values_of(n.inputs[0])) {
      mx = std::max(mx, static_cast<float>(v));
      mn = std::min(mn, static_cast<float>(v));
    }
    const float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    const double zp = std::nearbyint(std::min(255.0f, std::max(0.0f, 0.0f - mn / scale)));
    std::vector<double> want;
    for (double v : values_of(n.inputs[0]))
      want.push_back(quantize(v, scale, zp, 0, 255));
    const OnnxModel model = n.import();
    for (const auto& outs : {run(model, n.inputs), run_compiled(model, n.inputs)}) {
      expect_close(outs[0], {7, 13}, want, 0, 0, "y");
      expect_close(outs[1], {}, {scale}, 0, 0, "y_scale");
      expect_close(outs[2], {}, {zp}, 0, 0, "y_zero_point");
      EXPECT_EQ(outs[0].dtype(), DType::u8);
      EXPECT_EQ(outs[2].dtype(), DType::u8);
    }
  }
}

/// DQ(x) -> Relu -> Q: the chain a quantized model is made of.
OnnxModel qdq_chain(DType act, DType q) {
  ModelBuilder m(21);
  m.input("x", onnx_type(q), {"N", "C"});
  m.input("s_in", onnx_type(act), {"C"}).input("s_out", onnx_type(act), {});
  m.input("zp_in", onnx_type(q), {"C"}).input("zp_out", onnx_type(q), {});
  m.node("DequantizeLinear", {"x", "s_in", "zp_in"}, {"d"}, {attr("axis", int64_t{1})});
  m.node("Relu", {"d"}, {"r"});
  m.node("QuantizeLinear", {"r", "s_out", "zp_out"}, {"y"});
  m.output("y");
  return m.import();
}

TEST(ImportQuantize, DequantizeOpQuantizeFusesIntoOneKernelOnEveryShape) {
  for (DType act : {DType::f32, DType::bf16}) {
    for (DType q : {DType::u8, DType::i8}) {
      const OnnxModel model = qdq_chain(act, q);
      EXPECT_EQ(fused_kernels(model), 1) << dtype_name(act) << " " << dtype_name(q);
      auto exe = compile_two_threads(model);
      const double qlo = q == DType::u8 ? 0 : -128, qhi = q == DType::u8 ? 255 : 127;
      for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{1, 1},
                                       {3, 7},
                                       {17, 33},
                                       {64, 127},
                                       {1031, 65},
                                       {4099, 257}}) {
        const uint64_t seed = static_cast<uint64_t>(rows * 131 + cols);
        const std::vector<HostTensor> inputs = {random_host(q, {rows, cols}, seed, qlo, qhi + 1),
                                                random_host(act, {cols}, seed + 1, 0.01, 0.2),
                                                host(act, {}, {0.05}),
                                                random_host(q, {cols}, seed + 2, qlo, qhi + 1),
                                                host(q, {}, {q == DType::u8 ? 9.0 : -9.0})};
        const HostTensor want = run(model, inputs)[0];
        const HostTensor got = exe->run(inputs)[0];
        // bf16: the reference rounds the dequantized and the Relu values to
        // bf16; the kernel keeps them in f32 (mixed precision), so a value
        // near a rounding boundary may quantize one step apart.
        expect_close(got, {rows, cols}, values_of(want), 0, act == DType::bf16 ? 1 : 0,
                     fmt::format("{} {} [{}, {}]", dtype_name(act), dtype_name(q), rows, cols));
      }
    }
  }
}

TEST(ImportQuantize, BadParametersAreUserErrors) {
  auto expect_error = [](const OneNode& n, const std::string& text) {
    try {
      n.import();
      ADD_FAILURE() << "expected a UserError mentioning " << text;
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(text));
      EXPECT_THAT(e.what(), HasSubstr(n.op));
    }
  };
  OneNode q{"QuantizeLinear"};
  q.opset = 21;
  q.inputs = {host(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}), host(DType::f16, {}, {1})};
  expect_error(q, "y_scale has dtype f16");
  q.inputs = {host(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}), host(DType::f32, {2}, {1, 2})};
  expect_error(q, "per-axis quantization along axis 1 needs 3");
  q.inputs = {host(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}), host(DType::f32, {}, {1}),
              host(DType::i32, {}, {0})};
  expect_error(q, "quantizing to i32 is not defined");
  OneNode dq{"DequantizeLinear"};
  dq.inputs = {host(DType::f32, {2}, {1, 2}), host(DType::f32, {}, {1})};
  expect_error(dq, "x has dtype f32");
  dq.inputs = {host(DType::u8, {2}, {1, 2}), host(DType::f32, {}, {1}), host(DType::i8, {}, {0})};
  expect_error(dq, "x_zero_point has dtype i8");
}

TEST(ImportQuantize, QLinearMatMulRequantizesAndSaturates) {
  // a u8 per row (zp [120, 130], scale [0.02, 0.05]), b i8 per column (zp 0,
  // scale [0.1, 0.3, 0.2]), y u8 / i8 (scale 0.05, zp 128 / 0).
  for (DType out : {DType::u8, DType::i8}) {
    OneNode n{"QLinearMatMul"};
    n.opset = 21;
    const HostTensor a = random_host(DType::u8, {2, 7}, 1, 0, 256);
    const HostTensor bm = random_host(DType::i8, {7, 3}, 2, -128, 128);
    const std::vector<double> a_zp = {120, 130}, a_scale = {0.02, 0.05}, b_scale = {0.1, 0.3, 0.2};
    const double y_zp = out == DType::u8 ? 128 : 0;
    n.inputs = {a,
                host(DType::f32, {2}, a_scale),
                host(DType::u8, {2}, a_zp),
                bm,
                host(DType::f32, {3}, b_scale),
                host(DType::i8, {3}, {0, 0, 0}),
                host(DType::f32, {}, {0.05}),
                host(out, {}, {y_zp})};
    n.initializer_inputs = {1, 2, 4, 5, 6, 7};
    std::vector<double> want;
    bool saturated = false;
    const auto [lo, hi] = integer_limits(out);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 7; ++k)
          acc += (a.get_f64(i * 7 + k) - a_zp[static_cast<size_t>(i)]) * bm.get_f64(k * 3 + j);
        const float scale = static_cast<float>(a_scale[static_cast<size_t>(i)]) *
                            static_cast<float>(b_scale[static_cast<size_t>(j)]) / 0.05f;
        const double v = std::nearbyint(acc * static_cast<double>(scale) + y_zp);
        saturated = saturated || v < static_cast<double>(lo) || v > static_cast<double>(hi);
        want.push_back(std::clamp(v, static_cast<double>(lo), static_cast<double>(hi)));
      }
    EXPECT_TRUE(saturated) << "the case should reach the output's limits";
    const std::string what(dtype_name(out));
    expect_close(n.run()[0], {2, 3}, want, 0, 0, what + " (reference)");
    expect_close(run_compiled(n.import(), n.graph_inputs())[0], {2, 3}, want, 0, 0,
                 what + " (compiled)");
  }
}

}  // namespace import_quantize_test_local
}  // namespace autofuse::frontend::testing
