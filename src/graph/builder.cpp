// GraphBuilder: thin conveniences over Graph::add_input/add_node.
#include "autofuse/graph/builder.h"

namespace autofuse {

const TensorType& Tensor::type() const {
  AF_CHECK(builder != nullptr, "Tensor {} has no builder", id);
  return builder->graph().value(id).type;
}

GraphBuilder::GraphBuilder(std::string graph_name) : graph_(std::move(graph_name)) {}

std::string GraphBuilder::fresh_name() {
  for (;;) {
    std::string name = fmt::format("v{}", next_name_++);
    if (!graph_.find_value(name)) return name;
  }
}

Tensor GraphBuilder::input(const std::string& name, DType dtype, Shape shape) {
  return wrap(graph_.add_input(name, TensorType{dtype, std::move(shape)}));
}

namespace {

std::vector<ValueId> ids_of(const std::vector<Tensor>& tensors, const GraphBuilder* builder,
                            std::string_view what) {
  std::vector<ValueId> ids;
  ids.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].builder != builder)
      throw UserError(fmt::format("{} {} was not made by this builder", what, i));
    ids.push_back(tensors[i].id);
  }
  return ids;
}

}  // namespace

Tensor GraphBuilder::op(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs,
                        const std::string& name) {
  std::vector<ValueId> ids = ids_of(inputs, this, "input");
  const std::string out_name = name.empty() ? fresh_name() : name;
  return wrap(graph_.add_node(op, ids, std::move(attrs), {out_name}).at(0));
}

std::vector<Tensor> GraphBuilder::op_multi(OpKind op, const std::vector<Tensor>& inputs,
                                           Attrs attrs, int num_outputs,
                                           const std::vector<std::string>& names) {
  if (num_outputs < 0 || names.size() > static_cast<size_t>(num_outputs))
    throw UserError(
        fmt::format("{}: {} names for {} outputs", op_name(op), names.size(), num_outputs));
  std::vector<ValueId> ids = ids_of(inputs, this, "input");
  std::vector<std::string> out_names;
  for (int i = 0; i < num_outputs; ++i) {
    const bool given = static_cast<size_t>(i) < names.size() && !names[i].empty();
    out_names.push_back(given ? names[i] : fresh_name());
  }
  std::vector<Tensor> out;
  for (ValueId id : graph_.add_node(op, ids, std::move(attrs), out_names))
    out.push_back(wrap(id));
  return out;
}

std::vector<Tensor> GraphBuilder::split(Tensor x, int64_t axis, std::vector<sym::Expr> sizes,
                                        const std::vector<std::string>& names) {
  const auto n = static_cast<int>(sizes.size());
  return op_multi(OpKind::Split, {x}, SplitAttrs{axis, std::move(sizes)}, n, names);
}

Tensor GraphBuilder::scalar(double value, DType dtype, const std::string& name) {
  return constant(ConstantAttrs{dtype, {}, {value}}, name);
}

Graph GraphBuilder::build(const std::vector<Tensor>& outputs) && {
  graph_.set_outputs(ids_of(outputs, this, "output"));
  return std::move(graph_);
}

}  // namespace autofuse
