// partition(): kernel counts and region structure for the standard patterns.
#include <set>

#include "autofuse/graph/builder.h"
#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace partition_test_local {

using fuse_test::count_kind;
using fuse_test::expect_dependency_order;
using fuse_test::names;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class Examples : public ::testing::TestWithParam<const char*> {};

TEST_P(Examples, FuseIntoOneKernel) {
  auto g = fuse_test::example(GetParam());
  FusedGraph fused = partition(g, FusionConfig{});
  ASSERT_EQ(fused.regions.size(), 1u) << print_fused_graph(fused);
  const Region& r = fused.regions[0];
  EXPECT_EQ(r.kind, RegionKind::Kernel);
  EXPECT_EQ(r.name, "asc_backend_0");
  EXPECT_EQ(r.nodes.size(), g->nodes().size());  // constants included
  EXPECT_EQ(names(*g, r.inputs), names(*g, g->inputs()));
  EXPECT_EQ(names(*g, r.outputs), names(*g, g->outputs()));
  EXPECT_EQ(fused.num_kernels(), 1);
}

INSTANTIATE_TEST_SUITE_P(Fuse, Examples,
                         ::testing::Values("layernorm", "softmax", "gelu", "chain10", "rmsnorm"));

TEST(Partition, LayerNormRegionKnowsItsReduction) {
  FusedGraph fused = partition(fuse_test::example("layernorm"), FusionConfig{});
  ASSERT_EQ(fused.regions.size(), 1u);
  EXPECT_EQ(fused.regions[0].loop_axes.to_string(), "[N, D]; reduce [1]");
}

TEST(Partition, SoftmaxWithScaleAndBroadcastMask) {
  for (const char* mask_type : {"f32[1, D]", "f32[D]"}) {
    auto g = fuse_test::parse(fmt::format(R"(
      graph softmax(x: f32[N, D], mask: {}) {{
        scale = constant(dtype=f32, value=0.125)
        xs = mul(x, scale)
        xm = add(xs, mask)
        m = reduce_max(xm, axes=[1], keepdims=true)
        d = sub(xm, m)
        e = exp(d)
        s = reduce_sum(e, axes=[1], keepdims=true)
        y = div(e, s)
        return y
      }})",
                                          mask_type));
    FusedGraph fused = partition(g, FusionConfig{});
    EXPECT_EQ(fused.regions.size(), 1u) << mask_type << "\n" << print_fused_graph(fused);
    EXPECT_EQ(fused.num_kernels(), 1);
    EXPECT_THAT(names(*g, fused.regions.at(0).inputs), ElementsAre("x", "mask"));
  }
}

