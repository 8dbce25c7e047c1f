// Rows in groups (row_groups.cpp): the unsplit rows of a row-layout
// reduction whose rows may be short run each pass over 8 rows before the
// next pass; medium rows of kernels with long loop bodies over 4 (65-256
// elements) or 2 (257-1024). Against the reference: softmax, a layernorm with its mean as a
// second output (a row-level store) over two row axes, a one-pass max, on
// f32, f16 and bf16; row counts below, at and around the group sizes (the
// rest runs row by row), lengths on both sides of the 64- and 1024-element
// limits, uneven block splits, NaN and infinities. And where the code has
// groups.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/random.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace row_groups_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kGroups = "rows in groups of 8";
const std::string kFours = "rows in groups of 4";
const std::string kPairs = "rows in groups of 2";

std::string layernorm_text(const std::string& dtype, const std::string& d) {
  return fmt::format("graph ln(x: {0}[A, N, {1}], gamma: {0}[{1}]) {{\n", dtype, d) +
         normalized_text(dtype, "x", 2) + "  y = mul(xn, gamma)\n  return y, mean\n}\n";
}

std::string max_text(const std::string& dtype, const std::string& d) {
  return fmt::format(R"(graph mx(x: {0}[N, {1}]) {{
  t = mul(x, x)
  s = reduce_max(t, axes=[1])
  return s
}})",
                     dtype, d);
}

/// softmax(x) * tanh(x): a long loop body (at least kMinMediumGroupOps vector
/// instructions per vector in f32 too) that stores f32 along the row.
std::string tanh_softmax_text(const std::string& dtype, const std::string& d) {
  std::string text = softmax_text(dtype, d);
  const std::string out = "  y = div(e, s)\n";
  const size_t at = text.find(out);
  EXPECT_NE(at, std::string::npos) << text;
  if (at == std::string::npos) return text;
  return text.replace(at, out.size(), "  p = div(e, s)\n  t = tanh(x)\n  y = mul(p, t)\n");
}

/// Gathered rows (two embedding lookups, added) normalized, then an exp:
/// medium rows in pairs (bf16: a long loop body), each row's table offsets
/// in every block.
std::string embed_norm_text(const std::string& dtype) {
  return fmt::format(R"(graph embed(t: {0}[V, D], ids: i64[N], u: {0}[V, D], jds: i64[N]) {{
  g = gather(t, ids, axis=0)
  h = gather(u, jds, axis=0)
  e = add(g, h)
)",
                     dtype) +
         normalized_text(dtype, "e", 1) + "  y = exp(xn)\n  return y\n}\n";
}

std::vector<sym::Binding> shapes(bool three_d) {
  std::vector<sym::Binding> out;
  for (int64_t n : {1, 7, 8, 9, 17, 37}) {
    for (int64_t d : {1, 3, 16, 17, 64, 65, 100, 256, 257, 384, 1024, 1025}) {
      sym::Binding b = {{"N", n}, {"D", d}};
      if (three_d) b["A"] = n % 3 + 1;
      out.push_back(b);
    }
  }
  return out;
}

double tol(const std::string& dtype) {
  return dtype == "bf16" ? 3e-2 : dtype == "f16" ? 4e-3 : 1e-5;
}

/// x with a NaN in row 1, +inf in row 3 and -inf in row 9 (when they exist).
std::vector<HostTensor> with_specials(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 11);
  HostTensor& x = inputs[0];
  const int64_t d = binding.at("D");
  set_row_elements(x, d, d / 2, {{1, NAN}, {3, INFINITY}, {9, -INFINITY}});
  return inputs;
}

TEST(RowGroups, MatchTheReference) {
  std::vector<GraphCase> cases;
  for (const char* dt : {"f32", "f16", "bf16"}) {
    cases.push_back({fmt::format("softmax {}", dt), parse_graph(softmax_text(dt, "D")),
                     shapes(false), tol(dt), 1e-4});
    // (16-bit layernorms: x - mean cancels, so the reference's rounding of
    // every op shows in absolute terms, as in the row buffer tests.)
    cases.push_back({fmt::format("layernorm {}", dt), parse_graph(layernorm_text(dt, "D")),
                     shapes(true), tol(dt), std::string(dt) == "f32" ? 1e-4 : tol(dt)});
    cases.push_back(
        {fmt::format("max {}", dt), parse_graph(max_text(dt, "D")), shapes(false), tol(dt), 1e-4});
  }
  for (const char* dt : {"f32", "bf16"})
    cases.push_back({fmt::format("tanh softmax {}", dt), parse_graph(tanh_softmax_text(dt, "D")),
                     shapes(false), tol(dt), 1e-4});
  for (const char* dt : {"f32", "bf16"}) {
    GraphCase softmax{fmt::format("softmax {} with NaN and infinities", dt),
                      parse_graph(softmax_text(dt, "D")), shapes(false), tol(dt), 1e-4};
    softmax.make_inputs = with_specials;
    cases.push_back(std::move(softmax));
    GraphCase max{fmt::format("max {} with NaN and infinities", dt), parse_graph(max_text(dt, "D")),
                  shapes(false), tol(dt), 1e-4};
    max.make_inputs = with_specials;
    cases.push_back(std::move(max));
  }
  for (const char* dt : {"f32", "bf16"}) {
    std::vector<sym::Binding> rows;
    for (int64_t n : {1, 2, 5, 7, 8, 9})
      for (int64_t d : {16, 100, 256, 384, 1024, 1100})
        rows.push_back({{"N", n}, {"D", d}, {"V", 13}});
    cases.push_back({fmt::format("embedding norm {}", dt), parse_graph(embed_norm_text(dt)), rows,
                     tol(dt), tol(dt)});
  }
  const std::string code = check_split_cases(cases, /*expect_split=*/false);
  EXPECT_THAT(code, HasSubstr(kGroups));
  EXPECT_THAT(code, HasSubstr(kFours));
  EXPECT_THAT(code, HasSubstr(kPairs));
  EXPECT_THAT(code, HasSubstr("// this row's slice"));  // softmax's exp buffer
}

