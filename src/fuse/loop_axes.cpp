// map_loop_axes: one iteration space for a set of nodes (see loop_axes.h).
//
// Every (value, dim) pair is an element of a union-find; ops tie pairs that
// walk the same loop. The classes become loop axes, which are then checked
// (one dim per value and axis, equal sizes, common reduced axes) and ordered
// so that every value keeps its row-major dim order.
#include "autofuse/fuse/loop_axes.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "autofuse/fuse/view_ops.h"
#include "fuse/axis_order.h"

namespace autofuse::fuse {

std::string LoopAxes::to_string() const {
  std::vector<std::string> names;
  std::vector<int> reduced_axes;
  for (int i = 0; i < num_axes(); ++i) {
    names.push_back(sizes[i].to_string());
    if (reduced[i]) reduced_axes.push_back(i);
  }
  std::string text = fmt::format("[{}]", fmt::join(names, ", "));
  if (!reduced_axes.empty()) text += fmt::format("; reduce [{}]", fmt::join(reduced_axes, ", "));
  return text;
}

namespace {

bool is_one(const sym::Expr& e) {
  return e.as_const() == 1;
}

/// Union-find whose root is always the smallest member, so results do not
/// depend on the order of unions.
class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int find(int x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[b] = a;
  }

 private:
  std::vector<int> parent_;
};

/// The (value, dim) pairs of the candidate region and their classes.
class AxisMapper {
 public:
  AxisMapper(const Graph& graph, const std::vector<NodeId>& nodes,
             const std::vector<ValueId>& outputs)
      : graph_(graph), nodes_(nodes), views_(graph, nodes), outputs_(outputs) {
    attach_values();
    int total = 0;
    for (ValueId v : values_) {
      offset_[v] = total;
      for (const sym::Expr& dim : graph.value(v).type.shape) {
        pair_value_.push_back(v);
        pair_size_.push_back(graph.shape_env().canonicalize(dim));
      }
      total += graph.value(v).type.rank();
    }
    uf_ = UnionFind(total);
  }

  FusionDecision run(LoopAxes& out);

 private:
  int pair(ValueId v, int dim) const { return offset_.at(v) + dim; }
  int rank(ValueId v) const { return graph_.value(v).type.rank(); }
  const std::string& name(ValueId v) const { return graph_.value(v).name; }
  int axis_of(ValueId v, int dim) { return uf_.find(pair(v, dim)); }

  void attach_values();
  bool attached(ValueId v) const { return offset_.count(v) > 0 || attached_.count(v) > 0; }
  bool is_output(ValueId v) const {
    return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
  }
  FusionDecision check_views();
  void tie_node(const Node& node);
  void tie_right_aligned(ValueId in, ValueId out);
  void tie_reduction(const Node& node);
  FusionDecision check_one_dim_per_axis();
  FusionDecision compute_sizes();
  FusionDecision check_reductions();
  FusionDecision order_axes();
  std::string describe_axes(const std::set<int>& roots) const;

  const Graph& graph_;
  const std::vector<NodeId>& nodes_;
  RegionViews views_;
  const std::vector<ValueId>& outputs_;  // values that leave the region
  std::set<ValueId> attached_;
  std::vector<ValueId> values_;  // attached values, sorted by id
  std::map<ValueId, int> offset_;
  std::vector<ValueId> pair_value_;
  std::vector<sym::Expr> pair_size_;  // canonicalized
  UnionFind uf_{0};

