// Table tests for canonical form and the simplification rules of the
// factories: each input is parsed (built through the factories) and must
// print as the expected text and equal the parsed expected text.
#include <gtest/gtest.h>

#include <unordered_set>

#include "autofuse/error.h"
#include "autofuse/sym/expr.h"

namespace autofuse::sym {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace simplify_test_local {

struct Case {
  const char* input;
  const char* expected;
};

void check_table(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    Expr got = parse_expr(c.input);
    Expr want = parse_expr(c.expected);
    EXPECT_EQ(got.to_string(), c.expected);
    EXPECT_EQ(got, want) << got.to_string() << " vs " << want.to_string();
    EXPECT_EQ(got.hash(), want.hash());
  }
}

TEST(Canonical, Polynomials) {
  check_table({
      {"s0*s1 + s1*s0", "2*s0*s1"},
      {"(a + b)*(a - b)", "a*a - b*b"},
      {"x - x", "0"},
      {"x + 0", "x"},
      {"1*x", "x"},
      {"0*x", "0"},
      {"2 + 3*4", "14"},
      {"(N + 1)*(D - 2)", "D*N + D - 2*N - 2"},
      {"-(N - 3)", "-N + 3"},
      {"N*2*N", "2*N*N"},
      {"2*(N + 1)", "2*N + 2"},
      {"-N", "-N"},
      {"--N", "N"},
      {"3 - N*M + M*N*2", "M*N + 3"},
      {"(x + 1)*(x + 1) - x*x", "2*x + 1"},
      {"a*(b + c) - c*a", "a*b"},
  });
}

TEST(Canonical, OperatorsMatchParser) {
  Expr s0 = Expr::symbol("s0"), s1 = Expr::symbol("s1"), x = Expr::symbol("x");
  EXPECT_EQ(s0 * s1 + s1 * s0, 2 * s0 * s1);
  EXPECT_EQ((s0 + s1) * (s0 - s1), s0 * s0 - s1 * s1);
  EXPECT_EQ(x - x, Expr(0));
  EXPECT_EQ(floordiv(4 * x, 4), x);
  EXPECT_EQ(mod(4 * x, 2), Expr(0));
  EXPECT_EQ(s0 + 1, parse_expr("1 + s0"));
}

TEST(Canonical, NodeLayout) {
  Expr e = parse_expr("3*b*a*a");
  ASSERT_EQ(e.kind(), Kind::Mul);
  ASSERT_EQ(e.operands().size(), 4u);  // coefficient, then a, a, b
  EXPECT_EQ(e.operands()[0].as_const(), 3);
  EXPECT_EQ(e.operands()[1].symbol_name(), "a");
  EXPECT_EQ(e.operands()[2].symbol_name(), "a");
  EXPECT_EQ(e.operands()[3].symbol_name(), "b");
  Expr product = parse_expr("b*a");
  ASSERT_EQ(product.kind(), Kind::Mul);
  EXPECT_EQ(product.operands().size(), 2u);  // coefficient 1 omitted
  Expr sum = parse_expr("1 + a + a*b");
  ASSERT_EQ(sum.kind(), Kind::Add);
  EXPECT_EQ(sum.operands().back().as_const(), 1);  // constant last
  EXPECT_EQ(kind_name(Kind::FloorDiv), "FloorDiv");
  EXPECT_EQ(kind_name(sum.kind()), "Add");
}

TEST(Canonical, HashAndOrder) {
  std::unordered_set<Expr> set;
  set.insert(parse_expr("a*b + 1"));
  set.insert(parse_expr("1 + b*a"));
  set.insert(parse_expr("min(a, b)"));
  set.insert(parse_expr("min(b, a)"));
  EXPECT_EQ(set.size(), 2u);
  std::vector<Expr> es = {parse_expr("a"),
                          parse_expr("b"),
                          parse_expr("1"),
                          parse_expr("a + 1"),
                          parse_expr("floordiv(a, 2)"),
                          parse_expr("a*b")};
  for (const Expr& x : es) {
    EXPECT_EQ(Expr::compare(x, x), 0);
    for (const Expr& y : es) {
      EXPECT_EQ(Expr::compare(x, y), -Expr::compare(y, x));
      EXPECT_EQ(Expr::compare(x, y) == 0, x == y);
    }
  }
}

TEST(Simplify, ConstantFoldingUsesFloorSemantics) {
  check_table({
      {"floordiv(7, 2)", "3"},
      {"floordiv(-7, 2)", "-4"},
      {"floordiv(7, -2)", "-4"},
      {"floordiv(-7, -2)", "3"},
      {"ceildiv(7, 2)", "4"},
      {"ceildiv(-7, 2)", "-3"},
      {"ceildiv(7, -2)", "-3"},
      {"mod(7, 2)", "1"},
      {"mod(-7, 2)", "1"},
      {"mod(7, -2)", "-1"},
      {"mod(-7, -2)", "-1"},
      {"min(3, 5)", "3"},
      {"max(3, -5)", "3"},
      {"mod(6, 3)", "0"},
  });
}

TEST(Simplify, DivisionByOneAndByAMultiple) {
  check_table({
      {"floordiv(x, 1)", "x"},
      {"mod(x, 1)", "0"},
      {"ceildiv(x, 1)", "x"},
      {"floordiv(x, -1)", "-x"},
      {"floordiv(4*x, 4)", "x"},
      {"mod(4*x, 2)", "0"},
      {"floordiv(N*D, D)", "N"},
      {"mod(N*D + 3, D)", "mod(3, D)"},
      {"floordiv(N*D + 3, D)", "N + floordiv(3, D)"},
      {"floordiv(4*x + 8, 4)", "x + 2"},
      {"floordiv(4*x + 3, 4)", "x"},
      {"ceildiv(4*x + 3, 4)", "x + 1"},
      {"ceildiv(N*D + 1, D)", "N + 1"},
      {"floordiv(N*M, N)", "M"},
      {"floordiv(2*N + 2, N + 1)", "2"},
      {"mod(2*N + 2, N + 1)", "0"},
      {"floordiv(N, 0)", "floordiv(N, 0)"},  // kept: evaluation reports it
  });
}

TEST(Simplify, CommonFactorsAndCoefficients) {
  check_table({
      {"floordiv(2*x, 4)", "floordiv(x, 2)"},
      {"ceildiv(6*x + 3, 9)", "ceildiv(2*x + 1, 3)"},
      {"mod(6*N, 4)", "2*mod(N, 2)"},
      {"floordiv(N*x, N*D)", "floordiv(x, D)"},
      {"mod(N + 5, 4)", "mod(N + 1, 4)"},
      {"mod(N - 1, 4)", "mod(N - 1, 4)"},
      {"floordiv(N + 3, 2)", "floordiv(N + 3, 2)"},
      {"floordiv(N, -2)", "floordiv(-N, 2)"},
      {"mod(N, -2)", "-mod(-N, 2)"},
  });
}

TEST(Simplify, RangesAndNesting) {
  check_table({
      {"floordiv(mod(x, 4), 4)", "0"},
      {"mod(mod(x, 4), 4)", "mod(x, 4)"},
      {"mod(mod(x, 8), 4)", "mod(x, 4)"},
      {"mod(mod(x, 4), 8)", "mod(x, 4)"},
      {"mod(mod(x, N), N)", "mod(x, N)"},
      {"floordiv(floordiv(x, 2), 3)", "floordiv(x, 6)"},
      {"ceildiv(ceildiv(x, 2), 3)", "ceildiv(x, 6)"},
      {"floordiv(N, N + 1)", "0"},
      {"mod(N, N + 1)", "N"},
      {"ceildiv(N, N + 1)", "1"},
      {"floordiv(mod(x, 4) + 4, 4)", "1"},
      {"mod(mod(x, 4) + 4, 4)", "mod(x, 4)"},
      {"ceildiv(mod(x, 4) + 1, 4)", "1"},
  });
}

TEST(Simplify, MinMax) {
  check_table({
      {"min(a, a)", "a"},
      {"min(b, a)", "min(a, b)"},
      {"max(b, a)", "max(a, b)"},
      {"min(N, N + 1)", "N"},
      {"max(N, N + 1)", "N + 1"},
      {"max(N, 1)", "N"},
      {"min(N, 1)", "1"},
      {"min(N, 0)", "0"},
      {"max(N, N*M)", "M*N"},
      {"min(min(a, b), a)", "min(a, b)"},
      {"min(c, min(b, a))", "min(a, min(b, c))"},
      {"min(min(a, c), b)", "min(a, min(b, c))"},
      {"max(max(a, 3), 5)", "max(5, a)"},
      {"min(floordiv(N, 2), N)", "floordiv(N, 2)"},
      {"max(mod(x, 4), 3)", "3"},
  });
}

TEST(Simplify, ConstantOverflowIsAUserError) {
  Expr big = INT64_MAX;
  EXPECT_THROW(big + 1, UserError);
  EXPECT_THROW(big * 2, UserError);
  EXPECT_THROW(-Expr(INT64_MIN), UserError);
  EXPECT_THROW(floordiv(Expr(INT64_MIN), -1), UserError);
  EXPECT_EQ(mod(Expr(INT64_MIN), -1), Expr(0));
  Expr x = Expr::symbol("x");
  EXPECT_THROW(big * x + big * x, UserError);
}

TEST(Substitute, RecanonicalizesAndCollects) {
  Expr e = parse_expr("N*N + floordiv(N, M)");
  Expr r = substitute(e, {{"N", parse_expr("M + 1")}});
  EXPECT_EQ(r.to_string(), "M*M + 2*M + floordiv(1, M) + 2");
  EXPECT_EQ(substitute(parse_expr("floordiv(N, M)"), {{"M", Expr::symbol("N")}}), Expr(1));
  EXPECT_EQ(substitute(parse_expr("min(N, M)"), {{"N", Expr(7)}, {"M", Expr(3)}}), Expr(3));
  EXPECT_EQ(substitute(e, {{"K", Expr(2)}}), e);
  std::set<std::string> symbols;
  collect_symbols(parse_expr("max(A, floordiv(B*C, 4)) + 2"), symbols);
  EXPECT_EQ(symbols, (std::set<std::string>{"A", "B", "C"}));
}

}  // namespace simplify_test_local
}  // namespace autofuse::sym
