// Axis merge, template choice and pass assignment.
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ascir_test_util.h"
#include "autofuse/graph/builder.h"
#include "autofuse/schedule/schedule.h"

namespace autofuse::schedule {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace schedule_test_local {

using ascir::AscGraph;
using ascir::AscKind;
using ascir_test::example_graph;
using ascir_test::lower_whole;
using ascir_test::node_named;

const sym::Expr N = sym::Expr::symbol("N");
const sym::Expr D = sym::Expr::symbol("D");

// "name" -> "row 2" / "pass 1" / "reduce 0", for every node that is not a
// Data or Output (those are always pass 0).
std::map<std::string, std::string> roles(const ScheduledKernel& k) {
  std::map<std::string, std::string> out;
  for (const ascir::AscNode& n : k.graph.nodes) {
    if (n.kind == AscKind::Data || n.kind == AscKind::Output) continue;
    const auto id = static_cast<size_t>(n.id);
    const char* role = n.kind == AscKind::Reduce ? "reduce" : k.is_row_node[id] ? "row" : "pass";
    out[n.name] = fmt::format("{} {}", role, k.node_pass[id]);
  }
  return out;
}

int pass_of(const ScheduledKernel& k, const std::string& name) {
  return k.node_pass.at(static_cast<size_t>(node_named(k.graph, name).id));
}
bool row(const ScheduledKernel& k, const std::string& name) {
  return k.is_row_node.at(static_cast<size_t>(node_named(k.graph, name).id));
}

// ---- merge_axes ---------------------------------------------------------------

TEST(MergeAxesTest, ElementwiseChainBecomesOneAxis) {
  AscGraph g = lower_whole(example_graph("chain10"), {false, false});
  EXPECT_TRUE(merge_axes(g));
  ASSERT_EQ(g.num_axes(), 1);
  EXPECT_EQ(g.axes[0].name, "z0");
  EXPECT_EQ(g.axes[0].size, N * D);
  EXPECT_EQ(node_named(g, "x_load").view.strides, (std::vector<sym::Expr>{1}));
  EXPECT_EQ(node_named(g, "y_store").view.strides, (std::vector<sym::Expr>{1}));
  EXPECT_EQ(node_named(g, "a5").view.repeats, (std::vector<sym::Expr>{N * D}));
  EXPECT_EQ(node_named(g, "one").view.repeats, (std::vector<sym::Expr>{1}));
  EXPECT_FALSE(merge_axes(g));  // a fixpoint
}

TEST(MergeAxesTest, RowBroadcastBlocksMerge) {
  // gelu: bias [D] against x [N, D]: bias varies along z1 only.
  AscGraph g = lower_whole(example_graph("gelu"), {false, false});
  const std::string before = ascir::print_asc_graph(g);
  EXPECT_FALSE(merge_axes(g));
  EXPECT_EQ(ascir::print_asc_graph(g), before);
}

TEST(MergeAxesTest, ReducedAndKeptAxesNeverMerge) {
  AscGraph g = lower_whole(example_graph("softmax"), {false, true});
  EXPECT_FALSE(merge_axes(g));
  EXPECT_EQ(g.num_axes(), 2);
}

TEST(MergeAxesTest, MergesKeptAxesOfA3dNorm) {
  // [A, B, C] normalized over C: A and B merge (kept, contiguous), C stays.
  const Graph graph = parse_graph(R"(graph g(x: f32[A, B, C]) {
  m = reduce_max(x, axes=[2], keepdims=true)
  y = sub(x, m)
  return y
})");
  AscGraph g = lower_whole(graph, {false, false, true});
  EXPECT_TRUE(merge_axes(g));
  const sym::Expr A = sym::Expr::symbol("A"), B = sym::Expr::symbol("B"),
                  C = sym::Expr::symbol("C");
  ASSERT_EQ(g.num_axes(), 2);
  EXPECT_EQ(g.axes[0].size, A * B);
  EXPECT_FALSE(g.axes[0].reduced);
  EXPECT_EQ(g.axes[1].name, "z2");
  EXPECT_TRUE(g.axes[1].reduced);
  EXPECT_EQ(node_named(g, "x_load").view.strides, (std::vector<sym::Expr>{C, 1}));
  EXPECT_EQ(node_named(g, "m").view.repeats, (std::vector<sym::Expr>{A * B, 1}));
}

TEST(MergeAxesTest, MergesReducedAxes) {
  // Reducing [B, C] of [A, B, C]: the two reduced axes merge into one.
  const Graph graph = parse_graph(R"(graph g(x: f32[A, B, C]) {
  s = reduce_sum(x, axes=[1, 2], keepdims=false)
  return s
})");
  AscGraph g = lower_whole(graph, {false, true, true});
  EXPECT_TRUE(merge_axes(g));
  ASSERT_EQ(g.num_axes(), 2);
  EXPECT_TRUE(g.axes[1].reduced);
  EXPECT_EQ(g.axes[1].size, sym::Expr::symbol("B") * sym::Expr::symbol("C"));
  EXPECT_EQ(node_named(g, "s_store").view.strides, (std::vector<sym::Expr>{1, 0}));
}

