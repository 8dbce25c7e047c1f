// ONNX math decomposed into primitives: Tan, the inverse and hyperbolic
// trigonometric functions, Softsign, ThresholdedRelu, Shrink, Celu,
// BitShift, MatMulInteger; ReduceLogSum; the window generators (Hann, Hamming, Blackman),
// which fold to constants at import; and the normalizations and pools over
// the spatial axes (InstanceNormalization, GroupNormalization,
// MeanVarianceNormalization, LRN, GlobalAveragePool, GlobalMaxPool).
//
// Accuracy: the formulas avoid cancellation (log1p by the Goldberg
// correction, sinh through tanh near 0, acos through atan of a half-angle),
// so each is within a few ulps of the exact result in its compute type (f32
// for f16/bf16/f32, f64 for f64). atan is Cephes' range-reduced minimax
// approximation: the float one (3 intervals, degree-4 polynomial) in f32,
// the double one (degree-4/5 rational) in f64; asin and acos are built on
// it. Out-of-domain inputs give NaN, the poles +-inf, like std::.
#include <cmath>
#include <numbers>
#include <string_view>

#include <fmt/format.h>

#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

/// Arithmetic in one float compute type, scalars written as numbers.
struct FloatMath {
  GraphBuilder& b;
  DType dt;

  Tensor c(double v) const { return b.scalar(v, dt); }
  Tensor add(Tensor x, Tensor y) const { return b.add(x, y); }
  Tensor sub(Tensor x, Tensor y) const { return b.sub(x, y); }
  Tensor mul(Tensor x, Tensor y) const { return b.mul(x, y); }
  Tensor div(Tensor x, Tensor y) const { return b.div(x, y); }
  Tensor un(OpKind op, Tensor x) const { return b.unary(op, x); }
  Tensor gt(Tensor x, double v) const { return b.binary(OpKind::Gt, x, c(v)); }
  Tensor lt(Tensor x, double v) const { return b.binary(OpKind::Lt, x, c(v)); }
  Tensor select(Tensor cond, Tensor x, Tensor y) const { return b.where(cond, x, y); }
  /// The result for |x| given back the sign of x (NaN stays NaN).
  Tensor with_sign_of(Tensor x, Tensor r) const { return select(lt(x, 0), un(OpKind::Neg, r), r); }

  /// log(1 + u) for u >= -1 without cancellation: log(w) * u / (w - 1)
  /// with w = 1 + u rounded corrects the rounding of w (Goldberg); for w
  /// >= 2 log(w) alone is accurate (and the correction would give inf/inf).
  Tensor log1p(Tensor u) const {
    Tensor w = add(c(1), u);
    Tensor lw = un(OpKind::Log, w);
    Tensor corrected = mul(lw, div(u, sub(w, c(1))));
    Tensor near_one = select(b.binary(OpKind::Eq, w, c(1)), u, corrected);
    return select(b.binary(OpKind::Lt, w, c(2)), near_one, lw);
  }

  /// atan(a) for a >= 0 (NaN gives NaN, inf gives pi/2).
  Tensor atan_nonneg(Tensor a) const {
    const bool f64 = dt == DType::f64;
    // Reduction to |r| <= tan(pi/8) (f32) or 0.66 (f64): atan(a) = y0 +
    // atan(r) with r = -1/a (y0 = pi/2) or (a-1)/(a+1) (y0 = pi/4).
    Tensor big = gt(a, 2.414213562373095048802);
    Tensor mid = gt(a, f64 ? 0.66 : 0.4142135623730950488017);
    Tensor r = select(big, div(c(-1), a), select(mid, div(sub(a, c(1)), add(a, c(1))), a));
    Tensor y0 = select(big, c(std::numbers::pi / 2), select(mid, c(std::numbers::pi / 4), c(0)));
    Tensor z = mul(r, r);
    Tensor p;
    if (!f64) {
      // Cephes atanf: r + r z P(z).
      p = c(8.05374449538e-2);
      for (double k : {-1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1})
        p = add(mul(p, z), c(k));
      return add(y0, add(mul(mul(p, z), r), r));
    }
    // Cephes atan: r + r z P(z) / Q(z), plus the low bits of pi/2 and pi/4.
    p = c(-8.750608600031904122785e-1);
    for (double k : {-1.615753718733365076637e1, -7.500855792314704667340e1,
                     -1.228866684490136173410e2, -6.485021904942025371773e1})
      p = add(mul(p, z), c(k));
    Tensor q = add(z, c(2.485846490142306297962e1));
    for (double k : {1.650270098316988542046e2, 4.328810604912902668951e2,
                     4.853903996359136964868e2, 1.945506571482613964425e2})
      q = add(mul(q, z), c(k));
    Tensor rz = add(mul(r, div(mul(z, p), q)), r);
    constexpr double kMoreBits = 6.123233995736765886130e-17;
    Tensor low = select(big, c(kMoreBits), select(mid, c(kMoreBits / 2), c(0)));
    return add(y0, add(rz, low));
  }

