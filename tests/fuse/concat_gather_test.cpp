// move_views' concat_unequal_by_gather: a concat of a few pieces of unequal
// static extent that a computation reads becomes where-over-clamped-gathers
// (no concat left), equal to the reference on several shapes, and the
// consumer's kernel reads the pieces (kernel counts); concats that only
// library ops or the graph outputs read, along the innermost dim, of more
// than four pieces or of symbolic extent stay.
#include <cmath>

#include "autofuse/fuse/move_views.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace concat_gather_test_local {

using fuse_test::count_op;
using fuse_test::parse;

/// The rewritten graph computes what the original does (reference interpreter).
void expect_same_results(const Graph& before, const Graph& after,
                         const std::vector<sym::Binding>& bindings) {
  for (const sym::Binding& b : bindings) {
    const std::vector<HostTensor> in = random_inputs(before, b, 5);
    const std::vector<HostTensor> want = run_reference(before, in);
    const std::vector<HostTensor> got = run_reference(after, in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o) {
      ASSERT_EQ(got[o].type_string(), want[o].type_string());
      for (int64_t i = 0; i < want[o].numel(); ++i)
        ASSERT_EQ(got[o].get_f64(i), want[o].get_f64(i)) << "output " << o << " element " << i;
    }
  }
}

TEST(ConcatUnequalByGather, MiddleAxisOfBuffersIsOneKernel) {
  auto g = parse(R"(graph g(a: f32[N, 3, 4], b: f32[N, 5, 4], c: f32[N, 1, 4], s: f32[9, 4]) {
  x = concat(a, b, c, axis=1)
  y = mul(x, s)
  r = relu(y)
  t = reduce_sum(r, axes=[1, 2], keepdims=true)
  return r, t
})");
  const MoveViewsResult moved = move_views(g);
  ASSERT_EQ(moved.by_rewrite.size(), 1u);
  EXPECT_EQ(moved.by_rewrite[0].first, "concat_unequal_by_gather");
  EXPECT_EQ(count_op(*moved.graph, OpKind::Concat), 0);
  EXPECT_EQ(count_op(*moved.graph, OpKind::Gather), 3);
  expect_same_results(*g, *moved.graph, {{{"N", 1}}, {{"N", 7}}, {{"N", 64}}});
  const FusedGraph fused = partition(moved.graph, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1) << print_fused_graph(fused);
  EXPECT_EQ(fused.regions.size(), 1u) << print_fused_graph(fused);
}

TEST(ConcatUnequalByGather, OuterAndMiddleAxes) {
  for (const char* text : {R"(graph g(a: f32[2, D], b: f32[5, D]) {
  x = concat(a, b, axis=0)
  y = exp(x)
  return y
})",
                           R"(graph g(a: bf16[B, 1, D], b: bf16[B, 4, D], c: bf16[B, 2, D]) {
  x = concat(a, b, c, axis=1)
  y = neg(x)
  m = reduce_max(y, axes=[1], keepdims=true)
  return m
})"}) {
    auto g = parse(text);
    const MoveViewsResult moved = move_views(g);
    EXPECT_EQ(count_op(*moved.graph, OpKind::Concat), 0) << text;
    expect_same_results(*g, *moved.graph,
                        {{{"D", 1}, {"B", 1}}, {{"D", 13}, {"B", 3}}, {{"D", 64}, {"B", 2}}});
    EXPECT_EQ(partition(moved.graph, FusionConfig{}).num_kernels(), 1) << text;
  }
}

TEST(ConcatUnequalByGather, AComputedPieceIsAKernelInTheSameLaunch) {
  auto g = parse(R"(graph g(a: f32[3, N], b: f32[5, N]) {
  ea = exp(a)
  x = concat(ea, b, axis=0)
  y = relu(x)
  return y
})");
  const MoveViewsResult moved = move_views(g);
  EXPECT_EQ(count_op(*moved.graph, OpKind::Concat), 0);
  FusedGraph fused = partition(moved.graph, FusionConfig{});
  group_kernels(fused, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 2);
  EXPECT_EQ(fused.num_launches(), 1);
  EXPECT_EQ(fused.regions.size(), 2u);  // no library concat
}

TEST(ConcatUnequalByGather, ConcatsThatNoComputationReadsOrTooLargeStay) {
  for (const char* text :
       {// Only a graph output and a matmul read it: a copy is the fastest.
        R"(graph g(a: f32[3, N], b: f32[5, N], w: f32[N, 2]) {
  x = concat(a, b, axis=0)
  m = matmul(x, w)
  return x, m
})",
        // Symbolic extent: no static offsets.
        R"(graph g(a: f32[K, N], b: f32[5, N]) {
  x = concat(a, b, axis=0)
  y = relu(x)
  return y
})",
        // The innermost dim (trailing 1s do not count): the gathers'
        // indices would vary in the vector loop.
        R"(graph g(a: f32[N, 3, 1], b: f32[N, 5, 1]) {
  x = concat(a, b, axis=1)
  y = relu(x)
  return y
})",
        // Five pieces: every element would evaluate five gathers.
        R"(graph g(a: f32[1, N], b: f32[2, N], c: f32[3, N], d: f32[4, N], e: f32[5, N]) {
  x = concat(a, b, c, d, e, axis=0)
  y = relu(x)
  return y
})"}) {
    auto g = parse(text);
    const MoveViewsResult moved = move_views(g);
    EXPECT_EQ(count_op(*moved.graph, OpKind::Concat), 1) << text;
    for (const auto& [name, count] : moved.by_rewrite)
      EXPECT_NE(name, "concat_unequal_by_gather") << text;
  }
}

}  // namespace concat_gather_test_local
}  // namespace autofuse::fuse
