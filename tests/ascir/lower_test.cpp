// Lowering of hand-built Kernel regions to AscGraphs, and cast elision.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ascir_test_util.h"
#include "autofuse/ascir/lower.h"
#include "autofuse/graph/builder.h"

namespace autofuse::ascir {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace lower_test_local {

using ascir_test::count_kind;
using ascir_test::example_graph;
using ascir_test::lower_whole;
using ascir_test::node_named;
using ascir_test::whole_graph_region;

TEST(LowerTest, LayerNormGolden) {
  const AscGraph g = lower_whole(example_graph("layernorm"), {false, true});
  // Explicit broadcasts: the row results (mean, inv_std) and the [D]
  // parameters are stretched before use; eps is stretched to a row [N, 1].
  EXPECT_EQ(print_asc_graph(g),
            R"(kernel asc_backend_0 axes(z0: N, z1: D reduced) inputs(0, 1, 2) outputs(12) {
  %0 x = data(arg=0) : f32 repeats[N, D]
  %1 x_load = load(%0) : f32 repeats[N, D] strides[D, 1] offset 0
  %2 gamma = data(arg=1) : f32 repeats[1, D]
  %3 gamma_load = load(%2) : f32 repeats[1, D] strides[0, 1] offset 0
  %4 beta = data(arg=2) : f32 repeats[1, D]
  %5 beta_load = load(%4) : f32 repeats[1, D] strides[0, 1] offset 0
  %6 mean = reduce_mean(%1) : f32 repeats[N, 1]
  %7 mean_brc = broadcast(%6) : f32 repeats[N, D]
  %8 xc = sub(%1, %7) : f32 repeats[N, D]
  %9 sq = mul(%8, %8) : f32 repeats[N, D]
  %10 var = reduce_mean(%9) : f32 repeats[N, 1]
  %11 eps = scalar(1e-05) : f32 repeats[1, 1]
  %12 eps_brc = broadcast(%11) : f32 repeats[N, 1]
  %13 var_eps = add(%10, %12) : f32 repeats[N, 1]
  %14 inv_std = rsqrt(%13) : f32 repeats[N, 1]
  %15 inv_std_brc = broadcast(%14) : f32 repeats[N, D]
  %16 xn = mul(%8, %15) : f32 repeats[N, D]
  %17 gamma_load_brc = broadcast(%3) : f32 repeats[N, D]
  %18 scaled = mul(%16, %17) : f32 repeats[N, D]
  %19 beta_load_brc = broadcast(%5) : f32 repeats[N, D]
  %20 y = add(%18, %19) : f32 repeats[N, D]
  %21 y_store = store(%20) : f32 repeats[N, D] strides[D, 1] offset 0
  %22 y_out = output(%21, arg=0) : f32 repeats[N, D]
}
)");
}

TEST(LowerTest, SoftmaxGolden) {
  const AscGraph g = lower_whole(example_graph("softmax"), {false, true});
  EXPECT_EQ(print_asc_graph(g),
            R"(kernel asc_backend_0 axes(z0: N, z1: D reduced) inputs(0) outputs(5) {
  %0 x = data(arg=0) : f32 repeats[N, D]
  %1 x_load = load(%0) : f32 repeats[N, D] strides[D, 1] offset 0
  %2 m = reduce_max(%1) : f32 repeats[N, 1]
  %3 m_brc = broadcast(%2) : f32 repeats[N, D]
  %4 shifted = sub(%1, %3) : f32 repeats[N, D]
  %5 e = exp(%4) : f32 repeats[N, D]
  %6 s = reduce_sum(%5) : f32 repeats[N, 1]
  %7 s_brc = broadcast(%6) : f32 repeats[N, D]
  %8 y = div(%5, %7) : f32 repeats[N, D]
  %9 y_store = store(%8) : f32 repeats[N, D] strides[D, 1] offset 0
  %10 y_out = output(%9, arg=0) : f32 repeats[N, D]
}
)");
}

