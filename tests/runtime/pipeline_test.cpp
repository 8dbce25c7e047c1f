// End to end: every example graph through the whole pipeline (fuse, lower,
// schedule, codegen, jit, runtime), compared with the reference
// interpreter over many shapes, fused and unfused; compile caching across
// shapes and Executables; dumps; input errors; zero-size tensors; no
// allocation in run_into once a shape has run.
//
// Tolerance (f32): |got - ref| <= 1e-5 * (1 + |ref|) per element. Kernels
// compute in f32 like the reference, but reductions sum in another order
// and the prelude's exp/erf/tanh are within a few ulp of libm; 1e-5 leaves
// ~2 orders of magnitude of headroom over what that costs for rows of ~1000
// values in [-1, 1) while still catching any indexing or tail bug.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"
#include "runtime/alloc_counter.h"
#include "temp_dir.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace pipeline_test_local {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::shared_ptr<const Graph> load_example(const std::string& name) {
  return std::make_shared<Graph>(
      parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/" + name + ".af"));
}

CompileOptions options_in(const std::string& cache_dir, bool fused = true) {
  CompileOptions o;
  o.compiler.cache_dir = cache_dir;
  o.fusion.enabled = fused;
  return o;
}

/// Element-wise comparison with the documented f32 tolerance.
void expect_close(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].type_string(), want[o].type_string()) << what;
    double worst = 0;
    int64_t worst_at = -1;
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const double w = want[o].get_f64(i), v = got[o].get_f64(i);
      if (std::isnan(w) && std::isnan(v)) continue;
      const double excess = std::abs(v - w) / (1 + std::abs(w));
      if (!(excess <= worst)) {  // also catches NaN
        worst = std::isnan(excess) ? INFINITY : excess;
        worst_at = i;
      }
    }
    EXPECT_LE(worst, 1e-5) << what << ", output " << o << " element " << worst_at << ": got "
                           << got[o].get_f64(worst_at) << ", want " << want[o].get_f64(worst_at);
  }
}

const std::vector<int64_t> kNs = {1, 3, 17, 1000};
const std::vector<int64_t> kDs = {1, 7, 768, 1023};

class Examples : public ::testing::TestWithParam<std::string> {};

TEST_P(Examples, FusedMatchesReferenceOnEveryShape) {
  TempDir cache;
  auto graph = load_example(GetParam());
  auto exe = Executable::build(graph, options_in(cache.path()));
  EXPECT_EQ(exe->report().kernels, 1) << fuse::print_fused_graph(exe->fused());
  EXPECT_EQ(exe->fused().num_kernels(), 1);
  uint64_t seed = 1;
  for (int64_t n : kNs) {
    for (int64_t d : kDs) {
      std::vector<HostTensor> in = random_inputs(*graph, {{"N", n}, {"D", d}}, seed++);
      expect_close(exe->run(in), run_reference(*graph, in),
                   fmt::format("{} N={} D={}", GetParam(), n, d));
    }
  }
  // 16 shapes (and a second round through the shape cache): one compile.
  for (int64_t n : {1000, 3}) {
    std::vector<HostTensor> in = random_inputs(*graph, {{"N", n}, {"D", 768}}, seed++);
    expect_close(exe->run(in), run_reference(*graph, in), "again");
  }
  EXPECT_EQ(exe->report().jit.compiles, 1);
  EXPECT_EQ(exe->report().jit.compiles + exe->report().jit.cache_hits, 1);
}

TEST_P(Examples, UnfusedMatchesReference) {
  TempDir cache;
  auto graph = load_example(GetParam());
  auto exe = Executable::build(graph, options_in(cache.path(), /*fused=*/false));
  EXPECT_GT(exe->report().kernels, 1);
  EXPECT_EQ(exe->report().jit.compiles, 1);  // every kernel in one module
  uint64_t seed = 100;
  for (int64_t n : {1, 17}) {
    for (int64_t d : {7, 1023}) {
      std::vector<HostTensor> in = random_inputs(*graph, {{"N", n}, {"D", d}}, seed++);
      expect_close(exe->run(in), run_reference(*graph, in),
                   fmt::format("unfused {} N={} D={}", GetParam(), n, d));
    }
  }
}

