// Reductions whose innermost axis is kept (the column layout: tiles of the
// kept axis vectorized, accumulators per column) and reductions over
// several, middle and all axes, against the reference: every op and dtype,
// keepdims both ways, fused producers and several consumers, NaN, shapes of
// 1, primes, odd tails and uneven tiles and blocks; each also run split
// across blocks (reduction_test_util.h).
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace column_reduction_test_local {

using ::testing::HasSubstr;

sym::Expr S(const char* name) {
  return sym::Expr::symbol(name);
}

std::vector<sym::Binding> nd_shapes() {
  return {{{"N", 1}, {"D", 1}},   {{"N", 2}, {"D", 3}},      {{"N", 7}, {"D", 16}},
          {{"N", 13}, {"D", 17}}, {{"N", 64}, {"D", 100}},   {{"N", 1000}, {"D", 5}},
          {{"N", 3}, {"D", 513}}, {{"N", 257}, {"D", 1000}}, {{"N", 4099}, {"D", 2}}};
}

std::vector<sym::Binding> abc_shapes() {
  return {{{"A", 1}, {"B", 1}, {"C", 1}},    {{"A", 2}, {"B", 3}, {"C", 5}},
          {{"A", 7}, {"B", 1}, {"C", 33}},   {{"A", 1}, {"B", 40}, {"C", 1}},
          {{"A", 5}, {"B", 301}, {"C", 17}}, {{"A", 2}, {"B", 1031}, {"C", 130}}};
}

Graph parse(const char* text) {
  return parse_graph(text);
}

TEST(ColumnReduction, TheLayoutIsChosenByTheContiguousAxis) {
  const auto layout = [](const char* text) { return schedule_graph(parse_graph(text)).tile_axis; };
  // Kept last axis: column layout along it.
  EXPECT_EQ(layout("graph g(x: f32[N, D]) {\n  s = reduce_sum(x, axes=[0], keepdims=true)\n"
                   "  return s\n}"),
            1);
  // Reduced last axis (also with a kept middle axis): row layout.
  EXPECT_EQ(layout("graph g(x: f32[A, B, C]) {\n  s = reduce_sum(x, axes=[0, 2], "
                   "keepdims=true)\n  return s\n}"),
            -1);
  // [A, B, C, D] over {0, 2}: D is kept and last.
  EXPECT_EQ(layout("graph g(x: f32[A, B, C, D]) {\n  s = reduce_sum(x, axes=[0, 2], "
                   "keepdims=true)\n  return s\n}"),
            3);
}

TEST(ColumnReduction, BatchNormStatistics) {
  std::vector<GraphCase> cases;
  cases.push_back({"column_stats",
                   parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/column_stats.af"),
                   nd_shapes(), 1e-4, 1e-4});
  cases.push_back({"col_div", parse(R"(graph col(x: f32[N, D]) {
  m = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0], keepdims=true)
  y = div(xc, v)
  return y
})"),
                   // y divides by the variance: ill-conditioned for few rows.
                   nd_shapes(), 2e-3, 1e-4});
  const std::string code = check_split_cases(cases, /*expect_split=*/true);
  EXPECT_THAT(code, HasSubstr("const int64_t t0 = tile * tw;"));
}

TEST(ColumnReduction, EveryOpAndDtype) {
  std::vector<GraphCase> cases;
  const OpKind ops[] = {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax, OpKind::ReduceMin,
                        OpKind::ReduceProd};
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16, DType::f64,
                          DType::i8,  DType::u8,  DType::i32,  DType::i64};
  for (OpKind op : ops) {
    for (DType dt : dtypes) {
      for (bool keepdims : {true, false}) {
        const std::string name = fmt::format("col_{}_{}_{}", op_name(op), dtype_name(dt), keepdims);
        GraphBuilder b(name);
        Tensor x = b.input("x", dt, {S("N"), S("D")});
        Tensor y = b.reduce(op, x, {0}, keepdims);
        // f16/bf16 outputs round once; products of values in [-1, 1) shrink.
        const double tol = dt == DType::f16 ? 2e-3 : dt == DType::bf16 ? 1.6e-2 : 2e-5;
        cases.push_back({name,
                         std::move(b).build({y}),
                         {{{"N", 1}, {"D", 3}}, {{"N", 37}, {"D", 19}}, {{"N", 300}, {"D", 2}}},
                         tol,
                         tol});
      }
    }
  }
  check_split_cases(cases, /*expect_split=*/false);
}

