// Lowering of movement ops inside kernels (fuse/view_ops.h): view leaves
// become Loads (or Gathers) with composed strides and offsets, concat
// outputs become one Store per piece, tied transposes/reshapes relabel axes.
// Each graph is partitioned for real and must give one kernel; the Load and
// Store lines are checked as text. (End-to-end results: tests/cli
// patterns_test.cpp and the fuzz test.)
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/ascir/lower.h"
#include "autofuse/fuse/fusion.h"
#include "autofuse/graph/text.h"

namespace autofuse::ascir {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace lower_views_test_local {

using ::testing::Contains;
using ::testing::HasSubstr;

/// The lines of the one kernel's AscGraph (after lowering, before merges).
std::vector<std::string> lower_single_kernel(const std::string& text) {
  auto graph = std::make_shared<const Graph>(parse_graph(text));
  fuse::FusedGraph fused = fuse::partition(graph, fuse::FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 1) << fuse::print_fused_graph(fused);
  EXPECT_EQ(fused.regions.size(), 1u) << fuse::print_fused_graph(fused);
  std::vector<std::string> lines;
  for (const fuse::Region& region : fused.regions) {
    if (region.kind != fuse::RegionKind::Kernel) continue;
    const AscGraph g = lower_region(*graph, region);
    const std::string printed = print_asc_graph(g);
    EXPECT_EQ(print_asc_graph(parse_asc_graph(printed)), printed);
    std::istringstream in(printed);
    for (std::string line; std::getline(in, line);)
      lines.push_back(line.substr(line.find_first_not_of(' ')));
  }
  return lines;
}

TEST(LowerViews, SplitHalvesAreTwoLoadsOfOneBuffer) {
  const auto lines = lower_single_kernel(R"(graph g(x: f32[N, 128]) {
  a, b = split(x, axis=1, sizes=[64, 64])
  y = mul(a, b)
  return y
})");
  EXPECT_THAT(lines, Contains("%0 x = data(arg=0) : f32 repeats[1, 1]"));
  EXPECT_THAT(lines,
              Contains("%1 a_load = load(%0) : f32 repeats[N, 64] strides[128, 1] offset 0"));
  EXPECT_THAT(lines,
              Contains("%2 b_load = load(%0) : f32 repeats[N, 64] strides[128, 1] offset 64"));
}

TEST(LowerViews, TransposeOfAnInputPermutesStrides) {
  const auto lines = lower_single_kernel(R"(graph g(x: f32[B, S, 4, 16]) {
  t = transpose(x, perm=[0, 2, 1, 3])
  y = neg(t)
  return y
})");
  EXPECT_THAT(lines, Contains("%1 t_load = load(%0) : f32 repeats[B, 4, S, 16] strides[64*S, 16, "
                              "64, 1] offset 0"));
}

TEST(LowerViews, SlicesWithStepsComposeThroughATranspose) {
  // t = x^T; s = t[1:, ::-2]: element (i, j) of s is x[7 - 2j, 1 + i].
  const auto lines = lower_single_kernel(R"(graph g(x: f32[8, N]) {
  t = transpose(x, perm=[1, 0])
  s = slice(t, axes=[0, 1], starts=[1, -1], ends=[end, end], steps=[1, -2])
  y = exp(s)
  return y
})");
  EXPECT_THAT(lines, Contains(HasSubstr("s_load = load(%0) : f32 repeats[N - 1, 4] strides[1, "
                                        "-2*N] offset 7*N + 1")));
}

TEST(LowerViews, GatherIndexesOneDimOfItsTable) {
  const auto lines = lower_single_kernel(R"(graph g(ids: i64[B, S], table: f32[V, 32]) {
  e = gather(table, ids, axis=0)
  y = mul(e, e)
  return y
})");
  EXPECT_THAT(lines, Contains(HasSubstr("e = gather(%2, %3, stride=32, size=V) : f32 "
                                        "repeats[B, S, 32] strides[0, 0, 1] offset 0")));
}

