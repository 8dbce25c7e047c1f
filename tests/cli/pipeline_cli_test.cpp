// End-to-end tests of the compile pipeline through the CLI: kernel counts,
// `run --check` against the reference on shapes that hit block and tile
// tails, compile-once for many shapes, the disk cache across processes, and
// the failure modes (no compiler, corrupt cache entry).
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "sanitizer.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace pipeline_cli_test_local {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Every example, with the symbols it has.
const char* const kExamples[] = {"layernorm.af",     "softmax.af",       "gelu.af",
                                 "chain10.af",       "rmsnorm.af",       "softmax_mask.af",
                                 "layernorm_f16.af", "layernorm_bf16.af"};

/// A compile cache of the test's own (tests that count compiles or damage
/// entries); the others use shared_cache_env().
struct Env {
  std::string cache = "AUTOFUSE_CACHE_DIR=" + make_temp_dir();
};

nlohmann::json run_json(const std::vector<std::string>& args, const std::vector<std::string>& env,
                        int expected_exit = 0) {
  CliResult r = run_cli(args, env);
  EXPECT_EQ(r.exit_code, expected_exit) << "stderr: " << r.err << "\nstdout: " << r.out;
  if (r.out.empty()) return {};
  return nlohmann::json::parse(r.out);
}

TEST(PipelineCli, EveryExampleFusesToOneKernel) {
  for (const char* example : kExamples) {
    SCOPED_TRACE(example);
    auto doc = run_json({"fuse", example_path(example), "--json"}, {});
    EXPECT_EQ(doc["kernels"], 1);
  }
}

TEST(PipelineCli, UnfusedHasOneKernelPerOp) {
  auto doc = run_json({"fuse", example_path("chain10.af"), "--unfused", "--json"}, {});
  EXPECT_EQ(doc["kernels"], 10);
}

// N x D shapes: 1, small primes, block/tile tails; the large ones only
// without sanitizers (they are slow under ASan and test nothing new there).
std::vector<std::string> shape_args() {
  std::vector<int> ns = {1, 3, 17, 1000, 4097}, ds = {1, 7, 768, 1023, 4096};
  std::vector<std::string> args;
  for (int n : ns)
    for (int d : ds) {
      if (kUnderAddressSanitizer && static_cast<long>(n) * d > 100000) continue;
      args.push_back("--shape");
      args.push_back("N=" + std::to_string(n) + ",D=" + std::to_string(d));
    }
  return args;
}

TEST(PipelineCli, RunCheckPassesOnEveryExampleAndShape) {
  for (const char* example : kExamples) {
    SCOPED_TRACE(example);
    std::vector<std::string> args = {"run", example_path(example), "--check", "--json"};
    for (const auto& a : shape_args())
      args.push_back(a);
    auto doc = run_json(args, {shared_cache_env()});
    EXPECT_EQ(doc["ok"], true);
    EXPECT_EQ(doc["kernels"], 1);
    for (const auto& run : doc["runs"]) {
      EXPECT_EQ(run["ok"], true) << run.dump();
    }
  }
}

// An integer output computed from floats (here a quantized matmul of
// dequantized int8 values: the library's sum order differs from the
// reference's, and values on a rounding tie land on either side; on this
// project's machines both shapes have elements one step apart) may differ by
// one; an integer output of integer ops stays exact.
TEST(PipelineCli, RunCheckAllowsOneStepOnIntegersComputedFromFloats) {
  const std::string path =
      write_temp_file("qmatmul.af", R"(graph qmatmul(xi: i8[N, K], wi: i8[K, M], i: i32[N, M]) {
  xc = cast(xi, to=f32)
  sx: f32[] = constant(dtype=f32, shape=[], value=0.05)
  x = mul(xc, sx)
  wc = cast(wi, to=f32)
  sw: f32[] = constant(dtype=f32, shape=[], value=0.01)
  w = mul(wc, sw)
  m = matmul(x, w)
  s: f32[] = constant(dtype=f32, shape=[], value=10)
  ms = mul(m, s)
  q = round(ms)
  lo: f32[] = constant(dtype=f32, shape=[], value=-128)
  hi: f32[] = constant(dtype=f32, shape=[], value=127)
  ql = max(q, lo)
  qc = min(ql, hi)
  y = cast(qc, to=i8)
  j = mul(i, i)
  return y, j
}
)");
  auto doc = run_json({"run", path, "--check", "--json", "--shape", "N=37,K=64,M=32", "--shape",
                       "N=1000,K=300,M=48"},
                      {shared_cache_env()});
  EXPECT_EQ(doc["ok"], true) << doc.dump();
  for (const auto& run : doc["runs"]) {
    ASSERT_EQ(run["outputs"].size(), 2u);
    EXPECT_EQ(run["outputs"][0]["atol"], 1) << run.dump();
    EXPECT_LE(run["outputs"][0]["max_abs_err"].get<double>(), 1) << run.dump();
    EXPECT_EQ(run["outputs"][1]["atol"], 0) << run.dump();
    EXPECT_EQ(run["outputs"][1]["max_abs_err"], 0) << run.dump();
  }
}

