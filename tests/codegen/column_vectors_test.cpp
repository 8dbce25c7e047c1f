// The column layout's sums as 16-lane vectors with their sums in registers
// (column_vectors.cpp): plain column sums, sums of products with a tile
// operand, and centered moments (both of their loops), f32, bf16 and f16, on
// tiles around the strips of 128 lanes and the 16-lane tail, rows around
// the chunk of 64; each also split across blocks and tiles
// (reduction_test_util.h), including machines whose tiny caches make the
// data "from memory" (prefetches; bf16 keeps the loop there, f16 does
// not). Bodies the vector form cannot take keep the loop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
namespace column_vectors_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<sym::Binding> strip_shapes() {
  std::vector<sym::Binding> shapes;
  for (const auto& [n, d] : std::vector<std::pair<int64_t, int64_t>>{{1, 1},
                                                                     {2, 15},
                                                                     {63, 16},
                                                                     {64, 17},
                                                                     {65, 127},
                                                                     {130, 128},
                                                                     {7, 129},
                                                                     {129, 255},
                                                                     {200, 256},
                                                                     {31, 257},
                                                                     {1000, 300},
                                                                     {97, 1000},
                                                                     {3, 2049}})
    shapes.push_back({{"N", n}, {"D", d}});
  return shapes;
}

std::string sum_text(const std::string& dtype) {
  return "graph col_sum(x: " + dtype +
         "[N, D]) {\n  s = reduce_sum(x, axes=[0], keepdims=true)\n  return s\n}";
}

std::string weighted_text(const std::string& dtype) {
  return "graph col_weighted(x: " + dtype + "[N, D], w: " + dtype +
         "[1, D]) {\n  p = mul(x, w)\n  h = constant(dtype=" + dtype +
         ", value=0.5)\n  q = add(p, h)\n  s = reduce_mean(q, axes=[0], keepdims=false)\n  t = "
         "reduce_sum(x, axes=[0], keepdims=false)\n  return s, t\n}";
}

// Masked mean pooling over a sequence: a per-row weight (level 1, computed
// once per reduced row in the loop, in the lambda in the vector form).
std::string pool_text(const std::string& dtype) {
  return "graph col_pool(x: " + dtype + "[B, N, D], m: " + dtype +
         "[B, N, 1]) {\n  p = mul(x, m)\n  s = reduce_sum(p, axes=[1], keepdims=false)\n  "
         "return s\n}";
}

// The attention mask as ONNX gives it: int64, cast to float per row.
const char* kIntMaskPool = R"(graph col_pool_i64(x: f32[B, N, D], m: i64[B, N, 1]) {
  mf = cast(m, to=f32)
  p = mul(x, mf)
  s = reduce_sum(p, axes=[1], keepdims=false)
  return s
})";

const char* kRowValueSum = R"(graph col_row_value(x: f32[N, D], w: f32[N, 1]) {
  b = broadcast_to(w, shape=[N, D])
  c = constant(dtype=f32, value=0.5)
  s = reduce_sum(b, axes=[0], keepdims=false)
  p = mul(x, c)
  q = add(p, w)
  t = reduce_sum(q, axes=[0], keepdims=false)
  return s, t
})";

std::vector<sym::Binding> pool_shapes() {
  std::vector<sym::Binding> shapes;
  for (const sym::Binding& nd : strip_shapes())
    for (int64_t b : {1, 3})
      shapes.push_back({{"B", b}, {"N", nd.at("N")}, {"D", nd.at("D")}});
  return shapes;
}

// Batch-norm statistics. With y, which reads x - mean again, the variance
// is a centered moment of the mean's pass (its own loop per block); without
// it, a pass of its own. (bf16 without y: the reference rounds the mean to
// bf16 before x - mean, the kernel does not, and y divides the difference
// by the deviation of as few as 1-3 rows.)
std::string stats_text(const std::string& dtype, bool with_y, const std::string& d = "D") {
  std::string text = "graph col_stats(x: " + dtype + "[N, " + d +
                     "]) {\n  m = reduce_mean(x, axes=[0], keepdims=true)\n  xc = sub(x, "
                     "m)\n  sq = mul(xc, xc)\n  v = reduce_mean(sq, axes=[0], keepdims=true)\n";
  if (!with_y) return text + "  return m, v\n}";
  return text + "  e = constant(dtype=" + dtype +
         ", value=1e-5)\n  ve = add(v, e)\n  r = rsqrt(ve)\n  y = mul(xc, r)\n  return y, m, "
         "v\n}";
}

