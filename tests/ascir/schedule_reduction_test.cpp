// The Reduction template's layouts (row vs column, from the contiguous
// axis), the launches of a split kernel, and the schedule dump of the column
// layout.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ascir_test_util.h"
#include "autofuse/schedule/schedule.h"

namespace autofuse::schedule {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace schedule_reduction_test_local {

using ascir_test::example_graph;
using ascir_test::lower_whole;

ScheduledKernel schedule_text(const char* text, const std::vector<bool>& reduced) {
  return schedule_kernel(lower_whole(parse_graph(text), reduced));
}

TEST(ReductionLayout, ColumnStatisticsGolden) {
  const ScheduledKernel k =
      schedule_kernel(lower_whole(example_graph("column_stats"), {true, false}));
  EXPECT_EQ(k.kind, Template::Reduction);
  EXPECT_EQ(k.tile_axis, 1);
  EXPECT_EQ(k.outer_axes, (std::vector<int>{1}));
  EXPECT_EQ(k.inner_axes, (std::vector<int>{0}));
  EXPECT_TRUE(k.row_axes().empty());
  EXPECT_EQ(k.num_passes, 3);  // mean, var, y
  // mean and var are stored after their passes; nothing after the last one.
  EXPECT_EQ(split_phases(k), 3);
  const std::string text = print_schedule(k);
  EXPECT_THAT(text,
              ::testing::HasSubstr("schedule reduction outer[z1] inner[z0] tile[z1] passes 3\n"));
  EXPECT_THAT(text, ::testing::HasSubstr(": reduce 0\n"));
  EXPECT_EQ(text.substr(0, ascir::print_asc_graph(k.graph).size()),
            ascir::print_asc_graph(k.graph));
}

TEST(ReductionLayout, TheContiguousAxisDecides) {
  // A middle reduction: the last axis is kept.
  const ScheduledKernel middle = schedule_text(R"(graph g(x: f32[A, B, C]) {
  s = reduce_sum(x, axes=[1], keepdims=true)
  return s
})",
                                               {false, true, false});
  EXPECT_EQ(middle.tile_axis, 2);
  EXPECT_EQ(middle.row_axes(), (std::vector<int>{0}));
  EXPECT_EQ(middle.inner_axes, (std::vector<int>{1}));
  // Reduced on both sides of a kept axis, the last one reduced: rows.
  const ScheduledKernel mixed = schedule_text(R"(graph g(x: f32[A, B, C]) {
  s = reduce_sum(x, axes=[0, 2], keepdims=true)
  return s
})",
                                              {true, false, true});
  EXPECT_EQ(mixed.tile_axis, -1);
  EXPECT_EQ(mixed.row_axes(), (std::vector<int>{1}));
  EXPECT_EQ(mixed.inner_axes, (std::vector<int>{0, 2}));
  // A kept last axis of literal size 1 moves nothing: the reduced axis
  // before it is contiguous, so rows.
  const ScheduledKernel unit = schedule_text(R"(graph g(x: f32[N, 1]) {
  s = reduce_sum(x, axes=[0], keepdims=true)
  return s
})",
                                             {true, false});
  EXPECT_EQ(unit.tile_axis, -1);
  EXPECT_THAT(print_schedule(unit), ::testing::Not(::testing::HasSubstr("tile[")));
}

TEST(ReductionLayout, SplitLaunches) {
  // Layernorm: three passes, the last one stores; no row store after it.
  EXPECT_EQ(split_phases(schedule_kernel(lower_whole(example_graph("layernorm"), {false, true}))),
            3);
  // A plain sum: one pass, then its result is stored (a launch of its own).
  const ScheduledKernel sum = schedule_text(R"(graph g(x: f32[N, D]) {
  s = reduce_sum(x, axes=[1], keepdims=true)
  return s
})",
                                            {false, true});
  EXPECT_EQ(sum.num_passes, 1);
  EXPECT_EQ(split_phases(sum), 2);
  // Elementwise kernels have no launches to split.
  EXPECT_EQ(split_phases(schedule_kernel(lower_whole(example_graph("gelu"), {false, false}))), 0);
}

}  // namespace schedule_reduction_test_local
}  // namespace autofuse::schedule
