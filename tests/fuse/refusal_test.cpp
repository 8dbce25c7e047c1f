// partition(): merges that must be refused, with their logged reasons, and
// the config switches.
#include "autofuse/graph/builder.h"
#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace refusal_test_local {

using fuse_test::count_kind;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

/// A chain of n unary ops on x: f32[N].
std::shared_ptr<const Graph> unary_chain(int n) {
  GraphBuilder b("chain");
  Tensor t = b.input("x", DType::f32, {sym::Expr::symbol("N")});
  for (int i = 0; i < n; ++i)
    t = i % 2 ? b.exp(t) : b.unary(OpKind::Sin, t);
  return std::make_shared<const Graph>(std::move(b).build({t}));
}

TEST(Refusal, ReductionsOverDifferentAxesStaySeparate) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      r0 = reduce_sum(x, axes=[0], keepdims=true)
      c = sub(x, r0)
      r1 = reduce_sum(c, axes=[1], keepdims=true)
      return r1
    })");
  FusedGraph fused = partition(g, fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_THAT(fused.refusals,
              ElementsAre("merge of {r1 (reduce_sum)} into {r0 (reduce_sum), c (sub)} refused: "
                          "reductions over different axes: 'r0' reduces [N] but 'r1' reduces [D]"));
  EXPECT_EQ(fused.regions[0].loop_axes.to_string(), "[N, D]; reduce [0]");
  EXPECT_EQ(fused.regions[1].loop_axes.to_string(), "[N, D]; reduce [1]");
}

TEST(Refusal, TransposeInTheChain) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      a = exp(x)
      t = transpose(a, perm=[1, 0])
      y = sin(t)
      return y
    })");
  // A transpose of a computed value relabels the loop axes: one kernel.
  FusedGraph fused = partition(g, fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 1) << print_fused_graph(fused);
  EXPECT_EQ(fused.regions.size(), 1u);
  EXPECT_THAT(fused.refusals, ::testing::IsEmpty());
}

TEST(Refusal, TransposeAddedToItselfNeedsTwoKernels) {
  // b[i, j] = a[i, j] + a[j, i]: a's two dims would share one loop axis.
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, N]) {
      a = exp(x)
      t = transpose(a, perm=[1, 0])
      b = add(a, t)
      return b
    })");
  FusedGraph fused = partition(g, fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_THAT(fused.refusals,
              Contains("merge of {b (add)} into {a (exp), t (transpose)} refused: dims 0 and 1 "
                       "of 'x' map to one loop axis"));
}

TEST(Refusal, MergeThatWouldCreateACycle) {
  // a -> t (library) -> b and a -> b: a and b cannot share a kernel.
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, N]) {
      a = exp(x)
      t = matmul(a, a)
      b = add(a, t)
      return b
    })");
  FusedGraph fused = partition(g, fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_EQ(count_kind(fused, RegionKind::Library), 1);
  EXPECT_THAT(fused.refusals,
              Contains("merge of {b (add)} into {a (exp)} refused: merging would create a cycle "
                       "through {t (matmul)}"));
}

TEST(Refusal, CycleThroughAMultiNodeRegion) {
  // c1 and c2 share a region through their consumer n. Merging y into a's
  // region would close a -> ra -> {c1, c2, n} -> y, a cycle between regions
  // although no chain of nodes leads from a back to y.
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, N], z: f32[N, N]) {
      a = exp(x)
      ra = matmul(a, a)
      c1 = sin(ra)
      c2 = cos(z)
      n = add(c1, c2)
      y = add(a, c2)
      return n, y
    })");
  FusedGraph fused = partition(g, fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_THAT(fused.refusals,
              Contains("merge of {y (add)} into {a (exp)} refused: merging would create a cycle "
                       "through {c1 (sin), c2 (cos), n (add)}"));
  EXPECT_EQ(fuse_test::region_producing(fused, "y").nodes.size(), 4u);
}

TEST(Refusal, SizeMismatchKeepsKernelsApart) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D], z: f32[N, M]) {
      r = reduce_sum(x, axes=[1], keepdims=true)
      y = add(r, z)
      return y
    })");
  FusedGraph fused = partition(g, fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 2);
  EXPECT_THAT(fused.refusals, ElementsAre(HasSubstr("sizes on one loop axis disagree")));
}

TEST(Refusal, OutputBroadcastAlongAKeptAxisGetsItsOwnKernel) {
  // a has extent 1 along N; in y's kernel every row would store it again.
  auto graph_returning = [](const std::string& outputs) {
    return fuse_test::parse(R"(
      graph g(x: f32[N, D], bias: f32[D]) {
        a = exp(bias)
        y = add(x, a)
        return )" + outputs +
                            "\n}");
  };
  FusedGraph fused = partition(graph_returning("y, a"), fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 2);
  EXPECT_THAT(fused.refusals,
              ElementsAre(HasSubstr("output 'a' would be stored once per iteration of loop axis 0 "
                                    "(N)")));
  // Recomputing it per row is fine when nobody else reads it.
  fused = partition(graph_returning("y"), fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 1);
  EXPECT_THAT(fused.refusals, IsEmpty());
}