  Tensor atan(Tensor x) const { return with_sign_of(x, atan_nonneg(un(OpKind::Abs, x))); }
};

enum class MathFn { Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Softsign };

Tensor math_fn(const FloatMath& m, MathFn fn, Tensor x) {
  using enum OpKind;
  const double ln2 = std::numbers::ln2;
  // Above this, sqrt(x^2 + 1) == |x| to the last bit: asinh/acosh take
  // log(2|x|) (the general formula would overflow in x^2).
  const double huge = m.dt == DType::f64 ? 0x1p28 : 0x1p12;
  switch (fn) {
    case MathFn::Tan:
      return m.div(m.un(Sin, x), m.un(Cos, x));
    case MathFn::Atan:
      return m.atan(x);
    case MathFn::Asin:  // atan(x / sqrt(1 - x^2)), 1 - x^2 as (1-x)(1+x)
      return m.atan(m.div(x, m.un(Sqrt, m.mul(m.sub(m.c(1), x), m.add(m.c(1), x)))));
    case MathFn::Acos:  // 2 atan(sqrt((1-x)/(1+x))): exact near x = 1
      return m.mul(m.c(2), m.atan_nonneg(m.un(Sqrt, m.div(m.sub(m.c(1), x), m.add(m.c(1), x)))));
    case MathFn::Sinh: {
      // |x| < 1: 2t / (1 - t^2) with t = tanh(|x|/2) (no cancellation);
      // else e^|x|/2 - e^-|x|/2 via e = exp(|x|/2), finite up to the max.
      Tensor a = m.un(Abs, x);
      Tensor t = m.un(Tanh, m.mul(a, m.c(0.5)));
      Tensor small = m.div(m.mul(m.c(2), t), m.mul(m.sub(m.c(1), t), m.add(m.c(1), t)));
      Tensor e = m.un(Exp, m.mul(a, m.c(0.5)));
      Tensor large = m.sub(m.mul(m.mul(m.c(0.5), e), e), m.div(m.c(0.5), m.mul(e, e)));
      return m.with_sign_of(x, m.select(m.lt(a, 1), small, large));
    }
    case MathFn::Cosh: {
      Tensor e = m.un(Exp, m.mul(m.un(Abs, x), m.c(0.5)));
      return m.add(m.mul(m.mul(m.c(0.5), e), e), m.div(m.c(0.5), m.mul(e, e)));
    }
    case MathFn::Asinh: {
      // log1p(a + a^2 / (1 + sqrt(1 + a^2))) == log(a + sqrt(a^2 + 1))
      Tensor a = m.un(Abs, x);
      Tensor a2 = m.mul(a, a);
      Tensor small = m.log1p(m.add(a, m.div(a2, m.add(m.c(1), m.un(Sqrt, m.add(m.c(1), a2))))));
      Tensor large = m.add(m.un(Log, a), m.c(ln2));
      return m.with_sign_of(x, m.select(m.gt(a, huge), large, small));
    }
    case MathFn::Acosh: {
      // log1p(t + sqrt(t) sqrt(t + 2)) with t = x - 1 (exact near 1; NaN
      // for x < 1, where sqrt(2t + t^2) would not be)
      Tensor t = m.sub(x, m.c(1));
      Tensor small = m.log1p(m.add(t, m.mul(m.un(Sqrt, t), m.un(Sqrt, m.add(t, m.c(2))))));
      Tensor large = m.add(m.un(Log, x), m.c(ln2));
      return m.select(m.gt(x, huge), large, small);
    }
    case MathFn::Atanh: {
      // 0.5 log1p(2a / (1 - a)), a = |x|
      Tensor a = m.un(Abs, x);
      Tensor r = m.mul(m.c(0.5), m.log1p(m.div(m.mul(m.c(2), a), m.sub(m.c(1), a))));
      return m.with_sign_of(x, r);
    }
    case MathFn::Softsign:
      return m.div(x, m.add(m.c(1), m.un(Abs, x)));
  }
  AF_CHECK(false, "unhandled math function");
}

