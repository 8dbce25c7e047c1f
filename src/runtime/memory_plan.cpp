#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "autofuse/error.h"

namespace autofuse::runtime {

namespace {

int64_t align_up(int64_t n) {
  return (n + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

}  // namespace

MemoryPlan plan_memory(std::span<const BufferRequest> buffers) {
  const size_t n = buffers.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first_step < buffers[b].first_step;
  });

  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<size_t> placed;  // in order of offset
  placed.reserve(n);
  for (size_t i : order) {
    const BufferRequest& r = buffers[i];
    AF_CHECK(r.bytes >= 0 && r.first_step <= r.last_step, "buffer {}: {} bytes, steps {}..{}", i,
             r.bytes, r.first_step, r.last_step);
    const int64_t size = align_up(r.bytes);
    // Walk the live-overlapping buffers by offset; take the first gap.
    int64_t offset = 0;
    for (size_t j : placed) {
      const BufferRequest& o = buffers[j];
      if (o.last_step < r.first_step || r.last_step < o.first_step) continue;
      const int64_t o_begin = plan.offsets[j], o_end = o_begin + align_up(o.bytes);
      if (offset + size <= o_begin) break;  // fits before this one
      offset = std::max(offset, o_end);
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    auto at = std::upper_bound(placed.begin(), placed.end(), i, [&](size_t a, size_t b) {
      return plan.offsets[a] < plan.offsets[b];
    });
    placed.insert(at, i);
  }
  return plan;
}

}  // namespace autofuse::runtime
