// The interpreter driver: symbol binding and its errors, node-located
// run-time errors, memory reuse, symbolic shapes, and a composite (layernorm)
// checked against a direct double-precision loop.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "ref/op_cases.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace interpreter_test_local {

using ::testing::HasSubstr;
using testing::itensor;
using testing::ivec;
using testing::same_tensor;
using testing::tensor;
using testing::vec;

sym::Expr N = sym::Expr::symbol("N");
sym::Expr D = sym::Expr::symbol("D");

/// The message of the UserError that `f` throws ("" if none).
template <typename F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

Graph two_input_graph() {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::f32, {N, D});
  Tensor y = b.input("y", DType::f32, {D});
  return std::move(b).build({b.add(x, y, "z")});
}

TEST(BindSymbolsTest, BindsLoneSymbolDims) {
  Graph g = two_input_graph();
  std::vector<HostTensor> in = {HostTensor(DType::f32, {3, 4}), HostTensor(DType::f32, {4})};
  sym::Binding b = bind_symbols(g, in);
  EXPECT_EQ(b, (sym::Binding{{"N", 3}, {"D", 4}}));
}

TEST(BindSymbolsTest, ReportsDimMismatchWithSymbolValue) {
  Graph g = two_input_graph();
  std::vector<HostTensor> in = {HostTensor(DType::f32, {3, 7}), HostTensor(DType::f32, {5})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, in); }),
              HasSubstr("input 'y' dim 0 is 5 but the graph needs D = 7"));
}

TEST(BindSymbolsTest, ReportsExpressionAndConstantDims) {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::f32, {N});
  Tensor y = b.input("y", DType::f32, {2 * N, 3});
  Graph g = std::move(b).build({x, y});
  std::vector<HostTensor> bad_expr = {HostTensor(DType::f32, {3}), HostTensor(DType::f32, {5, 3})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, bad_expr); }),
              HasSubstr("input 'y' dim 0 is 5 but the graph needs 2*N = 6"));
  std::vector<HostTensor> bad_const = {HostTensor(DType::f32, {3}), HostTensor(DType::f32, {6, 4})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, bad_const); }),
              HasSubstr("input 'y' dim 1 is 4 but the graph needs 3"));
}

TEST(BindSymbolsTest, ReportsWrongCountDTypeAndRank) {
  Graph g = two_input_graph();
  std::vector<HostTensor> one = {HostTensor(DType::f32, {3, 4})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, one); }), HasSubstr("takes 2 input(s), got 1"));
  std::vector<HostTensor> dtype = {HostTensor(DType::f16, {3, 4}), HostTensor(DType::f32, {4})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, dtype); }),
              HasSubstr("input 'x' has dtype f16 but the graph needs f32"));
  std::vector<HostTensor> rank = {HostTensor(DType::f32, {3, 4}), HostTensor(DType::f32, {1, 4})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, rank); }),
              HasSubstr("input 'y' has rank 2 (shape [1, 4]) but the graph needs rank 1"));
}

TEST(BindSymbolsTest, SymbolsMustBePositive) {
  Graph g = two_input_graph();
  std::vector<HostTensor> in = {HostTensor(DType::f32, {0, 4}), HostTensor(DType::f32, {4})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, in); }),
              HasSubstr("input 'x' dim 0 is 0 but symbol 'N' must be >= 1"));
}

TEST(BindSymbolsTest, SymbolOnlyInAttributesNeedsGivenValue) {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::i64, {N});
  Tensor i = b.iota(DType::i64, {sym::Expr::symbol("M")}, 0, "i");
  Graph g = std::move(b).build({x, i});
  std::vector<HostTensor> in = {ivec(DType::i64, {1, 2})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, in); }),
              HasSubstr("symbol 'M' is not determined by the input shapes"));
  std::vector<HostTensor> out = run_reference(g, in, {{"M", 3}});
  EXPECT_TRUE(same_tensor(out[1], ivec(DType::i64, {0, 1, 2})));
}

TEST(BindSymbolsTest, GivenValuesAreCheckedAgainstInputs) {
  Graph g = two_input_graph();
  std::vector<HostTensor> in = {HostTensor(DType::f32, {3, 4}), HostTensor(DType::f32, {4})};
  EXPECT_THAT(user_error_of([&] {
                bind_symbols(g, in, {{"N", 2}});
              }),
              HasSubstr("input 'x' dim 0 is 3 but the graph needs N = 2"));
  EXPECT_EQ(bind_symbols(g, in, {{"N", 3}}).at("D"), 4);
}

TEST(BindSymbolsTest, DimsThatAreExpressionsOnlyNeedGivenSymbol) {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::f32, {N + 1});
  Graph g = std::move(b).build({b.exp(x)});
  std::vector<HostTensor> in = {HostTensor(DType::f32, {4})};
  EXPECT_THAT(user_error_of([&] { bind_symbols(g, in); }), HasSubstr("symbol 'N'"));
  EXPECT_EQ(bind_symbols(g, in, {{"N", 3}}).at("N"), 3);
}

