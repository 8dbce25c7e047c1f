// MatMul and Gemm: float operands become the graph's matmul op (a library
// call through oneDNN at run time, and a fusion boundary); the elementwise
// parts of Gemm (alpha, beta, C) are primitives that fuse after it. Integer
// operands, which oneDNN's f32 path cannot take exactly, are decomposed into
// a broadcast multiply and a sum over K (one fused reduction kernel).
#include <cmath>

#include <fmt/format.h>

#include "frontend/onnx/converter.h"

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

}  // namespace

void register_library_ops(ConverterTable& table) {
  table["MatMul"] = convert_matmul;
  table["Gemm"] = convert_gemm;
}

}  // namespace autofuse::frontend::onnx_import
