// Library ops against the reference interpreter: each test builds a
// one-op graph, runs run_reference on random inputs, runs the library
// implementation on the same inputs and compares (bit-exact for data
// movement, error-bounded for matmul).
#include "runtime/library.h"

#include <chrono>
#include <cmath>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/support/host_memory.h"
#include "runtime/machine.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace library_test_local {

using sym::Expr;
using ::testing::HasSubstr;

/// A pool and scratch shared by the tests (3 threads: exercises the
/// parallel paths even on a 2-core machine).
struct Env {
  ThreadPool pool{3};
  Scratch scratch;
  LibraryContext ctx{pool, scratch, kMinBlockBytes};
};
Env& env() {
  static Env e;
  return e;
}

TensorView view_of(HostTensor& t) {
  return {t.data(), t.dtype(), t.shape()};
}
TensorView view_of(const HostTensor& t) {
  return {const_cast<void*>(t.data()), t.dtype(), t.shape()};
}

/// Runs the graph's last node through the library on `inputs` (graph inputs
/// in order; the node must read only graph inputs).
std::vector<HostTensor> run_library(const Graph& g, const std::vector<HostTensor>& inputs) {
  const sym::Binding binding = bind_symbols(g, inputs);
  const Node& node = g.nodes().back();
  std::vector<TensorView> ins;
  for (ValueId id : node.inputs) {
    auto it = std::find(g.inputs().begin(), g.inputs().end(), id);
    EXPECT_NE(it, g.inputs().end());
    ins.push_back(view_of(inputs[static_cast<size_t>(it - g.inputs().begin())]));
  }
  std::vector<HostTensor> outs;
  for (ValueId id : node.outputs) {
    const TensorType& t = g.value(id).type;
    outs.emplace_back(t.dtype, concrete_shape(t.shape, binding));
  }
  std::vector<TensorView> out_views;
  for (HostTensor& t : outs)
    out_views.push_back(view_of(t));
  run_library_node(g, node, ins, out_views, env().ctx);
  return outs;
}

void expect_bit_equal(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  if (got.nbytes() == 0) return;  // memcmp must not see null pointers
  ASSERT_EQ(std::memcmp(got.data(), want.data(), got.nbytes()), 0) << what;
}

