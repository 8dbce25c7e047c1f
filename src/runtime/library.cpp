// Dispatch of a graph node to its library implementation.
#include "runtime/library.h"

#include <variant>

#include "autofuse/error.h"

namespace autofuse::runtime {

bool has_library_impl(OpKind op) {
  switch (op) {
    case OpKind::MatMul:
    case OpKind::Conv:
    case OpKind::Transpose:
    case OpKind::Slice:
    case OpKind::Concat:
    case OpKind::Split:
    case OpKind::Gather:
    case OpKind::Constant:
    case OpKind::Iota:
      return true;
    default:
      return false;
  }
}

void run_library_node(const Graph& graph, const Node& node, std::span<const TensorView> inputs,
                      std::span<const TensorView> outputs, LibraryContext& ctx) {
  AF_CHECK(inputs.size() == node.inputs.size() && outputs.size() == node.outputs.size(),
           "library node '{}' with {} inputs and {} outputs", graph.value(node.outputs[0]).name,
           inputs.size(), outputs.size());
  try {
    switch (node.op) {
      case OpKind::MatMul:
        library_matmul(inputs[0], inputs[1], outputs[0], ctx);
        return;
      case OpKind::Conv:
        library_conv(inputs[0], inputs[1], inputs.size() == 3 ? &inputs[2] : nullptr,
                     std::get<ConvAttrs>(node.attrs), outputs[0], ctx);
        return;
      case OpKind::Transpose:
        library_transpose(inputs[0], std::get<TransposeAttrs>(node.attrs).perm, outputs[0], ctx);
        return;
      case OpKind::Slice:
        library_slice(inputs[0], std::get<SliceAttrs>(node.attrs), outputs[0], ctx);
        return;
      case OpKind::Concat:
        library_concat(inputs, std::get<AxisAttrs>(node.attrs).axis, outputs[0], ctx);
        return;
      case OpKind::Split:
        library_split(inputs[0], std::get<SplitAttrs>(node.attrs).axis, outputs, ctx);
        return;
      case OpKind::Gather:
        library_gather(inputs[0], inputs[1], std::get<AxisAttrs>(node.attrs).axis, outputs[0], ctx);
        return;
      case OpKind::Constant:
        fill_constant(std::get<ConstantAttrs>(node.attrs), outputs[0]);
        return;
      case OpKind::Iota:
        fill_iota(std::get<IotaAttrs>(node.attrs).axis, outputs[0]);
        return;
      default:
        AF_CHECK(false, "no library implementation of {} (node '{}')", op_name(node.op),
                 graph.value(node.outputs[0]).name);
    }
  } catch (const UserError& e) {
    if (!e.where().node.empty()) throw;
    SourceLocation where;
    where.node = graph.value(node.outputs.front()).name;
    where.op = std::string(op_name(node.op));
    throw UserError(where, e.message());
  }
}

}  // namespace autofuse::runtime
