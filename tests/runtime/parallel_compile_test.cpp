// A graph's module compiled as several translation units at once
// (codegen::split_translation_units, jit::compile_and_load): as many units
// as the compile jobs allow, up to one per launch (a group's members stay
// with their wrapper), and the same results as the module compiled whole.
#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"
#include "runtime/expect_outputs.h"
#include "runtime/group_graphs.h"
#include "temp_dir.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace parallel_compile_test_local {

std::unique_ptr<Executable> build(const char* text, const char* flags, int jobs,
                                  const std::string& cache) {
  CompileOptions o;
  o.compiler.cache_dir = cache;  // a fresh one per build: the key ignores the split
  o.compiler.jobs = jobs;
  o.fusion = fuse::FusionConfig::from_flags(flags);
  return Executable::build(std::make_shared<const Graph>(parse_graph(text)), o);
}

void expect_same_bits(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want,
                      const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].nbytes(), want[k].nbytes()) << what << " output " << k;
    EXPECT_EQ(std::memcmp(got[k].data(), want[k].data(), got[k].nbytes()), 0)
        << what << " output " << k;
  }
}

TEST(ParallelCompile, UnitsPerLaunchAndTheSameResults) {
  struct Case {
    const char* flags;
    int launches;
    std::vector<int> jobs;
  };
  // Three lone kernels; a group of two and a lone kernel (the group's
  // members and wrapper in one unit).
  const std::vector<Case> cases = {{"--disable=group", 3, {2, 8}}, {"--max_group_size=2", 2, {2}}};
  const Graph graph = parse_graph(kColumnThenRowReductions);
  for (const Case& c : cases) {
    TempDir whole_cache;
    const auto whole = build(kColumnThenRowReductions, c.flags, 1, whole_cache.path());
    EXPECT_EQ(whole->report().jit.units, 1);
    ASSERT_EQ(whole->report().launches, c.launches) << c.flags;
    for (int jobs : c.jobs) {
      TempDir cache;
      const auto split = build(kColumnThenRowReductions, c.flags, jobs, cache.path());
      const std::string what = fmt::format("{} jobs {}", c.flags, jobs);
      EXPECT_EQ(split->report().jit.compiles, 1) << what;
      EXPECT_EQ(split->report().jit.units, std::min(jobs, c.launches)) << what;
      for (auto [n, d] : std::vector<std::pair<int64_t, int64_t>>{{513, 65}, {2, 100003}}) {
        const sym::Binding binding = {{"N", n}, {"D", d}};
        const std::vector<HostTensor> in = random_inputs(graph, binding, 5);
        const std::vector<HostTensor> whole_out = whole->run(in);
        expect_outputs_near(whole_out, run_reference(graph, in), 1e-4, what);
        expect_same_bits(split->run(in), whole_out, fmt::format("{} N={} D={}", what, n, d));
      }
    }
  }
}

}  // namespace parallel_compile_test_local
}  // namespace autofuse::runtime