TEST(MergeAxesTest, MergesInnerAxesWithA2dBias) {
  // [A, B, C] + bias [B, C]: z1 and z2 merge (bias contiguous over both);
  // z0 cannot join them (bias is constant along it).
  const Graph graph = parse_graph(R"(graph g(x: f32[A, B, C], b: f32[B, C]) {
  y = add(x, b)
  return y
})");
  AscGraph g = lower_whole(graph, {false, false, false});
  EXPECT_TRUE(merge_axes(g));
  ASSERT_EQ(g.num_axes(), 2);
  const sym::Expr B = sym::Expr::symbol("B"), C = sym::Expr::symbol("C");
  EXPECT_EQ(g.axes[1].size, B * C);
  EXPECT_EQ(node_named(g, "b_load").view.strides, (std::vector<sym::Expr>{0, 1}));
  EXPECT_EQ(node_named(g, "x_load").view.strides, (std::vector<sym::Expr>{B * C, 1}));
}

TEST(MergeAxesTest, NonContiguousStridesBlockMerge) {
  // A hand-written view: the Load skips every other row (stride 2*D), so
  // its rows are not one contiguous range.
  const std::string text = R"(kernel k axes(z0: N, z1: D) inputs(0) outputs(1) {
  %0 x = data(arg=0) : f32 repeats[N, D]
  %1 x_load = load(%0) : f32 repeats[N, D] strides[2*D, 1] offset 0
  %2 y_store = store(%1) : f32 repeats[N, D] strides[D, 1] offset 0
  %3 y_out = output(%2, arg=0) : f32 repeats[N, D]
}
)";
  AscGraph g = ascir::parse_asc_graph(text);
  EXPECT_FALSE(merge_axes(g));
  g.nodes[1].view.strides[0] = D;
  EXPECT_TRUE(merge_axes(g));
}

TEST(MergeAxesTest, SizeOneAxisMergesAway) {
  const Graph graph = parse_graph(R"(graph g(x: f32[1, D], b: f32[D]) {
  i = iota(dtype=f32, shape=[1, D], axis=1)
  y = add(x, b)
  z = add(y, i)
  return z
})");
  AscGraph g = lower_whole(graph, {false, false});
  EXPECT_TRUE(merge_axes(g));
  ASSERT_EQ(g.num_axes(), 1);
  EXPECT_EQ(g.axes[0].size, D);
  EXPECT_EQ(node_named(g, "i").axis, 0);  // the index now runs along the merged axis
  EXPECT_EQ(node_named(g, "x_load").view.strides, (std::vector<sym::Expr>{1}));
}

TEST(MergeAxesTest, IndexBlocksMergeOfItsAxis) {
  const Graph graph = parse_graph(R"(graph g(x: f32[N, D]) {
  i = iota(dtype=f32, shape=[N, D], axis=0)
  y = add(x, i)
  return y
})");
  AscGraph g = lower_whole(graph, {false, false});
  EXPECT_FALSE(merge_axes(g));
}