TEST(LowerTest, SharedBroadcastIsCreatedOnce) {
  // chain10 uses `one` twice at [N, D]: one Broadcast serves both.
  const AscGraph g = lower_whole(example_graph("chain10"), {false, false});
  EXPECT_EQ(count_kind(g, AscKind::Broadcast), 2);  // two_brc, one_brc
  const int one_brc = node_named(g, "one_brc").id;
  EXPECT_EQ(node_named(g, "a2").inputs[1], one_brc);
  EXPECT_EQ(node_named(g, "a7").inputs[1], one_brc);
}

TEST(LowerTest, KeepdimsMakesNoDifferenceInsideTheKernel) {
  const std::string text = R"(graph g(x: f32[N, D]) {
  s = reduce_sum(x, axes=[1], keepdims=KEEP)
  return s
})";
  auto lower_with = [&](const std::string& keep) {
    std::string t = text;
    t.replace(t.find("KEEP"), 4, keep);
    return print_asc_graph(lower_whole(parse_graph(t), {false, true}));
  };
  const std::string kept = lower_with("true");
  EXPECT_EQ(kept, lower_with("false"));
  // The Store of the [N] (or [N, 1]) result walks z0 with stride 1.
  EXPECT_THAT(kept, ::testing::HasSubstr(
                        "%3 s_store = store(%2) : f32 repeats[N, 1] strides[1, 0] offset 0"));
}

TEST(LowerTest, ColumnReduction) {
  const Graph graph = parse_graph(R"(graph g(x: f32[N, D]) {
  s = reduce_sum(x, axes=[0], keepdims=true)
  return s
})");
  const AscGraph g = lower_whole(graph, {true, false});
  EXPECT_EQ(node_named(g, "s").view.repeats, (std::vector<sym::Expr>{1, sym::Expr::symbol("D")}));
  EXPECT_EQ(node_named(g, "s_store").view.strides, (std::vector<sym::Expr>{0, 1}));
}

TEST(LowerTest, IotaBecomesIndexAndBroadcast) {
  const Graph graph = parse_graph(R"(graph g(x: f32[N, D]) {
  i = iota(dtype=i32, shape=[N, D], axis=1)
  f = cast(i, to=f32)
  y = add(x, f)
  return y
})");
  const AscGraph g = lower_whole(graph, {false, false});
  const AscNode& i = node_named(g, "i");
  EXPECT_EQ(i.kind, AscKind::Index);
  EXPECT_EQ(i.axis, 1);
  EXPECT_EQ(i.dtype, DType::i32);
  EXPECT_EQ(i.view.repeats, (std::vector<sym::Expr>{1, sym::Expr::symbol("D")}));
  // The cast needs the value at its full extent [N, D].
  const AscNode& f = node_named(g, "f");
  EXPECT_EQ(f.kind, AscKind::Cast);
  EXPECT_EQ(g.node(f.inputs[0]).kind, AscKind::Broadcast);
  EXPECT_EQ(g.node(f.inputs[0]).inputs[0], i.id);
}

TEST(LowerTest, IotaWithExtentOneIsScalarZero) {
  const Graph graph = parse_graph(R"(graph g(x: f32[N, D]) {
  i = iota(dtype=f32, shape=[1], axis=0)
  y = add(x, i)
  return y
})");
  const AscGraph g = lower_whole(graph, {false, false});
  EXPECT_EQ(node_named(g, "i").kind, AscKind::Scalar);
  EXPECT_EQ(node_named(g, "i").scalar, 0);
}

