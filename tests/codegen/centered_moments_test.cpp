// Centered moments (schedule.h CenteredMoment, codegen/cpu/centered_moments.cpp):
// batch-norm's variance computed in its mean's pass, per block of rows and
// merged by Chan's formula. Which graphs get it (the schedule), the results
// against the reference on every float dtype, shapes of 1, primes, odd
// tails, blocks of 64 rows with a partial last one, and splits across
// blocks; and the accuracy of the merge on data with a large offset and a
// drifting mean, against the exact two-pass variance in double.
#include <algorithm>
#include <cmath>
#include <regex>
#include <tuple>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"
#include "reduction_test_util.h"
#include "sanitizer.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace centered_moments_test_local {

using ::testing::HasSubstr;

/// Batch-norm statistics of x: dtype[N, `d`] over the rows; the variance
/// as `reduce` (reduce_mean or reduce_sum) of the square of x - mean, or of
/// mean - x when `reversed`.
std::string stats_text(const std::string& dtype, const std::string& d, const std::string& reduce,
                       bool reversed) {
  const std::string xf = dtype == "f32" || dtype == "f64" ? "x" : "xf";
  std::string text = fmt::format("graph stats(x: {}[N, {}]) {{\n", dtype, d);
  if (xf != "x") text += "  xf = cast(x, to=f32)\n";
  text += fmt::format("  m = reduce_mean({}, axes=[0], keepdims=true)\n", xf);
  text +=
      reversed ? fmt::format("  xc = sub(m, {})\n", xf) : fmt::format("  xc = sub({}, m)\n", xf);
  text += "  sq = mul(xc, xc)\n";
  text += fmt::format("  v = {}(sq, axes=[0], keepdims=true)\n", reduce);
  text += fmt::format("  eps = constant(dtype={}, value=1e-3)\n", xf == "x" ? dtype : "f32");
  text += "  ve = add(v, eps)\n  r = rsqrt(ve)\n  y = mul(xc, r)\n";
  if (xf != "x")
    text += fmt::format("  yo = cast(y, to={})\n  return yo, m, v\n}}", dtype);
  else
    text += "  return y, m, v\n}";
  return text;
}

/// Mean and variance alone, 64 columns; the deviation as m - x when
/// `reversed`.
std::string stats_only(bool reversed = false) {
  return fmt::format(R"(graph g(x: f32[N, 64]) {{
  m = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub({})
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0], keepdims=true)
  return m, v
}})",
                     reversed ? "m, x" : "x, m");
}

/// A second moment about a moment (the fourth central moment's pieces).
constexpr const char* kMomentOfAMoment = R"(graph g(x: f32[N, 128]) {
  m = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0], keepdims=true)
  sv = sub(sq, v)
  sq2 = mul(sv, sv)
  v2 = reduce_mean(sq2, axes=[0], keepdims=true)
  return m, v, v2
})";

schedule::ScheduledKernel scheduled(const std::string& text) {
  return schedule_graph(parse_graph(text));
}

TEST(CenteredMoments, TheScheduleRunsTheVarianceInTheMeansPass) {
  const schedule::ScheduledKernel k = scheduled(stats_text("f32", "256", "reduce_mean", false));
  ASSERT_EQ(k.moments.size(), 1u);
  const schedule::CenteredMoment& m = k.moments[0];
  EXPECT_EQ(k.graph.node(m.mean).op, OpKind::ReduceMean);
  EXPECT_EQ(k.graph.node(m.center).kind, ascir::AscKind::Broadcast);
  EXPECT_EQ(k.node_pass.at(static_cast<size_t>(m.moment)),
            k.node_pass.at(static_cast<size_t>(m.mean)));
  EXPECT_EQ(k.num_passes, 2);  // mean and variance, then y
  EXPECT_THAT(schedule::print_schedule(k),
              HasSubstr(fmt::format("reduce 0 moment of %{} center %{}", m.mean, m.center)));
  EXPECT_EQ(schedule::split_phases(k), 2);
  // Statistics alone: the variance's old pass is gone (one pass, then the
  // Stores of both in their own launch when split).
  const schedule::ScheduledKernel stats = scheduled(stats_only());
  ASSERT_EQ(stats.moments.size(), 1u);
  EXPECT_EQ(stats.num_passes, 1);
  EXPECT_EQ(schedule::split_phases(stats), 2);
  // A sum of squares, and (mean - x)^2, are moments too.
  EXPECT_EQ(scheduled(stats_text("f32", "64", "reduce_sum", true)).moments.size(), 1u);
  EXPECT_EQ(scheduled(stats_text("bf16", "100", "reduce_mean", false)).moments.size(), 1u);
}

