// Gathers of several dims (a chain of gathers over one buffer: a constant
// Pad of several axes, index tables per axis): each gathered dim is checked
// on its own, hoisted to the level where its index is fixed (gather.cpp) or
// per element, and reports its own af_status::which. Each case runs every
// way check_asc_cases knows (block splits, tiling keys, phases) against the
// reference; the elementwise case has a twin whose per-row index is a
// stride-0 Load (checked per element), equal bit for bit.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asc_case_util.h"
#include "autofuse/graph/builder.h"
#include "autofuse/ref/random.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace gather_chain_codegen_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

// y[n, p, q] = x[n, i[p], j[q]] + w[n, p, q]: i fixed per row (hoisted), j
// along the vector axis (checked per element).
AscCase pad2(DType table, DType index) {
  GraphBuilder b("pad2");
  Tensor x = b.input("x", table, {S("N"), S("B"), S("C")});
  Tensor i = b.input("i", DType::i64, {S("P")});
  Tensor j = b.input("j", index, {S("Q")});
  Tensor w = b.input("w", table, {S("N"), S("P"), S("Q")});
  Tensor g = b.gather(b.gather(x, i, 1, "g1"), j, 2, "g2");
  const char* asc = R"(kernel pad2 axes(z0: N, z1: P, z2: Q) @IO {
  %0 x = data(arg=0) : DT repeats[1, 1, 1]
  %1 i = data(arg=1) : i64 repeats[1, P, 1]
  %2 i_load = load(%1) : i64 repeats[1, P, 1] strides[0, 1, 0] offset 0
  %3 j = data(arg=2) : IT repeats[1, 1, Q]
  %4 j_load = load(%3) : IT repeats[1, 1, Q] strides[0, 0, 1] offset 0
  %5 i_b = broadcast(%2) : i64 repeats[N, P, Q]
  %6 j_b = broadcast(%4) : IT repeats[N, P, Q]
  %7 g2 = gather(%0, %5, %6, stride=C, size=B, name=g1, stride=1, size=C) : DT repeats[N, P, Q] strides[B*C, 0, 0] offset 0
  %8 w = data(arg=3) : DT repeats[N, P, Q]
  %9 w_load = load(%8) : DT repeats[N, P, Q] strides[P*Q, Q, 1] offset 0
  %10 y = add(%7, %9) : DT repeats[N, P, Q]
  %11 y_store = store(%10) : DT repeats[N, P, Q] strides[P*Q, Q, 1] offset 0
  %12 y_out = output(%11, arg=0) : DT repeats[N, P, Q]
}
)";
  AscCase c{fmt::format("pad2 {} by {}", dtype_name(table), dtype_name(index)),
            std::move(b).build({b.add(g, w, "y")}),
            typed(asc, table, index),
            {{{"N", 1}, {"B", 1}, {"C", 1}, {"P", 1}, {"Q", 1}},
             {{"N", 2}, {"B", 3}, {"C", 5}, {"P", 7}, {"Q", 11}},
             {{"N", 3}, {"B", 13}, {"C", 2}, {"P", 5}, {"Q", 131}},
             {{"N", 1}, {"B", 7}, {"C", 97}, {"P", 3}, {"Q", 1031}},
             {{"N", 17}, {"B", 2}, {"C", 64}, {"P", 31}, {"Q", 67}}}};
  c.rtol = c.atol = tolerance(table);
  return c;
}
const char* kPad2RowIndex = "%5 i_b = broadcast(%2) : i64 repeats[N, P, Q]";
const char* kPad2RowIndexPerElement =
    "%5 i_b = load(%1) : i64 repeats[N, P, Q] strides[0, 1, 0] offset 0";

// d = g - mean_r g, g[p, q, r] = x[i[p], j[q], k[r]] (row layout: i and j
// checked once per row, k per element in each pass).
AscCase pad3_norm(DType table) {
  GraphBuilder b("pad3");
  Tensor x = b.input("x", table, {S("A"), S("B"), S("C")});
  Tensor i = b.input("i", DType::i64, {S("P")});
  Tensor j = b.input("j", DType::i32, {S("Q")});
  Tensor k = b.input("k", DType::i64, {S("R")});
  Tensor g = b.gather(b.gather(b.gather(x, i, 0, "g1"), j, 1, "g2"), k, 2, "g3");
  Tensor m = b.reduce_mean(g, {2}, true, "m");
  const char* asc = R"(kernel pad3 axes(z0: P, z1: Q, z2: R reduced) @IO {
  %0 x = data(arg=0) : DT repeats[1, 1, 1]
  %1 i = data(arg=1) : i64 repeats[P, 1, 1]
  %2 i_load = load(%1) : i64 repeats[P, 1, 1] strides[1, 0, 0] offset 0
  %3 j = data(arg=2) : i32 repeats[1, Q, 1]
  %4 j_load = load(%3) : i32 repeats[1, Q, 1] strides[0, 1, 0] offset 0
  %5 k = data(arg=3) : i64 repeats[1, 1, R]
  %6 k_load = load(%5) : i64 repeats[1, 1, R] strides[0, 0, 1] offset 0
  %7 i_b = broadcast(%2) : i64 repeats[P, Q, R]
  %8 j_b = broadcast(%4) : i32 repeats[P, Q, R]
  %9 k_b = broadcast(%6) : i64 repeats[P, Q, R]
  %10 g3 = gather(%0, %7, %8, %9, stride=B*C, size=A, name=g1, stride=C, size=B, name=g2, stride=1, size=C) : DT repeats[P, Q, R] strides[0, 0, 0] offset 0
  %11 m = reduce_mean(%10) : DT repeats[P, Q, 1]
  %12 m_b = broadcast(%11) : DT repeats[P, Q, R]
  %13 d = sub(%10, %12) : DT repeats[P, Q, R]
  %14 d_store = store(%13) : DT repeats[P, Q, R] strides[Q*R, R, 1] offset 0
  %15 d_out = output(%14, arg=0) : DT repeats[P, Q, R]
  %16 m_store = store(%11) : DT repeats[P, Q, 1] strides[Q, 1, 0] offset 0
  %17 m_out = output(%16, arg=1) : DT repeats[P, Q, 1]
}
)";
  AscCase c{fmt::format("pad3 norm {}", dtype_name(table)),
            std::move(b).build({b.sub(g, m, "d"), m}),
            typed(asc, table, DType::i64),
            {{{"A", 1}, {"B", 1}, {"C", 1}, {"P", 1}, {"Q", 1}, {"R", 1}},
             {{"A", 3}, {"B", 2}, {"C", 5}, {"P", 7}, {"Q", 3}, {"R", 13}},
             {{"A", 2}, {"B", 5}, {"C", 67}, {"P", 3}, {"Q", 2}, {"R", 1031}},
             {{"A", 11}, {"B", 3}, {"C", 7}, {"P", 2}, {"Q", 1}, {"R", 4099}}}};  // splits
  c.rtol = c.atol = tolerance(table) * 10;
  return c;
}

