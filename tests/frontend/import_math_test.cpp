// The math converters (convert_math.cpp): the trigonometric and hyperbolic
// decompositions checked on a dense grid against std:: in double, on the
// reference interpreter and in a compiled kernel; the activations,
// ReduceLogSum, the windows, and the normalizations and global pools against
// values computed here.
#include <cmath>
#include <limits>
#include <numbers>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/runtime/executable.h"
#include "composite_util.h"
#include "io_test_util.h"
#include "sanitizer.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_math_test_local {

using ::testing::HasSubstr;

struct MathCase {
  const char* op;
  double (*f)(double);
};
const MathCase kMathCases[] = {
    {"Tan", [](double x) { return std::tan(x); }},
    {"Asin", [](double x) { return std::asin(x); }},
    {"Acos", [](double x) { return std::acos(x); }},
    {"Atan", [](double x) { return std::atan(x); }},
    {"Sinh", [](double x) { return std::sinh(x); }},
    {"Cosh", [](double x) { return std::cosh(x); }},
    {"Asinh", [](double x) { return std::asinh(x); }},
    {"Acosh", [](double x) { return std::acosh(x); }},
    {"Atanh", [](double x) { return std::atanh(x); }},
    {"Softsign", [](double x) { return x / (1 + std::abs(x)); }},
};

/// Every domain's interesting parts: a dense sweep of [-4, 4], the sinh /
/// cosh range up to overflow, tiny and huge magnitudes, the neighbours of
/// +-1 and the special values.
std::vector<double> dense_grid(DType dt) {
  // A tenth of the steps under ASan: it checks the runner's memory, the
  // release build the functions' accuracy.
  const int steps = kUnderAddressSanitizer ? 20000 : 200000;
  std::vector<double> xs;
  for (int i = 0; i <= steps; ++i)
    xs.push_back(-4 + 8.0 * i / steps);
  for (int i = 0; i <= steps / 10; ++i)
    xs.push_back(-90 + 180.0 * i / (steps / 10));
  for (double m = 1e-30; m < 1e30; m *= 1.07) {
    xs.push_back(m);
    xs.push_back(-m);
  }
  const double eps = dt == DType::f64 ? 0x1p-52 : 0x1p-23;
  for (int k = 1; k < 2000; ++k)
    for (double one : {1.0, -1.0}) {
      xs.push_back(one * (1 - k * eps / 2));
      xs.push_back(one * (1 + k * eps));
    }
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, 1.0, -1.0, inf, -inf, std::nan(""), 1e300, -1e300})
    xs.push_back(v);
  return xs;
}

double inf() {
  return std::numeric_limits<double>::infinity();
}

/// The distance from |w| to the next larger magnitude of the dtype.
double ulp_of(double w, DType dt) {
  const double a = std::abs(w);
  if (dt == DType::f64) return std::max(std::nextafter(a, inf()) - a, 0x1p-1074);
  const auto af = static_cast<float>(a);
  return std::max(
      static_cast<double>(std::nextafterf(af, std::numeric_limits<float>::infinity()) - af),
      0x1p-149);
}

/// got within `ulps` units in the last place of the correctly rounded
/// `want` (NaN matches NaN, inf the same inf).
void expect_ulps(const HostTensor& got, const HostTensor& x, double (*f)(double), DType dt,
                 double ulps, const std::string& what) {
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const double xi = x.get_f64(i), g = got.get_f64(i);
    HostTensor rounded(dt, {1});
    rounded.set_f64(0, f(xi));
    const double w = rounded.get_f64(0);
    bool ok;
    if (std::isnan(w) || std::isinf(w)) {
      ok = std::isnan(w) ? std::isnan(g) : g == w;
    } else {
      ok = std::abs(g - w) <= ulps * ulp_of(w, dt);
    }
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": x = " << xi << ": got " << g << ", want " << w;
    }
  }
}

