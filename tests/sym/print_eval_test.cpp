// Printer, parser, C++ printer and evaluation.
#include <gtest/gtest.h>

#include "autofuse/error.h"
#include "autofuse/sym/expr.h"

namespace autofuse::sym {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace print_eval_test_local {

TEST(Print, ReadableSums) {
  struct Case {
    const char* input;
    const char* text;
  };
  for (const Case& c : std::vector<Case>{
           {"2*N*D + floordiv(N, 4) - 1", "2*D*N + floordiv(N, 4) - 1"},
           {"3 - N", "-N + 3"},
           {"-2*N - M*N", "-M*N - 2*N"},
           {"N - 1", "N - 1"},
           {"-5", "-5"},
           {"0", "0"},
           {"max(N, 8) - mod(M, 3)*2", "-2*mod(M, 3) + max(8, N)"},
           {"ceildiv(N - 1, 4)*ceildiv(N - 1, 4)", "ceildiv(N - 1, 4)*ceildiv(N - 1, 4)"},
           {"min(N*M, 2*K + 1)", "min(2*K + 1, M*N)"},
       }) {
    SCOPED_TRACE(c.input);
    Expr e = parse_expr(c.input);
    EXPECT_EQ(e.to_string(), c.text);
    EXPECT_EQ(parse_expr(e.to_string()), e);
  }
}

TEST(Print, ExtremeConstantsRoundTrip) {
  for (int64_t v : {INT64_MIN, INT64_MIN + 1, INT64_MAX, int64_t{0}, int64_t{-1}}) {
    Expr e(v);
    EXPECT_EQ(parse_expr(e.to_string()), e) << e.to_string();
  }
  Expr x = Expr::symbol("x");
  Expr e = Expr(INT64_MIN) * x + 1;
  EXPECT_EQ(e.to_string(), "(-9223372036854775807 - 1)*x + 1");
  EXPECT_EQ(parse_expr(e.to_string()), e);
}

TEST(Parse, GeneralInput) {
  EXPECT_EQ(parse_expr("(N + 1) * (D - 2)").to_string(), "D*N + D - 2*N - 2");
  EXPECT_EQ(parse_expr("  -N  ").to_string(), "-N");
  EXPECT_EQ(parse_expr("2*(N+1)").to_string(), "2*N + 2");
  EXPECT_EQ(parse_expr("floordiv(max(N, M) * 2, ceildiv(K, 3))").to_string(),
            "floordiv(2*max(M, N), ceildiv(K, 3))");
  EXPECT_EQ(parse_expr("batch_size_2*_x").to_string(), "_x*batch_size_2");
}

TEST(Parse, ErrorsCarryTheColumn) {
  struct Case {
    const char* text;
    int column;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"N +", 4, "expected an operand, found end of input"},
           {"3 $ 4", 3, "unexpected '$' after the expression"},
           {"min(N)", 6, "expected ',', found ')'"},
           {"(N", 3, "expected ')', found end of input"},
           {"N * * M", 5, "expected an operand, found '*'"},
           {"99999999999999999999", 1, "integer literal does not fit in int64"},
           {"floordiv N", 10, "expected '(', found 'N'"},
           {"", 1, "expected an operand, found end of input"},
       }) {
    SCOPED_TRACE(c.text);
    try {
      parse_expr(c.text);
      ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
      EXPECT_EQ(e.where().column, c.column);
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.message();
      EXPECT_NE(std::string(e.what()).find(c.text), std::string::npos) << e.what();
    }
  }
}

TEST(Symbol, NamesMustBeIdentifiers) {
  EXPECT_THROW(Expr::symbol(""), UserError);
  EXPECT_THROW(Expr::symbol("1N"), UserError);
  EXPECT_THROW(Expr::symbol("a-b"), UserError);
  EXPECT_THROW(Expr::symbol("min"), UserError);
  EXPECT_EQ(Expr::symbol("seq_len").symbol_name(), "seq_len");
  EXPECT_THROW(parse_expr("3").symbol_name(), InternalError);
}

std::string via_tiling_data(const std::string& name) {
  return "td->" + name;
}

TEST(ToCpp, CallsHelpersAndTypesConstants) {
  Expr e = parse_expr("2*N*D + floordiv(N, 4) - 1");
  EXPECT_EQ(to_cpp(e), "INT64_C(2)*D*N + af_floordiv(N, INT64_C(4)) - INT64_C(1)");
  EXPECT_EQ(to_cpp(e, via_tiling_data),
            "INT64_C(2)*td->D*td->N + af_floordiv(td->N, INT64_C(4)) - INT64_C(1)");
  EXPECT_EQ(to_cpp(parse_expr("min(ceildiv(N, 8), max(M, 2)) - mod(K, 3)")),
            "-af_mod(K, INT64_C(3)) + af_min(af_ceildiv(N, INT64_C(8)), af_max(INT64_C(2), M))");
  EXPECT_EQ(to_cpp(parse_expr("-N")), "-N");
  EXPECT_EQ(to_cpp(Expr(-7)), "INT64_C(-7)");
  EXPECT_EQ(to_cpp(Expr(INT64_MIN)), "INT64_MIN");
}

TEST(Evaluate, Values) {
  Binding b{{"N", 7}, {"M", 3}};
  struct Case {
    const char* text;
    int64_t value;
  };
  for (const Case& c : std::vector<Case>{
           {"N*M - 1", 20},
           {"floordiv(N, M)", 2},
           {"floordiv(-N, M)", -3},
           {"ceildiv(N, M)", 3},
           {"mod(-N, M)", 2},
           {"mod(N, -M)", -2},
           {"min(N, M) + max(N, M)", 10},
       }) {
    EXPECT_EQ(evaluate(parse_expr(c.text), b), c.value) << c.text;
    EXPECT_EQ(try_evaluate(parse_expr(c.text), b), c.value) << c.text;
  }
}

TEST(Evaluate, Errors) {
  auto message = [](const char* text, const Binding& b) -> std::string {
    try {
      evaluate(parse_expr(text), b);
    } catch (const UserError& e) {
      EXPECT_FALSE(try_evaluate(parse_expr(text), b).has_value());
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message("N + M", {{"M", 1}}), "symbol 'N' has no value");
  EXPECT_EQ(message("floordiv(N, M - 1)", {{"N", 4}, {"M", 1}}),
            "division by zero evaluating 'floordiv(N, M - 1)'");
  EXPECT_EQ(message("mod(N, 0)", {{"N", 4}}), "division by zero evaluating 'mod(N, 0)'");
  EXPECT_EQ(message("N*M", {{"N", INT64_MAX}, {"M", 2}}), "integer overflow evaluating 'M*N'");
  EXPECT_EQ(message("N + 1", {{"N", INT64_MAX}}), "integer overflow evaluating 'N + 1'");
  EXPECT_EQ(message("floordiv(-N - 1, M)", {{"N", INT64_MAX}, {"M", -1}}),
            "integer overflow evaluating 'floordiv(-N - 1, M)'");
  EXPECT_EQ(evaluate(parse_expr("mod(-N - 1, M)"), {{"N", INT64_MAX}, {"M", -1}}), 0);
}

}  // namespace print_eval_test_local
}  // namespace autofuse::sym
