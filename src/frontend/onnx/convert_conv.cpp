// Conv, ConvTranspose, ConvInteger and QLinearConv. Conv becomes the graph's conv op (oneDNN at run
// time, a fusion boundary), auto_pad resolved to explicit pads here.
// ConvTranspose is decomposed into a Conv, so it needs no library of its
// own: y[o] = sum over taps k of x[i] W[k] where o = i * s + k * d - pad_begin
// is the stride-1 convolution, with the kernel flipped and its in/out
// channels swapped per group, of x with s - 1 zeros between neighbours
// (a reshape, a concat with a zero block, a reshape and a slice: symbolic
// sizes too), padded by d * (K - 1) - pad_begin before and d * (K - 1) -
// pad_end + output_padding after (a negative amount crops). The conv then
// reads s^k times the input's positions, mostly zeros: correct, not the
// fastest form for large strides.
#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

using sym::Expr;

/// X, W and the optional B of a Conv or ConvTranspose: one float dtype, X
/// and W of equal rank with 1 to 3 spatial axes.
std::vector<Tensor> conv_inputs(NodeContext& ctx) {
  Tensor x = ctx.input(0), w = ctx.input(1);
  std::vector<Tensor> inputs{x, w};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  for (const Tensor& t : inputs)
    if (t.dtype() != x.dtype() || !is_float(t.dtype()))
      ctx.fail(fmt::format(
          "X, W and B must have one float dtype, got {}, {}{}", dtype_name(x.dtype()),
          dtype_name(w.dtype()),
          inputs.size() == 3 ? ", " + std::string(dtype_name(inputs[2].dtype())) : std::string()));
  if (x.rank() < 3)
    ctx.fail(
        fmt::format("X has rank {}; {} needs [N, C, D1, ...]", x.rank(), ctx.node().op_type()));
  if (w.rank() != x.rank())
    ctx.fail(fmt::format("W has rank {} for X of rank {}", w.rank(), x.rank()));
  const int k = x.rank() - 2;
  if (k > 3)
    ctx.unsupported(fmt::format("{} over {} spatial axes (at most 3)", ctx.node().op_type(), k));
  return inputs;
}

/// strides, dilations and group, checked (one entry per spatial axis, >= 1).
ConvAttrs stride_attrs(NodeContext& ctx, size_t k) {
  ConvAttrs attrs;
  attrs.strides = ctx.attr_ints("strides", std::vector<int64_t>(k, 1));
  attrs.dilations = ctx.attr_ints("dilations", std::vector<int64_t>(k, 1));
  attrs.group = ctx.attr_int("group", 1);
  if (attrs.strides.size() != k || attrs.dilations.size() != k)
    ctx.fail(fmt::format("strides and dilations need {} entries, got {} and {}", k,
                         attrs.strides.size(), attrs.dilations.size()));
  for (size_t i = 0; i < k; ++i)
    if (attrs.strides[i] < 1 || attrs.dilations[i] < 1)
      ctx.fail(fmt::format("strides and dilations must be >= 1, got [{}] and [{}]",
                           fmt::join(attrs.strides, ", "), fmt::join(attrs.dilations, ", ")));
  return attrs;
}

/// The kernel's spatial dims: W's where static, checked against
/// kernel_shape when given; -1 where neither tells.
std::vector<int64_t> kernel_dims(NodeContext& ctx, const Tensor& w) {
  const auto k = static_cast<size_t>(w.rank() - 2);
  std::vector<int64_t> kernel(k, -1);
  for (size_t i = 0; i < k; ++i)
    if (std::optional<int64_t> d = w.shape()[i + 2].as_const()) kernel[i] = *d;
  if (!ctx.has_attr("kernel_shape")) return kernel;
  const std::vector<int64_t> shape = ctx.attr_ints("kernel_shape");
  if (shape.size() != k)
    ctx.fail(fmt::format("kernel_shape has {} entries for {} spatial axes", shape.size(), k));
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] >= 0 && kernel[i] != shape[i])
      ctx.fail(fmt::format("kernel_shape [{}] differs from W's spatial dims {}",
                           fmt::join(shape, ", "), w.type().to_string()));
    kernel[i] = shape[i];
  }
  return kernel;
}

