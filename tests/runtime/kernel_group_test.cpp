// Kernel groups end to end (fuse::KernelGroup, codegen::KernelGroupSpec):
// kernels the partitioner cannot merge run as one launch. Results equal
// the reference and the ungrouped program for small shapes (one block runs
// every member), large ones (members side by side, dependent members in
// later launches, split reductions with a workspace) and thread counts that
// split unevenly; a bad gather index in any member names its gather; an
// empty member is skipped.
#include <array>
#include <cmath>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/error.h"
#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"
#include "runtime/expect_outputs.h"
#include "runtime/group_graphs.h"
#include "test_kernel_cache.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace kernel_group_test_local {

// Two kernels with a gather each (the column sum of one lookup, the row
// sums of another), and a reshape view between a member's output and the
// next member's input.
const char* kGathers = R"(graph two_lookups(i1: i64[N], i2: i64[N], t1: f32[V, D], t2: f32[V, D]) {
  a = gather(t1, i1, axis=0)
  ca = reduce_sum(a, axes=[0], keepdims=true)
  b = gather(t2, i2, axis=0)
  rb = reduce_sum(b, axes=[1], keepdims=false)
  rb2 = reshape(rb, shape=[N, 1])
  sb = mul(b, rb2)
  cb = reduce_max(sb, axes=[0], keepdims=true)
  return ca, cb
})";

class KernelGroup : public ::testing::Test {
 protected:
  std::unique_ptr<Executable> build(const char* text, const char* flags, int threads) const {
    CompileOptions o;
    o.compiler.cache_dir = cache_;
    o.fusion = fuse::FusionConfig::from_flags(flags);
    o.threads = threads;
    return Executable::build(std::make_shared<const Graph>(parse_graph(text)), o);
  }

  const std::string cache_ = shared_test_cache();
};

void expect_near(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want,
                 const std::string& what) {
  expect_outputs_near(got, want, 1e-4, what);
}

TEST_F(KernelGroup, DependentAndIndependentMembersMatchTheReference) {
  const Graph graph = parse_graph(kColumnThenRowReductions);
  for (int threads : {1, 2, 3}) {
    auto grouped = build(kColumnThenRowReductions, "", threads);
    EXPECT_EQ(grouped->report().kernels, 3);
    EXPECT_EQ(grouped->report().launches, 1);
    auto single = build(kColumnThenRowReductions, "--disable=group", threads);
    EXPECT_EQ(single->report().launches, 3);
    for (auto [n, d] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {7, 13}, {3, 100003}, {100003, 3}, {1000, 257}, {4096, 1024}}) {
      const sym::Binding b{{"N", n}, {"D", d}};
      const std::vector<HostTensor> in = random_inputs(graph, b, 7);
      const std::string what = fmt::format("threads {} N={} D={}", threads, n, d);
      const std::vector<HostTensor> want = run_reference(graph, in);
      const std::vector<HostTensor> got = grouped->run(in);
      expect_near(got, want, what);
      expect_near(single->run(in), got, what + " (ungrouped)");
    }
  }
}

TEST_F(KernelGroup, GathersInEveryMemberAreCheckedAndNamed) {
  const Graph graph = parse_graph(kGathers);
  for (int threads : {1, 3}) {
    auto exe = build(kGathers, "", threads);
    ASSERT_EQ(exe->report().launches, 1) << exe->report().kernels << " kernels";
    EXPECT_GE(exe->report().kernels, 2);
    for (auto [n, v, d] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {13, 5, 7}, {5003, 17, 33}, {70001, 29, 16}}) {
      const sym::Binding b{{"N", n}, {"V", v}, {"D", d}};
      std::vector<HostTensor> in = random_inputs(graph, b, 11);
      const std::string what = fmt::format("threads {} N={} V={} D={}", threads, n, v, d);
      expect_near(exe->run(in), run_reference(graph, in), what);
      // A bad index in either lookup is reported with its gather's name;
      // the Executable runs again afterwards.
      for (int which : {0, 1}) {
        std::vector<HostTensor> bad = in;
        bad[static_cast<size_t>(which)].set_f64(n - 1, static_cast<double>(v + 2));
        try {
          exe->run(bad);
          ADD_FAILURE() << what << ": no error for a bad index in i" << which + 1;
        } catch (const UserError& e) {
          EXPECT_THAT(e.what(), ::testing::HasSubstr(
                                    fmt::format("gather '{}': index {} out of range [-{}, {})",
                                                which == 0 ? "a" : "b", v + 2, v, v)))
              << what;
        }
      }
      expect_near(exe->run(in), run_reference(graph, in), what + " (after errors)");
    }
  }
}

TEST_F(KernelGroup, EmptyMembersAreSkipped) {
  // No rows: the row sums' member has nothing to write and is skipped; the
  // column statistics still have D elements (sum 0, max -inf).
  const char* text = R"(graph dep(x: f32[0, D], z: f32[0, D]) {
  cm = reduce_sum(x, axes=[0], keepdims=true)
  xc = sub(x, cm)
  rs = reduce_sum(xc, axes=[1], keepdims=true)
  y = mul(xc, rs)
  zm = reduce_max(z, axes=[0])
  return y, zm, cm
})";
  const Graph graph = parse_graph(text);
  auto exe = build(text, "", 2);
  EXPECT_EQ(exe->report().kernels, 3);
  EXPECT_EQ(exe->report().launches, 1);
  const std::vector<HostTensor> in = random_inputs(graph, {{"D", 5}}, 3);
  const std::vector<HostTensor> got = exe->run(in);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].numel(), 0);
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(got[1].get_f64(i), -INFINITY);
    EXPECT_EQ(got[2].get_f64(i), 0.0);
  }
}

TEST_F(KernelGroup, AMemberWithAnEmptyKeptAxisIsNotTiled) {
  // The column sums of x have no columns: tiling them would divide by the
  // zero tile axis, so the group does not tile that member at all.
  const char* text = R"(graph e(x: f32[N, 0], z: f32[N, D]) {
  cs = reduce_sum(x, axes=[0], keepdims=true)
  rz = reduce_sum(z, axes=[1], keepdims=true)
  cz = reduce_max(z, axes=[0], keepdims=true)
  return cs, rz, cz
})";
  const Graph graph = parse_graph(text);
  auto exe = build(text, "", 2);
  EXPECT_EQ(exe->report().launches, 1);
  EXPECT_GE(exe->report().kernels, 2);
  for (auto [n, d] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 5}, {1000, 333}}) {
    const std::vector<HostTensor> in = random_inputs(graph, {{"N", n}, {"D", d}}, 4);
    expect_near(exe->run(in), run_reference(graph, in), fmt::format("N={} D={}", n, d));
  }
}

}  // namespace kernel_group_test_local
}  // namespace autofuse::runtime
