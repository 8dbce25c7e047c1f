// library_matmul through oneDNN against the reference interpreter: odd
// shapes, every broadcast pattern (including ones that need the per-batch
// fallback), K = 0, empty outputs, f16/bf16/f64, and the primitive cache
// (a repeated shape creates nothing and allocates nothing of ours).
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "runtime/alloc_counter.h"
#include "runtime/library.h"
#include "runtime/machine.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace library_matmul_test_local {

using sym::Expr;

struct MatmulEnv {
  ThreadPool pool{3};
  Scratch scratch;
  DnnlCache cache;
  LibraryContext ctx{pool, scratch, kMinBlockBytes, &cache};
};

Graph matmul_graph(DType dt, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  GraphBuilder g("mm");
  Shape sa, sb;
  for (int64_t d : a)
    sa.push_back(Expr(d));
  for (int64_t d : b)
    sb.push_back(Expr(d));
  Tensor x = g.input("a", dt, sa);
  Tensor y = g.input("b", dt, sb);
  return std::move(g).build({g.matmul(x, y)});
}

TensorView view_of(const HostTensor& t) {
  return {const_cast<void*>(t.data()), t.dtype(), t.shape()};
}

/// Runs library_matmul on the graph's inputs into a fresh output tensor.
HostTensor run_matmul(const Graph& g, const std::vector<HostTensor>& in, LibraryContext& ctx) {
  const TensorType& t = g.value(g.outputs()[0]).type;
  std::vector<int64_t> shape;
  for (const Expr& d : t.shape)
    shape.push_back(*d.as_const());
  HostTensor out(t.dtype, shape);
  // Poison the output: every element must be written (K = 0 included).
  if (out.nbytes() > 0) std::memset(out.data(), 0x7f, out.nbytes());
  library_matmul(view_of(in[0]), view_of(in[1]), view_of(out), ctx);
  return out;
}

/// |got - want| within the accumulation bound (inputs in [-1, 1), so the
/// sum of |a||b| is at most K) plus one rounding of the storage type.
void check(DType dt, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
           LibraryContext& ctx, uint64_t seed) {
  SCOPED_TRACE(fmt::format("{} [{}] @ [{}]", dtype_name(dt), fmt::join(a, ","), fmt::join(b, ",")));
  Graph g = matmul_graph(dt, a, b);
  std::vector<HostTensor> in = random_inputs(g, {}, seed);
  const HostTensor want = run_reference(g, in)[0];
  const HostTensor got = run_matmul(g, in, ctx);
  ASSERT_EQ(got.shape(), want.shape());
  const double k = static_cast<double>(a.back());
  const double acc_eps = dt == DType::f64 ? 2.3e-16 : 1.2e-7;
  const double store_eps = dt == DType::f16 ? 1.0 / 1024 : dt == DType::bf16 ? 1.0 / 128 : 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.get_f64(i), v = got.get_f64(i);
    ASSERT_LE(std::abs(v - w), acc_eps * k + store_eps * std::abs(w) + 1e-30)
        << "element " << i << " of " << want.type_string();
  }
}

TEST(OneDnnMatmul, OddShapesEveryDtype) {
  MatmulEnv env;
  uint64_t seed = 1;
  for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64})
    for (int64_t m : {1, 3, 31})
      for (int64_t k : {1, 17, 129})
        for (int64_t n : {1, 5, 67})
          check(dt, {m, k}, {k, n}, env.ctx, seed++);
}

TEST(OneDnnMatmul, BroadcastBatchPatterns) {
  MatmulEnv env;
  struct Case {
    std::vector<int64_t> a, b;
  };
  const std::vector<Case> cases = {
      {{2, 3, 5, 7}, {7, 4}},              // b shared: folded into M
      {{3, 5, 7}, {3, 7, 4}},              // plain batch
      {{2, 1, 5, 7}, {3, 7, 4}},           // a broadcast along one dim, b along another
      {{5, 7}, {2, 3, 7, 9}},              // a shared
      {{1, 5, 7}, {4, 1, 7, 6}},           // leading size-1 dims
      {{2, 3, 1, 5, 7}, {1, 3, 4, 7, 2}},  // mixed patterns, merged
      // Alternating patterns: more merged dims than one primitive takes.
      {{2, 1, 2, 1, 2, 3, 4}, {1, 2, 1, 2, 1, 4, 5}},
      {{1, 1, 3, 5}, {1, 1, 5, 2}},  // all batch dims 1
  };
  uint64_t seed = 100;
  for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64})
    for (const Case& c : cases)
      check(dt, c.a, c.b, env.ctx, seed++);
}

TEST(OneDnnMatmul, F16IsTheF32ProductRoundedOnce) {
  // Whether oneDNN multiplies f16 natively or via f32 copies, the result
  // must be the f32 product of the (exactly widened) inputs, rounded once.
  MatmulEnv env;
  for (auto [m, k, n] : {std::array<int64_t, 3>{37, 29, 45}, {1, 8, 1}, {64, 64, 64}}) {
    Graph g = matmul_graph(DType::f16, {m, k}, {k, n});
    std::vector<HostTensor> in = random_inputs(g, {}, static_cast<uint64_t>(m));
    std::vector<HostTensor> in32;
    for (const HostTensor& t : in) {
      HostTensor w(DType::f32, t.shape());
      for (int64_t i = 0; i < t.numel(); ++i)
        w.set_f64(i, t.get_f64(i));
      in32.push_back(std::move(w));
    }
    const HostTensor got = run_matmul(g, in, env.ctx);
    const HostTensor want32 = run_matmul(matmul_graph(DType::f32, {m, k}, {k, n}), in32, env.ctx);
    for (int64_t i = 0; i < got.numel(); ++i) {
      HostTensor rounded(DType::f16, {});
      rounded.set_f64(0, want32.get_f64(i));
      ASSERT_EQ(got.data_as<uint16_t>()[i], rounded.data_as<uint16_t>()[0]) << "element " << i;
    }
  }
}

