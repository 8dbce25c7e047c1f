// move_views (autofuse/fuse/move_views.h): which ops end up where, and that
// the reference interpreter gives the same outputs before and after on
// several shape bindings (sizes 1 and odd sizes included).
#include "autofuse/fuse/move_views.h"

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/fuse/fusion.h"
#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace move_views_test_local {

using fuse_test::count_op;
using fuse_test::parse;
using ::testing::ElementsAre;
using ::testing::Pair;

const Node* producer_of(const Graph& g, const std::string& name) {
  const Value& v = g.value(g.find_value(name).value());
  return v.producer == kNoNode ? nullptr : &g.node(v.producer);
}

/// Every slice and split reads a graph input.
bool selections_read_inputs_only(const Graph& g) {
  for (const Node& node : g.nodes())
    if ((node.op == OpKind::Slice || node.op == OpKind::Split) &&
        g.value(node.inputs[0]).producer != kNoNode)
      return false;
  return true;
}

/// Runs the reference on both graphs with the same random inputs and
/// compares: bit for bit when `rtol` is 0, else within rtol (relative to
/// the largest output magnitude, for sums that add in another order).
void expect_same_results(const Graph& before, const Graph& after,
                         const std::vector<sym::Binding>& bindings, double rtol = 0) {
  for (const sym::Binding& binding : bindings) {
    std::string shown;
    for (const auto& [name, value] : binding)
      shown += fmt::format("{}={} ", name, value);
    SCOPED_TRACE("binding " + shown);
    for (uint64_t seed : {1u, 2u}) {
      const std::vector<HostTensor> inputs = random_inputs(before, binding, seed);
      const std::vector<HostTensor> want = run_reference(before, inputs, binding);
      const std::vector<HostTensor> got = run_reference(after, inputs, binding);
      ASSERT_EQ(want.size(), got.size());
      for (size_t o = 0; o < want.size(); ++o) {
        ASSERT_EQ(want[o].type_string(), got[o].type_string()) << "output " << o;
        double scale = 1;
        for (int64_t i = 0; i < want[o].numel(); ++i)
          scale = std::max(scale, std::abs(want[o].get_f64(i)));
        for (int64_t i = 0; i < want[o].numel(); ++i) {
          const double w = want[o].get_f64(i), g = got[o].get_f64(i);
          if (std::isnan(w) && std::isnan(g)) continue;
          if (rtol == 0) {
            ASSERT_EQ(w, g) << "output " << o << " element " << i;
          } else {
            ASSERT_NEAR(w, g, rtol * scale) << "output " << o << " element " << i;
          }
        }
      }
    }
  }
}

