// LayerNormalization, Softmax, LogSoftmax and BatchNormalization: imported,
// run on the reference interpreter and compared with values computed in
// double here; the normalizations and softmaxes fuse into one kernel each.
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/runtime/executable.h"
#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace composite_norm_test_local {

using ::testing::HasSubstr;

/// LayerNormalization over axes [axis, rank) in double: Y, Mean, InvStdDev.
struct LayerNormWant {
  std::vector<double> y, mean, inv_std;
};
LayerNormWant layer_norm(const HostTensor& x, const HostTensor& scale, const HostTensor* bias,
                         int64_t axis, double eps) {
  const std::vector<int64_t>& shape = x.shape();
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < x.rank(); ++d)
    (d < axis ? rows : cols) *= shape[static_cast<size_t>(d)];
  LayerNormWant w;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += x.get_f64(r * cols + c);
    mean /= static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c)
      var += std::pow(x.get_f64(r * cols + c) - mean, 2);
    var /= static_cast<double>(cols);
    const double inv = 1 / std::sqrt(var + eps);
    w.mean.push_back(mean);
    w.inv_std.push_back(inv);
    for (int64_t c = 0; c < cols; ++c) {
      double v = (x.get_f64(r * cols + c) - mean) * inv * scale.get_f64(c);
      if (bias) v += bias->get_f64(c);
      w.y.push_back(v);
    }
  }
  return w;
}

TEST(CompositeLayerNorm, MatchesDoubleAndFusesToOneKernel) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t axis;
  };
  uint64_t seed = 1;
  for (const Case& c : std::vector<Case>{{{1, 1}, -1},
                                         {{3, 7}, -1},
                                         {{2, 5, 33}, -1},
                                         {{2, 5, 33}, 1},
                                         {{4, 3, 2}, -2},
                                         {{1, 9}, 0}}) {
    const std::string what = fmt::format("[{}] axis {}", fmt::join(c.shape, ","), c.axis);
    const int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.shape.size()) : c.axis;
    const std::vector<int64_t> norm_shape(c.shape.begin() + axis, c.shape.end());
    OneNode n{"LayerNormalization"};
    n.inputs = {random_host(DType::f32, c.shape, seed++),
                random_host(DType::f32, norm_shape, seed++, 0.5, 2),
                random_host(DType::f32, norm_shape, seed++)};
    n.attrs = {attr("axis", c.axis), attr("epsilon", 1e-3f)};
    n.num_outputs = 3;
    const OnnxModel model = n.import();
    EXPECT_EQ(fused_kernels(model), 1) << what;
    const std::vector<HostTensor> got = run(model, n.graph_inputs());
    const LayerNormWant want =
        layer_norm(n.inputs[0], n.inputs[1], &n.inputs[2], axis, static_cast<double>(1e-3f));
    std::vector<int64_t> stat_shape = c.shape;
    for (size_t d = static_cast<size_t>(axis); d < stat_shape.size(); ++d)
      stat_shape[d] = 1;
    expect_close(got[0], c.shape, want.y, 1e-5, 1e-5, what + " Y");
    expect_close(got[1], stat_shape, want.mean, 1e-5, 1e-6, what + " Mean");
    expect_close(got[2], stat_shape, want.inv_std, 1e-5, 1e-6, what + " InvStdDev");
  }
}

TEST(CompositeLayerNorm, HalfInputStashesInF32WithoutBias) {
  OneNode n{"LayerNormalization"};
  n.inputs = {random_host(DType::f16, {3, 17}, 5), random_host(DType::f16, {17}, 6, 0.5, 2)};
  n.num_outputs = 2;
  const std::vector<HostTensor> got = n.run();
  ASSERT_EQ(got[0].dtype(), DType::f16);
  ASSERT_EQ(got[1].dtype(), DType::f32);  // Mean is in the stash type
  const LayerNormWant want = layer_norm(n.inputs[0], n.inputs[1], nullptr, 1, 1e-5f);
  expect_close(got[0], {3, 17}, want.y, 4e-3, 4e-3, "Y");
  expect_close(got[1], {3, 1}, want.mean, 1e-5, 1e-6, "Mean");
}

TEST(CompositeLayerNorm, RejectsANonFloatStashType) {
  OneNode n{"LayerNormalization"};
  n.inputs = {random_host(DType::f32, {2, 3}, 1), random_host(DType::f32, {3}, 2)};
  n.attrs = {attr("stash_type", 7)};
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("stash_type 7"));
  }
}