TEST(ImportMath, DenseGridMatchesStdOnReferenceAndCompiledKernel) {
  for (DType dt : {DType::f32, DType::f64}) {
    const std::vector<double> grid = dense_grid(dt);
    const auto n = static_cast<int64_t>(grid.size());
    ModelBuilder m(21);
    m.input("x", onnx_type(dt), {"N"});
    for (const MathCase& c : kMathCases)
      m.node(c.op, {"x"}, {c.op}).output(c.op);
    const OnnxModel model = m.import();
    const HostTensor x = host(dt, {n}, grid);
    const std::vector<HostTensor> ref = run(model, {x});
    runtime::CompileOptions options;
    options.compiler.cache_dir = shared_test_cache();
    options.threads = 2;
    auto exe = runtime::Executable::build(model.graph, options);
    // All functions read x: horizontal fusion makes them one elementwise
    // kernel with one output each.
    EXPECT_EQ(exe->report().kernels, 1);
    const std::vector<HostTensor> compiled = exe->run(std::vector<HostTensor>{x});
    for (size_t i = 0; i < std::size(kMathCases); ++i) {
      const MathCase& c = kMathCases[i];
      // Each formula rounds a few times: measured at most 5 ulps (sinh f64;
      // f32 with the kernel's exp/log/sin/cos of <= 1 ulp: at most 4).
      const double ulps = 6;
      expect_ulps(ref[i], x, c.f, dt, ulps, fmt::format("{} {} reference", c.op, dtype_name(dt)));
      expect_ulps(compiled[i], x, c.f, dt, ulps,
                  fmt::format("{} {} compiled", c.op, dtype_name(dt)));
    }
  }
}

TEST(ImportMath, HalfPrecisionComputesInFloat) {
  for (const MathCase& c : kMathCases) {
    OneNode n{c.op};
    n.opset = 21;
    n.inputs = {host(DType::f16, {7}, {-0.9, -0.5, -0.1, 0, 0.3, 0.7, 0.99})};
    if (std::string(c.op) == "Acosh") n.inputs = {host(DType::f16, {4}, {1, 1.5, 3, 100})};
    const HostTensor got = n.run()[0];
    ASSERT_EQ(got.dtype(), DType::f16) << c.op;
    std::vector<double> want;
    for (double v : values_of(n.inputs[0]))
      want.push_back(c.f(v));
    expect_close(got, n.inputs[0].shape(), want, 2e-3, 1e-4, c.op);
  }
}

TEST(ImportMath, RejectsIntegerInputs) {
  OneNode n{"Atan"};
  n.inputs = {host(DType::i32, {2}, {1, 2})};
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("needs a float tensor"));
  }
}

TEST(ImportMath, ThresholdedReluCeluShrink) {
  const HostTensor x = host(DType::f32, {6}, {-3, -1, -0.25, 0.5, 1, 2.5});
  OneNode tr{"ThresholdedRelu"};
  tr.inputs = {x};
  tr.attrs = {attr("alpha", 0.75f)};
  expect_close(tr.run()[0], {6}, {0, 0, 0, 0, 1, 2.5}, 0, 0, "ThresholdedRelu alpha 0.75");
  tr.attrs = {};
  expect_close(tr.run()[0], {6}, {0, 0, 0, 0, 0, 2.5}, 0, 0, "ThresholdedRelu default alpha 1");

  OneNode celu{"Celu"};
  celu.inputs = {x};
  celu.attrs = {attr("alpha", 2.0f)};
  std::vector<double> want;
  for (double v : values_of(x))
    want.push_back(std::max(0.0, v) + std::min(0.0, 2 * (std::exp(v / 2) - 1)));
  expect_close(celu.run()[0], {6}, want, 1e-6, 1e-7, "Celu alpha 2");

  OneNode shrink{"Shrink"};
  shrink.inputs = {x};
  shrink.attrs = {attr("lambd", 0.9f), attr("bias", 0.5f)};
  expect_close(shrink.run()[0], {6}, {-2.5, -0.5, 0, 0, 0.5, 2}, 1e-7, 0, "Shrink float");
  // Integers: computed in double, truncated back (-3 + 1.5 = -1.5 -> -1).
  shrink.inputs = {host(DType::i32, {5}, {-3, -1, 0, 1, 4})};
  shrink.attrs = {attr("lambd", 1.0f), attr("bias", 1.5f)};
  const HostTensor got = shrink.run()[0];
  ASSERT_EQ(got.dtype(), DType::i32);
  EXPECT_EQ(values_of(got), (std::vector<double>{-1, 0, 0, 0, 2}));
}

