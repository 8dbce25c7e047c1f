// Lowering of a Kernel region to its AscGraph (see lower.h). Every graph
// value gets one AscNode at its own extent over the loop axes; where a
// consumer needs a value at a larger extent, an explicit Broadcast is
// inserted (once per value and extent).
#include "autofuse/ascir/lower.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>

#include "ascir/lower_views.h"

namespace autofuse::ascir {

namespace {

const sym::Expr kOne(1);

using Repeats = std::vector<sym::Expr>;

class Lowerer {
 public:
  Lowerer(const Graph& graph, const fuse::Region& region)
      : graph_(graph), region_(region), axes_(region.loop_axes), views_(graph, region.nodes) {}

  AscGraph run() {
    AF_CHECK(region_.kind == fuse::RegionKind::Kernel, "lowering region {} that is not a kernel",
             region_.name);
    AF_CHECK(axes_.reduced.size() == axes_.sizes.size(), "region {}: loop axes inconsistent",
             region_.name);
    out_.name = region_.name;
    for (size_t a = 0; a < axes_.sizes.size(); ++a)
      out_.axes.push_back(Axis{fmt::format("z{}", a), axes_.sizes[a], axes_.reduced[a]});
    out_.inputs = region_.inputs;
    out_.outputs = region_.outputs;

    for (size_t i = 0; i < region_.inputs.size(); ++i)
      lower_input(static_cast<int>(i));
    for (NodeId id : region_.nodes)
      lower_node(graph_.node(id));
    for (size_t i = 0; i < region_.outputs.size(); ++i)
      lower_output(static_cast<int>(i));
    verify(out_);
    return std::move(out_);
  }

 private:
  const std::vector<int>& axes_of(ValueId v) const {
    auto it = axes_.value_axes.find(v);
    AF_CHECK(it != axes_.value_axes.end(), "region {}: value '{}' has no loop axes", region_.name,
             graph_.value(v).name);
    AF_CHECK(static_cast<int>(it->second.size()) == graph_.value(v).type.rank(),
             "region {}: value '{}' maps {} dims of {}", region_.name, graph_.value(v).name,
             it->second.size(), graph_.value(v).type.rank());
    return it->second;
  }

  sym::Expr dim(ValueId v, size_t d) const {
    return graph_.shape_env().canonicalize(graph_.value(v).type.shape[d]);
  }

  // The value's extent along each loop axis: the axis size where it has a
  // dim, 1 where it has none or a broadcast literal-1 dim.
  Repeats extents(ValueId v) const {
    const std::vector<int>& axes = axes_of(v);
    Repeats reps(axes_.sizes.size(), kOne);
    std::vector<bool> used(axes_.sizes.size(), false);
    for (size_t d = 0; d < axes.size(); ++d) {
      const int a = axes[d];
      AF_CHECK(a >= 0 && a < axes_.num_axes() && !used[static_cast<size_t>(a)],
               "value '{}': dim {} maps to axis {} (bad or repeated)", graph_.value(v).name, d, a);
      used[static_cast<size_t>(a)] = true;
      const sym::Expr size = dim(v, d);
      const sym::Expr& axis_size = axes_.sizes[static_cast<size_t>(a)];
      if (size == kOne) continue;
      AF_CHECK(graph_.shape_env().known_equal(size, axis_size),
               "value '{}': dim {} ({}) on axis {} of size {}", graph_.value(v).name, d,
               size.to_string(), a, axis_size.to_string());
      reps[static_cast<size_t>(a)] = axis_size;
    }
    return reps;
  }

  // Row-major element strides of the value's buffer over the loop axes
  // (0 where the value does not vary).
  Repeats strides(ValueId v, const Repeats& reps) const {
    const std::vector<int>& axes = axes_of(v);
    Repeats out(axes_.sizes.size(), sym::Expr(0));
    sym::Expr stride(1);
    for (size_t d = axes.size(); d-- > 0;) {
      const auto a = static_cast<size_t>(axes[d]);
      if (reps[a] != kOne) out[a] = stride;
      stride = stride * dim(v, d);
    }
    return out;
  }

  std::string unique_name(const std::string& base) {
    std::string name = base;
    for (int i = 1; names_.count(name) > 0; ++i)
      name = fmt::format("{}_{}", base, i);
    names_.insert(name);
    return name;
  }