TEST(CenteredMoments, OnlyWhereTheMomentLoopApplies) {
  // A symbolic or narrow tile may fold rows; the moment loop does not.
  EXPECT_TRUE(scheduled(stats_text("f32", "D", "reduce_mean", false)).moments.empty());
  EXPECT_TRUE(scheduled(stats_text("f32", "32", "reduce_mean", false)).moments.empty());
  // Not the square of x - mean(x): another value's deviation, another
  // reduction of the square, a deviation times x, the row layout.
  const auto text = [](const char* shape, const char* axis, const char* deviation,
                       const char* square, const char* reduce) {
    return fmt::format(
        "graph g(x: f32[{0}], z: f32[{0}]) {{\n  m = reduce_mean(x, axes=[{1}], keepdims=true)\n"
        "  xc = sub({2}, m)\n  sq = mul(xc, {3})\n  v = {4}(sq, axes=[{1}], keepdims=true)\n"
        "  return v\n}}",
        shape, axis, deviation, square, reduce);
  };
  EXPECT_EQ(scheduled(text("N, 128", "0", "x", "xc", "reduce_mean")).moments.size(), 1u);
  EXPECT_TRUE(scheduled(text("N, 128", "0", "z", "xc", "reduce_mean")).moments.empty());
  EXPECT_TRUE(scheduled(text("N, 128", "0", "x", "xc", "reduce_max")).moments.empty());
  EXPECT_TRUE(scheduled(text("N, 128", "0", "x", "x", "reduce_mean")).moments.empty());
  EXPECT_TRUE(scheduled(text("128, N", "1", "x", "xc", "reduce_mean")).moments.empty());
  // The variance of the squares about the variance: its "mean" is itself a
  // moment, so only the first is one.
  EXPECT_EQ(scheduled(kMomentOfAMoment).moments.size(), 1u);
}

std::vector<sym::Binding> row_counts() {
  std::vector<sym::Binding> out;
  for (int64_t n : {1, 2, 7, 63, 64, 65, 127, 129, 1000, 4099})
    out.push_back({{"N", n}});
  return out;
}

TEST(CenteredMoments, MatchTheReferenceOnEveryFloatDtype) {
  std::vector<GraphCase> cases;
  // 64: one tile; 100: a tile with a tail; 1000: tiles of several widths
  // on the test machines.
  for (const char* d : {"64", "100", "1000"})
    cases.push_back({fmt::format("f32_{}", d),
                     parse_graph(stats_text("f32", d, "reduce_mean", false)), row_counts(), 2e-4,
                     2e-4});
  cases.push_back({"f32_sum_reversed", parse_graph(stats_text("f32", "100", "reduce_sum", true)),
                   row_counts(), 2e-4, 2e-4});
  cases.push_back({"f64", parse_graph(stats_text("f64", "72", "reduce_mean", false)), row_counts(),
                   1e-10, 1e-10});
  // Narrow dtypes: the reference rounds each op to the dtype, the kernel
  // computes in f32 and rounds the outputs.
  cases.push_back({"bf16", parse_graph(stats_text("bf16", "96", "reduce_mean", false)),
                   row_counts(), 2e-2, 2e-2});
  cases.push_back({"f16", parse_graph(stats_text("f16", "80", "reduce_mean", false)), row_counts(),
                   4e-3, 4e-3});
  // Two moments of one mean, a Store in the mean's pass, kept outer axes.
  cases.push_back({"two_moments_and_a_store", parse_graph(R"(graph g(x: f32[N, 80]) {
  m = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0], keepdims=true)
  s = reduce_sum(sq, axes=[0], keepdims=true)
  x2 = add(x, x)
  return m, v, s, x2
})"),
                   row_counts(), 2e-4, 2e-4});
  cases.push_back({"outer_axis",
                   parse_graph(R"(graph g(x: f32[B, N, 72]) {
  m = reduce_mean(x, axes=[1], keepdims=true)
  xc = sub(m, x)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[1], keepdims=true)
  y = mul(xc, v)
  return y, v
})"),
                   {{{"B", 1}, {"N", 1}}, {{"B", 3}, {"N", 65}}, {{"B", 2}, {"N", 1000}}},
                   2e-4,
                   2e-4});
  cases.push_back({"moment_of_a_moment", parse_graph(kMomentOfAMoment), row_counts(), 2e-4, 2e-4});
  for (const GraphCase& c : cases)
    ASSERT_EQ(schedule_graph(c.graph).moments.size(),
              c.label == "two_moments_and_a_store" ? 2u : 1u)
        << c.label;
  const std::string code = check_split_cases(cases, /*expect_split=*/true);
  EXPECT_THAT(code, HasSubstr(std::string("td->") + std::string(tiling::kMomentRowsField)));
  EXPECT_THAT(code, HasSubstr("the segments' moments about their common mean"));
}

