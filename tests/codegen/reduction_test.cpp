// Reduction kernels against the reference: the examples (layernorm in
// f32/f16/bf16, softmax, rmsnorm), every reduction op and dtype, column and
// multi-axis reductions, and reductions with several passes.
#include <cmath>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/graph/text.h"
#include "autofuse/ref/random.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace reduction_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

sym::Expr S(const char* name) {
  return sym::Expr::symbol(name);
}

std::vector<sym::Binding> nd_bindings() {
  return {{{"N", 1}, {"D", 1}},    {{"N", 3}, {"D", 7}},    {{"N", 5}, {"D", 64}},
          {{"N", 13}, {"D", 131}}, {{"N", 2}, {"D", 1000}}, {{"N", 37}, {"D", 3}}};
}

Graph example(const std::string& name) {
  return parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/" + name + ".af");
}

TEST(Reduction, Examples) {
  std::vector<GraphCase> cases;
  cases.push_back({"layernorm", example("layernorm"), nd_bindings(), 1e-5, 1e-5});
  cases.push_back({"softmax", example("softmax"), nd_bindings(), 1e-5, 1e-6});
  cases.push_back({"softmax_mask", example("softmax_mask"), nd_bindings(), 1e-5, 1e-6});
  cases.push_back({"rmsnorm", example("rmsnorm"), nd_bindings(), 1e-5, 1e-5});
  // f16/bf16: computed in f32 and rounded once (the reference rounds after
  // every op): a few units in the last place of the storage type.
  cases.push_back({"layernorm_f16", example("layernorm_f16"), nd_bindings(), 4e-3, 4e-3});
  cases.push_back({"layernorm_bf16", example("layernorm_bf16"), nd_bindings(), 3e-2, 3e-2});
  const std::string code = check_cases(cases);
  EXPECT_THAT(code, HasSubstr("reduction template"));
  EXPECT_THAT(code, HasSubstr("reduction(max:"));
  EXPECT_THAT(code, HasSubstr("reduction(+:"));
}

TEST(Reduction, EveryOpAndDtype) {
  std::vector<GraphCase> cases;
  const OpKind ops[] = {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax, OpKind::ReduceMin,
                        OpKind::ReduceProd};
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16, DType::f64,
                          DType::i8,  DType::u8,  DType::i32,  DType::i64};
  for (OpKind op : ops) {
    for (DType dt : dtypes) {
      const std::string name = fmt::format("{}_{}", op_name(op), dtype_name(dt));
      GraphBuilder b(name);
      Tensor x = b.input("x", dt, {S("N"), S("D")});
      Tensor y = b.reduce(op, x, {1}, /*keepdims=*/true);
      // f32 sums in per-lane partials vs the reference's double; products of
      // values in [-1, 1) shrink, so an absolute tolerance fits them.
      const double tol = dt == DType::f16 ? 2e-3 : dt == DType::bf16 ? 1.6e-2 : 1e-5;
      cases.push_back({name, std::move(b).build({y}), nd_bindings(), tol, tol});
    }
  }
  check_cases(cases);
}

TEST(Reduction, ColumnsAndSeveralAxes) {
  std::vector<GraphCase> cases;
  {
    GraphBuilder b("column_sum");
    Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
    Tensor y = b.reduce_sum(x, {0}, /*keepdims=*/false);
    cases.push_back({"column_sum", std::move(b).build({y}), nd_bindings(), 1e-5, 1e-5});
  }
  {
    GraphBuilder b("middle_max");
    Tensor x = b.input("x", DType::f32, {S("A"), S("B"), S("C")});
    Tensor y = b.reduce_max(x, {1}, /*keepdims=*/true);
    Tensor z = b.sub(x, y);
    cases.push_back({"middle_max",
                     std::move(b).build({z, y}),
                     {{{"A", 2}, {"B", 3}, {"C", 5}},
                      {{"A", 7}, {"B", 1}, {"C", 33}},
                      {{"A", 1}, {"B", 40}, {"C", 1}}}});
  }
  {
    GraphBuilder b("outer_and_inner");
    Tensor x = b.input("x", DType::f32, {S("A"), S("B"), S("C")});
    Tensor y = b.reduce_mean(x, {0, 2}, /*keepdims=*/true);
    Tensor z = b.mul(x, y);
    cases.push_back({"outer_and_inner",
                     std::move(b).build({z, y}),
                     {{{"A", 2}, {"B", 3}, {"C", 5}},
                      {{"A", 7}, {"B", 1}, {"C", 33}},
                      {{"A", 1}, {"B", 40}, {"C", 1}}},
                     1e-5,
                     1e-5});
  }
  {
    GraphBuilder b("all_axes");
    Tensor x = b.input("x", DType::i32, {S("N"), S("D")});
    Tensor y = b.reduce_sum(x, {0, 1}, /*keepdims=*/false);
    cases.push_back({"all_axes", std::move(b).build({y}), nd_bindings()});
  }
  check_cases(cases);
}

