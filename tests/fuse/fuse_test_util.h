// Helpers for the fusion tests: graphs from text or the bundled examples,
// and queries on a FusedGraph.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/fuse/fusion.h"
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

}  // namespace autofuse::fuse_test
