// Read side of move_views: slices and splits move towards the graph inputs.
// Fusion absorbs a slice or split only when its input is reachable from a
// region input through movement ops, so each rewrite here moves one slice or
// split above the op that produces its input. It stops (no rewrite) at graph
// inputs, reductions, matmuls, reshapes, gathers, concats, iotas, non-splat
// constants and other slices or splits.
#include <fmt/format.h>

#include "fuse/move_views_rebuild.h"

namespace autofuse::fuse::move_views_detail {

namespace {

/// The slice or split node's producer, when the node is a slice or split.
const Node* selected_producer(const Rebuild& rb, const Node& node) {
  if (node.op != OpKind::Slice && node.op != OpKind::Split) return nullptr;
  return rb.producer(node.inputs[0]);
}

/// Whether the selection may move above `producer`. When the producer's
/// value has other users than slices and splits (or is a graph output), it
/// stays for them, and the selected part is computed a second time: only
/// worth it for cheap ops (movement ops are free once fused).
bool may_move_above(const Rebuild& rb, const Node& producer) {
  if (is_cheap(producer.op) || producer.op == OpKind::Transpose ||
      producer.op == OpKind::BroadcastTo)
    return true;
  const ValueId v = producer.outputs[0];
  if (rb.is_output(v)) return false;
  for (NodeId user : rb.users(v)) {
    const OpKind op = rb.src().node(user).op;
    if (op != OpKind::Slice && op != OpKind::Split) return false;
  }
  return true;
}

/// Replaces each output of the selection node by the value built for its piece.
void replace_pieces(Rebuild& rb, const Node& node, const std::vector<ValueId>& by) {
  for (size_t i = 0; i < node.outputs.size(); ++i)
    rb.replace(node.outputs[i], by.at(i));
}

/// Name base for the pieces of `operand` selected for `node`: "<operand>_<node's value>".
std::string piece_base(const Rebuild& rb, ValueId operand, const Node& node) {
  return fmt::format("{}_{}", rb.value(operand).name, rb.value(node.outputs[0]).name);
}

/// slice(ew(a, b, ...)) -> ew(slice a, slice b, ...); split(ew(...)) -> one ew
/// per piece. An operand that broadcasts along a selected axis is not
/// selected there (size-1 dims stay size 1).
bool hoist_selection_over_elementwise(Rebuild& rb, const Node& node) {
  const Node* ew = selected_producer(rb, node);
  if (ew == nullptr || !is_elementwise(ew->op) || !may_move_above(rb, *ew)) return false;
  const Selection sel = selection_of(node);
  const Shape& out = rb.shape(ew->outputs[0]);
  std::vector<Selection> per_operand;
  for (ValueId in : ew->inputs) {
    std::optional<Selection> r = restrict_to_operand(rb, sel, out, rb.shape(in));
    if (!r) return false;
    per_operand.push_back(std::move(*r));
  }
  // Planned: build. An operand read twice (mul(a, a)) is selected once.
  std::vector<std::vector<ValueId>> pieces;
  for (size_t j = 0; j < ew->inputs.size(); ++j) {
    size_t same = 0;
    while (same < j && ew->inputs[same] != ew->inputs[j])
      ++same;
    pieces.push_back(same < j ? pieces[same]
                              : emit_selection(rb, rb.mapped(ew->inputs[j]), per_operand[j],
                                               piece_base(rb, ew->inputs[j], node)));
  }
  std::vector<ValueId> results;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    std::vector<ValueId> operands;
    for (const std::vector<ValueId>& p : pieces)
      operands.push_back(piece(p, i));
    results.push_back(rb.add(ew->op, operands, ew->attrs, rb.value(node.outputs[i]).name));
  }
  replace_pieces(rb, node, results);
  return true;
}

/// slice(broadcast_to(x, shape)) -> broadcast_to(slice x, sliced shape), x
/// selected only along the dims it does not broadcast.
bool hoist_selection_over_broadcast_to(Rebuild& rb, const Node& node) {
  const Node* bc = selected_producer(rb, node);
  if (bc == nullptr || bc->op != OpKind::BroadcastTo) return false;
  const ValueId x = bc->inputs[0];
  const std::optional<Selection> r =
      restrict_to_operand(rb, selection_of(node), rb.shape(bc->outputs[0]), rb.shape(x));
  if (!r) return false;
  const std::vector<ValueId> pieces = emit_selection(rb, rb.mapped(x), *r, piece_base(rb, x, node));
  std::vector<ValueId> results;
  for (size_t i = 0; i < node.outputs.size(); ++i)
    results.push_back(rb.add(OpKind::BroadcastTo, {piece(pieces, i)},
                             ShapeAttrs{rb.shape(node.outputs[i])},
                             rb.value(node.outputs[i]).name));
  replace_pieces(rb, node, results);
  return true;
}

/// slice(transpose(x, perm)) -> transpose(slice x, perm), x sliced along the
/// permuted axes (output dim i is input dim perm[i]).
bool hoist_selection_over_transpose(Rebuild& rb, const Node& node) {
  const Node* tr = selected_producer(rb, node);
  if (tr == nullptr || tr->op != OpKind::Transpose) return false;
  const std::vector<int64_t>& perm = std::get<TransposeAttrs>(tr->attrs).perm;
  Selection sel = selection_of(node);
  if (sel.op == OpKind::Split) {
    sel.split.axis = perm.at(static_cast<size_t>(sel.split.axis));
  } else {
    for (int64_t& axis : sel.slice.axes)
      axis = perm.at(static_cast<size_t>(axis));
  }
  const ValueId x = tr->inputs[0];
  const std::vector<ValueId> pieces =
      emit_selection(rb, rb.mapped(x), sel, piece_base(rb, x, node));
  std::vector<ValueId> results;
  for (size_t i = 0; i < node.outputs.size(); ++i)
    results.push_back(
        rb.add(OpKind::Transpose, {piece(pieces, i)}, tr->attrs, rb.value(node.outputs[i]).name));
  replace_pieces(rb, node, results);
  return true;
}

/// slice(splat constant) -> a splat constant of the slice's shape (fusion
/// reads a splat constant as a scalar; a slice of it would be a copy).
bool fold_selection_of_splat_constant(Rebuild& rb, const Node& node) {
  const Node* c = selected_producer(rb, node);
  if (c == nullptr || c->op != OpKind::Constant) return false;
  const auto& attrs = std::get<ConstantAttrs>(c->attrs);
  if (attrs.values.size() != 1) return false;
  std::vector<std::vector<int64_t>> shapes;
  for (ValueId out : node.outputs) {
    std::vector<int64_t> shape;
    for (const sym::Expr& d : rb.shape(out)) {
      const std::optional<int64_t> n = d.as_const();
      if (!n) return false;
      shape.push_back(*n);
    }
    shapes.push_back(std::move(shape));
  }
  std::vector<ValueId> results;
  for (size_t i = 0; i < node.outputs.size(); ++i)
    results.push_back(rb.add(OpKind::Constant, {},
                             ConstantAttrs{attrs.dtype, shapes[i], attrs.values},
                             rb.value(node.outputs[i]).name));
  replace_pieces(rb, node, results);
  return true;
}

/// split(concat(a, b), same points) -> a, b: the split undoes the concat.
bool forward_split_of_concat(Rebuild& rb, const Node& node) {
  const Node* cat = selected_producer(rb, node);
  if (node.op != OpKind::Split || cat == nullptr || cat->op != OpKind::Concat) return false;
  const auto& split = std::get<SplitAttrs>(node.attrs);
  if (split.axis != std::get<AxisAttrs>(cat->attrs).axis ||
      split.sizes.size() != cat->inputs.size())
    return false;
  // A graph output keeps its own name, so it cannot become another value:
  // the split stays for those. Only worth it when another piece is read.
  bool forwards = false, keeps = false;
  for (size_t i = 0; i < split.sizes.size(); ++i) {
    const sym::Expr& extent = rb.shape(cat->inputs[i]).at(static_cast<size_t>(split.axis));
    if (!rb.equal(split.sizes[i], extent)) return false;
    const ValueId out = node.outputs[i];
    keeps = keeps || rb.is_output(out);
    forwards = forwards || (!rb.is_output(out) && !rb.users(out).empty());
  }
  if (!forwards) return false;
  if (keeps) rb.copy(node);
  for (size_t i = 0; i < split.sizes.size(); ++i)
    if (!rb.is_output(node.outputs[i])) rb.replace(node.outputs[i], rb.mapped(cat->inputs[i]));
  return true;
}

}  // namespace

const std::vector<Rewrite>& read_rewrites() {
  static const std::vector<Rewrite> rewrites = {
      {"hoist_selection_over_elementwise", hoist_selection_over_elementwise},
      {"hoist_selection_over_broadcast_to", hoist_selection_over_broadcast_to},
      {"hoist_selection_over_transpose", hoist_selection_over_transpose},
      {"fold_selection_of_splat_constant", fold_selection_of_splat_constant},
      {"forward_split_of_concat", forward_split_of_concat},
      {"hoist_reshape_over_elementwise", hoist_reshape_over_elementwise},
  };
  return rewrites;
}

}  // namespace autofuse::fuse::move_views_detail