TEST(Reduction, ThreePassesWithRowOutputs) {
  // mean and variance as outputs next to the normalized value: row stores
  // at two stages, a varying store in the last pass.
  std::vector<GraphCase> cases;
  GraphBuilder b("stats");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor mean = b.reduce_mean(x, {1}, true);
  Tensor xc = b.sub(x, mean);
  Tensor var = b.reduce_mean(b.mul(xc, xc), {1}, true);
  Tensor y = b.div(xc, b.sqrt(b.add(var, b.scalar(1e-5))));
  Tensor m2 = b.reduce_max(y, {1}, true);
  Tensor m3 = b.reduce(OpKind::ReduceMin, b.mul(y, m2), {1}, true);  // a fourth pass
  Tensor p = b.reduce(OpKind::ReduceProd, b.add(b.mul(xc, b.scalar(0.01)), b.scalar(1)), {1}, true);
  cases.push_back(
      {"stats", std::move(b).build({y, mean, var, m2, xc, m3, p}), nd_bindings(), 1e-5, 1e-5});
  check_cases(cases);
}

/// Rows with inf, -inf, NaN and huge values every third element (the rest
/// random): exp(x - max(x)) at its edges.
std::vector<HostTensor> extreme_rows(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 3);
  const double special[] = {INFINITY, -INFINITY, NAN, 3e38, -3e38, 1e9, -1e9, 100.0};
  HostTensor& x = inputs[0];
  for (int64_t i = 0; i < x.numel(); i += 3)
    x.set_f64(i, special[(i / 3) % 8]);
  return inputs;
}

TEST(Reduction, ExpOfXMinusItsMaxHasNoUpperClamp) {
  // exp(x - max(x)) is exp of a value <= 0 (or NaN): af_exp_nonpos. The max
  // of another value, or max(x) - x, keep af_exp. Results against the
  // reference with inf, NaN and huge values in the rows.
  std::vector<GraphCase> cases;
  for (const char* dtype : {"f32", "bf16"}) {
    GraphCase c{fmt::format("softmax {}", dtype), parse_graph(softmax_text(dtype)), nd_bindings(),
                std::string(dtype) == "f32" ? 1e-5 : 2e-2, 1e-6};
    cases.push_back(c);
    c.label += " extreme";
    c.make_inputs = extreme_rows;
    cases.push_back(std::move(c));
  }
  cases.push_back({"other max", parse_graph(R"(graph other_max(x: f32[N, D], y: f32[N, D]) {
  m = reduce_max(y, axes=[1], keepdims=true)
  d = sub(x, m)
  e = exp(d)
  return e
})"),
                   nd_bindings(), 1e-5, 1e-6});
  cases.push_back({"max minus x", parse_graph(R"(graph max_minus_x(x: f32[N, D]) {
  m = reduce_max(x, axes=[1], keepdims=true)
  d = sub(m, x)
  e = exp(d)
  return e
})"),
                   nd_bindings(), 1e-5, 1e-6});
  const std::string code = check_cases(cases);
  const auto kernel = [&](const std::string& name) {
    const size_t at = code.find(fmt::format("// ---- kernel {} ", name));
    EXPECT_NE(at, std::string::npos) << name;
    const size_t end = code.find("// ---- kernel ", at + 1);
    return code.substr(at, end == std::string::npos ? std::string::npos : end - at);
  };
  const std::string softmax = kernel(cases[0].graph.name());
  EXPECT_THAT(softmax, HasSubstr("af_exp_nonpos("));
  EXPECT_THAT(softmax, Not(HasSubstr("af_exp(")));
  for (const char* name : {"other_max", "max_minus_x"}) {
    EXPECT_THAT(kernel(name), HasSubstr("af_exp("));
    EXPECT_THAT(kernel(name), Not(HasSubstr("af_exp_nonpos(")));
  }
}

}  // namespace reduction_test_local
}  // namespace autofuse::codegen_test