TEST(ColumnReduction, MiddleAxisWithConsumers) {
  std::vector<GraphCase> cases;
  cases.push_back({"middle_sum", parse(R"(graph m(x: f32[A, B, C]) {
  s = reduce_sum(x, axes=[1], keepdims=false)
  return s
})"),
                   abc_shapes(), 1e-5, 1e-5});
  // The max over B, subtracted (a consumer in a later pass), a second
  // reduction of the result, and the max itself as an output.
  cases.push_back({"middle_softmax", parse(R"(graph m(x: f32[A, B, C]) {
  mx = reduce_max(x, axes=[1], keepdims=true)
  xs = sub(x, mx)
  e = exp(xs)
  s = reduce_sum(e, axes=[1], keepdims=true)
  y = div(e, s)
  return y, mx, s
})"),
                   abc_shapes(), 1e-5, 1e-5});
  check_split_cases(cases, /*expect_split=*/true);
}

TEST(ColumnReduction, SeveralNonAdjacentAxes) {
  std::vector<GraphCase> cases;
  const std::vector<sym::Binding> shapes = {{{"A", 1}, {"B", 1}, {"C", 1}, {"D", 1}},
                                            {{"A", 2}, {"B", 3}, {"C", 5}, {"D", 7}},
                                            {{"A", 3}, {"B", 2}, {"C", 67}, {"D", 33}},
                                            {{"A", 11}, {"B", 1}, {"C", 3}, {"D", 130}},
                                            {{"A", 260}, {"B", 2}, {"C", 3}, {"D", 9}}};
  for (const char* axes : {"[0, 2]", "[1, 3]", "[0, 3]", "[0, 1, 3]"}) {
    for (const char* keep : {"true", "false"}) {
      const std::string text = fmt::format(R"(graph g(x: f32[A, B, C, D], w: f32[D]) {{
  xw = mul(x, w)
  s = reduce_mean(xw, axes={0}, keepdims={1})
  m = reduce_min(x, axes={0}, keepdims={1})
  return s, m
}})",
                                           axes, keep);
      cases.push_back(
          {fmt::format("axes {} keepdims {}", axes, keep), parse_graph(text), shapes, 1e-5, 1e-5});
    }
  }
  // A reduction of a value that varies only along the outer reduced axis
  // (an accumulator outside the vector loop), next to one of the full input.
  cases.push_back({"outer_only_input", parse(R"(graph g(x: f32[A, B, C, D], w: f32[A, 1, 1, 1]) {
  s1 = reduce_sum(x, axes=[0, 3], keepdims=true)
  s2 = reduce_sum(w, axes=[0, 3], keepdims=true)
  y = add(s1, s2)
  return y
})"),
                   shapes, 1e-5, 1e-5});
  check_split_cases(cases, /*expect_split=*/true);
}

TEST(ColumnReduction, AllAxes) {
  std::vector<GraphCase> cases;
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_prod"}) {
    for (const char* keep : {"true", "false"}) {
      const std::string text = fmt::format(R"(graph g(x: f32[N, D]) {{
  s = {0}(x, axes=[0, 1], keepdims={1})
  return s
}})",
                                           op, keep);
      const double tol = std::string(op) == "reduce_prod" ? 1e-30 : 1e-5;
      cases.push_back(
          {fmt::format("{} keepdims {}", op, keep), parse_graph(text), nd_shapes(), 1e-5, tol});
    }
  }
  // x - mean over everything, then a second reduction and both outputs.
  cases.push_back({"all_stats", parse(R"(graph g(x: f32[N, D]) {
  m = reduce_mean(x, axes=[0, 1], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0, 1], keepdims=true)
  sd = sqrt(v)
  y = div(xc, sd)
  return y, m, v
})"),
                   nd_shapes(), 1e-4, 1e-4});
  cases.push_back({"all_i64", parse(R"(graph g(x: i64[N, D]) {
  s = reduce_sum(x, axes=[0, 1], keepdims=false)
  return s
})"),
                   nd_shapes()});
  check_split_cases(cases, /*expect_split=*/true);
}

