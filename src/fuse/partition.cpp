// partition(): greedy producer -> consumer merging of kernel regions.
//
// Every live node starts as its own region (splat constants excepted: they
// are copied into their consumers' kernels at the end). Nodes are visited in
// topological order and each node's region tries to merge with the region of
// each of its producers, in input order. A merge happens when the config
// allows it, no cycle between regions results, the union has one
// loop-axis mapping, and every output of the union spans its non-reduced
// loop axes. Because a consumer joins its producer's region, a
// reduction's elementwise consumers join the reduction (LayerNorm, Softmax
// become one region) without a separate consumer pass.
#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "autofuse/fuse/fusion.h"
#include "autofuse/fuse/view_ops.h"
#include "fuse/grouping.h"
#include "fuse/node_class.h"

namespace autofuse::fuse {

namespace detail {

std::vector<std::vector<NodeId>> live_consumers(const Graph& graph, const std::vector<bool>& live) {
  std::vector<std::vector<NodeId>> consumers(graph.values().size());
  for (const Node& node : graph.nodes()) {
    if (!live[node.id]) continue;
    for (ValueId in : node.inputs)
      if (consumers[in].empty() || consumers[in].back() != node.id)
        consumers[in].push_back(node.id);
  }
  return consumers;
}

}  // namespace detail

namespace {

using detail::Grouping;
using detail::WorkRegion;

std::vector<bool> compute_liveness(const Graph& graph) {
  std::vector<bool> live_value(graph.values().size(), false);
  for (ValueId out : graph.outputs())
    live_value[out] = true;
  std::vector<bool> live(graph.nodes().size(), false);
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend(); ++it) {
    for (ValueId out : it->outputs)
      live[it->id] = live[it->id] || live_value[out];
    if (!live[it->id]) continue;
    for (ValueId in : it->inputs)
      live_value[in] = true;
  }
  return live;
}

class Partitioner {
 public:
  Partitioner(const Graph& graph, const FusionConfig& config) : graph_(graph), config_(config) {
    g_.live = compute_liveness(graph);
    consumers_ = detail::live_consumers(graph, g_.live);
    is_graph_output_.assign(graph.values().size(), false);
    for (ValueId out : graph.outputs())
      is_graph_output_[out] = true;
    g_.region_of.assign(graph.nodes().size(), -1);
    for (const Node& node : graph.nodes()) {
      if (!g_.live[node.id] || detail::is_splat_constant(node)) continue;
      g_.region_of[node.id] = static_cast<int>(g_.regions.size());
      g_.regions.push_back(WorkRegion{detail::region_kind_of(node), {node.id}});
    }
  }

  Grouping run() && {
    if (config_.enabled) {
      for (const Node& node : graph_.nodes()) {
        if (g_.region_of[node.id] < 0) continue;
        for (ValueId in : node.inputs) {
          const NodeId producer = graph_.value(in).producer;
          if (producer == kNoNode || g_.region_of[producer] < 0) continue;
          const int from = g_.region_of[node.id];
          const int into = g_.region_of[producer];
          // Reading a materialized constant is not a fusion opportunity.
          if (from == into || g_.regions[from].kind == RegionKind::Constant ||
              g_.regions[into].kind == RegionKind::Constant)
            continue;
          try_merge(from, into);
        }
      }
    }
    if (config_.enabled) {
      absorb_movement_producers();
      merge_siblings();
      merge_into_sole_consumers();
    }
    unfuse_pure_movement();
    return std::move(g_);
  }

 private:
  bool try_merge(int from, int into);
  bool is_pure_movement(int region) const;
  void absorb_movement_producers();
  void unfuse_pure_movement();
  void merge_siblings();
  void merge_into_sole_consumers();
  FusionDecision can_merge(int a, int b) const;
  FusionDecision check_config(int a, int b) const;
  FusionDecision check_cycle(int a, int b) const;
  FusionDecision check_outputs(const std::vector<NodeId>& nodes,
                               const std::vector<ValueId>& outputs, const LoopAxes& axes) const;
  std::vector<ValueId> outputs_of(const std::vector<NodeId>& nodes) const;
  std::vector<NodeId> with_splat_constants(const std::vector<NodeId>& nodes) const;
  std::string describe(int region) const;
  bool any_node(int region, bool (*pred)(const Graph&, const Node&)) const;

