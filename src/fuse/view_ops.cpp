// RegionViews: which movement ops of a region tie axes and which are view
// leaves (see view_ops.h).
#include "autofuse/fuse/view_ops.h"

#include <algorithm>
#include <variant>

#include <fmt/format.h>

namespace autofuse::fuse {

bool is_movement_op(OpKind op) {
  switch (op_info(op).op_class) {
    case OpClass::Transpose:
    case OpClass::Reshape:
    case OpClass::Slice:
    case OpClass::Split:
    case OpClass::Concat:
    case OpClass::Gather:
      return true;
    default:
      return false;
  }
}

namespace {

std::vector<sym::Expr> non_one_dims(const sym::ShapeEnv& env, const Shape& shape) {
  std::vector<sym::Expr> dims;
  for (const sym::Expr& d : shape) {
    sym::Expr c = env.canonicalize(d);
    if (c.as_const() != 1) dims.push_back(std::move(c));
  }
  return dims;
}

}  // namespace

bool is_squeeze_reshape(const Graph& graph, const Node& node) {
  if (op_info(node.op).op_class != OpClass::Reshape) return false;
  const sym::ShapeEnv& env = graph.shape_env();
  const auto in = non_one_dims(env, graph.value(node.inputs.at(0)).type.shape);
  const auto out = non_one_dims(env, graph.value(node.outputs.at(0)).type.shape);
  if (in.size() != out.size()) return false;
  for (size_t i = 0; i < in.size(); ++i)
    if (!env.known_equal(in[i], out[i])) return false;
  return true;
}

std::optional<std::vector<ReshapeGroup>> reshape_groups(const sym::ShapeEnv& env, const Shape& in,
                                                        const Shape& out) {
  std::vector<int> in_dims, out_dims;
  for (int d = 0; d < static_cast<int>(in.size()); ++d)
    if (env.canonicalize(in[d]).as_const() != 1) in_dims.push_back(d);
  for (int d = 0; d < static_cast<int>(out.size()); ++d)
    if (env.canonicalize(out[d]).as_const() != 1) out_dims.push_back(d);
  const auto product = [&](const Shape& shape, const std::vector<int>& dims, size_t from,
                           size_t count) {
    sym::Expr p(1);
    for (size_t k = from; k < from + count; ++k)
      p = p * env.canonicalize(shape[static_cast<size_t>(dims[k])]);
    return p;
  };
  std::vector<ReshapeGroup> groups;
  size_t i = 0, j = 0;
  while (i < in_dims.size() || j < out_dims.size()) {
    if (i == in_dims.size() || j == out_dims.size()) return std::nullopt;
    // The smallest (di, dj) whose products are equal: ranks are small, so
    // trying every pair in order of di + dj is cheap.
    bool found = false;
    for (size_t total = 2; !found && total <= in_dims.size() - i + out_dims.size() - j; ++total)
      for (size_t di = 1; di < total && !found; ++di) {
        const size_t dj = total - di;
        if (i + di > in_dims.size() || j + dj > out_dims.size()) continue;
        if (!env.known_equal(product(in, in_dims, i, di), product(out, out_dims, j, dj))) continue;
        ReshapeGroup g;
        g.in_dims.assign(in_dims.begin() + static_cast<std::ptrdiff_t>(i),
                         in_dims.begin() + static_cast<std::ptrdiff_t>(i + di));
        g.out_dims.assign(out_dims.begin() + static_cast<std::ptrdiff_t>(j),
                          out_dims.begin() + static_cast<std::ptrdiff_t>(j + dj));
        groups.push_back(std::move(g));
        i += di;
        j += dj;
        found = true;
      }
    if (!found) return std::nullopt;
  }
  return groups;
}

bool is_splitting_reshape(const Graph& graph, const Node& node) {
  if (op_info(node.op).op_class != OpClass::Reshape) return false;
  const auto groups = reshape_groups(graph.shape_env(), graph.value(node.inputs.at(0)).type.shape,
                                     graph.value(node.outputs.at(0)).type.shape);
  if (!groups) return false;
  for (const ReshapeGroup& g : *groups)
    if (g.in_dims.size() != 1) return false;
  return true;
}

RegionViews::RegionViews(const Graph& graph, const std::vector<NodeId>& nodes)
    : graph_(graph), nodes_(nodes), walkable_(graph.values().size(), false) {
  // Values produced outside the region are buffers: walkable. Node ids are
  // topological, so one forward sweep settles the rest.
  for (NodeId id : nodes)
    for (ValueId in : graph.node(id).inputs) {
      const NodeId producer = graph.value(in).producer;
      if (producer == kNoNode || !in_region(producer)) walkable_[in] = true;
    }
  for (NodeId id : nodes) {
    const Node& node = graph.node(id);
    bool view = false;
    switch (op_info(node.op).op_class) {
      case OpClass::Transpose:
      case OpClass::BroadcastTo:
      case OpClass::Reshape:
      case OpClass::Slice:
      case OpClass::Split:
      case OpClass::Gather:  // (its data operand: the indices are read at the loop point)
        view = walkable_[node.inputs.at(0)];
        break;
      default:
        break;
    }
    for (ValueId out : node.outputs)
      walkable_[out] = view;
  }
}

namespace {

constexpr int kOneDim = -1;  // a literal-1 dim: on no loop axis of the leaf
constexpr int kNoLoop = -2;  // a dim whose coordinate is not one loop index

bool literal_one(const sym::ShapeEnv& env, const sym::Expr& e) {
  return env.canonicalize(e).as_const() == 1;
}

// For each dim of node.inputs[0], the leaf dim it walks with, from that of
// the node's output `output_index` (`y`).
std::vector<int> input_dims(const Graph& graph, const Node& node, size_t output_index,
                            const std::vector<int>& y) {
  const sym::ShapeEnv& env = graph.shape_env();
  const Shape& x_shape = graph.value(node.inputs.at(0)).type.shape;
  const Shape& y_shape = graph.value(node.outputs.at(output_index)).type.shape;
  const size_t rx = x_shape.size();
  std::vector<int> x(rx, kNoLoop);
  for (size_t d = 0; d < rx; ++d)
    if (literal_one(env, x_shape[d])) x[d] = kOneDim;
  switch (op_info(node.op).op_class) {
    case OpClass::Transpose: {
      const auto& perm = std::get<TransposeAttrs>(node.attrs).perm;
      for (size_t i = 0; i < perm.size(); ++i)
        x[static_cast<size_t>(perm[i])] = y[i];
      return x;
    }
    case OpClass::BroadcastTo:
      for (size_t d = 0; d < rx; ++d)
        if (x[d] != kOneDim) x[d] = y[d + y.size() - rx];
      return x;
    case OpClass::Reshape: {
      const auto groups = reshape_groups(env, x_shape, y_shape);
      if (!groups) return x;
      for (const ReshapeGroup& g : *groups)  // one dim each side: the same coordinate
        if (g.in_dims.size() == 1 && g.out_dims.size() == 1)
          x[static_cast<size_t>(g.in_dims[0])] = y[static_cast<size_t>(g.out_dims[0])];
      return x;
    }
    case OpClass::Slice: {
      for (size_t d = 0; d < rx; ++d)
        if (x[d] != kOneDim) x[d] = y[d];
      for (int64_t axis : std::get<SliceAttrs>(node.attrs).axes)
        if (x[static_cast<size_t>(axis)] != kOneDim) x[static_cast<size_t>(axis)] = kNoLoop;
      return x;
    }
    case OpClass::Split: {
      for (size_t d = 0; d < rx; ++d)
        if (x[d] != kOneDim) x[d] = y[d];
      const auto axis = static_cast<size_t>(std::get<SplitAttrs>(node.attrs).axis);
      if (x[axis] != kOneDim) x[axis] = kNoLoop;
      return x;
    }
    case OpClass::Gather: {
      const auto axis = static_cast<size_t>(std::get<AxisAttrs>(node.attrs).axis);
      const auto q = static_cast<size_t>(graph.value(node.inputs.at(1)).type.rank());
      for (size_t d = 0; d < rx; ++d)
        if (d != axis && x[d] != kOneDim) x[d] = y[d < axis ? d : d + q - 1];
      return x;
    }
    default:
      return x;
  }
}

}  // namespace

FusionDecision RegionViews::chain_gathers(const Node& leaf, size_t output_index,
                                          std::vector<ChainGather>& out) const {
  out.clear();
  const Node* node = &leaf;
  size_t index = output_index;
  std::vector<int> dims(graph_.value(leaf.outputs.at(output_index)).type.rank());
  for (size_t d = 0; d < dims.size(); ++d)
    dims[d] = static_cast<int>(d);
  for (;;) {
    if (op_info(node->op).op_class == OpClass::Gather) {
      const auto axis = static_cast<size_t>(std::get<AxisAttrs>(node->attrs).axis);
      const auto q = static_cast<size_t>(graph_.value(node->inputs.at(1)).type.rank());
      ChainGather g{node->id, {}};
      for (size_t j = 0; j < q; ++j) {
        const int d = dims.at(axis + j);
        if (d == kNoLoop)
          return FusionDecision::refuse(fmt::format(
              "the indices of gather '{}' are not read at loop points (the view of '{}' slices, "
              "splits, regroups or gathers again the gathered dim)",
              graph_.value(node->outputs[0]).name, graph_.value(leaf.outputs[output_index]).name));
        g.leaf_dims.push_back(d);
      }
      out.push_back(std::move(g));
    }
    const ValueId in = node->inputs.at(0);
    const NodeId producer = graph_.value(in).producer;
    if (!walkable(in) || producer == kNoNode || !in_region(producer)) break;
    dims = input_dims(graph_, *node, index, dims);
    node = &graph_.node(producer);
    index = 0;
    while (node->outputs.at(index) != in)
      ++index;
  }
  return FusionDecision::allow();
}

bool RegionViews::in_region(NodeId id) const {
  return std::binary_search(nodes_.begin(), nodes_.end(), id);
}

bool RegionViews::walkable(ValueId v) const {
  return walkable_.at(v);
}

bool RegionViews::is_view_leaf(const Node& node) const {
  switch (op_info(node.op).op_class) {
    case OpClass::Slice:
    case OpClass::Split:
    case OpClass::Gather:
      return true;
    case OpClass::Transpose:
      return walkable(node.inputs.at(0));
    case OpClass::Reshape:
      return walkable(node.inputs.at(0)) || !is_squeeze_reshape(graph_, node);
    default:
      return false;
  }
}

bool RegionViews::ties_input(const Node& node, size_t i) const {
  if (op_info(node.op).op_class == OpClass::Gather) return i == 1;  // the indices
  return !is_view_leaf(node);
}

FusionDecision RegionViews::check(const Node& node) const {
  if (!is_view_leaf(node)) return FusionDecision::allow();
  const ValueId in = node.inputs.at(0);
  const std::string& name = graph_.value(node.outputs.at(0)).name;
  if (!walkable(in))
    return FusionDecision::refuse(fmt::format(
        "{} '{}' reads '{}', which the region computes (only views of buffers are fused)",
        op_name(node.op), name, graph_.value(in).name));
  // A reshape that merges dims is an address computation only over a dense
  // buffer: every op behind it must be a reshape too. One that only splits
  // dims is affine over any view.
  if (op_info(node.op).op_class == OpClass::Reshape && !is_squeeze_reshape(graph_, node) &&
      !is_splitting_reshape(graph_, node)) {
    for (ValueId v = in;;) {
      const NodeId producer = graph_.value(v).producer;
      if (producer == kNoNode || !in_region(producer)) break;
      const Node& p = graph_.node(producer);
      if (op_info(p.op).op_class != OpClass::Reshape)
        return FusionDecision::refuse(
            fmt::format("reshape '{}' regroups the dims of a {} view", name, op_name(p.op)));
      v = p.inputs.at(0);
    }
  }
  std::vector<ChainGather> gathers;
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (FusionDecision d = chain_gathers(node, k, gathers); !d) return d;
  return FusionDecision::allow();
}

}  // namespace autofuse::fuse