// ---- schedule_kernel ------------------------------------------------------------

TEST(ScheduleTest, LayerNormHasThreePasses) {
  const ScheduledKernel k = schedule_kernel(lower_whole(example_graph("layernorm"), {false, true}));
  EXPECT_EQ(k.kind, Template::Reduction);
  EXPECT_EQ(k.outer_axes, (std::vector<int>{0}));
  EXPECT_EQ(k.inner_axes, (std::vector<int>{1}));
  EXPECT_EQ(k.num_passes, 3);  // mean, var, output
  // Row nodes: the reductions and what depends only on them (and eps).
  const std::map<std::string, std::string> want = {{"x_load", "pass 0"},
                                                   {"gamma_load", "pass 0"},
                                                   {"beta_load", "pass 0"},
                                                   {"mean", "reduce 0"},
                                                   {"mean_brc", "pass 1"},
                                                   {"xc", "pass 1"},
                                                   {"sq", "pass 1"},
                                                   {"var", "reduce 1"},
                                                   {"eps", "row 0"},
                                                   {"eps_brc", "row 0"},
                                                   {"var_eps", "row 2"},
                                                   {"inv_std", "row 2"},
                                                   {"inv_std_brc", "pass 2"},
                                                   {"xn", "pass 2"},
                                                   {"gamma_load_brc", "pass 0"},
                                                   {"scaled", "pass 2"},
                                                   {"beta_load_brc", "pass 0"},
                                                   {"y", "pass 2"},
                                                   {"y_store", "pass 2"}};
  EXPECT_EQ(roles(k), want);
  for (const char* name : {"mean", "var", "var_eps", "inv_std", "eps"})
    EXPECT_TRUE(row(k, name)) << name;
  EXPECT_FALSE(row(k, "xc"));
  EXPECT_EQ(pass_of(k, "x"), 0);
  EXPECT_EQ(pass_of(k, "y_out"), 0);
}

TEST(ScheduleTest, SoftmaxGolden) {
  const ScheduledKernel k = schedule_kernel(lower_whole(example_graph("softmax"), {false, true}));
  EXPECT_EQ(k.num_passes, 3);  // max, sum, output
  const std::string text = print_schedule(k);
  const std::string trailer = R"(schedule reduction outer[z0] inner[z1] passes 3
  %0 x: pass 0
  %1 x_load: pass 0
  %2 m: reduce 0
  %3 m_brc: pass 1
  %4 shifted: pass 1
  %5 e: pass 1
  %6 s: reduce 1
  %7 s_brc: pass 2
  %8 y: pass 2
  %9 y_store: pass 2
  %10 y_out: pass 0
)";
  EXPECT_EQ(text, ascir::print_asc_graph(k.graph) + trailer);
}

TEST(ScheduleTest, RmsNormHasTwoPasses) {
  const ScheduledKernel k = schedule_kernel(lower_whole(example_graph("rmsnorm"), {false, true}));
  EXPECT_EQ(k.num_passes, 2);
  EXPECT_EQ(pass_of(k, "ms"), 0);
  EXPECT_TRUE(row(k, "ms_eps"));
  EXPECT_EQ(pass_of(k, "ms_eps"), 1);
  EXPECT_EQ(pass_of(k, "inv_rms"), 1);
  EXPECT_EQ(pass_of(k, "xn"), 1);
  EXPECT_EQ(pass_of(k, "sq"), 0);
}

TEST(ScheduleTest, RowOutputIsStoredAfterItsReduction) {
  GraphBuilder b("two_outputs");
  Tensor x = b.input("x", DType::f32, {N, D});
  Tensor mean = b.reduce_mean(x, {1}, true, "mean");
  Tensor y = b.sub(x, mean, "y");
  const ScheduledKernel k =
      schedule_kernel(lower_whole(std::move(b).build({y, mean}), {false, true}));
  EXPECT_EQ(k.num_passes, 2);
  EXPECT_TRUE(row(k, "mean_store"));
  EXPECT_EQ(pass_of(k, "mean_store"), 1);  // once pass 0 (the mean) is done
  EXPECT_FALSE(row(k, "y_store"));
  EXPECT_EQ(pass_of(k, "y_store"), 1);
}

