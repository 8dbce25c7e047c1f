// plan_group_launch: see group_launch.h.
#include "runtime/group_launch.h"

#include <algorithm>
#include <map>

#include "autofuse/error.h"

namespace autofuse::runtime {

namespace {

/// The value whose bytes `v` shares: through the reshapes of View regions.
std::map<ValueId, ValueId> view_sources(const fuse::FusedGraph& fused) {
  std::map<ValueId, ValueId> alias;
  for (const fuse::Region& region : fused.regions) {
    if (region.kind != fuse::RegionKind::View) continue;
    for (NodeId id : region.nodes) {
      const Node& node = fused.graph->node(id);
      alias[node.outputs.at(0)] = node.inputs.at(0);
    }
  }
  return alias;
}

ValueId source_of(const std::map<ValueId, ValueId>& alias, ValueId v) {
  for (auto it = alias.find(v); it != alias.end(); it = alias.find(v))
    v = it->second;
  return v;
}

sym::Expr elements(const Graph& graph, const std::vector<ValueId>& values) {
  sym::Expr total(int64_t{0});
  for (ValueId v : values) {
    sym::Expr n(int64_t{1});
    for (const sym::Expr& d : graph.value(v).type.shape)
      n = n * d;
    total = total + n;
  }
  return total;
}

}  // namespace

GroupLaunch plan_group_launch(const fuse::FusedGraph& fused, const fuse::KernelGroup& group,
                              const std::vector<int>& kernel_of_region,
                              const std::vector<NestArgs>& nests) {
  AF_CHECK(!group.regions.empty(), "kernel group '{}' without members", group.name);
  auto nest_of = [&](int region) -> int {
    const int k = kernel_of_region.at(static_cast<size_t>(region));
    AF_CHECK(k >= 0, "kernel group '{}' holds region {}, which is no kernel", group.name, region);
    return k;
  };
  GroupLaunch launch;
  launch.spec.name = group.name;
  if (group.regions.size() == 1) {
    const int k = nest_of(group.regions[0]);
    const NestArgs& nest = nests.at(static_cast<size_t>(k));
    launch.inputs = nest.inputs;
    launch.outputs = nest.outputs;
    codegen::KernelGroupSpec::Member member;
    member.kernel = k;
    for (size_t a = 0; a < nest.inputs.size() + nest.outputs.size(); ++a)
      member.args.push_back(static_cast<int>(a));
    member.output_elements = elements(*fused.graph, nest.outputs);
    launch.spec.members.push_back(std::move(member));
  } else {
    const std::map<ValueId, ValueId> alias = view_sources(fused);
    std::map<ValueId, std::pair<int, int>> written;  // source -> (output arg, member level)
    for (int region : group.regions)
      for (ValueId v : nests.at(static_cast<size_t>(nest_of(region))).outputs)
        launch.outputs.push_back(v);
    // Inputs first (their arg numbers come before the outputs').
    for (int region : group.regions) {
      const NestArgs& nest = nests.at(static_cast<size_t>(nest_of(region)));
      for (ValueId v : nest.inputs) {
        const ValueId s = source_of(alias, v);
        const bool inside = std::any_of(launch.outputs.begin(), launch.outputs.end(),
                                        [&](ValueId o) { return o == s; });
        if (!inside &&
            std::find(launch.inputs.begin(), launch.inputs.end(), v) == launch.inputs.end())
          launch.inputs.push_back(v);
      }
    }
    const auto num_inputs = static_cast<int>(launch.inputs.size());
    int next_output = num_inputs;
    for (int region : group.regions) {
      const int k = nest_of(region);
      const NestArgs& nest = nests.at(static_cast<size_t>(k));
      codegen::KernelGroupSpec::Member member;
      member.kernel = k;
      for (ValueId v : nest.inputs) {
        auto it = written.find(source_of(alias, v));
        if (it != written.end()) {
          member.args.push_back(it->second.first);
          member.level = std::max(member.level, it->second.second + 1);
        } else {
          const auto at = std::find(launch.inputs.begin(), launch.inputs.end(), v);
          AF_CHECK(at != launch.inputs.end(), "kernel group '{}' reads '{}' before it is written",
                   group.name, fused.graph->value(v).name);
          member.args.push_back(static_cast<int>(at - launch.inputs.begin()));
        }
      }
      for (ValueId v : nest.outputs) {
        member.args.push_back(next_output);
        written[v] = {next_output++, member.level};
      }
      member.output_elements = elements(*fused.graph, nest.outputs);
      launch.spec.members.push_back(std::move(member));
    }
  }
  launch.spec.num_inputs = static_cast<int>(launch.inputs.size());
  launch.spec.num_outputs = static_cast<int>(launch.outputs.size());
  return launch;
}

}  // namespace autofuse::runtime