TEST(Partition, HalfPrecisionLayerNormWithCasts) {
  auto g = fuse_test::parse(R"(
    graph ln16(x: f16[N, D], gamma: f16[D]) {
      xf = cast(x, to=f32)
      mean = reduce_mean(xf, axes=[1], keepdims=true)
      xc = sub(xf, mean)
      sq = mul(xc, xc)
      var = reduce_mean(sq, axes=[1], keepdims=true)
      eps = constant(dtype=f32, value=1e-5)
      ve = add(var, eps)
      inv = rsqrt(ve)
      xn = mul(xc, inv)
      gf = cast(gamma, to=f32)
      yf = mul(xn, gf)
      y = cast(yf, to=f16)
      return y
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.regions.size(), 1u) << print_fused_graph(fused);
  EXPECT_EQ(fused.num_kernels(), 1);
}

TEST(Partition, UnfusedConfigGivesOneKernelPerComputeNode) {
  for (const char* name : {"layernorm", "softmax", "gelu", "chain10", "rmsnorm"}) {
    auto g = fuse_test::example(name);
    FusionConfig config;
    config.enabled = false;
    FusedGraph fused = partition(g, config);
    int compute_nodes = 0;
    for (const Node& node : g->nodes())
      compute_nodes += node.op != OpKind::Constant;
    EXPECT_EQ(fused.num_kernels(), compute_nodes) << name;
    EXPECT_EQ(fused.regions.size(), static_cast<size_t>(compute_nodes)) << name;
    expect_dependency_order(fused);
    // Splat constants are copied into their consumers' kernels, never inputs.
    for (const Region& region : fused.regions)
      for (ValueId in : region.inputs) {
        const NodeId producer = g->value(in).producer;
        EXPECT_TRUE(producer == kNoNode || g->node(producer).op != OpKind::Constant)
            << region.name << " in " << name;
      }
  }
}

TEST(Partition, SplatConstantIsCopiedIntoEveryKernelThatReadsIt) {
  FusionConfig config;
  config.enabled = false;
  auto g = fuse_test::example("chain10");
  FusedGraph fused = partition(g, config);
  const NodeId one = g->value(g->find_value("one").value()).producer;
  int copies = 0;
  for (const Region& region : fused.regions)
    copies += std::count(region.nodes.begin(), region.nodes.end(), one);
  EXPECT_EQ(copies, 2);  // a2 and a7
  const Region& a2 = fuse_test::region_producing(fused, "a2");
  EXPECT_THAT(names(*g, a2.inputs), ElementsAre("a1"));
  EXPECT_EQ(a2.nodes.size(), 2u);
}

TEST(Partition, IndependentChainsStaySeparate) {
  auto g = fuse_test::parse(R"(
    graph g(a: f32[N], b: f32[M]) {
      one = constant(dtype=f32, value=1)
      a0 = add(a, one)
      a1 = exp(a0)
      b0 = add(b, one)
      b1 = sin(b0)
      return a1, b1
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_EQ(fused.regions.size(), 2u);
  EXPECT_THAT(names(*g, fused.regions[0].outputs), ElementsAre("a1"));
  EXPECT_THAT(names(*g, fused.regions[1].outputs), ElementsAre("b1"));
}

TEST(Partition, DiamondIsOneKernelReadingItsInputOnce) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      a = exp(x)
      b = sin(a)
      c = mul(a, x)
      y = add(b, c)
      return y
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  ASSERT_EQ(fused.regions.size(), 1u) << print_fused_graph(fused);
  EXPECT_THAT(names(*g, fused.regions[0].inputs), ElementsAre("x"));
  EXPECT_THAT(names(*g, fused.regions[0].outputs), ElementsAre("y"));
}

TEST(Partition, IntermediateGraphOutputIsARegionOutput) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N]) {
      a = exp(x)
      y = sin(a)
      return y, a
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  ASSERT_EQ(fused.regions.size(), 1u);
  EXPECT_THAT(names(*g, fused.regions[0].outputs), ElementsAre("a", "y"));
}

TEST(Partition, MatMulBetweenElementwiseChains) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, K], w: f32[K, M], b: f32[M]) {
      x0 = mul(x, x)
      x1 = relu(x0)
      h = matmul(x1, w)
      hb = add(h, b)
      y = tanh(hb)
      return y
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_EQ(count_kind(fused, RegionKind::Library), 1);
  ASSERT_EQ(fused.regions.size(), 3u);
  EXPECT_EQ(fused.regions[1].name, "library_matmul_1");
  EXPECT_THAT(names(*g, fused.regions[1].inputs), ElementsAre("w", "x1"));
  EXPECT_THAT(names(*g, fused.regions[1].outputs), ElementsAre("h"));
  expect_dependency_order(fused);
}

TEST(Partition, RegroupingReshapeOfAComputedValueIsReadAsAView) {
  // The reshape cannot relabel a's axes, so it cuts the kernel; the second
  // kernel reads a's buffer through it (no copy, no view region).
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      a = exp(x)
      r = reshape(a, shape=[N*D])
      y = sin(r)
      return y
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_EQ(count_kind(fused, RegionKind::View), 0);
  EXPECT_EQ(fuse_test::region_producing(fused, "y").nodes.size(), 2u);
  expect_dependency_order(fused);
}