TEST_P(Examples, RunIntoAllocatesNothingOnceAShapeHasRun) {
  if (!testing::can_count_allocations()) GTEST_SKIP() << "no allocation counting under ASan";
  TempDir cache;
  auto graph = load_example(GetParam());
  auto exe = Executable::build(graph, options_in(cache.path()));
  for (auto [n, d] : std::vector<std::pair<int64_t, int64_t>>{{3, 7}, {1000, 1023}}) {
    std::vector<HostTensor> in = random_inputs(*graph, {{"N", n}, {"D", d}}, 5);
    std::vector<HostTensor> want = run_reference(*graph, in);
    std::vector<HostTensor> out;
    for (const HostTensor& w : want)
      out.emplace_back(w.dtype(), w.shape());
    exe->run_into(in, out);  // first run of this shape: plans and allocates
    testing::start_counting_allocations();
    exe->run_into(in, out);
    exe->run_into(in, out);
    EXPECT_EQ(testing::stop_counting_allocations(), 0) << GetParam() << " N=" << n << " D=" << d;
    expect_close(out, want, "run_into");
  }
}

INSTANTIATE_TEST_SUITE_P(Runtime, Examples,
                         ::testing::Values("chain10", "gelu", "layernorm", "rmsnorm", "softmax"),
                         [](const auto& info) { return info.param; });

TEST(Pipeline, SecondBuildHitsTheDiskCache) {
  TempDir cache;
  auto graph = load_example("softmax");
  auto first = Executable::build(graph, options_in(cache.path()));
  EXPECT_EQ(first->report().jit.compiles, 1);
  EXPECT_EQ(first->report().jit.cache_hits, 0);
  auto second = Executable::build(graph, options_in(cache.path()));
  EXPECT_EQ(second->report().jit.compiles, 0);
  EXPECT_EQ(second->report().jit.cache_hits, 1);
  std::vector<HostTensor> in = random_inputs(*graph, {{"N", 5}, {"D", 33}}, 1);
  expect_close(second->run(in), first->run(in), "second build");
}

TEST(Pipeline, ReportsPassTimesAndDumps) {
  TempDir cache, dumps;
  auto graph = load_example("layernorm");
  CompileOptions o = options_in(cache.path());
  o.dump_dir = dumps.path() + "/out";
  auto exe = Executable::build(graph, o);
  std::vector<std::string> passes;
  for (const auto& [name, seconds] : exe->report().pass_seconds) {
    passes.push_back(name);
    EXPECT_GE(seconds, 0) << name;
  }
  EXPECT_THAT(passes, ::testing::ElementsAre(
                          "fuse::move_views", "fuse::partition", "fuse::group_kernels",
                          "ascir::lower_region", "ascir::elide_casts", "schedule::schedule_kernel",
                          "codegen::generate_cpu_module", "jit::compile_and_load"));
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(o.dump_dir))
    files.push_back(e.path().filename());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 5u) << fmt::format("{}", fmt::join(files, " "));
  EXPECT_EQ(files[0], "00_move_views.txt");
  EXPECT_EQ(files[1], "01_fused.txt");
  EXPECT_THAT(files[2], ::testing::MatchesRegex("02_.*_ascgraph\\.txt"));
  EXPECT_THAT(files[3], ::testing::MatchesRegex("03_.*_schedule\\.txt"));
  EXPECT_EQ(files[4], "module.cpp");
  std::ifstream module(o.dump_dir + "/module.cpp");
  std::string text((std::istreambuf_iterator<char>(module)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("_kernel("));
}

TEST(Pipeline, DumpFolderFromTheEnvironment) {
  TempDir cache, dumps;
  const std::string dir = dumps.path() + "/env";
  ::setenv("AUTOFUSE_DUMP", dir.c_str(), 1);
  std::unique_ptr<Executable> exe;
  try {
    exe = Executable::build(load_example("softmax"), options_in(cache.path()));
  } catch (...) {
    ::unsetenv("AUTOFUSE_DUMP");
    throw;
  }
  ::unsetenv("AUTOFUSE_DUMP");
  EXPECT_TRUE(fs::exists(dir + "/01_fused.txt"));
  EXPECT_TRUE(fs::exists(dir + "/module.cpp"));
}