TEST(ScheduleTest, ReductionOfARowValueRunsAfterThePassItNeeds) {
  // s2 reduces a value computed from the first reduction only through a
  // broadcast, so it runs in pass 1.
  const Graph graph = parse_graph(R"(graph g(x: f32[N, D]) {
  m = reduce_max(x, axes=[1], keepdims=true)
  d = sub(x, m)
  s = reduce_sum(d, axes=[1], keepdims=true)
  t = reduce_sum(x, axes=[1], keepdims=true)
  u = add(s, t)
  return u
})");
  const ScheduledKernel k = schedule_kernel(lower_whole(graph, {false, true}));
  EXPECT_EQ(pass_of(k, "m"), 0);
  EXPECT_EQ(pass_of(k, "t"), 0);  // independent of m: the first pass
  EXPECT_EQ(pass_of(k, "s"), 1);
  EXPECT_EQ(pass_of(k, "u"), 2);
  EXPECT_TRUE(row(k, "u"));
  EXPECT_EQ(k.num_passes, 2);  // the row work after the last pass needs no loop
}

TEST(ScheduleTest, ColumnReductionPutsReducedAxisInside) {
  const Graph graph = parse_graph(R"(graph g(x: f32[N, D]) {
  s = reduce_sum(x, axes=[0], keepdims=true)
  return s
})");
  const ScheduledKernel k = schedule_kernel(lower_whole(graph, {true, false}));
  EXPECT_EQ(k.kind, Template::Reduction);
  EXPECT_EQ(k.outer_axes, (std::vector<int>{1}));
  EXPECT_EQ(k.inner_axes, (std::vector<int>{0}));
  EXPECT_EQ(k.num_passes, 1);
}

TEST(ScheduleTest, ElementwiseTemplates) {
  const ScheduledKernel chain =
      schedule_kernel(lower_whole(example_graph("chain10"), {false, false}));
  EXPECT_EQ(chain.kind, Template::Elementwise);
  EXPECT_EQ(chain.graph.num_axes(), 1);
  EXPECT_TRUE(chain.outer_axes.empty());
  EXPECT_EQ(chain.inner_axes, (std::vector<int>{0}));
  EXPECT_EQ(chain.num_passes, 0);
  EXPECT_EQ(chain.node_pass, std::vector<int>(chain.graph.nodes.size(), 0));
  EXPECT_EQ(print_schedule(chain),
            ascir::print_asc_graph(chain.graph) + "schedule elementwise outer[] inner[z0]\n");

  const ScheduledKernel gelu = schedule_kernel(lower_whole(example_graph("gelu"), {false, false}));
  EXPECT_EQ(gelu.graph.num_axes(), 2);
  EXPECT_EQ(gelu.outer_axes, (std::vector<int>{0}));
  EXPECT_EQ(gelu.inner_axes, (std::vector<int>{1}));
}

TEST(ScheduleTest, ScalarKernelHasNoAxes) {
  const Graph graph = parse_graph(R"(graph g(a: f32[], b: f32[]) {
  c = add(a, b)
  return c
})");
  const ScheduledKernel k = schedule_kernel(lower_whole(graph, {}));
  EXPECT_EQ(k.kind, Template::Elementwise);
  EXPECT_TRUE(k.outer_axes.empty());
  EXPECT_TRUE(k.inner_axes.empty());
}

TEST(ScheduleTest, RejectsAnInvalidGraph) {
  AscGraph g = lower_whole(example_graph("softmax"), {false, true});
  g.nodes[2].view.repeats[1] = D;  // the Reduce keeps its reduced axis
  EXPECT_THROW(schedule_kernel(g), InternalError);
}

}  // namespace schedule_test_local
}  // namespace autofuse::schedule
