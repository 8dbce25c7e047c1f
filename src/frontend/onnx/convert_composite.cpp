// Composite ONNX ops decomposed into primitive graph ops, so that the
// partitioner fuses each into one kernel (or into its neighbours):
// normalizations, softmaxes, activations with formulas, Clip, Dropout and
// the reductions with a built-in elementwise step (L1, L2, LogSumExp,
// SumSquare). Semantics follow the ONNX operator docs and their function
// bodies for opsets 13..22.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <utility>

#include <fmt/format.h>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

Tensor scalar_like(NodeContext& ctx, double value, const Tensor& like) {
  return ctx.builder().scalar(value, like.dtype());
}

// ---- Normalizations and softmaxes ------------------------------------------

// LayerNormalization-17: normalize over axes [axis, rank) in the stash type;
// Y = cast(normalized) * Scale + B. Mean and InvStdDev (keepdims shape) are
// in the stash type, as the function body defines them.
void convert_layer_norm(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const int rank = x.rank();
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), rank, "axis");
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  const int64_t stash = ctx.attr_int("stash_type", onnx::TensorProto::FLOAT);
  const DType stash_dt = dtype_of_onnx(ctx, stash, "stash_type");
  if (!is_float(stash_dt)) ctx.fail(fmt::format("stash_type {} is not a float type", stash));
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a)
    axes.push_back(a);
  Tensor xs = cast_if(b, x, stash_dt);
  Tensor mean = b.reduce_mean(xs, axes, /*keepdims=*/true);
  Tensor d = b.sub(xs, mean);
  Tensor var = b.reduce_mean(b.mul(d, d), axes, /*keepdims=*/true);
  Tensor inv_std = b.rsqrt(b.add(var, b.scalar(eps, stash_dt)));
  Tensor y = cast_if(b, b.mul(d, inv_std), x.dtype());
  y = b.mul(y, cast_if(b, float_input(ctx, 1), x.dtype()));
  if (ctx.has_input(2)) y = b.add(y, cast_if(b, float_input(ctx, 2), x.dtype()));
  ctx.set_output(0, y);
  if (ctx.has_output(1)) ctx.set_output(1, mean);
  if (ctx.has_output(2)) ctx.set_output(2, inv_std);
}

// LpNormalization: x / ||x||_p along one axis, p 1 or 2 (the sum of |x|,
// as ONNX Runtime computes it; the ONNX reference sums x^p, which differs
// from the norm only for p = 1 and negative values). A zero norm divides
// by zero (inf or NaN), as in both.
void convert_lp_normalization(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank(), "axis");
  const int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) ctx.fail(fmt::format("p = {}; LpNormalization takes p = 1 or 2", p));
  Tensor xs = cast_if(b, x, float_compute_dtype(x.dtype()));
  Tensor norm = p == 1 ? b.reduce_sum(b.unary(OpKind::Abs, xs), {axis}, /*keepdims=*/true)
                       : b.sqrt(b.reduce_sum(b.mul(xs, xs), {axis}, /*keepdims=*/true));
  ctx.set_output(0, cast_if(b, b.div(xs, norm), x.dtype()));
}

// Softmax-13 / LogSoftmax-13: one axis; max-shifted for stability. Softmax
// multiplies by the sum's reciprocal, computed once per row (as PyTorch's
// and ONNX Runtime's CPU kernels do; within 1.5 ulp of the quotient):
// softmax_mask f32 [2, 12, 128, 128] 0.94x and [8, 12, 384, 384] 0.955x of
// the time with a divide per element, bf16 0.97-0.99x; rows of 16 1.07x (a
// scalar divide per row instead of two vector ones).
void convert_softmax_impl(NodeContext& ctx, bool log) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank(), "axis");
  Tensor shifted = b.sub(x, b.reduce_max(x, {axis}, /*keepdims=*/true));
  Tensor e = b.exp(shifted);
  Tensor sum = b.reduce_sum(e, {axis}, /*keepdims=*/true);
  ctx.set_output(0, log ? b.sub(shifted, b.unary(OpKind::Log, sum))
                        : b.mul(e, b.unary(OpKind::Reciprocal, sum)));
}
void convert_softmax(NodeContext& ctx) {
  convert_softmax_impl(ctx, /*log=*/false);
}
void convert_log_softmax(NodeContext& ctx) {
  convert_softmax_impl(ctx, /*log=*/true);
}

