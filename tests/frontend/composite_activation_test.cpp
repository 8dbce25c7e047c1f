// Activation converters (Gelu, HardSigmoid, HardSwish, Mish, Softplus, Selu,
// Elu, LeakyRelu, PRelu), Clip and Dropout: imported, run on the reference
// interpreter and compared with formulas evaluated in double.
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace composite_activation_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::vector<int64_t>> kShapes = {{1}, {7}, {3, 1}, {2, 3, 5}};

/// Runs a unary op on every test shape and dtype and compares with `f`.
void check_unary(const std::string& op, const std::vector<onnx::AttributeProto>& attrs,
                 const std::function<double(double)>& f, int64_t opset = 17,
                 std::vector<DType> dtypes = {DType::f32, DType::f16, DType::f64}) {
  uint64_t seed = 7;
  for (DType dt : dtypes) {
    for (const auto& shape : kShapes) {
      const std::string what = fmt::format("{} {} [{}]", op, dtype_name(dt), fmt::join(shape, ","));
      OneNode n{op};
      n.inputs = {random_host(dt, shape, seed++, -6, 6)};
      n.attrs = attrs;
      n.opset = opset;
      const OnnxModel model = n.import();
      EXPECT_EQ(fused_kernels(model), 1) << what;
      const HostTensor got = run(model, n.graph_inputs())[0];
      ASSERT_EQ(got.dtype(), dt) << what;
      std::vector<double> want;
      for (int64_t i = 0; i < n.inputs[0].numel(); ++i)
        want.push_back(f(n.inputs[0].get_f64(i)));
      // f16 rounds after every op: a few ulps of the largest intermediate.
      const double atol = dt == DType::f16 ? 1e-2 : dt == DType::f64 ? 1e-12 : 2e-6;
      expect_close(got, shape, want, rtol_of(dt), atol, what);
    }
  }
}

TEST(CompositeActivation, GeluBothForms) {
  check_unary(
      "Gelu", {}, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, 20);
  check_unary(
      "Gelu", {attr("approximate", "tanh")},
      [](double x) {
        const double k = std::sqrt(2 / std::numbers::pi);
        return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
      },
      20);
}

TEST(CompositeActivation, GeluRejectsAnUnknownApproximation) {
  OneNode n{"Gelu"};
  n.inputs = {random_host(DType::f32, {3}, 1)};
  n.attrs = {attr("approximate", "fast")};
  n.opset = 20;
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("approximate=\"fast\""));
  }
}

TEST(CompositeActivation, HardSigmoidAndHardSwish) {
  // alpha and beta are float attributes: 0.2f, not 0.2.
  check_unary("HardSigmoid", {},
              [](double x) { return std::clamp(double{0.2f} * x + 0.5, 0.0, 1.0); });
  check_unary("HardSigmoid", {attr("alpha", 0.5f), attr("beta", 0.25f)},
              [](double x) { return std::clamp(0.5 * x + 0.25, 0.0, 1.0); });
  check_unary("HardSwish", {}, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); });
}

