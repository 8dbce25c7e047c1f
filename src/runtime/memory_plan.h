// The memory plan: offsets of the intermediate buffers of one run inside a
// single arena, computed once per distinct shape. Buffers whose live ranges
// (in steps of the run) do not intersect may share bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace autofuse::runtime {

/// Alignment of every buffer in the arena (a cache line; AVX-512 loads).
inline constexpr int64_t kBufferAlignment = 64;

struct BufferRequest {
  int64_t bytes = 0;
  int first_step = 0;  ///< step that writes it
  int last_step = 0;   ///< last step that reads it (>= first_step)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  ///< per request, a multiple of kBufferAlignment
  int64_t arena_bytes = 0;
};

/// Greedy by size (largest first, ties by first step then index): each
/// buffer goes to the lowest aligned offset where it overlaps no placed
/// buffer whose live range intersects its own. Deterministic.
MemoryPlan plan_memory(std::span<const BufferRequest> buffers);

}  // namespace autofuse::runtime
