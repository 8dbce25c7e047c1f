// Centered moments in the row layout (schedule/centered_moments.cpp,
// codegen/cpu/centered_moments.cpp): NCHW batch-norm training, whose rows
// are channels over the reduced axes [N, HW], computes the variance in its
// mean's pass, merging the mean's 1024-element chunks as blocks. Which
// graphs get it; results against the reference for chunk-sized, prime and
// multi-chunk last axes, with and without splits; NaN, infinity and
// overflowing deviations; and the merge's accuracy at large offsets against
// the two-pass variance in double.
#include <cfloat>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/random.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace row_centered_moments_test_local {

using ::testing::HasSubstr;

/// Batch-norm training over x: dtype[N, C, hw] (C = 3 channels), the
/// variance as `reduce` of the square of x - mean (mean - x if `reversed`).
std::string nchw_text(const std::string& dtype, const std::string& hw,
                      const std::string& reduce = "reduce_mean", bool reversed = false) {
  const bool narrow = dtype != "f32" && dtype != "f64";
  const std::string xf = narrow ? "xf" : "x";
  std::string text = fmt::format("graph bn(x: {}[N, 3, {}]) {{\n", dtype, hw);
  if (narrow) text += "  xf = cast(x, to=f32)\n";
  text += fmt::format("  m = reduce_mean({}, axes=[0, 2], keepdims=true)\n", xf);
  text +=
      reversed ? fmt::format("  xc = sub(m, {})\n", xf) : fmt::format("  xc = sub({}, m)\n", xf);
  text += "  sq = mul(xc, xc)\n";
  text += fmt::format("  v = {}(sq, axes=[0, 2], keepdims=true)\n", reduce);
  text += fmt::format("  eps = constant(dtype={}, value=1e-3)\n", narrow ? "f32" : dtype);
  text += "  ve = add(v, eps)\n  r = rsqrt(ve)\n  y = mul(xc, r)\n";
  text += narrow ? fmt::format("  yo = cast(y, to={})\n  return yo, m, v\n}}", dtype)
                 : std::string("  return y, m, v\n}");
  return text;
}

schedule::ScheduledKernel scheduled(const std::string& text) {
  return schedule_graph(parse_graph(text));
}

TEST(RowCenteredMoments, OnlyRowsWithAnOuterReducedAxisAndALiteralLastAxisOfAChunk) {
  const schedule::ScheduledKernel k = scheduled(nchw_text("f32", "1024"));
  ASSERT_EQ(k.tile_axis, -1);  // the row layout
  ASSERT_EQ(k.moments.size(), 1u);
  EXPECT_EQ(k.node_pass.at(static_cast<size_t>(k.moments[0].moment)),
            k.node_pass.at(static_cast<size_t>(k.moments[0].mean)));
  EXPECT_EQ(k.num_passes, 2);  // mean and variance, then y
  EXPECT_EQ(scheduled(nchw_text("bf16", "3136")).moments.size(), 1u);
  EXPECT_EQ(scheduled(nchw_text("f32", "2053", "reduce_sum", true)).moments.size(), 1u);
  // Chunks shorter than 1024 would merge too often; a symbolic last axis
  // may be short at run time; one reduced axis keeps the short-row code.
  EXPECT_TRUE(scheduled(nchw_text("f32", "1000")).moments.empty());
  EXPECT_TRUE(scheduled(nchw_text("f32", "HW")).moments.empty());
  // An x that costs more than its loads to compute twice: exp's
  // polynomial, or a division.
  EXPECT_TRUE(scheduled(R"(graph g(z: f32[N, 3, 1024]) {
  x = exp(z)
  m = reduce_mean(x, axes=[0, 2], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0, 2], keepdims=true)
  return v
})")
                  .moments.empty());
  EXPECT_TRUE(scheduled(R"(graph g(x: f32[N, 4096]) {
  m = reduce_mean(x, axes=[1], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[1], keepdims=true)
  return v
})")
                  .moments.empty());
}