TEST(ImportMath, BitShiftWrapsInTheUnsignedType) {
  auto shift = [](DType dt, const char* direction, std::vector<double> x, std::vector<double> s) {
    OneNode n{"BitShift"};
    const auto len = static_cast<int64_t>(x.size());
    n.inputs = {host(dt, {len}, x), host(dt, {len}, s)};
    n.attrs = {attr("direction", direction)};
    const HostTensor got = n.run()[0];
    EXPECT_EQ(got.dtype(), dt);
    return values_of(got);
  };
  using V = std::vector<double>;
  EXPECT_EQ(shift(DType::u8, "RIGHT", {16, 4, 1, 255}, {1, 2, 3, 8}), (V{8, 1, 0, 0}));
  EXPECT_EQ(shift(DType::u8, "LEFT", {16, 4, 1, 255}, {1, 2, 3, 8}), (V{32, 16, 8, 0}));
  EXPECT_EQ(shift(DType::u32, "LEFT", {200, 3}, {25, 31}), (V{2415919104.0, 2147483648.0}));
  EXPECT_EQ(shift(DType::u64, "LEFT", {1, 5}, {63, 64}), (V{9223372036854775808.0, 0}));
  EXPECT_EQ(shift(DType::u16, "RIGHT", {65535, 7}, {15, 16}), (V{1, 0}));
}

TEST(ImportMath, MatMulIntegerSubtractsZeroPoints) {
  // a_zero_point per row of A (uint8), b_zero_point a scalar (int8).
  OneNode n{"MatMulInteger"};
  n.inputs = {host(DType::u8, {2, 3}, {1, 2, 3, 4, 5, 6}),
              host(DType::i8, {3, 2}, {1, -1, 0, 2, 3, 0}), host(DType::u8, {2}, {1, 2}),
              host(DType::i8, {}, {-1})};
  const HostTensor got = n.run()[0];
  EXPECT_EQ(got.dtype(), DType::i32);
  EXPECT_EQ(got.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values_of(got), (std::vector<double>{9, 5, 23, 13}));
  n.omitted_inputs = {2, 3};
  EXPECT_EQ(values_of(n.run()[0]), (std::vector<double>{10, 3, 22, 6}));
}

TEST(ImportMath, ReduceLogSumAxesKeepdimsAndEmptyAxes) {
  const HostTensor x = random_host(DType::f32, {2, 3, 4}, 3, 0.1, 2);
  auto log_sum = [&](bool over_axis1_only) {
    std::vector<double> out;
    if (!over_axis1_only) {
      double s = 0;
      for (double v : values_of(x))
        s += v;
      return std::vector<double>{std::log(s)};
    }
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k) {
        double s = 0;
        for (int64_t j = 0; j < 3; ++j)
          s += x.get_f64((i * 3 + j) * 4 + k);
        out.push_back(std::log(s));
      }
    return out;
  };
  OneNode n{"ReduceLogSum"};
  n.opset = 18;
  n.inputs = {x, host(DType::i64, {1}, {-2})};
  n.initializer_inputs = {1};
  n.attrs = {attr("keepdims", 0)};
  expect_close(n.run()[0], {2, 4}, log_sum(true), 1e-6, 0, "axes [-2], keepdims 0");
  n.attrs = {};
  expect_close(n.run()[0], {2, 1, 4}, log_sum(true), 1e-6, 0, "axes [-2], keepdims 1");
  n.omitted_inputs = {1};
  expect_close(n.run()[0], {1, 1, 1}, log_sum(false), 1e-6, 0, "no axes: all");
  n.attrs = {attr("noop_with_empty_axes", 1)};
  std::vector<double> logs;
  for (double v : values_of(x))
    logs.push_back(std::log(v));
  expect_close(n.run()[0], {2, 3, 4}, logs, 1e-6, 0, "noop_with_empty_axes: log(x)");
  // Opset 13 reads the axes attribute; an empty reduced dim gives log(0).
  OneNode old{"ReduceLogSum"};
  old.opset = 13;
  old.inputs = {HostTensor(DType::f32, {2, 0, 3})};
  old.attrs = {attr("axes", std::vector<int64_t>{1})};
  const double ninf = -std::numeric_limits<double>::infinity();
  expect_close(old.run()[0], {2, 1, 3}, std::vector<double>(6, ninf), 0, 0, "empty set");
}