// BatchNormalization-15. Inference: Y = (X - mean) * (scale / sqrt(var +
// eps)) + B, the [C] parameters applied along axis 1. training_mode=1
// normalizes with the batch statistics over every axis but 1 (population
// variance) and updates the running ones: running = input * momentum +
// current * (1 - momentum). Statistics are computed in f32 for f16/bf16, as
// the spec says; the running outputs have the input_mean/input_var dtype.
void convert_batch_norm(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  // Before opset 14 training was signalled by the extra outputs (mean, var,
  // saved_mean, saved_var); only opset 14's training_mode is implemented.
  const bool training = ctx.opset() >= 14 && ctx.attr_int("training_mode", 0) != 0;
  for (int i = 1; i < ctx.num_outputs(); ++i)
    if (ctx.has_output(i) && !training) {
      if (ctx.opset() < 14)
        ctx.unsupported(
            "BatchNormalization-9 in training mode (more than one output) is not supported");
      ctx.fail("the running mean/variance outputs exist only with training_mode=1");
    }
  Tensor x = float_input(ctx, 0);
  if (x.rank() < 2) ctx.fail(fmt::format("X has rank {}; it needs at least (N, C)", x.rank()));
  const DType dt = training ? widened_dtype(x.dtype()) : x.dtype();
  // [C] -> [C, 1, ..., 1] so it broadcasts against (N, C, D1, ...).
  Shape param_shape = {x.shape()[1]};
  for (int i = 2; i < x.rank(); ++i)
    param_shape.push_back(sym::Expr(1));
  auto param = [&](int i) {
    Tensor p = float_input(ctx, i);
    if (p.rank() != 1)
      ctx.fail(fmt::format("input {} has rank {}; BatchNormalization parameters have shape [C]", i,
                           p.rank()));
    return b.reshape(cast_if(b, p, dt), param_shape);
  };
  Tensor scale = param(1), bias = param(2);
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  if (!training) {
    Tensor mean = param(3), var = param(4);
    Tensor k = b.mul(scale, b.rsqrt(b.add(var, scalar_like(ctx, eps, var))));
    return ctx.set_output(0, b.add(b.mul(b.sub(x, mean), k), bias));
  }
  std::vector<int64_t> axes = {0};
  for (int64_t a = 2; a < x.rank(); ++a)
    axes.push_back(a);
  Tensor xs = cast_if(b, x, dt);
  Tensor mean = b.reduce_mean(xs, axes, /*keepdims=*/true);
  Tensor d = b.sub(xs, mean);
  Tensor var = b.reduce_mean(b.mul(d, d), axes, /*keepdims=*/true);
  Tensor inv_std = b.rsqrt(b.add(var, b.scalar(eps, dt)));
  ctx.set_output(0, cast_if(b, b.add(b.mul(b.mul(d, inv_std), scale), bias), x.dtype()));
  const double momentum = ctx.attr_float("momentum", 0.9f);
  auto running = [&](int input, const Tensor& current) {
    Tensor old = float_input(ctx, input);
    if (old.rank() != 1)
      ctx.fail(fmt::format("input {} has rank {}; BatchNormalization parameters have shape [C]",
                           input, old.rank()));
    const DType rdt = widened_dtype(old.dtype());
    Tensor now = cast_if(b, b.reshape(current, {x.shape()[1]}), rdt);
    Tensor r = b.add(b.mul(cast_if(b, old, rdt), b.scalar(momentum, rdt)),
                     b.mul(now, b.scalar(1 - momentum, rdt)));
    return cast_if(b, r, old.dtype());
  };
  if (ctx.has_output(1)) ctx.set_output(1, running(3, mean));
  if (ctx.has_output(2)) ctx.set_output(2, running(4, var));
}

// ---- Activations -------------------------------------------------------------

// log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)).
Tensor softplus(GraphBuilder& b, Tensor x) {
  Tensor one = b.scalar(1, x.dtype());
  Tensor tail =
      b.unary(OpKind::Log, b.add(one, b.exp(b.unary(OpKind::Neg, b.unary(OpKind::Abs, x)))));
  return b.add(b.binary(OpKind::Max, x, b.scalar(0, x.dtype())), tail);
}