  // Filled by the steps of run().
  std::vector<std::pair<NodeId, std::set<int>>> reductions_;  // reduced roots per reduction
  std::map<int, sym::Expr> axis_size_;                        // root -> size
  std::vector<int> order_;                                    // roots, outer to inner
};

void AxisMapper::tie_right_aligned(ValueId in, ValueId out) {
  const int shift = rank(out) - rank(in);
  AF_CHECK(shift >= 0, "input '{}' has a higher rank than output '{}'", name(in), name(out));
  // A literal-1 input dim against a larger output dim is a broadcast: it
  // still lives on the output's axis (with extent 1), and compute_sizes()
  // lets literal 1 sit on any axis.
  for (int d = 0; d < rank(in); ++d)
    uf_.unite(pair(in, d), pair(out, d + shift));
}

void AxisMapper::tie_reduction(const Node& node) {
  const auto& attrs = std::get<ReduceAttrs>(node.attrs);
  const ValueId in = node.inputs.at(0);
  const ValueId out = node.outputs.at(0);
  std::vector<bool> reduced(rank(in), attrs.axes.empty());
  for (int64_t axis : attrs.axes)
    reduced.at(axis) = true;
  int next_out = 0;
  for (int d = 0; d < rank(in); ++d) {
    if (attrs.keepdims) {
      uf_.unite(pair(in, d), pair(out, d));
    } else if (!reduced[d]) {
      uf_.unite(pair(in, d), pair(out, next_out++));
    }
  }
  AF_CHECK(attrs.keepdims ? rank(out) == rank(in) : next_out == rank(out),
           "reduction '{}' has an unexpected output rank", name(out));
}

FusionDecision AxisMapper::check_one_dim_per_axis() {
  for (ValueId v : values_) {
    std::map<int, int> dim_of_axis;
    for (int d = 0; d < rank(v); ++d) {
      auto [it, inserted] = dim_of_axis.emplace(axis_of(v, d), d);
      if (!inserted)
        return FusionDecision::refuse(
            fmt::format("dims {} and {} of '{}' map to one loop axis", it->second, d, name(v)));
    }
  }
  return FusionDecision::allow();
}

FusionDecision AxisMapper::compute_sizes() {
  const sym::ShapeEnv& env = graph_.shape_env();
  std::map<int, int> first_pair;  // root -> the pair that fixed its size
  for (int p = 0; p < static_cast<int>(pair_size_.size()); ++p) {
    const int root = uf_.find(p);
    const sym::Expr& size = pair_size_[p];
    auto it = axis_size_.find(root);
    if (it == axis_size_.end()) {
      axis_size_.emplace(root, size);
      first_pair.emplace(root, p);
      continue;
    }
    if (is_one(size)) continue;  // extent 1: broadcast along this axis
    if (is_one(it->second)) {
      it->second = size;
      first_pair[root] = p;
      continue;
    }
    if (env.known_equal(it->second, size)) continue;
    const int q = first_pair[root];
    const ValueId a = pair_value_[q], b = pair_value_[p];
    return FusionDecision::refuse(fmt::format(
        "sizes on one loop axis disagree: '{}' dim {} is {} but '{}' dim {} is {}", name(a),
        q - offset_.at(a), it->second.to_string(), name(b), p - offset_.at(b), size.to_string()));
  }
  return FusionDecision::allow();
}

std::string AxisMapper::describe_axes(const std::set<int>& roots) const {
  std::vector<std::string> sizes;
  for (int root : roots)
    sizes.push_back(axis_size_.at(root).to_string());
  return fmt::format("[{}]", fmt::join(sizes, ", "));
}

FusionDecision AxisMapper::check_reductions() {
  const sym::ShapeEnv& env = graph_.shape_env();
  for (NodeId id : nodes_) {
    const Node& node = graph_.node(id);
    if (op_info(node.op).op_class != OpClass::Reduce) continue;
    const auto& attrs = std::get<ReduceAttrs>(node.attrs);
    const ValueId in = node.inputs.at(0);
    std::set<int> roots;
    for (int d = 0; d < rank(in); ++d) {
      if (!attrs.axes.empty() &&
          std::find(attrs.axes.begin(), attrs.axes.end(), d) == attrs.axes.end())
        continue;
      const int root = axis_of(in, d);
      roots.insert(root);
      // An input constant along a reduced axis is reduced inside the loop
      // over it: if that loop may run zero times (a size like B - 1), the
      // result would be the identity instead of the input's value.
      const sym::Expr& size = axis_size_.at(root);
      if (is_one(pair_size_[static_cast<size_t>(pair(in, d))]) && !is_one(size) &&
          !env.proven(size, sym::Rel::Ge, sym::Expr(1)))
        return FusionDecision::refuse(
            fmt::format("'{}' reduces a value constant along loop axis {}, which may be empty",
                        name(node.outputs[0]), describe_axes({root})));
    }
    reductions_.emplace_back(id, std::move(roots));
  }
  // Every reduction shares the region's reduced axes: the Reduction template
  // walks one set of reduced axes per row of kept axes. A reduction whose
  // input is constant along a reduced axis still names that axis, and a
  // consumer of a reduce result just reads it with extent 1 there.
  for (size_t i = 1; i < reductions_.size(); ++i) {
    if (reductions_[i].second == reductions_[0].second) continue;
    return FusionDecision::refuse(fmt::format(
        "reductions over different axes: '{}' reduces {} but '{}' reduces {}",
        name(graph_.node(reductions_[0].first).outputs[0]), describe_axes(reductions_[0].second),
        name(graph_.node(reductions_[i].first).outputs[0]), describe_axes(reductions_[i].second)));
  }
  return FusionDecision::allow();
}

FusionDecision AxisMapper::order_axes() {
  // Dense indices for the roots, and the tie-break priority: first appearance
  // when walking values by decreasing rank (then id), so the largest value's
  // dim order wins where the constraints leave a choice.
  std::vector<ValueId> by_rank = values_;
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [&](ValueId a, ValueId b) { return rank(a) > rank(b); });
  std::map<int, int> index;  // root -> dense index (in priority order)
  std::vector<int> roots;
  for (ValueId v : by_rank)
    for (int d = 0; d < rank(v); ++d)
      if (index.emplace(axis_of(v, d), static_cast<int>(roots.size())).second)
        roots.push_back(axis_of(v, d));
  std::vector<int> priority(roots.size());
  std::iota(priority.begin(), priority.end(), 0);