template <MathFn kFn>
void convert_math_fn(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const FloatMath m{b, float_compute_dtype(x.dtype())};
  ctx.set_output(0, cast_if(b, math_fn(m, kFn, cast_if(b, x, m.dt)), x.dtype()));
}

// ThresholdedRelu: x > alpha ? x : 0.
void convert_thresholded_relu(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  Tensor alpha = b.scalar(ctx.attr_float("alpha", 1.0f), x.dtype());
  ctx.set_output(0, b.where(b.binary(OpKind::Gt, x, alpha), x, b.scalar(0, x.dtype())));
}

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
void convert_celu(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const FloatMath m{b, float_compute_dtype(x.dtype())};
  const double alpha = ctx.attr_float("alpha", 1.0f);
  if (alpha == 0) ctx.fail("alpha must not be 0");
  Tensor xc = cast_if(b, x, m.dt);
  Tensor neg = m.mul(m.c(alpha), m.sub(m.un(OpKind::Exp, m.div(xc, m.c(alpha))), m.c(1)));
  Tensor y = m.add(b.binary(OpKind::Max, xc, m.c(0)), b.binary(OpKind::Min, neg, m.c(0)));
  ctx.set_output(0, cast_if(b, y, x.dtype()));
}

// Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0. Integer inputs
// compute in f64 and truncate back, as the reference does.
void convert_shrink(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  if (!is_numeric(x.dtype()))
    ctx.fail(fmt::format("X has dtype {}; Shrink needs a numeric tensor", dtype_name(x.dtype())));
  const FloatMath m{b, is_float(x.dtype()) ? float_compute_dtype(x.dtype()) : DType::f64};
  const double lambd = ctx.attr_float("lambd", 0.5f), bias = ctx.attr_float("bias", 0.0f);
  Tensor xc = cast_if(b, x, m.dt);
  Tensor above = m.select(m.gt(xc, lambd), m.sub(xc, m.c(bias)), m.c(0));
  Tensor y = m.select(m.lt(xc, -lambd), m.add(xc, m.c(bias)), above);
  ctx.set_output(0, cast_if(b, y, x.dtype()));
}

// BitShift on unsigned integers: x << s as x * 2^s, x >> s as x / 2^s (both
// wrap in the dtype; a shift by the bit width or more gives 0, as in NumPy).
void convert_bit_shift(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0), s = ctx.input(1);
  const DType dt = x.dtype();
  if (!is_integer(dt) || is_signed_integer(dt) || s.dtype() != dt)
    ctx.fail(fmt::format("X {} and Y {} must be the same unsigned integer type",
                         x.type().to_string(), s.type().to_string()));
  const std::string direction = ctx.attr_string("direction");
  if (direction != "LEFT" && direction != "RIGHT")
    ctx.fail(fmt::format("direction \"{}\" is not one of \"LEFT\", \"RIGHT\"", direction));
  Tensor power = b.binary(OpKind::Pow, b.scalar(2, dt), s);
  ctx.set_output(0, direction == "LEFT" ? b.mul(x, power) : b.div(x, power));
}

// MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32, computed
// as an f64 matmul, exact while the sums stay below 2^53 (K < 2^37 for
// 8-bit inputs). a_zero_point is a scalar or one per row of A, b_zero_point
// a scalar or one per column of B.
void convert_matmul_integer(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor a = ctx.input(0), bm = ctx.input(1);
  for (const Tensor& t : {a, bm}) {
    if (t.dtype() != DType::u8 && t.dtype() != DType::i8)
      ctx.fail(fmt::format("input {} must be an int8/uint8 tensor", t.type().to_string()));
    if (t.rank() < 2)
      ctx.unsupported(fmt::format("MatMulInteger of the vector {}", t.type().to_string()));
  }
  auto centered = [&](Tensor x, int zp_i, bool per_row) {
    Tensor xf = b.cast(x, DType::f64);
    if (!ctx.has_input(zp_i)) return xf;
    Tensor zp = ctx.input(zp_i);
    if (zp.dtype() != x.dtype() || zp.rank() > 1)
      ctx.fail(fmt::format("zero point {} must be a scalar or vector of {}", zp.type().to_string(),
                           dtype_name(x.dtype())));
    zp = b.cast(zp, DType::f64);
    if (per_row && zp.rank() == 1) zp = b.reshape(zp, {zp.shape()[0], sym::Expr(1)});
    return b.sub(xf, zp);
  };
  Tensor y = b.matmul(centered(a, 2, /*per_row=*/true), centered(bm, 3, false));
  ctx.set_output(0, b.cast(y, DType::i32));
}

// ReduceLogSum: log(sum(x)) over the axes (attribute before opset 18, input
// after); empty axes reduce everything unless noop_with_empty_axes, which
// leaves log(x).
void convert_reduce_log_sum(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  const DType dt = ctx.input_dtype(0);
  if (!is_float(dt))
    ctx.unsupported(
        fmt::format("ReduceLogSum of {} (only float inputs are supported)", dtype_name(dt)));
  Tensor x = cast_if(b, ctx.input(0), float_compute_dtype(dt));
  std::vector<int64_t> axes = axes_input_or_attr(ctx, 1, "axes").value_or(std::vector<int64_t>{});
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const bool noop = axes.empty() && ctx.opset() >= 18 && ctx.attr_int("noop_with_empty_axes", 0);
  for (int64_t& a : axes)
    a = normalize_axis(ctx, a, x.rank(), "axis");
  Tensor s = noop ? x : b.reduce_sum(x, axes, keepdims);
  ctx.set_output(0, cast_if(b, b.unary(OpKind::Log, s), dt));
}

// Hann/Hamming/Blackman windows: sum_k a_k cos(2 pi k n / N) for n < size,
// N = size (periodic) or size - 1; folded at import (computed in double).
enum class Window { Hann, Hamming, Blackman };

template <Window kWindow>
void convert_window(NodeContext& ctx) {
  const std::vector<int64_t> size = require_const_ints(ctx, 0, "size");
  if (size.size() != 1 || size[0] < 0)
    ctx.fail(fmt::format("size must be one non-negative integer, not {} value(s) starting {}",
                         size.size(), size.empty() ? 0 : size[0]));
  const DType dt = dtype_of_onnx(ctx, ctx.attr_int("output_datatype", 1), "output_datatype");
  const double n_den = static_cast<double>(ctx.attr_int("periodic", 1) ? size[0] : size[0] - 1);
  double a0 = 0.5, a1 = 0.5, a2 = 0;
  if (kWindow == Window::Hamming) {
    a0 = 25.0 / 46;
    a1 = 1 - a0;
  } else if (kWindow == Window::Blackman) {
    a0 = 0.42;
    a2 = 0.08;
  }
  HostTensor w(dt, {size[0]});
  for (int64_t n = 0; n < size[0]; ++n) {
    const double phase = 2 * std::numbers::pi * static_cast<double>(n) / n_den;
    w.set_f64(n, a0 - a1 * std::cos(phase) + a2 * std::cos(2 * phase));
  }
  ctx.set_constant_output(0, std::move(w));
}

// ---- Normalizations and global pools over the spatial axes ----------------------

/// The (N, C, D1, ...) input of rank >= `min_rank`, float.
Tensor nc_input(NodeContext& ctx, int min_rank) {
  Tensor x = float_input(ctx, 0);
  if (x.rank() < min_rank)
    ctx.fail(
        fmt::format("the input has rank {}; it needs at least {} (N, C, ...)", x.rank(), min_rank));
  return x;
}

std::vector<int64_t> axes_from(int64_t first, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = first; a < rank; ++a)
    axes.push_back(a);
  return axes;
}