TEST(Partition, SqueezeReshapesReadByALibraryOpAreStoredByTheKernel) {
  // The reshapes relabel a's axes, so the kernel stores q (instead of a).
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D], w: f32[D, K]) {
      a = exp(x)
      r = reshape(a, shape=[N, 1, D])
      q = reshape(r, shape=[N, D])
      m = matmul(q, w)
      return m
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1) << print_fused_graph(fused);
  EXPECT_EQ(count_kind(fused, RegionKind::View), 0);
  EXPECT_THAT(names(*g, fuse_test::region_producing(fused, "q").outputs), ElementsAre("q"));
}

TEST(Partition, SqueezeReshapeInsideAChainFuses) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D]) {
      a = exp(x)
      r = reshape(a, shape=[N, 1, D])
      y = sin(r)
      return y
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1) << print_fused_graph(fused);
  EXPECT_EQ(fused.regions.size(), 1u);
}

TEST(Partition, ConstantRegions) {
  // A non-splat constant is materialized; a splat constant read by a library
  // op gets a buffer too, while kernels keep their own scalar copy.
  auto g = fuse_test::parse(R"(
    graph g(x: f32[2, 2]) {
      c = constant(dtype=f32, shape=[2], value=[1.0, 2.0])
      s = constant(dtype=f32, shape=[2, 2], value=0.5)
      a = add(x, c)
      b = mul(a, s)
      m = matmul(b, s)
      return m
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(count_kind(fused, RegionKind::Constant), 2) << print_fused_graph(fused);
  EXPECT_EQ(fused.num_kernels(), 1);
  const Region& kernel = fuse_test::region_producing(fused, "b");
  EXPECT_THAT(names(*g, kernel.inputs), ElementsAre("x", "c"));
  EXPECT_THAT(names(*g, fuse_test::region_producing(fused, "m").inputs), ElementsAre("s", "b"));
  expect_dependency_order(fused);
}

TEST(Partition, ReturnedSplatConstantAndPassThroughInput) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N], z: f32[N]) {
      two = constant(dtype=f32, value=2)
      y = mul(x, two)
      return y, two, z
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  ASSERT_EQ(fused.regions.size(), 2u) << print_fused_graph(fused);
  EXPECT_EQ(fused.regions[0].kind, RegionKind::Kernel);
  EXPECT_EQ(fused.regions[0].nodes.size(), 2u);
  EXPECT_THAT(names(*g, fused.regions[0].outputs), ElementsAre("y"));
  EXPECT_EQ(fused.regions[1].name, "constant_1");
  EXPECT_THAT(names(*g, fused.regions[1].outputs), ElementsAre("two"));
}

TEST(Partition, DeadNodesGetNoRegion) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N]) {
      unused = cos(x)
      y = exp(x)
      return y
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  ASSERT_EQ(fused.regions.size(), 1u);
  EXPECT_EQ(fused.regions[0].nodes.size(), 1u);
}

TEST(Partition, SplitLibraryRegionListsEveryOutput) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, 4]) {
      a, b = split(x, axis=1, sizes=[2, 2])
      y = exp(a)
      return y
    })");
  FusionConfig unfused;
  unfused.enabled = false;
  FusedGraph fused = partition(g, unfused);
  const Region& split = fuse_test::region_producing(fused, "a");
  EXPECT_EQ(split.name, "library_split_0");
  EXPECT_THAT(names(*g, split.outputs), ElementsAre("a", "b"));
  // Fused, the split is a view leaf of the kernel that reads x.
  fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1);
  EXPECT_EQ(fused.regions.size(), 1u);
}

TEST(Partition, IsDeterministic) {
  auto g = fuse_test::example("layernorm");
  const std::string first = print_fused_graph(partition(g, FusionConfig{}));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(print_fused_graph(partition(g, FusionConfig{})), first);
}

