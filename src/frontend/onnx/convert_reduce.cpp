// ReduceSum/Mean/Max/Min/Prod. Axes come from input 1 (ReduceSum since
// opset 13, the others since 18) or the `axes` attribute (before 18); no
// axes means all of them, or nothing with noop_with_empty_axes. On a known
// list (e.g. ReduceProd of a Shape) the reduction folds at import.
#include <fmt/format.h>

#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

std::optional<sym::Expr> fold(OpKind op, const std::vector<sym::Expr>& values) {
  if (values.empty()) return std::nullopt;  // identities of empty lists: leave to run time
  sym::Expr acc = values[0];
  for (size_t i = 1; i < values.size(); ++i) {
    switch (op) {
      case OpKind::ReduceSum:
        acc = acc + values[i];
        break;
      case OpKind::ReduceProd:
        acc = acc * values[i];
        break;
      case OpKind::ReduceMax:
        acc = sym::max(acc, values[i]);
        break;
      case OpKind::ReduceMin:
        acc = sym::min(acc, values[i]);
        break;
      default:
        return std::nullopt;
    }
  }
  return acc;
}

template <OpKind K>
void convert_reduce(NodeContext& ctx) {
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const bool noop_if_empty = ctx.attr_int("noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes = axes_input_or_attr(ctx, 1, "axes").value_or(std::vector<int64_t>{});
  if (axes.empty() && noop_if_empty) return ctx.forward_input(0, 0);
  const auto rank = static_cast<int64_t>(ctx.input_shape(0).size());
  for (int64_t& a : axes)
    a = normalize_axis(ctx, a, rank, "axis");

  if (rank == 1 && K != OpKind::ReduceMean) {
    if (std::optional<std::vector<sym::Expr>> known = ctx.known_ints(0)) {
      std::optional<sym::Expr> r;
      try {
        r = fold(K, *known);
      } catch (const UserError&) {
        r = std::nullopt;  // int64 overflow: leave it to run time
      }
      if (r) return ctx.set_known_output(0, {*r}, ctx.input_dtype(0), !keepdims);
    }
  }
  GraphBuilder& b = ctx.builder();
  if (ctx.input_dtype(0) == DType::boolean && (K == OpKind::ReduceMax || K == OpKind::ReduceMin)) {
    // Opset 20 allows bool: any / all, computed on 0/1 bytes.
    Tensor r = b.reduce(K, b.cast(ctx.input(0), DType::u8), axes, keepdims);
    return ctx.set_output(0, b.cast(r, DType::boolean, output_name(ctx, 0)));
  }
  ctx.set_output(0, b.reduce(K, ctx.input(0), axes, keepdims, output_name(ctx, 0)));
}

}  // namespace

void register_reduce_ops(ConverterTable& table) {
  table["ReduceSum"] = convert_reduce<OpKind::ReduceSum>;
  table["ReduceMean"] = convert_reduce<OpKind::ReduceMean>;
  table["ReduceMax"] = convert_reduce<OpKind::ReduceMax>;
  table["ReduceMin"] = convert_reduce<OpKind::ReduceMin>;
  table["ReduceProd"] = convert_reduce<OpKind::ReduceProd>;
}

}  // namespace autofuse::frontend::onnx_import