TEST(ColumnReduction, ProducersAndSeveralConsumers) {
  std::vector<GraphCase> cases;
  // Column weights (a tile vector loaded once per tile), per-row weights
  // (a scalar per reduced index), a reduction of the per-row weights alone
  // (a scalar reduction in the column layout), two reductions in sequence
  // and outputs at every stage.
  cases.push_back({"weighted", parse(R"(graph g(x: f32[N, D], c: f32[D], r: f32[N, 1]) {
  xc = mul(x, c)
  xr = mul(xc, r)
  num = reduce_sum(xr, axes=[0], keepdims=true)
  den = reduce_sum(r, axes=[0], keepdims=true)
  one = constant(dtype=f32, value=1)
  ad = abs(den)
  den1 = add(ad, one)
  avg = div(num, den1)
  z = sub(x, avg)
  mx = reduce_max(z, axes=[0], keepdims=true)
  y = mul(z, mx)
  return y, avg, mx, den
})"),
                   nd_shapes(), 1e-4, 1e-4});
  // The first pass needs no tile-wide value (a sum of per-row weights).
  cases.push_back({"row_weights_first", parse(R"(graph g(x: f32[N, D], r: f32[N, 1]) {
  s = reduce_sum(r, axes=[0], keepdims=true)
  xs = mul(x, s)
  m = reduce_max(xs, axes=[0], keepdims=true)
  y = sub(xs, m)
  return y, s
})"),
                   nd_shapes(), 1e-5, 1e-5});
  cases.push_back({"f16_stats", parse(R"(graph g(x: f16[N, D]) {
  xf = cast(x, to=f32)
  m = reduce_mean(xf, axes=[0], keepdims=true)
  xc = sub(xf, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0], keepdims=true)
  eps = constant(dtype=f32, value=1e-3)
  ve = add(v, eps)
  sd = sqrt(ve)
  yf = div(xc, sd)
  y = cast(yf, to=f16)
  mb = cast(m, to=bf16)
  return y, mb
})"),
                   nd_shapes(), 4e-3, 4e-3});
  check_split_cases(cases, /*expect_split=*/true);
}

TEST(ColumnReduction, ManyTileVectorsGetNarrowerArrays) {
  // 40 f64 tile vectors after a column max: the local arrays would exceed
  // tiling::kTileStackBytes at kMaxTile lanes, so the kernel's tiles narrow.
  std::string text = "graph g(x: f64[N, D]) {\n  t0 = reduce_max(x, axes=[0], keepdims=true)\n";
  for (int i = 1; i <= 40; ++i)
    text += fmt::format("  t{} = {}(t{})\n", i, i % 2 ? "sin" : "cos", i - 1);
  text += "  y = sub(x, t40)\n  return y, t40\n}";
  std::vector<GraphCase> cases;
  cases.push_back({"many_tile_vectors",
                   parse_graph(text),
                   {{{"N", 3}, {"D", 1000}}, {{"N", 2}, {"D", 777}}, {{"N", 70}, {"D", 5}}},
                   1e-12,
                   1e-12});
  const schedule::ScheduledKernel k = schedule_graph(cases[0].graph);
  ASSERT_EQ(k.tile_axis, 1);
  EXPECT_LT(tiling::max_tile(k), tiling::kMaxTile);
  EXPECT_EQ(tiling::max_tile(k) % 16, 0);
  const std::string code = check_split_cases(cases, /*expect_split=*/false);
  EXPECT_THAT(code,
              HasSubstr(fmt::format("[{}] __attribute__((aligned(64)));", tiling::max_tile(k))));
}

