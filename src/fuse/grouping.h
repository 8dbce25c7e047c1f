// The state of partitioning between the greedy merge (partition.cpp) and
// building the FusedGraph (regions.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autofuse/fuse/fusion.h"

namespace autofuse::fuse::detail {

/// A region while merging: its kind and its member nodes (sorted), without
/// the splat constants it will read (those are added per kernel at the end).
struct WorkRegion {
  RegionKind kind = RegionKind::Kernel;
  std::vector<NodeId> nodes;
  bool alive = true;  ///< false once merged into another region
};

struct Grouping {
  std::vector<WorkRegion> regions;
  std::vector<int> region_of;  ///< per node; -1 for splat constants and dead nodes
  std::vector<bool> live;      ///< per node: contributes to a graph output
  std::vector<std::string> refusals;
};

/// Live consumer nodes of every value (each consumer once, ascending).
std::vector<std::vector<NodeId>> live_consumers(const Graph& graph, const std::vector<bool>& live);

/// Region indices in a dependency order (a region after those producing
/// its inputs); among ready regions, the one with the smallest `priority`.
/// Internal error when a value has two producing regions, an input has none,
/// or the regions form a cycle.
std::vector<int> dependency_order(const Graph& graph, const std::vector<Region>& regions,
                                  const std::function<int64_t(int)>& priority);

/// Builds the final regions: splat constants duplicated into the kernels
/// that read them (and a Constant region where something else needs one),
/// inputs and outputs, a dependency order, names and loop axes.
FusedGraph build_fused_graph(std::shared_ptr<const Graph> graph, Grouping grouping);

}  // namespace autofuse::fuse::detail
