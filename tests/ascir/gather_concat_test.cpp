// Gather nodes and Outputs written in pieces (several Stores) in the
// AscGraph: the text form (exact round trip, parse errors), the verifier,
// axis merging and the schedule.
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ascir_test_util.h"
#include "autofuse/ascir/asc_graph.h"
#include "autofuse/schedule/schedule.h"

namespace autofuse::ascir {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace gather_concat_test_local {

using ascir_test::BadText;
using ascir_test::node_at;
using ascir_test::replaced;
using ascir_test::replaced_all;
using sym::Expr;
using ::testing::HasSubstr;

// Embedding lookup: out[n, h] = table[idx[n], h], table [V, H], then a row
// sum; the index load is i32 and broadcast along h.
const std::string kEmbedding = R"(kernel emb axes(z0: N, z1: H reduced) inputs(0, 1) outputs(3, 4) {
  %0 table = data(arg=0) : bf16 repeats[N, H]
  %1 idx = data(arg=1) : i32 repeats[N, 1]
  %2 idx_load = load(%1) : i32 repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : i32 repeats[N, H]
  %4 e = gather(%0, %3, stride=H, size=V) : bf16 repeats[N, H] strides[0, 1] offset 0
  %5 s = reduce_sum(%4) : bf16 repeats[N, 1]
  %6 e_store = store(%4) : bf16 repeats[N, H] strides[H, 1] offset 0
  %7 e_out = output(%6, arg=0) : bf16 repeats[N, H]
  %8 s_store = store(%5) : bf16 repeats[N, 1] strides[1, 0] offset 0
  %9 s_out = output(%8, arg=1) : bf16 repeats[N, 1]
}
)";

// Concat of two [N, D] pieces into [N, 2*D]: two Stores into one Output.
const std::string kConcat = R"(kernel cat axes(z0: N, z1: D) inputs(0, 1) outputs(4) {
  %0 a = data(arg=0) : f32 repeats[N, D]
  %1 a_load = load(%0) : f32 repeats[N, D] strides[D, 1] offset 0
  %2 b = data(arg=1) : f32 repeats[N, D]
  %3 b_load = load(%2) : f32 repeats[N, D] strides[D, 1] offset 0
  %4 na = neg(%1) : f32 repeats[N, D]
  %5 cat_0 = store(%4) : f32 repeats[N, D] strides[2*D, 1] offset 0
  %6 cat_1 = store(%3) : f32 repeats[N, D] strides[2*D, 1] offset D
  %7 cat = output(%5, %6, arg=0) : f32 repeats[N, D]
}
)";

TEST(GatherTextTest, RoundTripsExactly) {
  for (const std::string& text : {kEmbedding, kConcat}) {
    const AscGraph g = parse_asc_graph(text);
    EXPECT_EQ(print_asc_graph(g), text);
  }
  const AscGraph g = parse_asc_graph(kEmbedding);
  const AscNode& e = g.node(4);
  EXPECT_EQ(e.kind, AscKind::Gather);
  EXPECT_EQ(e.inputs, (std::vector<int>{0, 3}));
  ASSERT_EQ(e.gather.size(), 1u);
  EXPECT_EQ(e.gather[0].stride, Expr::symbol("H"));
  EXPECT_EQ(e.gather[0].size, Expr::symbol("V"));
  EXPECT_EQ(e.gather[0].name, "e");  // no `name=`: the node's
  // The gather fields' symbols count (V appears nowhere else).
  EXPECT_EQ(g.symbols(), (std::vector<std::string>{"H", "N", "V"}));
  // Other kinds keep the defaults.
  for (const AscNode& n : g.nodes) {
    if (n.kind == AscKind::Gather) continue;
    EXPECT_TRUE(n.gather.empty()) << n.name;
  }
  const AscGraph c = parse_asc_graph(kConcat);
  EXPECT_EQ(c.node(7).inputs, (std::vector<int>{5, 6}));
  EXPECT_EQ(c.node(6).view.offset, Expr::symbol("D"));
}