std::string auto_pad_mode(NodeContext& ctx) {
  const std::string mode = ctx.attr_string("auto_pad", "NOTSET");
  if (mode != "NOTSET" && mode != "VALID" && mode != "SAME_UPPER" && mode != "SAME_LOWER")
    ctx.fail(
        fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", mode));
  return mode;
}

int64_t known_kernel(NodeContext& ctx, const std::vector<int64_t>& kernel, size_t i,
                     std::string_view why) {
  if (kernel[i] < 0)
    ctx.unsupported(fmt::format("{} with W's spatial dim {} unknown at import", why, i));
  return kernel[i];
}

/// The conv op of the node's attributes on {x, w[, bias]} (explicit pads
/// or auto_pad).
Tensor conv_of(NodeContext& ctx, const std::vector<Tensor>& inputs) {
  const Tensor& x = inputs[0];
  const auto k = static_cast<size_t>(x.rank() - 2);
  ConvAttrs attrs = stride_attrs(ctx, k);
  const std::vector<int64_t> kernel = kernel_dims(ctx, inputs[1]);
  const std::string auto_pad = auto_pad_mode(ctx);
  if (auto_pad == "NOTSET") {
    attrs.pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  } else {
    attrs.pads.assign(2 * k, 0);
    for (size_t i = 0; i < k && auto_pad != "VALID"; ++i)
      std::tie(attrs.pads[i], attrs.pads[k + i]) =
          auto_pads(ctx, auto_pad, static_cast<int>(i), x.shape()[i + 2],
                    known_kernel(ctx, kernel, i, "auto_pad " + auto_pad), attrs.strides[i],
                    attrs.dilations[i]);
  }
  return ctx.builder().op(OpKind::Conv, inputs, attrs);
}

// Conv: x [N, C, D1..Dk], W [M, C/group, K1..Kk], optional B [M].
void convert_conv(NodeContext& ctx) {
  ctx.set_output(0, conv_of(ctx, conv_inputs(ctx)));
}

// ---- Integer convolutions ----------------------------------------------------
// ConvInteger and QLinearConv convolve (x - x_zero_point) and (w -
// w_zero_point) in f64, exact while the sums stay below 2^53 (for 8-bit
// inputs any realistic kernel), through the f64 conv (a direct loop).

/// Input `i` (int8 or uint8, rank 3 to 5 for x and w) centered on the zero
/// point input `zp_i` (a scalar, or one per output channel for w), in f64.
Tensor centered_f64(NodeContext& ctx, int i, int zp_i, bool per_channel) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(i);
  if (x.dtype() != DType::u8 && x.dtype() != DType::i8)
    ctx.fail(fmt::format("input {} is {}; int8 or uint8 is needed", i, x.type().to_string()));
  if (x.rank() < 3 || x.rank() > 5)
    ctx.fail(fmt::format("input {} has rank {}; 1 to 3 spatial axes are supported", i, x.rank()));
  Tensor xf = b.cast(x, DType::f64);
  if (!ctx.has_input(zp_i)) return xf;
  Tensor zp = ctx.input(zp_i);
  if (zp.dtype() != x.dtype() || zp.rank() > 1 || (zp.rank() == 1 && !per_channel))
    ctx.fail(fmt::format("zero point {} must be a {} of {}", zp.type().to_string(),
                         per_channel ? "scalar or one per output channel" : "scalar",
                         dtype_name(x.dtype())));
  zp = b.cast(zp, DType::f64);
  if (zp.rank() == 1) {  // [M] -> [M, 1, ...]
    Shape shape(static_cast<size_t>(x.rank()), Expr(1));
    shape[0] = zp.shape()[0];
    zp = b.reshape(zp, shape);
  }
  return b.sub(xf, zp);
}

// ConvInteger: int32 y = conv(x - x_zero_point, w - w_zero_point).
void convert_conv_integer(NodeContext& ctx) {
  Tensor y = conv_of(ctx, {centered_f64(ctx, 0, 2, false), centered_f64(ctx, 1, 3, true)});
  ctx.set_output(0, ctx.builder().cast(y, DType::i32));
}

