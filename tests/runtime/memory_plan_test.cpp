// plan_memory: alignment, reuse of dead buffers' bytes, and a randomized
// check that buffers live at the same time never overlap.
#include "runtime/memory_plan.h"

#include <random>

#include <gtest/gtest.h>

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace memory_plan_test_local {

bool overlap_in_time(const BufferRequest& a, const BufferRequest& b) {
  return !(a.last_step < b.first_step || b.last_step < a.first_step);
}

void expect_valid(const std::vector<BufferRequest>& reqs, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kBufferAlignment, 0);
    EXPECT_LE(plan.offsets[i] + reqs[i].bytes, plan.arena_bytes);
    for (size_t j = i + 1; j < reqs.size(); ++j) {
      if (!overlap_in_time(reqs[i], reqs[j]) || reqs[i].bytes == 0 || reqs[j].bytes == 0) continue;
      const bool disjoint = plan.offsets[i] + reqs[i].bytes <= plan.offsets[j] ||
                            plan.offsets[j] + reqs[j].bytes <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j;
    }
  }
}

TEST(MemoryPlan, Empty) {
  MemoryPlan plan = plan_memory({});
  EXPECT_EQ(plan.arena_bytes, 0);
  EXPECT_TRUE(plan.offsets.empty());
}

TEST(MemoryPlan, ChainReusesDeadBuffers) {
  // a -> b -> c -> d: each buffer dies after the next step reads it, so two
  // slots suffice.
  std::vector<BufferRequest> reqs = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = plan_memory(reqs);
  expect_valid(reqs, plan);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_EQ(plan.offsets[1], plan.offsets[3]);
}

TEST(MemoryPlan, LiveTogetherNeverShare) {
  std::vector<BufferRequest> reqs = {{100, 0, 5}, {200, 1, 5}, {1, 2, 5}, {64, 3, 5}};
  MemoryPlan plan = plan_memory(reqs);
  expect_valid(reqs, plan);
  EXPECT_EQ(plan.arena_bytes, 128 + 256 + 64 + 64);
}

TEST(MemoryPlan, SmallBufferFillsAGap) {
  // Big buffers at both ends of time leave a hole for a short-lived one.
  std::vector<BufferRequest> reqs = {{4096, 0, 1}, {4096, 0, 3}, {4096, 2, 3}, {512, 1, 1}};
  MemoryPlan plan = plan_memory(reqs);
  expect_valid(reqs, plan);
  EXPECT_EQ(plan.arena_bytes, 2 * 4096 + 512);
}

TEST(MemoryPlan, ZeroSizedBuffers) {
  std::vector<BufferRequest> reqs = {{0, 0, 3}, {128, 0, 3}, {0, 1, 2}};
  MemoryPlan plan = plan_memory(reqs);
  expect_valid(reqs, plan);
  EXPECT_EQ(plan.arena_bytes, 128);
}

TEST(MemoryPlan, RandomPlansAreValidAndDeterministic) {
  std::mt19937_64 rng(42);
  for (int rep = 0; rep < 300; ++rep) {
    std::vector<BufferRequest> reqs(rng() % 20);
    for (BufferRequest& r : reqs) {
      r.bytes = static_cast<int64_t>(rng() % 5000);
      r.first_step = static_cast<int>(rng() % 10);
      r.last_step = r.first_step + static_cast<int>(rng() % 4);
    }
    MemoryPlan plan = plan_memory(reqs);
    expect_valid(reqs, plan);
    // Never worse than giving every buffer its own slot.
    int64_t total = 0;
    for (const BufferRequest& r : reqs)
      total += (r.bytes + 63) / 64 * 64;
    EXPECT_LE(plan.arena_bytes, total);
    EXPECT_EQ(plan_memory(reqs).offsets, plan.offsets);
  }
}

}  // namespace memory_plan_test_local
}  // namespace autofuse::runtime