TEST(Refusal, ReductionResultMayBeAnOutput) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      m = reduce_max(x, axes=[1], keepdims=true)
      d = sub(x, m)
      s = reduce_sum(d, axes=[1], keepdims=true)
      y = div(d, s)
      return y, m, s
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1) << print_fused_graph(fused);
}

TEST(Refusal, MaxFusionSizeSplitsAChain) {
  for (int n : {3, 7, 9, 10}) {
    FusionConfig config = fuse_test::config_with_log();
    config.max_fusion_size = 3;
    FusedGraph fused = partition(unary_chain(n), config);
    EXPECT_EQ(fused.num_kernels(), (n + 2) / 3) << n;
    for (const Region& region : fused.regions)
      EXPECT_LE(region.nodes.size(), 3u);
    if (n > 3) {
      EXPECT_THAT(fused.refusals, Contains(HasSubstr("4 ops exceed max_fusion_size=3")));
    }
  }
}

TEST(Refusal, DisableReduceKeepsReductionsAlone) {
  auto g = fuse_test::example("layernorm");
  FusionConfig config = FusionConfig::from_flags("--disable=reduce;--log_refusals");
  FusedGraph fused = partition(g, config);
  int reductions = 0;
  for (const Region& region : fused.regions)
    for (NodeId id : region.nodes)
      if (op_info(g->node(id).op).op_class == OpClass::Reduce) {
        ++reductions;
        EXPECT_EQ(region.nodes.size(), 1u) << print_fused_graph(fused);
      }
  EXPECT_EQ(reductions, 2);
  EXPECT_EQ(fused.num_kernels(), 4) << print_fused_graph(fused);
  EXPECT_THAT(fused.refusals, Contains(HasSubstr("reduction fusion is disabled")));
}

TEST(Refusal, DisableBroadcastKeepsBroadcastingOpsAlone) {
  auto g = fuse_test::example("gelu");
  FusedGraph fused = partition(g, FusionConfig::from_flags("--disable=broadcast --log_refusals"));
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_EQ(fuse_test::region_producing(fused, "h").nodes.size(), 1u);
  EXPECT_THAT(fused.refusals, Contains(HasSubstr("broadcast fusion is disabled")));
}

TEST(Refusal, NotLoggedUnlessAsked) {
  FusionConfig config;
  config.max_fusion_size = 2;
  FusedGraph fused = partition(unary_chain(5), config);
  EXPECT_EQ(fused.num_kernels(), 3);
  EXPECT_THAT(fused.refusals, IsEmpty());
}

TEST(Refusal, DisableAllIsTheUnfusedPath) {
  FusedGraph fused = partition(unary_chain(5), FusionConfig::from_flags("--disable=all"));
  EXPECT_EQ(fused.num_kernels(), 5);
  EXPECT_THAT(fused.refusals, IsEmpty());
}

}  // namespace refusal_test_local
}  // namespace autofuse::fuse

namespace autofuse::fuse {
namespace refusal_test_local {

// Found by the long fuzz run (seed 3330133234722658219): the min of the last
// split piece (extent 1 along axis 1) and the rest (A - 1, possibly 0) in one
// kernel would reduce it inside a loop that runs zero times when A = 1.
TEST(Refusal, ReductionConstantAlongAnAxisThatMayBeEmpty) {
  auto g = fuse_test::parse(R"(
    graph g(x: bf16[1, A, F, B]) {
      v0, v1 = split(x, axis=1, sizes=[A - 1, 1])
      v2 = sub(v0, v1)
      v4 = reduce_min(v1, axes=[0, 1, 2], keepdims=false)
      return v4, v2
    })");
  FusedGraph fused = partition(g, fuse_test::config_with_log());
  EXPECT_THAT(fused.refusals,
              Contains(HasSubstr("'v4' reduces a value constant along loop axis [A - 1], which "
                                 "may be empty")));
  // Along an axis proven non-empty (A) the same shape of graph is one kernel.
  auto proven = fuse_test::parse(R"(
    graph g(x: f32[A, F], y: f32[1, F]) {
      z = add(x, y)
      r = reduce_max(y, axes=[0, 1], keepdims=true)
      s = reduce_sum(z, axes=[0, 1], keepdims=true)
      t = add(r, s)
      return t
    })");
  EXPECT_EQ(partition(proven, FusionConfig{}).num_kernels(), 1);
}

}  // namespace refusal_test_local
}  // namespace autofuse::fuse