/// A float32 scale input: a scalar, or (`channels`) one per output channel
/// reshaped to broadcast along axis 1 of a rank-`rank` result.
Tensor scale_input(NodeContext& ctx, int i, bool channels, int rank) {
  GraphBuilder& b = ctx.builder();
  Tensor s = ctx.input(i);
  if (s.dtype() != DType::f32 || s.rank() > 1 || (s.rank() == 1 && !channels))
    ctx.fail(fmt::format("scale {} must be a float32 {}", s.type().to_string(),
                         channels ? "scalar or one per output channel" : "scalar"));
  if (s.rank() == 1) {
    Shape shape(static_cast<size_t>(rank), Expr(1));
    shape[1] = s.shape()[0];
    s = b.reshape(s, shape);
  }
  return s;
}

// QLinearConv: y = saturate(round_half_even(conv(x - x_zp, w - w_zp) + B)
// * (x_scale * w_scale / y_scale) + y_zp)); the scale product in float32 as
// the reference computes it, the rest in f64.
void convert_qlinear_conv(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  std::vector<Tensor> inputs{centered_f64(ctx, 0, 2, false), centered_f64(ctx, 3, 5, true)};
  if (ctx.num_inputs() > 8 && ctx.has_input(8)) {
    Tensor bias = ctx.input(8);
    if (bias.dtype() != DType::i32 || bias.rank() != 1)
      ctx.fail(fmt::format("B {} must be a 1-D int32 tensor", bias.type().to_string()));
    inputs.push_back(b.cast(bias, DType::f64));
  }
  Tensor acc = conv_of(ctx, inputs);
  const int rank = acc.rank();
  Tensor scale = b.div(b.mul(scale_input(ctx, 1, false, rank), scale_input(ctx, 4, true, rank)),
                       scale_input(ctx, 6, false, rank));
  Tensor zp = ctx.input(7);
  const DType out = zp.dtype();
  if ((out != DType::u8 && out != DType::i8) || zp.rank() > 1)
    ctx.fail(fmt::format("y_zero_point {} must be an int8 or uint8 scalar", zp.type().to_string()));
  ctx.set_output(
      0, round_and_saturate(b, b.mul(acc, b.cast(scale, DType::f64)), b.cast(zp, DType::f64), out));
}

/// `x` with s - 1 zeros between neighbours along `axis`: length (D - 1) * s
/// + 1 (D = 0 stays empty).
Tensor zero_upsample(GraphBuilder& b, const Tensor& x, int64_t axis, int64_t s) {
  if (s == 1) return x;
  const auto a = static_cast<size_t>(axis);
  Shape column = x.shape();
  column.insert(column.begin() + static_cast<std::ptrdiff_t>(a) + 1, Expr(1));
  Shape zeros = column;
  zeros[a + 1] = Expr(s - 1);
  Tensor interleaved =
      b.concat({b.reshape(x, column), b.broadcast_to(b.scalar(0, x.dtype()), zeros)}, axis + 1);
  Shape flat = x.shape();
  flat[a] = x.shape()[a] * Expr(s);
  return b.slice(b.reshape(interleaved, flat), SliceAttrs{{axis}, {0}, {-(s - 1)}, {1}});
}

/// W [C, M/group, K...] as the equivalent Conv's [M, C/group, K...] with
/// every spatial axis reversed.
Tensor transposed_kernel(NodeContext& ctx, const Tensor& w, int64_t group) {
  GraphBuilder& b = ctx.builder();
  const Shape s = w.shape();  // a copy: adding nodes moves the graph's values
  const Expr in_per_group = sym::floordiv(s[0], Expr(group));
  if (!sym::proven_eq(in_per_group * Expr(group), s[0]))
    ctx.fail(
        fmt::format("W's {} input channels do not divide into {} groups", s[0].to_string(), group));
  Shape grouped{Expr(group), in_per_group};
  grouped.insert(grouped.end(), s.begin() + 1, s.end());
  std::vector<int64_t> perm{0, 2, 1};
  for (int64_t a = 3; a < static_cast<int64_t>(grouped.size()); ++a)
    perm.push_back(a);
  Tensor swapped = b.transpose(b.reshape(w, grouped), perm);
  Shape out{s[1] * Expr(group), in_per_group};
  out.insert(out.end(), s.begin() + 2, s.end());
  Tensor t = b.reshape(swapped, out);
  for (int64_t a = 2; a < w.rank(); ++a)
    t = b.slice(t, SliceAttrs{{a}, {-1}, {kSliceEnd}, {-1}});  // reversed (to the start)
  return t;
}