TEST(CompositeActivation, SoftplusAndMish) {
  check_unary("Softplus", {}, [](double x) { return std::log1p(std::exp(x)); });
  check_unary("Mish", {}, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
}

TEST(CompositeActivation, SoftplusDoesNotOverflow) {
  OneNode n{"Softplus"};
  n.inputs = {host(DType::f32, {4}, {-200, 100, 200, std::numeric_limits<double>::infinity()})};
  const HostTensor got = n.run()[0];
  EXPECT_NEAR(got.get_f64(0), 0, 1e-30);
  EXPECT_EQ(got.get_f64(1), 100);
  EXPECT_EQ(got.get_f64(2), 200);
  EXPECT_EQ(got.get_f64(3), std::numeric_limits<double>::infinity());
}

TEST(CompositeActivation, EluSeluLeakyRelu) {
  check_unary("Elu", {}, [](double x) { return x < 0 ? std::exp(x) - 1 : x; });
  check_unary("Elu", {attr("alpha", 0.5f)},
              [](double x) { return x < 0 ? 0.5 * (std::exp(x) - 1) : x; });
  const double alpha = 1.67326319217681884765625f, gamma = 1.05070102214813232421875f;
  check_unary("Selu", {},
              [&](double x) { return gamma * (x > 0 ? x : alpha * (std::exp(x) - 1)); });
  check_unary("Selu", {attr("alpha", 2.0f), attr("gamma", 3.0f)},
              [](double x) { return 3 * (x > 0 ? x : 2 * (std::exp(x) - 1)); });
  check_unary("LeakyRelu", {}, [](double x) { return x < 0 ? 0.01f * x : x; });
  check_unary("LeakyRelu", {attr("alpha", 0.1f)}, [](double x) { return x < 0 ? 0.1f * x : x; });
}

TEST(CompositeActivation, PReluSlopeBroadcasts) {
  uint64_t seed = 30;
  struct Case {
    std::vector<int64_t> x, slope;
  };
  for (const Case& c : std::vector<Case>{
           {{5}, {1}}, {{2, 3, 4}, {3, 1}}, {{2, 3, 4}, {4}}, {{3, 4}, {3, 4}}, {{1}, {1}}}) {
    OneNode n{"PRelu"};
    n.inputs = {random_host(DType::f32, c.x, seed++), random_host(DType::f32, c.slope, seed++)};
    const HostTensor got = n.run()[0];
    // Slope index by right-aligned broadcasting.
    std::vector<double> want;
    const size_t rx = c.x.size(), rs = c.slope.size();
    for (int64_t i = 0; i < n.inputs[0].numel(); ++i) {
      int64_t rem = i, si = 0, sstride = 1;
      for (size_t d = rx; d-- > 0;) {
        const int64_t idx = rem % c.x[d];
        rem /= c.x[d];
        if (d + rs >= rx) {
          const int64_t sd = c.slope[d + rs - rx];
          if (sd != 1) si += idx * sstride;
          sstride *= sd;
        }
      }
      const double x = n.inputs[0].get_f64(i);
      want.push_back(x < 0 ? x * n.inputs[1].get_f64(si) : x);
    }
    expect_close(got, c.x, want, 1e-6, 0, fmt::format("x [{}]", fmt::join(c.x, ",")));
  }
  OneNode bad{"PRelu"};
  bad.inputs = {random_host(DType::f32, {3}, 1), random_host(DType::f32, {2, 3}, 2)};
  EXPECT_THROW(bad.import(), UserError);
}

TEST(CompositeClip, BoundsConstantOrInputsOrOmitted) {
  const HostTensor x = host(DType::f32, {6}, {-5, -1, 0, 0.5, 2, 7});
  // Constant bounds (initializers): fused as scalars.
  OneNode n{"Clip"};
  n.inputs = {x, host(DType::f32, {}, {-1.5}), host(DType::f32, {}, {1})};
  n.initializer_inputs = {1, 2};
  const OnnxModel model = n.import();
  EXPECT_EQ(fused_kernels(model), 1);
  EXPECT_THAT(values_of(run(model, n.graph_inputs())[0]), ElementsAre(-1.5, -1, 0, 0.5, 1, 1));
  // Bounds as graph inputs.
  n.initializer_inputs = {};
  EXPECT_THAT(values_of(n.run()[0]), ElementsAre(-1.5, -1, 0, 0.5, 1, 1));
  // Only max (min omitted), only min, neither.
  n.omitted_inputs = {1};
  EXPECT_THAT(values_of(n.run()[0]), ElementsAre(-5, -1, 0, 0.5, 1, 1));
  n.inputs.pop_back();
  n.omitted_inputs = {};
  EXPECT_THAT(values_of(n.run()[0]), ElementsAre(-1.5, -1, 0, 0.5, 2, 7));
  n.inputs.pop_back();
  EXPECT_THAT(values_of(n.run()[0]), ElementsAre(-5, -1, 0, 0.5, 2, 7));
  // min > max: everything becomes max.
  OneNode swapped{"Clip"};
  swapped.inputs = {x, host(DType::f32, {}, {3}), host(DType::f32, {}, {1})};
  swapped.initializer_inputs = {1, 2};
  EXPECT_THAT(values_of(swapped.run()[0]), ElementsAre(1, 1, 1, 1, 1, 1));
}

TEST(CompositeClip, IntegersIncludingInt64Extremes) {
  OneNode n{"Clip"};
  n.inputs = {host(DType::i64, {4}, {-9, -2, 3, 9}), host(DType::i64, {}, {-3}),
              host(DType::i64, {}, {5})};
  n.initializer_inputs = {1, 2};
  EXPECT_THAT(values_of(n.run()[0]), ElementsAre(-3, -2, 3, 5));
  // int64 limits as constant bounds clip nothing (and need no constant).
  auto i64_scalar = [](const std::string& name, int64_t v) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(kI64);
    t.add_int64_data(v);
    return t;
  };
  auto clip_model = [&](int64_t lo, int64_t hi) {
    ModelBuilder m(17);
    m.input("x", kI64, {2})
        .initializer(i64_scalar("lo", lo))
        .initializer(i64_scalar("hi", hi))
        .node("Clip", {"x", "lo", "hi"}, {"y"})
        .output("y");
    return m;
  };
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  HostTensor big(DType::i64, {2});
  big.set_i64(0, kMax);
  big.set_i64(1, kMin);
  const HostTensor got = run(clip_model(kMin, kMax).import(), {big})[0];
  EXPECT_EQ(got.get_i64(0), kMax);
  EXPECT_EQ(got.get_i64(1), kMin);
  // Other bounds beyond 2^53: a clear error, not a silently rounded bound.
  try {
    clip_model(kMin + 1, kMax).import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("2^53"));
  }
}