/// (x - mean) / sqrt(var + eps) over `axes` (keepdims statistics).
Tensor standardize(const FloatMath& m, Tensor x, const std::vector<int64_t>& axes, double eps) {
  Tensor d = m.sub(x, m.b.reduce_mean(x, axes, /*keepdims=*/true));
  Tensor var = m.b.reduce_mean(m.mul(d, d), axes, /*keepdims=*/true);
  return m.mul(d, m.un(OpKind::Rsqrt, m.add(var, m.c(eps))));
}

/// A [C] parameter (input i) reshaped to `shape` (its C dim in place).
Tensor channel_param(NodeContext& ctx, int i, sym::Expr channels, const Shape& shape, DType dt) {
  Tensor p = float_input(ctx, i);
  if (p.rank() != 1 || !sym::proven_eq(p.shape()[0], channels))
    ctx.fail(fmt::format("input {} is {}; it must be a vector of {} values", i,
                         p.type().to_string(), channels.to_string()));
  return ctx.builder().reshape(cast_if(ctx.builder(), p, dt), shape);
}

// InstanceNormalization: per (n, c) over the spatial axes, then scale[c], B[c].
void convert_instance_norm(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = nc_input(ctx, 3);
  const FloatMath m{b, float_compute_dtype(x.dtype())};
  Shape param_shape(static_cast<size_t>(x.rank() - 1), sym::Expr(1));
  param_shape[0] = x.shape()[1];
  Tensor y =
      standardize(m, cast_if(b, x, m.dt), axes_from(2, x.rank()), ctx.attr_float("epsilon", 1e-5f));
  y = m.mul(y, channel_param(ctx, 1, x.shape()[1], param_shape, m.dt));
  y = m.add(y, channel_param(ctx, 2, x.shape()[1], param_shape, m.dt));
  ctx.set_output(0, cast_if(b, y, x.dtype()));
}

// GroupNormalization: the channels split into num_groups groups, each
// normalized over (its channels, spatial axes) in the stash type (opset
// 21; the input type before). Scale and bias are per channel from opset 21,
// per group before; both apply in the grouped shape (N, G, C/G, D1, ...).
void convert_group_norm(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = nc_input(ctx, 2);
  const int64_t groups = ctx.attr_int("num_groups");
  const Shape s = x.shape();  // copied: new nodes may move the graph's storage
  if (groups < 1 || !sym::proven_eq(sym::mod(s[1], sym::Expr(groups)), 0))
    ctx.fail(
        fmt::format("num_groups {} does not divide the {} channels", groups, s[1].to_string()));
  const bool per_channel = ctx.opset() >= 21;
  const DType stash =
      per_channel ? dtype_of_onnx(ctx, ctx.attr_int("stash_type", 1), "stash_type") : x.dtype();
  if (!is_float(stash)) ctx.fail("stash_type must be a float type");
  const FloatMath m{b, stash};
  const sym::Expr g(groups), per_group = sym::floordiv(s[1], g);
  Shape grouped = {s[0], g, per_group};
  grouped.insert(grouped.end(), s.begin() + 2, s.end());
  Tensor xg = b.reshape(cast_if(b, x, stash), grouped);
  Tensor y =
      cast_if(b, standardize(m, xg, axes_from(2, x.rank() + 1), ctx.attr_float("epsilon", 1e-5f)),
              x.dtype());
  Shape param_shape(grouped.size() - 1, sym::Expr(1));
  param_shape[0] = g;
  if (per_channel) param_shape[1] = per_group;
  const sym::Expr n_params = per_channel ? s[1] : g;
  y = b.mul(y, channel_param(ctx, 1, n_params, param_shape, x.dtype()));
  y = b.add(y, channel_param(ctx, 2, n_params, param_shape, x.dtype()));
  ctx.set_output(0, b.reshape(y, s));
}

// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes`.
void convert_mvn(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const FloatMath m{b, float_compute_dtype(x.dtype())};
  std::vector<int64_t> axes = ctx.attr_ints("axes", std::vector<int64_t>{0, 2, 3});
  for (int64_t& a : axes)
    a = normalize_axis(ctx, a, x.rank(), "axis");
  Tensor xc = cast_if(b, x, m.dt);
  Tensor d = m.sub(xc, b.reduce_mean(xc, axes, /*keepdims=*/true));
  Tensor std = m.un(OpKind::Sqrt, b.reduce_mean(m.mul(d, d), axes, /*keepdims=*/true));
  ctx.set_output(0, cast_if(b, m.div(d, m.add(std, m.c(1e-9))), x.dtype()));
}