TEST(CompositeLpNormalization, BothNormsAlongAnAxis) {
  // p = 1 divides by the sum of |x| (as ONNX Runtime; the reference sums x),
  // p = 2 by the root of the sum of squares; compiled and interpreted.
  const HostTensor x = host(DType::f32, {2, 3}, {3, -4, 0, 1, 2, -2});
  OneNode n{"LpNormalization"};
  n.inputs = {x};
  n.attrs = {attr("axis", 1), attr("p", 1)};
  expect_close(n.run()[0], {2, 3}, {3.0 / 7, -4.0 / 7, 0, 0.2, 0.4, -0.4}, 1e-6, 1e-6, "p=1");
  n.attrs = {attr("axis", 0)};  // p = 2 by default
  const double c0 = std::sqrt(10.0), c1 = std::sqrt(20.0), c2 = 2;
  const std::vector<double> want = {3 / c0, -4 / c1, 0 / c2, 1 / c0, 2 / c1, -2 / c2};
  expect_close(n.run()[0], {2, 3}, want, 1e-6, 1e-6, "p=2 axis 0");
  auto exe = compile_two_threads(n.import());
  expect_close(exe->run(std::vector<HostTensor>{x})[0], {2, 3}, want, 1e-6, 1e-6, "compiled");
  n.attrs = {attr("p", 3)};
  EXPECT_THAT(import_error(n), HasSubstr("p = 3; LpNormalization takes p = 1 or 2"));
}

/// Softmax (or log-softmax) along `axis` in double.
std::vector<double> softmax(const HostTensor& x, int64_t axis, bool log) {
  const AxisRows rows(x.shape(), axis);
  std::vector<double> out(static_cast<size_t>(x.numel()));
  for (int64_t o = 0; o < rows.outer; ++o) {
    for (int64_t j = 0; j < rows.inner; ++j) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t i = 0; i < rows.len; ++i)
        mx = std::max(mx, x.get_f64(rows.at(o, i, j)));
      for (int64_t i = 0; i < rows.len; ++i)
        sum += std::exp(x.get_f64(rows.at(o, i, j)) - mx);
      for (int64_t i = 0; i < rows.len; ++i) {
        const double s = x.get_f64(rows.at(o, i, j)) - mx;
        out[static_cast<size_t>(rows.at(o, i, j))] = log ? s - std::log(sum) : std::exp(s) / sum;
      }
    }
  }
  return out;
}

TEST(CompositeSoftmax, BothKindsEveryAxisAndOneKernel) {
  uint64_t seed = 20;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const auto& shape :
         std::vector<std::vector<int64_t>>{{1}, {5}, {3, 1}, {4, 33}, {2, 3, 7}}) {
      const int64_t rank = static_cast<int64_t>(shape.size());
      for (int64_t axis = -rank; axis < rank; ++axis) {
        const std::string what = fmt::format("{} [{}] axis {}", op, fmt::join(shape, ","), axis);
        OneNode n{op};
        // Large values: the max shift must keep exp from overflowing.
        n.inputs = {random_host(DType::f32, shape, seed++, -100, 100)};
        if (axis != -1) n.attrs = {attr("axis", axis)};
        n.opset = 13;
        const OnnxModel model = n.import();
        EXPECT_EQ(fused_kernels(model), 1) << what;
        const HostTensor got = run(model, n.graph_inputs())[0];
        expect_close(
            got, shape,
            softmax(n.inputs[0], axis < 0 ? axis + rank : axis, std::string(op) == "LogSoftmax"),
            1e-5, 1e-6, what);
      }
    }
  }
}

TEST(CompositeSoftmax, HalfAndOutOfRangeAxis) {
  OneNode n{"Softmax"};
  n.inputs = {random_host(DType::f16, {3, 9}, 3)};
  expect_close(n.run()[0], {3, 9}, softmax(n.inputs[0], 1, false), 4e-3, 1e-3, "f16");
  n.attrs = {attr("axis", 2)};
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("axis 2"));
    EXPECT_THAT(e.what(), HasSubstr("Softmax"));
  }
}

TEST(CompositeBatchNorm, InferenceMatchesDouble) {
  uint64_t seed = 40;
  for (const auto& shape :
       std::vector<std::vector<int64_t>>{{1, 1}, {2, 3}, {2, 3, 5}, {1, 4, 3, 5}}) {
    const int64_t c = shape[1];
    OneNode n{"BatchNormalization"};
    n.inputs = {random_host(DType::f32, shape, seed++), random_host(DType::f32, {c}, seed++),
                random_host(DType::f32, {c}, seed++), random_host(DType::f32, {c}, seed++),
                random_host(DType::f32, {c}, seed++, 0.1, 2)};
    n.initializer_inputs = {1, 2, 3, 4};
    n.attrs = {attr("epsilon", 1e-2f)};
    n.opset = 15;
    const OnnxModel model = n.import();
    EXPECT_EQ(fused_kernels(model), 1);
    const AxisRows rows(shape, 1);
    std::vector<double> want(static_cast<size_t>(n.inputs[0].numel()));
    for (int64_t o = 0; o < rows.outer; ++o)
      for (int64_t i = 0; i < rows.len; ++i)
        for (int64_t j = 0; j < rows.inner; ++j) {
          const double x = n.inputs[0].get_f64(rows.at(o, i, j));
          want[static_cast<size_t>(rows.at(o, i, j))] =
              (x - n.inputs[3].get_f64(i)) / std::sqrt(n.inputs[4].get_f64(i) + 1e-2f) *
                  n.inputs[1].get_f64(i) +
              n.inputs[2].get_f64(i);
        }
    expect_close(run(model, n.graph_inputs())[0], shape, want, 1e-5, 1e-5,
                 fmt::format("[{}]", fmt::join(shape, ",")));
  }
}