/// Checks the result's interface and that a second run changes nothing.
MoveViewsResult rewrite(const std::shared_ptr<const Graph>& g) {
  MoveViewsResult r = move_views(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(out.name(), g->name());
  EXPECT_EQ(out.inputs().size(), g->inputs().size());
  for (size_t i = 0; i < g->inputs().size() && i < out.inputs().size(); ++i) {
    EXPECT_EQ(out.value(out.inputs()[i]).name, g->value(g->inputs()[i]).name);
    EXPECT_EQ(out.value(out.inputs()[i]).type, g->value(g->inputs()[i]).type);
  }
  EXPECT_EQ(out.outputs().size(), g->outputs().size());
  for (size_t i = 0; i < g->outputs().size() && i < out.outputs().size(); ++i) {
    const TensorType& want = g->value(g->outputs()[i]).type;
    const TensorType& got = out.value(out.outputs()[i]).type;
    EXPECT_EQ(out.value(out.outputs()[i]).name, g->value(g->outputs()[i]).name);
    EXPECT_EQ(got.dtype, want.dtype);
    EXPECT_EQ(got.rank(), want.rank());
  }
  // The text form reads back, and the pass is at its fixed point.
  const std::string text = print_graph(out);
  EXPECT_EQ(print_graph(parse_graph(text)), text);
  EXPECT_EQ(move_views(r.graph).rewrites, 0) << text;
  return r;
}

TEST(MoveViews, SwigluOnAnInputIsLeftAlone) {
  auto g = parse(R"(
    graph swiglu(x: f32[N, 2*F]) {
      a, b = split(x, axis=1, sizes=[F, F])
      sa = sigmoid(a)
      silu = mul(a, sa)
      y = mul(silu, b)
      return y
    })");
  MoveViewsResult r = rewrite(g);
  EXPECT_EQ(r.rewrites, 0);
  EXPECT_EQ(r.graph, g);
}

TEST(MoveViews, SwigluSplitMovesAboveTheBias) {
  auto g = parse(R"(
    graph swiglu(x: f32[N, 2*F], bias: f32[2*F]) {
      h = add(x, bias)
      a, b = split(h, axis=1, sizes=[F, F])
      sa = sigmoid(a)
      silu = mul(a, sa)
      y = mul(silu, b)
      return y
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_THAT(r.by_rewrite, ElementsAre(Pair("hoist_selection_over_elementwise", 1)));
  EXPECT_EQ(count_op(out, OpKind::Split), 2) << print_graph(out);  // of x and of bias
  EXPECT_TRUE(selections_read_inputs_only(out)) << print_graph(out);
  EXPECT_EQ(producer_of(out, "a")->op, OpKind::Add);
  EXPECT_EQ(producer_of(out, "b")->op, OpKind::Add);
  expect_same_results(*g, out, {{{"N", 1}, {"F", 1}}, {{"N", 3}, {"F", 5}}, {{"N", 2}, {"F", 8}}});
}

TEST(MoveViews, RotaryEmbeddingBecomesAConcatOfPiecesOfInputs) {
  // cos and sin broadcast over the batch and the heads.
  auto g = parse(R"(
    graph rotary(x: f32[B, S, H, 64], cos: f32[S, 1, 64], sin: f32[S, 1, 64]) {
      x1 = slice(x, axes=[3], starts=[0], ends=[32])
      x2 = slice(x, axes=[3], starts=[32], ends=[64])
      nx2 = neg(x2)
      rot = concat(nx2, x1, axis=3)
      xc = mul(x, cos)
      rs = mul(rot, sin)
      out = add(xc, rs)
      return out
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  const std::string text = print_graph(out);
  const Node* root = producer_of(out, "out");
  ASSERT_EQ(root->op, OpKind::Concat) << text;
  EXPECT_EQ(std::get<AxisAttrs>(root->attrs).axis, 3);
  EXPECT_EQ(count_op(out, OpKind::Concat), 1) << text;
  EXPECT_TRUE(selections_read_inputs_only(out)) << text;
  // x is read as the graph's own two halves x1 and x2 (equal slices merge).
  EXPECT_EQ(count_op(out, OpKind::Split), 0) << text;
  EXPECT_EQ(count_op(out, OpKind::Slice), 6) << text;  // x, cos and sin, two halves each
  // Each piece is [B, S, H, 32].
  for (ValueId piece : root->inputs)
    EXPECT_EQ(out.value(piece).type.shape.back(), sym::Expr(32)) << text;
  expect_same_results(*g, out,
                      {{{"B", 1}, {"S", 1}, {"H", 1}},
                       {{"B", 2}, {"S", 3}, {"H", 5}},
                       {{"B", 1}, {"S", 7}, {"H", 2}}});
}

std::string dlrm_text(const std::string& tail) {
  std::string params, pieces;
  for (int i = 0; i < 26; ++i) {
    params += fmt::format("{}e{}: f32[B, 16]", i ? ", " : "", i);
    pieces += fmt::format("{}e{}", i ? ", " : "", i);
  }
  return fmt::format(R"(
    graph dlrm({}) {{
      c = concat({}, axis=1)
      s = constant(dtype=f32, value=0.5)
      m = mul(c, s)
      r = relu(m)
      {}
    }})",
                     params, pieces, tail);
}

TEST(MoveViews, DlrmRowSumBecomesTheSumOfTheAddedPieces) {
  // sum over the concat axis = one row sum of the pieces added elementwise:
  // one horizontal reduction per row instead of 26.
  auto g = parse(dlrm_text("y = reduce_sum(r, axes=[1])\n return y"));
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  const std::string text = print_graph(out);
  EXPECT_EQ(count_op(out, OpKind::Concat), 0) << text;
  EXPECT_EQ(count_op(out, OpKind::ReduceSum), 1) << text;
  EXPECT_EQ(count_op(out, OpKind::Add), 25) << text;
  EXPECT_EQ(count_op(out, OpKind::Relu), 26) << text;
  EXPECT_EQ(producer_of(out, "y")->op, OpKind::ReduceSum);
  EXPECT_EQ(out.node(out.value(producer_of(out, "y")->inputs[0]).producer).op, OpKind::Add);
  for (const Node& node : out.nodes()) {
    if (node.op == OpKind::Mul) {
      EXPECT_EQ(out.value(node.inputs[0]).producer, kNoNode) << text;
    }
  }
  expect_same_results(*g, out, {{{"B", 1}}, {{"B", 5}}}, 1e-6);
}

TEST(MoveViews, DlrmConcatThatIsAnOutputStaysAndTheSumReadsThePieces) {
  auto g = parse(dlrm_text("y = reduce_sum(r, axes=[1])\n return r, y"));
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  const std::string text = print_graph(out);
  EXPECT_EQ(producer_of(out, "r")->op, OpKind::Concat) << text;
  EXPECT_EQ(count_op(out, OpKind::Concat), 1) << text;
  EXPECT_EQ(count_op(out, OpKind::ReduceSum), 1) << text;
  EXPECT_EQ(count_op(out, OpKind::Relu), 26) << text;
  // The added pieces are the relus the concat also reads.
  for (const Node& node : out.nodes()) {
    if (node.op != OpKind::Add) continue;
    for (ValueId in : node.inputs) {
      const OpKind op = out.node(out.value(in).producer).op;
      EXPECT_TRUE(op == OpKind::Relu || op == OpKind::Add) << text;
    }
  }
  expect_same_results(*g, out, {{{"B", 1}}, {{"B", 5}}}, 1e-6);
}

TEST(MoveViews, Bf16DlrmConcatAndItsRowSumAreOneKernel) {
  // The bf16 row sum reads the pieces in f32, so the concat it no longer
  // reads is stored by the same kernel.
  std::string text = dlrm_text("y = reduce_sum(r, axes=[1])\n return r, y");
  for (size_t at = text.find("f32"); at != std::string::npos; at = text.find("f32", at))
    text.replace(at, 3, "bf16");
  auto g = parse(text);
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(producer_of(out, "y")->op, OpKind::Cast) << print_graph(out);
  EXPECT_EQ(partition(r.graph, FusionConfig{}).num_kernels(), 1) << print_graph(out);
  expect_same_results(*g, out, {{{"B", 1}}, {{"B", 5}}}, 1e-2);
}

TEST(MoveViews, ReduceOverAnotherAxisMovesAboveTheConcat) {
  auto g = parse(dlrm_text("y = reduce_max(r, axes=[0])\n return y"));
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  const Node* root = producer_of(out, "y");
  ASSERT_EQ(root->op, OpKind::Concat) << print_graph(out);
  EXPECT_EQ(std::get<AxisAttrs>(root->attrs).axis, 0);  // axis 1 less the dropped axis 0
  EXPECT_EQ(count_op(out, OpKind::ReduceMax), 26);
  expect_same_results(*g, out, {{{"B", 1}}, {{"B", 7}}});
}

TEST(MoveViews, ReductionsOverTheConcatAxisCombine) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"reduce_max", "axes=[1, 2], keepdims=true"},  {"reduce_min", "axes=[1]"},
      {"reduce_mean", "axes=[1, 2], keepdims=true"}, {"reduce_mean", "axes=[0, 1]"},
      {"reduce_prod", "axes=[1], keepdims=true"},    {"reduce_sum", "axes=[]"}};
  for (const auto& [reduce, attrs] : cases) {
    SCOPED_TRACE(fmt::format("{}({})", reduce, attrs));
    auto g = parse(fmt::format(R"(
      graph g(a: f32[N, K, 3], b: f32[N, K, 3], c: f32[N, K, 3]) {{
        x = concat(a, b, c, axis=1)
        e = abs(x)
        y = {}(e, {})
        return y
      }})",
                               reduce, attrs));
    MoveViewsResult r = rewrite(g);
    const Graph& out = *r.graph;
    EXPECT_EQ(count_op(out, OpKind::Concat), 0) << print_graph(out);
    // The pieces combine elementwise, then reduce once.
    EXPECT_EQ(count_op(out, *op_from_name(reduce)), 1) << print_graph(out);
    expect_same_results(*g, out, {{{"N", 1}, {"K", 1}}, {{"N", 3}, {"K", 5}}}, 1e-6);
  }
}