  const Graph& graph_;
  const FusionConfig& config_;
  Grouping g_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<bool> is_graph_output_;
};

bool Partitioner::try_merge(int from, int into) {
  const FusionDecision decision = can_merge(from, into);
  if (!decision) {
    if (config_.log_refusals) {
      // A later round may ask again (merge_into_sole_consumers): log once.
      std::string refusal = fmt::format("merge of {} into {} refused: {}", describe(from),
                                        describe(into), decision.reason());
      if (std::find(g_.refusals.begin(), g_.refusals.end(), refusal) == g_.refusals.end())
        g_.refusals.push_back(std::move(refusal));
    }
    return false;
  }
  // The region that started first keeps its index, so the result does not
  // depend on which side asked.
  const int keep = std::min(from, into), gone = std::max(from, into);
  std::vector<NodeId> merged;
  std::merge(g_.regions[keep].nodes.begin(), g_.regions[keep].nodes.end(),
             g_.regions[gone].nodes.begin(), g_.regions[gone].nodes.end(),
             std::back_inserter(merged));
  for (NodeId id : g_.regions[gone].nodes)
    g_.region_of[id] = keep;
  g_.regions[keep].nodes = std::move(merged);
  g_.regions[gone].nodes.clear();
  g_.regions[gone].alive = false;
  return true;
}

bool Partitioner::is_pure_movement(int region) const {
  const WorkRegion& r = g_.regions[static_cast<size_t>(region)];
  return r.alive && r.kind == RegionKind::Kernel &&
         std::all_of(r.nodes.begin(), r.nodes.end(),
                     [&](NodeId id) { return is_movement_op(graph_.node(id).op); });
}

// The greedy pass grows a chain of movement ops from its producer side, so
// a view whose value is still read by not-yet-merged consumers is refused
// ("it stays a view") and the chain stops at a movement-only region. Now
// that the consumers have their kernels, each computing kernel tries again
// to take in the movement-only regions it reads (a slice of a reshaped Gemm
// output), until nothing changes.
void Partitioner::absorb_movement_producers() {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g_.regions.size() && !changed; ++r) {
      const WorkRegion& region = g_.regions[r];
      if (!region.alive || region.kind != RegionKind::Kernel || is_pure_movement(int(r))) continue;
      for (NodeId id : std::vector<NodeId>(region.nodes)) {
        for (ValueId in : graph_.node(id).inputs) {
          const NodeId producer = graph_.value(in).producer;
          if (producer == kNoNode) continue;
          const int from = g_.region_of[producer];
          if (from < 0 || from == static_cast<int>(r) || !is_pure_movement(from)) continue;
          if (try_merge(from, static_cast<int>(r))) {
            changed = true;
            break;
          }
        }
        if (changed) break;
      }
    }
  }
}

// Horizontal fusion: kernels that read the same value (and do not depend
// on each other) become one kernel when they share an iteration space, so
// the value is read once. The usual checks apply (cycles, loop axes,
// outputs), so kernels with different shapes or reductions stay apart.
void Partitioner::merge_siblings() {
  for (const Value& value : graph_.values()) {
    // A splat constant is a scalar inside each kernel: sharing it saves no
    // memory traffic, so it does not make kernels siblings.
    if (value.producer != kNoNode && detail::is_splat_constant(graph_.node(value.producer)))
      continue;
    const std::vector<NodeId>& readers = consumers_[value.id];
    for (size_t k = 1; k < readers.size(); ++k) {
      const int into = g_.region_of[readers[0]];
      const int from = g_.region_of[readers[k]];
      if (into < 0 || from < 0 || into == from) continue;
      if (g_.regions[into].kind != RegionKind::Kernel ||
          g_.regions[from].kind != RegionKind::Kernel)
        continue;
      try_merge(from, into);
    }
  }
}

// A kernel whose every reader is one other kernel merges into it when
// allowed now. The greedy pass in node order can refuse such a merge too
// early: a broadcast-shaped value read by two ops (x + b, then min(b, .))
// was refused while its second reader was outside (it would have been
// stored per iteration of the broadcast axis), and the second reader then
// joined the first one's kernel. Rounds until nothing merges.
void Partitioner::merge_into_sole_consumers() {
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t r = 0; r < g_.regions.size(); ++r) {
      const WorkRegion& region = g_.regions[r];
      if (!region.alive || region.kind != RegionKind::Kernel) continue;
      int reader = -1;
      bool sole = true;
      for (NodeId id : region.nodes) {
        for (ValueId out : graph_.node(id).outputs) {
          sole = sole && !is_graph_output_[out];
          for (NodeId c : consumers_[out]) {
            const int cr = g_.region_of[c];
            if (cr == static_cast<int>(r) || cr < 0) continue;
            sole = sole && (reader < 0 || reader == cr);
            reader = cr;
          }
        }
      }
      if (!sole || reader < 0 || g_.regions[reader].kind != RegionKind::Kernel) continue;
      merged = try_merge(reader, static_cast<int>(r)) || merged;
    }
  }
}

