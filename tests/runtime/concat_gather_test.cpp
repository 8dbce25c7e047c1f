// Concats of unequal pieces compiled through move_views'
// concat_unequal_by_gather: along a middle and the first axis,
// on f32, f16 and bf16, with sizes 1, primes and large ones, and thread
// counts that split unevenly; results equal the reference interpreter
// (the gathers and selects only move values: exact up to the consumers'
// arithmetic).
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"
#include "runtime/expect_outputs.h"
#include "test_kernel_cache.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace concat_gather_test_local {

struct Case {
  const char* text;  // {t}: the dtype
  std::vector<sym::Binding> bindings;
};

const Case kCases[] = {
    {R"(graph three(a: {t}[N, 3, 4], b: {t}[N, 5, 4], c: {t}[N, 1, 4], s: {t}[9, 4]) {{
  x = concat(a, b, c, axis=1)
  y = mul(x, s)
  r = relu(y)
  t = reduce_sum(r, axes=[1, 2], keepdims=true)
  return r, t
}})",
     {{{"N", 1}}, {{"N", 7}}, {{"N", 4099}}, {{"N", 100003}}}},
    {R"(graph middle(a: {t}[B, 1, D], b: {t}[B, 4, D], c: {t}[B, 2, D]) {{
  x = concat(a, b, c, axis=1)
  y = neg(x)
  m = reduce_max(y, axes=[1], keepdims=true)
  z = sub(y, m)
  return z
}})",
     {{{"B", 1}, {"D", 1}}, {{"B", 3}, {"D", 13}}, {{"B", 257}, {"D", 1031}}}},
    {R"(graph first(a: {t}[2, D], b: {t}[5, D], e: f32[ ]) {{
  x = concat(a, b, axis=0)
  xf = cast(x, to=f32)
  y = mul(xf, e)
  return y
}})",
     {{{"D", 1}}, {{"D", 31}}, {{"D", 300007}}}},
};

class ConcatGather : public ::testing::TestWithParam<const char*> {
 protected:
  const std::string cache_ = shared_test_cache();
};

TEST_P(ConcatGather, MatchesTheReference) {
  const std::string dtype = GetParam();
  const double tol = dtype == "f32" ? 1e-5 : dtype == "f16" ? 1e-2 : 6e-2;
  for (const Case& c : kCases) {
    const std::string text = fmt::format(fmt::runtime(c.text), fmt::arg("t", dtype));
    auto graph = std::make_shared<const Graph>(parse_graph(text));
    for (int threads : {1, 3}) {
      CompileOptions o;
      o.compiler.cache_dir = cache_;
      o.threads = threads;
      auto exe = Executable::build(graph, o);
      EXPECT_EQ(exe->report().kernels, 1) << text;
      for (const sym::Binding& b : c.bindings) {
        const std::vector<HostTensor> in = random_inputs(*graph, b, 9);
        const std::vector<HostTensor> want = run_reference(*graph, in);
        expect_outputs_near(exe->run(in), want, tol,
                            fmt::format("{} {} threads {}", graph->name(), dtype, threads));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ConcatGather, ::testing::Values("f32", "f16", "bf16"));

}  // namespace concat_gather_test_local
}  // namespace autofuse::runtime