TEST(MoveViews, NarrowFloatReductionsCombineInF32AndRoundOnce) {
  // Each piece reduces in f32 (a cast widens it), the partials combine in
  // f32 and one cast rounds the result: rounding each partial to f16/bf16
  // would round k times.
  for (const char* type : {"f16", "bf16"}) {
    for (const char* reduce : {"reduce_sum", "reduce_mean", "reduce_prod"}) {
      SCOPED_TRACE(fmt::format("{} {}", type, reduce));
      auto g = parse(fmt::format(R"(
        graph g(a: {0}[N, 4], b: {0}[N, 4], c: {0}[N, 4]) {{
          x = concat(a, b, c, axis=1)
          y = {1}(x, axes=[1])
          return y
        }})",
                                 type, reduce));
      MoveViewsResult r = rewrite(g);
      const Graph& out = *r.graph;
      const std::string text = print_graph(out);
      EXPECT_EQ(count_op(out, OpKind::Concat), 0) << text;
      const Node* root = producer_of(out, "y");
      ASSERT_EQ(root->op, OpKind::Cast) << text;
      EXPECT_EQ(out.value(root->outputs[0]).type.dtype, *dtype_from_name(type)) << text;
      EXPECT_EQ(out.value(root->inputs[0]).type.dtype, DType::f32) << text;
      EXPECT_EQ(count_op(out, OpKind::Cast), 4) << text;  // three pieces widened, one result
      for (const Node& node : out.nodes())
        if (op_info(node.op).op_class == OpClass::Reduce) {
          EXPECT_EQ(out.value(node.outputs[0]).type.dtype, DType::f32) << text;
        }
      expect_same_results(*g, out, {{{"N", 1}}, {{"N", 6}}}, 1e-2);
    }
  }
}

