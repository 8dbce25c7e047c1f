// ReduceL1, ReduceL2, ReduceSumSquare and ReduceLogSumExp: axes as an
// attribute (opset 13) and as an input (opset 18), keepdims,
// noop_with_empty_axes, empty reductions and integer inputs, against values
// computed in double.
#include <cmath>
#include <limits>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace composite_reduce_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

enum class Kind { L1, L2, SumSquare, LogSumExp };
constexpr Kind kKinds[] = {Kind::L1, Kind::L2, Kind::SumSquare, Kind::LogSumExp};

const char* op_name(Kind k) {
  switch (k) {
    case Kind::L1:
      return "ReduceL1";
    case Kind::L2:
      return "ReduceL2";
    case Kind::SumSquare:
      return "ReduceSumSquare";
    case Kind::LogSumExp:
      return "ReduceLogSumExp";
  }
  return "";
}

/// The reduction in double over `axes` (normalized; empty = all).
std::pair<std::vector<int64_t>, std::vector<double>> reduce(Kind kind, const HostTensor& x,
                                                            std::set<int64_t> axes, bool keepdims) {
  const std::vector<int64_t>& shape = x.shape();
  const int64_t rank = x.rank();
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a)
      axes.insert(a);
  std::vector<int64_t> out_shape, kept_shape;
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduced = axes.count(d) > 0;
    kept_shape.push_back(reduced ? 1 : shape[static_cast<size_t>(d)]);
    if (!reduced || keepdims) out_shape.push_back(reduced ? 1 : shape[static_cast<size_t>(d)]);
  }
  std::vector<double> acc(static_cast<size_t>(numel_of(kept_shape)), 0.0);
  std::vector<double> mx(acc.size(), -std::numeric_limits<double>::infinity());
  auto out_index = [&](int64_t flat) {
    int64_t o = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t n = shape[static_cast<size_t>(d)];
      const int64_t i = flat % n;
      flat /= n;
      if (!axes.count(d)) o += i * stride;
      stride *= kept_shape[static_cast<size_t>(d)];
    }
    return static_cast<size_t>(o);
  };
  for (int64_t i = 0; i < x.numel(); ++i)
    mx[out_index(i)] = std::max(mx[out_index(i)], x.get_f64(i));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.get_f64(i);
    double& a = acc[out_index(i)];
    switch (kind) {
      case Kind::L1:
        a += std::abs(v);
        break;
      case Kind::L2:
      case Kind::SumSquare:
        a += v * v;
        break;
      case Kind::LogSumExp:
        a += std::exp(v - mx[out_index(i)]);
        break;
    }
  }
  for (size_t o = 0; o < acc.size(); ++o) {
    if (kind == Kind::L2) acc[o] = std::sqrt(acc[o]);
    if (kind == Kind::LogSumExp)
      acc[o] = std::isinf(mx[o]) ? std::log(acc[o]) : std::log(acc[o]) + mx[o];
  }
  return {out_shape, acc};
}

struct Case {
  std::vector<int64_t> shape;
  std::vector<int64_t> axes;  ///< as written (may be negative); empty: not given
  bool keepdims;
};
const std::vector<Case> kCases = {
    {{1}, {}, true},
    {{7}, {0}, false},
    {{3, 5}, {1}, true},
    {{3, 5}, {-2}, false},
    {{2, 3, 4}, {0, 2}, true},
    {{2, 3, 4}, {}, false},
    {{2, 1, 33}, {-1, 1}, false},
};

std::set<int64_t> normalized(const std::vector<int64_t>& axes, int64_t rank) {
  std::set<int64_t> out;
  for (int64_t a : axes)
    out.insert(a < 0 ? a + rank : a);
  return out;
}

