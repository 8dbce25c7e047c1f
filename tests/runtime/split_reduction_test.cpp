// Reductions split across blocks, end to end: the Executable runs a split
// kernel's launches in order with its workspace from the arena. Shapes with
// few rows (an all-axes sum, a few long rows, a few columns of many rows)
// make the tiling split for more than one thread; results match the
// reference for every thread count, repeat bit for bit, and a run of a
// known shape allocates nothing.
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"
#include "runtime/alloc_counter.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace split_reduction_test_local {

struct Case {
  std::string text;
  std::vector<sym::Binding> bindings;
};

std::vector<Case> cases() {
  return {
      {R"(graph total(x: f32[N]) {
  s = reduce_sum(x, axes=[0], keepdims=false)
  return s
})",
       {{{"N", 1}}, {{"N", 1000}}, {{"N", (1 << 20) + 3}}}},
      {R"(graph all_stats(x: f32[N, D]) {
  m = reduce_mean(x, axes=[0, 1], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0, 1], keepdims=true)
  sd = sqrt(v)
  y = div(xc, sd)
  return y, m, v
})",
       {{{"N", 3}, {"D", 5}}, {{"N", 513}, {"D", 1001}}}},
      {R"(graph long_rows(x: f32[N, D]) {
  m = reduce_max(x, axes=[1], keepdims=true)
  xs = sub(x, m)
  e = exp(xs)
  s = reduce_sum(e, axes=[1], keepdims=true)
  y = div(e, s)
  return y, s
})",
       {{{"N", 2}, {"D", 300001}}, {{"N", 5}, {"D", 70000}}}},
      {R"(graph columns(x: f32[N, D]) {
  m = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub(x, m)
  sq = mul(xc, xc)
  v = reduce_mean(sq, axes=[0], keepdims=true)
  y = mul(xc, v)
  return y, m
})",
       {{{"N", 200003}, {"D", 2}}, {{"N", 40000}, {"D", 21}}, {{"N", 7}, {"D", 3}}}},
      {R"(graph middle(x: i32[A, B, C]) {
  s = reduce_sum(x, axes=[1], keepdims=false)
  return s
})",
       {{{"A", 2}, {"B", 100000}, {"C", 3}}}},
  };
}

CompileOptions options(int threads) {
  CompileOptions o;
  o.compiler.cache_dir =
      (std::filesystem::temp_directory_path() / "autofuse-split-reduction-tests").string();
  o.threads = threads;
  return o;
}

::testing::AssertionResult close(const HostTensor& got, const HostTensor& want) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << got.type_string() << " vs " << want.type_string();
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_f64(i), w = want.get_f64(i);
    if (!(std::fabs(g - w) <= 2e-5 * (1 + std::fabs(w))))
      return ::testing::AssertionFailure() << "[" << i << "] got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(SplitReduction, MatchesTheReferenceForAnyThreadCount) {
  for (const Case& c : cases()) {
    auto graph = std::make_shared<Graph>(parse_graph(c.text));
    for (int threads : {1, 3, 8}) {
      auto exe = Executable::build(graph, options(threads));
      for (const sym::Binding& binding : c.bindings) {
        const std::vector<HostTensor> inputs = random_inputs(*graph, binding, 3);
        const std::vector<HostTensor> want = run_reference(*graph, inputs, binding);
        const std::vector<HostTensor> got = exe->run(inputs);
        const std::vector<HostTensor> again = exe->run(inputs);
        ASSERT_EQ(got.size(), want.size());
        for (size_t o = 0; o < want.size(); ++o) {
          std::string where = graph->name() + " threads " + std::to_string(threads);
          for (const auto& [s, v] : binding)
            where += " " + s + "=" + std::to_string(v);
          EXPECT_TRUE(close(got[o], want[o])) << where << ", output " << o;
          // The partials combine in a fixed order: runs repeat exactly.
          EXPECT_TRUE(same_bytes(got[o], again[o])) << where << ", output " << o;
        }
      }
    }
  }
}

TEST(SplitReduction, KnownShapesAllocateNothing) {
  if (!testing::can_count_allocations()) GTEST_SKIP() << "no allocation counting under ASan";
  const Case c = cases()[0];
  auto graph = std::make_shared<Graph>(parse_graph(c.text));
  auto exe = Executable::build(graph, options(4));
  const sym::Binding binding = c.bindings.back();
  const std::vector<HostTensor> inputs = random_inputs(*graph, binding, 3);
  std::vector<HostTensor> out = exe->run(inputs);
  exe->run_into(inputs, out);  // plans this shape
  testing::start_counting_allocations();
  exe->run_into(inputs, out);
  EXPECT_EQ(testing::stop_counting_allocations(), 0);
  EXPECT_TRUE(close(out[0], run_reference(*graph, inputs, binding)[0]));
}

}  // namespace split_reduction_test_local
}  // namespace autofuse::runtime
