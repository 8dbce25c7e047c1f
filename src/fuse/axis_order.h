// Ordering loop axes so that every value keeps its dims' row-major order: a
// topological sort of "dim i before dim i+1" constraints (map_loop_axes).
#pragma once

#include <optional>
#include <vector>

namespace autofuse::fuse::detail {

/// The axes one value walks, outer to inner; `owner` identifies the value.
struct AxisChain {
  int owner = 0;
  std::vector<int> axes;
};

/// Orders axes 0..num_axes-1 so that each chain's axes appear in chain
/// order; among free axes the smaller `priority[axis]` goes first. On a
/// cycle returns nullopt and fills `cycle_owners` (sorted, unique) with the
/// owners of the constraints along one cycle.
std::optional<std::vector<int>> order_axes(int num_axes, const std::vector<int>& priority,
                                           const std::vector<AxisChain>& chains,
                                           std::vector<int>& cycle_owners);

}  // namespace autofuse::fuse::detail