TEST(GatherTextTest, SymbolicGatherFields) {
  // Expressions with commas inside the args, an i64 index, a literal size.
  const std::string text = R"(kernel g axes(z0: N) inputs(0, 1) outputs(2) {
  %0 t = data(arg=0) : f16 repeats[N]
  %1 i = data(arg=1) : i64 repeats[N]
  %2 i_load = load(%1) : i64 repeats[N] strides[1] offset 0
  %3 x = gather(%0, %2, stride=max(2, K), size=7) : f16 repeats[N] strides[0] offset K + 1
  %4 x_store = store(%3) : f16 repeats[N] strides[1] offset 0
  %5 x_out = output(%4, arg=0) : f16 repeats[N]
}
)";
  const AscGraph g = parse_asc_graph(text);
  EXPECT_EQ(g.node(3).gather.at(0).stride, sym::max(Expr::symbol("K"), 2));
  EXPECT_EQ(g.node(3).gather.at(0).size, Expr(7));
  EXPECT_EQ(print_asc_graph(g), text);
}

class GatherParseErrorTest : public ::testing::TestWithParam<BadText> {};

TEST_P(GatherParseErrorTest, IsAUserError) {
  try {
    parse_asc_graph(GetParam().text);
    FAIL() << GetParam().what;
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(), HasSubstr(GetParam().message)) << GetParam().what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GatherParseErrorTest,
    ::testing::Values(
        BadText{"no size", replaced(kEmbedding, ", size=V", ""), "needs 'stride=' and 'size='"},
        BadText{"no stride", replaced(kEmbedding, "stride=H, ", ""), "needs 'stride='"},
        BadText{"bad stride expression", replaced(kEmbedding, "stride=H", "stride=H +"),
                "expression"},
        BadText{"stride on a load", replaced(kEmbedding, "load(%1)", "load(%1, stride=1)"),
                "unexpected argument 'stride=1'"},
        BadText{"no strides", replaced(kEmbedding, " strides[0, 1] offset 0\n  %5", "\n  %5"),
                "expected 'strides['"},
        BadText{"float index", replaced_all(kEmbedding, "i32", "f32"), "not an integer"},
        BadText{"index of other repeats", replaced(kEmbedding, "gather(%0, %3", "gather(%0, %2"),
                "invalid AscGraph"},
        BadText{"one input", replaced(kEmbedding, "gather(%0, %3", "gather(%0"),
                "invalid AscGraph"}));

TEST(GatherTextTest, StrideOnFullAxisIsFine) {
  EXPECT_NO_THROW(parse_asc_graph(
      replaced(kEmbedding, "strides[0, 1] offset 0\n  %5", "strides[H, 1] offset 0\n  %5")));
}

// ---- verify -------------------------------------------------------------------

struct GatherBreakage {
  std::string what;
  std::string graph;  // kEmbedding or kConcat
  std::function<void(AscGraph&)> apply;
};

class GatherVerifyTest : public ::testing::TestWithParam<GatherBreakage> {};