TEST(OneDnnMatmul, EmptyDimsAndZeroK) {
  MatmulEnv env;
  uint64_t seed = 200;
  for (DType dt : {DType::f32, DType::f16, DType::f64}) {
    check(dt, {3, 4, 0}, {3, 0, 5}, env.ctx, seed++);  // K = 0: zeros, every element written
    check(dt, {6, 0}, {0, 1}, env.ctx, seed++);
    check(dt, {0, 4}, {4, 5}, env.ctx, seed++);  // empty output
    check(dt, {2, 0, 5, 7}, {7, 4}, env.ctx, seed++);
  }
}

TEST(OneDnnMatmul, LargeSquareMatchesReference) {
  MatmulEnv env;
  check(DType::f32, {257, 300}, {300, 129}, env.ctx, 7);
  check(DType::bf16, {2, 130, 300}, {300, 257}, env.ctx, 8);
}

TEST(OneDnnMatmul, WorksWithoutACache) {
  ThreadPool pool(2);
  Scratch scratch;
  LibraryContext ctx{pool, scratch, kMinBlockBytes};
  check(DType::f32, {2, 9, 13}, {13, 6}, ctx, 300);
  check(DType::f16, {9, 13}, {2, 13, 6}, ctx, 301);
}

int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

TEST(OneDnnMatmul, ScopedOmpThreadsSetsAndRestoresTheBound) {
  const int before = ScopedOmpThreads::current();
  {
    const ScopedOmpThreads one(1);
    EXPECT_EQ(ScopedOmpThreads::current(), 1);
    {
      const ScopedOmpThreads three(3);
      EXPECT_EQ(ScopedOmpThreads::current(), 3);
    }
    EXPECT_EQ(ScopedOmpThreads::current(), 1);
  }
  EXPECT_EQ(ScopedOmpThreads::current(), before);
}

// A one-thread context must not start oneDNN's OpenMP team. ctest runs each
// test in its own process, where no team exists yet, so an unbounded oneDNN
// would add threads here (when the whole binary runs at once, an earlier
// test may have started the team already, and the check still holds).
TEST(OneDnnMatmul, OneThreadContextStartsNoThreads) {
  ThreadPool pool(1);
  Scratch scratch;
  DnnlCache cache;
  LibraryContext ctx{pool, scratch, kMinBlockBytes, &cache};
  const int before = thread_count();
  check(DType::f32, {256, 256}, {256, 256}, ctx, 11);  // big enough to parallelize
  EXPECT_EQ(thread_count(), before);
}

TEST(OneDnnMatmul, CacheReusesPrimitivesPerShape) {
  MatmulEnv env;
  Graph g = matmul_graph(DType::f32, {4, 33, 65}, {65, 17});
  Graph h = matmul_graph(DType::f32, {3, 33, 65}, {3, 65, 17});
  std::vector<HostTensor> in_g = random_inputs(g, {}, 1), in_h = random_inputs(h, {}, 2);
  run_matmul(g, in_g, env.ctx);
  EXPECT_EQ(env.cache.size(), 1);
  run_matmul(h, in_h, env.ctx);
  EXPECT_EQ(env.cache.size(), 2);
  const HostTensor first = run_matmul(g, in_g, env.ctx);
  run_matmul(h, in_h, env.ctx);
  EXPECT_EQ(env.cache.size(), 2);  // nothing new for shapes seen before
  // Same shape, same primitive: bit-identical results.
  const HostTensor again = run_matmul(g, in_g, env.ctx);
  ASSERT_EQ(std::memcmp(first.data(), again.data(), first.nbytes()), 0);
}

TEST(OneDnnMatmul, RepeatedShapeAllocatesLittle) {
  if (!testing::can_count_allocations()) GTEST_SKIP() << "no allocation counting under ASan";
  MatmulEnv env;
  Graph g = matmul_graph(DType::f32, {2, 64, 96}, {96, 80});
  std::vector<HostTensor> in = random_inputs(g, {}, 3);
  HostTensor out(DType::f32, {2, 64, 80});
  library_matmul(view_of(in[0]), view_of(in[1]), view_of(out), env.ctx);
  testing::start_counting_allocations();
  for (int r = 0; r < 10; ++r)
    library_matmul(view_of(in[0]), view_of(in[1]), view_of(out), env.ctx);
  const int64_t allocations = testing::stop_counting_allocations();
  std::printf("oneDNN matmul: %.1f heap allocations per run\n", allocations / 10.0);
  // Nothing of ours (no primitive, memory or scratch); oneDNN's execute
  // builds a small argument map per call.
  EXPECT_LE(allocations, 10 * 8);
}

}  // namespace library_matmul_test_local
}  // namespace autofuse::runtime