TEST(Pipeline, GuardViolationIsAUserError) {
  TempDir cache;
  // Broadcasting D against E records the guard D == E.
  auto graph = std::make_shared<Graph>(parse_graph(R"(
graph g(x: f32[N, D], y: f32[N, E]) {
  z = add(x, y)
  return z
})"));
  auto exe = Executable::build(graph, options_in(cache.path()));
  std::vector<HostTensor> ok = {HostTensor(DType::f32, {2, 5}), HostTensor(DType::f32, {2, 5})};
  exe->run(ok);
  std::vector<HostTensor> bad = {HostTensor(DType::f32, {2, 5}), HostTensor(DType::f32, {2, 6})};
  try {
    exe->run(bad);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("D"));
    EXPECT_THAT(e.what(), HasSubstr("E"));
  }
}

TEST(Pipeline, WrongInputsAreUserErrors) {
  TempDir cache;
  auto graph = load_example("gelu");
  auto exe = Executable::build(graph, options_in(cache.path()));
  std::vector<HostTensor> good = random_inputs(*graph, {{"N", 3}, {"D", 8}}, 1);
  exe->run(good);
  // Missing input.
  EXPECT_THROW(exe->run(std::span<const HostTensor>(good.data(), 1)), UserError);
  // Bias of the wrong length.
  std::vector<HostTensor> bad = {good[0], HostTensor(DType::f32, {9})};
  try {
    exe->run(bad);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bias"));
  }
  // Wrong dtype.
  std::vector<HostTensor> f16 = {HostTensor(DType::f16, {3, 8}), good[1]};
  EXPECT_THROW(exe->run(f16), UserError);
  // Wrong output tensors for run_into.
  std::vector<HostTensor> out = {HostTensor(DType::f32, {3, 9})};
  EXPECT_THROW(exe->run_into(good, out), UserError);
}

TEST(Pipeline, ZeroSizeTensors) {
  TempDir cache;
  auto graph = std::make_shared<Graph>(parse_graph(R"(
graph z(x: f32[N, 0], y: f32[0, D]) {
  s = reduce_sum(x, axes=[1], keepdims=true)
  e = exp(y)
  return s, e
})"));
  auto exe = Executable::build(graph, options_in(cache.path()));
  for (int64_t n : {1, 5}) {
    std::vector<HostTensor> in = random_inputs(*graph, {{"N", n}, {"D", 3}}, 1);
    expect_close(exe->run(in), run_reference(*graph, in), "zero size");
  }
}

TEST(Pipeline, LibraryOnlyGraphCompilesNothing) {
  TempDir cache;
  auto graph = std::make_shared<Graph>(parse_graph(R"(
graph m(a: f32[M, K], b: f32[K, N]) {
  c = matmul(a, b)
  t = transpose(c, perm=[1, 0])
  return t
})"));
  auto exe = Executable::build(graph, options_in(cache.path()));
  EXPECT_EQ(exe->report().kernels, 0);
  EXPECT_EQ(exe->report().jit.compiles + exe->report().jit.cache_hits, 0);
  std::vector<HostTensor> in = random_inputs(*graph, {{"M", 5}, {"K", 9}, {"N", 7}}, 1);
  expect_close(exe->run(in), run_reference(*graph, in), "matmul");
}

TEST(Pipeline, MixedKernelsAndLibraryOps) {
  TempDir cache;
  auto graph = std::make_shared<Graph>(parse_graph(R"(
graph mlp(x: f32[N, K], w: f32[K, D], bias: f32[D]) {
  h = matmul(x, w)
  hb = add(h, bias)
  r = relu(hb)
  m = reduce_max(r, axes=[1], keepdims=true)
  y = sub(r, m)
  f = reshape(y, shape=[N * D])
  return f, h
})"));
  auto exe = Executable::build(graph, options_in(cache.path()));
  for (int64_t n : {1, 9, 300}) {
    std::vector<HostTensor> in = random_inputs(*graph, {{"N", n}, {"K", 33}, {"D", 20}}, 1);
    std::vector<HostTensor> want = run_reference(*graph, in);
    std::vector<HostTensor> got = exe->run(in);
    // matmul accumulates in f32 (the reference in f64): compare loosely.
    ASSERT_EQ(got.size(), 2u);
    for (size_t o = 0; o < 2; ++o) {
      ASSERT_EQ(got[o].type_string(), want[o].type_string());
      for (int64_t i = 0; i < want[o].numel(); ++i)
        ASSERT_NEAR(got[o].get_f64(i), want[o].get_f64(i), 1e-4) << o << " " << i;
    }
  }
}

}  // namespace pipeline_test_local
}  // namespace autofuse::runtime
