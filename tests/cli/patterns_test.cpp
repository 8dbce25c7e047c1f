// The pattern suite (examples/patterns/, docs/patterns.md): model fragments a
// frontend produces, each with the kernel count the pipeline must reach and
// `autofuse run --check` (compiled vs the reference interpreter) on shape
// bindings that include all-1 dims, primes and odd tails.
//
// Kernel counts come from the partition the compile pipeline itself builds
// (runtime::Executable::build, then fused()), not from fuse::partition alone:
// a graph rewrite the pipeline runs before partitioning (fuse::move_views) is
// then counted without this test knowing about it. The compiled module lands
// in the same JIT cache the `run --check` subprocess then reads (the tests'
// shared cache), so each pattern compiles once.
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "autofuse/fuse/fusion.h"
#include "autofuse/graph/text.h"
#include "autofuse/runtime/executable.h"
#include "cli/cli_runner.h"
#include "test_kernel_cache.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace patterns_test_local {

struct Pattern {
  const char* name;                 // examples/patterns/<name>.af
  int kernels;                      // the target: Kernel regions after the whole pipeline
  std::vector<std::string> shapes;  // --shape bindings for run --check
};

// gtest prints a failing parameter with this (the default is its bytes).
void PrintTo(const Pattern& p, std::ostream* os) {
  *os << p.name;
}

// (B, S) models: all ones, small primes, one full sequence, an odd batch.
const std::vector<std::string> kBatchSeq = {"B=1,S=1", "B=2,S=7", "B=3,S=13", "B=1,S=128",
                                            "B=5,S=31"};
// (N, D) graphs with both dims symbolic: vector tails in both.
const std::vector<std::string> kRowsCols = {"N=1,D=1", "N=2,D=7", "N=3,D=13", "N=128,D=1",
                                            "N=5,D=1031"};

std::vector<Pattern> patterns() {
  return {
      {"skip_layernorm", 1, kBatchSeq},
      {"rmsnorm", 1, kBatchSeq},
      {"softmax_mask", 1, kBatchSeq},
      {"swiglu", 1, kBatchSeq},
      {"rotary", 1, kBatchSeq},
      {"attention_transpose", 1, kBatchSeq},
      // V = 1 gathers row 0 (index 0 or -1) only.
      {"bert_embeddings",
       1,
       {"B=1,S=1,V=1", "B=2,S=7,V=5", "B=3,S=13,V=101", "B=1,S=128,V=1000", "B=5,S=31,V=3"}},
      {"dlrm_concat", 1, {"B=1", "B=2", "B=7", "B=31", "B=1000"}},
      // N = 1031 rows: the column sums' 64-row chunks end on a tail.
      {"batchnorm_stats", 1, {"N=1", "N=2", "N=7", "N=128", "N=1031"}},
      // N=128,D=1000: a larger all-axes sum (the tiling may split it across blocks).
      {"mse", 1, {"N=1,D=1", "N=2,D=7", "N=3,D=13", "N=5,D=31", "N=128,D=1000"}},
      {"chain30", 1, kRowsCols},
  };
}

std::string pattern_path(const Pattern& p) {
  return example_path(std::string("patterns/") + p.name + ".af");
}

// One JIT cache for the in-process build and the CLI subprocess, so each
// module compiles once: the caller's $AUTOFUSE_CACHE_DIR when set, else the
// tests' shared cache (test_kernel_cache.h).
const std::string& cache_dir() {
  static const std::string dir = [] {
    const char* env = std::getenv("AUTOFUSE_CACHE_DIR");
    return env != nullptr && *env != '\0' ? std::string(env) : shared_test_cache();
  }();
  return dir;
}

class PatternSuite : public ::testing::TestWithParam<Pattern> {};

// The header comment states the same count as the table above, so the
// examples and docs/patterns.md cannot drift from what is asserted.
TEST_P(PatternSuite, HeaderStatesTheExpectedKernelCount) {
  const Pattern& p = GetParam();
  std::ifstream in(pattern_path(p));
  ASSERT_TRUE(in) << pattern_path(p);
  std::stringstream text;
  text << in.rdbuf();
  const std::string expected =
      "# Expected: " + std::to_string(p.kernels) + (p.kernels == 1 ? " kernel" : " kernels");
  EXPECT_NE(text.str().find(expected), std::string::npos)
      << pattern_path(p) << " does not say '" << expected << "'";
}

TEST_P(PatternSuite, ReachesItsKernelCountWithNoLibraryRegion) {
  const Pattern& p = GetParam();
  auto graph = std::make_shared<const Graph>(parse_graph_file(pattern_path(p)));
  // As the CLI builds it (tools::compile_options): fusion flags from the environment.
  runtime::CompileOptions options;
  options.fusion = fuse::FusionConfig::from_env();
  options.compiler.cache_dir = cache_dir();
  std::unique_ptr<runtime::Executable> exe = runtime::Executable::build(graph, options);
  const fuse::FusedGraph& fused = exe->fused();
  int kernels = 0, library = 0;
  for (const fuse::Region& region : fused.regions) {
    kernels += region.kind == fuse::RegionKind::Kernel;
    library += region.kind == fuse::RegionKind::Library;
  }
  const std::string printed = fuse::print_fused_graph(fused);
  EXPECT_EQ(kernels, p.kernels) << printed;
  EXPECT_EQ(kernels, fused.num_kernels());
  EXPECT_EQ(kernels, exe->report().kernels) << "kernels compiled vs Kernel regions";
  EXPECT_EQ(library, 0) << "library regions remain:\n" << printed;
}

TEST_P(PatternSuite, RunCheckMatchesTheReference) {
  const Pattern& p = GetParam();
  ASSERT_GE(p.shapes.size(), 5u);
  std::vector<std::string> args = {"run", pattern_path(p), "--check", "--json"};
  for (const std::string& shape : p.shapes) {
    args.push_back("--shape");
    args.push_back(shape);
  }
  CliResult r = run_cli(args, {"AUTOFUSE_CACHE_DIR=" + cache_dir()});
  ASSERT_EQ(r.exit_code, 0) << "stderr: " << r.err << "\nstdout: " << r.out;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ok"], true);
  ASSERT_EQ(doc["runs"].size(), p.shapes.size());
  for (const auto& run : doc["runs"])
    EXPECT_EQ(run["ok"], true) << run.dump();
}

INSTANTIATE_TEST_SUITE_P(Patterns, PatternSuite, ::testing::ValuesIn(patterns()),
                         [](const ::testing::TestParamInfo<Pattern>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace patterns_test_local
}  // namespace autofuse::testing