std::vector<AscCase> pad2_cases_and_twins() {
  std::vector<AscCase> out;
  for (DType table : {DType::f32, DType::f16, DType::bf16})
    for (DType index : {DType::i32, DType::i64}) {
      AscCase c = pad2(table, index);
      AscCase t = c;
      t.label += " (per element)";
      t.asc = replace_all(c.asc, kPad2RowIndex, kPad2RowIndexPerElement);
      out.push_back(std::move(c));
      out.push_back(std::move(t));
    }
  return out;
}

/// The source of kernel `i` of the module.
std::string kernel_code(const CompiledCases& compiled, size_t i) {
  const std::string& code = compiled.module.code;
  const std::string head = fmt::format("// ---- kernel {} ", compiled.module.kernels.at(i).name);
  const size_t from = code.find(head);
  const size_t to = code.find("// ---- kernel ", from + head.size());
  return code.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

TEST(GatherChainCodegen, EachDimIsHoistedOrCheckedPerElement) {
  const std::vector<AscCase> cases = pad2_cases_and_twins();
  check_asc_cases(cases);
  const CompiledCases compiled = compile_cases(cases);
  for (size_t i = 0; i < cases.size(); i += 2) {
    const std::string hoisted = kernel_code(compiled, i), twin = kernel_code(compiled, i + 1);
    const std::string row_offset =
        "const int64_t go7 = (gb7 ? 0 : gw7) * (s_C);  // g1: row offset";
    // Dim 0 (i): once per row in the case, per element in its twin; dim 1
    // (j): per element in both.
    EXPECT_THAT(hoisted, HasSubstr(row_offset)) << cases[i].label;
    EXPECT_THAT(hoisted, Not(HasSubstr("reduction(|:gf7)"))) << cases[i].label;
    EXPECT_THAT(hoisted, HasSubstr("reduction(|:gf7_1) reduction(max:gk7_1)")) << cases[i].label;
    EXPECT_THAT(twin, Not(HasSubstr(row_offset))) << cases[i + 1].label;
    EXPECT_THAT(twin, HasSubstr("reduction(|:gf7) reduction(max:gk7) reduction(|:gf7_1)"))
        << cases[i + 1].label;
    expect_same_bits(cases, compiled, i, i + 1);
  }
}

TEST(GatherChainCodegen, ThreeDimsInTheRowLayoutMatchTheReference) {
  std::vector<AscCase> cases;
  for (DType table : {DType::f32, DType::f16, DType::bf16})
    cases.push_back(pad3_norm(table));
  for (const AscCase& c : cases)
    EXPECT_EQ(schedule::schedule_kernel(parse_case(c)).tile_axis, -1) << c.label;
  const std::string code = check_asc_cases(cases);
  EXPECT_THAT(code, HasSubstr("const int64_t go10 = "));    // i: per row
  EXPECT_THAT(code, HasSubstr("const int64_t go10_1 = "));  // j: per row
  EXPECT_THAT(code, Not(HasSubstr("const int64_t go10_2 = ")));
  EXPECT_THAT(code, HasSubstr("reduction(|:gf10_2)"));  // k: per element
}

TEST(GatherChainCodegen, BadIndicesReportTheirOwnDim) {
  std::vector<AscCase> cases;
  for (const AscCase& c : pad2_cases_and_twins())
    if (c.label.starts_with("pad2 f32 by i32") || c.label.starts_with("pad2 bf16 by i64"))
      cases.push_back(c);
  ASSERT_EQ(cases.size(), 4u);
  cases.push_back(pad3_norm(DType::f32));
  const CompiledCases compiled = compile_cases(cases);
  for (int64_t bad : {int64_t{0}, int64_t{1}, int64_t{1} << 40, -(int64_t{1} << 40)}) {
    for (size_t i = 0; i < 4; ++i) {
      expect_reported(cases[i], compiled, i, 1, 2, bad, {0}, "B");  // i: the first dim
      expect_reported(cases[i], compiled, i, 2, 5, bad, {1}, "C");  // j: the second
    }
    expect_reported(cases[4], compiled, 4, 1, 1, bad, {0}, "A");
    expect_reported(cases[4], compiled, 4, 2, 1, bad, {1}, "B");
    expect_reported(cases[4], compiled, 4, 3, 9, bad, {2}, "C");
  }
}

}  // namespace gather_chain_codegen_test_local
}  // namespace autofuse::codegen_test