TEST(LowerTest, ReductionOfAStretchedValueSeesItsFullExtent) {
  // Summing iota over axis 0 must add N copies, so the Reduce reads a
  // Broadcast of the Index to [N, D], not the [1, D] Index itself.
  const Graph graph = parse_graph(R"(graph g(x: f32[N, D]) {
  i = iota(dtype=f32, shape=[N, D], axis=1)
  s = reduce_sum(i, axes=[0], keepdims=true)
  return s
})");
  const AscGraph g = lower_whole(graph, {true, false});
  const AscNode& s = node_named(g, "s");
  EXPECT_EQ(g.node(s.inputs[0]).kind, AscKind::Broadcast);
  EXPECT_EQ(g.node(s.inputs[0]).view.repeats,
            (std::vector<sym::Expr>{sym::Expr::symbol("N"), sym::Expr::symbol("D")}));
}

TEST(LowerTest, BroadcastToAndWhere) {
  const Graph graph = parse_graph(R"(graph g(x: f32[N, D], b: f32[D]) {
  bb = broadcast_to(b, shape=[N, D])
  zero = constant(dtype=f32, value=0)
  c = gt(x, zero)
  y = where(c, x, bb)
  return y
})");
  const AscGraph g = lower_whole(graph, {false, false});
  const AscNode& bb = node_named(g, "bb");
  EXPECT_EQ(bb.kind, AscKind::Broadcast);
  EXPECT_EQ(bb.inputs[0], node_named(g, "b_load").id);
  const AscNode& y = node_named(g, "y");
  EXPECT_EQ(y.op, OpKind::Where);
  EXPECT_EQ(y.inputs, (std::vector<int>{node_named(g, "c").id, node_named(g, "x_load").id, bb.id}));
  EXPECT_EQ(node_named(g, "c").dtype, DType::boolean);
}

TEST(LowerTest, NamesAreMadeUnique) {
  const Graph graph = parse_graph(R"(graph g(x: f32[N]) {
  x_load = neg(x)
  return x_load
})");
  const AscGraph g = lower_whole(graph, {false});
  EXPECT_EQ(node_named(g, "x_load").kind, AscKind::Load);
  EXPECT_EQ(node_named(g, "x_load_1").kind, AscKind::Compute);
  EXPECT_EQ(node_named(g, "x_load_store").inputs[0], node_named(g, "x_load_1").id);
}

TEST(LowerTest, SeveralOutputsAndRowOutput) {
  GraphBuilder b("two_outputs");
  const sym::Expr N = sym::Expr::symbol("N"), D = sym::Expr::symbol("D");
  Tensor x = b.input("x", DType::f32, {N, D});
  Tensor mean = b.reduce_mean(x, {1}, true, "mean");
  Tensor y = b.sub(x, mean, "y");
  const Graph graph = std::move(b).build({y, mean});
  const AscGraph g = lower_whole(graph, {false, true});
  EXPECT_EQ(node_named(g, "y_out").arg_index, 0);
  EXPECT_EQ(node_named(g, "mean_out").arg_index, 1);
  EXPECT_EQ(node_named(g, "mean_store").view.strides, (std::vector<sym::Expr>{1, 0}));
  EXPECT_EQ(g.outputs, graph.outputs());
}

TEST(LowerTest, RejectsOpsWithoutLowering) {
  const Graph graph = parse_graph(R"(graph g(x: f32[N, N]) {
  t = matmul(x, x)
  return t
})");
  EXPECT_THROW(lower_whole(graph, {false, false}), InternalError);
  const Graph constant = parse_graph(R"(graph g(x: f32[2]) {
  c = constant(dtype=f32, shape=[2], value=[1, 2])
  y = add(x, c)
  return y
})");
  EXPECT_THROW(lower_whole(constant, {false}), InternalError);
}

TEST(LowerTest, RejectsRegionWithoutAxesForAValue) {
  const Graph graph = example_graph("softmax");
  fuse::Region region = whole_graph_region(graph, {false, true});
  region.loop_axes.value_axes.erase(graph.find_value("e").value());
  EXPECT_THROW(lower_region(graph, region), InternalError);
  // A reduction over an axis that is not marked reduced.
  EXPECT_THROW(lower_whole(graph, {false, false}), InternalError);
}

