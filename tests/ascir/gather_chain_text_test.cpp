// Gathers of several dims (a chain of gathers over one buffer, e.g. a Pad
// of two axes): the text form (exact round trip, `name=` per dim, parse
// errors), the verifier and axis merging.
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
namespace gather_chain_text_test_local {

using ascir_test::BadText;
using ascir_test::node_at;
using ascir_test::replaced;
using sym::Expr;
using ::testing::HasSubstr;

// out[n, p, q] = x[n, i[p], j[q]], x [N, 5, 7]: i is per row (axis z1), j
// varies along the vector axis; the first dim reports as 'rows', the
// second as the node itself.
const std::string kPad2 = R"(kernel pad axes(z0: N, z1: 9, z2: 11) inputs(0, 1, 2) outputs(5) {
  %0 x = data(arg=0) : bf16 repeats[1, 1, 1]
  %1 i = data(arg=1) : i64 repeats[1, 9, 1]
  %2 i_load = load(%1) : i64 repeats[1, 9, 1] strides[0, 1, 0] offset 0
  %3 j = data(arg=2) : i32 repeats[1, 1, 11]
  %4 j_load = load(%3) : i32 repeats[1, 1, 11] strides[0, 0, 1] offset 0
  %5 i_b = broadcast(%2) : i64 repeats[N, 9, 11]
  %6 j_b = broadcast(%4) : i32 repeats[N, 9, 11]
  %7 cols = gather(%0, %5, %6, stride=7, size=5, name=rows, stride=1, size=K) : bf16 repeats[N, 9, 11] strides[5*K, 0, 0] offset 0
  %8 y = neg(%7) : bf16 repeats[N, 9, 11]
  %9 y_store = store(%8) : bf16 repeats[N, 9, 11] strides[99, 11, 1] offset 0
  %10 y_out = output(%9, arg=0) : bf16 repeats[N, 9, 11]
}
)";

TEST(GatherChainText, RoundTripsExactly) {
  const AscGraph g = parse_asc_graph(kPad2);
  EXPECT_EQ(print_asc_graph(g), kPad2);
  const AscNode& n = g.node(7);
  EXPECT_EQ(n.kind, AscKind::Gather);
  EXPECT_EQ(n.inputs, (std::vector<int>{0, 5, 6}));
  ASSERT_EQ(n.gather.size(), 2u);
  EXPECT_EQ(n.gather[0], (GatherDim{Expr(7), Expr(5), "rows"}));
  EXPECT_EQ(n.gather[1], (GatherDim{Expr(1), Expr::symbol("K"), "cols"}));
  // K is used only by a gathered dim's size.
  EXPECT_EQ(g.symbols(), (std::vector<std::string>{"K", "N"}));
  // A name equal to the node's is the default: not printed, read back.
  const AscGraph same = parse_asc_graph(replaced(kPad2, "size=K)", "size=K, name=cols)"));
  EXPECT_EQ(print_asc_graph(same), kPad2);
}

TEST(GatherChainText, ThreeDims) {
  const std::string text = R"(kernel g axes(z0: P) inputs(0, 1) outputs(2) {
  %0 t = data(arg=0) : f16 repeats[1]
  %1 i = data(arg=1) : u8 repeats[P]
  %2 i_load = load(%1) : u8 repeats[P] strides[1] offset 0
  %3 x = gather(%0, %2, %2, %2, stride=A*B, size=max(2, K), name=a, stride=B, size=A, name=b, stride=1, size=B) : f16 repeats[P] strides[0] offset 3
  %4 x_store = store(%3) : f16 repeats[P] strides[1] offset 0
  %5 x_out = output(%4, arg=0) : f16 repeats[P]
}
)";
  const AscGraph g = parse_asc_graph(text);
  EXPECT_EQ(print_asc_graph(g), text);
  ASSERT_EQ(g.node(3).gather.size(), 3u);
  EXPECT_EQ(g.node(3).gather[0].size, sym::max(Expr::symbol("K"), 2));
  EXPECT_EQ(g.node(3).gather[2].name, "x");
}

class GatherChainParseErrorTest : public ::testing::TestWithParam<BadText> {};

