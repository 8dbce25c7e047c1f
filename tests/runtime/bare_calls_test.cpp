// Executable::bare_calls: the kernels of one run called directly on the
// calling thread (docs/benchmarks.md, "bare call cost") compute what run()
// computes: several kernels, kernels with several launches and a
// workspace, a kernel group, gathers, library ops between kernels and
// outputs copied from an input or another output, on 1 and 2 threads. The
// outputs are poisoned before each call, so a step that did not run fails.
// Once prepared and called, the calls allocate nothing (library ops aside,
// which allocate as in run_into); bad inputs throw
// from bare_calls as they do from run.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "autofuse/error.h"
#include "autofuse/graph/text.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"
#include "runtime/alloc_counter.h"
#include "runtime/expect_outputs.h"
#include "runtime/group_graphs.h"
#include "test_kernel_cache.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace bare_calls_test_local {

// A matmul (library) between two kernels, a transpose after them.
const char* kLibraryBetween = R"(graph lib(x: f32[N, K], w: f32[K, D]) {
  a = relu(x)
  h = matmul(a, w)
  m = reduce_max(h, axes=[1], keepdims=true)
  y = sub(h, m)
  t = transpose(y, perm=[1, 0])
  return t
})";

// Outputs that are copies: a reshape of an input, a reshape of output y.
const char* kCopiedOutputs = R"(graph c(x: f32[N, D]) {
  y = exp(x)
  r = reshape(x, shape=[N * D])
  y2 = reshape(y, shape=[D, N])
  return y, r, y2
})";

const char* kGathers = R"(graph g(i: i64[N], t: f32[V, D]) {
  a = gather(t, i, axis=0)
  s = reduce_sum(a, axes=[1], keepdims=true)
  y = sub(a, s)
  return y
})";

class BareCallsTest : public ::testing::Test {
 protected:
  std::unique_ptr<Executable> build(const char* text, const char* flags, int threads) {
    graph_ = std::make_shared<const Graph>(parse_graph(text));
    CompileOptions o;
    o.compiler.cache_dir = shared_test_cache();
    o.fusion = fuse::FusionConfig::from_flags(flags);
    o.threads = threads;
    return Executable::build(graph_, o);
  }

  /// run()'s outputs against two bare calls into poisoned outputs.
  void expect_bare_calls_match_run(Executable& exe, const sym::Binding& binding,
                                   const std::string& what) {
    std::vector<HostTensor> inputs = random_inputs(*graph_, binding, /*seed=*/3);
    const std::vector<HostTensor> want = exe.run(inputs);
    std::vector<HostTensor> outputs;
    for (const HostTensor& w : want)
      outputs.emplace_back(w.dtype(), w.shape());
    std::unique_ptr<BareCalls> bare = exe.bare_calls(inputs, outputs);
    for (int call = 0; call < 2; ++call) {
      for (HostTensor& out : outputs)
        for (int64_t i = 0; i < out.numel(); ++i)
          out.set_f64(i, std::numeric_limits<double>::quiet_NaN());
      bare->call();
      // Same kernels, tiling and order of blocks within each: equal up to
      // matmul's threading (oneDNN on 1 thread here, on `threads` in run).
      expect_outputs_near(outputs, want, 1e-6, what + ", call " + std::to_string(call));
    }
  }

  std::shared_ptr<const Graph> graph_;
};

int count_regions(const Executable& exe, fuse::RegionKind kind) {
  int n = 0;
  for (const fuse::Region& r : exe.fused().regions)
    n += r.kind == kind;
  return n;
}

TEST_F(BareCallsTest, SeveralKernelsAndKernelGroupMatchRun) {
  for (int threads : {1, 2}) {
    for (const char* flags : {"", "--disable=group"}) {
      auto exe = build(kColumnThenRowReductions, flags, threads);
      EXPECT_EQ(exe->report().kernels, 3);
      EXPECT_EQ(exe->report().launches, *flags ? 3 : 1);
      // Small (one block), many rows (split column reductions), wide rows.
      for (auto [n, d] :
           std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 13}, {100003, 3}, {1000, 257}}) {
        expect_bare_calls_match_run(
            *exe, {{"N", n}, {"D", d}},
            fmt::format("threads {} flags '{}' N={} D={}", threads, flags, n, d));
      }
    }
  }
}

