// Read side of move_views, reshapes: a reshape that regroups the dims of a
// computed value cuts fusion (a kernel relabels axes one to one), while a
// reshape of a buffer is a view. So reshape(ew(a, b)) becomes
// ew(reshape a, reshape b): GPT-2's `[b*s, n] -> [b, s, n]` after a Gemm's
// bias add, BERT's `[b, s, 768] -> [b, s, 12, 64]` before the head
// transpose. Each operand is reshaped group by group (fuse::reshape_groups):
// where it spans a group it gets the group's new dims, where it broadcasts
// along the whole group it gets 1s; an operand that spans part of a group
// stops the rewrite.
#include <fmt/format.h>

#include "autofuse/fuse/view_ops.h"
#include "fuse/move_views_rebuild.h"

namespace autofuse::fuse::move_views_detail {

namespace {

/// The shape operand `operand` (right-aligned against `in`) takes after the
/// reshape from `in` to `out`; nullopt when it spans part of a group.
std::optional<Shape> reshaped_operand(const Rebuild& rb, const std::vector<ReshapeGroup>& groups,
                                      const Shape& in, const Shape& out, const Shape& operand) {
  const int shift = static_cast<int>(in.size()) - static_cast<int>(operand.size());
  if (shift < 0) return std::nullopt;
  // Which input dims the operand spans (not a broadcast 1 or missing).
  std::vector<bool> spans(in.size(), false);
  for (size_t d = 0; d < operand.size(); ++d) {
    const sym::Expr& full = in[d + static_cast<size_t>(shift)];
    if (rb.is_one(full)) continue;
    if (rb.equal(operand[d], full)) {
      spans[d + static_cast<size_t>(shift)] = true;
    } else if (!rb.is_one(operand[d])) {
      return std::nullopt;
    }
  }
  // Each output dim: the out size where the operand spans its group, 1 else.
  Shape shape(out.size(), sym::Expr(1));
  for (const ReshapeGroup& g : groups) {
    int spanned = 0;
    for (int d : g.in_dims)
      spanned += spans[static_cast<size_t>(d)] ? 1 : 0;
    if (spanned == 0) continue;
    if (spanned != static_cast<int>(g.in_dims.size())) return std::nullopt;
    for (int d : g.out_dims)
      shape[static_cast<size_t>(d)] = out[static_cast<size_t>(d)];
  }
  // An operand of lower rank keeps a low rank: its leading 1s are dropped
  // (broadcasting adds them back). A full-rank operand keeps the output's
  // rank, so the result's type is the reshape's.
  size_t keep_from = 0;
  while (shift > 0 && keep_from < shape.size() && rb.is_one(shape[keep_from]))
    ++keep_from;
  return Shape(shape.begin() + static_cast<std::ptrdiff_t>(keep_from), shape.end());
}

/// Whether `v` is (through elementwise ops) made of buffers: graph inputs,
/// constants, library results and views. A reshape moved onto such an
/// operand becomes a view; moved onto a reduction's result (LayerNorm's mean
/// before the reshape feeding a Gemm) it would cut a kernel that fused.
bool reaches_buffers(const Rebuild& rb, ValueId v, int depth) {
  const Node* p = rb.producer(v);
  if (p == nullptr) return true;
  if (is_movement_op(p->op) || p->op == OpKind::Constant || p->op == OpKind::MatMul ||
      p->op == OpKind::Conv)
    return true;
  if (!is_elementwise(p->op) || depth == 0) return false;
  for (ValueId in : p->inputs)
    if (!reaches_buffers(rb, in, depth - 1)) return false;
  return true;
}

bool same_shape(const Rebuild& rb, const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (!rb.equal(a[d], b[d])) return false;
  return true;
}

}  // namespace

bool hoist_reshape_over_elementwise(Rebuild& rb, const Node& node) {
  if (node.op != OpKind::Reshape) return false;
  const Node* ew = rb.producer(node.inputs[0]);
  if (ew == nullptr || !is_elementwise(ew->op)) return false;
  // The ew value stays for its other users: only recompute cheap ops.
  const ValueId v = ew->outputs[0];
  if (!is_cheap(ew->op) && (rb.users(v).size() > 1 || rb.is_output(v))) return false;
  const Shape& in = rb.shape(v);
  const Shape& out = rb.shape(node.outputs[0]);
  const auto groups = reshape_groups(rb.src().shape_env(), in, out);
  if (!groups) return false;
  bool regroups = false;  // squeeze-like reshapes already fuse
  for (const ReshapeGroup& g : *groups)
    regroups = regroups || g.in_dims.size() != 1 || g.out_dims.size() != 1;
  if (!regroups) return false;
  std::vector<Shape> shapes;
  for (ValueId operand : ew->inputs) {
    std::optional<Shape> s = reshaped_operand(rb, *groups, in, out, rb.shape(operand));
    if (!s) return false;
    if (!same_shape(rb, *s, rb.shape(operand)) && !reaches_buffers(rb, operand, 16)) return false;
    shapes.push_back(std::move(*s));
  }
  // Planned: build. An operand read twice (mul(a, a)) is reshaped once.
  std::vector<ValueId> operands;
  for (size_t j = 0; j < ew->inputs.size(); ++j) {
    const ValueId operand = ew->inputs[j];
    size_t same = 0;
    while (same < j && ew->inputs[same] != operand)
      ++same;
    if (same < j) {
      operands.push_back(operands[same]);
    } else if (same_shape(rb, shapes[j], rb.shape(operand))) {
      operands.push_back(rb.mapped(operand));
    } else {
      operands.push_back(rb.add(
          OpKind::Reshape, {rb.mapped(operand)}, ShapeAttrs{shapes[j]},
          rb.fresh(fmt::format("{}_{}", rb.value(operand).name, rb.value(node.outputs[0]).name))));
    }
  }
  rb.replace(node.outputs[0], rb.add(ew->op, operands, ew->attrs, rb.value(node.outputs[0]).name));
  return true;
}

}  // namespace autofuse::fuse::move_views_detail