TEST(BindSymbolsTest, ChecksGraphGuards) {
  GraphBuilder b("g");
  sym::Expr M = sym::Expr::symbol("M");
  Tensor x = b.input("x", DType::f32, {N});
  Tensor y = b.input("y", DType::f32, {M});
  Graph g = std::move(b).build({b.add(x, y, "z")});  // guards N == M
  std::vector<HostTensor> bad = {HostTensor(DType::f32, {3}), HostTensor(DType::f32, {4})};
  EXPECT_THAT(user_error_of([&] { run_reference(g, bad); }), HasSubstr("guard"));
  std::vector<HostTensor> good = {vec(DType::f32, {1, 2, 3}), vec(DType::f32, {1, 1, 1})};
  EXPECT_TRUE(same_tensor(run_reference(g, good)[0], vec(DType::f32, {2, 3, 4})));
}

TEST(InterpreterTest, GatherOutOfRangeNamesNodeAndIndex) {
  GraphBuilder b("g");
  Tensor data = b.input("data", DType::f32, {N, 2});
  Tensor idx = b.input("idx", DType::i32, {3});
  Tensor e = b.exp(data, "e");
  Graph g = std::move(b).build({b.gather(e, idx, 0, "picked")});
  std::vector<HostTensor> in = {HostTensor(DType::f32, {4, 2}), ivec(DType::i32, {0, -4, 4})};
  try {
    run_reference(g, in);
    FAIL() << "no error";
  } catch (const UserError& err) {
    EXPECT_EQ(err.where().node, "picked");
    EXPECT_EQ(err.where().op, "gather");
    EXPECT_THAT(err.message(), HasSubstr("gather index 4"));
    EXPECT_THAT(err.message(), HasSubstr("size 4"));
  }
  in[1] = ivec(DType::i32, {0, -5, 1});
  EXPECT_THAT(user_error_of([&] { run_reference(g, in); }), HasSubstr("gather index -5"));
  in[1] = ivec(DType::i32, {3, -4, 1});
  EXPECT_EQ(run_reference(g, in)[0].shape(), (std::vector<int64_t>{3, 2}));
}

TEST(InterpreterTest, ValuesUsedTwiceAndOutputsThatAreInputs) {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::i32, {N});
  Tensor sq = b.mul(x, x, "sq");
  Tensor twice = b.add(sq, sq, "twice");
  Tensor more = b.add(twice, sq, "more");
  Graph g = std::move(b).build({more, x, sq});
  std::vector<HostTensor> in = {ivec(DType::i32, {1, -2, 3})};
  std::vector<HostTensor> out = run_reference(g, in);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(same_tensor(out[0], ivec(DType::i32, {3, 12, 27})));
  EXPECT_TRUE(same_tensor(out[1], in[0]));
  EXPECT_TRUE(same_tensor(out[2], ivec(DType::i32, {1, 4, 9})));
}

TEST(InterpreterTest, SplitWithUnusedOutput) {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::f32, {2 * N});
  std::vector<Tensor> parts = b.split(x, 0, {N, N});
  Tensor neg = b.unary(OpKind::Neg, parts[1]);
  Graph g = std::move(b).build({neg});
  std::vector<HostTensor> out =
      run_reference(g, std::vector<HostTensor>{vec(DType::f32, {1, 2, 3, 4})}, {{"N", 2}});
  EXPECT_TRUE(same_tensor(out[0], vec(DType::f32, {-3, -4})));
}

TEST(InterpreterTest, LargeIotaRoundsAndWraps) {
  GraphBuilder b("g");
  Tensor h = b.iota(DType::f16, {N}, 0, "h");
  Tensor i = b.iota(DType::i8, {N}, 0, "i");
  Graph g = std::move(b).build({h, i});
  std::vector<HostTensor> out = run_reference(g, {}, {{"N", 3000}});
  EXPECT_EQ(out[0].get_f64(2049), 2048);  // ties to even
  EXPECT_EQ(out[0].get_f64(2051), 2052);
  EXPECT_EQ(out[0].get_f64(2999), 3000);
  EXPECT_EQ(out[1].get_i64(130), -126);
  EXPECT_EQ(out[1].get_i64(256), 0);
}

/// Python's list slicing, by walking the indices one at a time.
std::vector<int64_t> python_slice(int64_t n, int64_t start, int64_t end, int64_t step) {
  auto norm = [n](int64_t i, int64_t lo, int64_t hi) {
    if (i < 0) i += n;
    return std::clamp(i, lo, hi);
  };
  std::vector<int64_t> out;
  if (step > 0) {
    int64_t i = norm(start, 0, n), stop = end == kSliceEnd ? n : norm(end, 0, n);
    for (; i < stop; i += step)
      out.push_back(i);
  } else {
    int64_t i = norm(start, -1, n - 1), stop = end == kSliceEnd ? -1 : norm(end, -1, n - 1);
    for (; i > stop; i += step)
      out.push_back(i);
  }
  return out;
}

