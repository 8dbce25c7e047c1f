// Inference for gather, the source ops (constant, iota) and matmul.
#include <cmath>
#include <limits>

#include "graph/infer_internal.h"

namespace autofuse::graph_detail {

std::vector<TensorType> infer_gather(const InferContext& ctx, const std::vector<TensorType>& in,
                                     AxisAttrs& attrs) {
  const TensorType& data = in[0];
  const TensorType& indices = in[1];
  attrs.axis = normalize_axis(ctx, attrs.axis, data.rank(), "axis");
  if (indices.dtype != DType::i32 && indices.dtype != DType::i64)
    ctx.fail("indices must be i32 or i64, got {}", dtype_name(indices.dtype));
  Shape out(data.shape.begin(), data.shape.begin() + attrs.axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + attrs.axis + 1, data.shape.end());
  return {TensorType{data.dtype, out}};
}

namespace {

/// Inclusive value range of an integer dtype, within what a double holds
/// exactly (so i64 is limited to +-2^53).
struct IntRange {
  double lo, hi;
};
IntRange int_range(DType t) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  const auto [lo, hi] = integer_limits(t);
  return {std::max(static_cast<double>(lo), -kExact), std::min(static_cast<double>(hi), kExact)};
}

}  // namespace

std::vector<TensorType> infer_constant(const InferContext& ctx, const ConstantAttrs& attrs) {
  int64_t count = 1;
  Shape shape;
  for (size_t i = 0; i < attrs.shape.size(); ++i) {
    const int64_t d = attrs.shape[i];
    if (d < 0) ctx.fail("shape dim {} is negative: {}", i, d);
    if (__builtin_mul_overflow(count, d, &count)) ctx.fail("shape has too many elements");
    shape.push_back(d);
  }
  const auto num_values = static_cast<int64_t>(attrs.values.size());
  if (num_values != 1 && num_values != count)
    ctx.fail("has {} values for {} elements (give 1 or {})", num_values, count, count);
  if (!is_float(attrs.dtype)) {
    const IntRange range = int_range(attrs.dtype);
    for (size_t i = 0; i < attrs.values.size(); ++i) {
      const double v = attrs.values[i];
      // NaN fails every comparison, so it is rejected here too.
      if (!(v >= range.lo && v <= range.hi) || std::trunc(v) != v)
        ctx.fail("value {} at index {} is not a valid {}", v, i, dtype_name(attrs.dtype));
    }
  }
  return {TensorType{attrs.dtype, shape}};
}

std::vector<TensorType> infer_iota(const InferContext& ctx, IotaAttrs& attrs) {
  if (!is_numeric(attrs.dtype)) ctx.fail("dtype must be numeric, got {}", dtype_name(attrs.dtype));
  check_dims_not_negative(ctx, attrs.shape, "shape dim");
  attrs.axis = normalize_axis(ctx, attrs.axis, static_cast<int>(attrs.shape.size()), "axis");
  return {TensorType{attrs.dtype, attrs.shape}};
}

std::vector<TensorType> infer_matmul(const InferContext& ctx, const std::vector<TensorType>& in) {
  const TensorType& a = in[0];
  const TensorType& b = in[1];
  for (int k = 0; k < 2; ++k)
    if (in[k].rank() < 2) ctx.fail("input {} has rank {}, needs rank >= 2", k, in[k].rank());
  const DType dtype = check_dtype_rule(ctx, {a.dtype, b.dtype});
  // The library matmul (oneDNN) has no float8; ONNX MatMul takes none either.
  if (is_float8(dtype)) ctx.fail("{} is not supported", dtype_name(dtype));
  const sym::Expr& m = a.shape[a.rank() - 2];
  const sym::Expr& ka = a.shape[a.rank() - 1];
  const sym::Expr& kb = b.shape[b.rank() - 2];
  const sym::Expr& n = b.shape[b.rank() - 1];
  if (ctx.env.proven(ka, sym::Rel::Ne, kb))
    ctx.fail("inner dims differ: {} vs {}", ka.to_string(), kb.to_string());
  ctx.env.require(ka, sym::Rel::Eq, kb, sym::GuardKind::Assert,
                  fmt::format("matmul inner dim{}", ctx.in_node()));
  const Shape batch_a(a.shape.begin(), a.shape.end() - 2);
  const Shape batch_b(b.shape.begin(), b.shape.end() - 2);
  Shape out = broadcast_all({&batch_a, &batch_b}, ctx.env, ctx.reason_prefix);
  out.push_back(m);
  out.push_back(n);
  return {TensorType{dtype, out}};
}

}  // namespace autofuse::graph_detail
