// Helpers shared by the importer core's converter files.
#include "frontend/onnx/converter_util.h"

#include <algorithm>

#include <fmt/format.h>

#include "frontend/io/tensor_proto.h"

namespace autofuse::frontend::onnx_import {

std::string output_name(NodeContext& ctx, int i) {
  return ctx.fresh_name(ctx.node().output(i));
}

std::vector<sym::Expr> require_known(NodeContext& ctx, int i, std::string_view what) {
  if (!ctx.has_input(i)) ctx.fail(fmt::format("the {} (input {}) is required", what, i));
  std::optional<std::vector<sym::Expr>> known = ctx.known_ints(i);
  if (!known)
    ctx.fail(
        fmt::format("the {} (input {}, '{}') must be known at import: a constant or a "
                    "shape computation of rank <= 1",
                    what, i, ctx.node().input(i)));
  return *known;
}

std::vector<int64_t> require_const_ints(NodeContext& ctx, int i, std::string_view what) {
  std::vector<int64_t> out;
  for (const sym::Expr& e : require_known(ctx, i, what)) {
    const std::optional<int64_t> c = e.as_const();
    if (!c)
      ctx.fail(fmt::format("the {} (input {}) must be constant, but holds the symbolic value {}",
                           what, i, e.to_string()));
    out.push_back(*c);
  }
  return out;
}

std::optional<std::vector<int64_t>> axes_input_or_attr(NodeContext& ctx, int input,
                                                       std::string_view attr) {
  if (ctx.has_input(input)) return require_const_ints(ctx, input, "axes");
  if (ctx.has_attr(attr)) return ctx.attr_ints(attr);
  return std::nullopt;
}

int64_t normalize_axis(const NodeContext& ctx, int64_t axis, int64_t rank, std::string_view what) {
  if (axis < -rank || axis >= rank)
    ctx.fail(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return axis < 0 ? axis + rank : axis;
}

DType dtype_of_onnx(const NodeContext& ctx, int64_t onnx_type, std::string_view what) {
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int32_t>(onnx_type));
  if (!dtype)
    ctx.unsupported(fmt::format("{}: ONNX dtype {} is not supported", what,
                                onnx_type_name(static_cast<int32_t>(onnx_type))));
  return *dtype;
}

Tensor float_input(NodeContext& ctx, int i) {
  const DType dt = ctx.input_dtype(i);
  if (!is_float(dt))
    ctx.fail(fmt::format("input {} has dtype {}; this op needs a float tensor", i, dtype_name(dt)));
  return ctx.input(i);
}

Tensor numeric_input(NodeContext& ctx, int i) {
  const DType dt = ctx.input_dtype(i);
  if (!is_numeric(dt))
    ctx.fail(
        fmt::format("input {} has dtype {}; this op needs a numeric tensor", i, dtype_name(dt)));
  return ctx.input(i);
}

Tensor cast_if(GraphBuilder& b, Tensor x, DType to) {
  return x.dtype() == to ? x : b.cast(x, to);
}

DType float_compute_dtype(DType dt) {
  return dt == DType::f64 ? DType::f64 : DType::f32;
}

DType widened_dtype(DType dt) {
  return dt == DType::f16 || dt == DType::bf16 ? DType::f32 : dt;
}

std::optional<KnownOperands> known_operands(NodeContext& ctx) {
  KnownOperands out;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return std::nullopt;
    std::optional<std::vector<sym::Expr>> known = ctx.known_ints(i);
    if (!known) return std::nullopt;
    if (!ctx.input_shape(i).empty()) {
      out.scalar = false;
      if (known->size() != 1) {
        if (out.length != 1 && out.length != known->size()) return std::nullopt;
        out.length = known->size();
      }
    }
    out.values.push_back(std::move(*known));
  }
  // A rank-1 operand of length 0 broadcasts everything to length 0.
  for (const auto& v : out.values)
    if (v.empty()) out.length = 0;
  return out;
}

Tensor size_tensor(GraphBuilder& b, const sym::Expr& e, DType dtype) {
  if (std::optional<int64_t> c = e.as_const()) return b.scalar(static_cast<double>(*c), dtype);
  AF_CHECK(sym::value_range(e).lo >= 0, "size_tensor of {}, which may be negative", e.to_string());
  // The last element of iota([e + 1]): an index expression wherever it is
  // fused (a sum of e ones was a reduction over e per element of every
  // consumer: GatherElements on [N, C, H, W] summed C*H*W ones per output).
  return b.reshape(
      b.slice(b.iota(dtype, {e + sym::Expr(1)}, 0), SliceAttrs{{0}, {-1}, {kSliceEnd}, {1}}),
      Shape{});
}

bool proven_non_negative(const sym::Expr& e) {
  return sym::value_range(e).lo >= 0;
}

std::pair<int64_t, int64_t> auto_pads(NodeContext& ctx, const std::string& mode, int i,
                                      const sym::Expr& in, int64_t kernel, int64_t stride,
                                      int64_t dilation) {
  if (mode == "VALID") return {0, 0};
  int64_t total = dilation * (kernel - 1);
  if (stride != 1) {
    const std::optional<int64_t> size = in.as_const();
    if (!size)
      ctx.unsupported(
          fmt::format("auto_pad {} with stride {} on spatial axis {} of symbolic size "
                      "{} (the pads depend on the size)",
                      mode, stride, i, in.to_string()));
    const int64_t out = (*size + stride - 1) / stride;
    total = std::max<int64_t>(0, (out - 1) * stride + dilation * (kernel - 1) + 1 - *size);
  }
  const int64_t small = total / 2, large = total - small;
  return mode == "SAME_UPPER" ? std::pair{small, large} : std::pair{large, small};
}

Tensor round_and_saturate(GraphBuilder& b, Tensor q, std::optional<Tensor> zero_point, DType qdt) {
  const DType cdt = q.dtype();
  q = b.unary(OpKind::Round, q);
  if (zero_point) q = b.add(q, *zero_point);
  const auto [lo, hi] = integer_limits(qdt);
  Tensor low = b.scalar(static_cast<double>(lo), cdt);
  q = b.where(b.binary(OpKind::Ge, q, low), q, low);
  q = b.binary(OpKind::Min, q, b.scalar(static_cast<double>(hi), cdt));
  return b.cast(q, qdt);
}

Tensor flat_index(GraphBuilder& b, const std::vector<Tensor>& coords, const Shape& dims) {
  AF_CHECK(!coords.empty() && coords.size() == dims.size(), "flat_index: {} coordinates, rank {}",
           coords.size(), dims.size());
  sym::Expr stride(1);
  std::optional<Tensor> sum;
  for (size_t d = dims.size(); d-- > 0;) {
    Tensor term = coords[d];
    if (stride != sym::Expr(1)) term = b.mul(term, size_tensor(b, stride, DType::i64));
    sum = sum ? b.add(*sum, term) : term;
    stride = stride * dims[d];
  }
  return *sum;
}

Tensor gather_flat(GraphBuilder& b, Tensor data, size_t lead, Tensor flat, Tensor valid) {
  Shape dims = data.shape();
  const sym::Expr total = numel(Shape(dims.begin(), dims.begin() + static_cast<long>(lead)));
  Shape flat_shape = {total};
  flat_shape.insert(flat_shape.end(), dims.begin() + static_cast<long>(lead), dims.end());
  Tensor index = b.where(valid, flat, size_tensor(b, total, DType::i64));
  return b.gather(b.reshape(data, flat_shape), index, 0);
}

}  // namespace autofuse::frontend::onnx_import