TEST(CompositeDropout, InferenceIsIdentityWithAllTrueMask) {
  OneNode n{"Dropout"};
  n.inputs = {random_host(DType::f32, {2, 3}, 9)};
  n.num_outputs = 2;
  n.opset = 13;
  const std::vector<HostTensor> got = n.run();
  EXPECT_EQ(values_of(got[0]), values_of(n.inputs[0]));
  ASSERT_EQ(got[1].dtype(), DType::boolean);
  EXPECT_EQ(got[1].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(values_of(got[1]), ::testing::Each(1.0));
  // A constant training_mode=false (and a ratio) is fine.
  OneNode t{"Dropout"};
  t.inputs = {random_host(DType::f32, {4}, 10), host(DType::f32, {}, {0.3}),
              host(DType::boolean, {}, {0})};
  t.initializer_inputs = {1, 2};
  t.opset = 13;
  EXPECT_EQ(values_of(t.run()[0]), values_of(t.inputs[0]));
}

TEST(CompositeDropout, TrainingWithRatioZeroIsIdentityAndOtherwiseUnsupported) {
  OneNode t{"Dropout"};
  t.inputs = {random_host(DType::f32, {2, 3}, 11), host(DType::f32, {}, {0}),
              host(DType::boolean, {}, {1})};
  t.initializer_inputs = {1, 2};
  t.num_outputs = 2;
  t.opset = 22;
  const std::vector<HostTensor> got = t.run();
  EXPECT_EQ(values_of(got[0]), values_of(t.inputs[0]));
  ASSERT_EQ(got[1].dtype(), DType::boolean);
  EXPECT_THAT(values_of(got[1]), ::testing::Each(1.0));
  // A nonzero ratio (given, or the default 0.5) would draw a random mask.
  t.inputs[1] = host(DType::f32, {}, {0.3});
  try {
    t.import();
    FAIL() << "expected an UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("training_mode=true with ratio 0.3 draws a random mask; "
                                    "autofuse has no random number generation"));
  }
  t.omitted_inputs = {1};
  EXPECT_THROW(t.import(), UnsupportedError);
  // A ratio outside [0, 1) is wrong input.
  t.omitted_inputs = {};
  t.inputs[1] = host(DType::f32, {}, {1});
  try {
    t.import();
    FAIL() << "expected a UserError";
  } catch (const UnsupportedError& e) {
    FAIL() << "not an unsupported decision: " << e.what();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("ratio 1 is not in [0, 1)"));
  }
  // A run-time training_mode or ratio: a UserError quoting the input, whose
  // value is needed at import (the conformance runner freezes it).
  for (int runtime_input : {1, 2}) {
    t.inputs[1] = host(DType::f32, {}, {0});
    t.initializer_inputs = {3 - runtime_input};
    try {
      t.import();
      FAIL() << "expected a UserError";
    } catch (const UnsupportedError& e) {
      FAIL() << "not an unsupported decision: " << e.what();
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("(input {}, 'in{}') must be a scalar known at "
                                                  "import",
                                                  runtime_input, runtime_input)));
    }
  }
}

}  // namespace composite_activation_test_local
}  // namespace autofuse::frontend::testing