TEST(Partition, LongChainBuiltInCode) {
  GraphBuilder b("chain");
  Tensor t = b.input("x", DType::f32, {sym::Expr::symbol("N")});
  for (int i = 0; i < 40; ++i)
    t = i % 2 ? b.exp(t) : b.add(t, b.scalar(1.0));
  auto g = std::make_shared<const Graph>(std::move(b).build({t}));
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1);
  EXPECT_THAT(fused.refusals, IsEmpty());
}

}  // namespace partition_test_local
}  // namespace autofuse::fuse

namespace autofuse::fuse {
namespace partition_test_local {

TEST(Partition, SiblingsReadingOneInputShareAKernel) {
  // Horizontal fusion: no edge joins a and b, but both read x.
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D], z: f32[D]) {
      a = exp(x)
      b = add(x, z)
      c = reduce_sum(x, axes=[0])
      r = reduce_sum(x, axes=[1])
      return a, b, c, r
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  // a and b are stored while the column sum c walks x; r reduces the other
  // axis: a kernel of its own.
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
  EXPECT_THAT(names(*g, fuse_test::region_producing(fused, "a").outputs),
              ElementsAre("a", "b", "c"));
}

TEST(Partition, SiblingsOfDifferentShapesStayApart) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N], y: f32[M, N]) {
      a = exp(x)
      b = add(y, x)
      return a, b
    })");
  FusedGraph fused = partition(g, fuse_test::config_with_log());
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
}

}  // namespace partition_test_local
}  // namespace autofuse::fuse

namespace autofuse::fuse {
namespace partition_test_local {

TEST(Partition, ASharedScalarConstantDoesNotMakeSiblings) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N], y: f32[N]) {
      eps = constant(dtype=f32, value=1e-5)
      a = add(x, eps)
      b = add(y, eps)
      return a, b
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 2) << print_fused_graph(fused);
}

}  // namespace partition_test_local
}  // namespace autofuse::fuse

namespace autofuse::fuse {
namespace partition_test_local {

// A broadcast-shaped value read by two ops that join again: the greedy pass
// refuses to merge its kernel early (it would be stored per iteration of the
// broadcast axis while its second reader is outside); once the second reader
// has joined the first one's kernel, merge_into_sole_consumers merges it.
TEST(Partition, BroadcastDiamondIsOneKernelWhicheverTheOperandOrder) {
  for (const char* w : {"add(c, a)", "add(a, c)"}) {
    auto g = fuse_test::parse(fmt::format(R"(
      graph g(x: f32[C, A], y: f32[C, 1]) {{
        m = neg(y)
        a = max(x, m)
        c = abs(m)
        w = {}
        return w
      }})",
                                          w));
    FusedGraph fused = partition(g, FusionConfig{});
    EXPECT_EQ(fused.num_kernels(), 1) << w << "\n" << print_fused_graph(fused);
  }
  auto g = fuse_test::parse(R"(
    graph g(p: f32[B, F, A], q: f16[B, 1, A]) {
      s = sign(q)
      pc = cast(p, to=f16)
      u = add(pc, s)
      v = min(s, u)
      return v
    })");
  EXPECT_EQ(partition(g, FusionConfig{}).num_kernels(), 1);
}

// A one-element value computed in the graph (the fuzz test's variant of
// the diamond) read by two chains that each join a full-shaped kernel.
TEST(Partition, SharedOneElementValueJoinsItsReadersKernel) {
  auto g = fuse_test::parse(R"(
    graph g(x: f16[E, A]) {
      i = iota(dtype=f32, shape=[1, 1], axis=1)
      k = constant(dtype=f32, value=0.5)
      t = mul(i, k)
      a = tanh(t)
      ah = cast(a, to=f16)
      u = sub(ah, x)
      b = tanh(t)
      bh = cast(b, to=f16)
      w = add(bh, u)
      return w
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1) << print_fused_graph(fused);
}

}  // namespace partition_test_local
}  // namespace autofuse::fuse
