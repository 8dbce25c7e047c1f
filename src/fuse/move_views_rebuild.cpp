// The copy of a graph that one round of move_views rewrites builds, and the
// selection helpers the read and write sides share.
#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "fuse/move_views_rebuild.h"

namespace autofuse::fuse::move_views_detail {

Rebuild::Rebuild(const Graph& src)
    : src_(src),
      dst_(src.name()),
      users_(src.values().size()),
      is_output_(src.values().size(), false),
      map_(src.values().size(), -1) {
  // The new graph starts with every guard and hint of the source: its shapes
  // are the source's expressions, and guards recorded for nodes that a
  // rewrite removes still describe the graph the user gave.
  dst_.shape_env() = src.shape_env();
  for (const Node& node : src.nodes())
    for (ValueId in : node.inputs) {
      std::vector<NodeId>& users = users_[static_cast<size_t>(in)];
      if (users.empty() || users.back() != node.id) users.push_back(node.id);
    }
  for (ValueId out : src.outputs())
    is_output_[static_cast<size_t>(out)] = true;
  for (const Value& v : src.values())
    taken_.insert(v.name);
  for (ValueId in : src.inputs()) {
    const Value& v = src.value(in);
    map_[static_cast<size_t>(in)] = dst_.add_input(v.name, v.type);
  }
}

const Node* Rebuild::producer(ValueId v) const {
  const Value& value = src_.value(v);
  return value.producer == kNoNode ? nullptr : &src_.node(value.producer);
}

bool Rebuild::equal(const sym::Expr& a, const sym::Expr& b) const {
  return src_.shape_env().known_equal(a, b);
}

ValueId Rebuild::mapped(ValueId v) const {
  const ValueId out = map_.at(static_cast<size_t>(v));
  AF_CHECK(out >= 0, "move_views: value '{}' used before it was built", src_.value(v).name);
  return out;
}

ValueId Rebuild::add(OpKind op, const std::vector<ValueId>& inputs, Attrs attrs,
                     const std::string& name) {
  taken_.insert(name);
  return dst_.add_node(op, inputs, std::move(attrs), {name})[0];
}

std::vector<ValueId> Rebuild::add_split(ValueId x, SplitAttrs attrs, const std::string& base) {
  std::vector<std::string> names;
  for (size_t i = 0; i < attrs.sizes.size(); ++i)
    names.push_back(fresh(fmt::format("{}_{}", base, i)));
  return dst_.add_node(OpKind::Split, {x}, std::move(attrs), names);
}

std::string Rebuild::fresh(const std::string& base) {
  std::string name = base;
  for (int i = 1; taken_.count(name) != 0; ++i)
    name = fmt::format("{}_{}", base, i);
  taken_.insert(name);
  return name;
}

void Rebuild::replace(ValueId v, ValueId by) {
  const TensorType& want = src_.value(v).type;
  const TensorType& got = dst_.value(by).type;
  bool same = want.dtype == got.dtype && want.rank() == got.rank();
  for (int d = 0; same && d < want.rank(); ++d)
    same = dst_.shape_env().known_equal(want.shape[d], got.shape[d]);
  AF_CHECK(same, "move_views: '{}' of type {} replaced by '{}' of type {}", src_.value(v).name,
           want.to_string(), dst_.value(by).name, got.to_string());
  map_[static_cast<size_t>(v)] = by;
}

void Rebuild::copy(const Node& node) {
  std::vector<ValueId> inputs;
  for (ValueId in : node.inputs)
    inputs.push_back(mapped(in));
  std::vector<std::string> names;
  for (ValueId out : node.outputs)
    names.push_back(src_.value(out).name);
  const std::vector<ValueId> outs = dst_.add_node(node.op, inputs, node.attrs, names);
  for (size_t i = 0; i < outs.size(); ++i)
    map_[static_cast<size_t>(node.outputs[i])] = outs[i];
}

Graph Rebuild::finish() {
  std::vector<ValueId> outputs;
  for (ValueId out : src_.outputs())
    outputs.push_back(mapped(out));
  dst_.set_outputs(outputs);
  return std::move(dst_);
}

bool is_elementwise(OpKind op) {
  switch (op_info(op).op_class) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Where:
    case OpClass::Cast:
      return true;
    default:
      return false;
  }
}