TEST_P(GatherChainParseErrorTest, IsAUserError) {
  try {
    parse_asc_graph(GetParam().text);
    FAIL() << GetParam().what;
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(), HasSubstr(GetParam().message)) << GetParam().what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GatherChainParseErrorTest,
    ::testing::Values(
        BadText{"second size missing", replaced(kPad2, ", size=K", ""), "per gathered dim"},
        BadText{"two sizes for one stride", replaced(kPad2, "size=5,", "size=5, size=4,"),
                "needs 'stride=' before it"},
        BadText{"name before any stride", replaced(kPad2, "%6, stride=7", "%6, name=r, stride=7"),
                "'name='"},
        BadText{"two names for one dim", replaced(kPad2, "name=rows", "name=rows, name=r"),
                "'name='"},
        BadText{"bad name", replaced(kPad2, "name=rows", "name=1rows"), "'name='"},
        BadText{"name on a load", replaced(kPad2, "load(%1)", "load(%1, name=a)"),
                "unexpected argument 'name=a'"},
        BadText{"one index for two dims", replaced(kPad2, "gather(%0, %5, %6,", "gather(%0, %5,"),
                "invalid AscGraph"},
        BadText{"an index of other repeats",
                replaced(kPad2, "gather(%0, %5, %6,", "gather(%0, %5, %4,"), "invalid AscGraph"}));

class GatherChainVerifyTest
    : public ::testing::TestWithParam<std::pair<std::string, std::function<void(AscGraph&)>>> {};

TEST_P(GatherChainVerifyTest, CatchesBrokenGraph) {
  AscGraph g = parse_asc_graph(kPad2);
  ASSERT_NO_THROW(verify(g));
  GetParam().second(g);
  EXPECT_THROW(verify(g), InternalError) << GetParam().first;
}

INSTANTIATE_TEST_SUITE_P(
    Breakages, GatherChainVerifyTest,
    ::testing::Values(std::make_pair(std::string("a dim without its index"),
                                     std::function<void(AscGraph&)>([](AscGraph& g) {
                                       node_at(g, 7).gather.push_back(node_at(g, 7).gather[0]);
                                     })),
                      std::make_pair(std::string("an index without its dim"),
                                     std::function<void(AscGraph&)>([](AscGraph& g) {
                                       node_at(g, 7).gather.pop_back();
                                     })),
                      std::make_pair(std::string("a float second index"),
                                     std::function<void(AscGraph&)>([](AscGraph& g) {
                                       for (int id : {3, 4, 6})
                                         node_at(g, id).dtype = DType::f32;
                                     })),
                      std::make_pair(std::string("a dim without a name"),
                                     std::function<void(AscGraph&)>([](AscGraph& g) {
                                       node_at(g, 7).gather[1].name.clear();
                                     }))));

TEST(GatherChainSchedule, MergesKeepEveryGatheredDim) {
  // kPad2: i varies along z1 only, j along z2 only, so z1 and z2 do not
  // merge; nor do z0 and z1 (the Gather's stride 5*K along z0 is not 0 * 9).
  AscGraph g = parse_asc_graph(kPad2);
  EXPECT_FALSE(schedule::merge_axes(g));
  // Indices over [A, B] both contiguous, the non-gathered part too: one
  // axis, both gathered dims kept.
  const std::string text = R"(kernel g axes(z0: A, z1: B) inputs(0, 1) outputs(2) {
  %0 t = data(arg=0) : f32 repeats[1, 1]
  %1 i = data(arg=1) : i64 repeats[A, B]
  %2 i_load = load(%1) : i64 repeats[A, B] strides[B, 1] offset 0
  %3 x = gather(%0, %2, %2, stride=7, size=V, name=r, stride=1, size=7) : f32 repeats[A, B] strides[0, 0] offset 0
  %4 x_store = store(%3) : f32 repeats[A, B] strides[B, 1] offset 0
  %5 x_out = output(%4, arg=0) : f32 repeats[A, B]
}
)";
  AscGraph m = parse_asc_graph(text);
  EXPECT_TRUE(schedule::merge_axes(m));
  ASSERT_EQ(m.axes.size(), 1u);
  EXPECT_EQ(m.node(3).gather,
            (std::vector<GatherDim>{{Expr(7), Expr::symbol("V"), "r"}, {Expr(1), Expr(7), "x"}}));
  EXPECT_EQ(m.node(3).inputs, (std::vector<int>{0, 2, 2}));
}

}  // namespace gather_chain_text_test_local
}  // namespace autofuse::ascir
