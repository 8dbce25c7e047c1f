// build_fused_graph: from merged node groups to the FusedGraph's regions.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "fuse/grouping.h"
#include "fuse/node_class.h"

namespace autofuse::fuse::detail {

namespace {

bool contains(const std::vector<NodeId>& sorted, NodeId id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

class RegionBuilder {
 public:
  RegionBuilder(const Graph& graph, Grouping& grouping)
      : graph_(graph), g_(grouping), consumers_(live_consumers(graph, grouping.live)) {
    for (ValueId out : graph.outputs())
      is_graph_output_.insert(out);
  }

  std::vector<Region> build();

 private:
  void collect_regions();
  void fill_inputs_outputs(Region& region) const;
  std::vector<Region> order(std::vector<Region> regions) const;
  void name(Region& region, int id) const;

  bool is_splat(NodeId id) const { return is_splat_constant(graph_.node(id)); }
  bool is_graph_output(ValueId v) const { return is_graph_output_.count(v) > 0; }

  const Graph& graph_;
  Grouping& g_;
  std::vector<std::vector<NodeId>> consumers_;
  std::set<ValueId> is_graph_output_;
  std::vector<Region> regions_;
};

void RegionBuilder::collect_regions() {
  for (WorkRegion& work : g_.regions) {
    if (!work.alive) continue;
    Region region;
    region.kind = work.kind;
    region.nodes = work.nodes;
    if (region.kind == RegionKind::Kernel) {
      // Each kernel gets its own copy of the splat constants it reads.
      for (NodeId id : work.nodes)
        for (ValueId in : graph_.node(id).inputs) {
          const NodeId producer = graph_.value(in).producer;
          if (producer != kNoNode && is_splat(producer)) region.nodes.push_back(producer);
        }
      std::sort(region.nodes.begin(), region.nodes.end());
      region.nodes.erase(std::unique(region.nodes.begin(), region.nodes.end()), region.nodes.end());
    }
    regions_.push_back(std::move(region));
  }
  // A splat constant read by a library op or view, or returned by the graph,
  // also needs a buffer of its own.
  for (const Node& node : graph_.nodes()) {
    if (!g_.live[node.id] || !is_splat_constant(node)) continue;
    const ValueId v = node.outputs.at(0);
    bool needs_buffer = is_graph_output(v);
    for (NodeId consumer : consumers_[v])
      needs_buffer = needs_buffer || g_.regions[g_.region_of[consumer]].kind != RegionKind::Kernel;
    if (!needs_buffer) continue;
    Region region;
    region.kind = RegionKind::Constant;
    region.nodes = {node.id};
    regions_.push_back(std::move(region));
  }
}

void RegionBuilder::fill_inputs_outputs(Region& region) const {
  std::set<ValueId> inputs, outputs;
  for (NodeId id : region.nodes) {
    const Node& node = graph_.node(id);
    // Copies of splat constants inside a kernel are private to it.
    const bool private_copy = region.kind == RegionKind::Kernel && is_splat_constant(node);
    for (ValueId in : node.inputs) {
      const NodeId producer = graph_.value(in).producer;
      if (producer == kNoNode || !contains(region.nodes, producer)) inputs.insert(in);
    }
    if (private_copy) continue;
    for (ValueId out : node.outputs) {
      // A library op writes all of its outputs (split), used or not.
      bool used_outside = region.kind == RegionKind::Library || is_graph_output(out);
      for (NodeId consumer : consumers_[out])
        used_outside = used_outside || !contains(region.nodes, consumer);
      if (used_outside) outputs.insert(out);
    }
  }
  region.inputs.assign(inputs.begin(), inputs.end());
  region.outputs.assign(outputs.begin(), outputs.end());
}

std::vector<Region> RegionBuilder::order(std::vector<Region> regions) const {
  // Among ready regions the one with the earliest node first.
  const std::vector<int> order = dependency_order(
      graph_, regions, [&](int r) { return regions[static_cast<size_t>(r)].nodes.front(); });
  std::vector<Region> ordered;
  ordered.reserve(regions.size());
  for (int r : order)
    ordered.push_back(std::move(regions[static_cast<size_t>(r)]));
  return ordered;
}

void RegionBuilder::name(Region& region, int id) const {
  region.id = id;
  switch (region.kind) {
    case RegionKind::Kernel:
      region.name = fmt::format("asc_backend_{}", id);
      break;
    case RegionKind::Library:
      region.name = fmt::format("library_{}_{}", op_name(graph_.node(region.nodes.at(0)).op), id);
      break;
    case RegionKind::View:
      region.name = fmt::format("view_{}", id);
      break;
    case RegionKind::Constant:
      region.name = fmt::format("constant_{}", id);
      break;
  }
}

std::vector<Region> RegionBuilder::build() {
  collect_regions();
  for (Region& region : regions_)
    fill_inputs_outputs(region);
  std::vector<Region> ordered = order(std::move(regions_));
  for (int i = 0; i < static_cast<int>(ordered.size()); ++i) {
    Region& region = ordered[i];
    name(region, i);
    if (region.kind != RegionKind::Kernel) continue;
    const FusionDecision mapped =
        map_loop_axes(graph_, region.nodes, region.outputs, region.loop_axes);
    if (!mapped) {
      // Merges were checked, so only a single op can get here: its operand
      // shapes are related in a way no loop nest expresses.
      const Node& node = graph_.node(region.nodes.back());
      SourceLocation where;
      where.node = graph_.value(node.outputs.at(0)).name;
      where.op = std::string(op_name(node.op));
      throw UserError(std::move(where),
                      fmt::format("no loop-axis mapping for the kernel: {}", mapped.reason()));
    }
  }
  return ordered;
}

}  // namespace

std::vector<int> dependency_order(const Graph& graph, const std::vector<Region>& regions,
                                  const std::function<int64_t(int)>& priority) {
  const auto n = static_cast<int>(regions.size());
  std::map<ValueId, int> producer_region;
  for (int r = 0; r < n; ++r)
    for (ValueId out : regions[static_cast<size_t>(r)].outputs) {
      const bool fresh = producer_region.emplace(out, r).second;
      AF_CHECK(fresh, "value '{}' is an output of two regions", graph.value(out).name);
    }
  std::vector<std::set<int>> succ(static_cast<size_t>(n));
  std::vector<int> indegree(static_cast<size_t>(n), 0);
  for (int r = 0; r < n; ++r)
    for (ValueId in : regions[static_cast<size_t>(r)].inputs) {
      if (graph.value(in).producer == kNoNode) continue;
      auto it = producer_region.find(in);
      AF_CHECK(it != producer_region.end(), "no region produces '{}'", graph.value(in).name);
      if (it->second != r && succ[static_cast<size_t>(it->second)].insert(r).second)
        ++indegree[static_cast<size_t>(r)];
    }
  std::set<std::pair<int64_t, int>> ready;
  for (int r = 0; r < n; ++r)
    if (indegree[static_cast<size_t>(r)] == 0) ready.emplace(priority(r), r);
  std::vector<int> order;
  while (!ready.empty()) {
    const int r = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(r);
    for (int next : succ[static_cast<size_t>(r)])
      if (--indegree[static_cast<size_t>(next)] == 0) ready.emplace(priority(next), next);
  }
  AF_CHECK(static_cast<int>(order.size()) == n, "the regions form a cycle");
  return order;
}

FusedGraph build_fused_graph(std::shared_ptr<const Graph> graph, Grouping grouping) {
  FusedGraph fused;
  fused.regions = RegionBuilder(*graph, grouping).build();
  fused.refusals = std::move(grouping.refusals);
  fused.graph = std::move(graph);
  return fused;
}

}  // namespace autofuse::fuse::detail
