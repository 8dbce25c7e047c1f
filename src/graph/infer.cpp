// infer_types: checks an op's signature, canonicalizes its input shapes,
// dispatches to the per-class inference and canonicalizes the result. Also
// the helpers the per-class files share.
#include <variant>

#include "graph/infer_internal.h"

namespace autofuse {

namespace graph_detail {

std::string_view attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::None:
      return "no attributes";
    case AttrKind::Cast:
      return "cast attributes";
    case AttrKind::Shape:
      return "shape attributes";
    case AttrKind::Reduce:
      return "reduce attributes";
    case AttrKind::Transpose:
      return "transpose attributes";
    case AttrKind::Slice:
      return "slice attributes";
    case AttrKind::Axis:
      return "axis attributes";
    case AttrKind::Split:
      return "split attributes";
    case AttrKind::Constant:
      return "constant attributes";
    case AttrKind::Iota:
      return "iota attributes";
    case AttrKind::Conv:
      return "conv attributes";
  }
  return "unknown attributes";
}

void check_signature(OpKind op, size_t num_inputs, const Attrs& attrs) {
  const OpInfo& info = op_info(op);
  const auto n = static_cast<int64_t>(num_inputs);
  if (info.max_inputs < 0) {
    if (n < info.min_inputs)
      throw UserError(fmt::format("{}: expects at least {} input{}, got {}", info.name,
                                  info.min_inputs, info.min_inputs == 1 ? "" : "s", n));
  } else if (n < info.min_inputs || n > info.max_inputs) {
    if (info.max_inputs == 0)
      throw UserError(fmt::format("{}: expects no inputs, got {}", info.name, n));
    AF_CHECK(info.min_inputs == info.max_inputs, "fixed arity expected for {}", info.name);
    throw UserError(fmt::format("{}: expects {} input{}, got {}", info.name, info.min_inputs,
                                info.min_inputs == 1 ? "" : "s", n));
  }
  const AttrKind given = attr_kind_of(attrs);
  if (given != info.attr_kind)
    throw UserError(fmt::format("{}: expects {}, got {}", info.name, attr_kind_name(info.attr_kind),
                                attr_kind_name(given)));
}

int64_t normalize_axis(const InferContext& ctx, int64_t axis, int rank, std::string_view what) {
  if (axis < -static_cast<int64_t>(rank) || axis >= rank)
    ctx.fail("{} {} is out of range for rank {}", what, axis, rank);
  return axis < 0 ? axis + rank : axis;
}

DType check_dtype_rule(const InferContext& ctx, const std::vector<DType>& operands) {
  AF_CHECK(!operands.empty(), "no operands for {}", ctx.op_name());
  const DType t = operands[0];
  for (DType other : operands)
    if (other != t) ctx.fail("operand dtypes differ: {} vs {}", dtype_name(t), dtype_name(other));
  switch (op_info(ctx.op).dtype_rule) {
    case DTypeRule::FloatSame:
      if (!is_float(t)) ctx.fail("needs a float input, got {}", dtype_name(t));
      return t;
    case DTypeRule::NumericSame:
      if (!is_numeric(t)) ctx.fail("needs a numeric input, got {}", dtype_name(t));
      return t;
    case DTypeRule::FloatToBool:
      if (!is_float(t)) ctx.fail("needs a float input, got {}", dtype_name(t));
      return DType::boolean;
    case DTypeRule::BoolOrIntSame:
      if (!is_bool(t) && !is_integer(t))
        ctx.fail("needs a bool or integer input, got {}", dtype_name(t));
      return t;
    case DTypeRule::AnyToBool:
      return DType::boolean;
    case DTypeRule::Special:
      break;
  }
  AF_CHECK(false, "{} has no generic dtype rule", ctx.op_name());
  return t;
}

void check_dims_not_negative(const InferContext& ctx, const Shape& shape, std::string_view what) {
  for (size_t i = 0; i < shape.size(); ++i)
    if (ctx.env.proven(shape[i], sym::Rel::Lt, 0))
      ctx.fail("{} {} is negative: {}", what, i, shape[i].to_string());
}

