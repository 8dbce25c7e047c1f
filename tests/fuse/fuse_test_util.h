// Helpers for the fusion tests: graphs from text or the bundled examples,
// and queries on a FusedGraph.
#pragma once

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/fuse/fusion.h"
#include "autofuse/fuse/loop_axes.h"
#include "autofuse/graph/text.h"

namespace autofuse::fuse_test {

inline std::shared_ptr<const Graph> parse(std::string_view text) {
  return std::make_shared<const Graph>(parse_graph(text));
}

inline std::shared_ptr<const Graph> example(const std::string& name) {
  return std::make_shared<const Graph>(
      parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/" + name + ".af"));
}

inline int count_kind(const fuse::FusedGraph& fused, fuse::RegionKind kind) {
  return static_cast<int>(std::count_if(fused.regions.begin(), fused.regions.end(),
                                        [&](const fuse::Region& r) { return r.kind == kind; }));
}

/// Names of values, for comparing region inputs/outputs.
inline std::vector<std::string> names(const Graph& graph, const std::vector<ValueId>& ids) {
  std::vector<std::string> out;
  for (ValueId id : ids)
    out.push_back(graph.value(id).name);
  return out;
}

/// The non-constant region whose nodes produce the named value.
inline const fuse::Region& region_producing(const fuse::FusedGraph& fused,
                                            const std::string& value) {
  const Graph& graph = *fused.graph;
  const NodeId node = graph.value(graph.find_value(value).value()).producer;
  for (const fuse::Region& region : fused.regions) {
    if (region.kind == fuse::RegionKind::Constant) continue;
    if (std::find(region.nodes.begin(), region.nodes.end(), node) != region.nodes.end())
      return region;
  }
  throw std::runtime_error("no region produces " + value);
}

inline fuse::FusionConfig config_with_log() {
  fuse::FusionConfig config;
  config.log_refusals = true;
  return config;
}

/// How many nodes of `g` apply `op`.
inline int count_op(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes())
    n += node.op == op ? 1 : 0;
  return n;
}

/// The loop axes of value `value` (by name).
inline std::vector<int> axes_of(const Graph& graph, const fuse::LoopAxes& axes,
                                const std::string& value) {
  return axes.value_axes.at(graph.find_value(value).value());
}

/// Every region reads only graph inputs, constants and the outputs of the
/// regions listed before it, and the graph's outputs all come out of some
/// region (or are inputs).
inline void expect_dependency_order(const fuse::FusedGraph& fused) {
  std::set<ValueId> ready(fused.graph->inputs().begin(), fused.graph->inputs().end());
  for (const fuse::Region& region : fused.regions) {
    for (ValueId v : region.inputs)
      EXPECT_TRUE(ready.count(v) || fused.graph->value(v).producer == kNoNode)
          << region.name << " reads " << fused.graph->value(v).name << " too early";
    ready.insert(region.outputs.begin(), region.outputs.end());
  }
  for (ValueId out : fused.graph->outputs())
    EXPECT_TRUE(ready.count(out)) << fused.graph->value(out).name << " is never produced";
}

}  // namespace autofuse::fuse_test
