// The reference interpreter driver: binds symbols from the input shapes,
// then runs the nodes in order, one kernel call each (see kernels.h), and
// frees intermediates after their last use so large graphs fit in memory.
#include "autofuse/ref/interpreter.h"

#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autofuse/ref/random.h"
#include "ref/kernels.h"

namespace autofuse {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

void check_input_types(const Graph& graph, std::span<const HostTensor> inputs) {
  if (inputs.size() != graph.inputs().size())
    throw UserError(fmt::format("graph '{}' takes {} input(s), got {}", graph.name(),
                                graph.inputs().size(), inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    if (inputs[i].dtype() != v.type.dtype)
      throw UserError(fmt::format("input '{}' has dtype {} but the graph needs {}", v.name,
                                  dtype_name(inputs[i].dtype()), v.type.to_string()));
    if (inputs[i].rank() != v.type.rank())
      throw UserError(fmt::format(
          "input '{}' has rank {} (shape {}) but the graph needs rank {} ({})", v.name,
          inputs[i].rank(), shape_text(inputs[i].shape()), v.type.rank(), v.type.to_string()));
  }
}

}  // namespace

sym::Binding bind_symbols(const Graph& graph, std::span<const HostTensor> inputs,
                          const sym::Binding& given) {
  check_input_types(graph, inputs);
  sym::Binding binding = given;
  for (const auto& [name, value] : given)
    if (value < 1)
      throw UserError(
          fmt::format("symbol '{}' is given as {} but sizes must be >= 1", name, value));

  // A dim that is a lone symbol binds it (the first input that has it wins;
  // the check below reports any disagreement).
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    for (int d = 0; d < v.type.rank(); ++d) {
      const sym::Expr& dim = v.type.shape[d];
      if (!dim.is_symbol() || binding.contains(dim.symbol_name())) continue;
      const int64_t actual = inputs[i].shape()[d];
      if (actual < 1)
        throw UserError(fmt::format("input '{}' dim {} is {} but symbol '{}' must be >= 1", v.name,
                                    d, actual, dim.symbol_name()));
      binding[dim.symbol_name()] = actual;
    }
  }
  for (const std::string& name : graph.symbols())
    if (!binding.contains(name))
      throw UserError(
          fmt::format("symbol '{}' is not determined by the input shapes; give its value", name));

  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    for (int d = 0; d < v.type.rank(); ++d) {
      const sym::Expr& dim = v.type.shape[d];
      const int64_t needed = sym::evaluate(dim, binding);
      const int64_t actual = inputs[i].shape()[d];
      if (needed == actual) continue;
      if (dim.is_const())
        throw UserError(fmt::format("input '{}' dim {} is {} but the graph needs {}", v.name, d,
                                    actual, needed));
      throw UserError(fmt::format("input '{}' dim {} is {} but the graph needs {} = {}", v.name, d,
                                  actual, dim.to_string(), needed));
    }
  }
  graph.shape_env().check(binding);
  return binding;
}

