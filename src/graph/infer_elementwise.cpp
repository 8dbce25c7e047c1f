// Inference for elementwise ops (unary, binary, where, cast) and for the
// broadcasting they share (broadcast_shapes, broadcast_to).
#include <algorithm>
#include <optional>
#include <set>

#include "graph/infer_internal.h"

namespace autofuse {

namespace graph_detail {
namespace {

/// True when every symbol of x and y has a hint and the hints make them
/// differ. Then a guard x == y would come out false, and recording it would
/// only forbid sizes that broadcast fine; the caller goes straight to the
/// size-1 alternatives.
bool hints_differ(const sym::ShapeEnv& env, const sym::Expr& x, const sym::Expr& y) {
  std::set<std::string> symbols;
  sym::collect_symbols(x, symbols);
  sym::collect_symbols(y, symbols);
  for (const std::string& s : symbols)
    if (!env.hint(s)) return false;
  return env.hint_value(x) != env.hint_value(y);
}

/// Guards `e == 1` unless the hints already say otherwise (a guard that
/// answers false would be recorded for nothing).
bool guard_is_one(sym::ShapeEnv& env, const sym::Expr& e, bool hinted, const std::string& reason) {
  if (hinted && env.hint_value(e) != 1) return false;
  return env.guard(e, sym::Rel::Eq, 1, sym::GuardKind::Expect, reason);
}

/// The broadcast of dims x and y (canonical): equal dims stay, a size-1 dim
/// stretches. `y_may_stretch` is false for broadcast_to, where only the
/// input dim x may be 1. Nullopt when they cannot broadcast.
std::optional<sym::Expr> broadcast_dim(sym::ShapeEnv& env, const sym::Expr& x, const sym::Expr& y,
                                       bool y_may_stretch, const std::string& reason) {
  if (env.proven(x, sym::Rel::Eq, y)) return x;
  if (env.proven(x, sym::Rel::Eq, 1)) return y;
  if (y_may_stretch && env.proven(y, sym::Rel::Eq, 1)) return x;
  const bool hinted = hints_differ(env, x, y);
  if (!hinted && env.guard(x, sym::Rel::Eq, y, sym::GuardKind::Expect, reason))
    return env.canonicalize(x);
  if (guard_is_one(env, x, hinted, reason)) return y;
  if (y_may_stretch && guard_is_one(env, y, hinted, reason)) return x;
  return std::nullopt;
}

/// The error for dims that do not broadcast; when that was decided by the
/// hints rather than proven, says so.
std::string cannot_broadcast(const sym::ShapeEnv& env, size_t dim_index, const sym::Expr& x,
                             const sym::Expr& y) {
  std::string message =
      fmt::format("cannot broadcast dim {}: {} vs {}", dim_index, x.to_string(), y.to_string());
  if (!env.proven(x, sym::Rel::Ne, y))
    message += fmt::format(" (hints {} vs {})", env.hint_value(x), env.hint_value(y));
  return message;
}

}  // namespace

Shape broadcast_all(const std::vector<const Shape*>& shapes, sym::ShapeEnv& env,
                    const std::string& reason_prefix) {
  size_t rank = 0;
  for (const Shape* s : shapes)
    rank = std::max(rank, s->size());
  Shape out(rank, sym::Expr(1));
  for (size_t j = 0; j < rank; ++j) {
    const std::string reason =
        fmt::format("broadcast{}, dim {}", reason_prefix.empty() ? "" : " in " + reason_prefix, j);
    for (const Shape* s : shapes) {
      const size_t offset = rank - s->size();
      if (j < offset) continue;
      const sym::Expr dim = env.canonicalize((*s)[j - offset]);
      const std::optional<sym::Expr> d = broadcast_dim(env, env.canonicalize(out[j]), dim,
                                                       /*y_may_stretch=*/true, reason);
      if (!d) throw UserError(cannot_broadcast(env, j, out[j], dim));
      out[j] = *d;
    }
  }
  return out;
}

std::vector<TensorType> infer_unary(const InferContext& ctx, const std::vector<TensorType>& in) {
  return {TensorType{check_dtype_rule(ctx, {in[0].dtype}), in[0].shape}};
}

std::vector<TensorType> infer_binary(const InferContext& ctx, const std::vector<TensorType>& in) {
  const DType out = check_dtype_rule(ctx, {in[0].dtype, in[1].dtype});
  return {TensorType{out, broadcast_all({&in[0].shape, &in[1].shape}, ctx.env, ctx.reason_prefix)}};
}

std::vector<TensorType> infer_where(const InferContext& ctx, const std::vector<TensorType>& in) {
  if (!is_bool(in[0].dtype)) ctx.fail("condition must be bool, got {}", dtype_name(in[0].dtype));
  if (in[1].dtype != in[2].dtype)
    ctx.fail("operand dtypes differ: {} vs {}", dtype_name(in[1].dtype), dtype_name(in[2].dtype));
  return {TensorType{in[1].dtype, broadcast_all({&in[0].shape, &in[1].shape, &in[2].shape}, ctx.env,
                                                ctx.reason_prefix)}};
}

std::vector<TensorType> infer_cast(const InferContext& ctx, const std::vector<TensorType>& in,
                                   const CastAttrs& attrs) {
  if (!attrs.saturate && !is_float8(attrs.to))
    ctx.fail("saturate=false is for float8 targets only, not {}", dtype_name(attrs.to));
  return {TensorType{attrs.to, in[0].shape}};
}

std::vector<TensorType> infer_broadcast_to(const InferContext& ctx,
                                           const std::vector<TensorType>& in,
                                           const ShapeAttrs& attrs) {
  const Shape& from = in[0].shape;
  const Shape& to = attrs.shape;
  check_dims_not_negative(ctx, to, "target dim");
  if (to.size() < from.size())
    ctx.fail("cannot broadcast rank {} to the lower rank {}", from.size(), to.size());
  const size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    const size_t j = i + offset;
    const sym::Expr target = ctx.env.canonicalize(to[j]);
    const std::string reason = fmt::format("broadcast{}, dim {}", ctx.in_node(), j);
    if (!broadcast_dim(ctx.env, from[i], target, /*y_may_stretch=*/false, reason)) {
      std::string hints;
      if (!ctx.env.proven(from[i], sym::Rel::Ne, target))
        hints = fmt::format(" (hints {} vs {})", ctx.env.hint_value(from[i]),
                            ctx.env.hint_value(target));
      ctx.fail("cannot broadcast dim {} of size {} to {}{}", i, from[i].to_string(),
               target.to_string(), hints);
    }
  }
  return {TensorType{in[0].dtype, to}};
}

}  // namespace graph_detail

Shape broadcast_shapes(const Shape& a, const Shape& b, sym::ShapeEnv& env,
                       const std::string& reason_prefix) {
  // On failure leave the env as it was: guards taken before the failing dim
  // belong to a broadcast that did not happen.
  sym::ShapeEnv before = env;
  try {
    return graph_detail::broadcast_all({&a, &b}, env, reason_prefix);
  } catch (...) {
    env = std::move(before);
    throw;
  }
}

}  // namespace autofuse
