// The AVX2 form of the vector code (kernel_prelude_lanes.h's lane pairs:
// vector passes, column vectors, and lane_loops.cpp's Elementwise loops)
// run on any AVX2 machine, AVX-512 ones included (AF_FORCE_LANE_PAIRS
// before the prelude), against the reference: bf16 elementwise arithmetic
// over rows that leave every tail of 16 lanes, rotary embedding's halves,
// rmsnorm and layernorm rows, softmax, a column sum; with NaN, infinities,
// ties and subnormal results among the values; abs, relu, max, min, sqrt
// and reciprocal in vector passes.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/random.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
namespace lane_loops_test_local {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

const std::string kForce = "#define AF_FORCE_LANE_PAIRS 1\n";

std::vector<sym::Binding> rows(const std::vector<std::pair<int64_t, int64_t>>& nd) {
  std::vector<sym::Binding> out;
  for (const auto& [n, d] : nd)
    out.push_back({{"N", n}, {"D", d}});
  return out;
}

// -(x * w + w - x / 3): every lane-form operation on bf16 data. The
// reference rounds each intermediate to bf16, the kernel computes in f32:
// errors of a few roundings of values below ~3.
std::string arithmetic_text(const std::string& dtype) {
  return "graph lane_arith(x: " + dtype + "[N, D], w: " + dtype +
         "[D]) {\n"
         "  p = mul(x, w)\n  q = add(p, w)\n  t = constant(dtype=" +
         dtype +
         ", value=3)\n"
         "  r = div(x, t)\n  s = sub(q, r)\n  y = neg(s)\n  return p, y\n}";
}

// Rotary embedding's two halves (rows of 2 x 32), each half an output.
const char* kRotary = R"(graph lane_rotary(x: bf16[N, 64], c: bf16[N, 32], s: bf16[N, 32]) {
  x1 = slice(x, axes=[1], starts=[0], ends=[32])
  x2 = slice(x, axes=[1], starts=[32], ends=[64])
  a1 = mul(x1, c)
  b1 = mul(x2, s)
  y1 = sub(a1, b1)
  a2 = mul(x2, c)
  b2 = mul(x1, s)
  y2 = add(a2, b2)
  return y1, y2
})";

std::vector<sym::Binding> sizes_n(const std::vector<int64_t>& ns) {
  std::vector<sym::Binding> out;
  for (int64_t n : ns)
    out.push_back({{"N", n}});
  return out;
}

std::vector<HostTensor> special_inputs(const Graph& g, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(g, binding, 3);
  // NaN, infinities, a bf16 tie (1 + 2^-8 times 1) and tiny values.
  const double specials[] = {std::nan(""), INFINITY, -INFINITY, 1.0 + 1.0 / 256, 1e-39, -3e-40};
  HostTensor& x = inputs.at(0);
  for (int64_t i = 0; i < x.numel(); i += 7)
    x.set_f64(i, specials[(i / 7) % 6]);
  return inputs;
}

TEST(LaneLoops, Avx2FormMatchesTheReference) {
  std::vector<GraphCase> cases;
  const auto nd = rows({{1, 1},
                        {3, 15},
                        {2, 16},
                        {5, 17},
                        {4, 63},
                        {3, 64},
                        {2, 65},
                        {7, 100},
                        {2, 1000},
                        {300, 64}});
  GraphCase arith{"arith_bf16", parse_graph(arithmetic_text("bf16")), nd, 8e-3, 3e-2};
  arith.make_inputs = special_inputs;
  cases.push_back(std::move(arith));
  // The reference rounds each product to bf16 before the difference, the
  // kernel does not: absolute errors of a product's rounding (values < 1).
  cases.push_back({"rotary", parse_graph(kRotary), sizes_n({1, 5, 64, 1000}), 8e-3, 8e-3});
  cases.push_back(
      {"softmax_bf16", parse_graph(softmax_text("bf16", "384")), sizes_n({1, 9}), 1e-2, 1e-3});
  const std::string code = check_cases(cases, 1, kForce);
  EXPECT_THAT(code, HasSubstr("AF_LANE_PAIRS  // 16 lanes as two registers"));
  EXPECT_THAT(code, HasSubstr("af_put16_bf16("));
}