std::vector<sym::Binding> batches() {
  std::vector<sym::Binding> out;
  for (int64_t n : {1, 2, 3, 7})
    out.push_back({{"N", n}});
  return out;
}

TEST(RowCenteredMoments, MatchTheReference) {
  std::vector<GraphCase> cases;
  // One chunk exactly; a prime (a chunk and a tail of 7); two chunks and a
  // tail of 5.
  for (const char* hw : {"1024", "1031", "2053"})
    cases.push_back(
        {fmt::format("f32_{}", hw), parse_graph(nchw_text("f32", hw)), batches(), 2e-4, 2e-4});
  cases.push_back({"f32_sum_reversed", parse_graph(nchw_text("f32", "1031", "reduce_sum", true)),
                   batches(), 2e-4, 2e-4});
  cases.push_back({"f64", parse_graph(nchw_text("f64", "1100")), batches(), 1e-10, 1e-10});
  cases.push_back({"bf16", parse_graph(nchw_text("bf16", "1056")), batches(), 2e-2, 2e-2});
  // x scaled per batch (an operand of an outer loop level), two moments of
  // one mean, three reduced axes (segments of N times 3 * 1024 elements).
  cases.push_back({"scaled_two_moments",
                   parse_graph(R"(graph g(z: f32[N, 3, 1030], s: f32[N, 1, 1]) {
  x = mul(z, s)
  m = reduce_mean(x, axes=[0, 2], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0, 2], keepdims=true)
  q = reduce_sum(sq, axes=[0, 2], keepdims=true)
  return m, v, q
})"),
                   batches(), 2e-4, 2e-4});
  cases.push_back({"three_reduced_axes", parse_graph(R"(graph g(x: f32[N, 2, 3, 5, 1024]) {
  m = reduce_mean(x, axes=[0, 2, 4], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0, 2, 4], keepdims=true)
  y = mul(xc, v)
  return y, v
})"),
                   batches(), 2e-4, 2e-4});
  for (const GraphCase& c : cases) {
    const schedule::ScheduledKernel k = schedule_graph(c.graph);
    ASSERT_EQ(k.moments.size(), c.label == "scaled_two_moments" ? 2u : 1u) << c.label;
    if (c.label == "three_reduced_axes") {
      ASSERT_EQ(k.inner_axes.size(), 3u);
    }
  }
  const std::string code = check_split_cases(cases, /*expect_split=*/true);
  EXPECT_THAT(code, HasSubstr("the chunk merged"));
  EXPECT_THAT(code, HasSubstr("the next chunk"));
  EXPECT_THAT(code, HasSubstr("the segments' moments about their common mean"));
}

TEST(RowCenteredMoments, RowsPrefetchedAheadOnlyWhenTheyStayInTheL2) {
  // The last pass prefetches rows two on (row_prefetch.cpp) only when three
  // rows fit the L2 (1 MiB on one_core()); rows of N * 4 KiB.
  const Graph graph = parse_graph(nchw_text("f32", "1024"));
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(graph)};
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  const auto so = compile(module);
  for (const auto& [n, ahead] : {std::pair<int64_t, int64_t>{4, 1}, {200, 0}}) {
    const sym::Binding binding = {{"N", n}};
    const PhasedRun run = run_phased(*so, module.kernels[0], kernels[0].graph, graph,
                                     random_inputs(graph, binding, 1), binding, one_core());
    EXPECT_EQ(run.pf_rows, ahead) << "N = " << n;
  }
  EXPECT_THAT(module.code, HasSubstr("&& td->pf_rows > 0;  // a row to prefetch"));
}

/// x with a NaN in channel 1 and an infinity in channel 2.
std::vector<HostTensor> with_nan_and_inf(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 3);
  const int64_t hw = inputs[0].shape().back();
  inputs[0].set_f64(1 * hw + hw / 2, std::numeric_limits<double>::quiet_NaN());
  inputs[0].set_f64(inputs[0].numel() - 1, std::numeric_limits<double>::infinity());
  return inputs;
}

