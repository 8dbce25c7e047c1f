// Kernels whose loop axes may be empty (sizes like B - 1): graphs from the
// long fuzz run that computed the identity of a reduction (0 or inf) when
// B = 1 or A = 1, because a reduction of a value constant along a reduced
// axis ran inside the loop over it. Results equal the reference for the
// empty case and for non-empty ones.
#include <cmath>

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
namespace empty_axis_test_local {

struct Case {
  const char* text;
  std::vector<sym::Binding> bindings;
};

const Case kCases[] = {
    // seed 14869935200768294069: softmax over the first split piece.
    {R"(graph g(x: f32[B, C, A, F], y: f32[1, 1, A, F], z: f32[1, C, A, F]) {
  m = reduce_max(x, axes=[], keepdims=false)
  m1 = reshape(m, shape=[1, 1, 1, 1])
  v2 = mul(x, m1)
  v3, v4 = split(v2, axis=0, sizes=[1, B - 1])
  v5 = reduce_max(v3, axes=[0, 1, 2, 3], keepdims=true)
  v6 = sub(v3, v5)
  v7 = exp(v6)
  v8 = reduce_sum(v7, axes=[0, 1, 2, 3], keepdims=true)
  v10 = div(v7, v8)
  v11 = sub(y, v10)
  v16 = concat(v3, v3, z, axis=2)
  return v16, v4, v11
})",
     {{{"B", 1}, {"C", 1}, {"A", 13}, {"F", 1}},
      {{"B", 2}, {"C", 3}, {"A", 5}, {"F", 7}},
      {{"B", 1}, {"C", 2}, {"A", 1}, {"F", 33}}}},
    // seed 3330133234722658219: the min of the last split piece.
    {R"(graph g(x: bf16[1, A, F, B], w: bf16[3]) {
  v0, v1 = split(x, axis=1, sizes=[A - 1, 1])
  v2 = sub(v0, v1)
  v3 = sub(v2, v1)
  v4 = reduce_min(v1, axes=[0, 1, 2], keepdims=false)
  v5 = concat(v4, w, axis=0)
  return v5, v3
})",
     {{{"A", 1}, {"F", 2}, {"B", 1}},
      {{"A", 2}, {"F", 3}, {"B", 5}},
      {{"A", 1}, {"F", 1}, {"B", 7}}}},
};

TEST(EmptyAxis, ReductionsOfValuesConstantAlongAMaybeEmptyAxis) {
  for (const Case& c : kCases) {
    auto graph = std::make_shared<const Graph>(parse_graph(c.text));
    for (int threads : {1, 3}) {
      CompileOptions o;
      o.compiler.cache_dir = shared_test_cache();
      o.threads = threads;
      auto exe = Executable::build(graph, o);
      for (const sym::Binding& b : c.bindings) {
        const std::vector<HostTensor> in = random_inputs(*graph, b, 1);
        const std::vector<HostTensor> want = run_reference(*graph, in);
        expect_outputs_near(exe->run(in), want, 1e-2,
                            fmt::format("{}\nthreads {}", c.text, threads));
      }
    }
  }
}

}  // namespace empty_axis_test_local
}  // namespace autofuse::runtime
