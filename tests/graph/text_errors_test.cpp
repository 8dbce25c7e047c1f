// Malformed `.af` text: every input must give a UserError whose message says
// where (file:line:col) and what was expected; random mutations of a valid
// graph must never produce any other kind of failure.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "graph/text_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace text_errors_test_local {

struct ErrorCase {
  const char* label;
  std::string text;
  std::string expected;  // substring of what()
};

// Wraps statements in a graph with inputs x: f32[N, D] and b: i32[N, D];
// the statements start on line 2, column 3.
std::string body(const std::string& statements, const std::string& ret = "y") {
  return "graph g(x: f32[N, D], b: i32[N, D]) {\n" + statements + "\n  return " + ret + "\n}\n";
}

std::vector<ErrorCase> error_cases() {
  return {
      {"empty file", "", "t.af:1:1: expected 'graph' but found end of input"},
      {"only a comment", "# nothing here\n", "t.af:2:1: expected 'graph' but found end of input"},
      {"no graph name", "graph", "t.af:1:6: expected a graph name but found end of input"},
      {"param without colon", "graph g(x f32[N]) {}", "t.af:1:11: expected ':' but found 'f32'"},
      {"unknown param dtype", "graph g(x: f33[N]) { return x }", "t.af:1:12: unknown dtype 'f33'"},
      {"unclosed shape", "graph g(x: f32[N) { return x }",
       "t.af:1:17: expected ',' or ']' but found ')'"},
      {"bad dim", "graph g(x: f32[N, ]) { return x }",
       "t.af:1:19: expected a dim expression but found ']'"},
      {"unknown dim function", "graph g(x: f32[foo(N, 2)]) { return x }",
       "t.af:1:16: unknown function 'foo'"},
      {"unknown op", body("  y = foo(x)"), "t.af:2:7: unknown op 'foo'"},
      {"unknown value", body("  y = add(x, z)"), "t.af:2:14: unknown value 'z'"},
      {"duplicate value", body("  x = neg(x)", "x"),
       "t.af:2:3: duplicate value name 'x' (first defined at 1:9)"},
      {"duplicate target", body("  y, y = split(x, axis=1, sizes=[1, 1])"),
       "t.af:2:6: duplicate value name 'y'"},
      {"unknown attribute", body("  y = reduce_sum(x, axis=[1])"),
       "t.af:2:21: unknown attribute 'axis' for reduce_sum (it takes axes, keepdims)"},
      {"attribute on op without attributes", body("  y = neg(x, axes=[1])"),
       "t.af:2:14: unknown attribute 'axes': neg takes no attributes"},
      {"duplicate attribute", body("  y = reduce_sum(x, axes=[1], axes=[0])"),
       "t.af:2:31: duplicate attribute 'axes'"},
      {"missing required attribute", body("  y = reduce_sum(x)"),
       "t.af:2:7: missing required attribute 'axes' for reduce_sum"},
      {"float axes", body("  y = reduce_sum(x, axes=1.5)"),
       "t.af:2:26: attribute 'axes' of reduce_sum expects a list of integers but found '1.5'"},
      {"float in axes list", body("  y = reduce_sum(x, axes=[0, 1.5])"),
       "t.af:2:30: attribute 'axes' of reduce_sum expects a list of integers but found '1.5'"},
      {"integer keepdims", body("  y = reduce_sum(x, axes=[1], keepdims=1)"),
       "t.af:2:40: attribute 'keepdims' of reduce_sum expects true or false but found '1'"},
      {"unknown cast dtype", body("  y = cast(x, to=f33)"), "t.af:2:18: unknown dtype 'f33'"},
      {"dtype that is a keyword", body("  y = cast(x, to=true)"),
       "t.af:2:18: attribute 'to' of cast expects a dtype but found 'true'"},
      {"symbolic axis", body("  y = concat(x, x, axis=N)"),
       "t.af:2:25: attribute 'axis' of concat expects an integer but found 'N'"},
      {"float dim", body("  y = reshape(x, shape=[N, 1.5])"),
       "t.af:2:28: attribute 'shape' of reshape expects a list of dim expressions but found '1.5'"},
      {"end in starts", body("  y = slice(x, axes=[1], starts=[end], ends=[end])"),
       "t.af:2:34: attribute 'starts' of slice expects a list of integers but found 'end'"},
      {"nested constant value", body("  y = constant(dtype=f32, shape=[2], value=[1, [2]])"),
       "t.af:2:48: attribute 'value' of constant expects a number or a list of numbers but found a "
       "list"},
      {"declared type differs", body("  y: f32[N] = neg(x)"),
       "t.af:2:6: node 'y' (neg): declared f32[N] but inferred f32[N, D]"},
      {"declared dtype differs", body("  y: f16[N, D] = neg(x)"),
       "declared f16[N, D] but inferred f32[N, D]"},
      {"wrong number of targets", body("  y = split(x, axis=1, sizes=[1, D - 1])"),
       "t.af:2:3: split produces 2 outputs but 1 target is given"},
      {"input after attribute", body("  y = concat(x, axis=0, x)"),
       "t.af:2:25: inputs must come before attributes"},
      {"verification error from the graph", body("  y = add(x, b)"), "t.af:2:3: node 'y' (add)"},
      {"missing return", "graph g(x: f32[N]) {\n  y = neg(x)\n}\n",
       "t.af:3:1: missing 'return' statement before '}'"},
      {"empty return", "graph g(x: f32[N]) {\n  return\n}\n",
       "t.af:3:1: expected a value name but found '}'"},
      {"unknown returned value", "graph g(x: f32[N]) {\n  return z\n}\n",
       "t.af:2:10: unknown value 'z'"},
      {"value returned twice", "graph g(x: f32[N]) {\n  return x, x\n}\n",
       "t.af:2:13: value 'x' is returned twice"},
      {"trailing junk", "graph g(x: f32[N]) {\n  return x\n}\nextra\n",
       "t.af:4:1: expected end of input after the graph but found 'extra'"},
      {"second closing brace", "graph g(x: f32[N]) { return x } }",
       "t.af:1:33: expected end of input after the graph but found '}'"},
      {"unexpected character", body("  y = neg(x) @"), "t.af:2:14: unexpected character '@'"},
      {"quote character", body("  y = neg(x')"), "t.af:2:12: unexpected character \"'\""},
      {"binary junk", body("  y = neg(x)\x01"), "t.af:2:13: unexpected character '\\x01'"},
      {"truncated statement", "graph g(x: f32[N]) {\n  y = neg(",
       "t.af:2:11: expected an input name or attribute but found end of input"},
      {"truncated attribute", "graph g(x: f32[N]) {\n  y = reduce_sum(x, axes=",
       "t.af:2:26: expected an attribute value but found end of input"},
      {"missing equals", body("  y neg(x)"), "t.af:2:5: expected ':', ',' or '=' but found 'neg'"},
      {"integer overflow in a dim", "graph g(x: f32[99999999999999999999]) { return x }",
       "t.af:1:16: integer literal 99999999999999999999 is out of range"},
      {"integer overflow in an attribute", body("  y = reduce_sum(x, axes=[9223372036854775808])"),
       "integer literal 9223372036854775808 is out of range"},
      {"float overflow", body("  y = constant(dtype=f32, value=1e999)"),
       "t.af:2:33: float literal 1e999 is out of range"},
      {"deeply nested list", body("  y = constant(dtype=f32, value=" + std::string(500, '[')),
       "nested too deeply"},
      {"deeply nested dim",
       "graph g(x: f32[" + std::string(500, '(') + "N" + std::string(500, ')') + "]) { return x }",
       "nested too deeply"},
      {"deep unary minus", "graph g(x: f32[" + std::string(500, '-') + "N]) { return x }",
       "nested too deeply"},
      {"return followed by a brace", "graph g(x: f32[N]) {\n  return }",
       "t.af:2:10: expected a value name but found '}'"},
  };
}

