// MatMul and Gemm: float operands become the graph's matmul op (a library
// call through oneDNN at run time, and a fusion boundary); the elementwise
// parts of Gemm (alpha, beta, C) are primitives that fuse after it. Integer
// operands, which oneDNN's f32 path cannot take exactly, are decomposed into
// a broadcast multiply and a sum over K (one fused reduction kernel).
// Conv becomes the graph's conv op (oneDNN too), its auto_pad resolved to
// explicit pads here.
#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

using sym::Expr;

/// Inputs of MatMul/Gemm: both float or both integer, the same dtype.
void check_operands(NodeContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    ctx.fail(fmt::format("operands have different dtypes ({} and {})", dtype_name(a.dtype()),
                         dtype_name(b.dtype())));
  if (!is_numeric(a.dtype()))
    ctx.fail(
        fmt::format("operands have dtype {}; a numeric dtype is needed", dtype_name(a.dtype())));
}

/// NumPy matmul of rank >= 2 operands (batch dims broadcast).
Tensor matmul_nd(NodeContext& ctx, Tensor a, Tensor b) {
  GraphBuilder& g = ctx.builder();
  if (is_float(a.dtype())) return g.matmul(a, b);
  // Integer: a[..., M, K, 1] * b[..., 1, K, N] summed over K. Broadcasting
  // would stretch a K of 1 silently, so the inner dims are checked first.
  const Expr ka = a.shape().back(), kb = b.shape()[b.rank() - 2];
  const bool one_a = ka == Expr(1), one_b = kb == Expr(1);
  if (sym::proven_ne(ka, kb) || (one_a != one_b && !sym::proven_eq(ka, kb)))
    ctx.fail(fmt::format("inner dims differ: {} vs {}", ka.to_string(), kb.to_string()));
  Shape sa = a.shape(), sb = b.shape();
  sa.push_back(Expr(1));
  sb.insert(sb.end() - 2, Expr(1));
  Tensor prod = g.mul(g.reshape(a, sa), g.reshape(b, sb));
  return g.reduce_sum(prod, {prod.rank() - 2}, /*keepdims=*/false);
}

// MatMul: NumPy semantics; a 1-D operand gets a unit dim (prepended for a,
// appended for b) that is removed from the result again.
void convert_matmul(NodeContext& ctx) {
  GraphBuilder& g = ctx.builder();
  Tensor a = ctx.input(0), b = ctx.input(1);
  check_operands(ctx, a, b);
  if (a.rank() == 0 || b.rank() == 0)
    ctx.fail("MatMul operands must have rank >= 1 (got a scalar)");
  const bool vec_a = a.rank() == 1, vec_b = b.rank() == 1;
  if (vec_a) a = g.reshape(a, {Expr(1), a.shape()[0]});
  if (vec_b) b = g.reshape(b, {b.shape()[0], Expr(1)});
  Tensor y = matmul_nd(ctx, a, b);
  if (vec_a || vec_b) {
    Shape out = y.shape();
    if (vec_b) out.pop_back();
    if (vec_a) out.erase(out.end() - (vec_b ? 1 : 2));
    y = g.reshape(y, out);
  }
  ctx.set_output(0, y);
}

