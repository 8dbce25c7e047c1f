// fuse::group_kernels: kernels that no library op separates share a launch;
// a library op that does not depend on the run goes before it; groups are
// cut at max_group_size; --disable=group and the unfused path keep one
// launch per kernel; regions stay in dependency order.
#include <set>

#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace group_kernels_test_local {

using fuse_test::expect_dependency_order;
using fuse_test::parse;

// Three kernels the partitioner cannot merge (a column mean, then a row sum
// of the centred values; a column max of another input), and a matmul of an
// input that none of them reads.
const char* kThreeKernels = R"(graph g(x: f32[N, D], z: f32[N, D], w: f32[D, K]) {
  cm = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub(x, cm)
  h = matmul(z, w)
  rs = reduce_sum(xc, axes=[1], keepdims=true)
  y = mul(xc, rs)
  zm = reduce_max(z, axes=[0])
  return y, zm, h
})";

FusedGraph grouped(const char* text, const FusionConfig& config) {
  FusedGraph fused = partition(parse(text), config);
  group_kernels(fused, config);
  return fused;
}

TEST(GroupKernels, PartitionLeavesOneGroupPerKernel) {
  const FusedGraph fused = partition(parse(kThreeKernels), FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 3);
  EXPECT_EQ(fused.num_launches(), 3);
  for (const KernelGroup& group : fused.groups) {
    ASSERT_EQ(group.regions.size(), 1u);
    EXPECT_EQ(group.name, fused.regions.at(static_cast<size_t>(group.regions[0])).name);
  }
}

TEST(GroupKernels, KernelsNoLibraryOpSeparatesShareALaunch) {
  const FusedGraph fused = grouped(kThreeKernels, FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 3);
  ASSERT_EQ(fused.num_launches(), 1);
  const KernelGroup& group = fused.groups[0];
  ASSERT_EQ(group.regions.size(), 3u);
  // The matmul reads only inputs: it runs before the group, which is contiguous.
  EXPECT_EQ(fused.regions.at(0).kind, RegionKind::Library);
  EXPECT_EQ(group.regions, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(group.name, "fused_" + fused.regions[1].name);
  expect_dependency_order(fused);
  EXPECT_THAT(print_fused_graph(fused),
              ::testing::HasSubstr(fmt::format("# {}: one launch of {}, {}, {}\n# kernels: 3 in 1 "
                                               "launches\n",
                                               group.name, fused.regions[1].name,
                                               fused.regions[2].name, fused.regions[3].name)));
}

TEST(GroupKernels, ALibraryOpThatReadsAKernelEndsTheRun) {
  // The matmul reads the first kernel's output and the last kernel reads the matmul.
  const FusedGraph fused = grouped(R"(graph g(x: f32[N, D], w: f32[D, D]) {
  cm = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub(x, cm)
  rs = reduce_sum(xc, axes=[1], keepdims=true)
  y = mul(xc, rs)
  h = matmul(y, w)
  e = exp(h)
  return e
})",
                                   FusionConfig{});
  EXPECT_EQ(fused.num_kernels(), 3);
  ASSERT_EQ(fused.num_launches(), 2);
  EXPECT_EQ(fused.groups[0].regions.size(), 2u);
  EXPECT_EQ(fused.groups[1].regions.size(), 1u);
  expect_dependency_order(fused);
  for (const KernelGroup& group : fused.groups)
    for (size_t i = 1; i < group.regions.size(); ++i)
      for (int r = group.regions[i - 1] + 1; r < group.regions[i]; ++r)
        EXPECT_EQ(fused.regions.at(static_cast<size_t>(r)).kind, RegionKind::View);
}

TEST(GroupKernels, GroupsAreCutAtMaxGroupSize) {
  FusionConfig config;
  config.max_group_size = 2;
  const FusedGraph fused = grouped(kThreeKernels, config);
  ASSERT_EQ(fused.num_launches(), 2);
  EXPECT_EQ(fused.groups[0].regions.size(), 2u);
  EXPECT_EQ(fused.groups[1].regions.size(), 1u);
  EXPECT_EQ(FusionConfig::from_flags("--max_group_size=3").max_group_size, 3);
}

TEST(GroupKernels, DisabledOrUnfusedKeepsOneLaunchPerKernel) {
  const FusedGraph off = grouped(kThreeKernels, FusionConfig::from_flags("--disable=group"));
  EXPECT_EQ(off.num_kernels(), 3);
  EXPECT_EQ(off.num_launches(), 3);
  FusionConfig unfused;
  unfused.enabled = false;
  const FusedGraph each = grouped(kThreeKernels, unfused);
  EXPECT_EQ(each.num_launches(), each.num_kernels());
  EXPECT_THAT(print_fused_graph(each), ::testing::Not(::testing::HasSubstr("launches")));
}

}  // namespace group_kernels_test_local
}  // namespace autofuse::fuse