  // Only buffers constrain the order: values the region loads whole, view
  // leaves and stored values (their row-major dims should walk the inner
  // axis contiguously); computed temporaries live in registers. Stores come
  // first; a chain that contradicts the ones taken (a transpose) is dropped,
  // and its buffer is walked with strides. Broadcast dims (extent 1 on a
  // larger axis) do not constrain the order: their stride is never used.
  const auto chain_of = [&](ValueId v) {
    detail::AxisChain chain{static_cast<int>(v), {}};
    for (int d = 0; d < rank(v); ++d) {
      const int root = axis_of(v, d);
      if (is_one(pair_size_[pair(v, d)]) && !is_one(axis_size_.at(root))) continue;
      chain.axes.push_back(index.at(root));
    }
    return chain;
  };
  std::vector<ValueId> stored, loaded;
  for (ValueId v : by_rank) {
    const NodeId producer = graph_.value(v).producer;
    const bool inside = producer != kNoNode && views_.in_region(producer);
    if (is_output(v)) {
      stored.push_back(v);
    } else if (!inside || views_.is_view_leaf(graph_.node(producer))) {
      loaded.push_back(v);
    }
  }
  for (NodeId id : nodes_) {  // concat pieces are stored too
    const Node& node = graph_.node(id);
    if (op_info(node.op).op_class == OpClass::Concat && is_output(node.outputs.at(0)))
      stored.insert(stored.end(), node.inputs.begin(), node.inputs.end());
  }
  std::vector<detail::AxisChain> chains;
  std::optional<std::vector<int>> order;
  std::vector<int> owners;
  for (const auto* group : {&stored, &loaded})
    for (ValueId v : *group) {
      detail::AxisChain chain = chain_of(v);
      if (chain.axes.size() < 2) continue;
      chains.push_back(std::move(chain));
      if (detail::order_axes(static_cast<int>(roots.size()), priority, chains, owners)) continue;
      chains.pop_back();
    }
  order = detail::order_axes(static_cast<int>(roots.size()), priority, chains, owners);
  AF_CHECK(order.has_value(), "loop order of accepted chains has a cycle");
  for (int i : *order)
    order_.push_back(roots[i]);
  return FusionDecision::allow();
}