// A region of movement ops only (no computation) is a copy: the runtime's
// views and library copies do it at least as well (a reshape costs nothing
// as a View), so each of its nodes becomes its own region again. Splitting
// keeps the regions acyclic: the pieces follow node order.
void Partitioner::unfuse_pure_movement() {
  const size_t count = g_.regions.size();
  for (size_t r = 0; r < count; ++r) {
    WorkRegion& region = g_.regions[r];
    if (!region.alive || region.kind != RegionKind::Kernel) continue;
    const bool pure = std::all_of(region.nodes.begin(), region.nodes.end(),
                                  [&](NodeId id) { return is_movement_op(graph_.node(id).op); });
    if (!pure) continue;
    const std::vector<NodeId> nodes = region.nodes;
    region.nodes = {nodes[0]};
    region.kind = detail::unfused_kind(graph_.node(nodes[0]));
    for (size_t i = 1; i < nodes.size(); ++i) {
      g_.region_of[nodes[i]] = static_cast<int>(g_.regions.size());
      g_.regions.push_back(WorkRegion{detail::unfused_kind(graph_.node(nodes[i])), {nodes[i]}});
    }
  }
}

FusionDecision Partitioner::can_merge(int a, int b) const {
  for (int r : {a, b}) {
    if (g_.regions[r].kind == RegionKind::Kernel) continue;
    const Node& node = graph_.node(g_.regions[r].nodes.at(0));
    return FusionDecision::refuse(fmt::format(
        "{} '{}' is not fusable ({})", op_name(node.op), graph_.value(node.outputs.at(0)).name,
        g_.regions[r].kind == RegionKind::View ? "a view" : "a library op"));
  }
  if (FusionDecision d = check_config(a, b); !d) return d;
  if (FusionDecision d = check_cycle(a, b); !d) return d;
  std::vector<NodeId> nodes;
  std::merge(g_.regions[a].nodes.begin(), g_.regions[a].nodes.end(), g_.regions[b].nodes.begin(),
             g_.regions[b].nodes.end(), std::back_inserter(nodes));
  const std::vector<ValueId> outputs = outputs_of(nodes);
  LoopAxes axes;
  if (FusionDecision d = map_loop_axes(graph_, with_splat_constants(nodes), outputs, axes); !d)
    return d;
  return check_outputs(nodes, outputs, axes);
}

std::vector<ValueId> Partitioner::outputs_of(const std::vector<NodeId>& nodes) const {
  std::vector<ValueId> outputs;
  for (NodeId id : nodes)
    for (ValueId out : graph_.node(id).outputs) {
      bool is_output = is_graph_output_[out];
      for (NodeId consumer : consumers_[out])
        is_output = is_output || !std::binary_search(nodes.begin(), nodes.end(), consumer);
      if (is_output) outputs.push_back(out);
    }
  std::sort(outputs.begin(), outputs.end());
  return outputs;
}

FusionDecision Partitioner::check_outputs(const std::vector<NodeId>& nodes,
                                          const std::vector<ValueId>& outputs,
                                          const LoopAxes& axes) const {
  // An output with extent 1 along a loop that is not reduced would be stored
  // by every iteration of that loop (a racy, redundant store); such a value
  // goes to a kernel of its own instead. Along reduced axes extent 1 is the
  // normal shape of a per-row result. A concat output is stored as its
  // pieces, so the pieces must span the axes.
  const sym::ShapeEnv& env = graph_.shape_env();
  RegionViews views(graph_, nodes);
  std::vector<ValueId> stored;
  for (ValueId out : outputs) {
    const Node& producer = graph_.node(graph_.value(out).producer);
    if (op_info(producer.op).op_class == OpClass::Concat) {
      stored.insert(stored.end(), producer.inputs.begin(), producer.inputs.end());
      continue;
    }
    // A reshape of a buffer is free as a View region; stored by a kernel it
    // would be a copy.
    if (op_info(producer.op).op_class == OpClass::Reshape && views.walkable(out))
      return FusionDecision::refuse(fmt::format(
          "reshape '{}' is read outside the region: it stays a view", graph_.value(out).name));
    stored.push_back(out);
  }
  for (ValueId out : stored) {
    std::vector<bool> spanned(axes.num_axes(), false);
    const std::vector<int>& dims = axes.value_axes.at(out);
    const Shape& shape = graph_.value(out).type.shape;
    for (size_t d = 0; d < dims.size(); ++d)
      if (env.canonicalize(shape[d]).as_const() != 1) spanned[dims[d]] = true;
    for (int a = 0; a < axes.num_axes(); ++a) {
      if (spanned[a] || axes.reduced[a] || axes.sizes[a].as_const() == 1) continue;
      return FusionDecision::refuse(
          fmt::format("output '{}' would be stored once per iteration of loop axis {} ({})",
                      graph_.value(out).name, a, axes.sizes[a].to_string()));
    }
  }
  return FusionDecision::allow();
}