TEST(ImportMath, WindowsFoldToConstants) {
  auto window = [](const char* op, int64_t size, int64_t periodic, int32_t dtype) {
    ModelBuilder m(17);
    m.initializer(ints("size", {size}, /*scalar=*/true))
        .node(op, {"size"}, {"w"}, {attr("periodic", periodic), attr("output_datatype", dtype)})
        .output("w");
    const OnnxModel model = m.import();
    EXPECT_EQ(fused_kernels(model), 0) << op << ": a constant, no kernel";
    return run(model, {})[0];
  };
  expect_close(window("HannWindow", 4, 1, kF32), {4}, {0, 0.5, 1, 0.5}, 1e-7, 1e-7, "Hann");
  expect_close(window("HannWindow", 5, 0, kF64), {5}, {0, 0.5, 1, 0.5, 0}, 1e-15, 1e-15,
               "Hann symmetric");
  const double a0 = 25.0 / 46;
  std::vector<double> hamming, blackman;
  for (int n = 0; n < 6; ++n) {
    const double ph = 2 * std::numbers::pi * n / 6;
    hamming.push_back(a0 - (1 - a0) * std::cos(ph));
    blackman.push_back(0.42 - 0.5 * std::cos(ph) + 0.08 * std::cos(2 * ph));
  }
  expect_close(window("HammingWindow", 6, 1, kF32), {6}, hamming, 1e-6, 1e-7, "Hamming");
  expect_close(window("BlackmanWindow", 6, 1, kF32), {6}, blackman, 1e-6, 1e-7, "Blackman");
}

/// x standardized over groups of `len` consecutive elements (biased
/// variance), in double.
std::vector<double> standardize_runs(const HostTensor& x, int64_t len, double eps) {
  std::vector<double> out;
  for (int64_t start = 0; start < x.numel(); start += len) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < len; ++i)
      mean += x.get_f64(start + i);
    mean /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i)
      var += std::pow(x.get_f64(start + i) - mean, 2);
    var /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i)
      out.push_back((x.get_f64(start + i) - mean) / std::sqrt(var + eps));
  }
  return out;
}

TEST(ImportMath, InstanceNormalization) {
  const std::vector<int64_t> shape = {2, 3, 4, 5};
  OneNode n{"InstanceNormalization"};
  n.inputs = {random_host(DType::f32, shape, 1), random_host(DType::f32, {3}, 2),
              random_host(DType::f32, {3}, 3)};
  n.attrs = {attr("epsilon", 0.01f)};
  std::vector<double> want = standardize_runs(n.inputs[0], 20, double{0.01f});
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t c = static_cast<int64_t>(i) / 20 % 3;
    want[i] = want[i] * n.inputs[1].get_f64(c) + n.inputs[2].get_f64(c);
  }
  const OnnxModel model = n.import();
  expect_close(run(model, n.graph_inputs())[0], shape, want, 1e-5, 1e-6, "InstanceNormalization");
}

TEST(ImportMath, GroupNormalizationPerChannelAndPerGroupParameters) {
  const std::vector<int64_t> shape = {2, 6, 3, 2};  // 3 groups of 2 channels, 12 values each
  const HostTensor x = random_host(DType::f32, shape, 4);
  const std::vector<double> norm = standardize_runs(x, 12, 1e-5);
  for (int64_t opset : {18, 21}) {
    const int64_t params = opset >= 21 ? 6 : 3;
    OneNode n{"GroupNormalization"};
    n.opset = opset;
    n.inputs = {x, random_host(DType::f32, {params}, 5), random_host(DType::f32, {params}, 6)};
    n.attrs = {attr("num_groups", 3)};
    std::vector<double> want = norm;
    for (size_t i = 0; i < want.size(); ++i) {
      const int64_t channel = static_cast<int64_t>(i) / 6 % 6;
      const int64_t p = opset >= 21 ? channel : channel / 2;
      want[i] = want[i] * n.inputs[1].get_f64(p) + n.inputs[2].get_f64(p);
    }
    expect_close(n.run()[0], shape, want, 1e-5, 1e-6, fmt::format("opset {}", opset));
  }
  OneNode bad{"GroupNormalization"};
  bad.opset = 21;
  bad.inputs = {x, random_host(DType::f32, {6}, 5), random_host(DType::f32, {6}, 6)};
  bad.attrs = {attr("num_groups", 4)};
  try {
    bad.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not divide"));
  }
}