/// x^T for a rank-2 operand. A constant with a static shape is transposed
/// here (exported Linear layers store B transposed): no copy at run time.
Tensor transposed(NodeContext& ctx, int i, Tensor x) {
  GraphBuilder& g = ctx.builder();
  if (std::optional<HostTensor> c = ctx.constant(i); c && c->rank() == 2) {
    const int64_t rows = c->shape()[0], cols = c->shape()[1];
    ConstantAttrs attrs{c->dtype(), {cols, rows}, {}};
    attrs.values.resize(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        attrs.values[static_cast<size_t>(k * rows + r)] = c->get_f64(r * cols + k);
    // Integers beyond 2^53 are not exact in a double: those keep the op.
    bool exact = is_float(c->dtype());
    if (!exact) {
      exact = true;
      for (int64_t e = 0; e < c->numel() && exact; ++e)
        exact = c->get_i64(e) == static_cast<int64_t>(c->get_f64(e)) &&
                std::abs(c->get_f64(e)) <= 9007199254740992.0;
    }
    if (exact) return g.constant(std::move(attrs));
  }
  return g.transpose(x, {1, 0});
}

// Gemm: Y = alpha * A' B' + beta * C, A' = transA ? A^T : A (likewise B),
// C (optional since opset 11) broadcast unidirectionally to (M, N).
void convert_gemm(NodeContext& ctx) {
  GraphBuilder& g = ctx.builder();
  Tensor a = ctx.input(0), b = ctx.input(1);
  check_operands(ctx, a, b);
  if (a.rank() != 2 || b.rank() != 2)
    ctx.fail(fmt::format("Gemm needs rank-2 A and B, got {} and {}", a.type().to_string(),
                         b.type().to_string()));
  if (ctx.attr_int("transA", 0) != 0) a = transposed(ctx, 0, a);
  if (ctx.attr_int("transB", 0) != 0) b = transposed(ctx, 1, b);
  Tensor y = matmul_nd(ctx, a, b);
  const double alpha = ctx.attr_float("alpha", 1.0f), beta = ctx.attr_float("beta", 1.0f);
  if (alpha != 1) y = g.mul(y, g.scalar(alpha, y.dtype()));
  if (ctx.has_input(2)) {
    Tensor c = ctx.input(2);
    if (c.dtype() != y.dtype())
      ctx.fail(fmt::format("C has dtype {}, A and B have {}", dtype_name(c.dtype()),
                           dtype_name(y.dtype())));
    if (beta != 1) c = g.mul(c, g.scalar(beta, c.dtype()));
    const Shape mn = y.shape();
    y = g.add(y, c);
    if (y.shape() != mn)
      ctx.fail(fmt::format("C {} does not broadcast to the product's shape {}",
                           c.type().to_string(), TensorType{y.dtype(), mn}.to_string()));
  }
  ctx.set_output(0, y);
}

// Conv: x [N, C, D1..Dk], W [M, C/group, K1..Kk], optional B [M]; explicit
// pads or auto_pad; 1 to 3 spatial axes (oneDNN's limit).
void convert_conv(NodeContext& ctx) {
  GraphBuilder& g = ctx.builder();
  Tensor x = ctx.input(0), w = ctx.input(1);
  std::vector<Tensor> inputs{x, w};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  for (const Tensor& t : inputs)
    if (t.dtype() != x.dtype() || !is_float(t.dtype()))
      ctx.fail(fmt::format(
          "X, W and B must have one float dtype, got {}, {}{}", dtype_name(x.dtype()),
          dtype_name(w.dtype()),
          inputs.size() == 3 ? ", " + std::string(dtype_name(inputs[2].dtype())) : std::string()));
  if (x.rank() < 3) ctx.fail(fmt::format("X has rank {}; Conv needs [N, C, D1, ...]", x.rank()));
  if (w.rank() != x.rank())
    ctx.fail(fmt::format("W has rank {} for X of rank {}", w.rank(), x.rank()));
  const int k = x.rank() - 2;
  if (k > 3) ctx.unsupported(fmt::format("Conv over {} spatial axes (at most 3)", k));
  const auto sk = static_cast<size_t>(k);
  ConvAttrs attrs;
  attrs.strides = ctx.attr_ints("strides", std::vector<int64_t>(sk, 1));
  attrs.dilations = ctx.attr_ints("dilations", std::vector<int64_t>(sk, 1));
  attrs.group = ctx.attr_int("group", 1);
  if (attrs.strides.size() != sk || attrs.dilations.size() != sk)
    ctx.fail(fmt::format("strides and dilations need {} entries, got {} and {}", k,
                         attrs.strides.size(), attrs.dilations.size()));
  std::vector<int64_t> kernel(sk, -1);  // -1: not known at import
  for (size_t i = 0; i < sk; ++i)
    if (std::optional<int64_t> d = w.shape()[i + 2].as_const()) kernel[i] = *d;
  if (ctx.has_attr("kernel_shape")) {
    const std::vector<int64_t> shape = ctx.attr_ints("kernel_shape");
    if (shape.size() != sk)
      ctx.fail(fmt::format("kernel_shape has {} entries for {} spatial axes", shape.size(), k));
    for (size_t i = 0; i < sk; ++i) {
      if (kernel[i] >= 0 && kernel[i] != shape[i])
        ctx.fail(fmt::format("kernel_shape [{}] differs from W's spatial dims {}",
                             fmt::join(shape, ", "), w.type().to_string()));
      kernel[i] = shape[i];
    }
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    attrs.pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * sk, 0));
  } else if (auto_pad == "VALID" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    attrs.pads.assign(2 * sk, 0);
    for (size_t i = 0; i < sk && auto_pad != "VALID"; ++i) {
      if (kernel[i] < 0)
        ctx.unsupported(
            fmt::format("auto_pad {} with W's spatial dim {} unknown at import", auto_pad, i));
      if (attrs.strides[i] < 1 || attrs.dilations[i] < 1)
        ctx.fail(fmt::format("strides and dilations must be >= 1"));
      std::tie(attrs.pads[i], attrs.pads[sk + i]) =
          auto_pads(ctx, auto_pad, static_cast<int>(i), x.shape()[i + 2], kernel[i],
                    attrs.strides[i], attrs.dilations[i]);
    }
  } else {
    ctx.fail(
        fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
  }
  ctx.set_output(0, g.op(OpKind::Conv, inputs, attrs));
}

}  // namespace

void register_library_ops(ConverterTable& table) {
  table["Conv"] = convert_conv;
  table["MatMul"] = convert_matmul;
  table["Gemm"] = convert_gemm;
}

}  // namespace autofuse::frontend::onnx_import