// ConvTranspose: x [N, C, D...], W [C, M/group, K...], optional B [M];
// pads from pads, auto_pad or output_shape, plus output_padding.
void convert_conv_transpose(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  const std::vector<Tensor> inputs = conv_inputs(ctx);
  Tensor x = inputs[0];
  const auto k = static_cast<size_t>(x.rank() - 2);
  const ConvAttrs strided = stride_attrs(ctx, k);
  const std::vector<int64_t> kernel = kernel_dims(ctx, inputs[1]);
  const std::vector<int64_t> output_padding =
      ctx.attr_ints("output_padding", std::vector<int64_t>(k, 0));
  if (output_padding.size() != k)
    ctx.fail(fmt::format("output_padding has {} entries, expected {}", output_padding.size(), k));
  const std::string auto_pad = auto_pad_mode(ctx);
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (pads.size() != 2 * k)
    ctx.fail(fmt::format("pads has {} entries, expected {}", pads.size(), 2 * k));
  const bool has_output_shape = ctx.has_attr("output_shape");
  std::vector<int64_t> output_shape;
  if (has_output_shape) {
    output_shape = ctx.attr_ints("output_shape");
    // The spatial dims, or (as some exporters write it) the whole shape.
    if (output_shape.size() == k + 2)
      output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (output_shape.size() != k)
      ctx.fail(
          fmt::format("output_shape has {} entries for {} spatial axes", output_shape.size(), k));
  }
  for (size_t i = 0; i < k; ++i) {
    const int64_t s = strided.strides[i], d = strided.dilations[i];
    if (!has_output_shape && (auto_pad == "NOTSET" || auto_pad == "VALID")) {
      if (auto_pad == "VALID") pads[i] = pads[k + i] = 0;
      continue;
    }
    // The total padding that gives the wanted output size; split with the
    // odd unit at the start for SAME_UPPER... as the operator doc and its
    // reference implementation do (floor division: a negative total
    // extends the end).
    const int64_t span = d * (known_kernel(ctx, kernel, i, "ConvTranspose's padding") - 1) + 1;
    int64_t total = 0;
    if (has_output_shape) {
      const std::optional<int64_t> in = x.shape()[i + 2].as_const();
      if (!in)
        ctx.unsupported(fmt::format("output_shape with spatial axis {} of symbolic size {}", i,
                                    x.shape()[i + 2].to_string()));
      total = s * (*in - 1) + output_padding[i] + span - output_shape[i];
    } else {
      total = output_padding[i] + span - s;  // output = input * stride
    }
    const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor
    if (auto_pad == "SAME_UPPER") {
      pads[i] = half;
      pads[k + i] = total - half;
    } else {
      pads[i] = total - half;
      pads[k + i] = half;
    }
  }

  // The equivalent stride-1 Conv of the zero-upsampled, padded (or cropped) x.
  ConvAttrs attrs{std::vector<int64_t>(k, 1), strided.dilations, std::vector<int64_t>(2 * k, 0),
                  strided.group};
  for (size_t i = 0; i < k; ++i) {
    const auto axis = static_cast<int64_t>(i + 2);
    const int64_t reach =
        strided.dilations[i] * (known_kernel(ctx, kernel, i, "ConvTranspose") - 1);
    const int64_t lead = reach - pads[i], trail = reach - pads[k + i] + output_padding[i];
    x = zero_upsample(b, x, axis, strided.strides[i]);
    if (lead < 0 || trail < 0)
      x = b.slice(
          x,
          SliceAttrs{{axis}, {std::max<int64_t>(0, -lead)}, {trail < 0 ? trail : kSliceEnd}, {1}});
    attrs.pads[i] = std::max<int64_t>(0, lead);
    attrs.pads[k + i] = std::max<int64_t>(0, trail);
  }
  std::vector<Tensor> conv_in{x, transposed_kernel(ctx, inputs[1], strided.group)};
  if (inputs.size() == 3) conv_in.push_back(inputs[2]);
  ctx.set_output(0, b.op(OpKind::Conv, conv_in, attrs));
}

}  // namespace

void register_conv_ops(ConverterTable& table) {
  table["Conv"] = convert_conv;
  table["ConvInteger"] = convert_conv_integer;
  table["QLinearConv"] = convert_qlinear_conv;
  table["ConvTranspose"] = convert_conv_transpose;
}

}  // namespace autofuse::frontend::onnx_import