TEST(ColumnVectors, SumsAndMomentsMatchTheReference) {
  std::vector<GraphCase> cases;
  for (const std::string dtype : {"f32", "bf16", "f16"}) {
    // bf16 outputs round once (the sums of values in [-1, 1) stay small);
    // f16 (finer) within bf16's tolerances.
    const double tol = dtype == "f32" ? 2e-5 : 1.6e-2;
    cases.push_back({"sum_" + dtype, parse_graph(sum_text(dtype)), strip_shapes(), tol, tol});
    cases.push_back(
        {"weighted_" + dtype, parse_graph(weighted_text(dtype)), strip_shapes(), tol, tol});
    cases.push_back(
        {"stats_" + dtype, parse_graph(stats_text(dtype, false)), strip_shapes(), tol, tol});
    // bf16: the reference rounds each product to bf16 before the sum, the
    // kernel does not: up to ~1000 roundings of 2^-9 apart.
    const double pool_atol = dtype == "f32" ? tol : 6e-2;
    cases.push_back(
        {"pool_" + dtype, parse_graph(pool_text(dtype)), pool_shapes(), tol, pool_atol});
  }
  cases.push_back({"pool_i64_mask", parse_graph(kIntMaskPool), pool_shapes(), 1e-4, 1e-4});
  // A per-row value summed as it is (a scalar added to every lane: the
  // AVX2 lane pairs' `+=` with a float).
  cases.push_back({"row_value_sum", parse_graph(kRowValueSum), strip_shapes(), 2e-5, 2e-5});
  // Centered moments need a literal tile axis of 64 or more
  // (schedule/centered_moments.cpp); rows around the blocks of 64 (the test
  // machines with a 4 KiB L2) and 256.
  for (const char* d : {"64", "129", "300"}) {
    std::vector<sym::Binding> rows;
    for (int64_t n : {1, 2, 63, 64, 65, 200, 1000, 3001})
      rows.push_back({{"N", n}});
    cases.push_back(
        {std::string("moments_") + d, parse_graph(stats_text("f32", true, d)), rows, 1e-4, 1e-4});
  }
  const std::string code = check_split_cases(cases, /*expect_split=*/false);
  // One sum per loop, two (products, two sums) and a moment's two sums.
  EXPECT_THAT(code, HasSubstr("af_column_rows<1>(sums_, t0, t1, r_, re_, lanes_);"));
  EXPECT_THAT(code, HasSubstr("af_column_rows<2>(sums_, t0, t1, r_, re_, lanes_);"));
  EXPECT_THAT(code, HasSubstr("(64 - block_rows)"));  // the moment's own loop
  EXPECT_THAT(code, HasSubstr("af_load16_bf16("));
  EXPECT_THAT(code, HasSubstr("af_load16_f16("));
  EXPECT_THAT(code, HasSubstr("(tile)\n"));  // the moment's center, a tile array
  // bf16 data from memory keeps the loop (its rows whole); the per-row weight.
  EXPECT_THAT(code, HasSubstr("if (fold == 1 && pf_rows == 0) {"));
  EXPECT_THAT(code, HasSubstr("  // m_load\n            af_f32x16 v1; af_load16(&v1, "));
  EXPECT_THAT(code, HasSubstr("  // mf\n            af_f32x16 v1; af_load16(&v1, "));
}

TEST(ColumnVectors, OtherBodiesKeepTheLoop) {
  // exp is not vector arithmetic here; a max is not a sum: both keep the
  // scalar loop, and still match the reference.
  std::vector<GraphCase> cases;
  cases.push_back({"col_exp", parse_graph(R"(graph col_exp(x: f32[N, D]) {
  e = exp(x)
  s = reduce_sum(e, axes=[0], keepdims=true)
  return s
})"),
                   strip_shapes(), 2e-5, 2e-5});
  cases.push_back({"col_max", parse_graph(R"(graph col_max(x: f32[N, D]) {
  s = reduce_max(x, axes=[0], keepdims=true)
  return s
})"),
                   strip_shapes(), 0, 0});
  EXPECT_THAT(check_split_cases(cases, /*expect_split=*/false), Not(HasSubstr("af_column_rows<")));
}

}  // namespace column_vectors_test_local
}  // namespace autofuse::codegen_test
