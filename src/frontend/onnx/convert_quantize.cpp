// Linear quantization: QuantizeLinear and DequantizeLinear (opsets 10..22:
// per-tensor, per-axis and blocked scales; 8-, 16- and 4-bit integers and the
// float8 types), DynamicQuantizeLinear and QLinearMatMul, decomposed into primitive ops so
// that a model's Q/DQ pairs fuse with the ops between them (the quantized
// tensors are what moves through memory). Semantics follow the operator docs
// and the ONNX reference implementation; where the doc is silent they are
// stated at the converter.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

/// The integer types QuantizeLinear produces (it saturates to their
/// limits).
bool is_quantized_integer(DType dt) {
  return dt == DType::i8 || dt == DType::u8 || dt == DType::i16 || dt == DType::u16 || is_int4(dt);
}

/// Whether input i is a constant whose elements are all zero.
bool known_zero(const NodeContext& ctx, int i) {
  const std::optional<HostTensor> c = ctx.constant(i);
  if (!c) return false;
  for (int64_t k = 0; k < c->numel(); ++k)
    if (c->get_f64(k) != 0) return false;
  return true;
}

/// Scale or zero point input `i` of a node (de)quantizing `x`, as a tensor
/// that broadcasts against x: a scalar for per-tensor quantization (rank 0,
/// or one element, as the reference reads it); [1, .., D, .., 1] for
/// per-axis (1-D, D = x's size along `axis`); for blocked quantization
/// (`block_size` > 0, opset 21) the parameter has x's shape but
/// ceil(D / block_size) along `axis`, and each element is repeated
/// block_size times along it: reshape, broadcast and reshape, then the last
/// block's unused tail sliced off. All of them are views, so a fused kernel
/// reads the parameter in place.
Tensor quant_param(NodeContext& ctx, int i, const Tensor& x, std::string_view what) {
  GraphBuilder& b = ctx.builder();
  Tensor p = ctx.input(i);
  const Shape ps = p.shape();
  const int64_t block = ctx.opset() >= 21 ? ctx.attr_int("block_size", 0) : 0;
  if (block < 0) ctx.fail(fmt::format("attribute 'block_size' is {}; it must be >= 0", block));
  if (block == 0) {
    if (p.rank() == 0) return p;
    if (p.rank() != 1)
      ctx.fail(fmt::format("{} has shape {}; without block_size it is a scalar or 1-D (per-axis)",
                           what, p.type().to_string()));
    if (ps[0] == sym::Expr(1)) return b.reshape(p, {});
    const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 1), x.rank(), "attribute 'axis'");
    if (sym::proven_ne(ps[0], x.shape()[static_cast<size_t>(axis)]))
      ctx.fail(fmt::format("{} has {} elements; per-axis quantization along axis {} needs {}", what,
                           ps[0].to_string(), axis,
                           x.shape()[static_cast<size_t>(axis)].to_string()));
    Shape s(static_cast<size_t>(x.rank()), sym::Expr(1));
    s[static_cast<size_t>(axis)] = ps[0];
    return b.reshape(p, s);
  }
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 1), x.rank(), "attribute 'axis'");
  const auto a = static_cast<size_t>(axis);
  if (p.rank() != x.rank())
    ctx.fail(fmt::format("{} has shape {} and X {}; blocked quantization needs the same rank", what,
                         p.type().to_string(), x.type().to_string()));
  for (size_t d = 0; d < ps.size(); ++d)
    if (d != a && !(ps[d] == x.shape()[d]))
      ctx.fail(
          fmt::format("{} has shape {} and X {}; blocked quantization along axis {} needs "
                      "the same size in every other dimension",
                      what, p.type().to_string(), x.type().to_string(), axis));
  const sym::Expr& blocks = ps[a];
  const sym::Expr len = x.shape()[a];
  // blocks = ceil(len / block): the blocks cover the axis, the last one not
  // empty.
  const sym::Expr tail = blocks * sym::Expr(block) - len;
  const std::optional<int64_t> unused = tail.as_const();
  if (!unused || *unused < 0 || *unused >= block)
    ctx.fail(fmt::format(
        "{} has {} blocks along axis {} of size {}; block_size {} needs "
        "ceil({} / {}) of them",
        what, blocks.to_string(), axis, len.to_string(), block, len.to_string(), block));
  Shape split = ps;
  split.insert(split.begin() + axis + 1, sym::Expr(1));
  Tensor r = b.reshape(p, split);
  split[a + 1] = sym::Expr(block);
  r = b.broadcast_to(r, split);
  Shape joined = ps;
  joined[a] = blocks * sym::Expr(block);
  r = b.reshape(r, joined);
  if (*unused == 0) return r;
  return b.slice(r, SliceAttrs{{axis}, {0}, {-*unused}, {1}});
}

// QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point) for
// integer types; for float8 y = cast(x / y_scale + y_zero_point) with the
// `saturate` attribute's overflow rule (a zero point known to be zero is not
// added, so -0 stays -0 as in the reference). The division runs in f32
// (f16/bf16 x widened, as every mixed-precision kernel computes) or in f64
// for int32 x (the reference divides int32 by int32 in double). The output
// type is y_zero_point's, else attribute output_dtype's (opset 21), else
// uint8.
void convert_quantize_linear(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  const DType xdt = x.dtype();
  if (xdt != DType::f32 && xdt != DType::f16 && xdt != DType::bf16 && xdt != DType::i32)
    ctx.fail(
        fmt::format("X has dtype {}; QuantizeLinear reads f32, f16, bf16 or i32", dtype_name(xdt)));
  if (ctx.input_dtype(1) != xdt)
    ctx.fail(fmt::format("y_scale has dtype {} and X {}; they must match",
                         dtype_name(ctx.input_dtype(1)), dtype_name(xdt)));
  std::optional<DType> qdt;
  if (ctx.has_input(2)) qdt = ctx.input_dtype(2);
  if (ctx.opset() >= 21 && ctx.attr_int("output_dtype", 0) != 0) {
    const DType od = dtype_of_onnx(ctx, ctx.attr_int("output_dtype"), "attribute 'output_dtype'");
    if (qdt && *qdt != od)
      ctx.fail(fmt::format("attribute 'output_dtype' is {} but y_zero_point has dtype {}",
                           dtype_name(od), dtype_name(*qdt)));
    qdt = od;
  }
  const DType out = qdt.value_or(DType::u8);
  if (!is_quantized_integer(out) && !is_float8(out))
    ctx.fail(
        fmt::format("quantizing to {} is not defined (int8, uint8, int16, uint16, int4, "
                    "uint4 or a float8 type)",
                    dtype_name(out)));
  const DType cdt = xdt == DType::i32 ? DType::f64 : DType::f32;
  Tensor q = b.div(cast_if(b, x, cdt), cast_if(b, quant_param(ctx, 1, x, "y_scale"), cdt));
  std::optional<Tensor> zero_point;
  if (ctx.has_input(2) && !known_zero(ctx, 2))
    zero_point = cast_if(b, quant_param(ctx, 2, x, "y_zero_point"), cdt);
  Tensor y;
  if (is_float8(out)) {
    if (zero_point) q = b.add(q, *zero_point);
    y = b.cast(q, CastAttrs{out, ctx.attr_int("saturate", 1) != 0});
  } else {
    y = round_and_saturate(b, q, zero_point, out);
  }
  ctx.set_output(0, y);
}

// DequantizeLinear: y = (x - x_zero_point) * x_scale in x_scale's type.
// The difference is exact (f32 for 4- to 16-bit and float8 x, f64 for int32
// x), then one product rounded to x_scale's type (f16/bf16 via f32, as the
// reference computes). A float8 zero point is subtracted as the formula says
// (the reference accepts only zero, for which x - 0 is x; -0 - 0 is -0).
void convert_dequantize_linear(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  const DType xdt = x.dtype();
  if (!is_quantized_integer(xdt) && !is_float8(xdt) && xdt != DType::i32)
    ctx.fail(
        fmt::format("x has dtype {}; DequantizeLinear reads int8, uint8, int16, uint16, "
                    "int32, int4, uint4 or a float8 type",
                    dtype_name(xdt)));
  const DType sdt = ctx.input_dtype(1);
  if (sdt != DType::f32 && sdt != DType::f16 && sdt != DType::bf16)
    ctx.fail(fmt::format("x_scale has dtype {}; it must be f32, f16 or bf16", dtype_name(sdt)));
  if (ctx.has_input(2) && ctx.input_dtype(2) != xdt)
    ctx.fail(fmt::format("x_zero_point has dtype {} and x {}; they must match",
                         dtype_name(ctx.input_dtype(2)), dtype_name(xdt)));
  const DType cdt = xdt == DType::i32 ? DType::f64 : DType::f32;
  Tensor dx = b.cast(x, cdt);
  if (ctx.has_input(2) && !known_zero(ctx, 2))
    dx = b.sub(dx, b.cast(quant_param(ctx, 2, x, "x_zero_point"), cdt));
  Tensor y = b.mul(dx, cast_if(b, quant_param(ctx, 1, x, "x_scale"), cdt));
  ctx.set_output(0, cast_if(b, y, sdt));
}

