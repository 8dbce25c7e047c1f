// Row buffers of the row layout (row_buffers.cpp): an expensive value that
// several passes need (softmax's exp) is computed once per element and read
// back by later passes, when the row fits and the kernel is not split;
// otherwise the passes recompute it. Both variants against the reference:
// f32/f16/bf16, rows of 1, primes, odd tails, rows longer than the buffer,
// several reduced axes (the buffer index is their linear index), and split
// machines (which must take the recomputing variant).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace reduction_row_buffer_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<sym::Binding> nd_shapes() {
  // D = 40009: longer than the buffer of 32768 f32 (recomputing variant).
  // N >= 8 with D <= 64: rows in groups (row_groups.cpp), D = 64 with the
  // cost buffers (ub_long).
  return {{{"N", 1}, {"D", 1}},    {{"N", 3}, {"D", 7}},     {{"N", 5}, {"D", 64}},
          {{"N", 13}, {"D", 131}}, {{"N", 2}, {"D", 1025}},  {{"N", 37}, {"D", 3}},
          {{"N", 4}, {"D", 3001}}, {{"N", 2}, {"D", 40009}}, {{"N", 1}, {"D", 32768}},
          {{"N", 9}, {"D", 64}},   {{"N", 16}, {"D", 33}}};
}

TEST(RowBuffer, SoftmaxEveryFloatDtype) {
  std::vector<GraphCase> cases;
  cases.push_back({"softmax_f32", parse_graph(softmax_text("f32")), nd_shapes(), 1e-5, 1e-6});
  cases.push_back({"softmax_f16", parse_graph(softmax_text("f16")), nd_shapes(), 4e-3, 1e-4});
  cases.push_back({"softmax_bf16", parse_graph(softmax_text("bf16")), nd_shapes(), 3e-2, 1e-3});
  const std::string code = check_split_cases(cases, /*expect_split=*/true);
  // The sum pass writes e, the output pass reads it back.
  EXPECT_THAT(code, HasSubstr("float ub"));
  EXPECT_THAT(code, HasSubstr("(row buffer)"));
  EXPECT_THAT(code, HasSubstr("const bool ub_rows = nsplit == 1 && n1 <= 32768;"));
}

TEST(RowBuffer, SeveralBufferedValuesAndReducedAxes) {
  std::vector<GraphCase> cases;
  // Two expensive values, each needed by two passes (tanh in passes 1 and 2,
  // exp in 2 and 3); the output also reads the row's input directly.
  cases.push_back({"two", parse_graph(R"(graph g(x: f32[N, D]) {
  m = reduce_max(x, axes=[1], keepdims=true)
  d = sub(x, m)
  t = tanh(d)
  s = reduce_sum(t, axes=[1], keepdims=true)
  u = sub(d, s)
  e = exp(u)
  v = mul(e, t)
  w = reduce_sum(v, axes=[1], keepdims=true)
  y0 = div(e, w)
  y1 = add(y0, x)
  return y1, s
})"),
                   nd_shapes(), 1e-4, 1e-5});
  // Reduced axes 0 and 2 of [A, B, C] (not adjacent: two loop levels), the
  // row buffer indexed by (i0 * C + i2).
  cases.push_back({"axes02",
                   parse_graph(R"(graph g(x: f32[A, B, C]) {
  m = reduce_max(x, axes=[0, 2], keepdims=true)
  d = sub(x, m)
  e = exp(d)
  s = reduce_sum(e, axes=[0, 2], keepdims=true)
  y = div(e, s)
  return y
})"),
                   {{{"A", 1}, {"B", 1}, {"C", 1}},
                    {{"A", 3}, {"B", 2}, {"C", 17}},
                    {{"A", 7}, {"B", 3}, {"C", 130}},
                    {{"A", 300}, {"B", 2}, {"C", 131}}},
                   1e-5,
                   1e-6});
  const std::string code = check_split_cases(cases, /*expect_split=*/true);
  EXPECT_THAT(code, HasSubstr("(row buffer)"));
  EXPECT_THAT(code, HasSubstr("* n2 + i2]"));
}

TEST(RowBuffer, CheapValuesAreRecomputed) {
  // Layernorm recomputes x - mean (a subtraction is cheaper than a buffer).
  std::vector<GraphCase> cases;
  cases.push_back({"layernorm",
                   parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/layernorm.af"),
                   nd_shapes(), 1e-5, 1e-5});
  const std::string code = check_cases(cases);
  EXPECT_THAT(code, Not(HasSubstr("ub_rows")));
}

std::string skip_layernorm_text(const std::string& dtype) {
  return fmt::format(R"(graph skip_ln(x: {0}[N, D], skip: {0}[N, D], bias: {0}[D], gamma: {0}[D],
                        beta: {0}[D]) {{
  a = add(x, skip)
  h = add(a, bias)
  mean = reduce_mean(h, axes=[1], keepdims=true)
  hc = sub(h, mean)
  sq = mul(hc, hc)
  var = reduce_mean(sq, axes=[1], keepdims=true)
  eps = constant(dtype={0}, value=1e-5)
  ve = add(var, eps)
  inv = rsqrt(ve)
  hn = mul(hc, inv)
  hg = mul(hn, gamma)
  y = add(hg, beta)
  return y, h
}})",
                     dtype);
}