/// Reference vs library on random inputs for one binding.
void check_movement(const Graph& g, const sym::Binding& binding, uint64_t seed,
                    const std::string& what) {
  std::vector<HostTensor> inputs = random_inputs(g, binding, seed);
  std::vector<HostTensor> want = run_reference(g, inputs);
  // The last node's outputs are the graph outputs in these tests.
  std::vector<HostTensor> got = run_library(g, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    expect_bit_equal(got[i], want[i], what);
}

const DType kMoveTypes[] = {DType::f32, DType::f16, DType::i8, DType::i64, DType::boolean};

TEST(LibraryTranspose, MatchesReference) {
  const std::vector<std::vector<int64_t>> perms = {
      {1, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}, {2, 1, 0}, {0, 1, 2}, {3, 1, 2, 0}, {0, 3, 1, 2}};
  const std::vector<std::vector<int64_t>> sizes = {
      {1, 1, 1, 1}, {3, 5, 7, 2}, {33, 65, 3, 1}, {300, 513, 2, 1}, {1, 1000, 1, 70}};
  uint64_t seed = 1;
  for (DType dt : kMoveTypes) {
    for (const auto& perm : perms) {
      for (const auto& sz : sizes) {
        GraphBuilder b("t");
        Shape shape;
        for (size_t d = 0; d < perm.size(); ++d)
          shape.push_back(Expr(sz[d]));
        Tensor x = b.input("x", dt, shape);
        Graph g = std::move(b).build({b.transpose(x, perm)});
        check_movement(g, {}, seed++,
                       fmt::format("{} perm {} sizes {}", dtype_name(dt), fmt::join(perm, ","),
                                   fmt::join(sz, ",")));
      }
    }
  }
}

TEST(LibraryTranspose, SymbolicShapes) {
  GraphBuilder b("t");
  Tensor x = b.input("x", DType::f32, {Expr::symbol("N"), Expr::symbol("D")});
  Graph g = std::move(b).build({b.transpose(x, {1, 0})});
  for (int64_t n : {1, 3, 17, 1000})
    for (int64_t d : {1, 7, 768, 1023})
      check_movement(g, {{"N", n}, {"D", d}}, static_cast<uint64_t>(n * d), "NxD");
}

TEST(LibrarySlice, MatchesReference) {
  struct Case {
    std::vector<int64_t> axes, starts, ends, steps;
  };
  const std::vector<Case> cases = {
      {{0}, {1}, {kSliceEnd}, {1}},
      {{1}, {0}, {5}, {2}},
      {{0, 1}, {-3, 2}, {kSliceEnd, -1}, {1, 3}},
      {{1}, {kSliceEnd}, {kSliceEnd}, {-1}},
      {{0}, {-1}, {kSliceEnd}, {-2}},
      {{1}, {5}, {2}, {1}},  // empty
      {{2}, {1}, {100}, {1}},
      {{0, 2}, {100, -1}, {-100, 0}, {-3, -1}},
  };
  uint64_t seed = 100;
  for (DType dt : kMoveTypes) {
    for (const Case& c : cases) {
      for (const auto& sz : std::vector<std::vector<int64_t>>{{4, 9, 3}, {67, 300, 5}}) {
        GraphBuilder b("s");
        Tensor x = b.input("x", dt, {Expr(sz[0]), Expr(sz[1]), Expr(sz[2])});
        Graph g = std::move(b).build({b.slice(x, SliceAttrs{c.axes, c.starts, c.ends, c.steps})});
        check_movement(
            g, {}, seed++,
            fmt::format("{} slice axes {} starts {} steps {}", dtype_name(dt),
                        fmt::join(c.axes, ","), fmt::join(c.starts, ","), fmt::join(c.steps, ",")));
      }
    }
  }
}

TEST(LibraryConcat, MatchesReference) {
  uint64_t seed = 200;
  for (DType dt : kMoveTypes) {
    for (int64_t axis : {0, 1, 2}) {
      for (int64_t big : {1, 5, 400}) {
        GraphBuilder b("c");
        auto shape = [&](int64_t along) {
          Shape s = {Expr(3), Expr(big), Expr(4)};
          s[static_cast<size_t>(axis)] = Expr(along);
          return s;
        };
        Tensor x = b.input("x", dt, shape(2));
        Tensor y = b.input("y", dt, shape(7));
        Tensor z = b.input("z", dt, shape(1));
        Graph g = std::move(b).build({b.concat({x, y, z, x}, axis)});
        check_movement(g, {}, seed++, fmt::format("{} concat axis {}", dtype_name(dt), axis));
      }
    }
  }
}

TEST(LibrarySplit, MatchesReference) {
  uint64_t seed = 300;
  for (DType dt : kMoveTypes) {
    for (int64_t axis : {0, 1}) {
      GraphBuilder b("s");
      Tensor x = b.input("x", dt, {Expr(12), Expr(130)});
      const int64_t n = axis == 0 ? 12 : 130;
      std::vector<Tensor> parts = b.split(x, axis, {Expr(1), Expr(n - 6), Expr(5)});
      Graph g = std::move(b).build(parts);
      check_movement(g, {}, seed++, fmt::format("{} split axis {}", dtype_name(dt), axis));
    }
  }
}

TEST(LibraryGather, MatchesReference) {
  uint64_t seed = 400;
  for (DType dt : {DType::f32, DType::f16, DType::i64, DType::boolean}) {
    for (DType it : {DType::i32, DType::i64}) {
      for (int64_t axis : {0, 1, 2}) {
        GraphBuilder b("g");
        Tensor data = b.input("data", dt, {Expr(5), Expr(6), Expr(7)});
        Tensor idx = b.input("idx", it, {Expr(2), Expr(3)});
        Graph g = std::move(b).build({b.gather(data, idx, axis)});
        check_movement(g, {}, seed++,
                       fmt::format("{} by {} axis {}", dtype_name(dt), dtype_name(it), axis));
      }
    }
  }
}

TEST(LibraryGather, LargeAndNegativeIndices) {
  GraphBuilder b("g");
  Tensor data = b.input("data", DType::f32, {Expr(1000), Expr(256)});
  Tensor idx = b.input("idx", DType::i64, {Expr(900)});
  Graph g = std::move(b).build({b.gather(data, idx, 0)});
  std::vector<HostTensor> inputs = random_inputs(g, {}, 7);
  for (int64_t i = 0; i < 900; ++i)
    inputs[1].set_i64(i, (i * 37) % 2000 - 1000);  // [-1000, 999]
  std::vector<HostTensor> want = run_reference(g, inputs);
  std::vector<HostTensor> got = run_library(g, inputs);
  expect_bit_equal(got[0], want[0], "large gather");
}

TEST(LibraryGather, IndexOutOfRangeNamesNodeAndIndex) {
  GraphBuilder b("g");
  Tensor data = b.input("data", DType::f32, {Expr(4), Expr(3)});
  Tensor idx = b.input("idx", DType::i32, {Expr(3)});
  Graph g = std::move(b).build({b.gather(data, idx, 0, "picked")});
  std::vector<HostTensor> inputs = random_inputs(g, {}, 1);
  inputs[1].set_i64(0, 1);
  inputs[1].set_i64(1, 4);  // out of range
  inputs[1].set_i64(2, 0);
  try {
    run_library(g, inputs);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().node, "picked");
    EXPECT_EQ(e.where().op, "gather");
    EXPECT_THAT(e.message(), HasSubstr("index 4"));
    EXPECT_THAT(e.message(), HasSubstr("size 4"));
  }
  inputs[1].set_i64(1, -5);
  EXPECT_THROW(run_library(g, inputs), UserError);
  inputs[1].set_i64(1, -4);
  EXPECT_NO_THROW(run_library(g, inputs));
}