/// clamp(alpha * x + beta, 0, 1)
Tensor hard_sigmoid(GraphBuilder& b, Tensor x, double alpha, double beta) {
  Tensor y = b.add(b.mul(x, b.scalar(alpha, x.dtype())), b.scalar(beta, x.dtype()));
  y = b.binary(OpKind::Max, y, b.scalar(0, x.dtype()));
  return b.binary(OpKind::Min, y, b.scalar(1, x.dtype()));
}

void convert_gelu(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const std::string approx = ctx.attr_string("approximate", "none");
  Tensor inner;
  if (approx == "none") {
    inner = b.unary(OpKind::Erf, b.mul(x, scalar_like(ctx, 1 / std::numbers::sqrt2, x)));
  } else if (approx == "tanh") {
    // tanh(sqrt(2/pi) * (x + 0.044715 x^3))
    Tensor cube = b.mul(b.mul(x, x), x);
    Tensor poly = b.add(x, b.mul(cube, scalar_like(ctx, 0.044715, x)));
    const double k = std::sqrt(2 / std::numbers::pi);
    inner = b.unary(OpKind::Tanh, b.mul(poly, scalar_like(ctx, k, x)));
  } else {
    ctx.fail(fmt::format("approximate=\"{}\" is not one of \"none\", \"tanh\"", approx));
  }
  Tensor half_x = b.mul(x, scalar_like(ctx, 0.5, x));
  ctx.set_output(0, b.mul(half_x, b.add(inner, scalar_like(ctx, 1, x))));
}

void convert_hard_sigmoid(NodeContext& ctx) {
  Tensor x = float_input(ctx, 0);
  ctx.set_output(0, hard_sigmoid(ctx.builder(), x, ctx.attr_float("alpha", 0.2f),
                                 ctx.attr_float("beta", 0.5f)));
}

void convert_hard_swish(NodeContext& ctx) {
  Tensor x = float_input(ctx, 0);
  GraphBuilder& b = ctx.builder();
  ctx.set_output(0, b.mul(x, hard_sigmoid(b, x, 1.0 / 6, 0.5)));
}

void convert_softplus(NodeContext& ctx) {
  ctx.set_output(0, softplus(ctx.builder(), float_input(ctx, 0)));
}

void convert_mish(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  ctx.set_output(0, b.mul(x, b.unary(OpKind::Tanh, softplus(b, x))));
}

/// where(x < 0 (or <= 0), negative_branch, x)
Tensor select_negative(GraphBuilder& b, Tensor x, Tensor negative, OpKind cmp) {
  return b.where(b.binary(cmp, x, b.scalar(0, x.dtype())), negative, x);
}

// Elu: x < 0 ? alpha * (exp(x) - 1) : x.
void convert_elu(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  Tensor neg = b.mul(b.sub(b.exp(x), scalar_like(ctx, 1, x)),
                     scalar_like(ctx, ctx.attr_float("alpha", 1.0f), x));
  ctx.set_output(0, select_negative(b, x, neg, OpKind::Lt));
}

// Selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)).
void convert_selu(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const double alpha = ctx.attr_float("alpha", 1.67326319217681884765625f);
  const double gamma = ctx.attr_float("gamma", 1.05070102214813232421875f);
  Tensor neg = b.mul(b.sub(b.exp(x), scalar_like(ctx, 1, x)), scalar_like(ctx, alpha, x));
  Tensor y = select_negative(b, x, neg, OpKind::Le);
  ctx.set_output(0, b.mul(y, scalar_like(ctx, gamma, x)));
}

void convert_leaky_relu(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  Tensor neg = b.mul(x, scalar_like(ctx, ctx.attr_float("alpha", 0.01f), x));
  ctx.set_output(0, select_negative(b, x, neg, OpKind::Lt));
}

// PRelu: slope broadcasts unidirectionally to X.
void convert_prelu(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = numeric_input(ctx, 0);
  Tensor slope = numeric_input(ctx, 1);
  if (slope.dtype() != x.dtype())
    ctx.fail(fmt::format("slope has dtype {}, X has {}", dtype_name(slope.dtype()),
                         dtype_name(x.dtype())));
  if (slope.rank() > x.rank())
    ctx.fail(
        fmt::format("slope of rank {} does not broadcast to X of rank {}", slope.rank(), x.rank()));
  Tensor y = select_negative(b, x, b.mul(x, slope), OpKind::Lt);
  if (y.shape() != x.shape())
    ctx.fail(fmt::format("slope {} does not broadcast to X {}", slope.type().to_string(),
                         x.type().to_string()));
  ctx.set_output(0, y);
}