TEST(TextErrors, EveryMalformedInputGivesALocatedUserError) {
  std::vector<ErrorCase> cases = error_cases();
  EXPECT_GE(cases.size(), 25u);
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.label);
    try {
      parse_graph(c.text, "t.af");
      ADD_FAILURE() << "parsed without error:\n" << c.text;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos)
          << "message: " << e.what() << "\nexpected to contain: " << c.expected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a UserError: " << e.what();
    }
  }
}

TEST(TextErrors, UnknownOpListsNothingElse) {
  try {
    parse_graph(body("  y = frobnicate(x)"));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "unknown op 'frobnicate'");
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 7);
  }
}

TEST(TextErrors, InMemoryTextIsLabelledInput) {
  try {
    parse_graph("graph g() { return }");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "<input>:1:20: expected a value name but found '}'");
  }
}

TEST(TextErrors, LimitsThatAreFine) {
  // INT64_MIN is writable; a correct declared type is accepted.
  Graph g =
      parse_graph(body("  s = slice(x, axes=[1], starts=[-9223372036854775808], ends=[end])\n"
                       "  y: f32[N, D] = neg(x)",
                       "y, s"));
  EXPECT_EQ(std::get<SliceAttrs>(g.nodes()[0].attrs).starts[0],
            std::numeric_limits<int64_t>::min());
  testing::expect_round_trip(g);
}