/// matmul: |got - ref| within the f32/f64 accumulation bound plus the
/// rounding of the storage type (1 ulp: the reference rounds an exact-ish
/// f64 sum once, the library rounds an f32 sum once).
void check_matmul(const Graph& g, const sym::Binding& binding, uint64_t seed) {
  std::vector<HostTensor> inputs = random_inputs(g, binding, seed);
  std::vector<HostTensor> want = run_reference(g, inputs);
  std::vector<HostTensor> got = run_library(g, inputs);
  const HostTensor& a = inputs[0];
  const DType dt = a.dtype();
  const int64_t k = a.shape().back();
  const double acc_eps = dt == DType::f64 ? 2.3e-16 : 1.2e-7;
  const double store_eps = dt == DType::f16 ? 1.0 / 1024 : dt == DType::bf16 ? 1.0 / 128 : 0;
  ASSERT_EQ(got[0].shape(), want[0].shape());
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    const double w = want[0].get_f64(i), v = got[0].get_f64(i);
    // Inputs are in [-1, 1): sum |a||b| <= k.
    const double tol = acc_eps * static_cast<double>(k) + store_eps * std::abs(w) + 1e-30;
    ASSERT_LE(std::abs(v - w), tol)
        << dtype_name(dt) << " element " << i << " of " << want[0].type_string();
  }
}

TEST(LibraryMatmul, MatchesReference) {
  uint64_t seed = 500;
  for (DType dt : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    for (int64_t m : {1, 5, 17, 64}) {
      for (int64_t k : {1, 7, 33, 130}) {
        for (int64_t n : {1, 16, 33, 100}) {
          GraphBuilder b("mm");
          Tensor x = b.input("a", dt, {Expr(m), Expr(k)});
          Tensor y = b.input("b", dt, {Expr(k), Expr(n)});
          Graph g = std::move(b).build({b.matmul(x, y)});
          SCOPED_TRACE(fmt::format("{} {}x{}x{}", dtype_name(dt), m, k, n));
          check_matmul(g, {}, seed++);
        }
      }
    }
  }
}

TEST(LibraryMatmul, BroadcastBatches) {
  uint64_t seed = 600;
  struct Case {
    std::vector<int64_t> a, b;
  };
  const std::vector<Case> cases = {
      {{2, 3, 5, 7}, {7, 4}},                             // b shared: flattened
      {{3, 5, 7}, {3, 7, 4}},                             // batched
      {{2, 1, 5, 7}, {3, 7, 4}},                          // both broadcast
      {{5, 7}, {2, 3, 7, 9}},                             // a shared
      {{1, 5, 7}, {4, 1, 7, 6}}, {{2, 0, 5, 7}, {7, 4}},  // empty batch
      {{3, 4, 0}, {3, 0, 5}},                             // K = 0: zeros
  };
  for (DType dt : {DType::f32, DType::bf16}) {
    for (const Case& c : cases) {
      GraphBuilder b("mm");
      Shape sa, sb;
      for (int64_t d : c.a)
        sa.push_back(Expr(d));
      for (int64_t d : c.b)
        sb.push_back(Expr(d));
      Tensor x = b.input("a", dt, sa);
      Tensor y = b.input("b", dt, sb);
      Graph g = std::move(b).build({b.matmul(x, y)});
      SCOPED_TRACE(
          fmt::format("{} [{}] @ [{}]", dtype_name(dt), fmt::join(c.a, ","), fmt::join(c.b, ",")));
      check_matmul(g, {}, seed++);
    }
  }
}