  int add(AscNode n, const std::string& base_name) {
    n.id = static_cast<int>(out_.nodes.size());
    n.name = unique_name(base_name);
    out_.nodes.push_back(std::move(n));
    return out_.nodes.back().id;
  }

  static AscNode make(AscKind kind, DType dtype, std::vector<int> inputs, Repeats reps) {
    AscNode n;
    n.kind = kind;
    n.dtype = dtype;
    n.inputs = std::move(inputs);
    n.view.repeats = std::move(reps);
    return n;
  }

  // The node of `v` stretched to `target` (an explicit Broadcast, shared by
  // every consumer that needs the same extent).
  int at_repeats(int node, const Repeats& target, const std::string& name = "") {
    const AscNode& n = out_.node(node);
    if (n.view.repeats == target) return node;
    for (size_t a = 0; a < target.size(); ++a)
      AF_CHECK(n.view.repeats[a] == target[a] || n.view.repeats[a] == kOne,
               "node {} cannot broadcast to a smaller extent on axis {}", n.name, a);
    std::string key = std::to_string(node);
    for (const sym::Expr& r : target)
      key += "," + r.to_string();
    auto it = broadcasts_.find(key);
    if (it != broadcasts_.end()) return it->second;
    const int id = add(make(AscKind::Broadcast, n.dtype, {node}, target),
                       name.empty() ? n.name + "_brc" : name);
    broadcasts_.emplace(key, id);
    return id;
  }

  int value_node(ValueId v) const {
    auto it = node_of_.find(v);
    AF_CHECK(it != node_of_.end(), "region {}: value '{}' read before it is defined", region_.name,
             graph_.value(v).name);
    return it->second;
  }

  void lower_input(int index) {
    const ValueId v = region_.inputs[static_cast<size_t>(index)];
    const Value& value = graph_.value(v);
    const bool attached = axes_.value_axes.count(v) > 0;
    // A buffer read only through view leaves spans no loop axis of its own.
    const Repeats reps = attached ? extents(v) : Repeats(axes_.sizes.size(), kOne);
    AscNode data = make(AscKind::Data, value.type.dtype, {}, reps);
    data.arg_index = index;
    const int data_id = add(std::move(data), value.name);
    data_of_[v] = data_id;
    if (!attached) return;
    AscNode load = make(AscKind::Load, value.type.dtype, {data_id}, reps);
    load.view.strides = strides(v, reps);
    node_of_[v] = add(std::move(load), value.name + "_load");
  }

  void lower_output(int index) {
    const ValueId v = region_.outputs[static_cast<size_t>(index)];
    const Value& value = graph_.value(v);
    const Node& producer = graph_.node(value.producer);
    if (op_info(producer.op).op_class == OpClass::Concat) {
      lower_concat_output(index, producer);
      return;
    }
    const Repeats reps = extents(v);
    const int input = at_repeats(value_node(v), reps);
    AscNode store = make(AscKind::Store, value.type.dtype, {input}, reps);
    store.view.strides = strides(v, reps);
    const int store_id = add(std::move(store), value.name + "_store");
    AscNode output = make(AscKind::Output, value.type.dtype, {store_id}, reps);
    output.arg_index = index;
    add(std::move(output), value.name + "_out");
  }

  // A concat stored by the region: each piece is a Store into its slice of
  // the output buffer (fuse tied the pieces to one iteration space).
  void lower_concat_output(int index, const Node& concat) {
    const ValueId v = concat.outputs[0];
    const Value& value = graph_.value(v);
    const sym::ShapeEnv& env = graph_.shape_env();
    const auto axis = static_cast<size_t>(std::get<AxisAttrs>(concat.attrs).axis);
    const std::vector<sym::Expr> buffer_strides = detail::row_major_strides(env, value.type.shape);
    std::vector<int> stores;
    Repeats out_reps;
    sym::Expr start(0);
    for (ValueId piece : concat.inputs) {
      const Repeats reps = extents(piece);
      const std::vector<int>& piece_axes = axes_of(piece);
      Repeats strides(axes_.sizes.size(), sym::Expr(0));
      for (size_t d = 0; d < piece_axes.size(); ++d) {
        const auto a = static_cast<size_t>(piece_axes[d]);
        if (reps[a] != kOne) strides[a] = buffer_strides[d];
      }
      AscNode store =
          make(AscKind::Store, value.type.dtype, {at_repeats(value_node(piece), reps)}, reps);
      store.view.strides = std::move(strides);
      store.view.offset = start * buffer_strides[axis];
      stores.push_back(add(std::move(store), value.name + "_store"));
      start = start + env.canonicalize(graph_.value(piece).type.shape[axis]);
      // The buffer's repeats: the axis size wherever any piece varies.
      if (out_reps.empty()) out_reps = reps;
      for (size_t a = 0; a < reps.size(); ++a)
        if (reps[a] != kOne) out_reps[a] = reps[a];
    }
    AscNode output = make(AscKind::Output, value.type.dtype, std::move(stores), out_reps);
    output.arg_index = index;
    add(std::move(output), value.name + "_out");
  }

