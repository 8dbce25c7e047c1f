// The loss converters (convert_loss.cpp): NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss against a direct evaluation of the ONNX function
// bodies in double, over reductions, weights, ignore_index (in and out of
// the class range) and extra dims; each loss fuses into one kernel.
#include <cmath>
#include <limits>
#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_loss_test_local {

using ::testing::HasSubstr;

struct LossCase {
  std::vector<int64_t> shape;  ///< (N, C, d1, ...)
  std::string reduction;
  bool weight = false;
  std::optional<int64_t> ignore_index;
};

std::string describe(const LossCase& c) {
  return fmt::format("[{}] {} weight={} ignore_index={}", fmt::join(c.shape, ","), c.reduction,
                     c.weight, c.ignore_index ? std::to_string(*c.ignore_index) : "none");
}

/// log_softmax along axis 1 of x (N, C, rest), in double.
std::vector<double> log_softmax(const HostTensor& x) {
  const AxisRows rows(x.shape(), 1);
  std::vector<double> out(static_cast<size_t>(x.numel()));
  for (int64_t o = 0; o < rows.outer; ++o)
    for (int64_t j = 0; j < rows.inner; ++j) {
      double m = -std::numeric_limits<double>::infinity(), s = 0;
      for (int64_t i = 0; i < rows.len; ++i)
        m = std::max(m, x.get_f64(rows.at(o, i, j)));
      for (int64_t i = 0; i < rows.len; ++i)
        s += std::exp(x.get_f64(rows.at(o, i, j)) - m);
      for (int64_t i = 0; i < rows.len; ++i)
        out[static_cast<size_t>(rows.at(o, i, j))] = x.get_f64(rows.at(o, i, j)) - m - std::log(s);
    }
  return out;
}

/// The NLL function body on log-probabilities lp (N, C, rest): the loss
/// per sample, or its sum, or the weighted mean.
std::vector<double> nll(const std::vector<double>& lp, const LossCase& c, const HostTensor& target,
                        const HostTensor* weight) {
  const AxisRows rows(c.shape, 1);
  std::vector<double> loss;
  double sum = 0, weight_sum = 0;
  for (int64_t o = 0; o < rows.outer; ++o)
    for (int64_t j = 0; j < rows.inner; ++j) {
      const int64_t t = target.get_i64(o * rows.inner + j);
      const bool ignored = c.ignore_index && t == *c.ignore_index;
      const double w = ignored ? 0 : weight ? weight->get_f64(t) : 1;
      const double l = ignored ? 0 : -lp[static_cast<size_t>(rows.at(o, t, j))] * w;
      loss.push_back(l);
      sum += l;
      weight_sum += w;
    }
  if (c.reduction == "none") return loss;
  if (c.reduction == "sum") return {sum};
  return {sum / weight_sum};  // weight_sum is the count without weights
}

/// Targets in [0, C), with every third one set to ignore_index if given.
HostTensor targets(const LossCase& c, uint64_t seed) {
  std::vector<int64_t> shape = c.shape;
  shape.erase(shape.begin() + 1);
  HostTensor t(DType::i64, shape);
  const std::vector<double> u = test_values(t.numel(), seed, 0, static_cast<double>(c.shape[1]));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_i64(i, c.ignore_index && i % 3 == 1 ? *c.ignore_index
                                              : static_cast<int64_t>(u[static_cast<size_t>(i)]));
  return t;
}

const std::vector<LossCase> kCases = {
    {{3, 5}, "mean", false, std::nullopt},
    {{3, 5}, "sum", true, std::nullopt},
    {{3, 5}, "none", false, 2},
    {{2, 4, 3}, "mean", true, std::nullopt},
    {{2, 4, 3}, "mean", false, 1},
    {{2, 4, 3}, "mean", true, -1},
    {{2, 3, 2, 2}, "sum", true, 10},
    {{2, 3, 2, 1, 2}, "none", true, 0},
    {{1, 3, 4}, "mean", false, -5},
};