void AxisMapper::attach_values() {
  // Reverse topological order: a value is attached (mapped onto loop axes)
  // when the region computes it, stores it, or a node that is itself live
  // ties it to its own axes. Values read only through view leaves (a
  // sliced input, a gathered table) are not: their Loads get composed views.
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
    const Node& node = graph_.node(*it);
    const OpClass cls = op_info(node.op).op_class;
    bool live = false;
    if (cls == OpClass::Concat) {
      live = is_output(node.outputs.at(0));  // stored piece by piece, never attached
    } else {
      const bool computed = !is_movement_op(node.op) && cls != OpClass::BroadcastTo;
      for (ValueId out : node.outputs)
        if (computed || is_output(out) || attached_.count(out) > 0) {
          attached_.insert(out);
          live = true;
        }
    }
    if (!live) continue;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (views_.ties_input(node, i)) attached_.insert(node.inputs[i]);
    // The indices of every gather on a live leaf's view chain are read at
    // the leaf's loop points (tie_node ties them).
    if (!views_.is_view_leaf(node)) continue;
    std::vector<ChainGather> gathers;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (attached_.count(node.outputs[k]) == 0) continue;
      (void)views_.chain_gathers(node, k, gathers);  // (check_views refuses a bad chain)
      for (const ChainGather& g : gathers)
        attached_.insert(graph_.node(g.node).inputs.at(1));
    }
  }
  values_.assign(attached_.begin(), attached_.end());
}

FusionDecision AxisMapper::check_views() {
  for (NodeId id : nodes_) {
    const Node& node = graph_.node(id);
    if (FusionDecision d = views_.check(node); !d) return d;
    if (op_info(node.op).op_class != OpClass::Concat) continue;
    for (NodeId other : nodes_)
      for (ValueId in : graph_.node(other).inputs)
        if (in == node.outputs.at(0))
          return FusionDecision::refuse(fmt::format(
              "concat '{}' is read inside the region (its pieces are only stored)", name(in)));
  }
  return FusionDecision::allow();
}

void AxisMapper::tie_node(const Node& node) {
  const ValueId out = node.outputs.at(0);
  if (views_.is_view_leaf(node)) {
    // Each gather's index dims walk the loop axes of the leaf's dims.
    std::vector<ChainGather> gathers;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (!attached(node.outputs[k])) continue;
      (void)views_.chain_gathers(node, k, gathers);
      for (const ChainGather& g : gathers)
        for (size_t j = 0; j < g.leaf_dims.size(); ++j)
          if (g.leaf_dims[j] >= 0)
            uf_.unite(pair(graph_.node(g.node).inputs.at(1), static_cast<int>(j)),
                      pair(node.outputs[k], g.leaf_dims[j]));
    }
  }
  switch (op_info(node.op).op_class) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Where:
    case OpClass::Cast:
    case OpClass::BroadcastTo:
      if (!attached(out)) return;
      for (ValueId in : node.inputs)
        tie_right_aligned(in, out);
      return;
    case OpClass::Reduce:
      tie_reduction(node);
      return;
    case OpClass::Transpose: {
      if (!attached(out) || views_.is_view_leaf(node)) return;
      const auto& perm = std::get<TransposeAttrs>(node.attrs).perm;
      for (size_t d = 0; d < perm.size(); ++d)
        uf_.unite(pair(out, static_cast<int>(d)), pair(node.inputs[0], static_cast<int>(perm[d])));
      return;
    }
    case OpClass::Reshape: {
      if (!attached(out) || views_.is_view_leaf(node)) return;
      // A squeeze-like reshape: its non-1 dims are the input's, in order.
      const ValueId in = node.inputs[0];
      std::vector<int> in_dims, out_dims;
      for (int d = 0; d < rank(in); ++d)
        if (!is_one(pair_size_[pair(in, d)])) in_dims.push_back(d);
      for (int d = 0; d < rank(out); ++d)
        if (!is_one(pair_size_[pair(out, d)])) out_dims.push_back(d);
      AF_CHECK(in_dims.size() == out_dims.size(), "reshape '{}' is not squeeze-like", name(out));
      for (size_t k = 0; k < in_dims.size(); ++k)
        uf_.unite(pair(in, in_dims[k]), pair(out, out_dims[k]));
      return;
    }
    case OpClass::Concat:
      if (!is_output(out)) return;
      for (size_t k = 1; k < node.inputs.size(); ++k)
        for (int d = 0; d < rank(node.inputs[0]); ++d)
          uf_.unite(pair(node.inputs[0], d), pair(node.inputs[k], d));
      return;
    default:
      return;  // slice, split, gather: view leaves; constant, iota: own axes until tied
  }
}