TEST_P(GatherVerifyTest, CatchesBrokenGraph) {
  AscGraph g = parse_asc_graph(GetParam().graph);
  ASSERT_NO_THROW(verify(g));
  GetParam().apply(g);
  EXPECT_THROW(verify(g), InternalError) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    GatherBreakages, GatherVerifyTest,
    ::testing::Values(
        GatherBreakage{"gather fields on a load", kEmbedding,
                       [](AscGraph& g) { node_at(g, 2).gather = node_at(g, 4).gather; }},
        GatherBreakage{"gather dim on a store", kEmbedding,
                       [](AscGraph& g) { node_at(g, 6).gather = node_at(g, 4).gather; }},
        GatherBreakage{"gather without dims", kEmbedding,
                       [](AscGraph& g) {
                         node_at(g, 4).gather.clear();
                         node_at(g, 4).inputs.pop_back();
                       }},
        GatherBreakage{"gathered dim without a name", kEmbedding,
                       [](AscGraph& g) { node_at(g, 4).gather[0].name.clear(); }},
        GatherBreakage{"gather reads a load as its buffer", kEmbedding,
                       [](AscGraph& g) { node_at(g, 4).inputs[0] = 2; }},
        GatherBreakage{"gather index is a buffer", kEmbedding,
                       [](AscGraph& g) { node_at(g, 4).inputs[1] = 1; }},
        GatherBreakage{"bool index", kEmbedding,
                       [](AscGraph& g) {
                         node_at(g, 2).dtype = DType::boolean;
                         node_at(g, 1).dtype = DType::boolean;
                         node_at(g, 3).dtype = DType::boolean;
                       }},
        GatherBreakage{"float index", kEmbedding,
                       [](AscGraph& g) {
                         for (int id : {1, 2, 3})
                           node_at(g, id).dtype = DType::f32;
                       }},
        GatherBreakage{"gather dtype differs from its buffer", kEmbedding,
                       [](AscGraph& g) { node_at(g, 4).dtype = DType::f32; }},
        GatherBreakage{"gather without strides", kEmbedding,
                       [](AscGraph& g) { node_at(g, 4).view.strides.clear(); }},
        GatherBreakage{"gather stride on a repeat-1 axis", kEmbedding,
                       [](AscGraph& g) {
                         for (int id : {0, 3, 4})
                           node_at(g, id).view.repeats[1] = Expr(1);
                         node_at(g, 4).view.strides[1] = Expr(1);
                       }},
        GatherBreakage{"gather with three inputs", kEmbedding,
                       [](AscGraph& g) { node_at(g, 4).inputs.push_back(3); }},
        GatherBreakage{"output without stores", kConcat,
                       [](AscGraph& g) { node_at(g, 7).inputs.clear(); }},
        GatherBreakage{"output lists a store twice", kConcat,
                       [](AscGraph& g) {
                         node_at(g, 7).inputs = {5, 5};
                       }},
        GatherBreakage{"output reads a compute", kConcat,
                       [](AscGraph& g) {
                         node_at(g, 7).inputs = {5, 6, 4};
                       }},
        GatherBreakage{"a piece of another dtype", kConcat,
                       [](AscGraph& g) { node_at(g, 6).dtype = DType::f16; }},
        GatherBreakage{"output repeats not the union of its pieces'", kConcat,
                       [](AscGraph& g) { node_at(g, 7).view.repeats[1] = Expr(1); }},
        GatherBreakage{"output varies where no piece does", kConcat, [](AscGraph& g) {
                         for (int id : {5, 6}) {
                           node_at(g, id).view.repeats[1] = Expr(1);
                           node_at(g, id).view.strides[1] = Expr(0);
                         }
                         node_at(g, 4).view.repeats[1] = Expr(1);
                       }}));

TEST(GatherVerifyTest, PiecesMayDifferInRepeats) {
  // A per-row piece after a full one: the Output has the union of repeats.
  const std::string text = R"(kernel rows axes(z0: N, z1: D) inputs(0, 1) outputs(2) {
  %0 a = data(arg=0) : f32 repeats[N, D]
  %1 a_load = load(%0) : f32 repeats[N, D] strides[D, 1] offset 0
  %2 r = data(arg=1) : f32 repeats[N, 1]
  %3 r_load = load(%2) : f32 repeats[N, 1] strides[1, 0] offset 0
  %4 cat_0 = store(%1) : f32 repeats[N, D] strides[D + 1, 1] offset 0
  %5 cat_1 = store(%3) : f32 repeats[N, 1] strides[D + 1, 0] offset D
  %6 cat = output(%4, %5, arg=0) : f32 repeats[N, D]
}
)";
  const AscGraph g = parse_asc_graph(text);
  EXPECT_EQ(print_asc_graph(g), text);
  EXPECT_THROW(parse_asc_graph(replaced(text, "output(%4, %5, arg=0) : f32 repeats[N, D]",
                                        "output(%4, %5, arg=0) : f32 repeats[N, 1]")),
               UserError);
}

TEST(GatherVerifyTest, AnyIntegerIndexDtype) {
  for (DType t : {DType::i8, DType::u8, DType::i16, DType::u16, DType::i32, DType::u32, DType::i64,
                  DType::u64}) {
    AscGraph g = parse_asc_graph(kEmbedding);
    for (int id : {1, 2, 3})
      node_at(g, id).dtype = t;
    EXPECT_NO_THROW(verify(g)) << dtype_name(t);
  }
}