  // A view leaf's outputs: a Load (or a Gather, with one index per gather
  // on the chain) of its buffer through the composed view, stretched to
  // the value's extents.
  void lower_view_leaf(const Node& node) {
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ValueId out = node.outputs[k];
      if (axes_.value_axes.count(out) == 0) continue;  // read only by other leaves
      const Value& value = graph_.value(out);
      const Repeats reps = extents(out);
      detail::LeafView view =
          detail::compose_leaf_view(graph_, region_, views_, node, static_cast<int>(k));
      // The Gather varies where its address does: along the strides and
      // wherever an index varies.
      Repeats load_reps(reps.size(), kOne);
      for (size_t a = 0; a < reps.size(); ++a)
        if (view.strides[a] != sym::Expr(0)) load_reps[a] = reps[a];
      for (const detail::LeafGather& g : view.gathers) {
        const Repeats& index_reps = out_.node(value_node(g.index)).view.repeats;
        for (size_t a = 0; a < reps.size(); ++a)
          if (index_reps[a] != kOne) load_reps[a] = reps[a];
      }
      for (size_t a = 0; a < reps.size(); ++a)
        if (load_reps[a] == kOne) view.strides[a] = sym::Expr(0);
      auto it = data_of_.find(view.buffer);
      AF_CHECK(it != data_of_.end(), "view leaf '{}' reads '{}', which is not a region input",
               value.name, graph_.value(view.buffer).name);
      const bool gather = !view.gathers.empty();
      AscNode load =
          make(gather ? AscKind::Gather : AscKind::Load, value.type.dtype, {it->second}, load_reps);
      for (const detail::LeafGather& g : view.gathers) {
        load.inputs.push_back(at_repeats(value_node(g.index), load_reps));
        load.gather.push_back(ascir::GatherDim{g.stride, g.size, graph_.value(g.gather).name});
      }
      load.view.strides = std::move(view.strides);
      load.view.offset = view.offset;
      const bool named = gather && op_info(node.op).op_class == OpClass::Gather;
      const int id = add(std::move(load), named ? value.name : value.name + "_load");
      node_of_[out] = at_repeats(id, reps, value.name + "_brc");
    }
  }