TEST_F(BareCallsTest, LibraryOpsBetweenKernelsMatchRun) {
  for (int threads : {1, 2}) {
    auto exe = build(kLibraryBetween, "", threads);
    EXPECT_GE(exe->report().launches, 2);
    EXPECT_GE(count_regions(*exe, fuse::RegionKind::Library), 1);
    for (int64_t n : {1, 9, 300})
      expect_bare_calls_match_run(*exe, {{"N", n}, {"K", 33}, {"D", 20}},
                                  fmt::format("threads {} N={}", threads, n));
  }
}

TEST_F(BareCallsTest, CopiedOutputsAndGathersMatchRun) {
  for (int threads : {1, 2}) {
    auto copies = build(kCopiedOutputs, "", threads);
    for (int64_t n : {1, 40})
      expect_bare_calls_match_run(*copies, {{"N", n}, {"D", 17}},
                                  fmt::format("copies threads {} N={}", threads, n));
    auto gathers = build(kGathers, "", threads);
    for (int64_t n : {1, 300})
      expect_bare_calls_match_run(*gathers, {{"N", n}, {"V", 50}, {"D", 64}},
                                  fmt::format("gathers threads {} N={}", threads, n));
  }
}

TEST_F(BareCallsTest, CallsAllocateNothingOfTheirOwn) {
  if (!testing::can_count_allocations()) GTEST_SKIP() << "no allocation counting under ASan";
  // Kernels only: nothing. With a matmul and a transpose: what those
  // library ops allocate inside themselves, as in run_into. The bare calls
  // run library ops on one thread, so that executable has one thread too:
  // oneDNN's matmul may allocate per thread (its AVX2 gemm: one more
  // allocation per call on two threads).
  for (const auto& [text, threads] :
       {std::pair{kColumnThenRowReductions, 2}, std::pair{kLibraryBetween, 1}}) {
    auto exe = build(text, "", threads);
    const sym::Binding binding = {{"N", 1000}, {"D", 64}, {"K", 16}};
    std::vector<HostTensor> inputs = random_inputs(*graph_, binding, 1);
    std::vector<HostTensor> outputs = exe->run(inputs);
    std::unique_ptr<BareCalls> bare = exe->bare_calls(inputs, outputs);
    bare->call();  // creates the matmul primitive
    testing::start_counting_allocations();
    bare->call();
    bare->call();
    const int64_t bare_allocations = testing::stop_counting_allocations();
    testing::start_counting_allocations();
    exe->run_into(inputs, outputs);
    exe->run_into(inputs, outputs);
    const int64_t run_allocations = testing::stop_counting_allocations();
    if (text == kColumnThenRowReductions)
      EXPECT_EQ(bare_allocations, 0);
    else
      EXPECT_EQ(bare_allocations, run_allocations);
  }
}

TEST_F(BareCallsTest, BadInputsOrOutputsThrowLikeRun) {
  auto exe = build(kColumnThenRowReductions, "", 1);
  std::vector<HostTensor> inputs = random_inputs(*graph_, {{"N", 4}, {"D", 8}}, 1);
  std::vector<HostTensor> outputs = exe->run(inputs);
  // z of another shape than x.
  std::vector<HostTensor> bad = {inputs[0], HostTensor(DType::f32, {4, 9})};
  EXPECT_THROW(exe->bare_calls(bad, outputs), UserError);
  std::vector<HostTensor> wrong_outputs = {outputs[0]};
  EXPECT_THROW(exe->bare_calls(inputs, wrong_outputs), UserError);
}

}  // namespace bare_calls_test_local
}  // namespace autofuse::runtime