bool Partitioner::any_node(int region, bool (*pred)(const Graph&, const Node&)) const {
  for (NodeId id : g_.regions[region].nodes)
    if (pred(graph_, graph_.node(id))) return true;
  return false;
}

FusionDecision Partitioner::check_config(int a, int b) const {
  const size_t size = g_.regions[a].nodes.size() + g_.regions[b].nodes.size();
  if (size > static_cast<size_t>(config_.max_fusion_size))
    return FusionDecision::refuse(
        fmt::format("{} ops exceed max_fusion_size={}", size, config_.max_fusion_size));
  auto reduces = [](const Graph&, const Node& node) { return detail::is_reduction(node); };
  if (!config_.fuse_reductions && (any_node(a, reduces) || any_node(b, reduces)))
    return FusionDecision::refuse("reduction fusion is disabled (--disable=reduce)");
  if (!config_.fuse_broadcasts &&
      (any_node(a, detail::has_broadcast) || any_node(b, detail::has_broadcast)))
    return FusionDecision::refuse("broadcast fusion is disabled (--disable=broadcast)");
  return FusionDecision::allow();
}

FusionDecision Partitioner::check_cycle(int a, int b) const {
  // The union has a cycle iff a path leaves it and comes back through
  // another region. Node ids are topological, so a region whose first node
  // comes after the union's last cannot lead back into it.
  const NodeId last = std::max(g_.regions[a].nodes.back(), g_.regions[b].nodes.back());
  std::vector<bool> seen(g_.regions.size(), false);
  std::vector<int> stack;
  auto for_each_successor = [&](int region, auto&& fn) {
    for (NodeId id : g_.regions[region].nodes)
      for (ValueId out : graph_.node(id).outputs)
        for (NodeId consumer : consumers_[out])
          fn(g_.region_of[consumer]);
  };
  for (int start : {a, b})
    for_each_successor(start, [&](int next) {
      if (next == a || next == b || seen[next]) return;
      seen[next] = true;
      stack.push_back(next);
    });
  while (!stack.empty()) {
    const int region = stack.back();
    stack.pop_back();
    if (g_.regions[region].nodes.front() > last) continue;
    bool back_in = false;
    for_each_successor(region, [&](int next) {
      if (next == a || next == b) {
        back_in = true;
      } else if (!seen[next]) {
        seen[next] = true;
        stack.push_back(next);
      }
    });
    if (back_in)
      return FusionDecision::refuse(
          fmt::format("merging would create a cycle through {}", describe(region)));
  }
  return FusionDecision::allow();
}

std::vector<NodeId> Partitioner::with_splat_constants(const std::vector<NodeId>& nodes) const {
  std::vector<NodeId> all = nodes;
  for (NodeId id : nodes)
    for (ValueId in : graph_.node(id).inputs) {
      const NodeId producer = graph_.value(in).producer;
      if (producer != kNoNode && detail::is_splat_constant(graph_.node(producer)))
        all.push_back(producer);
    }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

std::string Partitioner::describe(int region) const {
  const std::vector<NodeId>& nodes = g_.regions[region].nodes;
  std::vector<std::string> names;
  for (size_t i = 0; i < nodes.size() && i < 3; ++i) {
    const Node& node = graph_.node(nodes[i]);
    names.push_back(
        fmt::format("{} ({})", graph_.value(node.outputs.at(0)).name, op_name(node.op)));
  }
  if (nodes.size() > 3) names.push_back(fmt::format("... {} ops", nodes.size()));
  return fmt::format("{{{}}}", fmt::join(names, ", "));
}

}  // namespace

FusedGraph partition(std::shared_ptr<const Graph> graph, const FusionConfig& config) {
  AF_CHECK(graph != nullptr, "partition of a null graph");
  Grouping grouping = Partitioner(*graph, config).run();
  FusedGraph fused = detail::build_fused_graph(std::move(graph), std::move(grouping));
  FusionConfig lone = config;
  lone.group_kernels = false;  // the pipeline's group_kernels pass groups them
  group_kernels(fused, lone);
  return fused;
}

int FusedGraph::num_kernels() const {
  return static_cast<int>(std::count_if(regions.begin(), regions.end(), [](const Region& r) {
    return r.kind == RegionKind::Kernel;
  }));
}

std::string_view region_kind_name(RegionKind kind) {
  switch (kind) {
    case RegionKind::Kernel:
      return "kernel";
    case RegionKind::Library:
      return "library";
    case RegionKind::View:
      return "view";
    case RegionKind::Constant:
      return "constant";
  }
  AF_CHECK(false, "bad RegionKind {}", static_cast<int>(kind));
  return "";
}

}  // namespace autofuse::fuse
