// group_kernels: kernels that no library op separates become one launch
// (KernelGroup, fusion.h). Regions are reordered by a list schedule that
// runs every ready non-kernel region first (a library op either does not
// depend on the kernels of the current run, and then goes before it, or it
// does, and then it must end the run anyway), so kernels gather into long
// runs; the runs are cut into groups of at most max_group_size.
#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/fuse/fusion.h"
#include "fuse/grouping.h"

namespace autofuse::fuse {

namespace {

/// Region indices in a dependency order with kernels kept together: ready
/// non-kernels first, then the original order (an already grouped order is
/// kept).
std::vector<int> kernel_friendly_order(const FusedGraph& fused) {
  const auto n = static_cast<int64_t>(fused.regions.size());
  return detail::dependency_order(*fused.graph, fused.regions, [&](int r) {
    const bool kernel = fused.regions[static_cast<size_t>(r)].kind == RegionKind::Kernel;
    return (kernel ? n : 0) + r;
  });
}

void singleton_groups(FusedGraph& fused) {
  fused.groups.clear();
  for (size_t r = 0; r < fused.regions.size(); ++r)
    if (fused.regions[r].kind == RegionKind::Kernel)
      fused.groups.push_back({fused.regions[r].name, {static_cast<int>(r)}});
}

}  // namespace

void group_kernels(FusedGraph& fused, const FusionConfig& config) {
  AF_CHECK(fused.graph != nullptr, "group_kernels of a FusedGraph without a graph");
  if (!config.enabled || !config.group_kernels || config.max_group_size <= 1) {
    singleton_groups(fused);
    return;
  }
  const std::vector<int> order = kernel_friendly_order(fused);
  std::vector<Region> regions;
  regions.reserve(order.size());
  for (int r : order)
    regions.push_back(std::move(fused.regions[static_cast<size_t>(r)]));
  fused.regions = std::move(regions);

  // Runs of kernels (views in between do not run anything), cut by size.
  fused.groups.clear();
  std::vector<int> run;
  auto close_run = [&] {
    if (run.empty()) return;
    KernelGroup group;
    group.regions = run;
    group.name = run.size() == 1 ? fused.regions[static_cast<size_t>(run[0])].name
                                 : "fused_" + fused.regions[static_cast<size_t>(run[0])].name;
    fused.groups.push_back(std::move(group));
    run.clear();
  };
  for (size_t r = 0; r < fused.regions.size(); ++r) {
    const RegionKind kind = fused.regions[r].kind;
    if (kind == RegionKind::View) continue;
    if (kind != RegionKind::Kernel) {
      close_run();
      continue;
    }
    if (static_cast<int>(run.size()) == config.max_group_size) close_run();
    run.push_back(static_cast<int>(r));
  }
  close_run();
}

}  // namespace autofuse::fuse