// LRN: x / (bias + alpha / size * sum of x^2 over the channel window
// [c - (size-1)/2 rounded down, c + (size-1)/2 rounded up])^beta; the
// window sum adds `size` shifted slices of the zero-padded squares.
void convert_lrn(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = nc_input(ctx, 3);
  const int64_t size = ctx.attr_int("size");
  if (size < 1) ctx.fail(fmt::format("size {} must be >= 1", size));
  const FloatMath m{b, float_compute_dtype(x.dtype())};
  Tensor xc = cast_if(b, x, m.dt);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  std::vector<Tensor> parts;
  auto zeros = [&](int64_t n) {
    Shape shape = x.shape();
    shape[1] = sym::Expr(n);
    return b.broadcast_to(m.c(0), shape);
  };
  if (lo > 0) parts.push_back(zeros(lo));
  parts.push_back(m.mul(xc, xc));
  if (hi > 0) parts.push_back(zeros(hi));
  Tensor padded = parts.size() == 1 ? parts[0] : b.concat(parts, 1);
  std::optional<Tensor> sum;
  for (int64_t i = 0; i < size; ++i) {
    // [i, i + C) of the padded axis of length C + size - 1.
    const int64_t end = i - (size - 1);
    Tensor part = b.slice(padded, SliceAttrs{{1}, {i}, {end < 0 ? end : kSliceEnd}, {1}});
    sum = sum ? m.add(*sum, part) : part;
  }
  const double alpha = ctx.attr_float("alpha", 1e-4f), beta = ctx.attr_float("beta", 0.75f);
  const double bias = ctx.attr_float("bias", 1.0f);
  Tensor base = m.add(m.c(bias), m.mul(m.c(alpha / static_cast<double>(size)), *sum));
  Tensor y = m.div(xc, m.b.binary(OpKind::Pow, base, m.c(beta)));
  ctx.set_output(0, cast_if(b, y, x.dtype()));
}

// GlobalAveragePool / GlobalMaxPool: over the spatial axes, kept as size 1.
template <OpKind kReduce>
void convert_global_pool(NodeContext& ctx) {
  Tensor x = nc_input(ctx, 2);
  if (x.rank() == 2) return ctx.forward_input(0, 0);  // no spatial axes
  ctx.set_output(0, ctx.builder().reduce(kReduce, x, axes_from(2, x.rank()), /*keepdims=*/true));
}

}  // namespace

void register_math_ops(ConverterTable& table) {
  table["Tan"] = convert_math_fn<MathFn::Tan>;
  table["Asin"] = convert_math_fn<MathFn::Asin>;
  table["Acos"] = convert_math_fn<MathFn::Acos>;
  table["Atan"] = convert_math_fn<MathFn::Atan>;
  table["Sinh"] = convert_math_fn<MathFn::Sinh>;
  table["Cosh"] = convert_math_fn<MathFn::Cosh>;
  table["Asinh"] = convert_math_fn<MathFn::Asinh>;
  table["Acosh"] = convert_math_fn<MathFn::Acosh>;
  table["Atanh"] = convert_math_fn<MathFn::Atanh>;
  table["Softsign"] = convert_math_fn<MathFn::Softsign>;
  table["ThresholdedRelu"] = convert_thresholded_relu;
  table["Celu"] = convert_celu;
  table["Shrink"] = convert_shrink;
  table["BitShift"] = convert_bit_shift;
  table["MatMulInteger"] = convert_matmul_integer;
  table["ReduceLogSum"] = convert_reduce_log_sum;
  table["HannWindow"] = convert_window<Window::Hann>;
  table["HammingWindow"] = convert_window<Window::Hamming>;
  table["BlackmanWindow"] = convert_window<Window::Blackman>;
  table["InstanceNormalization"] = convert_instance_norm;
  table["GroupNormalization"] = convert_group_norm;
  table["MeanVarianceNormalization"] = convert_mvn;
  table["LRN"] = convert_lrn;
  table["GlobalAveragePool"] = convert_global_pool<OpKind::ReduceMean>;
  table["GlobalMaxPool"] = convert_global_pool<OpKind::ReduceMax>;
}

}  // namespace autofuse::frontend::onnx_import