TEST(LowerViews, ChainOfTwoGathersIsOneGatherOfTwoDims) {
  // y[n, p, q] = x[n, i[p], j[q]]: one Gather, one index per gathered dim
  // (the buffer's side first), each on its own loop axis.
  const auto lines = lower_single_kernel(R"(graph g(x: f32[N, 5, 7], i: i64[9], j: i64[11]) {
  a = gather(x, i, axis=1)
  b = gather(a, j, axis=2)
  y = neg(b)
  return y
})");
  EXPECT_THAT(lines, Contains("%0 x = data(arg=0) : f32 repeats[1, 1, 1]"));
  EXPECT_THAT(lines, Contains("%2 i_load = load(%1) : i64 repeats[1, 9, 1] strides[0, 1, 0] "
                              "offset 0"));
  EXPECT_THAT(lines, Contains("%4 j_load = load(%3) : i64 repeats[1, 1, 11] strides[0, 0, 1] "
                              "offset 0"));
  EXPECT_THAT(lines, Contains("%7 b = gather(%0, %5, %6, stride=7, size=5, name=a, stride=1, "
                              "size=7) : f32 repeats[N, 9, 11] strides[35, 0, 0] offset 0"));
}

TEST(LowerViews, GatherChainThroughTransposeSliceAndTwoDimIndices) {
  // t = g1^T (g1 = x[i[p], :, :]), s = t[:, 1::2, :], g2 = s[j[q, r], :, :]
  // along t's dim 0 (x's C): g2[q, r, b2, p] =
  // x[i[p], 1 + 2*b2, j[q, r]], the slice an offset and a stride.
  const auto lines = lower_single_kernel(R"(graph g(x: f32[A, B, C], i: i64[P], j: i64[Q, R]) {
  g1 = gather(x, i, axis=0)
  t = transpose(g1, perm=[2, 1, 0])
  s = slice(t, axes=[1], starts=[1], ends=[end], steps=[2])
  g2 = gather(s, j, axis=0)
  y = neg(g2)
  return y
})");
  EXPECT_THAT(lines, Contains(HasSubstr("g2 = gather(%0, %")));
  EXPECT_THAT(lines, Contains(HasSubstr(", stride=B*C, size=A, name=g1, stride=1, size=C) : f32 "
                                        "repeats[Q, R, ceildiv(B - 1, 2), P] strides[0, 0, 2*C, 0] "
                                        "offset C")));
}

TEST(LowerViews, ThreeGathersAreOneGather) {
  const auto lines =
      lower_single_kernel(R"(graph g(x: f16[4, 6, 8], i: i64[3], j: i64[5], k: i64[7]) {
  g1 = gather(x, i, axis=0)
  g2 = gather(g1, j, axis=1)
  g3 = gather(g2, k, axis=2)
  y = neg(g3)
  return y
})");
  EXPECT_THAT(lines, Contains(HasSubstr("g3 = gather(%0, %7, %8, %9, stride=48, size=4, name=g1, "
                                        "stride=8, size=6, name=g2, stride=1, size=8) : f16 "
                                        "repeats[3, 5, 7] strides[0, 0, 0] offset 0")));
}

TEST(LowerViews, ConcatOutputIsStoredPieceByPiece) {
  const auto lines = lower_single_kernel(R"(graph g(x: f32[N, 16], y: f32[N, 16]) {
  a = exp(x)
  b = neg(y)
  c = concat(a, b, x, axis=1)
  return c
})");
  EXPECT_THAT(lines, Contains(HasSubstr("c_store = store(%4) : f32 repeats[N, 16] strides[48, 1] "
                                        "offset 0")));
  EXPECT_THAT(lines, Contains(HasSubstr("c_store_1 = store(%5) : f32 repeats[N, 16] strides[48, "
                                        "1] offset 16")));
  EXPECT_THAT(lines, Contains(HasSubstr("c_store_2 = store(%1) : f32 repeats[N, 16] strides[48, "
                                        "1] offset 32")));
  EXPECT_THAT(lines, Contains(HasSubstr("c_out = output(%6, %7, %8, arg=0)")));
}

TEST(LowerViews, RegroupingReshapeOfAnInputReadsRowMajor) {
  const auto lines = lower_single_kernel(R"(graph g(x: f32[B, S, 64]) {
  r = reshape(x, shape=[B, S, 4, 16])
  t = transpose(r, perm=[0, 2, 1, 3])
  y = neg(t)
  return y
})");
  EXPECT_THAT(lines, Contains(HasSubstr("t_load = load(%0) : f32 repeats[B, 4, S, 16] "
                                        "strides[64*S, 16, 64, 1] offset 0")));
}

TEST(LowerViews, SqueezeReshapeOfAComputedValueIsTheSameElement) {
  const auto lines = lower_single_kernel(R"(graph g(x: f32[N, D]) {
  a = exp(x)
  r = reshape(a, shape=[N, 1, D])
  y = sin(r)
  return y
})");
  EXPECT_THAT(lines, Contains(HasSubstr("y = sin(%2)")));
}

}  // namespace lower_views_test_local
}  // namespace autofuse::ascir