TEST(RowGroups, StaticShortRows) {
  std::vector<GraphCase> cases;
  const std::vector<sym::Binding> rows = {{{"N", 1}}, {{"N", 8}}, {{"N", 13}}, {{"N", 40}}};
  for (const char* dt : {"f32", "bf16"})
    for (const char* d : {"1", "16", "64"})
      cases.push_back({fmt::format("softmax {} D={}", dt, d), parse_graph(softmax_text(dt, d)),
                       rows, tol(dt), 1e-4});
  check_split_cases(cases, /*expect_split=*/false);
}

TEST(RowGroups, SourceStructure) {
  const auto source = kernel_code;
  // Rows that may be short: groups, behind the row length's check.
  const std::string symbolic = source(softmax_text("f32", "D"));
  EXPECT_THAT(symbolic, HasSubstr("if (n1 <= 64) {  // " + kGroups));
  EXPECT_THAT(symbolic, HasSubstr("for (; row_end - row >= 8; row += 8) {"));
  EXPECT_THAT(symbolic, HasSubstr("for (; row < row_end; ++row) {"));  // the rest, one by one
  EXPECT_THAT(symbolic, HasSubstr("gv"));                              // the max, across blocks
  EXPECT_THAT(source(softmax_text("bf16", "64")), HasSubstr(kGroups));
  // Medium rows in fours, then pairs, where the loop body is long (bf16
  // softmax: 43 vector instructions per vector; f32: 27, none).
  const std::string bf16_symbolic = source(softmax_text("bf16", "D"));
  // (One if-else chain: separate ifs slowed the later loops.)
  EXPECT_THAT(bf16_symbolic, HasSubstr("else if (n1 > 64 && n1 <= 256) {  // " + kFours));
  EXPECT_THAT(bf16_symbolic, HasSubstr("else if (n1 > 256 && n1 <= 1024) {  // " + kPairs));
  EXPECT_THAT(symbolic, Not(HasSubstr(kFours)));
  EXPECT_THAT(symbolic, Not(HasSubstr(kPairs)));
  const std::string fours = source(softmax_text("bf16", "200"));
  EXPECT_THAT(fours, HasSubstr(kFours));
  EXPECT_THAT(fours, HasSubstr("for (; row_end - row >= 4; row += 4) {"));
  EXPECT_THAT(fours, Not(HasSubstr(kPairs)));
  EXPECT_THAT(fours, Not(HasSubstr(kGroups)));
  const std::string medium = source(softmax_text("bf16", "384"));
  EXPECT_THAT(medium, HasSubstr(kPairs));
  EXPECT_THAT(medium, HasSubstr("for (; row_end - row >= 2; row += 2) {"));
  EXPECT_THAT(medium, Not(HasSubstr(kGroups)));
  EXPECT_THAT(medium, Not(HasSubstr(kFours)));
  EXPECT_THAT(source(softmax_text("bf16", "1025")), Not(HasSubstr(kPairs)));
  // Groups of 4 store at most 2 KiB along their rows: f32 rows up to 128.
  const std::string f32_long = source(tanh_softmax_text("f32", "D"));
  EXPECT_THAT(f32_long, HasSubstr("else if (n1 > 64 && n1 <= 128) {  // " + kFours));
  EXPECT_THAT(f32_long, HasSubstr("else if (n1 > 128 && n1 <= 1024) {  // " + kPairs));
  EXPECT_THAT(source(tanh_softmax_text("f32", "200")), Not(HasSubstr(kFours)));
  EXPECT_THAT(source(tanh_softmax_text("f32", "200")), HasSubstr(kPairs));
  // Rows longer than the limit, column reductions, gathers: none.
  EXPECT_THAT(source(softmax_text("f32", "65")), Not(HasSubstr(kGroups)));
  EXPECT_THAT(source(softmax_text("f32", "65")), Not(HasSubstr(kPairs)));
  // Gathered rows: medium ones in pairs (bf16), short ones not in groups.
  const std::string embed = source(embed_norm_text("bf16"));
  EXPECT_THAT(embed, HasSubstr(kPairs));
  EXPECT_THAT(embed, Not(HasSubstr(kGroups)));
  EXPECT_THAT(source(R"(graph g(x: f32[N, D]) {
  s = reduce_sum(x, axes=[0])
  return s
})"),
              Not(HasSubstr(kGroups)));
  EXPECT_THAT(source(R"(graph g(t: f32[V, D], ids: i64[N]) {
  e = gather(t, ids, axis=0)
  s = reduce_sum(e, axes=[1])
  return s
})"),
              Not(HasSubstr(kGroups)));
}

}  // namespace row_groups_test_local
}  // namespace autofuse::codegen_test