/// Random inputs with a NaN in column 3 (row N / 2) and an infinity in
/// column 5 (the last row): their columns' moments are NaN, the others'
/// are unaffected (blocks and segments merge column by column).
std::vector<HostTensor> with_nan_and_inf(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 7);
  HostTensor& x = inputs[0];
  const int64_t n = binding.at("N"), d = x.numel() / std::max<int64_t>(n, 1);
  x.set_f64(n / 2 * d + 3, NAN);
  x.set_f64((n - 1) * d + 5, INFINITY);
  return inputs;
}

TEST(CenteredMoments, NanAndInfinityPropagateToTheirColumnsOnly) {
  std::vector<GraphCase> cases;
  GraphCase c{"nan_inf", parse_graph(stats_text("f32", "64", "reduce_mean", false)), row_counts(),
              2e-4, 2e-4};
  c.make_inputs = with_nan_and_inf;
  cases.push_back(std::move(c));
  check_split_cases(cases, /*expect_split=*/true);
}

/// Column 0's first 64 rows: FLT_MAX, then 63 rows of -5.4023e36: their sum
/// is finite (about -6.5e34), but FLT_MAX minus their mean overflows f32 and
/// every square does: the variance is +inf, as in the reference.
std::vector<HostTensor> with_overflowing_deviations(const Graph& graph,
                                                    const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 11);
  HostTensor& x = inputs[0];
  const int64_t n = binding.at("N"), d = x.numel() / std::max<int64_t>(n, 1);
  for (int64_t i = 0; i < std::min<int64_t>(n, 64); ++i)
    x.set_f64(i * d, i == 0 ? 3.4028234663852886e38 : -5.4023e36);
  return inputs;
}

TEST(CenteredMoments, OverflowingDeviationsGiveInfinityNotNan) {
  // Before the guard the block's deviation sum was +inf and its correction
  // inf - inf: NaN. (rtol 2e-3: column 0's mean cancels 5000-fold, so its
  // rounding depends on the order of the sum.)
  std::vector<GraphCase> cases;
  GraphCase c{"overflow",
              parse_graph(stats_text("f32", "64", "reduce_mean", false)),
              {{{"N", 64}}, {{"N", 65}}, {{"N", 200}}, {{"N", 4099}}},
              2e-3,
              2e-4};
  c.make_inputs = with_overflowing_deviations;
  cases.push_back(std::move(c));
  GraphCase reversed{"overflow_reversed",
                     parse_graph(stats_text("f32", "64", "reduce_sum", true)),
                     {{{"N", 64}}, {{"N", 4099}}},
                     2e-3,
                     2e-4};
  reversed.make_inputs = with_overflowing_deviations;
  cases.push_back(std::move(reversed));
  check_split_cases(cases, /*expect_split=*/true);
}

TEST(CenteredMoments, TileArraysFitTheStackBudget) {
  // The tiling's per-lane count (reduction_tiling.cpp, array_bytes_per_lane)
  // must cover every array the moment code declares: f64 over 1024 columns
  // is the widest case.
  for (const char* dtype : {"f32", "f64"}) {
    std::vector<schedule::ScheduledKernel> kernels = {
        scheduled(stats_text(dtype, "1024", "reduce_mean", false))};
    ASSERT_EQ(kernels[0].moments.size(), 1u) << dtype;
    const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
    const std::string code = module.code.substr(module.code.rfind("_kernel(const void*"));
    const std::regex array(
        R"((float|double|int32_t|int64_t|int|uint8_t) \w+\[(\d+)\] __attribute__)");
    int64_t bytes = 0;
    for (auto it = std::sregex_iterator(code.begin(), code.end(), array);
         it != std::sregex_iterator(); ++it) {
      const std::string type = (*it)[1];
      const int64_t size = type == "double" || type == "int64_t" ? 8 : type == "uint8_t" ? 1 : 4;
      if (std::stoll((*it)[2]) == tiling::max_tile(kernels[0]))
        bytes += size * std::stoll((*it)[2]);
    }
    EXPECT_GT(bytes, 0) << dtype;
    EXPECT_LE(bytes, tiling::kTileStackBytes) << dtype;
  }
}

