// Write side of move_views: concats move towards the graph outputs. Fusion
// absorbs a concat only when its pieces have equal extent along the concat
// axis (one iteration space, one Store per piece) and nothing in the region
// reads its value, so each rewrite here moves a concat of equal pieces below
// one of its users. A concat that is a graph output, or has a user that
// cannot take it, stays for those: its pieces are computed once either way,
// and the users that took it read the pieces instead. A concat of unequal
// pieces stays where it is (moving it would not let fusion absorb it); when
// a computation reads it, move_views_concat.cpp turns it into gathers.
#include <algorithm>

#include <fmt/format.h>

#include "fuse/move_views_rebuild.h"

namespace autofuse::fuse::move_views_detail {

namespace {

/// A concat whose pieces have equal extent along its axis.
struct EqualConcat {
  int64_t axis = 0;
  std::vector<ValueId> pieces;
  std::vector<sym::Expr> extents;
  size_t size() const { return pieces.size(); }
};

std::optional<EqualConcat> equal_concat(const Rebuild& rb, ValueId v) {
  const Node* node = rb.producer(v);
  if (node == nullptr || node->op != OpKind::Concat || node->inputs.size() < 2) return std::nullopt;
  EqualConcat c;
  c.axis = std::get<AxisAttrs>(node->attrs).axis;
  c.pieces = node->inputs;
  for (ValueId in : node->inputs) {
    c.extents.push_back(rb.shape(in).at(static_cast<size_t>(c.axis)));
    if (!rb.equal(c.extents.back(), c.extents.front())) return std::nullopt;
  }
  return c;
}

/// The result axis of `node` that the concat axis of its input `in` becomes
/// (ranks align to the right).
int64_t result_axis(const Rebuild& rb, const Node& node, ValueId in, const EqualConcat& c) {
  const auto out_rank = static_cast<int64_t>(rb.shape(node.outputs[0]).size());
  return c.axis + out_rank - static_cast<int64_t>(rb.shape(in).size());
}

// ---- Elementwise ----

/// How one operand of an elementwise op splits into the lead concat's pieces.
struct OperandPieces {
  std::optional<EqualConcat> paired;  ///< a concat with the same split points: its own pieces
  Selection split;                    ///< otherwise: a split (empty: the operand as is)
};

/// Every operand of elementwise `node` in pieces matching concat `lead`'s;
/// nullopt when an operand's dim along the axis is neither the result's nor 1.
std::optional<std::vector<OperandPieces>> plan_elementwise(const Rebuild& rb, const Node& node,
                                                           ValueId lead) {
  const std::optional<EqualConcat> c = equal_concat(rb, lead);
  if (!c) return std::nullopt;
  const int64_t axis = result_axis(rb, node, lead, *c);
  const Shape& out = rb.shape(node.outputs[0]);
  Selection split;
  split.op = OpKind::Split;
  split.split = SplitAttrs{axis, c->extents};
  std::vector<OperandPieces> plan;
  for (ValueId in : node.inputs) {
    OperandPieces p;
    std::optional<EqualConcat> other = equal_concat(rb, in);
    if (other && other->size() == c->size() && result_axis(rb, node, in, *other) == axis &&
        rb.equal(other->extents.front(), c->extents.front())) {
      p.paired = std::move(other);
    } else {
      std::optional<Selection> r = restrict_to_operand(rb, split, out, rb.shape(in));
      if (!r) return std::nullopt;
      p.split = std::move(*r);
    }
    plan.push_back(std::move(p));
  }
  return plan;
}

// ---- Reductions ----

/// How per-piece reductions over the concat axis combine: the elementwise op,
/// and whether the pieces reduce and combine in f32 (`widen`). nullopt when
/// they do not combine exactly enough: integer means truncate, and float8
/// arithmetic rounds every result (its partials would round too). f16/bf16
/// sums, products and means widen: each piece reduces in f32, the partials
/// combine in f32 and the result rounds once, as a whole-row reduction does
/// (rounding each partial to the narrow type would not).
struct Combining {
  OpKind op;
  bool widen = false;
};

std::optional<Combining> combining_op(OpKind reduce, DType dtype) {
  const bool wide = dtype == DType::f32 || dtype == DType::f64 || is_integer(dtype);
  const bool widen = dtype == DType::f16 || dtype == DType::bf16;
  switch (reduce) {
    case OpKind::ReduceMax:
      return Combining{OpKind::Max};
    case OpKind::ReduceMin:
      return Combining{OpKind::Min};
    case OpKind::ReduceSum:
      if (wide || widen) return Combining{OpKind::Add, widen};
      return std::nullopt;
    case OpKind::ReduceProd:
      if (wide || widen) return Combining{OpKind::Mul, widen};
      return std::nullopt;
    case OpKind::ReduceMean:
      // Equal pieces: the mean is the mean of the per-piece means.
      if (dtype == DType::f32 || dtype == DType::f64 || widen) return Combining{OpKind::Add, widen};
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

bool reduces_axis(const ReduceAttrs& attrs, int64_t axis) {
  return attrs.axes.empty() ||
         std::find(attrs.axes.begin(), attrs.axes.end(), axis) != attrs.axes.end();
}

bool can_take_reduce(const Rebuild& rb, const Node& node, const EqualConcat& c) {
  if (!reduces_axis(std::get<ReduceAttrs>(node.attrs), c.axis)) return true;
  return combining_op(node.op, rb.value(node.outputs[0]).type.dtype).has_value();
}

// ---- Which users can take a concat ----

/// Whether `node`, a user of concat `c` (value `cv`), can have it moved below.
bool can_take(const Rebuild& rb, const Node& node, ValueId cv, const EqualConcat& c) {
  if (is_elementwise(node.op)) return plan_elementwise(rb, node, cv).has_value();
  switch (node.op) {
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
      return can_take_reduce(rb, node, c);
    case OpKind::Transpose:
      return true;
    case OpKind::BroadcastTo: {
      const int64_t axis = result_axis(rb, node, cv, c);
      return rb.equal(rb.shape(node.outputs[0]).at(static_cast<size_t>(axis)),
                      rb.shape(cv).at(static_cast<size_t>(c.axis)));
    }
    default:
      return false;
  }
}

/// Concat `v` of equal pieces when its user `node` can take it.
std::optional<EqualConcat> concat_below(const Rebuild& rb, const Node& node, ValueId v) {
  std::optional<EqualConcat> c = equal_concat(rb, v);
  if (!c || !can_take(rb, node, v, *c)) return std::nullopt;
  return c;
}

/// Names "<value>_0", "<value>_1", ... for the pieces of `node`'s result.
std::string piece_name(Rebuild& rb, const Node& node, size_t i) {
  return rb.fresh(fmt::format("{}_{}", rb.value(node.outputs[0]).name, i));
}

/// Replaces `node`'s value by the concat of `pieces` along `axis`.
void concat_result(Rebuild& rb, const Node& node, const std::vector<ValueId>& pieces,
                   int64_t axis) {
  const ValueId out = node.outputs[0];
  rb.replace(out, rb.add(OpKind::Concat, pieces, AxisAttrs{axis}, rb.value(out).name));
}

std::vector<ValueId> mapped_pieces(const Rebuild& rb, const EqualConcat& c) {
  std::vector<ValueId> out;
  for (ValueId p : c.pieces)
    out.push_back(rb.mapped(p));
  return out;
}

/// ew(concat(a1..ak), b) -> concat(ew(a1, b1), ..., ew(ak, bk)), b split at
/// the concat's points (unless it broadcasts along the axis); an operand that
/// is a concat with the same points gives its own pieces.
bool sink_concat_below_elementwise(Rebuild& rb, const Node& node) {
  if (!is_elementwise(node.op)) return false;
  const auto lead = std::find_if(node.inputs.begin(), node.inputs.end(), [&](ValueId in) {
    return concat_below(rb, node, in).has_value();
  });
  if (lead == node.inputs.end()) return false;
  const std::optional<std::vector<OperandPieces>> plan = plan_elementwise(rb, node, *lead);
  AF_CHECK(plan.has_value(), "concat '{}' taken without a plan", rb.value(*lead).name);
  const EqualConcat c = *equal_concat(rb, *lead);
  std::vector<std::vector<ValueId>> operands;
  for (size_t j = 0; j < node.inputs.size(); ++j) {
    const OperandPieces& p = (*plan)[j];
    const ValueId in = node.inputs[j];
    operands.push_back(p.paired ? mapped_pieces(rb, *p.paired)
                                : emit_selection(rb, rb.mapped(in), p.split,
                                                 fmt::format("{}_{}", rb.value(in).name,
                                                             rb.value(node.outputs[0]).name)));
  }
  std::vector<ValueId> results;
  for (size_t i = 0; i < c.size(); ++i) {
    std::vector<ValueId> args;
    for (const std::vector<ValueId>& o : operands)
      args.push_back(piece(o, i));
    results.push_back(rb.add(node.op, args, node.attrs, piece_name(rb, node, i)));
  }
  concat_result(rb, node, results, result_axis(rb, node, *lead, c));
  return true;
}

/// Combines per-piece values pairwise (a balanced tree keeps float sums
/// accurate); the last combination is named `last_name`.
ValueId combine_tree(Rebuild& rb, OpKind op, std::vector<ValueId> xs, const std::string& base,
                     const std::string& last_name) {
  while (xs.size() > 1) {
    std::vector<ValueId> next;
    for (size_t i = 0; i + 1 < xs.size(); i += 2) {
      const std::string name = xs.size() == 2 ? last_name : rb.fresh(base);
      next.push_back(rb.add(op, {xs[i], xs[i + 1]}, NoAttrs{}, name));
    }
    if (xs.size() % 2 == 1) next.push_back(xs.back());
    xs = std::move(next);
  }
  return xs[0];
}

/// reduce(concat(a1..ak)): over other axes -> concat of per-piece reductions
/// (the axis shifts when reduced dims are dropped); over the concat axis ->
/// the equal pieces combined elementwise, then reduced once (sum: add, max:
/// max, min: min, prod: mul; mean: the mean of the pieces' sum, over k). One
/// reduction of the combined rows costs one horizontal reduction per row
/// where k per-piece reductions cost k (dlrm's 26 pieces of 16).
bool sink_concat_below_reduce(Rebuild& rb, const Node& node) {
  if (op_info(node.op).op_class != OpClass::Reduce) return false;
  const ValueId cv = node.inputs[0];
  const std::optional<EqualConcat> c = concat_below(rb, node, cv);
  if (!c) return false;
  const auto& attrs = std::get<ReduceAttrs>(node.attrs);
  const std::string& name = rb.value(node.outputs[0]).name;
  if (!reduces_axis(attrs, c->axis)) {
    std::vector<ValueId> partial;
    for (size_t i = 0; i < c->size(); ++i)
      partial.push_back(rb.add(node.op, {rb.mapped(c->pieces[i])}, attrs, piece_name(rb, node, i)));
    int64_t axis = c->axis;
    if (!attrs.keepdims)
      axis -= std::count_if(attrs.axes.begin(), attrs.axes.end(),
                            [&](int64_t a) { return a < c->axis; });
    concat_result(rb, node, partial, axis);
    return true;
  }
  const DType dtype = rb.value(node.outputs[0]).type.dtype;
  const std::optional<Combining> combining = combining_op(node.op, dtype);
  AF_CHECK(combining.has_value(), "concat below {} was accepted without a combining op",
           op_name(node.op));
  const bool widen = combining->widen;
  std::vector<ValueId> pieces;
  for (size_t i = 0; i < c->size(); ++i) {
    ValueId piece = rb.mapped(c->pieces[i]);
    if (widen)
      piece = rb.add(OpKind::Cast, {piece}, CastAttrs{DType::f32}, rb.fresh(name + "_f32"));
    pieces.push_back(piece);
  }
  const ValueId combined =
      combine_tree(rb, combining->op, pieces, name + "_c", rb.fresh(name + "_pieces"));
  // The last op computing the result carries its name; a widened result is
  // then cast back to the reduction's type.
  const bool mean = node.op == OpKind::ReduceMean;
  const std::string last_name = widen ? rb.fresh(name + "_wide") : name;
  ValueId result = rb.add(node.op, {combined}, attrs, mean ? rb.fresh(name + "_each") : last_name);
  if (mean) {
    const DType compute = widen ? DType::f32 : dtype;
    const ValueId k =
        rb.add(OpKind::Constant, {}, ConstantAttrs{compute, {}, {static_cast<double>(c->size())}},
               rb.fresh(name + "_k"));
    result = rb.add(OpKind::Div, {result, k}, NoAttrs{}, last_name);
  }
  if (widen) result = rb.add(OpKind::Cast, {result}, CastAttrs{dtype}, name);
  rb.replace(node.outputs[0], result);
  return true;
}

/// transpose(concat(a1..ak), perm) -> concat(transpose(a1), ...) along the
/// axis the concat axis moves to.
bool sink_concat_below_transpose(Rebuild& rb, const Node& node) {
  if (node.op != OpKind::Transpose) return false;
  const std::optional<EqualConcat> c = concat_below(rb, node, node.inputs[0]);
  if (!c) return false;
  const std::vector<int64_t>& perm = std::get<TransposeAttrs>(node.attrs).perm;
  const auto axis =
      static_cast<int64_t>(std::find(perm.begin(), perm.end(), c->axis) - perm.begin());
  std::vector<ValueId> results;
  for (size_t i = 0; i < c->size(); ++i)
    results.push_back(
        rb.add(OpKind::Transpose, {rb.mapped(c->pieces[i])}, node.attrs, piece_name(rb, node, i)));
  concat_result(rb, node, results, axis);
  return true;
}

/// broadcast_to(concat(a1..ak), shape) -> concat(broadcast_to(a1, shape1), ...)
/// when the concat axis itself is not broadcast.
bool sink_concat_below_broadcast_to(Rebuild& rb, const Node& node) {
  if (node.op != OpKind::BroadcastTo) return false;
  const ValueId cv = node.inputs[0];
  const std::optional<EqualConcat> c = concat_below(rb, node, cv);
  if (!c) return false;
  const int64_t axis = result_axis(rb, node, cv, *c);
  std::vector<ValueId> results;
  for (size_t i = 0; i < c->size(); ++i) {
    Shape shape = rb.shape(node.outputs[0]);
    shape.at(static_cast<size_t>(axis)) = c->extents[i];
    results.push_back(rb.add(OpKind::BroadcastTo, {rb.mapped(c->pieces[i])},
                             ShapeAttrs{std::move(shape)}, piece_name(rb, node, i)));
  }
  concat_result(rb, node, results, axis);
  return true;
}

}  // namespace

const std::vector<Rewrite>& write_rewrites() {
  static const std::vector<Rewrite> rewrites = {
      {"sink_concat_below_elementwise", sink_concat_below_elementwise},
      {"sink_concat_below_reduce", sink_concat_below_reduce},
      {"sink_concat_below_transpose", sink_concat_below_transpose},
      {"sink_concat_below_broadcast_to", sink_concat_below_broadcast_to},
      {"concat_unequal_by_gather", concat_unequal_by_gather},
  };
  return rewrites;
}

}  // namespace autofuse::fuse::move_views_detail