TEST(InterpreterTest, SliceMatchesPythonOnManyCases) {
  const std::vector<int64_t> bounds = {-9, -6, -5, -3, -1, 0, 1, 2, 4, 5, 7, kSliceEnd};
  for (int64_t n = 0; n <= 5; ++n) {
    std::vector<int64_t> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = 10 * i;
    for (int64_t start : bounds) {
      if (start == kSliceEnd) continue;
      for (int64_t end : bounds) {
        for (int64_t step : {-3, -2, -1, 1, 2, 4}) {
          std::vector<int64_t> want;
          for (int64_t i : python_slice(n, start, end, step))
            want.push_back(10 * i);
          SCOPED_TRACE(fmt::format("n={} [{}:{}:{}]", n, start,
                                   end == kSliceEnd ? "end" : std::to_string(end), step));
          std::vector<HostTensor> got = testing::run_single_op(
              OpKind::Slice, {ivec(DType::i64, values)}, SliceAttrs{{0}, {start}, {end}, {step}});
          EXPECT_TRUE(same_tensor(got[0], ivec(DType::i64, want)));
        }
      }
    }
  }
}

TEST(InterpreterTest, SymbolicGraphRunsAtSeveralSizes) {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::f64, {N, D});
  Tensor y = b.input("y", DType::f64, {N, 1});
  Tensor s = b.reduce_sum(b.mul(x, y), {0}, false, "s");
  Graph g = std::move(b).build({s});
  for (int64_t n : {1, 2, 7}) {
    for (int64_t d : {1, 3}) {
      std::vector<HostTensor> in = random_inputs(g, {{"N", n}, {"D", d}}, 11);
      HostTensor out = run_reference(g, in)[0];
      ASSERT_EQ(out.shape(), (std::vector<int64_t>{d}));
      for (int64_t j = 0; j < d; ++j) {
        double want = 0;
        for (int64_t i = 0; i < n; ++i)
          want += in[0].get_f64(i * d + j) * in[1].get_f64(i);
        EXPECT_DOUBLE_EQ(out.get_f64(j), want);
      }
    }
  }
}

/// layernorm(x) * gamma + beta over the last axis, built with GraphBuilder.
Graph layernorm_graph(DType dt, double eps) {
  GraphBuilder b("layernorm");
  Tensor x = b.input("x", dt, {N, D});
  Tensor gamma = b.input("gamma", dt, {D});
  Tensor beta = b.input("beta", dt, {D});
  Tensor mean = b.reduce_mean(x, {-1}, true, "mean");
  Tensor xc = b.sub(x, mean, "xc");
  Tensor var = b.reduce_mean(b.mul(xc, xc), {-1}, true, "var");
  Tensor inv = b.rsqrt(b.add(var, b.scalar(eps, dt)), "inv");
  Tensor y = b.add(b.mul(b.mul(xc, inv), gamma), beta, "y");
  return std::move(b).build({y});
}

void check_layernorm(DType dt, double tolerance) {
  const double eps = 1e-5;
  Graph g = layernorm_graph(dt, eps);
  const int64_t n = 5, d = 67;
  std::vector<HostTensor> in = random_inputs(g, {{"N", n}, {"D", d}}, 3);
  HostTensor y = run_reference(g, in)[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{n, d}));
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j)
      mean += in[0].get_f64(i * d + j);
    mean /= d;
    for (int64_t j = 0; j < d; ++j)
      var += std::pow(in[0].get_f64(i * d + j) - mean, 2);
    var /= d;
    for (int64_t j = 0; j < d; ++j) {
      const double want =
          (in[0].get_f64(i * d + j) - mean) / std::sqrt(var + eps) * in[1].get_f64(j) +
          in[2].get_f64(j);
      worst = std::max(worst, std::fabs(y.get_f64(i * d + j) - want));
    }
  }
  EXPECT_LT(worst, tolerance) << dtype_name(dt);
  EXPECT_GT(worst, 0.0) << dtype_name(dt) << ": identical to double is suspicious below f64";
}

TEST(InterpreterTest, LayerNormMatchesDoubleLoop) {
  check_layernorm(DType::f32, 2e-6);
  check_layernorm(DType::f16, 8e-3);
  check_layernorm(DType::bf16, 6e-2);
}

TEST(InterpreterTest, LayerNormF64IsTight) {
  Graph g = layernorm_graph(DType::f64, 1e-5);
  std::vector<HostTensor> in = random_inputs(g, {{"N", 3}, {"D", 16}}, 5);
  HostTensor y = run_reference(g, in)[0];
  for (int64_t i = 0; i < 3; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < 16; ++j)
      mean += in[0].get_f64(i * 16 + j);
    mean /= 16;
    for (int64_t j = 0; j < 16; ++j)
      var += std::pow(in[0].get_f64(i * 16 + j) - mean, 2);
    var /= 16;
    for (int64_t j = 0; j < 16; ++j) {
      const double want =
          (in[0].get_f64(i * 16 + j) - mean) / std::sqrt(var + 1e-5) * in[1].get_f64(j) +
          in[2].get_f64(j);
      EXPECT_NEAR(y.get_f64(i * 16 + j), want, 1e-13);
    }
  }
}

}  // namespace interpreter_test_local
}  // namespace autofuse