// A valid graph touching most of the grammar, mutated at random.
constexpr const char* kFuzzSeed = R"(# fuzz seed
graph fz(x: f32[N, 2*D], idx: i64[K], c: bool[N, 1]) {
  a, b = split(x, axis=1, sizes=[D, D])
  m: f32[N, 1] = reduce_max(a, axes=[-1], keepdims=true)
  s = sub(a, m)
  e = exp(s)
  k = constant(dtype=f32, shape=[2], value=[1.5, -inf])
  h = constant(dtype=f32, value=1e-5)
  w = where(c, e, h)
  r = slice(w, axes=[1], starts=[-1], ends=[end], steps=[-1])
  g = gather(b, idx, axis=0)
  t = transpose(b, perm=[1, 0])
  q = reshape(t, shape=[D*N])
  i = iota(dtype=i32, shape=[floordiv(N, 2) + 1, 3], axis=0)
  return r, g, q, i, k
}
)";

TEST(TextErrors, MutationFuzzOnlyEverThrowsUserError) {
  ASSERT_NO_THROW(parse_graph(kFuzzSeed));
  const std::string alphabet =
      "abcdefgijklmnopqrstuvwxyzNDK_0123456789()[]{},:=+-*.#\n \t\"'@!\x7f";
  std::mt19937 rng(12345);
  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string text = kFuzzSeed;
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations && !text.empty(); ++m) {
      const size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0:  // delete a run
          text.erase(at, 1 + rng() % 4);
          break;
        case 1:  // duplicate a run
          text.insert(at, text.substr(at, 1 + rng() % 8));
          break;
        case 2:  // replace a character
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        default:  // truncate
          text.resize(at);
          break;
      }
    }
    try {
      Graph g = parse_graph(text, "fuzz.af");
      ++parsed;
      // Whatever parses must print canonically.
      const std::string printed = print_graph(g);
      EXPECT_EQ(print_graph(parse_graph(printed)), printed) << "mutant:\n" << text;
    } catch (const UserError& e) {
      ++rejected;
      EXPECT_GT(e.where().line, 0) << "error without a line: " << e.what() << "\nmutant:\n" << text;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a UserError: " << e.what() << "\nmutant:\n" << text;
    }
  }
  // Both outcomes must actually occur, or the mutator is not exercising much.
  EXPECT_GT(parsed, 20);
  EXPECT_GT(rejected, 1000);
}

}  // namespace text_errors_test_local
}  // namespace autofuse
