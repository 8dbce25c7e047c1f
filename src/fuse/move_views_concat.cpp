// concat_unequal_by_gather: a concat of pieces of unequal static extent
// along its axis becomes a where-chain over clamped gathers of its pieces
// (the ONNX Pad converter's trick; Inductor's masked loads do the same):
//
//   g_k       = gather(x_k, max(min(iota([T]) - o_k, e_k - 1), 0), axis)
//   concat    = where(p < o_1, g_0, where(p < o_2, g_1, ... g_{n-1}))
//               T = sum of extents, o_k = offset of piece k,
//               p = iota([T, 1, ..., 1]) (varies along the axis only)
//
// Every gather index is in range, so no element is read out of bounds. The
// consumer's kernel then reads the pieces through Gather loads (a piece it
// computes itself stays a kernel of its own in the same launch group)
// instead of a library copy writing the whole concat and the kernel reading
// it back. Only along an outer dim (the gathers' indices are then per row:
// hoisted out of the vector loop, bench: 2.3-2.7x faster than the copy and a
// kernel), of a few pieces (kMaxPieces: each element selects among all
// pieces), and when a computation reads it; a concat only stored or read by
// library ops stays a copy (memcpy speed).
#include <fmt/format.h>

#include "fuse/move_views_rebuild.h"

namespace autofuse::fuse::move_views_detail {

namespace {

constexpr size_t kMaxPieces = 4;

/// Whether some user of `v` computes with it (so a kernel reads it).
bool read_by_computation(const Rebuild& rb, ValueId v) {
  for (NodeId id : rb.users(v)) {
    const OpClass c = op_info(rb.src().node(id).op).op_class;
    if (c == OpClass::Unary || c == OpClass::Binary || c == OpClass::Where || c == OpClass::Cast ||
        c == OpClass::Reduce || c == OpClass::BroadcastTo)
      return true;
  }
  return false;
}

}  // namespace

bool concat_unequal_by_gather(Rebuild& rb, const Node& node) {
  if (node.op != OpKind::Concat || node.inputs.size() < 2 || node.inputs.size() > kMaxPieces)
    return false;
  const int64_t axis = std::get<AxisAttrs>(node.attrs).axis;
  std::vector<int64_t> extents;
  bool all_equal = true;
  for (ValueId in : node.inputs) {
    const std::optional<int64_t> e = rb.shape(in).at(static_cast<size_t>(axis)).as_const();
    if (!e || *e < 1) return false;
    extents.push_back(*e);
    all_equal = all_equal && *e == extents.front();
  }
  // Equal pieces fuse as they are (one Store per piece).
  if (all_equal || !read_by_computation(rb, node.outputs[0])) return false;
  // Along the innermost dim the indices vary within the vector loop: a
  // vector gather per element per piece, slower than the library copy
  // (measured 0.4-0.6x); along an outer dim they are per row, hoisted.
  const Shape& out_shape = rb.shape(node.outputs[0]);
  bool inner_dims = false;
  for (size_t d = static_cast<size_t>(axis) + 1; d < out_shape.size(); ++d)
    inner_dims = inner_dims || !rb.is_one(out_shape[d]);
  if (!inner_dims) return false;

  const std::string base = rb.value(node.outputs[0]).name;
  const auto rank = static_cast<size_t>(rb.shape(node.outputs[0]).size());
  int64_t total = 0;
  for (int64_t e : extents)
    total += e;
  auto i64 = [&](int64_t v, const std::string& name) {
    return rb.add(OpKind::Constant, {}, ConstantAttrs{DType::i64, {}, {static_cast<double>(v)}},
                  rb.fresh(fmt::format("{}_{}", base, name)));
  };
  // One iota per use: a value that several chains read would have to be
  // stored by a kernel of its own (over the smaller iteration space [T]).
  auto position = [&](const Shape& shape, const std::string& name) {
    return rb.add(OpKind::Iota, {}, IotaAttrs{DType::i64, shape, 0},
                  rb.fresh(fmt::format("{}_{}", base, name)));
  };
  Shape mask_shape(rank - static_cast<size_t>(axis), sym::Expr(1));
  mask_shape[0] = sym::Expr(total);
  std::vector<ValueId> gathered;
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    offsets.push_back(offset);
    const std::string piece = fmt::format("{}_piece{}", base, k);
    const ValueId shifted = rb.add(OpKind::Sub,
                                   {position({sym::Expr(total)}, fmt::format("position{}", k)),
                                    i64(offset, fmt::format("offset{}", k))},
                                   NoAttrs{}, rb.fresh(piece + "_index"));
    const ValueId below =
        rb.add(OpKind::Min, {shifted, i64(extents[k] - 1, fmt::format("last{}", k))}, NoAttrs{},
               rb.fresh(piece + "_below"));
    const ValueId clamped =
        rb.add(OpKind::Max, {below, i64(0, "zero")}, NoAttrs{}, rb.fresh(piece + "_clamped"));
    gathered.push_back(rb.add(OpKind::Gather, {rb.mapped(node.inputs[k]), clamped}, AxisAttrs{axis},
                              rb.fresh(piece)));
    offset += extents[k];
  }
  // Innermost first: the last piece, then each earlier one where p < its end.
  ValueId result = gathered.back();
  for (size_t k = node.inputs.size() - 1; k-- > 0;) {
    const ValueId before = rb.add(OpKind::Lt,
                                  {position(mask_shape, fmt::format("mask_position{}", k)),
                                   i64(offsets[k + 1], fmt::format("end{}", k))},
                                  NoAttrs{}, rb.fresh(fmt::format("{}_in{}", base, k)));
    result =
        rb.add(OpKind::Where, {before, gathered[k], result}, NoAttrs{},
               k == 0 ? rb.fresh(base + "_select") : rb.fresh(fmt::format("{}_select{}", base, k)));
  }
  rb.replace(node.outputs[0], result);
  return true;
}

}  // namespace autofuse::fuse::move_views_detail
