// Chains of gathers over one buffer (a constant Pad of several axes, index
// tables applied one axis after another), fused into one kernel as one
// Gather node with a gathered dim per gather: results equal the reference
// on f32/f16/bf16 over shapes of size 1, primes and odd tails; an index out
// of range is a UserError naming the gather it belongs to, leaves the
// inputs untouched and the Executable usable.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"
#include "test_kernel_cache.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace fused_gather_chain_test_local {

// Two gathers, a transpose between: y[a, p, q] = x[a, i[p], j[q]]^2.
const char* kTwo = R"(graph two(x: T[A, B, C], i: i64[P], j: i64[Q]) {
  g1 = gather(x, i, axis=1)
  t = transpose(g1, perm=[0, 2, 1])
  g2 = gather(t, j, axis=1)
  y = mul(g2, g2)
  return y
})";

// Three gathers (one with 2-D indices) and a row mean over the innermost
// (gathered) axis: the Reduction template with indices of every kind of
// level (per row, per element).
const char* kThree = R"(graph three(x: T[A, B, C], i: i64[P], j: i64[Q, R], k: i64[S]) {
  g1 = gather(x, k, axis=2)
  g2 = gather(g1, i, axis=0)
  g3 = gather(g2, j, axis=1)
  m = reduce_mean(g3, axes=[3], keepdims=true)
  y = sub(g3, m)
  return y
})";

std::string with_dtype(const char* text, DType t) {
  std::string s = text;
  for (size_t at = s.find("x: T["); at != std::string::npos; at = s.find("x: T[", at + 1))
    s.replace(at + 3, 1, std::string(dtype_name(t)));
  return s;
}

class FusedGatherChain : public ::testing::Test {
 protected:
  std::unique_ptr<Executable> build(const std::shared_ptr<const Graph>& graph) const {
    CompileOptions o;
    o.compiler.cache_dir = cache_;
    return Executable::build(graph, o);
  }
  const std::string cache_ = shared_test_cache();
};

double tolerance(DType t) {
  return t == DType::f32 ? 1e-5 : t == DType::f16 ? 2e-3 : 1.6e-2;
}

void expect_equal(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want, DType t,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].type_string(), want[o].type_string()) << what;
    for (int64_t e = 0; e < want[o].numel(); ++e)
      ASSERT_NEAR(got[o].get_f64(e), want[o].get_f64(e),
                  tolerance(t) * (1 + std::abs(want[o].get_f64(e))))
          << what << " element " << e;
  }
}

/// Every index of input `index` in [-n, n), spread (negatives count from the end).
void fill_indices(HostTensor& index, int64_t n, int64_t salt) {
  for (int64_t e = 0; e < index.numel(); ++e)
    index.set_i64(e, (e * 7919 + salt * 31) % (2 * n) - n);
}

TEST_F(FusedGatherChain, TwoGathersAreOneKernelAndMatchTheReference) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    auto graph = std::make_shared<const Graph>(parse_graph(with_dtype(kTwo, t)));
    auto exe = build(graph);
    EXPECT_EQ(exe->fused().num_kernels(), 1) << fuse::print_fused_graph(exe->fused());
    EXPECT_EQ(exe->fused().regions.size(), 1u) << fuse::print_fused_graph(exe->fused());
    uint64_t seed = 5;
    for (auto [a, b, c, p, q] : std::vector<std::array<int64_t, 5>>{
             {1, 1, 1, 1, 1}, {2, 3, 5, 7, 11}, {3, 13, 1, 2, 17}, {1, 5, 67, 31, 129}}) {
      sym::Binding bind{{"A", a}, {"B", b}, {"C", c}, {"P", p}, {"Q", q}};
      std::vector<HostTensor> in = random_inputs(*graph, bind, seed++);
      fill_indices(in[1], b, 1);
      fill_indices(in[2], c, 2);
      expect_equal(exe->run(in), run_reference(*graph, in), t,
                   fmt::format("{} A={} B={} C={} P={} Q={}", dtype_name(t), a, b, c, p, q));
    }
    // One module for every shape (compiled, or loaded from the shared cache).
    EXPECT_EQ(exe->report().jit.compiles + exe->report().jit.cache_hits, 1);
  }
}

