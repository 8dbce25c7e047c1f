// map_loop_axes: tables of small regions and their loop axes, and refusals.
#include "autofuse/fuse/loop_axes.h"

#include <numeric>

#include "fuse/axis_order.h"
#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace loop_axes_test_local {

using fuse_test::axes_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Mapped {
  FusionDecision decision = FusionDecision::allow();
  LoopAxes axes;
};

/// Maps every node of the graph as one region.
Mapped map_all(const Graph& graph) {
  std::vector<NodeId> nodes(graph.nodes().size());
  std::iota(nodes.begin(), nodes.end(), 0);
  Mapped m;
  m.decision = map_loop_axes(graph, nodes, m.axes);
  return m;
}

std::vector<std::string> sizes(const LoopAxes& axes) {
  std::vector<std::string> out;
  for (const sym::Expr& e : axes.sizes)
    out.push_back(e.to_string());
  return out;
}

TEST(LoopAxes, BroadcastInputsShareTheOutputAxes) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D], b: f32[D], c: f32[N, 1]) {
      t = add(x, b)
      y = mul(t, c)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_TRUE(m.decision) << m.decision.reason();
  EXPECT_THAT(sizes(m.axes), ElementsAre("N", "D"));
  EXPECT_THAT(m.axes.reduced, ElementsAre(false, false));
  EXPECT_THAT(axes_of(*g, m.axes, "x"), ElementsAre(0, 1));
  EXPECT_THAT(axes_of(*g, m.axes, "b"), ElementsAre(1));
  EXPECT_THAT(axes_of(*g, m.axes, "c"), ElementsAre(0, 1));  // dim 1 broadcast along D
  EXPECT_THAT(axes_of(*g, m.axes, "y"), ElementsAre(0, 1));
  EXPECT_EQ(m.axes.value_axes.size(), 5u);
  EXPECT_EQ(m.axes.to_string(), "[N, D]");
}

TEST(LoopAxes, ReduceWithoutKeepdimsDropsTheReducedAxisFromItsOutput) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      r = reduce_sum(x, axes=[1])
      y = exp(r)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_TRUE(m.decision) << m.decision.reason();
  EXPECT_THAT(sizes(m.axes), ElementsAre("N", "D"));
  EXPECT_THAT(m.axes.reduced, ElementsAre(false, true));
  EXPECT_THAT(axes_of(*g, m.axes, "r"), ElementsAre(0));
  EXPECT_THAT(axes_of(*g, m.axes, "y"), ElementsAre(0));
  EXPECT_EQ(m.axes.to_string(), "[N, D]; reduce [1]");
}

TEST(LoopAxes, ReduceOverTheOuterAxisWithoutKeepdims) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D], b: f32[D]) {
      r = reduce_max(x, axes=[0])
      y = add(r, b)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_TRUE(m.decision) << m.decision.reason();
  EXPECT_THAT(sizes(m.axes), ElementsAre("N", "D"));
  EXPECT_THAT(m.axes.reduced, ElementsAre(true, false));
  EXPECT_THAT(axes_of(*g, m.axes, "r"), ElementsAre(1));
  EXPECT_THAT(axes_of(*g, m.axes, "b"), ElementsAre(1));
}

TEST(LoopAxes, LayerNormIsOneRowReduction) {
  auto g = fuse_test::example("layernorm");
  Mapped m = map_all(*g);
  ASSERT_TRUE(m.decision) << m.decision.reason();
  EXPECT_EQ(m.axes.to_string(), "[N, D]; reduce [1]");
  EXPECT_THAT(axes_of(*g, m.axes, "mean"), ElementsAre(0, 1));  // extent 1 on D
  EXPECT_THAT(axes_of(*g, m.axes, "gamma"), ElementsAre(1));
  EXPECT_THAT(axes_of(*g, m.axes, "eps"), ElementsAre());
}

TEST(LoopAxes, ReductionOfAValueConstantAlongTheReducedAxis) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      m = reduce_max(x, axes=[1], keepdims=true)
      s = reduce_sum(m, axes=[1], keepdims=true)
      y = sub(x, s)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_TRUE(m.decision) << m.decision.reason();
  EXPECT_EQ(m.axes.to_string(), "[N, D]; reduce [1]");
}

