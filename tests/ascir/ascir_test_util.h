// Helpers for the ascir/schedule tests: graphs from the examples, and Kernel
// regions built by hand (every node of a graph in one region, with loop axes
// mapped the way fuse::map_loop_axes maps simple graphs), so these tests do
// not depend on the fusion pass.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "autofuse/ascir/asc_graph.h"
#include "autofuse/ascir/lower.h"
#include "autofuse/fuse/fusion.h"
#include "autofuse/graph/graph.h"
#include "autofuse/graph/text.h"

namespace autofuse::ascir_test {

inline Graph example_graph(const std::string& name) {
  return parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/" + name + ".af");
}

/// One Kernel region holding the whole graph. Loop axes: the dims of the
/// highest-rank graph input; every value's dims are right-aligned onto them,
/// except the outputs of keepdims=false reductions, which keep their input's
/// axes minus the reduced ones. `reduced` marks reduced axes.
inline fuse::Region whole_graph_region(const Graph& g, const std::vector<bool>& reduced,
                                       const std::string& name = "asc_backend_0") {
  fuse::Region region;
  region.kind = fuse::RegionKind::Kernel;
  region.name = name;
  int rank = 0;
  for (ValueId v : g.inputs())
    rank = std::max(rank, g.value(v).type.rank());
  region.loop_axes.sizes.assign(static_cast<size_t>(rank), sym::Expr(1));
  region.loop_axes.reduced = reduced;
  auto right_aligned = [&](ValueId v) {
    std::vector<int> axes;
    const int r = g.value(v).type.rank();
    for (int d = 0; d < r; ++d)
      axes.push_back(rank - r + d);
    return axes;
  };
  auto& value_axes = region.loop_axes.value_axes;
  for (ValueId v : g.inputs()) {
    value_axes[v] = right_aligned(v);
    region.inputs.push_back(v);
    const Shape& shape = g.value(v).type.shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      sym::Expr& size = region.loop_axes.sizes[static_cast<size_t>(value_axes[v][d])];
      if (size == sym::Expr(1)) size = shape[d];
    }
  }
  for (const Node& node : g.nodes()) {
    region.nodes.push_back(node.id);
    const ValueId out = node.outputs[0];
    const auto* attrs = std::get_if<ReduceAttrs>(&node.attrs);
    if (attrs != nullptr && !attrs->keepdims) {
      std::vector<int> axes;
      const auto& in_axes = value_axes.at(node.inputs[0]);
      for (size_t d = 0; d < in_axes.size(); ++d)
        if (std::find(attrs->axes.begin(), attrs->axes.end(), static_cast<int64_t>(d)) ==
            attrs->axes.end())
          axes.push_back(in_axes[d]);
      value_axes[out] = axes;
    } else {
      value_axes[out] = right_aligned(out);
    }
  }
  region.outputs = g.outputs();
  return region;
}

inline ascir::AscGraph lower_whole(const Graph& g, const std::vector<bool>& reduced) {
  return ascir::lower_region(g, whole_graph_region(g, reduced));
}

/// The node called `name` (test failure if absent).
inline const ascir::AscNode& node_named(const ascir::AscGraph& g, const std::string& name) {
  for (const ascir::AscNode& n : g.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node named " + name);
}

inline int count_kind(const ascir::AscGraph& g, ascir::AscKind kind) {
  int count = 0;
  for (const ascir::AscNode& n : g.nodes)
    count += n.kind == kind ? 1 : 0;
  return count;
}

/// `text` with the first `from` replaced by `to`; throws when there is none
/// (a test's broken-text case must break what it means to).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("no '" + from + "' in the text");
  return text.replace(at, from.size(), to);
}

/// `text` with every `from` replaced by `to`.
inline std::string replaced_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// A parse-error case: what it breaks, the text, and a part of the message.
struct BadText {
  std::string what;
  std::string text;
  std::string message;
};

/// Node `id` of `g`, to break it in place.
inline ascir::AscNode& node_at(ascir::AscGraph& g, int id) {
  return g.nodes.at(static_cast<size_t>(id));
}

}  // namespace autofuse::ascir_test