TEST(ImportMath, MeanVarianceNormalization) {
  // Default axes (0, 2, 3): per channel over N, H, W; layout (N, C, H, W)
  // = (2, 3, 2, 2): channel c holds elements (n * 3 + c) * 4 + k.
  const std::vector<int64_t> shape = {2, 3, 2, 2};
  OneNode n{"MeanVarianceNormalization"};
  n.opset = 13;
  n.inputs = {random_host(DType::f32, shape, 7)};
  std::vector<double> want(24);
  for (int64_t c = 0; c < 3; ++c) {
    std::vector<int64_t> at;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t k = 0; k < 4; ++k)
        at.push_back((b * 3 + c) * 4 + k);
    double mean = 0, var = 0;
    for (int64_t i : at)
      mean += n.inputs[0].get_f64(i) / 8;
    for (int64_t i : at)
      var += std::pow(n.inputs[0].get_f64(i) - mean, 2) / 8;
    for (int64_t i : at)
      want[static_cast<size_t>(i)] = (n.inputs[0].get_f64(i) - mean) / (std::sqrt(var) + 1e-9);
  }
  expect_close(n.run()[0], shape, want, 1e-5, 1e-6, "MVN");
}

TEST(ImportMath, LrnSumsTheChannelWindow) {
  const std::vector<int64_t> shape = {2, 5, 3, 1};
  for (int64_t size : {1, 2, 3, 4}) {
    OneNode n{"LRN"};
    n.opset = 13;
    n.inputs = {random_host(DType::f32, shape, 8)};
    n.attrs = {attr("size", size), attr("alpha", 0.02f), attr("beta", 0.6f), attr("bias", 2.0f)};
    const HostTensor& x = n.inputs[0];
    std::vector<double> want;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 5; ++c)
        for (int64_t k = 0; k < 3; ++k) {
          double sq = 0;
          for (int64_t i = c - (size - 1) / 2; i <= c + size / 2; ++i)
            if (i >= 0 && i < 5) sq += std::pow(x.get_f64((b * 5 + i) * 3 + k), 2);
          const double base = double{2.0f} + double{0.02f} / static_cast<double>(size) * sq;
          want.push_back(x.get_f64((b * 5 + c) * 3 + k) / std::pow(base, double{0.6f}));
        }
    expect_close(n.run()[0], shape, want, 1e-5, 1e-7, fmt::format("size {}", size));
  }
}

TEST(ImportMath, GlobalPoolsKeepTheSpatialAxesAsOnes) {
  const HostTensor x = random_host(DType::f32, {2, 3, 4, 5}, 9);
  std::vector<double> mean, max;
  for (int64_t r = 0; r < 6; ++r) {
    double s = 0, m = -inf();
    for (int64_t i = 0; i < 20; ++i) {
      s += x.get_f64(r * 20 + i);
      m = std::max(m, x.get_f64(r * 20 + i));
    }
    mean.push_back(s / 20);
    max.push_back(m);
  }
  OneNode avg{"GlobalAveragePool"};
  avg.inputs = {x};
  expect_close(avg.run()[0], {2, 3, 1, 1}, mean, 1e-6, 1e-7, "GlobalAveragePool");
  OneNode mx{"GlobalMaxPool"};
  mx.inputs = {x};
  expect_close(mx.run()[0], {2, 3, 1, 1}, max, 0, 0, "GlobalMaxPool");
}

}  // namespace import_math_test_local
}  // namespace autofuse::frontend::testing