// ---- merge_axes and schedule --------------------------------------------------

TEST(GatherScheduleTest, GatherStridesBlockOrAllowMerges) {
  // The gathered table row [H] is contiguous along z1 but the Gather does not
  // move along z0 (stride 0): no merge.
  AscGraph g = parse_asc_graph(kEmbedding);
  EXPECT_FALSE(schedule::merge_axes(g));
  // Two kept axes over which both the index and the non-gathered part are
  // contiguous merge into one; the gather fields stay.
  const std::string text = R"(kernel g axes(z0: A, z1: B, z2: H) inputs(0, 1) outputs(2) {
  %0 t = data(arg=0) : f32 repeats[A, B, H]
  %1 i = data(arg=1) : i64 repeats[A, B, H]
  %2 i_load = load(%1) : i64 repeats[A, B, H] strides[B*H, H, 1] offset 0
  %3 x = gather(%0, %2, stride=7, size=V) : f32 repeats[A, B, H] strides[B, 1, 0] offset 0
  %4 x_store = store(%3) : f32 repeats[A, B, H] strides[B*H, H, 1] offset 0
  %5 x_out = output(%4, arg=0) : f32 repeats[A, B, H]
}
)";
  AscGraph m = parse_asc_graph(text);
  EXPECT_TRUE(schedule::merge_axes(m));
  ASSERT_EQ(m.axes.size(), 2u);
  EXPECT_EQ(m.axes[0].size, Expr::symbol("A") * Expr::symbol("B"));
  EXPECT_EQ(m.node(3).view.strides, (std::vector<Expr>{Expr(1), Expr(0)}));
  EXPECT_EQ(m.node(3).gather.at(0).stride, Expr(7));
  EXPECT_EQ(m.node(3).gather.at(0).size, Expr::symbol("V"));
}

TEST(GatherScheduleTest, PiecesBlockMergeAndBothPassesRecomputeTheGather) {
  AscGraph c = parse_asc_graph(kConcat);
  EXPECT_FALSE(schedule::merge_axes(c));  // stride 2*D != 1 * D

  const schedule::ScheduledKernel k = schedule::schedule_kernel(parse_asc_graph(kEmbedding));
  EXPECT_EQ(k.kind, schedule::Template::Reduction);
  EXPECT_EQ(k.num_passes, 1);
  EXPECT_EQ(k.node_pass.at(4), 0);
  EXPECT_FALSE(k.is_row_node.at(4));

  // A layernorm-like use: the gather is needed in two passes.
  const std::string text = R"(kernel ln axes(z0: N, z1: H reduced) inputs(0, 1) outputs(2) {
  %0 table = data(arg=0) : f32 repeats[N, H]
  %1 idx = data(arg=1) : i64 repeats[N, 1]
  %2 idx_load = load(%1) : i64 repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : i64 repeats[N, H]
  %4 e = gather(%0, %3, stride=H, size=V) : f32 repeats[N, H] strides[0, 1] offset 0
  %5 m = reduce_mean(%4) : f32 repeats[N, 1]
  %6 m_b = broadcast(%5) : f32 repeats[N, H]
  %7 d = sub(%4, %6) : f32 repeats[N, H]
  %8 d_0 = store(%7) : f32 repeats[N, H] strides[2*H, 1] offset 0
  %9 d_1 = store(%4) : f32 repeats[N, H] strides[2*H, 1] offset H
  %10 d_out = output(%8, %9, arg=0) : f32 repeats[N, H]
}
)";
  const schedule::ScheduledKernel ln = schedule::schedule_kernel(parse_asc_graph(text));
  EXPECT_EQ(ln.num_passes, 2);
  EXPECT_EQ(ln.node_pass.at(8), 1);
  EXPECT_EQ(ln.node_pass.at(9), 0);
  EXPECT_EQ(ln.node_pass.at(10), 0);  // Outputs: 0
  EXPECT_EQ(schedule::split_phases(ln), 2);
}

}  // namespace gather_concat_test_local
}  // namespace autofuse::ascir