// Clip: max(x, min) then min(., max), so min > max gives max (as specified).
// Constant bounds become splat scalars, which fuse into the kernel; an
// integer bound at the dtype's limit clips nothing and is dropped (graph
// constants cannot hold int64 values beyond 2^53).
void convert_clip(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = numeric_input(ctx, 0);
  auto bound = [&](int i) -> std::optional<Tensor> {
    if (!ctx.has_input(i)) return std::nullopt;
    if (ctx.input_dtype(i) != x.dtype())
      ctx.fail(fmt::format("input {} has dtype {}, X has {}", i, dtype_name(ctx.input_dtype(i)),
                           dtype_name(x.dtype())));
    if (std::optional<HostTensor> c = ctx.constant(i)) {
      if (c->numel() != 1)
        ctx.fail(fmt::format("input {} has {} elements; Clip bounds are scalars", i, c->numel()));
      if (is_float(x.dtype())) return b.scalar(c->get_f64(0), x.dtype());
      const int64_t v = c->get_i64(0);
      // (u64's limit is clipped to INT64_MAX: its bounds are always kept.)
      const auto [lo, hi] = integer_limits(x.dtype());
      if (x.dtype() != DType::u64 && ((i == 1 && v == lo) || (i == 2 && v == hi)))
        return std::nullopt;
      if (v >= -(int64_t{1} << 53) && v <= (int64_t{1} << 53))
        return b.scalar(static_cast<double>(v), x.dtype());
    }
    Tensor t = ctx.input(i);
    if (t.rank() != 0) {
      if (t.rank() != 1 || t.shape()[0] != sym::Expr(1))
        ctx.fail(
            fmt::format("input {} has shape {}; Clip bounds are scalars", i, t.type().to_string()));
      t = b.reshape(t, {});
    }
    return t;
  };
  const std::optional<Tensor> lo = bound(1), hi = bound(2);
  if (!lo && !hi) return ctx.forward_input(0, 0);
  Tensor y = x;
  if (lo) y = b.binary(OpKind::Max, y, *lo);
  if (hi) y = b.binary(OpKind::Min, y, *hi);
  ctx.set_output(0, y);
}

// Dropout: the identity with an all-true mask, unless training_mode is
// true and the ratio nonzero, which draws a random mask. Dropout-10/12
// (read for old opsets) have no training_mode: inference, the identity.
void convert_dropout(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  // A constant scalar input, else a UserError quoting its name (the value is
  // needed at import).
  auto scalar_input = [&](int i, std::string_view what) {
    const std::optional<HostTensor> c = ctx.constant(i);
    if (!c || c->numel() != 1)
      ctx.fail(fmt::format("the {} (input {}, '{}') must be a scalar known at import", what, i,
                           ctx.node().input(i)));
    return c->get_f64(0);
  };
  const bool training = ctx.has_input(2) && scalar_input(2, "training_mode") != 0;
  if (training) {
    const double ratio = ctx.has_input(1) ? scalar_input(1, "ratio") : 0.5;
    if (!(ratio >= 0 && ratio < 1)) ctx.fail(fmt::format("ratio {} is not in [0, 1)", ratio));
    if (ratio != 0)
      ctx.unsupported(fmt::format(
          "training_mode=true with ratio {:g} draws a random mask; autofuse has no random number "
          "generation",
          ratio));
  }
  ctx.forward_input(0, 0);
  if (ctx.has_output(1))
    ctx.set_output(1, b.broadcast_to(b.scalar(1, DType::boolean), ctx.input_shape(0)));
}

// ---- Reductions with an elementwise step ---------------------------------------

enum class NormReduce { L1, L2, SumSquare, LogSumExp };