// ---- elide_casts ------------------------------------------------------------

const char* kHalfLayerNorm = R"(graph ln16(x: f16[N, D], gamma: f16[D]) {
  xf = cast(x, to=f32)
  mean = reduce_mean(xf, axes=[1], keepdims=true)
  xc = sub(xf, mean)
  sq = mul(xc, xc)
  var = reduce_mean(sq, axes=[1], keepdims=true)
  eps = constant(dtype=f32, value=1e-5)
  var_eps = add(var, eps)
  inv_std = rsqrt(var_eps)
  xn = mul(xc, inv_std)
  g32 = cast(gamma, to=f32)
  scaled = mul(xn, g32)
  y = cast(scaled, to=f16)
  return y
})";

TEST(ElideCastsTest, HalfLayerNormComputesInF32) {
  AscGraph g = lower_whole(parse_graph(kHalfLayerNorm), {false, true});
  EXPECT_EQ(count_kind(g, AscKind::Cast), 3);
  EXPECT_TRUE(elide_casts(g));
  EXPECT_EQ(count_kind(g, AscKind::Cast), 0);
  // The reduction reads the f16 Load directly (computing in f32), and the
  // f16 Store rounds the f32 result once.
  EXPECT_EQ(node_named(g, "mean").inputs[0], node_named(g, "x_load").id);
  EXPECT_EQ(node_named(g, "x_load").dtype, DType::f16);
  EXPECT_EQ(node_named(g, "y_store").inputs[0], node_named(g, "scaled").id);
  EXPECT_EQ(node_named(g, "y_store").dtype, DType::f16);
  EXPECT_EQ(node_named(g, "scaled").dtype, DType::f32);
  EXPECT_NO_THROW(verify(g));
  for (size_t i = 0; i < g.nodes.size(); ++i)
    EXPECT_EQ(g.nodes[i].id, static_cast<int>(i));
  EXPECT_FALSE(elide_casts(g));
  const std::string text = print_asc_graph(g);
  EXPECT_EQ(print_asc_graph(parse_asc_graph(text)), text);
}

TEST(ElideCastsTest, KeepsCastsThatChangeTheComputeType) {
  const Graph graph = parse_graph(R"(graph g(x: i32[N], h: f16[N], d: f64[N], b: bool[N]) {
  xf = cast(x, to=f32)
  hb = cast(h, to=bf16)
  hd = cast(h, to=f64)
  df = cast(d, to=f32)
  bf = cast(b, to=f32)
  fb = cast(xf, to=bool)
  fi = cast(xf, to=i32)
  return xf, hb, hd, df, bf, fb, fi
})");
  AscGraph g = lower_whole(graph, {false});
  EXPECT_EQ(count_kind(g, AscKind::Cast), 7);
  EXPECT_TRUE(elide_casts(g));
  // Only f16 -> bf16 goes: both compute in f32.
  EXPECT_EQ(count_kind(g, AscKind::Cast), 6);
  EXPECT_EQ(node_named(g, "hb_store").inputs[0], node_named(g, "h_load").id);
  EXPECT_EQ(node_named(g, "hb_store").dtype, DType::bf16);
  EXPECT_EQ(node_named(g, "xf").kind, AscKind::Cast);
  EXPECT_EQ(node_named(g, "hd").kind, AscKind::Cast);
  EXPECT_EQ(node_named(g, "fb").kind, AscKind::Cast);
}

TEST(ElideCastsTest, NoCastsNoChange) {
  AscGraph g = lower_whole(example_graph("softmax"), {false, true});
  const std::string before = print_asc_graph(g);
  EXPECT_FALSE(elide_casts(g));
  EXPECT_EQ(print_asc_graph(g), before);
}

}  // namespace lower_test_local
}  // namespace autofuse::ascir
