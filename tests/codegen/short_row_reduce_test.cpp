// Short rows reduced from buffers (short_row_reduce.cpp, kernel_prelude_rows.h):
// rows of at most 1024 elements write the reduced values to a buffer (or
// reduce an f32 input row in place, or the pass's row buffer) and a prelude
// af_row_* function reduces it with vector lanes and a tree, instead of the
// `omp simd reduction` clause. Against the reference: sum, mean, max, min on
// f32, f16 and bf16, the value read directly and computed, every length
// around the 8-lane vectors, the 1024 limit on both sides, symbolic and
// static rows, NaN and infinities; each also split across blocks (segments
// that start inside a row). And the shape of the generated code.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/random.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace short_row_reduce_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

/// op over the last axis of x (`computed`: of x * x, which the loop computes
/// and writes to a buffer; else x itself).
std::string reduce_text(const std::string& op, const std::string& dtype, const std::string& d,
                        bool computed) {
  return fmt::format(R"(graph g(x: {1}[N, {2}]) {{
  t = {3}
  s = {0}(t, axes=[1], keepdims=true)
  return s
}})",
                     op, dtype, d, computed ? "mul(x, x)" : "abs(x)");
}

std::vector<sym::Binding> lengths() {
  std::vector<sym::Binding> out;
  for (int64_t d : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 100, 1023, 1024, 1025, 1500})
    out.push_back({{"N", d > 1000 ? 2 : 5}, {"D", d}});
  return out;
}

double tol(const std::string& dtype) {
  return dtype == "bf16" ? 3e-2 : dtype == "f16" ? 4e-3 : 1e-5;
}

TEST(ShortRowReduce, EveryOpDtypeAndLength) {
  std::vector<GraphCase> cases;
  for (const char* dt : {"f32", "f16", "bf16"}) {
    for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"}) {
      for (bool computed : {false, true}) {
        cases.push_back({fmt::format("{} {} {}", op, dt, computed ? "x*x" : "|x|"),
                         parse_graph(reduce_text(op, dt, "D", computed)), lengths(), tol(dt),
                         1e-4});
      }
    }
  }
  // The plain input: reduce_sum(x) reads an f32 row in place.
  cases.push_back({"sum x", parse_graph(R"(graph g(x: f32[N, D]) {
  s = reduce_sum(x, axes=[1])
  return s
})"),
                   lengths(), 1e-5, 1e-4});
  check_split_cases(cases, /*expect_split=*/true);
}

TEST(ShortRowReduce, StaticLengths) {
  std::vector<GraphCase> cases;
  const std::vector<sym::Binding> rows = {{{"N", 1}}, {{"N", 3}}, {{"N", 37}}};
  for (const char* dt : {"f32", "bf16"}) {
    for (const char* d : {"1", "9", "16", "100", "1024", "1025"}) {
      for (const char* op : {"reduce_sum", "reduce_max"}) {
        cases.push_back({fmt::format("{} {} D={}", op, dt, d),
                         parse_graph(reduce_text(op, dt, d, true)), rows, tol(dt), 1e-4});
      }
      cases.push_back({fmt::format("softmax {} D={}", dt, d), parse_graph(softmax_text(dt, d)),
                       rows, tol(dt), 1e-4});
    }
  }
  check_split_cases(cases, /*expect_split=*/false);
}

/// x with a NaN in the first row's first element and in the last row's
/// last one (in the tail after the whole vectors unless D % 8 == 0), +inf
/// in the second row and -inf in the third.
std::vector<HostTensor> with_specials(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 7);
  HostTensor& x = inputs[0];
  const int64_t d = binding.at("D");
  x.set_f64(0, NAN);
  x.set_f64(x.numel() - 1, NAN);
  x.set_f64(d + d / 2, INFINITY);
  x.set_f64(2 * d + d - 1, -INFINITY);
  return inputs;
}