FusionDecision AxisMapper::run(LoopAxes& out) {
  for (NodeId id : nodes_) {
    const Node& node = graph_.node(id);
    switch (op_info(node.op).op_class) {
      case OpClass::MatMul:
      case OpClass::Conv:
        return FusionDecision::refuse(
            fmt::format("{} '{}' is a library op", op_name(node.op), name(node.outputs.at(0))));
      case OpClass::Unary:
      case OpClass::Binary:
      case OpClass::Where:
      case OpClass::Cast:
      case OpClass::BroadcastTo:
      case OpClass::Reduce:
      case OpClass::Constant:
      case OpClass::Iota:
        break;
      default:
        if (is_movement_op(node.op)) break;
        return FusionDecision::refuse(fmt::format("{} '{}' has no loop-axis mapping",
                                                  op_name(node.op), name(node.outputs.at(0))));
    }
  }
  if (FusionDecision d = check_views(); !d) return d;
  for (NodeId id : nodes_)
    tie_node(graph_.node(id));
  if (FusionDecision d = check_one_dim_per_axis(); !d) return d;
  if (FusionDecision d = compute_sizes(); !d) return d;
  if (FusionDecision d = check_reductions(); !d) return d;
  if (FusionDecision d = order_axes(); !d) return d;

  std::set<int> reduced_roots;
  if (!reductions_.empty()) reduced_roots = reductions_[0].second;
  std::map<int, int> index_of;
  LoopAxes axes;
  for (int root : order_) {
    index_of[root] = axes.num_axes();
    axes.sizes.push_back(axis_size_.at(root));
    axes.reduced.push_back(reduced_roots.count(root) > 0);
  }
  for (ValueId v : values_) {
    std::vector<int>& dims = axes.value_axes[v];
    for (int d = 0; d < rank(v); ++d)
      dims.push_back(index_of.at(axis_of(v, d)));
  }
  out = std::move(axes);
  return FusionDecision::allow();
}

}  // namespace

FusionDecision map_loop_axes(const Graph& graph, const std::vector<NodeId>& nodes,
                             const std::vector<ValueId>& outputs, LoopAxes& out) {
  return AxisMapper(graph, nodes, outputs).run(out);
}

std::vector<ValueId> region_outputs(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::set<NodeId> members(nodes.begin(), nodes.end());
  std::set<ValueId> outputs;
  for (ValueId v : graph.outputs()) {
    const NodeId producer = graph.value(v).producer;
    if (producer != kNoNode && members.count(producer) > 0) outputs.insert(v);
  }
  for (const Node& node : graph.nodes()) {
    if (members.count(node.id) > 0) continue;
    for (ValueId in : node.inputs) {
      const NodeId producer = graph.value(in).producer;
      if (producer != kNoNode && members.count(producer) > 0) outputs.insert(in);
    }
  }
  return {outputs.begin(), outputs.end()};
}

FusionDecision map_loop_axes(const Graph& graph, const std::vector<NodeId>& nodes, LoopAxes& out) {
  return map_loop_axes(graph, nodes, region_outputs(graph, nodes), out);
}

}  // namespace autofuse::fuse