TEST(LoopAxes, BroadcastToAlignsRightAndAddsLeadingAxes) {
  auto g = fuse_test::parse(R"(
    graph g(b: f32[D], c: f32[N, 1]) {
      u = broadcast_to(b, shape=[N, D])
      v = broadcast_to(c, shape=[N, D])
      w = add(u, v)
      y = broadcast_to(w, shape=[M, N, D])
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_TRUE(m.decision) << m.decision.reason();
  EXPECT_THAT(sizes(m.axes), ElementsAre("M", "N", "D"));
  EXPECT_THAT(axes_of(*g, m.axes, "b"), ElementsAre(2));
  EXPECT_THAT(axes_of(*g, m.axes, "c"), ElementsAre(1, 2));
  EXPECT_THAT(axes_of(*g, m.axes, "w"), ElementsAre(1, 2));
  EXPECT_THAT(axes_of(*g, m.axes, "y"), ElementsAre(0, 1, 2));
}

TEST(LoopAxes, IotaAxisIsALoopAxis) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      i = iota(dtype=f32, shape=[N, D], axis=1)
      y = add(x, i)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_TRUE(m.decision) << m.decision.reason();
  EXPECT_THAT(sizes(m.axes), ElementsAre("N", "D"));
  EXPECT_THAT(axes_of(*g, m.axes, "i"), ElementsAre(0, 1));
}

TEST(LoopAxes, SizesEquatedByAGuardOnExpressions) {
  // Inference guards 2*N == M + 1; neither side is a lone symbol, so
  // canonicalize() cannot apply it, but the mapping may rely on it.
  auto g = fuse_test::parse(R"(
    graph g(a: f32[2*N], b: f32[M + 1]) {
      y = add(a, b)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_TRUE(m.decision) << m.decision.reason();
  EXPECT_EQ(m.axes.num_axes(), 1);
}

TEST(LoopAxes, EmptyRegionHasNoAxes) {
  auto g = fuse_test::example("gelu");
  LoopAxes axes;
  ASSERT_TRUE(map_loop_axes(*g, {}, axes));
  EXPECT_EQ(axes.num_axes(), 0);
  EXPECT_EQ(axes.to_string(), "[]");
}

TEST(LoopAxes, RefusesSizeMismatchOnOneAxis) {
  // r's reduced dim (extent 1) lies on x's D axis and broadcasts along z's M.
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D], z: f32[N, M]) {
      r = reduce_sum(x, axes=[1], keepdims=true)
      y = add(r, z)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_FALSE(m.decision);
  EXPECT_THAT(m.decision.reason(), HasSubstr("sizes on one loop axis disagree"));
  EXPECT_THAT(m.decision.reason(), HasSubstr("'x' dim 1 is D"));
  EXPECT_THAT(m.decision.reason(), HasSubstr("'z' dim 1 is M"));
}

TEST(LoopAxes, RefusesLiteralSizeMismatch) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, 4], z: f32[N, 8]) {
      r = reduce_max(x, axes=[1], keepdims=true)
      y = mul(r, z)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_FALSE(m.decision);
  EXPECT_THAT(m.decision.reason(), HasSubstr("is 4 but"));
}

TEST(LoopAxes, RefusesTwoDimsOfOneValueOnOneAxis) {
  // r[i] = sum_j x[i, j] is added along x's last dim: x's rows and columns
  // would have to be the same loop.
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, N]) {
      r = reduce_sum(x, axes=[1])
      y = add(x, r)
      return y
    })");
  Mapped m = map_all(*g);
  ASSERT_FALSE(m.decision);
  EXPECT_THAT(m.decision.reason(), HasSubstr("dims 0 and 1 of 'x' map to one loop axis"));
}

TEST(LoopAxes, RefusesReductionsOverDifferentAxes) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      r0 = reduce_sum(x, axes=[0], keepdims=true)
      c = sub(x, r0)
      r1 = reduce_sum(c, axes=[1], keepdims=true)
      return r1
    })");
  Mapped m = map_all(*g);
  ASSERT_FALSE(m.decision);
  EXPECT_EQ(m.decision.reason(),
            "reductions over different axes: 'r0' reduces [N] but 'r1' reduces [D]");
}