// training_mode=1: batch statistics over every axis but 1 (population
// variance), running = input * momentum + current * (1 - momentum).
TEST(CompositeBatchNorm, TrainingModeMatchesDouble) {
  uint64_t seed = 60;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{2, 3}, {2, 3, 4, 5}, {1, 2, 7}}) {
    const int64_t c = shape[1];
    OneNode n{"BatchNormalization"};
    n.inputs = {random_host(DType::f32, shape, seed++), random_host(DType::f32, {c}, seed++),
                random_host(DType::f32, {c}, seed++), random_host(DType::f32, {c}, seed++),
                random_host(DType::f32, {c}, seed++, 0.1, 2)};
    n.attrs = {attr("epsilon", 1e-2f), attr("momentum", 0.8f), attr("training_mode", 1)};
    n.num_outputs = 3;
    n.opset = 15;
    const OnnxModel model = n.import();
    const std::vector<HostTensor> got = run(model, n.graph_inputs());
    ASSERT_EQ(got.size(), 3u);
    const AxisRows rows(shape, 1);
    const double count = static_cast<double>(rows.outer * rows.inner);
    std::vector<double> want(static_cast<size_t>(n.inputs[0].numel()));
    std::vector<double> running_mean, running_var;
    for (int64_t i = 0; i < rows.len; ++i) {
      double sum = 0, sq = 0;
      for (int64_t o = 0; o < rows.outer; ++o)
        for (int64_t j = 0; j < rows.inner; ++j)
          sum += n.inputs[0].get_f64(rows.at(o, i, j));
      const double mean = sum / count;
      for (int64_t o = 0; o < rows.outer; ++o)
        for (int64_t j = 0; j < rows.inner; ++j)
          sq += std::pow(n.inputs[0].get_f64(rows.at(o, i, j)) - mean, 2);
      const double var = sq / count;  // population variance
      for (int64_t o = 0; o < rows.outer; ++o)
        for (int64_t j = 0; j < rows.inner; ++j) {
          const int64_t k = rows.at(o, i, j);
          want[static_cast<size_t>(k)] =
              (n.inputs[0].get_f64(k) - mean) / std::sqrt(var + 1e-2f) * n.inputs[1].get_f64(i) +
              n.inputs[2].get_f64(i);
        }
      running_mean.push_back(n.inputs[3].get_f64(i) * 0.8f + mean * (1 - 0.8f));
      running_var.push_back(n.inputs[4].get_f64(i) * 0.8f + var * (1 - 0.8f));
    }
    const std::string what = fmt::format("[{}]", fmt::join(shape, ","));
    expect_close(got[0], shape, want, 1e-5, 1e-5, what + " Y");
    expect_close(got[1], {c}, running_mean, 1e-5, 1e-6, what + " running_mean");
    expect_close(got[2], {c}, running_var, 1e-5, 1e-6, what + " running_var");
  }
}

TEST(CompositeBatchNorm, StatisticsOutputsOutsideTrainingMode) {
  OneNode n{"BatchNormalization"};
  n.inputs = {random_host(DType::f32, {2, 3}, 1)};
  for (int i = 0; i < 4; ++i)
    n.inputs.push_back(random_host(DType::f32, {3}, 2 + i, 0.1, 1));
  n.opset = 15;
  n.num_outputs = 3;
  // Opset 15 without training_mode: the extra outputs are invalid.
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UnsupportedError& e) {
    FAIL() << "invalid, not unsupported: " << e.what();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("exist only with training_mode=1"));
  }
  // Opset 13 (BatchNormalization-9) signals training by its extra outputs.
  n.opset = 13;
  n.num_outputs = 5;
  try {
    n.import();
    FAIL() << "expected an UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("BatchNormalization-9 in training mode"));
  }
}

}  // namespace composite_norm_test_local
}  // namespace autofuse::frontend::testing