bool is_cheap(OpKind op) {
  if (!is_elementwise(op)) return false;
  switch (op) {
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Reciprocal:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Sigmoid:
    case OpKind::Erf:
    case OpKind::Div:
    case OpKind::Pow:
    case OpKind::Mod:
      return false;
    default:
      return true;
  }
}

Selection selection_of(const Node& node) {
  Selection sel;
  sel.op = node.op;
  if (node.op == OpKind::Slice) {
    sel.slice = std::get<SliceAttrs>(node.attrs);
  } else {
    AF_CHECK(node.op == OpKind::Split, "selection_of a {} node", op_name(node.op));
    sel.split = std::get<SplitAttrs>(node.attrs);
  }
  return sel;
}

std::optional<Selection> restrict_to_operand(const Rebuild& rb, const Selection& sel,
                                             const Shape& out, const Shape& operand) {
  const auto offset = static_cast<int64_t>(out.size() - operand.size());
  AF_CHECK(offset >= 0, "operand of rank {} under a result of rank {}", operand.size(), out.size());
  // The operand's axis for the result's `axis`: -1 when the operand lacks
  // it or broadcasts along it, nullopt when its dim is neither.
  const auto own_axis = [&](int64_t axis) -> std::optional<int64_t> {
    if (axis < offset) return -1;
    const sym::Expr& dim = operand[static_cast<size_t>(axis - offset)];
    if (rb.equal(dim, out[static_cast<size_t>(axis)])) return axis - offset;
    if (rb.is_one(dim)) return -1;
    return std::nullopt;
  };
  Selection r;
  r.op = sel.op;
  if (sel.op == OpKind::Split) {
    const std::optional<int64_t> axis = own_axis(sel.split.axis);
    if (!axis) return std::nullopt;
    if (*axis < 0) return Selection{};  // broadcast along the split axis: empty
    r.split = SplitAttrs{*axis, sel.split.sizes};
    return r;
  }
  for (size_t i = 0; i < sel.slice.axes.size(); ++i) {
    const std::optional<int64_t> axis = own_axis(sel.slice.axes[i]);
    if (!axis) return std::nullopt;
    if (*axis < 0) continue;
    r.slice.axes.push_back(*axis);
    r.slice.starts.push_back(sel.slice.starts[i]);
    r.slice.ends.push_back(sel.slice.ends[i]);
    r.slice.steps.push_back(sel.slice.steps[i]);
  }
  return r;
}

std::vector<ValueId> emit_selection(Rebuild& rb, ValueId x, const Selection& sel,
                                    const std::string& base) {
  if (sel.empty()) return {x};
  if (sel.op == OpKind::Slice) return {rb.add(OpKind::Slice, {x}, sel.slice, rb.fresh(base))};
  // A split at static points becomes one slice per piece: single-output
  // nodes that each reader's region absorbs on its own, and that equal
  // slices of the same value (the user's own, or another rewrite's) merge.
  // Only along a static dim: a symbolic one equal to the sum by a guard
  // would give clamped slice lengths that are not the sizes.
  const sym::Expr& dim = rb.dst().value(x).type.shape.at(static_cast<size_t>(sel.split.axis));
  if (!dim.is_const()) return rb.add_split(x, sel.split, base);
  std::vector<int64_t> sizes;
  for (const sym::Expr& size : sel.split.sizes) {
    const std::optional<int64_t> n = size.as_const();
    if (!n) return rb.add_split(x, sel.split, base);
    sizes.push_back(*n);
  }
  std::vector<ValueId> pieces;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const SliceAttrs slice{{sel.split.axis}, {start}, {start + sizes[i]}, {1}};
    pieces.push_back(rb.add(OpKind::Slice, {x}, slice, rb.fresh(fmt::format("{}_{}", base, i))));
    start += sizes[i];
  }
  return pieces;
}

}  // namespace autofuse::fuse::move_views_detail