TEST(LoopAxes, MapsMovementOpsAndRefusesLibraryOps) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D], w: f32[D, K]) {
      xt = transpose(x, perm=[1, 0])
      r = reshape(x, shape=[N*D])
      m = matmul(x, w)
      return xt, r, m
    })");
  LoopAxes axes;
  // A transpose of an input is a view leaf: its output's own dims are the
  // loop axes, the input is read through permuted strides (not mapped).
  FusionDecision d = map_loop_axes(*g, {0}, axes);
  ASSERT_TRUE(d) << d.reason();
  EXPECT_EQ(axes.to_string(), "[D, N]");
  EXPECT_EQ(axes.value_axes.count(g->find_value("x").value()), 0u);
  d = map_loop_axes(*g, {1}, axes);
  ASSERT_TRUE(d) << d.reason();
  EXPECT_EQ(axes.to_string(), "[D*N]");
  d = map_loop_axes(*g, {2}, axes);
  EXPECT_EQ(d.reason(), "matmul 'm' is a library op");
}

TEST(LoopAxes, TransposeOfAComputedValueRelabelsAxes) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      a = exp(x)
      t = transpose(a, perm=[1, 0])
      y = sin(t)
      return y
    })");
  LoopAxes axes;
  ASSERT_TRUE(map_loop_axes(*g, {0, 1, 2}, axes));
  // The store of y decides the order: x is read transposed (strided).
  EXPECT_EQ(axes.to_string(), "[D, N]");
  EXPECT_THAT(axes_of(*g, axes, "x"), ElementsAre(1, 0));
  EXPECT_THAT(axes_of(*g, axes, "y"), ElementsAre(0, 1));
}

TEST(LoopAxes, SliceOfAComputedValueIsRefused) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, 8]) {
      a = exp(x)
      s = slice(a, axes=[1], starts=[0], ends=[4])
      y = sin(s)
      return y
    })");
  LoopAxes axes;
  FusionDecision d = map_loop_axes(*g, {0, 1, 2}, axes);
  EXPECT_EQ(d.reason(),
            "slice 's' reads 'a', which the region computes (only views of buffers are fused)");
  ASSERT_TRUE(map_loop_axes(*g, {1, 2}, axes));
  EXPECT_EQ(axes.to_string(), "[N, 4]");
}

TEST(LoopAxes, ConcatPiecesShareOneIterationSpace) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, 8], z: f32[N, 8], u: f32[N, 3]) {
      a = exp(x)
      c = concat(a, z, axis=1)
      y = sin(c)
      d = concat(a, u, axis=1)
      return c, y, d
    })");
  LoopAxes axes;
  ASSERT_TRUE(map_loop_axes(*g, {0, 1}, axes));
  EXPECT_EQ(axes.to_string(), "[N, 8]");
  EXPECT_EQ(axes.value_axes.count(g->find_value("c").value()), 0u);  // stored as pieces
  FusionDecision d = map_loop_axes(*g, {0, 1, 2}, {g->find_value("y").value()}, axes);
  EXPECT_EQ(d.reason(), "concat 'c' is read inside the region (its pieces are only stored)");
  d = map_loop_axes(*g, {0, 3}, axes);
  EXPECT_FALSE(d);  // pieces of different extent along the axis
}

// The op set cannot express a loop-order conflict without a transpose (every
// tie keeps the dims' order), so the ordering step is checked on its own.
TEST(AxisOrder, FollowsChainsAndBreaksTiesByPriority) {
  std::vector<int> owners;
  auto order = detail::order_axes(3, {0, 1, 2}, {{5, {2, 0}}}, owners);
  ASSERT_TRUE(order.has_value());
  EXPECT_THAT(*order, ElementsAre(1, 2, 0));
  order = detail::order_axes(3, {2, 1, 0}, {}, owners);
  ASSERT_TRUE(order.has_value());
  EXPECT_THAT(*order, ElementsAre(2, 1, 0));
}

TEST(AxisOrder, ReportsTheOwnersOfACycle) {
  std::vector<int> owners;
  auto order = detail::order_axes(4, {0, 1, 2, 3}, {{7, {0, 1}}, {8, {3}}, {9, {1, 2, 0}}}, owners);
  EXPECT_FALSE(order.has_value());
  EXPECT_THAT(owners, ElementsAre(7, 9));
}

}  // namespace loop_axes_test_local
}  // namespace autofuse::fuse