// Reduce{L1,L2,SumSquare,LogSumExp}: axes from the attribute (opset < 18) or
// the optional second input (opset >= 18, must be known at import); empty
// axes reduce everything unless noop_with_empty_axes, which leaves only the
// elementwise step (as the ONNX reference does).
void convert_norm_reduce(NodeContext& ctx, NormReduce kind) {
  GraphBuilder& b = ctx.builder();
  Tensor x = numeric_input(ctx, 0);
  const int rank = x.rank();
  std::vector<int64_t> axes = axes_input_or_attr(ctx, 1, "axes").value_or(std::vector<int64_t>{});
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const bool noop = axes.empty() && ctx.opset() >= 18 && ctx.attr_int("noop_with_empty_axes", 0);
  for (int64_t& a : axes)
    a = normalize_axis(ctx, a, rank, "axis");
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a)
      axes.push_back(a);
  const DType dt = x.dtype();
  Tensor y;
  switch (kind) {
    case NormReduce::L1: {
      Tensor a = b.unary(OpKind::Abs, x);
      y = noop ? a : b.reduce_sum(a, axes, keepdims);
      break;
    }
    case NormReduce::SumSquare: {
      Tensor sq = b.mul(x, x);
      y = noop ? sq : b.reduce_sum(sq, axes, keepdims);
      break;
    }
    case NormReduce::L2: {
      // Integers: computed in f64 and truncated back, like the reference.
      Tensor xf = cast_if(b, x, is_float(dt) ? widened_dtype(dt) : DType::f64);
      Tensor sq = b.mul(xf, xf);
      y = cast_if(b, b.sqrt(noop ? sq : b.reduce_sum(sq, axes, keepdims)), dt);
      break;
    }
    case NormReduce::LogSumExp: {
      if (!is_float(dt))
        ctx.unsupported(fmt::format("ReduceLogSumExp of {} (an integer type) is not supported",
                                    dtype_name(dt)));
      if (noop) return ctx.forward_input(0, 0);  // log(exp(x)) == x
      // log(sum(exp(x - m))) + m with m the max where finite (else 0), so
      // large values do not overflow and all -inf rows give -inf, not NaN.
      Tensor xf = cast_if(b, x, widened_dtype(dt));
      Tensor m = b.reduce_max(xf, axes, /*keepdims=*/true);
      Tensor zero = b.scalar(0, xf.dtype());
      Tensor finite = b.unary(
          OpKind::Not, b.binary(OpKind::Or, b.unary(OpKind::IsInf, m), b.unary(OpKind::IsNan, m)));
      Tensor shift = b.where(finite, m, zero);
      Tensor sum = b.reduce_sum(b.exp(b.sub(xf, shift)), axes, /*keepdims=*/true);
      Tensor r = b.add(b.unary(OpKind::Log, sum), shift);
      if (!keepdims) {
        Shape out;
        for (int64_t a = 0; a < rank; ++a)
          if (std::find(axes.begin(), axes.end(), a) == axes.end()) out.push_back(x.shape()[a]);
        r = b.reshape(r, out);
      }
      y = cast_if(b, r, dt);
      break;
    }
  }
  ctx.set_output(0, y);
}

template <NormReduce kKind>
void convert_norm_reduce_as(NodeContext& ctx) {
  convert_norm_reduce(ctx, kKind);
}

}  // namespace

void register_composite_ops(ConverterTable& table) {
  table["LayerNormalization"] = convert_layer_norm;
  table["LpNormalization"] = convert_lp_normalization;
  table["Softmax"] = convert_softmax;
  table["LogSoftmax"] = convert_log_softmax;
  table["BatchNormalization"] = convert_batch_norm;
  table["Gelu"] = convert_gelu;
  table["HardSigmoid"] = convert_hard_sigmoid;
  table["HardSwish"] = convert_hard_swish;
  table["Softplus"] = convert_softplus;
  table["Mish"] = convert_mish;
  table["Elu"] = convert_elu;
  table["Selu"] = convert_selu;
  table["LeakyRelu"] = convert_leaky_relu;
  table["PRelu"] = convert_prelu;
  table["Clip"] = convert_clip;
  table["Dropout"] = convert_dropout;
  table["ReduceL1"] = convert_norm_reduce_as<NormReduce::L1>;
  table["ReduceL2"] = convert_norm_reduce_as<NormReduce::L2>;
  table["ReduceSumSquare"] = convert_norm_reduce_as<NormReduce::SumSquare>;
  table["ReduceLogSumExp"] = convert_norm_reduce_as<NormReduce::LogSumExp>;
}

}  // namespace autofuse::frontend::onnx_import