/// x whose squared deviations overflow f32 in channel 0 (one FLT_MAX among
/// values of -1e33: the reference's variance is +inf), ordinary values
/// elsewhere. (A chunk's center is its sum over at least one element, so
/// unlike the column layout's blocks the offsets here stay finite whenever
/// the mean does; the merge's NaN guard is kept for the cases this misses.)
std::vector<HostTensor> with_overflowing_deviations(const Graph& graph,
                                                    const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 5);
  const int64_t hw = inputs[0].shape().back();
  const int64_t n = inputs[0].shape().front();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < hw; ++i)
      inputs[0].set_f64((b * 3) * hw + i, b == 0 && i == hw - 3 ? FLT_MAX : -1e33);
  return inputs;
}

TEST(RowCenteredMoments, NanInfinityAndOverflowAsTheReferenceHasThem) {
  std::vector<GraphCase> cases;
  GraphCase nan{"nan_and_inf", parse_graph(nchw_text("f32", "1031")), batches(), 2e-4, 2e-4};
  nan.make_inputs = with_nan_and_inf;
  cases.push_back(std::move(nan));
  for (const bool reversed : {false, true}) {
    GraphCase overflow{fmt::format("overflow_{}", reversed),
                       parse_graph(nchw_text("f32", "2053", "reduce_mean", reversed)), batches(),
                       2e-4, 2e-4};
    overflow.make_inputs = with_overflowing_deviations;
    cases.push_back(std::move(overflow));
  }
  check_split_cases(cases, /*expect_split=*/true);
}

/// x[b, c, i] = offset + drift * (b * hw + i) + a pseudo-random value in [-1, 1).
std::vector<HostTensor> offset_input(int64_t n, int64_t hw, double offset, double drift) {
  HostTensor x(DType::f32, {n, 3, hw});
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < hw; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const double u = static_cast<double>(state >> 11) * 0x1p-53;
        x.set_f64((b * 3 + c) * hw + i,
                  offset + drift * static_cast<double>(b * hw + i) + (2 * u - 1));
      }
  return {x};
}

TEST(RowCenteredMoments, AccurateWithALargeOffsetAndADriftingMean) {
  // 61 batches of 4099: 305 chunks per channel, segments when split.
  const int64_t n = 61, hw = 4099;
  for (const bool reversed : {false, true}) {
    const Graph graph = parse_graph(nchw_text("f32", std::to_string(hw), "reduce_mean", reversed));
    std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(graph)};
    ASSERT_EQ(kernels[0].moments.size(), 1u);
    const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
    const auto so = compile(module);
    for (const auto& [offset, drift] :
         {std::tuple{1000.0, 0.0}, std::tuple{1e4, 0.0}, std::tuple{-1e5, 1e-5},
          std::tuple{0.0, 1e-4}, std::tuple{3e6, 0.0}}) {
      const std::vector<HostTensor> inputs = offset_input(n, hw, offset, drift);
      for (int64_t c = 0; c < 3; ++c) {
        double mean = 0, m2 = 0;
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < hw; ++i)
            mean += inputs[0].get_f64((b * 3 + c) * hw + i);
        mean /= static_cast<double>(n * hw);
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < hw; ++i) {
            const double d = inputs[0].get_f64((b * 3 + c) * hw + i) - mean;
            m2 += d * d;
          }
        const double want = m2 / static_cast<double>(n * hw);
        for (const af_machine& machine : {one_core(), split_machine(8, 64)}) {
          const PhasedRun run = run_phased(*so, module.kernels[0], kernels[0].graph, graph, inputs,
                                           {{"N", n}}, machine);
          // Chunks of 1024 summed in 16 lanes, Kahan across chunks: the
          // column layout's bound (no term grows with |mean| / sd).
          EXPECT_NEAR(run.outputs.at(2).get_f64(c), want, 1e-5 * want)
              << "offset " << offset << " drift " << drift << " channel " << c << " split "
              << run.split << " reversed " << reversed;
          if (machine.cores > 1) {
            EXPECT_GT(run.split, 1) << "the combine must be tested";
          }
        }
      }
    }
  }
}

}  // namespace row_centered_moments_test_local
}  // namespace autofuse::codegen_test