TEST(CompositeReduce, AxesAsAttributeAndAsInput) {
  uint64_t seed = 50;
  for (Kind kind : kKinds) {
    for (int64_t opset : {13, 18}) {
      for (const Case& c : kCases) {
        const std::string what =
            fmt::format("{} opset {} [{}] axes [{}] keepdims {}", op_name(kind), opset,
                        fmt::join(c.shape, ","), fmt::join(c.axes, ","), c.keepdims);
        OneNode n(op_name(kind));
        n.opset = opset;
        n.inputs = {random_host(DType::f32, c.shape, seed++, -4, 4)};
        n.attrs = {attr("keepdims", c.keepdims ? 1 : 0)};
        if (!c.axes.empty()) {
          if (opset >= 18) {
            n.inputs.push_back(host(DType::i64, {static_cast<int64_t>(c.axes.size())},
                                    std::vector<double>(c.axes.begin(), c.axes.end())));
            n.initializer_inputs = {1};
          } else {
            n.attrs.push_back(attr("axes", c.axes));
          }
        }
        const OnnxModel model = n.import();
        EXPECT_EQ(fused_kernels(model), 1) << what;
        const auto [shape, want] =
            reduce(kind, n.inputs[0], normalized(c.axes, static_cast<int64_t>(c.shape.size())),
                   c.keepdims);
        expect_close(run(model, n.graph_inputs())[0], shape, want, 1e-5, 1e-5, what);
      }
    }
  }
}

TEST(CompositeReduce, NoopWithEmptyAxesKeepsTheElementwiseStep) {
  const HostTensor x = host(DType::f32, {2, 2}, {-1, 2, -3, 0.5});
  auto run_noop = [&](Kind kind) {
    OneNode n(op_name(kind));
    n.opset = 18;
    n.inputs = {x};
    n.attrs = {attr("noop_with_empty_axes", 1)};
    return values_of(n.run()[0]);
  };
  EXPECT_THAT(run_noop(Kind::L1), ElementsAre(1, 2, 3, 0.5));
  EXPECT_THAT(run_noop(Kind::L2), ElementsAre(1, 2, 3, 0.5));
  EXPECT_THAT(run_noop(Kind::SumSquare), ElementsAre(1, 4, 9, 0.25));
  EXPECT_THAT(run_noop(Kind::LogSumExp), ElementsAre(-1, 2, -3, 0.5));
}

TEST(CompositeReduce, EmptyReductionsAndInfinities) {
  // Reducing an empty axis: 0 for the sums, -inf for log-sum-exp.
  for (Kind kind : kKinds) {
    OneNode n(op_name(kind));
    n.opset = 18;
    n.inputs = {HostTensor(DType::f32, {2, 0}), host(DType::i64, {1}, {1})};
    n.initializer_inputs = {1};
    n.attrs = {attr("keepdims", 0)};
    const double want = kind == Kind::LogSumExp ? -std::numeric_limits<double>::infinity() : 0;
    EXPECT_THAT(values_of(n.run()[0]), ElementsAre(want, want)) << op_name(kind);
  }
  // Log-sum-exp: large values do not overflow; all -inf gives -inf; +inf wins.
  const double inf = std::numeric_limits<double>::infinity();
  OneNode n("ReduceLogSumExp");
  n.opset = 13;
  n.inputs = {host(DType::f32, {3, 2}, {1000, 1000, -inf, -inf, inf, 1})};
  n.attrs = {attr("axes", std::vector<int64_t>{1}), attr("keepdims", 0)};
  const std::vector<double> got = values_of(n.run()[0]);
  EXPECT_NEAR(got[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_EQ(got[1], -inf);
  EXPECT_EQ(got[2], inf);
}

TEST(CompositeReduce, IntegerInputs) {
  const HostTensor x = host(DType::i32, {2, 3}, {1, -2, 3, -4, 5, 6});
  auto run_int = [&](Kind kind) {
    OneNode n(op_name(kind));
    n.opset = 13;
    n.inputs = {x};
    n.attrs = {attr("axes", std::vector<int64_t>{1}), attr("keepdims", 0)};
    const HostTensor got = n.run()[0];
    EXPECT_EQ(got.dtype(), DType::i32);
    return values_of(got);
  };
  EXPECT_THAT(run_int(Kind::L1), ElementsAre(6, 15));
  EXPECT_THAT(run_int(Kind::SumSquare), ElementsAre(14, 77));
  EXPECT_THAT(run_int(Kind::L2), ElementsAre(3, 8));  // sqrt(14), sqrt(77) truncated
}

TEST(CompositeReduce, SymbolicAxesAreAClearError) {
  ModelBuilder m(18);
  m.input("x", kF32, {2, 3})
      .input("axes", kI64, {1})
      .node("ReduceL2", {"x", "axes"}, {"y"})
      .output("y");
  try {
    m.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("axes"));
    EXPECT_THAT(e.what(), HasSubstr("ReduceL2"));
  }
}

}  // namespace composite_reduce_test_local
}  // namespace autofuse::frontend::testing
