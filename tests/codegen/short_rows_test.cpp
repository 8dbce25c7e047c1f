// Short rows (inner_loop.cpp, elementwise.cpp): loops that load or store
// 16-bit values get a 16-lane copy for rows shorter than 32 (g++ would run
// them scalar), behind a branch when the row length is symbolic and alone
// when it is a static length below 32; Elementwise kernels with short static
// rows run whole rows with a constant trip count. Both against the
// reference on every length around the lane counts, f32/f16/bf16, uneven
// block splits; and the shape of the generated code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace short_rows_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

std::string scale_text(const char* dtype, const char* d) {  // rows of d, read transposed
  return fmt::format(R"(graph scale_{0}(x: {0}[A, N, {1}]) {{
  half = constant(dtype={0}, value=0.5)
  t = transpose(x, perm=[1, 0, 2])
  y = mul(t, half)
  return y
}})",
                     dtype, d);
}

std::vector<sym::Binding> row_lengths() {
  std::vector<sym::Binding> out;
  for (int64_t d : {1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100})
    out.push_back({{"N", 5}, {"D", d}});
  return out;
}

double tol(const char* dtype) {
  return std::string(dtype) == "bf16" ? 3e-2 : std::string(dtype) == "f16" ? 4e-3 : 1e-5;
}

TEST(ShortRows, SymbolicRowsMatchTheReference) {
  std::vector<GraphCase> cases;
  for (const char* dt : {"f32", "f16", "bf16"}) {
    cases.push_back({fmt::format("softmax_{}", dt), parse_graph(softmax_text(dt, "D")),
                     row_lengths(), tol(dt), 1e-4});
    std::vector<sym::Binding> scale_shapes;
    for (const sym::Binding& b : row_lengths())
      scale_shapes.push_back({{"A", 3}, {"N", b.at("N")}, {"D", b.at("D")}});
    cases.push_back({fmt::format("scale_{}", dt), parse_graph(scale_text(dt, "D")), scale_shapes,
                     tol(dt), 1e-4});
  }
  const std::string code = check_cases(cases);
  // 16-bit rows get the branch; f32 rows do not.
  EXPECT_THAT(code, HasSubstr("a short row: 16 lanes"));
  EXPECT_THAT(code, HasSubstr("simdlen(16)"));
}

TEST(ShortRows, StaticRowsMatchTheReference) {
  std::vector<GraphCase> cases;
  const std::vector<sym::Binding> rows = {{{"N", 1}}, {{"N", 7}}, {{"N", 33}}, {{"N", 100}}};
  const std::vector<sym::Binding> tiles = {
      {{"A", 1}, {"N", 1}}, {{"A", 3}, {"N", 7}}, {{"A", 2}, {"N", 33}}, {{"A", 5}, {"N", 100}}};
  for (const char* dt : {"f32", "bf16"}) {
    for (const char* d : {"1", "16", "31", "64"}) {
      cases.push_back({fmt::format("softmax_{}_{}", dt, d), parse_graph(softmax_text(dt, d)), rows,
                       tol(dt), 1e-4});
      cases.push_back({fmt::format("scale_{}_{}", dt, d), parse_graph(scale_text(dt, d)), tiles,
                       tol(dt), 1e-4});
    }
  }
  const std::string code = check_cases(cases);
  EXPECT_THAT(code, HasSubstr("// whole rows"));
}

TEST(ShortRows, SourceStructure) {
  const auto source = [](const std::string& text) {
    std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(parse_graph(text))};
    return codegen::generate_cpu_module(kernels).code;
  };
  const auto kernel_part = [](const std::string& code) {  // after the prelude
    const size_t at = code.find("// ---- kernel ");
    EXPECT_NE(at, std::string::npos);
    return at == std::string::npos ? code : code.substr(at);
  };
  // Symbolic 16-bit rows: both loops behind a branch on the row length.
  const std::string bf16_symbolic = kernel_part(source(softmax_text("bf16", "D")));
  EXPECT_THAT(bf16_symbolic, HasSubstr("a short row: 16 lanes"));
  EXPECT_THAT(bf16_symbolic, HasSubstr("simdlen(16)"));
  // Static 16-bit rows below 32: only the 16-lane loop.
  const std::string bf16_16 = kernel_part(source(softmax_text("bf16", "16")));
  EXPECT_THAT(bf16_16, HasSubstr("simdlen(16)"));
  EXPECT_THAT(bf16_16, Not(HasSubstr("a short row")));
  // Static rows of 32 or more, and f32 rows: neither.
  EXPECT_THAT(kernel_part(source(softmax_text("bf16", "64"))), Not(HasSubstr("simdlen(16)")));
  EXPECT_THAT(kernel_part(source(softmax_text("f32", "D"))), Not(HasSubstr("simdlen(16)")));
  // Elementwise: whole rows of a short static length run in a loop of
  // their own with constant bounds and stepping bases. Rows of whole cache
  // lines (64 f32) take it under every key, streaming under key 1 where
  // the first row is aligned (nt_rows); other rows (100 f32) not under the
  // streaming key, which keeps one whole row per segment.
  const std::string scale64 = kernel_part(source(scale_text("f32", "64")));
  EXPECT_THAT(scale64, HasSubstr("if (c == 0 && end - f >= ninner) {  // whole rows"));
  EXPECT_THAT(scale64, HasSubstr("for (int64_t w = 0; w < whole; ++w) {"));
  EXPECT_THAT(scale64, HasSubstr("} else { b2 += INT64_C(64)*s_N; b5 += INT64_C(64); }"));
  EXPECT_THAT(scale64, HasSubstr("if (nt_rows) {  // streaming whole lines"));
  // The ordinary copy: none of the prefetching copy's per-row tests.
  EXPECT_THAT(scale64,
              HasSubstr("if (td->header.tiling_key == 0) {\n"
                        "          for (int64_t w = 0; w < whole; ++w) {\n#pragma omp simd"));
  EXPECT_THAT(scale64, Not(HasSubstr("// a whole row, streaming")));
  const std::string scale100 = kernel_part(source(scale_text("f32", "100")));
  EXPECT_THAT(scale100, HasSubstr("if (c == 0 && end - f >= ninner && td->header.tiling_key != 1) "
                                  "{  // whole rows"));
  EXPECT_THAT(scale100, HasSubstr("} else { b2 += INT64_C(100)*s_N; b5 += INT64_C(100); }"));
  EXPECT_THAT(scale100, HasSubstr("if (c == 0 && end - f >= ninner) {  // a whole row, streaming"));
  EXPECT_THAT(scale100, HasSubstr("const int64_t nt_to = nt_part == 0 ? nt_lo : n2;"));
  EXPECT_THAT(scale100, Not(HasSubstr("nt_rows")));
  EXPECT_THAT(kernel_part(source(scale_text("f32", "D"))), Not(HasSubstr("whole row")));
  EXPECT_THAT(kernel_part(source(scale_text("f32", "1000"))), Not(HasSubstr("whole row")));
}

}  // namespace short_rows_test_local
}  // namespace autofuse::codegen_test