/// x[i, j] = offset + scale * (drift * i + a pseudo-random value in [-1, 1)).
std::vector<HostTensor> offset_input(int64_t n, int64_t d, double offset, double drift,
                                     double scale) {
  HostTensor x(DType::f32, {n, d});
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < n * d; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1p-53;
    x.set_f64(i, offset + scale * (drift * static_cast<double>(i / d) + (2 * u - 1)));
  }
  return {x};
}

TEST(CenteredMoments, AccurateWithALargeOffsetAndADriftingMean) {
  // E[x^2] - E[x]^2 in f32 loses every digit at an offset of 1000 (its
  // square is 2^20 times the variance); blocks whose means drift apart
  // test the merge's correction terms.
  // Both forms, x - m and m - x (the block's deviation sum changes sign).
  for (const bool reversed : {false, true}) {
    const Graph graph = parse_graph(stats_only(reversed));
    std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(graph)};
    ASSERT_EQ(kernels[0].moments.size(), 1u);
    const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
    const auto so = compile(module);
    // A tenth of the rows under ASan (still ~470 blocks of 64 to merge):
    // it checks the runner's memory; the release build checks the accuracy.
    const int64_t n = kUnderAddressSanitizer ? 30011 : 300007, d = 64;
    const af_machine machines[] = {one_core(), split_machine(4, 64),
                                   af_machine{1, 32 << 10, 4 << 10, 1 << 10, 64, 1, 0}};
    // {offset, drift, scale}; at 1e20 the first block's mean squared overflows
    // f32; at 3e6 the data's spacing is 0.25 (an eighth of its spread of 2).
    for (const auto& [offset, drift, scale] :
         {std::tuple{1000.0, 0.0, 1.0}, std::tuple{0.0, 1e-4, 1.0}, std::tuple{-500.0, 3e-3, 1.0},
          std::tuple{1e20, 0.0, 1e16}, std::tuple{1e4, 0.0, 1.0}, std::tuple{-1e5, 1e-5, 1.0},
          std::tuple{3e6, 0.0, 1.0}}) {
      const std::vector<HostTensor> inputs = offset_input(n, d, offset, drift, scale);
      std::vector<double> mean(d, 0), m2(d, 0);
      for (int64_t i = 0; i < n * d; ++i)
        mean[static_cast<size_t>(i % d)] += inputs[0].get_f64(i);
      for (double& m : mean)
        m /= static_cast<double>(n);
      for (int64_t i = 0; i < n * d; ++i) {
        const double dev = inputs[0].get_f64(i) - mean[static_cast<size_t>(i % d)];
        m2[static_cast<size_t>(i % d)] += dev * dev;
      }
      for (const af_machine& machine : machines) {
        const PhasedRun run = run_phased(*so, module.kernels[0], kernels[0].graph, graph, inputs,
                                         {{"N", n}}, machine);
        for (int64_t j = 0; j < d; ++j) {
          const double want = m2[static_cast<size_t>(j)] / static_cast<double>(n);
          // Blocks of >= 64 rows in chunks of 64, Kahan across blocks: about
          // (64 + blocks' chunks + a few) eps, and the f32 result's rounding.
          // The merge works in offsets from each unit's first block center, so
          // no term grows with |mean| / sd (codegen/cpu/centered_moments.cpp):
          // at most 3.3e-6 measured, 6.0e-8 at an offset of 3e6 sd; before the
          // shift 4.4e-4 at 1e4 and 2.1 (all digits) at -1e5 in 64-row blocks.
          const double tol = 1e-5;
          EXPECT_NEAR(run.outputs.at(1).get_f64(j), want, tol * want)
              << "offset " << offset << " drift " << drift << " column " << j << " split "
              << run.split << " cores " << machine.cores << " l2 " << machine.l2_bytes
              << " reversed " << reversed;
        }
        if (machine.cores > 1) {
          EXPECT_GT(run.split, 1) << "the combine must be tested";
        }
      }
    }
  }
}

}  // namespace centered_moments_test_local
}  // namespace autofuse::codegen_test