TEST(MoveViews, Float8SumsDoNotCombine) {
  // float8 arithmetic rounds every result, so its partials would round too.
  auto g = parse(R"(
    graph g(a: f8e4m3fn[N, 4], b: f8e4m3fn[N, 4]) {
      x = concat(a, b, axis=1)
      y = reduce_sum(x, axes=[1])
      return y
    })");
  EXPECT_EQ(move_views(g).rewrites, 0);
}

TEST(MoveViews, IntegerMeanKeepsTheConcat) {
  // The integer mean keeps the concat; the sum still takes it.
  auto g = parse(R"(
    graph g(a: i32[N, 4], b: i32[N, 4]) {
      x = concat(a, b, axis=1)
      y = reduce_mean(x, axes=[1])
      s = reduce_sum(x, axes=[1])
      return y, s
    })");
  MoveViewsResult r = rewrite(g);
  EXPECT_EQ(producer_of(*r.graph, "y")->op, OpKind::ReduceMean);
  EXPECT_EQ(producer_of(*r.graph, "s")->op, OpKind::ReduceSum);
  EXPECT_EQ(count_op(*r.graph, OpKind::Add), 1);  // the pieces, added
  expect_same_results(*g, *r.graph, {{{"N", 1}}, {{"N", 6}}});
}

TEST(MoveViews, IntegerSumCombinesExactly) {
  auto g = parse(R"(
    graph g(a: i32[N, 4], b: i32[N, 4]) {
      x = concat(a, b, axis=1)
      y = reduce_sum(x, axes=[1])
      return y
    })");
  MoveViewsResult r = rewrite(g);
  EXPECT_EQ(count_op(*r.graph, OpKind::Concat), 0);
  expect_same_results(*g, *r.graph, {{{"N", 1}}, {{"N", 6}}});
}

TEST(MoveViews, ConcatOfUnequalPiecesStays) {
  // A symbolic extent: no static offsets for concat_unequal_by_gather.
  auto g = parse(R"(
    graph g(a: f32[N, K], b: f32[N, 5], c: f32[N, K + 5]) {
      x = concat(a, b, axis=1)
      y = relu(x)
      z = add(y, c)
      s = reduce_sum(z, axes=[1])
      return s
    })");
  MoveViewsResult r = rewrite(g);
  EXPECT_EQ(r.rewrites, 0);
  EXPECT_EQ(r.graph, g);
}