TEST(PipelineCli, UnfusedRunCheckPasses) {
  auto doc = run_json({"run", example_path("layernorm.af"), "--unfused", "--check", "--json",
                       "--shape", "N=3,D=7", "--shape", "N=17,D=1023"},
                      {shared_cache_env()});
  EXPECT_EQ(doc["ok"], true);
  EXPECT_EQ(doc["kernels"], 9);  // every op but the constant
}

TEST(PipelineCli, KernelsCompileAsParallelUnits) {
  const std::vector<std::string> args = {
      "run",        example_path("layernorm.af"), "--unfused", "--check", "--json", "--shape",
      "N=17,D=1023"};
  {
    Env env;  // nine launches: three units of three
    std::vector<std::string> three = args;
    three.insert(three.end(), {"--compile-jobs", "3"});
    auto doc = run_json(three, {env.cache});
    EXPECT_EQ(doc["ok"], true);
    EXPECT_EQ(doc["compiles"], 1);
    EXPECT_EQ(doc["compile_units"], 3);
  }
  {
    Env env;  // the environment, when the option is not given
    auto doc = run_json(args, {env.cache, "AUTOFUSE_COMPILE_JOBS=1"});
    EXPECT_EQ(doc["ok"], true);
    EXPECT_EQ(doc["compile_units"], 1);
  }
  Env env;
  std::vector<std::string> bad = args;
  bad.insert(bad.end(), {"--compile-jobs", "-1"});
  CliResult r = run_cli(bad, {env.cache});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--compile-jobs"));
  r = run_cli(args, {env.cache, "AUTOFUSE_COMPILE_JOBS=many"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("AUTOFUSE_COMPILE_JOBS=many"));
}

TEST(PipelineCli, TwentyShapesOneCompileAndSecondProcessHitsTheCache) {
  Env env;
  std::vector<std::string> args = {"run", example_path("softmax.af"), "--check", "--json"};
  for (int i = 1; i <= 20; ++i) {
    args.push_back("--shape");
    args.push_back("N=" + std::to_string(i * 7 % 23 + 1) + ",D=" + std::to_string(i * 37 + 1));
  }
  auto first = run_json(args, {env.cache});
  EXPECT_EQ(first["ok"], true);
  EXPECT_EQ(first["runs"].size(), 20u);
  EXPECT_EQ(first["compiles"], 1);
  auto second = run_json(args, {env.cache});
  EXPECT_EQ(second["compiles"], 0);
  EXPECT_EQ(second["cache_hits"], 1);
}

TEST(PipelineCli, CorruptCacheEntryIsRecompiled) {
  Env env;
  std::string dir = env.cache.substr(env.cache.find('=') + 1);
  std::vector<std::string> args = {
      "run", example_path("gelu.af"), "--check", "--json", "--shape", "N=3,D=5"};
  EXPECT_EQ(run_json(args, {env.cache})["compiles"], 1);
  int corrupted = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.path().extension() == ".so") {
      std::ofstream(entry.path(), std::ios::trunc) << "not an ELF file";
      ++corrupted;
    }
  ASSERT_GT(corrupted, 0);
  auto doc = run_json(args, {env.cache});
  EXPECT_EQ(doc["ok"], true);
  EXPECT_EQ(doc["compiles"], 1);
}

TEST(PipelineCli, MissingCompilerIsAClearError) {
  Env env;
  CliResult r = run_cli({"run", example_path("gelu.af"), "--shape", "N=3,D=5"},
                        {env.cache, "CXX=/nonexistent/bin/c++"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/bin/c++"));
}

TEST(PipelineCli, FuseDumpsEveryStage) {
  Env env;
  std::string dump = make_temp_dir();
  CliResult r = run_cli({"fuse", example_path("layernorm.af"), "--dump-dir", dump}, {env.cache});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dump))
    names.push_back(entry.path().filename());
  std::string all = ::testing::PrintToString(names);
  EXPECT_THAT(all, HasSubstr("fused"));
  EXPECT_THAT(all, HasSubstr("ascgraph"));
  EXPECT_THAT(all, HasSubstr("schedule"));
  EXPECT_THAT(all, HasSubstr(".cpp"));
}

}  // namespace pipeline_cli_test_local
}  // namespace autofuse::testing