void check_loss(const std::string& op) {
  uint64_t seed = 1;
  for (const LossCase& c : kCases) {
    const std::string what = op + " " + describe(c);
    OneNode n{op};
    n.opset = 13;
    n.inputs = {random_host(DType::f32, c.shape, seed++), targets(c, seed++)};
    if (c.weight) n.inputs.push_back(random_host(DType::f32, {c.shape[1]}, seed++, 0.2, 2));
    n.attrs = {attr("reduction", c.reduction.c_str())};
    if (c.ignore_index) n.attrs.push_back(attr("ignore_index", *c.ignore_index));
    const bool sce = op == "SoftmaxCrossEntropyLoss";
    if (sce) n.num_outputs = 2;
    const std::vector<double> lp = sce ? log_softmax(n.inputs[0]) : values_of(n.inputs[0]);
    const std::vector<double> want = nll(lp, c, n.inputs[1], c.weight ? &n.inputs[2] : nullptr);
    const OnnxModel model = n.import();
    // The per-sample losses are one kernel; each full reduction one more
    // (the partitioner does not merge the weights' sum with the losses').
    const bool weighted_mean = c.reduction == "mean" && (c.weight || c.ignore_index);
    EXPECT_EQ(fused_kernels(model), c.reduction == "none" ? 1 : weighted_mean ? 3 : 2) << what;
    const std::vector<HostTensor> got = run(model, n.graph_inputs());
    std::vector<int64_t> loss_shape;
    if (c.reduction == "none") {
      loss_shape = c.shape;
      loss_shape.erase(loss_shape.begin() + 1);
    }
    expect_close(got[0], loss_shape, want, 1e-5, 1e-6, what);
    if (sce) expect_close(got[1], c.shape, lp, 1e-5, 1e-6, what + " log_prob");
  }
}

TEST(ImportLoss, NegativeLogLikelihoodLossMatchesTheFunctionBody) {
  check_loss("NegativeLogLikelihoodLoss");
}

TEST(ImportLoss, SoftmaxCrossEntropyLossMatchesTheFunctionBody) {
  check_loss("SoftmaxCrossEntropyLoss");
}

TEST(ImportLoss, IgnoredTargetsReadNothing) {
  // An ignored class whose log-probability is -inf adds 0, not NaN; a mean
  // over only ignored targets is 0/0.
  const double inf = std::numeric_limits<double>::infinity();
  OneNode n{"NegativeLogLikelihoodLoss"};
  n.opset = 13;
  n.inputs = {host(DType::f32, {2, 2}, {-inf, -1, -2, -inf}), host(DType::i64, {2}, {0, 1}),
              host(DType::f32, {2}, {0.5, 4})};
  n.attrs = {attr("reduction", "none"), attr("ignore_index", 0)};
  expect_close(n.run()[0], {2}, {0, inf}, 0, 0, "none");
  n.inputs[1] = host(DType::i64, {2}, {0, 0});
  n.attrs = {attr("reduction", "mean"), attr("ignore_index", 0)};
  EXPECT_TRUE(std::isnan(n.run()[0].get_f64(0))) << "mean with every target ignored";
  n.attrs = {attr("reduction", "sum"), attr("ignore_index", 0)};
  expect_close(n.run()[0], {}, {0}, 0, 0, "sum with every target ignored");
}

TEST(ImportLoss, RejectsMismatchedTargets) {
  OneNode n{"NegativeLogLikelihoodLoss"};
  n.opset = 13;
  n.inputs = {HostTensor(DType::f32, {2, 3, 4}), HostTensor(DType::i64, {2, 5})};
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not match the input"));
  }
  n.inputs[1] = HostTensor(DType::i64, {2, 4});
  n.attrs = {attr("reduction", "max")};
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reduction \"max\""));
  }
}

}  // namespace import_loss_test_local
}  // namespace autofuse::frontend::testing