TEST(ShortRowReduce, NanAndInfinities) {
  std::vector<GraphCase> cases;
  std::vector<sym::Binding> shapes;
  for (int64_t d : {1, 5, 8, 13, 16, 40, 1024})
    shapes.push_back({{"N", 4}, {"D", d}});
  for (const char* dt : {"f32", "bf16"}) {
    for (const char* op : {"reduce_sum", "reduce_max", "reduce_min"}) {
      for (bool computed : {false, true}) {
        // abs(x) and x * x: NaN stays NaN, -inf becomes +inf.
        GraphCase c{fmt::format("{} {} {}", op, dt, computed ? "x*x" : "|x|"),
                    parse_graph(reduce_text(op, dt, "D", computed)), shapes, tol(dt), 1e-4};
        c.make_inputs = with_specials;
        cases.push_back(std::move(c));
      }
      GraphCase plain{fmt::format("{} {} x", op, dt),
                      parse_graph(fmt::format(R"(graph g(x: {1}[N, D]) {{
  s = {0}(x, axes=[1])
  return s
}})",
                                              op, dt)),
                      shapes, tol(dt), 1e-4};
      plain.make_inputs = with_specials;
      cases.push_back(std::move(plain));
    }
    // Softmax (its exp exponentiates the buffer): NaN rows, inf - inf.
    GraphCase softmax{fmt::format("softmax {}", dt), parse_graph(softmax_text(dt)), shapes, tol(dt),
                      1e-4};
    softmax.make_inputs = with_specials;
    cases.push_back(std::move(softmax));
  }
  check_split_cases(cases, /*expect_split=*/false);
}

TEST(ShortRowReduce, SourceStructure) {
  const auto source = kernel_code;
  const std::string branch = "if (hi - lo <= 1024) {  // a short row: reduced from buffers";
  // Symbolic rows: the branch; an f32 input row in place, a computed value from a buffer.
  const std::string in_place = source(R"(graph g(x: f32[N, D]) {
  s = reduce_sum(x, axes=[1])
  return s
})");
  EXPECT_THAT(in_place, HasSubstr(branch));
  EXPECT_THAT(in_place, HasSubstr("= af_row_sum_f32_in(&p0["));
  EXPECT_THAT(in_place, HasSubstr("reduction(+:"));  // the long rows' clause loop
  const std::string computed = source(reduce_text("reduce_max", "bf16", "D", true));
  EXPECT_THAT(computed, HasSubstr("af_row_max_f32(rb"));
  EXPECT_THAT(computed, HasSubstr(", hi - lo, &nan"));
  // Softmax: the max of the input row in place, the sum from the exp's row
  // buffer (or its own when the row does not fit the row buffers).
  const std::string softmax = source(softmax_text("f32", "D"));
  EXPECT_THAT(softmax, HasSubstr("= af_row_max_f32_in(&p0["));
  EXPECT_THAT(softmax, HasSubstr("= af_row_sum_f32(ub"));
  EXPECT_THAT(softmax, HasSubstr("= af_row_sum_f32(rb"));
  // Its exp: the buffer gets x - max and af_exp_nonpos_row after the loop
  // (the long rows' clause loop keeps af_exp_nonpos).
  EXPECT_THAT(softmax, HasSubstr("af_exp_nonpos_row(ub"));
  EXPECT_THAT(softmax, HasSubstr("af_exp_nonpos_row(rb"));
  EXPECT_THAT(softmax, HasSubstr("af_exp_nonpos("));
  EXPECT_THAT(source(softmax_text("bf16", "100")), HasSubstr("af_exp_nonpos_row("));
  EXPECT_THAT(source(softmax_text("f32", "64")), Not(HasSubstr("af_exp_nonpos_row(")));
  // Not when the loop uses the exp otherwise (here: stores it).
  const std::string stored = source(R"(graph g(x: f32[N, D]) {
  m = reduce_max(x, axes=[1], keepdims=true)
  shifted = sub(x, m)
  e = exp(shifted)
  s = reduce_sum(e, axes=[1], keepdims=true)
  return e, s
})");
  EXPECT_THAT(stored, HasSubstr("af_exp_nonpos("));
  EXPECT_THAT(stored, Not(HasSubstr("af_exp_nonpos_row(")));
  // Static rows up to 1024: no branch, no clause; longer: the clause only.
  // (Rows of 64 and more whose pass is arithmetic: vector_pass_test.cpp.)
  const std::string short_static = source(reduce_text("reduce_sum", "f32", "16", true));
  EXPECT_THAT(short_static, Not(HasSubstr(branch)));
  EXPECT_THAT(short_static, HasSubstr("af_row_sum_f32(rb"));
  EXPECT_THAT(short_static, Not(HasSubstr("reduction(+:")));
  EXPECT_THAT(source(reduce_text("reduce_sum", "f32", "1025", true)), Not(HasSubstr("af_row_")));
  // Not f32 accumulators (f64, integers) or not a prelude op: the clause.
  EXPECT_THAT(source(reduce_text("reduce_sum", "f64", "D", true)), Not(HasSubstr("af_row_")));
  EXPECT_THAT(source(reduce_text("reduce_max", "i32", "D", true)), Not(HasSubstr("af_row_")));
  EXPECT_THAT(source(reduce_text("reduce_prod", "f32", "D", true)), Not(HasSubstr("af_row_")));
}

}  // namespace short_row_reduce_test_local
}  // namespace autofuse::codegen_test