namespace {

/// Runs one node: allocates its outputs and calls the kernel.
std::vector<HostTensor> run_node(const Graph& graph, const Node& node,
                                 const std::vector<const HostTensor*>& in,
                                 const sym::Binding& binding) {
  std::vector<HostTensor> outs;
  for (ValueId id : node.outputs) {
    const TensorType& type = graph.value(id).type;
    outs.emplace_back(type.dtype, concrete_shape(type.shape, binding));
  }
  HostTensor& out = outs.front();
  switch (op_info(node.op).op_class) {
    case OpClass::Unary:
      ref::unary(node.op, *in[0], out);
      break;
    case OpClass::Binary:
      ref::binary(node.op, *in[0], *in[1], out);
      break;
    case OpClass::Where:
      ref::where(*in[0], *in[1], *in[2], out);
      break;
    case OpClass::Cast:
      ref::cast(*in[0], out, std::get<CastAttrs>(node.attrs).saturate);
      break;
    case OpClass::BroadcastTo:
      ref::broadcast_to(*in[0], out);
      break;
    case OpClass::Reduce:
      ref::reduce(node.op, *in[0], std::get<ReduceAttrs>(node.attrs).axes, out);
      break;
    case OpClass::Transpose:
      ref::transpose(*in[0], std::get<TransposeAttrs>(node.attrs).perm, out);
      break;
    case OpClass::Reshape:
      ref::reshape(*in[0], out);
      break;
    case OpClass::Slice:
      ref::slice(*in[0], std::get<SliceAttrs>(node.attrs), out);
      break;
    case OpClass::Concat:
      ref::concat(in, std::get<AxisAttrs>(node.attrs).axis, out);
      break;
    case OpClass::Split: {
      std::vector<HostTensor*> targets;
      for (HostTensor& t : outs)
        targets.push_back(&t);
      ref::split(*in[0], std::get<SplitAttrs>(node.attrs).axis, targets);
      break;
    }
    case OpClass::Gather:
      ref::gather(*in[0], *in[1], std::get<AxisAttrs>(node.attrs).axis, out);
      break;
    case OpClass::Constant:
      ref::constant(std::get<ConstantAttrs>(node.attrs), out);
      break;
    case OpClass::Iota:
      ref::iota(std::get<IotaAttrs>(node.attrs).axis, out);
      break;
    case OpClass::MatMul:
      ref::matmul(*in[0], *in[1], out);
      break;
    case OpClass::Conv:
      ref::conv(*in[0], *in[1], in.size() == 3 ? in[2] : nullptr, std::get<ConvAttrs>(node.attrs),
                out);
      break;
  }
  return outs;
}

}  // namespace

std::vector<HostTensor> run_reference(const Graph& graph, std::span<const HostTensor> inputs,
                                      const sym::Binding& given) {
  const sym::Binding binding = bind_symbols(graph, inputs, given);

  // Graph inputs are read in place; node outputs are owned here.
  std::vector<const HostTensor*> view(graph.values().size(), nullptr);
  std::vector<HostTensor> owned(graph.values().size());
  for (size_t i = 0; i < inputs.size(); ++i)
    view[graph.inputs()[i]] = &inputs[i];
  // Uses per input slot (add(x, x) uses x twice) plus one per graph output.
  std::vector<int> uses(graph.values().size(), 0);
  for (const Node& node : graph.nodes())
    for (ValueId id : node.inputs)
      ++uses[id];
  for (ValueId id : graph.outputs())
    ++uses[id];

  for (const Node& node : graph.nodes()) {
    std::vector<const HostTensor*> in;
    for (ValueId id : node.inputs) {
      AF_CHECK(view[id] != nullptr, "value {} used before it is computed or after it was freed",
               graph.value(id).name);
      in.push_back(view[id]);
    }
    std::vector<HostTensor> outs;
    try {
      outs = run_node(graph, node, in, binding);
    } catch (const UserError& e) {
      if (!e.where().node.empty()) throw;
      SourceLocation where;
      where.node = graph.value(node.outputs.front()).name;
      where.op = std::string(op_name(node.op));
      throw UserError(where, e.message());
    } catch (const InternalError& e) {
      throw InternalError(fmt::format("{} (running node '{}' ({}))", e.what(),
                                      graph.value(node.outputs.front()).name, op_name(node.op)));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      const ValueId id = node.outputs[k];
      if (uses[id] == 0) continue;  // dead output: never stored
      owned[id] = std::move(outs[k]);
      view[id] = &owned[id];
    }
    // Free intermediates after their last use (graph outputs hold a use that
    // is never released, so they stay).
    for (ValueId id : node.inputs) {
      if (--uses[id] == 0 && graph.value(id).producer != kNoNode) {
        owned[id] = HostTensor();
        view[id] = nullptr;
      }
    }
  }

  std::vector<HostTensor> results;
  for (ValueId id : graph.outputs()) {
    AF_CHECK(view[id] != nullptr, "output {} was not computed", graph.value(id).name);
    // Graph outputs are listed once (Graph::set_outputs), so an owned one can move.
    results.push_back(graph.value(id).producer == kNoNode ? *view[id] : std::move(owned[id]));
  }
  return results;
}

}  // namespace autofuse