TEST_F(FusedGatherChain, ThreeGathersWithARowMeanMatchTheReference) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    auto graph = std::make_shared<const Graph>(parse_graph(with_dtype(kThree, t)));
    auto exe = build(graph);
    EXPECT_EQ(exe->fused().num_kernels(), 1) << fuse::print_fused_graph(exe->fused());
    EXPECT_EQ(exe->fused().regions.size(), 1u) << fuse::print_fused_graph(exe->fused());
    uint64_t seed = 9;
    for (auto [a, b, c, p, q, r, s] : std::vector<std::array<int64_t, 7>>{
             {1, 1, 1, 1, 1, 1, 1}, {5, 3, 2, 7, 2, 3, 13}, {2, 11, 97, 3, 1, 5, 67}}) {
      sym::Binding bind{{"A", a}, {"B", b}, {"C", c}, {"P", p}, {"Q", q}, {"R", r}, {"S", s}};
      std::vector<HostTensor> in = random_inputs(*graph, bind, seed++);
      fill_indices(in[1], a, 1);  // i: axis 0 of x
      fill_indices(in[2], b, 2);  // j: axis 1
      fill_indices(in[3], c, 3);  // k: axis 2
      expect_equal(
          exe->run(in), run_reference(*graph, in), t,
          fmt::format("{} A={} B={} C={} P={} Q={} R={} S={}", dtype_name(t), a, b, c, p, q, r, s));
    }
  }
}

TEST_F(FusedGatherChain, BadIndexNamesItsGatherAndNothingIsLost) {
  struct Bad {
    const char* text;
    size_t input;        // the index input made bad
    const char* gather;  // the gather it belongs to
    int64_t bound;       // that gather's axis size
  };
  const sym::Binding two{{"A", 2}, {"B", 3}, {"C", 5}, {"P", 7}, {"Q", 11}};
  const sym::Binding three{{"A", 5}, {"B", 3}, {"C", 2}, {"P", 7}, {"Q", 2}, {"R", 3}, {"S", 13}};
  for (const Bad& bad : {Bad{kTwo, 1, "g1", 3}, Bad{kTwo, 2, "g2", 5}, Bad{kThree, 1, "g2", 5},
                         Bad{kThree, 2, "g3", 3}, Bad{kThree, 3, "g1", 2}}) {
    auto graph = std::make_shared<const Graph>(parse_graph(with_dtype(bad.text, DType::f16)));
    auto exe = build(graph);
    const bool is_two = bad.text == kTwo;
    std::vector<HostTensor> in = random_inputs(*graph, is_two ? two : three, 4);
    const std::vector<int64_t> sizes =
        is_two ? std::vector<int64_t>{3, 5} : std::vector<int64_t>{5, 3, 2};
    for (size_t k = 1; k < in.size(); ++k)
      fill_indices(in[k], sizes[k - 1], static_cast<int64_t>(k));
    const std::vector<HostTensor> good = exe->run(in);
    for (int64_t value : {bad.bound, -bad.bound - 1, int64_t{1} << 40}) {
      for (int64_t element : {int64_t{0}, in[bad.input].numel() - 1}) {
        std::vector<HostTensor> broken = in;
        broken[bad.input].set_i64(element, value);
        const std::vector<HostTensor> before = broken;
        try {
          exe->run(broken);
          ADD_FAILURE() << bad.gather << ": index " << value << " was accepted";
        } catch (const UserError& e) {
          EXPECT_EQ(std::string(e.what()),
                    fmt::format("gather '{}': index {} out of range [-{}, {})", bad.gather, value,
                                bad.bound, bad.bound));
        }
        for (size_t k = 0; k < broken.size(); ++k)
          for (int64_t e = 0; e < broken[k].numel(); ++e)
            ASSERT_EQ(broken[k].get_f64(e), before[k].get_f64(e)) << "input " << k << " changed";
        expect_equal(exe->run(in), good, DType::f16, "after the error");  // still usable
      }
    }
  }
}

}  // namespace fused_gather_chain_test_local
}  // namespace autofuse::runtime