TEST(ColumnReduction, NarrowColumnsFoldRows) {
  // Fewer columns than a good vector loop: consecutive rows share the tile
  // loop (tiling::folds_rows), each lane with its own accumulators.
  const Graph stats =
      parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/column_stats.af");
  const Graph ints = parse(R"(graph g(x: i32[N, D], w: i32[D]) {
  xw = mul(x, w)
  s = reduce_sum(xw, axes=[0], keepdims=true)
  p = reduce_prod(x, axes=[0], keepdims=false)
  y = sub(xw, s)
  return y, p
})");
  const Graph per_row = parse(R"(graph g(x: f32[N, D], r: f32[N, 1]) {
  xr = mul(x, r)
  s = reduce_sum(xr, axes=[0], keepdims=true)
  return s
})");
  EXPECT_TRUE(tiling::folds_rows(schedule_graph(stats)));
  EXPECT_TRUE(tiling::folds_rows(schedule_graph(ints)));
  EXPECT_FALSE(tiling::folds_rows(schedule_graph(per_row)));  // r varies per row only
  EXPECT_FALSE(tiling::folds_rows(schedule_graph(parse(R"(graph g(x: f32[N, D]) {
  s = reduce_sum(x, axes=[1], keepdims=true)
  return s
})"))));                                                      // the row layout

  std::vector<GraphCase> cases;
  std::vector<sym::Binding> narrow;
  for (int64_t d : {1, 2, 3, 5, 17, 63})
    for (int64_t n : {1, 7, 100, 1001})
      narrow.push_back({{"N", n}, {"D", d}});
  cases.push_back({"stats", stats, narrow, 1e-4, 1e-4});
  cases.push_back({"ints", ints, narrow});
  cases.push_back({"per_row", per_row, narrow, 1e-5, 1e-5});
  check_split_cases(cases, /*expect_split=*/true);

  // The tiling folds a narrow tile to about kFoldLanes lanes.
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(stats)};
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  const auto so = compile(module);
  const sym::Binding binding = {{"N", 1001}, {"D", 3}};
  const std::vector<HostTensor> inputs = random_inputs(stats, binding, 2);
  const PhasedRun run =
      run_phased(*so, module.kernels[0], kernels[0].graph, stats, inputs, binding, one_core());
  EXPECT_EQ(run.fold, tiling::kFoldLanes / 3);
  const std::vector<HostTensor> want = run_reference(stats, inputs, binding);
  for (size_t o = 0; o < want.size(); ++o)
    EXPECT_TRUE(tensors_close(run.outputs[o], want[o], 1e-4, 1e-4)) << o;
}

std::vector<HostTensor> with_nans(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 5);
  HostTensor& x = inputs[0];
  const int64_t d = binding.at("D");
  // Column 0: NaN in the first row; column d-1: NaN in the last; others none.
  x.set_f64(0, NAN);
  x.set_f64(x.numel() - 1, NAN);
  (void)d;
  return inputs;
}

TEST(ColumnReduction, NanPropagates) {
  std::vector<GraphCase> cases;
  for (const char* op : {"reduce_max", "reduce_min"}) {
    for (const char* axes : {"[0]", "[1]", "[0, 1]"}) {
      const std::string text = fmt::format(R"(graph g(x: f32[N, D]) {{
  s = {0}(x, axes={1}, keepdims=true)
  return s
}})",
                                           op, axes);
      GraphCase c{fmt::format("{} {}", op, axes), parse_graph(text), nd_shapes(), 0, 0};
      c.make_inputs = with_nans;
      cases.push_back(std::move(c));
    }
  }
  check_split_cases(cases, /*expect_split=*/false);
}

std::vector<HostTensor> with_infinities(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 5);
  HostTensor& x = inputs[0];
  const int64_t d = binding.at("D"), n = binding.at("N");
  // Column 0: +inf in the first row; column d-1: -inf in the last row, and
  // +inf in its first when the column has two rows (inf - inf: NaN).
  x.set_f64(0, INFINITY);
  x.set_f64(x.numel() - 1, -INFINITY);
  if (n > 1 && d > 1) x.set_f64(d - 1, INFINITY);
  return inputs;
}

TEST(ColumnReduction, InfinitiesSumToInfinityOrNan) {
  // Compensated sums (Kahan's, the column layout's chunk totals) must not
  // turn a sum of +inf into NaN.
  std::vector<GraphCase> cases;
  for (const char* op : {"reduce_sum", "reduce_mean"}) {
    for (const char* axes : {"[0]", "[1]", "[0, 1]"}) {
      const std::string text = fmt::format(
          "graph g(x: f32[N, D]) {{\n  s = {}(x, axes={}, keepdims=true)\n  return s\n}}", op,
          axes);
      GraphCase c{fmt::format("{} {}", op, axes), parse_graph(text), nd_shapes(), 1e-5, 1e-5};
      c.make_inputs = with_infinities;
      cases.push_back(std::move(c));
    }
  }
  check_split_cases(cases, /*expect_split=*/false);
}

}  // namespace column_reduction_test_local
}  // namespace autofuse::codegen_test