TEST(LaneLoops, Avx2VectorPassesMatchTheReference) {
  // Reductions: rows of layernorm and rmsnorm (sums, a storing pass), a
  // column sum, on split and "from memory" machines too.
  std::vector<GraphCase> cases;
  for (const char* dt : {"f32", "bf16"}) {
    const double tol = std::string(dt) == "f32" ? 2e-5 : 2e-2;
    cases.push_back({std::string("rms_") + dt,
                     parse_graph(std::string("graph lane_rms(x: ") + dt + "[N, 768], g: " + dt +
                                 "[768]) {\n  sq = mul(x, x)\n  m = reduce_mean(sq, axes=[1], "
                                 "keepdims=true)\n  e = constant(dtype=" +
                                 dt +
                                 ", value=1e-6)\n  me = add(m, e)\n  r = rsqrt(me)\n  xn = mul(x, "
                                 "r)\n  y = mul(xn, g)\n  return y\n}"),
                     sizes_n({1, 3, 65}), tol, tol});
    cases.push_back({std::string("colsum_") + dt,
                     parse_graph(std::string("graph lane_col(x: ") + dt +
                                 "[N, D]) {\n  s = reduce_sum(x, axes=[0], keepdims=true)\n  "
                                 "return s\n}"),
                     rows({{1, 1}, {63, 17}, {130, 129}, {7, 300}}), tol, tol});
  }
  for (const char* dt : {"f32", "bf16"}) {
    const bool f32 = std::string(dt) == "f32";
    for (const char* d : {"100", "D"})
      cases.push_back({fmt::format("selects_{}_{}", dt, d), parse_graph(selects_pass_text(dt, d)),
                       std::string(d) == "D" ? rows({{1, 1}, {3, 15}, {9, 17}, {8, 100}, {2, 1025}})
                                             : sizes_n({1, 8, 19}),
                       f32 ? 1e-5 : 2e-2, f32 ? 1e-4 : 0.5, selects_inputs});
  }
  const std::string code = check_split_cases(cases, /*expect_split=*/false, 1, kForce);
  EXPECT_THAT(code, ContainsRegex(R"(const auto v[0-9]+ = af_fmax\(v)"));
  EXPECT_THAT(code, HasSubstr("af_column_rows<1>("));
  EXPECT_THAT(code, HasSubstr("af_row_sum16x4("));
}

// AVX-512 without AVX512-BF16: a 16-lane loop over a row of 16 bf16
// (simdlen(16)) as one register of 16 lanes, where g++ computes the loop's
// f32 values in 32-byte halves: a short row's stores and its sum from a
// buffer (dlrm_concat's pieces: RowSpan's tests too), every select and root
// on rows of 16 with NaN and infinities, Elementwise rows. Elsewhere the
// loop runs (the form is in the text either way). Each lane computes the
// loop's expressions: the same bits (dlrm_concat bf16 [32768] in the L2
// 0.55-0.6x the time, session 40).
// x * w's rows of 16 with ties for bf16: (1 + 2^-7) * 1.5 is halfway
// between two bf16 values (rounded to even), and the specials.
std::vector<HostTensor> tie_inputs(const Graph& g, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = special_inputs(g, binding);
  HostTensor& x = inputs.at(0);
  for (int64_t i = 0; i < x.numel(); ++i)
    if (i % 5 == 2) x.set_f64(i, i % 2 ? 1.0 + 1.0 / 128 : -(1.0 + 3.0 / 128));
  HostTensor& w = inputs.at(1);
  for (int64_t j = 0; j < w.numel(); ++j)
    if (j % 3 == 1) w.set_f64(j, 1.5);
  return inputs;
}

TEST(LaneLoops, RowsOf16InOneRegisterMatchTheReference) {
  std::string arith = arithmetic_text("bf16");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"[N, D]", "[N, 16]"},
                                 std::pair<std::string, std::string>{"[D]", "[16]"}})
    arith.replace(arith.find(from), from.size(), to);
  std::vector<GraphCase> cases;
  // Relu'd products stored and summed by the row (a short row's buffer).
  cases.push_back({"relu_sum_bf16_16", parse_graph(R"(graph relu_sum(x: bf16[N, 16], w: bf16[16]) {
  p = mul(x, w)
  r = relu(p)
  s = reduce_sum(r, axes=[1], keepdims=true)
  return r, s
})"),
                   sizes_n({1, 7, 70}), 1e-2, 2e-2, special_inputs});
  cases.push_back({"selects_bf16_16", parse_graph(selects_pass_text("bf16", "16")),
                   sizes_n({1, 8, 19}), 2e-2, 0.5, selects_inputs});
  // The Reduction cases also on machines that split their rows.
  std::string code = check_split_cases(cases, /*expect_split=*/false);
  cases.clear();
  // One product rounded once: the reference's bits exactly.
  cases.push_back({"product_bf16_16", parse_graph(R"(graph product(x: bf16[N, 16], w: bf16[16]) {
  y = mul(x, w)
  return y
})"),
                   sizes_n({1, 5, 70}), 0, 0, tie_inputs});
  GraphCase rows16{"arith_bf16_16", parse_graph(arith), sizes_n({1, 3, 70}), 8e-3, 3e-2};
  rows16.make_inputs = special_inputs;
  cases.push_back(std::move(rows16));
  code += check_cases(cases);
  EXPECT_THAT(
      code,
      HasSubstr("#if AF_VECTOR_PASS && !AF_LANE_PAIRS && !AF_BF16_CVT  // 16 lanes, one register"));
  EXPECT_THAT(code, ContainsRegex(R"(af_store16\(&rb[0-9]+\[i1 - lo\], &v[0-9]+, n_\);)"));
  EXPECT_THAT(code, HasSubstr("af_frelu(v"));
}

}  // namespace lane_loops_test_local
}  // namespace autofuse::codegen_test
