// AscGraph basics: kind names, the verifier, and the text form (round trip
// and parse errors with line:col).
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ascir_test_util.h"
#include "autofuse/ascir/asc_graph.h"

namespace autofuse::ascir {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace asc_graph_test_local {

using ascir_test::example_graph;
using ascir_test::lower_whole;
using ascir_test::node_named;

AscGraph lowered_layernorm() {
  return lower_whole(example_graph("layernorm"), {false, true});
}

TEST(AscKindTest, NamesRoundTrip) {
  EXPECT_EQ(asc_kind_name(AscKind::Data), "Data");
  EXPECT_EQ(asc_kind_name(AscKind::Broadcast), "Broadcast");
  EXPECT_EQ(asc_kind_name(AscKind::Output), "Output");
  for (int k = 0; k <= static_cast<int>(AscKind::Output); ++k) {
    const auto kind = static_cast<AscKind>(k);
    EXPECT_EQ(asc_kind_from_name(asc_kind_name(kind)), kind);
  }
  EXPECT_EQ(asc_kind_from_name("data"), std::nullopt);
}

TEST(AscKindTest, ComputeDtype) {
  EXPECT_EQ(compute_dtype(DType::f16), DType::f32);
  EXPECT_EQ(compute_dtype(DType::bf16), DType::f32);
  EXPECT_EQ(compute_dtype(DType::f32), DType::f32);
  EXPECT_EQ(compute_dtype(DType::f64), DType::f64);
  EXPECT_EQ(compute_dtype(DType::i8), DType::i8);
  EXPECT_EQ(compute_dtype(DType::boolean), DType::boolean);
}

TEST(AscGraphTest, SymbolsAndUsers) {
  const AscGraph g = lowered_layernorm();
  EXPECT_EQ(g.symbols(), (std::vector<std::string>{"D", "N"}));
  const auto users = g.users();
  const int xc = node_named(g, "xc").id;
  // sq = mul(xc, xc) counts once; xn reads xc too.
  EXPECT_EQ(users[static_cast<size_t>(xc)],
            (std::vector<int>{node_named(g, "sq").id, node_named(g, "xn").id}));
  EXPECT_TRUE(users[static_cast<size_t>(node_named(g, "y_out").id)].empty());
}

// ---- verify -----------------------------------------------------------------

struct Breakage {
  std::string what;
  std::function<void(AscGraph&)> apply;
};

class VerifyTest : public ::testing::TestWithParam<Breakage> {};

AscNode& mut(AscGraph& g, const std::string& name) {
  return g.nodes.at(static_cast<size_t>(node_named(g, name).id));
}

TEST_P(VerifyTest, CatchesBrokenGraph) {
  AscGraph g = lowered_layernorm();
  ASSERT_NO_THROW(verify(g));
  GetParam().apply(g);
  EXPECT_THROW(verify(g), InternalError) << GetParam().what;
}

const sym::Expr N = sym::Expr::symbol("N");
const sym::Expr D = sym::Expr::symbol("D");

INSTANTIATE_TEST_SUITE_P(
    Breakages, VerifyTest,
    ::testing::Values(
        Breakage{"id mismatch", [](AscGraph& g) { g.nodes[3].id = 7; }},
        Breakage{"forward input",
                 [](AscGraph& g) { mut(g, "xc").inputs[1] = node_named(g, "y").id; }},
        Breakage{"missing broadcast",
                 [](AscGraph& g) { mut(g, "xc").inputs[1] = node_named(g, "mean").id; }},
        Breakage{"repeat is neither 1 nor the axis size",
                 [](AscGraph& g) { mut(g, "sq").view.repeats[1] = D + 1; }},
        Breakage{"load of a non-Data",
                 [](AscGraph& g) { mut(g, "gamma_load").inputs[0] = node_named(g, "x_load").id; }},
        Breakage{"stride on a repeat-1 axis",
                 [](AscGraph& g) { mut(g, "gamma_load").view.strides[0] = D; }},
        Breakage{"strides on a compute",
                 [](AscGraph& g) {
                   mut(g, "sq").view.strides = {D, 1};
                 }},
        Breakage{"offset on a compute", [](AscGraph& g) { mut(g, "sq").view.offset = 4; }},
        Breakage{"reduce keeps the reduced axis",
                 [](AscGraph& g) { mut(g, "mean").view.repeats[1] = D; }},
        Breakage{"reduce with an elementwise op",
                 [](AscGraph& g) { mut(g, "mean").op = OpKind::Add; }},
        Breakage{"compute with a reduce op",
                 [](AscGraph& g) { mut(g, "sq").op = OpKind::ReduceSum; }},
        Breakage{"compute with the wrong arity",
                 [](AscGraph& g) { mut(g, "sq").op = OpKind::Exp; }},
        Breakage{"broadcast that shrinks",
                 [](AscGraph& g) {
                   AscNode& b = mut(g, "mean_brc");
                   b.view.repeats = {N, 1};
                   mut(g, "mean").view.repeats = {N, D};
                 }},
        Breakage{"duplicate data index", [](AscGraph& g) { mut(g, "gamma").arg_index = 0; }},
        Breakage{"data index out of range", [](AscGraph& g) { mut(g, "beta").arg_index = 3; }},
        Breakage{"arg_index on a compute", [](AscGraph& g) { mut(g, "sq").arg_index = 0; }},
        Breakage{"output of a compute",
                 [](AscGraph& g) { mut(g, "y_out").inputs[0] = node_named(g, "y").id; }},
        Breakage{"compute reads a data",
                 [](AscGraph& g) { mut(g, "y").inputs[0] = node_named(g, "x").id; }},
        Breakage{"operand compute types differ",
                 [](AscGraph& g) { mut(g, "scaled").dtype = DType::i32; }},
        Breakage{"output dtype differs from its store",
                 [](AscGraph& g) { mut(g, "y_out").dtype = DType::f16; }},
        Breakage{"duplicate names", [](AscGraph& g) { mut(g, "sq").name = "xc"; }},
        Breakage{"index without an axis", [](AscGraph& g) { mut(g, "eps").kind = AscKind::Index; }},
        Breakage{"wrong view rank", [](AscGraph& g) { mut(g, "y").view.repeats.pop_back(); }}),
    [](const ::testing::TestParamInfo<Breakage>& info) {
      std::string name;
      for (char c : info.param.what)
        name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

// ---- text -------------------------------------------------------------------

TEST(AscTextTest, RoundTripsEveryExample) {
  const std::vector<std::pair<std::string, std::vector<bool>>> cases = {
      {"layernorm", {false, true}},
      {"softmax", {false, true}},
      {"rmsnorm", {false, true}},
      {"gelu", {false, false}},
      {"chain10", {false, false}}};
  for (const auto& [name, reduced] : cases) {
    const AscGraph g = lower_whole(example_graph(name), reduced);
    const std::string text = print_asc_graph(g);
    const AscGraph parsed = parse_asc_graph(text);
    EXPECT_EQ(print_asc_graph(parsed), text) << name;
    EXPECT_EQ(parsed.nodes.size(), g.nodes.size());
    EXPECT_EQ(parsed.inputs, g.inputs);
    EXPECT_EQ(parsed.outputs, g.outputs);
  }
}

TEST(AscTextTest, RoundTripsEveryField) {
  // Hand-written: symbolic offsets and strides with floordiv, a reduced
  // axis, Index, special scalars, comments and blank lines.
  const std::string text = R"(# a comment
kernel k axes(z0: floordiv(N, 4) + 1, z1: max(M, 2) reduced) inputs(3, 1) outputs(9) {
  %0 a = data(arg=1) : f16 repeats[floordiv(N, 4) + 1, max(M, 2)]

  %1 a_load = load(%0) : f16 repeats[floordiv(N, 4) + 1, max(M, 2)] strides[2*max(M, 2), 2] offset N + 3
  %2 b = data(arg=0) : i32 repeats[1, max(M, 2)]
  %3 b_load = load(%2) : i32 repeats[1, max(M, 2)] strides[0, 1] offset 0
  %4 i = index(axis=1) : i32 repeats[1, max(M, 2)]
  %5 s = scalar(-inf) : f32 repeats[1, 1]
  %6 s2 = scalar(nan) : f32 repeats[1, 1]
  %7 s3 = scalar(1.5e-300) : f64 repeats[1, 1]
  %8 m = reduce_max(%1) : f16 repeats[floordiv(N, 4) + 1, 1]
  %9 c = cast(%8) : f32 repeats[floordiv(N, 4) + 1, 1]
  %10 bi = broadcast(%4) : i32 repeats[floordiv(N, 4) + 1, max(M, 2)]
  %11 sum = add(%10, %10) : i32 repeats[floordiv(N, 4) + 1, max(M, 2)]
  %12 st = store(%9) : f16 repeats[floordiv(N, 4) + 1, 1] strides[1, 0] offset 0
  %13 out = output(%12, arg=0) : f16 repeats[floordiv(N, 4) + 1, 1]
}
)";
  const AscGraph g = parse_asc_graph(text);
  EXPECT_EQ(g.name, "k");
  ASSERT_EQ(g.axes.size(), 2u);
  EXPECT_FALSE(g.axes[0].reduced);
  EXPECT_TRUE(g.axes[1].reduced);
  EXPECT_EQ(g.axes[1].size, sym::max(sym::Expr::symbol("M"), 2));
  EXPECT_EQ(g.inputs, (std::vector<ValueId>{3, 1}));
  EXPECT_EQ(g.node(1).view.offset, sym::Expr::symbol("N") + 3);
  EXPECT_EQ(g.node(4).axis, 1);
  EXPECT_EQ(g.node(5).scalar, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(g.node(6).scalar));
  EXPECT_EQ(g.node(7).scalar, 1.5e-300);
  EXPECT_EQ(g.node(8).op, OpKind::ReduceMax);
  EXPECT_EQ(g.node(13).arg_index, 0);
  EXPECT_EQ(g.symbols(), (std::vector<std::string>{"M", "N"}));
  const std::string printed = print_asc_graph(g);
  EXPECT_EQ(print_asc_graph(parse_asc_graph(printed)), printed);
  EXPECT_THAT(printed, ::testing::HasSubstr("offset N + 3"));
  EXPECT_THAT(printed, ::testing::HasSubstr("z1: max(2, M) reduced"));
}

TEST(AscTextTest, EmptyAxes) {
  const std::string text =
      "kernel scalar_add axes() inputs(0) outputs(1) {\n"
      "  %0 a = data(arg=0) : f32 repeats[]\n"
      "  %1 a_load = load(%0) : f32 repeats[] strides[] offset 0\n"
      "  %2 b = neg(%1) : f32 repeats[]\n"
      "  %3 b_store = store(%2) : f32 repeats[] strides[] offset 0\n"
      "  %4 b_out = output(%3, arg=0) : f32 repeats[]\n"
      "}\n";
  EXPECT_EQ(print_asc_graph(parse_asc_graph(text)), text);
}

TEST(AscTextTest, SymbolNamedReduced) {
  // `reduced` after a size is the flag; alone it is a size symbol.
  const std::string text =
      "kernel k axes(z0: reduced, z1: reduced reduced) inputs() outputs() {\n}\n";
  const AscGraph g = parse_asc_graph(text);
  ASSERT_EQ(g.axes.size(), 2u);
  EXPECT_FALSE(g.axes[0].reduced);
  EXPECT_TRUE(g.axes[1].reduced);
  EXPECT_EQ(g.axes[1].size, sym::Expr::symbol("reduced"));
  EXPECT_EQ(print_asc_graph(g), text);
}

TEST(VerifyAxesTest, DuplicateAxisNames) {
  AscGraph g = lowered_layernorm();
  g.axes[1].name = "z0";
  EXPECT_THROW(verify(g), InternalError);
}

struct ParseErrorCase {
  std::string text;
  int line;
  int column;
  std::string message;
};

class AscParseErrorTest : public ::testing::TestWithParam<ParseErrorCase> {};

TEST_P(AscParseErrorTest, ReportsLineAndColumn) {
  const ParseErrorCase& c = GetParam();
  try {
    parse_asc_graph(c.text);
    FAIL() << "no error for:\n" << c.text;
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, c.line) << e.what();
    EXPECT_EQ(e.where().column, c.column) << e.what();
    EXPECT_THAT(e.message(), ::testing::HasSubstr(c.message));
  }
}

const std::string kHead = "kernel k axes(z0: N) inputs(0) outputs(1) {\n";
const std::string kData = "  %0 a = data(arg=0) : f32 repeats[N]\n";
const std::string kLoad = "  %1 a_load = load(%0) : f32 repeats[N] strides[1] offset 0\n";
const std::string kTail =
    "  %2 s = store(%1) : f32 repeats[N] strides[1] offset 0\n"
    "  %3 o = output(%2, arg=0) : f32 repeats[N]\n}\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, AscParseErrorTest,
    ::testing::Values(
        ParseErrorCase{"", 1, 0, "expected 'kernel'"},
        ParseErrorCase{"graph k", 1, 1, "expected 'kernel'"},
        ParseErrorCase{"kernel k axes(z0 N) inputs() outputs() {\n", 1, 15, "name: size"},
        ParseErrorCase{"kernel k axes(z0: N +) inputs() outputs() {\n", 1, 22, "size expression"},
        ParseErrorCase{"kernel k axes(z0: N inputs() outputs() {\n", 1, 14, "missing ')'"},
        ParseErrorCase{"kernel k axes(z0: N) inputs(x) outputs() {\n", 1, 29, "value id"},
        ParseErrorCase{"kernel k axes(z0: N) inputs() outputs() {\n  %0 a = data(arg=0) : f32 "
                       "repeats[N]\n",
                       2, 0, "missing '}'"},
        ParseErrorCase{kHead + "  %0 a = dat(arg=0) : f32 repeats[N]\n", 2, 10,
                       "unknown node kind 'dat'"},
        ParseErrorCase{kHead + "  %1 a = data(arg=0) : f32 repeats[N]\n", 2, 3,
                       "expected node id %0"},
        ParseErrorCase{
            kHead + kData + "  %1 a_load = load(%4) : f32 repeats[N] strides[1] offset 0\n", 3, 20,
            "node %4 is not defined"},
        ParseErrorCase{kHead + "  %0 a = data(arg=0) : f99 repeats[N]\n", 2, 24,
                       "unknown dtype 'f99'"},
        ParseErrorCase{kHead + "  %0 a = data(arg=0) : f32 repeats[N, 2*]\n", 2, 41,
                       "size expression"},
        ParseErrorCase{kHead + "  %0 a = data(arg=0) : f32 repeats[N\n", 2, 35, "missing ']'"},
        ParseErrorCase{kHead + "  %0 a = data(arg=0) : f32 repeats[N] extra\n", 2, 39,
                       "unexpected 'extra'"},
        ParseErrorCase{kHead + "  %0 a = data(axis=0) : f32 repeats[N]\n", 2, 15,
                       "unexpected argument 'axis=0'"},
        ParseErrorCase{kHead + kData + "  %1 a_load = load(%0) : f32 repeats[N] offset 0\n", 3, 41,
                       "expected 'strides['"},
        ParseErrorCase{kHead + kData + kLoad + "  %2 c = scalar(1.5x) : f32 repeats[1]\n", 4, 17,
                       "expected a number"},
        ParseErrorCase{kHead + kData + kLoad + kTail + "%9\n", 7, 1, "after the kernel"}));

TEST(AscTextTest, InconsistentGraphIsAUserError) {
  // Well-formed text, but the Load's repeats differ from the Data's.
  const std::string text =
      kHead + kData + "  %1 a_load = load(%0) : f32 repeats[1] strides[0] offset 0\n" + kTail;
  try {
    parse_asc_graph(text);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(), ::testing::HasSubstr("invalid AscGraph 'k'"));
  }
  EXPECT_NO_THROW(parse_asc_graph(kHead + kData + kLoad + kTail));
}

}  // namespace asc_graph_test_local
}  // namespace autofuse::ascir