  void lower_node(const Node& node) {
    const OpClass cls = op_info(node.op).op_class;
    if (cls == OpClass::Concat) return;  // stored by lower_concat_output
    bool attached = false;
    for (ValueId out : node.outputs)
      attached = attached || axes_.value_axes.count(out) > 0;
    if (!attached) return;  // a step of a view chain, read only through a leaf's view
    if (views_.is_view_leaf(node)) {
      lower_view_leaf(node);
      return;
    }
    AF_CHECK(node.outputs.size() == 1, "kernel region {} holds multi-output op {}", region_.name,
             op_name(node.op));
    const ValueId out = node.outputs[0];
    const Value& value = graph_.value(out);
    const Repeats reps = extents(out);
    switch (cls) {
      case OpClass::Unary:
      case OpClass::Binary:
      case OpClass::Where: {
        std::vector<int> inputs;
        for (ValueId in : node.inputs)
          inputs.push_back(at_repeats(value_node(in), reps));
        AscNode n = make(AscKind::Compute, value.type.dtype, std::move(inputs), reps);
        n.op = node.op;
        node_of_[out] = add(std::move(n), value.name);
        return;
      }
      case OpClass::Cast: {
        AscNode n = make(AscKind::Cast, value.type.dtype,
                         {at_repeats(value_node(node.inputs[0]), reps)}, reps);
        n.saturate = std::get<CastAttrs>(node.attrs).saturate;
        node_of_[out] = add(std::move(n), value.name);
        return;
      }
      case OpClass::Transpose:
      case OpClass::Reshape:
        // Tied (not a view leaf): the same element at every loop point.
        node_of_[out] = at_repeats(value_node(node.inputs[0]), reps, value.name);
        return;
      case OpClass::BroadcastTo: {
        const ValueId in = node.inputs[0];
        const int x = at_repeats(value_node(in), extents(in));
        // A broadcast_to that changes no extent (e.g. adds a leading 1) is
        // the value itself.
        node_of_[out] = at_repeats(x, reps, value.name);
        return;
      }
      case OpClass::Reduce:
        lower_reduce(node, reps);
        return;
      case OpClass::Constant: {
        const auto& attrs = std::get<ConstantAttrs>(node.attrs);
        AF_CHECK(attrs.values.size() == 1, "kernel region {} holds non-splat constant '{}'",
                 region_.name, value.name);
        add_scalar(out, attrs.values[0]);
        return;
      }
      case OpClass::Iota: {
        const auto& attrs = std::get<IotaAttrs>(node.attrs);
        const int axis = axes_of(out).at(static_cast<size_t>(attrs.axis));
        if (reps[static_cast<size_t>(axis)] == kOne) {
          add_scalar(out, 0);  // extent 1 along its own axis: always index 0
          return;
        }
        Repeats index_reps(reps.size(), kOne);
        index_reps[static_cast<size_t>(axis)] = reps[static_cast<size_t>(axis)];
        AscNode n = make(AscKind::Index, value.type.dtype, {}, index_reps);
        n.axis = axis;
        node_of_[out] = add(std::move(n), value.name);
        return;
      }
      default:
        AF_CHECK(false, "kernel region {} holds op {}, which has no lowering", region_.name,
                 op_name(node.op));
    }
  }

  void add_scalar(ValueId v, double scalar) {
    const Value& value = graph_.value(v);
    AscNode n = make(AscKind::Scalar, value.type.dtype, {}, Repeats(axes_.sizes.size(), kOne));
    n.scalar = scalar;
    node_of_[v] = add(std::move(n), value.name);
  }

  void lower_reduce(const Node& node, const Repeats& reps) {
    const ValueId in = node.inputs[0];
    const Repeats in_reps = extents(in);
    const auto& attrs = std::get<ReduceAttrs>(node.attrs);
    // The op's reduced dims must be exactly the loop axes marked reduced
    // (where the input has extent there), or "over the reduced axes" would
    // mean something else than the op.
    std::vector<bool> reduces(axes_.sizes.size(), false);
    const std::vector<int>& in_axes = axes_of(in);
    for (size_t d = 0; d < in_axes.size(); ++d) {
      const bool listed =
          attrs.axes.empty() || std::find(attrs.axes.begin(), attrs.axes.end(),
                                          static_cast<int64_t>(d)) != attrs.axes.end();
      if (listed) reduces[static_cast<size_t>(in_axes[d])] = true;
    }
    for (size_t a = 0; a < reduces.size(); ++a) {
      if (reduces[a] && in_reps[a] != kOne)
        AF_CHECK(axes_.reduced[a], "{} reduces loop axis {}, which is not marked reduced",
                 graph_.value(node.outputs[0]).name, a);
      else if (!reduces[a] && axes_.reduced[a])
        AF_CHECK(in_reps[a] == kOne, "{} keeps reduced loop axis {}",
                 graph_.value(node.outputs[0]).name, a);
    }
    const Value& value = graph_.value(node.outputs[0]);
    AscNode n =
        make(AscKind::Reduce, value.type.dtype, {at_repeats(value_node(in), in_reps)}, reps);
    n.op = node.op;
    node_of_[node.outputs[0]] = add(std::move(n), value.name);
  }

  const Graph& graph_;
  const fuse::Region& region_;
  const fuse::LoopAxes& axes_;
  const fuse::RegionViews views_;
  AscGraph out_;
  std::map<ValueId, int> node_of_;
  std::map<ValueId, int> data_of_;         // region input -> its Data node
  std::map<std::string, int> broadcasts_;  // "node,rep,rep,..." -> Broadcast id
  std::set<std::string> names_;
};

}  // namespace

AscGraph lower_region(const Graph& graph, const fuse::Region& region) {
  return Lowerer(graph, region).run();
}

}  // namespace autofuse::ascir
