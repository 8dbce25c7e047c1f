#include "fuse/node_class.h"

#include <variant>

#include "autofuse/fuse/view_ops.h"

namespace autofuse::fuse::detail {

bool is_splat_constant(const Node& node) {
  if (node.op != OpKind::Constant) return false;
  const auto* attrs = std::get_if<ConstantAttrs>(&node.attrs);
  AF_CHECK(attrs != nullptr, "constant node {} without ConstantAttrs", node.id);
  return attrs->values.size() == 1;
}

bool is_kernel_op(const Node& node) {
  // Movement ops join kernels as relabelled axes or view leaves
  // (fuse/view_ops.h); one left alone becomes a View or Library region
  // again (unfused_kind).
  if (is_movement_op(node.op)) return true;
  switch (op_info(node.op).op_class) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Where:
    case OpClass::Cast:
    case OpClass::BroadcastTo:
    case OpClass::Reduce:
    case OpClass::Iota:
      return true;
    default:
      return false;
  }
}

RegionKind unfused_kind(const Node& node) {
  if (!is_movement_op(node.op)) return RegionKind::Kernel;
  return op_info(node.op).op_class == OpClass::Reshape ? RegionKind::View : RegionKind::Library;
}

RegionKind region_kind_of(const Node& node) {
  if (is_kernel_op(node) || is_splat_constant(node)) return RegionKind::Kernel;
  switch (op_info(node.op).op_class) {
    case OpClass::Constant:
      return RegionKind::Constant;
    default:
      return RegionKind::Library;
  }
}

bool is_reduction(const Node& node) {
  return op_info(node.op).op_class == OpClass::Reduce;
}

bool has_broadcast(const Graph& graph, const Node& node) {
  const OpClass cls = op_info(node.op).op_class;
  if (cls == OpClass::BroadcastTo) return true;
  if (cls != OpClass::Unary && cls != OpClass::Binary && cls != OpClass::Where &&
      cls != OpClass::Cast)
    return false;
  const sym::ShapeEnv& env = graph.shape_env();
  const Shape& out = graph.value(node.outputs.at(0)).type.shape;
  for (ValueId in : node.inputs) {
    const Value& value = graph.value(in);
    // A scalar constant stretched over the output is not what the flag is about.
    if (value.producer != kNoNode && is_splat_constant(graph.node(value.producer))) continue;
    const Shape& shape = value.type.shape;
    if (shape.size() != out.size()) return true;
    for (size_t i = 0; i < shape.size(); ++i)
      if (env.canonicalize(shape[i]) != env.canonicalize(out[i])) return true;
  }
  return false;
}

}  // namespace autofuse::fuse::detail
