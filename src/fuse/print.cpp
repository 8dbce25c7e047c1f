// print_fused_graph: one line per region, the kernel groups of several
// kernels, then the kernel count.
#include <fmt/format.h>

#include "autofuse/fuse/fusion.h"

namespace autofuse::fuse {

namespace {

std::string value_list(const Graph& graph, const std::vector<ValueId>& values) {
  std::vector<std::string> names;
  for (ValueId v : values)
    names.push_back(graph.value(v).name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string describe(const Graph& graph, const Region& region) {
  const Node& first = graph.node(region.nodes.at(0));
  switch (region.kind) {
    case RegionKind::Kernel: {
      std::vector<std::string_view> ops;
      for (NodeId id : region.nodes)
        ops.push_back(op_name(graph.node(id).op));
      return fmt::format("{} ops: {}; axes {}", ops.size(), fmt::join(ops, ", "),
                         region.loop_axes.to_string());
    }
    case RegionKind::Constant:
      return fmt::format("constant {}", graph.value(first.outputs.at(0)).type.to_string());
    case RegionKind::Library:
    case RegionKind::View:
      break;
  }
  return std::string(op_name(first.op));
}

}  // namespace

std::string print_fused_graph(const FusedGraph& fused) {
  AF_CHECK(fused.graph != nullptr, "FusedGraph without a graph");
  const Graph& graph = *fused.graph;
  std::string text;
  for (const Region& region : fused.regions)
    text += fmt::format("{} = {}({})  # {}\n", value_list(graph, region.outputs), region.name,
                        value_list(graph, region.inputs), describe(graph, region));
  for (const KernelGroup& group : fused.groups) {
    if (group.regions.size() < 2) continue;
    std::vector<std::string_view> members;
    for (int r : group.regions)
      members.push_back(fused.regions.at(static_cast<size_t>(r)).name);
    text += fmt::format("# {}: one launch of {}\n", group.name, fmt::join(members, ", "));
  }
  text += fmt::format("# kernels: {}", fused.num_kernels());
  if (fused.num_launches() != fused.num_kernels())
    text += fmt::format(" in {} launches", fused.num_launches());
  text += "\n";
  return text;
}

}  // namespace autofuse::fuse
