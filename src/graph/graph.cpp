// Graph construction and queries. Every node is verified and typed as it is
// added (see infer_types), so a Graph is valid at all times.
#include "autofuse/graph/graph.h"

#include <algorithm>
#include <variant>

#include "graph/infer_internal.h"

namespace autofuse {

std::string TensorType::to_string() const {
  std::string out = fmt::format("{}[", dtype_name(dtype));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += shape[i].to_string();
  }
  return out + "]";
}

sym::Expr numel(const Shape& shape) {
  sym::Expr n = 1;
  for (const sym::Expr& d : shape)
    n = n * d;
  return n;
}

namespace {

bool is_identifier(const std::string& name) {
  if (name.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name[0])) return false;
  return std::all_of(name.begin() + 1, name.end(), [&](char c) { return alpha(c) || digit(c); });
}

/// Appends the symbols of `e` not yet in `symbols`, in operand order.
void record_symbols(const sym::Expr& e, std::vector<std::string>& symbols) {
  if (e.is_symbol()) {
    if (std::find(symbols.begin(), symbols.end(), e.symbol_name()) == symbols.end())
      symbols.push_back(e.symbol_name());
    return;
  }
  for (const sym::Expr& operand : e.operands())
    record_symbols(operand, symbols);
}

/// The symbolic sizes an op's attributes introduce.
const std::vector<sym::Expr>* attr_dims(const Attrs& attrs) {
  if (const auto* a = std::get_if<ShapeAttrs>(&attrs)) return &a->shape;
  if (const auto* a = std::get_if<IotaAttrs>(&attrs)) return &a->shape;
  if (const auto* a = std::get_if<SplitAttrs>(&attrs)) return &a->sizes;
  return nullptr;
}

/// The message of `e` for re-throwing with another location: keeps a
/// location `e` already had (e.g. from a nested parse) in the text.
std::string message_of(const UserError& e) {
  return e.where().to_string().empty() ? e.message() : std::string(e.what());
}

}  // namespace

Graph::Graph(std::string name) : name_(std::move(name)) {
  if (!is_identifier(name_))
    throw UserError(fmt::format("graph name '{}' is not an identifier", name_));
}

ValueId Graph::new_value(const std::string& name, TensorType type, NodeId producer, int index,
                         const SourceLocation& where) {
  if (!is_identifier(name))
    throw UserError(where, fmt::format("value name '{}' is not an identifier", name));
  if (value_by_name_.count(name))
    throw UserError(where, fmt::format("value name '{}' is already used", name));
  const auto id = static_cast<ValueId>(values_.size());
  values_.push_back(Value{id, name, std::move(type), producer, index});
  value_by_name_.emplace(name, id);
  return id;
}

ValueId Graph::add_input(const std::string& name, TensorType type, const SourceLocation& where) {
  SourceLocation loc = where;
  loc.node = name;
  for (size_t i = 0; i < type.shape.size(); ++i)
    if (shape_env_.proven(type.shape[i], sym::Rel::Lt, 0))
      throw UserError(loc,
                      fmt::format("input dim {} is negative: {}", i, type.shape[i].to_string()));
  std::vector<std::string> symbols = symbols_;
  for (const sym::Expr& d : type.shape)
    record_symbols(d, symbols);
  const ValueId id = new_value(name, std::move(type), kNoNode, 0, loc);
  symbols_ = std::move(symbols);
  inputs_.push_back(id);
  return id;
}

std::vector<ValueId> Graph::add_node(OpKind op, const std::vector<ValueId>& inputs, Attrs attrs,
                                     const std::vector<std::string>& output_names,
                                     const SourceLocation& where) {
  const std::string_view name_of_op = op_name(op);
  SourceLocation loc = where;
  loc.node = output_names.empty() ? "" : output_names[0];
  loc.op = std::string(name_of_op);

  std::vector<TensorType> types;
  try {
    std::vector<TensorType> input_types;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ValueId id = inputs[i];
      if (id < 0 || static_cast<size_t>(id) >= values_.size())
        throw UserError(fmt::format("input {} is not a value of this graph (id {})", i, id));
      input_types.push_back(values_[id].type);
    }
    graph_detail::check_signature(op, inputs.size(), attrs);
    const auto* split = std::get_if<SplitAttrs>(&attrs);
    const size_t num_outputs = split ? split->sizes.size() : 1;
    if (output_names.size() != num_outputs)
      throw UserError(fmt::format("expects {} output name{}, got {}", num_outputs,
                                  num_outputs == 1 ? "" : "s", output_names.size()));
    for (size_t i = 0; i < output_names.size(); ++i) {
      const std::string& name = output_names[i];
      if (!is_identifier(name))
        throw UserError(fmt::format("value name '{}' is not an identifier", name));
      if (value_by_name_.count(name) || std::find(output_names.begin(), output_names.begin() + i,
                                                  name) != output_names.begin() + i)
        throw UserError(fmt::format("value name '{}' is already used", name));
    }
    const std::string reason_prefix = loc.node.empty()
                                          ? fmt::format("{} node", name_of_op)
                                          : fmt::format("node '{}' ({})", loc.node, name_of_op);
    types = infer_types(op, input_types, attrs, shape_env_, reason_prefix);
  } catch (const UserError& e) {
    throw UserError(loc, message_of(e));
  }
  AF_CHECK(types.size() == output_names.size(), "{} inferred {} outputs for {} names", name_of_op,
           types.size(), output_names.size());

  if (const std::vector<sym::Expr>* dims = attr_dims(attrs))
    for (const sym::Expr& d : *dims)
      record_symbols(d, symbols_);
  const auto node_id = static_cast<NodeId>(nodes_.size());
  Node node{node_id, op, inputs, {}, std::move(attrs)};
  for (size_t i = 0; i < types.size(); ++i)
    node.outputs.push_back(
        new_value(output_names[i], std::move(types[i]), node_id, static_cast<int>(i), loc));
  nodes_.push_back(std::move(node));
  return nodes_.back().outputs;
}

void Graph::set_outputs(const std::vector<ValueId>& outputs, const SourceLocation& where) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ValueId id = outputs[i];
    if (id < 0 || static_cast<size_t>(id) >= values_.size())
      throw UserError(where, fmt::format("output {} is not a value of this graph (id {})", i, id));
    if (std::find(outputs.begin(), outputs.begin() + i, id) != outputs.begin() + i) {
      SourceLocation loc = where;
      loc.node = values_[id].name;
      throw UserError(loc, "is listed as a graph output twice");
    }
  }
  outputs_ = outputs;
}

const Value& Graph::value(ValueId id) const {
  AF_CHECK(id >= 0 && static_cast<size_t>(id) < values_.size(), "no value with id {}", id);
  return values_[id];
}

const Node& Graph::node(NodeId id) const {
  AF_CHECK(id >= 0 && static_cast<size_t>(id) < nodes_.size(), "no node with id {}", id);
  return nodes_[id];
}

std::optional<ValueId> Graph::find_value(const std::string& name) const {
  auto it = value_by_name_.find(name);
  if (it == value_by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Graph::symbols() const {
  return symbols_;
}

std::vector<int> Graph::use_counts() const {
  // A node that reads a value twice (mul(x, x)) is one use: callers ask how
  // many consumers a value has.
  std::vector<int> counts(values_.size(), 0);
  for (const Node& node : nodes_)
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (std::find(node.inputs.begin(), node.inputs.begin() + i, node.inputs[i]) ==
          node.inputs.begin() + i)
        ++counts[node.inputs[i]];
  for (ValueId id : outputs_)
    ++counts[id];
  return counts;
}

}  // namespace autofuse
