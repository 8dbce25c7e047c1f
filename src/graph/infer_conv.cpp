// Inference for conv (ONNX Conv semantics, ops.h): normalizes the attributes
// to one entry per spatial axis and derives the output dims symbolically.
#include "graph/infer_internal.h"

namespace autofuse::graph_detail {

namespace {

/// `values` with one entry per spatial axis (`count` of them): the default
/// when empty, else checked for length and lower bound.
void normalize_list(const InferContext& ctx, std::vector<int64_t>& values, size_t count,
                    int64_t fill, int64_t minimum, std::string_view what) {
  if (values.empty()) values.assign(count, fill);
  if (values.size() != count)
    ctx.fail("{} has {} entries, expected {} for {} spatial axes", what, values.size(), count,
             count / (what == "pads" ? 2 : 1));
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] < minimum) ctx.fail("{}[{}] is {}, must be >= {}", what, i, values[i], minimum);
}

}  // namespace

std::vector<TensorType> infer_conv(const InferContext& ctx, const std::vector<TensorType>& in,
                                   ConvAttrs& attrs) {
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  if (x.rank() < 3 || x.rank() > 5)
    ctx.fail("input has rank {}; conv takes [N, C, D1..Dk] with 1 to 3 spatial axes", x.rank());
  if (w.rank() != x.rank())
    ctx.fail("weight has rank {}, the input rank {}: expected [M, C/group, K1..K{}]", w.rank(),
             x.rank(), x.rank() - 2);
  std::vector<DType> dtypes{x.dtype, w.dtype};
  if (in.size() == 3) dtypes.push_back(in[2].dtype);
  const DType dtype = check_dtype_rule(ctx, dtypes);
  // Like matmul, conv runs in a library (oneDNN) without float8 kernels.
  if (is_float8(dtype)) ctx.fail("{} is not supported", dtype_name(dtype));

  const auto k = static_cast<size_t>(x.rank() - 2);
  normalize_list(ctx, attrs.strides, k, 1, 1, "strides");
  normalize_list(ctx, attrs.dilations, k, 1, 1, "dilations");
  normalize_list(ctx, attrs.pads, 2 * k, 0, 0, "pads");
  if (attrs.group < 1) ctx.fail("group is {}, must be >= 1", attrs.group);

  const sym::Expr group(attrs.group);
  const sym::Expr& channels = x.shape[1];
  const sym::Expr& out_channels = w.shape[0];
  const sym::Expr weight_channels = w.shape[1] * group;
  if (ctx.env.proven(channels, sym::Rel::Ne, weight_channels))
    ctx.fail("input has {} channels, weight {} x group {} = {}", channels.to_string(),
             w.shape[1].to_string(), attrs.group, weight_channels.to_string());
  ctx.env.require(channels, sym::Rel::Eq, weight_channels, sym::GuardKind::Assert,
                  fmt::format("conv input channels = weight dim 1 x group{}", ctx.in_node()));
  const sym::Expr per_group = sym::mod(out_channels, group);
  if (ctx.env.proven(per_group, sym::Rel::Ne, sym::Expr(0)))
    ctx.fail("{} output channels do not divide into {} groups", out_channels.to_string(),
             attrs.group);
  ctx.env.require(per_group, sym::Rel::Eq, sym::Expr(0), sym::GuardKind::Assert,
                  fmt::format("conv output channels divisible by group{}", ctx.in_node()));
  if (in.size() == 3) {
    const TensorType& bias = in[2];
    if (bias.rank() != 1) ctx.fail("bias has rank {}, expected [M]", bias.rank());
    if (ctx.env.proven(bias.shape[0], sym::Rel::Ne, out_channels))
      ctx.fail("bias has {} entries for {} output channels", bias.shape[0].to_string(),
               out_channels.to_string());
    ctx.env.require(bias.shape[0], sym::Rel::Eq, out_channels, sym::GuardKind::Assert,
                    fmt::format("conv bias length = output channels{}", ctx.in_node()));
  }

  Shape out{x.shape[0], out_channels};
  for (size_t i = 0; i < k; ++i) {
    const int axis = static_cast<int>(i);
    const sym::Expr padded = x.shape[i + 2] + attrs.pad_begin(axis) + attrs.pad_end(axis);
    // The extent one output position covers: dilation * (K - 1) + 1.
    const sym::Expr window = sym::Expr(attrs.dilations[i]) * (w.shape[i + 2] - 1) + 1;
    if (ctx.env.proven(padded, sym::Rel::Lt, window))
      ctx.fail("spatial axis {}: the padded input ({}) is smaller than the dilated kernel ({})", i,
               padded.to_string(), window.to_string());
    ctx.env.require(
        padded, sym::Rel::Ge, window, sym::GuardKind::Assert,
        fmt::format("conv spatial axis {} at least the dilated kernel{}", i, ctx.in_node()));
    out.push_back(sym::floordiv(padded - window, sym::Expr(attrs.strides[i])) + 1);
  }
  return {TensorType{dtype, out}};
}

}  // namespace autofuse::graph_detail
