// Chains of gathers over one buffer (fuse/view_ops.h): the chain is one view
// leaf, every gather's indices walk loop axes of the leaf (tied by
// map_loop_axes), and chains whose indices would be read off the loop (a
// second gather or a slice of the gathered dim) are refused with a reason.
#include <numeric>

#include "autofuse/fuse/loop_axes.h"
#include "autofuse/fuse/view_ops.h"
#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace gather_chain_test_local {

using fuse_test::axes_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<NodeId> all_nodes(const Graph& graph) {
  std::vector<NodeId> nodes(graph.nodes().size());
  std::iota(nodes.begin(), nodes.end(), 0);
  return nodes;
}

const Node& producer(const Graph& graph, const std::string& value) {
  return graph.node(graph.value(graph.find_value(value).value()).producer);
}

TEST(GatherChain, IndicesOfEveryGatherWalkTheLeafsAxes) {
  // g2[a, q, p] = x[a, i[p], j[q]] (a transpose between): i walks the
  // leaf's dim 2 (P), j its dim 1 (Q).
  auto g = fuse_test::parse(R"(
    graph g(x: f32[A, B, C], i: i64[P], j: i64[Q]) {
      g1 = gather(x, i, axis=1)
      t = transpose(g1, perm=[0, 2, 1])
      g2 = gather(t, j, axis=1)
      y = neg(g2)
      return y
    })");
  const std::vector<NodeId> nodes = all_nodes(*g);
  RegionViews views(*g, nodes);
  EXPECT_TRUE(views.walkable(g->find_value("g1").value()));
  EXPECT_TRUE(views.walkable(g->find_value("g2").value()));
  std::vector<ChainGather> chain;
  ASSERT_TRUE(views.chain_gathers(producer(*g, "g2"), 0, chain));
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].node, producer(*g, "g2").id);
  EXPECT_THAT(chain[0].leaf_dims, ElementsAre(1));
  EXPECT_EQ(chain[1].node, producer(*g, "g1").id);
  EXPECT_THAT(chain[1].leaf_dims, ElementsAre(2));

  LoopAxes axes;
  const FusionDecision d = map_loop_axes(*g, nodes, axes);
  ASSERT_TRUE(d) << d.reason();
  EXPECT_EQ(axes.to_string(), "[A, Q, P]");
  EXPECT_THAT(axes_of(*g, axes, "i"), ElementsAre(2));
  EXPECT_THAT(axes_of(*g, axes, "j"), ElementsAre(1));
  // x and g1 are read only through the leaf's view: no axes of their own.
  EXPECT_EQ(axes.value_axes.count(g->find_value("x").value()), 0u);
  EXPECT_EQ(axes.value_axes.count(g->find_value("g1").value()), 0u);
}

TEST(GatherChain, TwoDimensionalIndicesAndComputedIndices) {
  // A constant pad's shape: computed (iota) clamps on two axes, and a 2-D
  // index table on a third.
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, 3, 5], j: i64[2, 4]) {
      p = iota(dtype=i64, shape=[6], axis=0)
      lo = constant(dtype=i64, value=0)
      hi = constant(dtype=i64, value=2)
      m = min(p, hi)
      c = max(m, lo)
      g1 = gather(x, c, axis=1)
      g2 = gather(g1, j, axis=2)
      y = neg(g2)
      return y
    })");
  LoopAxes axes;
  const FusionDecision d = map_loop_axes(*g, all_nodes(*g), axes);
  ASSERT_TRUE(d) << d.reason();
  EXPECT_EQ(axes.to_string(), "[N, 6, 2, 4]");
  EXPECT_THAT(axes_of(*g, axes, "c"), ElementsAre(1));
  EXPECT_THAT(axes_of(*g, axes, "p"), ElementsAre(1));
  EXPECT_THAT(axes_of(*g, axes, "j"), ElementsAre(2, 3));
}

TEST(GatherChain, IndicesReadOffTheLoopAreRefused) {
  for (const char* text : {// The same dim gathered twice: g1's indices are read at j's values.
                           R"(graph g(x: f32[A, B], i: i64[P], j: i64[Q]) {
                g1 = gather(x, i, axis=0)
                g2 = gather(g1, j, axis=0)
                y = neg(g2)
                return y
              })",
                           // A slice of the gathered dim: g1's indices are read at 1 + q.
                           R"(graph g(x: f32[A, B], i: i64[P]) {
                g1 = gather(x, i, axis=0)
                g2 = slice(g1, axes=[0], starts=[1], ends=[end])
                y = neg(g2)
                return y
              })"}) {
    auto g = fuse_test::parse(text);
    LoopAxes axes;
    const FusionDecision d = map_loop_axes(*g, all_nodes(*g), axes);
    EXPECT_FALSE(d) << text;
    EXPECT_THAT(d.reason(), HasSubstr("the indices of gather 'g1' are not read at loop points"));
    // The partition still finds a plan: the first gather alone, the rest a kernel.
    const FusedGraph fused = partition(g, FusionConfig{});
    EXPECT_EQ(fused.num_kernels(), 1) << print_fused_graph(fused);
  }
}

TEST(GatherChain, SliceOfAnotherDimKeepsTheChain) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[A, B], i: i64[P], j: i64[Q]) {
      g1 = gather(x, i, axis=0)
      s = slice(g1, axes=[1], starts=[1], ends=[end], steps=[2])
      g2 = gather(s, j, axis=1)
      y = neg(g2)
      return y
    })");
  LoopAxes axes;
  const FusionDecision d = map_loop_axes(*g, all_nodes(*g), axes);
  ASSERT_TRUE(d) << d.reason();
  EXPECT_EQ(axes.to_string(), "[P, Q]");
  EXPECT_THAT(axes_of(*g, axes, "i"), ElementsAre(0));
  EXPECT_THAT(axes_of(*g, axes, "j"), ElementsAre(1));
  const FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1) << print_fused_graph(fused);
  EXPECT_EQ(fused.regions.size(), 1u) << print_fused_graph(fused);
}

}  // namespace gather_chain_test_local
}  // namespace autofuse::fuse