// DynamicQuantizeLinear (uint8): the range [min(0, min x), max(0, max x)]
// maps onto [0, 255]: y_scale = (max - min) / 255 (1 / 255 when both are
// zero), y_zero_point = round(saturate(0 - min / y_scale)), y =
// saturate(round(x / y_scale) + y_zero_point), all in f32 as the reference
// computes. Two reductions, then the elementwise quantization.
void convert_dynamic_quantize_linear(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  if (x.dtype() != DType::f32)
    ctx.fail(fmt::format("x has dtype {}; DynamicQuantizeLinear reads f32", dtype_name(x.dtype())));
  Tensor zero = b.scalar(0, DType::f32);
  Tensor hi = b.binary(OpKind::Max, b.reduce_max(x, {}, false), zero);
  Tensor lo = b.binary(OpKind::Min, b.reduce(OpKind::ReduceMin, x, {}, false), zero);
  Tensor range = b.where(b.binary(OpKind::Eq, hi, lo), b.scalar(1, DType::f32), b.sub(hi, lo));
  Tensor scale = b.div(range, b.scalar(255, DType::f32));
  Tensor zp = b.sub(zero, b.div(lo, scale));
  zp = b.binary(OpKind::Min, b.binary(OpKind::Max, zp, zero), b.scalar(255, DType::f32));
  zp = b.unary(OpKind::Round, zp);
  ctx.set_output(0, round_and_saturate(b, b.div(x, scale), zp, DType::u8));
  if (ctx.has_output(1)) ctx.set_output(1, scale);
  if (ctx.has_output(2)) ctx.set_output(2, b.cast(zp, DType::u8));
}

// QLinearMatMul: y = saturate(round_half_even((a - a_zp) @ (b - b_zp) *
// (a_scale * b_scale / y_scale) + y_zp)), 8-bit integers; scales and zero
// points per tensor, or per row of a / per column of b. The integer product
// is an f64 matmul (exact while the sums stay below 2^53); the scale
// product in the scales' float type as the reference computes it, the rest
// in f64. The result saturates, as the doc and ONNX Runtime do (the ONNX
// reference wraps: onnx/onnx#6169).
void convert_qlinear_matmul(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  auto operand = [&](int i, int scale_i, int zp_i, bool per_row) {
    Tensor x = ctx.input(i), scale = ctx.input(scale_i), zp = ctx.input(zp_i);
    if ((x.dtype() != DType::u8 && x.dtype() != DType::i8) || x.rank() < 2)
      ctx.unsupported(
          fmt::format("QLinearMatMul of {} (int8/uint8 of rank >= 2 only)", x.type().to_string()));
    if (zp.dtype() != x.dtype() || zp.rank() > 1 || scale.dtype() != ctx.input_dtype(6) ||
        !is_float(scale.dtype()) || scale.rank() > 1)
      ctx.fail(fmt::format(
          "scale {} and zero point {} must be scalars or vectors of y_scale's float type and {}",
          scale.type().to_string(), zp.type().to_string(), dtype_name(x.dtype())));
    auto placed = [&](Tensor v) {  // one per row of a: [M] -> [M, 1]
      return per_row && v.rank() == 1 ? b.reshape(v, {v.shape()[0], sym::Expr(1)}) : v;
    };
    return std::pair{b.sub(b.cast(x, DType::f64), placed(b.cast(zp, DType::f64))), placed(scale)};
  };
  const auto [a, a_scale] = operand(0, 1, 2, /*per_row=*/true);
  const auto [bm, b_scale] = operand(3, 4, 5, /*per_row=*/false);
  Tensor y_scale = ctx.input(6), y_zp = ctx.input(7);
  const DType out = y_zp.dtype();
  if ((out != DType::u8 && out != DType::i8) || y_zp.rank() > 1)
    ctx.fail(fmt::format("y_zero_point {} must be int8 or uint8", y_zp.type().to_string()));
  Tensor scale = b.cast(b.div(b.mul(a_scale, b_scale), y_scale), DType::f64);
  ctx.set_output(
      0, round_and_saturate(b, b.mul(b.matmul(a, bm), scale), b.cast(y_zp, DType::f64), out));
}

}  // namespace

void register_quantize_ops(ConverterTable& table) {
  table["QLinearMatMul"] = convert_qlinear_matmul;
  table["QuantizeLinear"] = convert_quantize_linear;
  table["DequantizeLinear"] = convert_dequantize_linear;
  table["DynamicQuantizeLinear"] = convert_dynamic_quantize_linear;
}

}  // namespace autofuse::frontend::onnx_import