sym::Expr fold_min(const InferContext& ctx, const sym::Expr& a, const sym::Expr& b) {
  if (ctx.env.proven(a, sym::Rel::Le, b)) return a;
  if (ctx.env.proven(b, sym::Rel::Le, a)) return b;
  return sym::min(a, b);
}

sym::Expr fold_max(const InferContext& ctx, const sym::Expr& a, const sym::Expr& b) {
  if (ctx.env.proven(a, sym::Rel::Ge, b)) return a;
  if (ctx.env.proven(b, sym::Rel::Ge, a)) return b;
  return sym::max(a, b);
}

namespace {

std::vector<TensorType> dispatch(const InferContext& ctx, const std::vector<TensorType>& in,
                                 Attrs& attrs) {
  switch (op_info(ctx.op).op_class) {
    case OpClass::Unary:
      return infer_unary(ctx, in);
    case OpClass::Binary:
      return infer_binary(ctx, in);
    case OpClass::Where:
      return infer_where(ctx, in);
    case OpClass::Cast:
      return infer_cast(ctx, in, std::get<CastAttrs>(attrs));
    case OpClass::BroadcastTo:
      return infer_broadcast_to(ctx, in, std::get<ShapeAttrs>(attrs));
    case OpClass::Reduce:
      return infer_reduce(ctx, in, std::get<ReduceAttrs>(attrs));
    case OpClass::Transpose:
      return infer_transpose(ctx, in, std::get<TransposeAttrs>(attrs));
    case OpClass::Reshape:
      return infer_reshape(ctx, in, std::get<ShapeAttrs>(attrs));
    case OpClass::Slice:
      return infer_slice(ctx, in, std::get<SliceAttrs>(attrs));
    case OpClass::Concat:
      return infer_concat(ctx, in, std::get<AxisAttrs>(attrs));
    case OpClass::Split:
      return infer_split(ctx, in, std::get<SplitAttrs>(attrs));
    case OpClass::Gather:
      return infer_gather(ctx, in, std::get<AxisAttrs>(attrs));
    case OpClass::Constant:
      return infer_constant(ctx, std::get<ConstantAttrs>(attrs));
    case OpClass::Iota:
      return infer_iota(ctx, std::get<IotaAttrs>(attrs));
    case OpClass::MatMul:
      return infer_matmul(ctx, in);
    case OpClass::Conv:
      return infer_conv(ctx, in, std::get<ConvAttrs>(attrs));
  }
  AF_CHECK(false, "unhandled op class for {}", ctx.op_name());
  return {};
}

Shape canonical_shape(const Shape& shape, const sym::ShapeEnv& env) {
  Shape out;
  out.reserve(shape.size());
  for (const sym::Expr& d : shape)
    out.push_back(env.canonicalize(d));
  return out;
}

}  // namespace
}  // namespace graph_detail

std::vector<TensorType> infer_types(OpKind op, const std::vector<TensorType>& inputs, Attrs& attrs,
                                    sym::ShapeEnv& env, const std::string& reason_prefix) {
  graph_detail::check_signature(op, inputs.size(), attrs);
  // Inputs typed before a later guard equated symbols still carry the old
  // names; canonical dims make them compare equal.
  std::vector<TensorType> canonical = inputs;
  for (TensorType& t : canonical)
    t.shape = graph_detail::canonical_shape(t.shape, env);
  // A failed inference leaves env and attrs as they were: guards taken before
  // the failing check belong to a node that does not exist.
  sym::ShapeEnv env_before = env;
  Attrs attrs_before = attrs;
  try {
    const graph_detail::InferContext ctx{op, env, reason_prefix};
    std::vector<TensorType> outputs = graph_detail::dispatch(ctx, canonical, attrs);
    for (TensorType& t : outputs)
      t.shape = graph_detail::canonical_shape(t.shape, env);
    return outputs;
  } catch (...) {
    env = std::move(env_before);
    attrs = std::move(attrs_before);
    throw;
  }
}

}  // namespace autofuse