TEST(LibraryMatmul, LargeParallel) {
  GraphBuilder b("mm");
  Tensor x = b.input("a", DType::f32, {Expr(2), Expr(130), Expr(300)});
  Tensor y = b.input("b", DType::f32, {Expr(300), Expr(257)});
  Graph g = std::move(b).build({b.matmul(x, y)});
  check_matmul(g, {}, 1);
  // Wide K that forces narrow column blocks.
  GraphBuilder b2("mm2");
  Tensor x2 = b2.input("a", DType::f32, {Expr(40), Expr(5000)});
  Tensor y2 = b2.input("b", DType::f32, {Expr(5000), Expr(70)});
  Graph g2 = std::move(b2).build({b2.matmul(x2, y2)});
  check_matmul(g2, {}, 2);
}

TEST(LibraryMatmul, SpeedIsReasonable) {
  // 512^3 f32: prints the rate; fails only if far below a naive loop's rate.
  const int64_t n = 512;
  GraphBuilder b("mm");
  Tensor x = b.input("a", DType::f32, {Expr(n), Expr(n)});
  Tensor y = b.input("b", DType::f32, {Expr(n), Expr(n)});
  Graph g = std::move(b).build({b.matmul(x, y)});
  std::vector<HostTensor> inputs = random_inputs(g, {}, 3);
  run_library(g, inputs);  // warm up
  const auto start = std::chrono::steady_clock::now();
  const int reps = 5;
  for (int r = 0; r < reps; ++r)
    run_library(g, inputs);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double gflops = 2.0 * n * n * n * reps / s / 1e9;
  std::printf("matmul %ldx%ldx%ld f32: %.1f GFLOP/s\n", static_cast<long>(n), static_cast<long>(n),
              static_cast<long>(n), gflops);
  EXPECT_GT(gflops, 1.0);
}

TEST(LibraryCreation, ConstantAndIotaMatchReference) {
  for (DType dt : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::u8, DType::boolean}) {
    {
      GraphBuilder b("c");
      std::vector<double> values = {0.1, -2.5, 3, 1e4, 0, 1};
      if (is_signed_integer(dt)) values = {1, -2, 3, 100, 0, 1};
      if (dt == DType::u8 || dt == DType::boolean) values = {1, 0, 1, 1, 0, 1};
      Tensor c = b.constant(ConstantAttrs{dt, {2, 3}, values});
      Graph g = std::move(b).build({c});
      check_movement(g, {}, 1, fmt::format("constant {}", dtype_name(dt)));
    }
    {
      GraphBuilder b("c");
      Tensor c = b.constant(ConstantAttrs{dt, {4, 5}, {is_float(dt) ? 0.3 : 1.0}});
      Graph g = std::move(b).build({c});
      check_movement(g, {}, 1, fmt::format("splat {}", dtype_name(dt)));
    }
    if (dt == DType::boolean) continue;
    for (int64_t axis : {0, 1, 2}) {
      GraphBuilder b("i");
      Tensor c = b.iota(dt, {Expr(3), Expr(300), Expr(4)}, axis);
      Graph g = std::move(b).build({c});
      check_movement(g, {}, 1, fmt::format("iota {} axis {}", dtype_name(dt), axis));
    }
  }
}

TEST(LibraryCopy, CopiesAnySize) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{1} << 20}) {
    std::vector<unsigned char> src(n), dst(n, 0);
    for (size_t i = 0; i < n; ++i)
      src[i] = static_cast<unsigned char>(i * 7 + 1);
    library_copy(dst.data(), src.data(), n, env().ctx);
    EXPECT_EQ(src, dst);
  }
}

TEST(Scratch, GrowsAndStaysAligned) {
  Scratch s;
  void* a = s.get(10);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(s.get(100), a);  // no growth needed
  void* b = s.get(1 << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
  EXPECT_GE(s.capacity(), size_t{1} << 20);
  // Past the huge-page threshold (support/host_memory.h): usable end to end,
  // kept for smaller requests, freed by the destructor.
  const size_t huge = kHugeBufferBytes + (size_t{5} << 20) + 3;
  auto* c = static_cast<unsigned char*>(s.get(huge));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c) % 64, 0u);
  std::memset(c, 0x5a, huge);
  EXPECT_EQ(c[huge - 1], 0x5a);
  EXPECT_EQ(s.get(kHugeBufferBytes), c);
  EXPECT_GE(s.capacity(), huge);
}

}  // namespace library_test_local
}  // namespace autofuse::runtime