TEST(MoveViews, ConcatStaysForUsersThatCannotTakeIt) {
  // The matmul keeps the concat; relu reads the pieces (computed once either way).
  auto g = parse(R"(
    graph g(a: f32[N, 4], b: f32[N, 4], w: f32[8, 3]) {
      x = concat(a, b, axis=1)
      y = relu(x)
      m = matmul(x, w)
      return y, m
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(producer_of(out, "x")->op, OpKind::Concat);
  EXPECT_EQ(out.value(producer_of(out, "m")->inputs[0]).name, "x");
  EXPECT_EQ(producer_of(out, "y")->op, OpKind::Concat) << print_graph(out);
  EXPECT_EQ(count_op(out, OpKind::Relu), 2);
  expect_same_results(*g, out, {{{"N", 1}}, {{"N", 3}}});

  // A concat that is a graph output stays too.
  auto as_output = parse(R"(
    graph g(a: f32[N, 4], b: f32[N, 4]) {
      x = concat(a, b, axis=1)
      y = relu(x)
      return x, y
    })");
  r = rewrite(as_output);
  EXPECT_EQ(producer_of(*r.graph, "x")->op, OpKind::Concat);
  EXPECT_EQ(producer_of(*r.graph, "y")->op, OpKind::Concat);
  EXPECT_EQ(count_op(*r.graph, OpKind::Concat), 2);
}

TEST(MoveViews, ConcatWithSymbolicPiecesSplitsTheOtherOperand) {
  auto g = parse(R"(
    graph g(a: f32[N, K], b: f32[N, K], c: f32[N, 2*K], d: f32[N, 1]) {
      x = concat(a, b, axis=1)
      y = add(x, c)
      z = mul(y, d)
      gz = gt(z, d)
      w = where(gz, z, c)
      return w
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(producer_of(out, "w")->op, OpKind::Concat) << print_graph(out);
  EXPECT_EQ(count_op(out, OpKind::Concat), 1) << print_graph(out);
  EXPECT_TRUE(selections_read_inputs_only(out)) << print_graph(out);
  expect_same_results(*g, out, {{{"N", 1}, {"K", 1}}, {{"N", 3}, {"K", 5}}});
}

TEST(MoveViews, TwoConcatsWithTheSameSplitPointsPairUp) {
  auto g = parse(R"(
    graph g(a: f32[N, 4], b: f32[N, 4], c: f32[N, 4], d: f32[N, 4], m: bool[N, 8]) {
      x = concat(a, b, axis=1)
      y = concat(c, d, axis=1)
      w = where(m, x, y)
      return w
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(count_op(out, OpKind::Concat), 1) << print_graph(out);
  EXPECT_EQ(count_op(out, OpKind::Slice), 2) << print_graph(out);  // of m only
  expect_same_results(*g, out, {{{"N", 1}}, {{"N", 3}}});
}

TEST(MoveViews, SliceWithNegativeStepMovesToTheInputs) {
  auto g = parse(R"(
    graph g(x: f32[N, M], b: f32[M], c: f32[N, 1]) {
      t = add(x, b)
      u = mul(t, c)
      v = cast(u, to=f16)
      y = slice(v, axes=[1, 0], starts=[-1, 0], ends=[end, end], steps=[-2, 2])
      return y
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_TRUE(selections_read_inputs_only(out)) << print_graph(out);
  EXPECT_EQ(producer_of(out, "y")->op, OpKind::Cast);
  // x sliced on both axes, b on its one axis, c on axis 0 only (it broadcasts along 1).
  EXPECT_EQ(count_op(out, OpKind::Slice), 3) << print_graph(out);
  expect_same_results(*g, out, {{{"N", 1}, {"M", 1}}, {{"N", 5}, {"M", 7}}, {{"N", 4}, {"M", 2}}});
}

TEST(MoveViews, SliceOfAValueWithTwoUsers) {
  // Cheap op: recomputed on the slice, the full value stays for its other user.
  auto cheap = parse(R"(
    graph g(x: f32[N, 8], y: f32[N, 8]) {
      t = add(x, y)
      s = slice(t, axes=[1], starts=[2], ends=[6])
      o = relu(s)
      return o, t
    })");
  MoveViewsResult r = rewrite(cheap);
  EXPECT_EQ(r.rewrites, 1);
  EXPECT_EQ(count_op(*r.graph, OpKind::Add), 2);
  EXPECT_TRUE(selections_read_inputs_only(*r.graph)) << print_graph(*r.graph);
  expect_same_results(*cheap, *r.graph, {{{"N", 1}}, {{"N", 3}}});

  // Expensive op: not computed twice.
  auto expensive = parse(R"(
    graph g(x: f32[N, 8]) {
      t = exp(x)
      s = slice(t, axes=[1], starts=[2], ends=[6])
      o = relu(s)
      return o, t
    })");
  EXPECT_EQ(move_views(expensive).rewrites, 0);

  // Expensive op whose only users are slices: each slice moves, exp runs on the slices.
  auto halves = parse(R"(
    graph g(x: f32[N, 8]) {
      t = exp(x)
      lo = slice(t, axes=[1], starts=[0], ends=[4])
      hi = slice(t, axes=[1], starts=[4], ends=[8])
      o = sub(lo, hi)
      return o
    })");
  r = rewrite(halves);
  EXPECT_EQ(count_op(*r.graph, OpKind::Exp), 2);
  EXPECT_TRUE(selections_read_inputs_only(*r.graph)) << print_graph(*r.graph);
  expect_same_results(*halves, *r.graph, {{{"N", 1}}, {{"N", 3}}});
}

TEST(MoveViews, SelectionsMoveThroughTransposeAndBroadcast) {
  auto g = parse(R"(
    graph g(x: f32[N, M], y: f32[N, M], r: f32[1, M]) {
      t = sub(x, y)
      tt = transpose(t, perm=[1, 0])
      s = slice(tt, axes=[0], starts=[1], ends=[end], steps=[2])
      br = broadcast_to(r, shape=[N, M])
      p, q = split(br, axis=0, sizes=[1, N - 1])
      bs = slice(br, axes=[1], starts=[0], ends=[1])
      return s, p, q, bs
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(producer_of(out, "s")->op, OpKind::Transpose) << print_graph(out);
  EXPECT_EQ(producer_of(out, "p")->op, OpKind::BroadcastTo);
  EXPECT_EQ(producer_of(out, "bs")->op, OpKind::BroadcastTo);
  EXPECT_TRUE(selections_read_inputs_only(out)) << print_graph(out);
  EXPECT_EQ(count_op(out, OpKind::Split), 0) << print_graph(out);  // r broadcasts along 0
  expect_same_results(*g, out, {{{"N", 1}, {"M", 1}}, {{"N", 4}, {"M", 3}}});
}

TEST(MoveViews, ConcatMovesBelowTransposeAndBroadcast) {
  auto g = parse(R"(
    graph g(a: f32[N, 1, 4], b: f32[N, 1, 4]) {
      x = concat(a, b, axis=2)
      t = transpose(x, perm=[2, 0, 1])
      u = broadcast_to(t, shape=[3, 8, N, 5])
      return u
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  const Node* root = producer_of(out, "u");
  ASSERT_EQ(root->op, OpKind::Concat) << print_graph(out);
  EXPECT_EQ(std::get<AxisAttrs>(root->attrs).axis, 1);
  expect_same_results(*g, out, {{{"N", 1}}, {{"N", 3}}});
}

TEST(MoveViews, SplitOfAConcatAtItsPointsForwardsThePieces) {
  auto g = parse(R"(
    graph g(a: f32[N, K], b: f32[N, 3]) {
      x = concat(a, b, axis=1)
      p, q = split(x, axis=1, sizes=[K, 3])
      y = sub(p, a)
      return y, q
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(count_op(out, OpKind::Split), 1);  // q is a graph output: its split stays
  EXPECT_EQ(out.value(producer_of(out, "y")->inputs[0]).name, "a") << print_graph(out);
  expect_same_results(*g, out, {{{"N", 2}, {"K", 1}}, {{"N", 1}, {"K", 4}}});
}

TEST(MoveViews, SplatConstantSlicesFold) {
  auto g = parse(R"(
    graph g(x: f32[4, 6]) {
      c = constant(dtype=f32, shape=[4, 6], value=2.5)
      y = mul(x, c)
      s = slice(y, axes=[1], starts=[1], ends=[5], steps=[3])
      return s
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(count_op(out, OpKind::Slice), 1) << print_graph(out);  // of x
  EXPECT_TRUE(selections_read_inputs_only(out));
  expect_same_results(*g, out, {{}});
}

TEST(MoveViews, DeadNodesAreDroppedOnlyWhenRewriting) {
  auto g = parse(R"(
    graph g(x: f32[N, 8]) {
      dead = exp(x)
      t = neg(x)
      s = slice(t, axes=[1], starts=[0], ends=[4])
      return s
    })");
  MoveViewsResult r = rewrite(g);
  EXPECT_EQ(count_op(*r.graph, OpKind::Exp), 0);
  EXPECT_EQ(count_op(*r.graph, OpKind::Neg), 1);
}

TEST(MoveViews, FlagTurnsItOff) {
  EXPECT_TRUE(FusionConfig{}.move_views);
  EXPECT_TRUE(FusionConfig::from_flags("--disable=reduce").move_views);
  const FusionConfig off = FusionConfig::from_flags("--disable=broadcast,move_views");
  EXPECT_FALSE(off.move_views);
  EXPECT_FALSE(off.fuse_broadcasts);
  EXPECT_TRUE(off.enabled);
}

}  // namespace move_views_test_local
}  // namespace autofuse::fuse

namespace autofuse::fuse {
namespace move_views_test_local {

TEST(MoveViewsReshape, ReshapeAfterABiasAddMovesOntoTheGemmOutputAndTheBias) {
  // GPT-2's Conv1D: [b*s, n] + bias, then [b, s, n]; BERT's heads: then
  // [b, s, h, d]. Both reshapes end on buffers (h, bias, res): views there.
  auto g = parse(R"(
    graph g(h: f32[B*S, 96], bias: f32[96], res: f32[B, S, 96]) {
      y = add(h, bias)
      r = reshape(y, shape=[B, S, 96])
      z = add(r, res)
      q = reshape(z, shape=[B, S, 4, 24])
      t = transpose(q, perm=[0, 2, 1, 3])
      return t
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_THAT(r.by_rewrite,
              ::testing::Contains(std::pair<std::string, int>("hoist_reshape_over_elementwise", 3)))
      << print_graph(out);
  for (const Node& node : out.nodes())
    if (node.op == OpKind::Reshape) {
      // Every reshape reads a graph input or another reshape.
      const Node* p = out.value(node.inputs[0]).producer == kNoNode
                          ? nullptr
                          : &out.node(out.value(node.inputs[0]).producer);
      EXPECT_TRUE(p == nullptr || p->op == OpKind::Reshape) << print_graph(out);
    }
  EXPECT_EQ(out.value(out.find_value("bias_r_q").value()).type.to_string(), "f32[4, 24]");
  expect_same_results(*g, out, {{{"B", 1}, {"S", 1}}, {{"B", 2}, {"S", 7}}, {{"B", 3}, {"S", 5}}});
}

TEST(MoveViewsReshape, StopsAtReductionsAndPartialGroups) {
  // LayerNorm's tail before a Gemm: the reshape stays below it (moving it
  // onto the mean would cut the LayerNorm kernel). A [N, 6] operand against
  // [N, 6] -> [N*2, 3] regrouping (one group) spans part of it: no rewrite.
  auto g = parse(R"(
    graph g(x: f32[B, S, 8], u: f32[N, 6], v: f32[6]) {
      m = reduce_mean(x, axes=[2], keepdims=true)
      c = sub(x, m)
      r = reshape(c, shape=[B*S, 8])
      w = mul(u, v)
      k = reshape(w, shape=[N*2, 3])
      return r, k
    })");
  MoveViewsResult r = rewrite(g);
  EXPECT_EQ(r.rewrites, 0) << print_graph(*r.graph);
}

}  // namespace move_views_test_local
}  // namespace autofuse::fuse

namespace autofuse::fuse {
namespace move_views_test_local {

TEST(MoveViewsReshape, FullRankOperandKeepsLeadingOnes) {
  // Found by the fuzz test: the moved reshape must keep the result's type.
  auto g = parse(R"(
    graph g(x: f32[1, D, C], s: f32[C]) {
      a = floor(x)
      r = reshape(a, shape=[1, C*D])
      b = add(x, s)
      q = reshape(b, shape=[1, D*C])
      return r, a, q
    })");
  MoveViewsResult r = rewrite(g);
  const Graph& out = *r.graph;
  EXPECT_EQ(out.value(out.find_value("r").value()).type.to_string(), "f32[1, C*D]");
  expect_same_results(*g, out, {{{"C", 1}, {"D", 1}}, {{"C", 3}, {"D", 5}}});
}

}  // namespace move_views_test_local
}  // namespace autofuse::fuse