TEST(RowBuffer, CostlyNarrowValuesAreBufferedOnLongRows) {
  // h = x + skip + bias from three loads (16-bit or f32) costs more than a
  // buffer: it is buffered when the row has at least 64 elements (ub_long);
  // shorter rows, and rows longer than the buffers, recompute. h - mean
  // reads h's buffer, so it is cheap and has none of its own.
  std::vector<GraphCase> cases;
  cases.push_back(
      {"skip_ln_bf16", parse_graph(skip_layernorm_text("bf16")), nd_shapes(), 3e-2, 3e-2});
  cases.push_back(
      {"skip_ln_f16", parse_graph(skip_layernorm_text("f16")), nd_shapes(), 4e-3, 4e-3});
  const std::string code = check_split_cases(cases, /*expect_split=*/true);
  EXPECT_THAT(code, HasSubstr("const bool ub_long = n1 >= 64;"));
  EXPECT_THAT(code, HasSubstr("if (ub_rows && ub_long) {"));
  EXPECT_THAT(code, HasSubstr("// h (row buffer)"));
  EXPECT_THAT(code, Not(HasSubstr("// hc (row buffer)")));
  EXPECT_THAT(code, Not(HasSubstr("// a (row buffer)")));  // h's buffer covers it
  std::vector<GraphCase> f32_cases;
  f32_cases.push_back(
      {"skip_ln_f32", parse_graph(skip_layernorm_text("f32")), nd_shapes(), 1e-4, 1e-4});
  const std::string f32 = check_split_cases(f32_cases, /*expect_split=*/true);
  EXPECT_THAT(f32, HasSubstr("// h (row buffer)"));
  EXPECT_THAT(f32, Not(HasSubstr("// hc (row buffer)")));
}

TEST(RowBuffer, CostlyAndTranscendentalBuffersTogether) {
  // A masked softmax in bf16: x * 0.125 + mask (two 16-bit loads) is a cost
  // buffer, exp a transcendental one. Short rows keep the exp buffer only.
  std::vector<GraphCase> cases;
  cases.push_back({"masked_softmax_bf16", parse_graph(R"(graph g(x: bf16[N, D], mask: bf16[D]) {
  c = constant(dtype=bf16, value=0.125)
  xs = mul(x, c)
  v = add(xs, mask)
  m = reduce_max(v, axes=[1], keepdims=true)
  d = sub(v, m)
  e = exp(d)
  s = reduce_sum(e, axes=[1], keepdims=true)
  y = div(e, s)
  return y
})"),
                   nd_shapes(), 3e-2, 1e-3});
  // tanh's only user is a cost buffer, which short rows do not use: tanh
  // keeps a buffer of its own (else short rows would recompute it).
  cases.push_back({"tanh_under_cost_bf16", parse_graph(R"(graph g(x: bf16[N, D], a: bf16[N, D]) {
  t = tanh(x)
  u = mul(t, a)
  s1 = reduce_mean(u, axes=[1], keepdims=true)
  w = sub(u, s1)
  s2 = reduce_max(w, axes=[1], keepdims=true)
  y = sub(w, s2)
  return y
})"),
                   nd_shapes(), 3e-2, 3e-2});
  const std::string code = check_split_cases(cases, /*expect_split=*/true);
  EXPECT_THAT(code, HasSubstr("if (ub_rows && ub_long) {"));
  EXPECT_THAT(code, HasSubstr("} else if (ub_rows) {  // the transcendental ones only"));
  EXPECT_THAT(code, HasSubstr("// v (row buffer)"));
  EXPECT_THAT(code, HasSubstr("// e (row buffer)"));
  EXPECT_THAT(code, HasSubstr("// t (row buffer)"));
  EXPECT_THAT(code, HasSubstr("// u (row buffer)"));
}

TEST(RowBuffer, BufferedAndSplitRunsAgree) {
  // One row that fits (buffered) and the same row split (recomputed).
  const Graph g = parse_graph(softmax_text("f32"));
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(g)};
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  const auto so = compile(module);
  const sym::Binding binding = {{"N", 1}, {"D", 20000}};
  const std::vector<HostTensor> inputs = random_inputs(g, binding, 3);
  const PhasedRun one = run_phased(*so, module.kernels[0], kernels[0].graph, g, inputs, binding,
                                   one_core(), /*max_phases=*/0);
  const PhasedRun split = run_phased(*so, module.kernels[0], kernels[0].graph, g, inputs, binding,
                                     split_machine(64, 64));
  EXPECT_EQ(one.split, 1);
  EXPECT_GT(split.split, 1);
  const std::vector<HostTensor> want = run_reference(g, inputs, binding);
  EXPECT_TRUE(tensors_close(one.outputs[0], want[0], 1e-5, 1e-6));
  // The sums differ by the split's order only; the exp values are the same.
  EXPECT_TRUE(tensors_close(split.outputs[0], one.outputs[0], 1e-6, 0));
}

}  // namespace reduction_row_buffer_test_local
}  // namespace autofuse::codegen_test
