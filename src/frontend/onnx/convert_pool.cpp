// MaxPool, AveragePool, LpPool and GlobalLpPool as primitive ops, so a pool
// fuses with its neighbours. A window reduction (max, or a sum) is
// separable: it runs axis by axis, each axis padded (a concat with
// constant blocks: -inf or the integer minimum for max, 0 for sums) and
// reduced over its K taps, tap t being the strided slice [t * d, P - d * (K
// - 1 - t)) of the padded length P, which has exactly the output's floor((P
// - d * (K - 1) - 1) / s) + 1 elements for symbolic P too. So a K1 x K2
// pool costs K1 + K2 slices, not K1 * K2. AveragePool's divisor is the
// kernel's size with count_include_pad, else the product of per-axis counts
// of the taps that land on data, each a 1-D window sum of a 0/1 mask.
// ceil_mode pads the end further where the last window would run past the
// padded input (counted with count_include_pad, as the ONNX reference and
// its node tests do); a window that would start in the end padding is
// dropped, as opset 22 specifies (earlier opsets left that case open: an
// UnsupportedError there). MaxPool's Indices carry (value, is data, index)
// through the same taps (max_pool_indices).
#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

using sym::Expr;

enum class PoolKind { Max, Average, Lp };

/// The window of one spatial axis: kernel, stride, dilation and pads (the
/// end's `extra` units come from ceil_mode and are never counted).
struct AxisWindow {
  int64_t kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, extra = 0;
};

/// The windows of every spatial axis from the node's attributes.
std::vector<AxisWindow> pool_windows(NodeContext& ctx, const Tensor& x) {
  const auto k = static_cast<size_t>(x.rank() - 2);
  const std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = ctx.attr_ints("strides", std::vector<int64_t>(k, 1));
  const std::vector<int64_t> dilations = ctx.attr_ints("dilations", std::vector<int64_t>(k, 1));
  if (kernel.size() != k || strides.size() != k || dilations.size() != k)
    ctx.fail(
        fmt::format("kernel_shape, strides and dilations need {} entries (one per spatial "
                    "axis), got {}, {} and {}",
                    k, kernel.size(), strides.size(), dilations.size()));
  std::vector<AxisWindow> w(k);
  for (size_t i = 0; i < k; ++i) {
    w[i] = {kernel[i], strides[i], dilations[i]};
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1)
      ctx.fail(fmt::format("kernel_shape, strides and dilations must be >= 1 (axis {}: {}, {}, {})",
                           i, kernel[i], strides[i], dilations[i]));
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
    if (pads.size() != 2 * k)
      ctx.fail(fmt::format("pads has {} entries, expected {}", pads.size(), 2 * k));
    for (size_t i = 0; i < k; ++i) {
      if (pads[i] < 0 || pads[k + i] < 0)
        ctx.fail(fmt::format("pads must be >= 0, got [{}]", fmt::join(pads, ", ")));
      w[i].pad_begin = pads[i];
      w[i].pad_end = pads[k + i];
    }
  } else if (auto_pad == "VALID" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < k; ++i)
      std::tie(w[i].pad_begin, w[i].pad_end) =
          auto_pads(ctx, auto_pad, static_cast<int>(i), x.shape()[i + 2], w[i].kernel, w[i].stride,
                    w[i].dilation);
  } else {
    ctx.fail(
        fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
  }
  for (size_t i = 0; i < k; ++i) {  // a window must fit (a symbolic size: the slices' guards)
    const std::optional<int64_t> size = x.shape()[i + 2].as_const();
    const int64_t span = w[i].dilation * (w[i].kernel - 1) + 1;
    if (size && *size + w[i].pad_begin + w[i].pad_end < span)
      ctx.fail(
          fmt::format("spatial axis {}: the padded input ({}) is smaller than the dilated "
                      "kernel ({})",
                      i, *size + w[i].pad_begin + w[i].pad_end, span));
  }
  if (ctx.attr_int("ceil_mode", 0) == 0) return w;
  for (size_t i = 0; i < k; ++i) {
    AxisWindow& a = w[i];
    const int64_t span = a.dilation * (a.kernel - 1) + 1;
    if (a.stride == 1) continue;  // ceil and floor agree
    const std::optional<int64_t> size = x.shape()[i + 2].as_const();
    if (!size)
      ctx.unsupported(fmt::format("ceil_mode with stride {} on spatial axis {} of symbolic size {}",
                                  a.stride, i, x.shape()[i + 2].to_string()));
    const int64_t padded = *size + a.pad_begin + a.pad_end;
    int64_t out = (padded - span + a.stride - 1) / a.stride + 1;
    if ((out - 1) * a.stride >= *size + a.pad_begin) {
      if (ctx.opset() < 22)
        ctx.unsupported(fmt::format(
            "ceil_mode where the last window of spatial axis {} starts in the end padding (opset "
            "22 drops such a window; opset {} leaves it undefined)",
            i, ctx.opset()));
      --out;
    }
    a.extra = std::max<int64_t>(0, (out - 1) * a.stride + span - padded);
  }
  return w;
}

/// `x` with `before` and `after` copies of the scalar `value` around it
/// along `axis`.
Tensor pad_axis(GraphBuilder& b, const Tensor& x, int64_t axis, int64_t before, int64_t after,
                const Tensor& value) {
  if (before == 0 && after == 0) return x;
  auto block = [&](int64_t n) {
    Shape shape = x.shape();
    shape[static_cast<size_t>(axis)] = Expr(n);
    return b.broadcast_to(value, shape);
  };
  std::vector<Tensor> parts;
  if (before > 0) parts.push_back(block(before));
  parts.push_back(x);
  if (after > 0) parts.push_back(block(after));
  return b.concat(parts, axis);
}

/// The K taps of the window along `axis` of the padded `x`, combined by
/// `combine` (max or add).
Tensor reduce_taps(GraphBuilder& b, const Tensor& x, int64_t axis, const AxisWindow& a,
                   OpKind combine) {
  std::optional<Tensor> acc;
  for (int64_t t = 0; t < a.kernel; ++t) {
    const int64_t back = a.dilation * (a.kernel - 1 - t);
    Tensor tap = b.slice(
        x, SliceAttrs{{axis}, {t * a.dilation}, {back == 0 ? kSliceEnd : -back}, {a.stride}});
    acc = acc ? b.binary(combine, *acc, tap) : tap;
  }
  return *acc;
}

/// The window reduction of `x` over every spatial axis: padded by `pad`
/// (a scalar of x's dtype), taps combined by `combine`.
Tensor pool_axes(GraphBuilder& b, Tensor x, const std::vector<AxisWindow>& windows,
                 const Tensor& pad, OpKind combine) {
  for (size_t i = 0; i < windows.size(); ++i) {
    const AxisWindow& a = windows[i];
    const auto axis = static_cast<int64_t>(i + 2);
    x = pad_axis(b, x, axis, a.pad_begin, a.pad_end + a.extra, pad);
    x = reduce_taps(b, x, axis, a, combine);
  }
  return x;
}

/// The number of data positions in each window (count_include_pad = 0):
/// the product over axes of a 1-D window sum of the axis's 0/1 mask [pads,
/// data, pads and ceil extras], reshaped to broadcast along its axis.
Tensor data_counts(GraphBuilder& b, const Tensor& x, const std::vector<AxisWindow>& windows,
                   DType dt) {
  const Tensor one = b.scalar(1, dt), zero = b.scalar(0, dt);
  std::optional<Tensor> product;
  for (size_t i = 0; i < windows.size(); ++i) {
    const AxisWindow& a = windows[i];
    Tensor mask = b.broadcast_to(one, {x.shape()[i + 2]});
    mask = pad_axis(b, mask, 0, a.pad_begin, a.pad_end + a.extra, zero);
    Tensor count = reduce_taps(b, mask, 0, a, OpKind::Add);
    Shape shape(static_cast<size_t>(x.rank()), Expr(1));
    shape[i + 2] = count.shape()[0];
    count = b.reshape(count, shape);
    product = product ? b.mul(*product, count) : count;
  }
  return *product;
}

Tensor pool_input(NodeContext& ctx, bool integers_too) {
  Tensor x = ctx.input(0);
  const bool ok =
      is_float(x.dtype()) || (integers_too && (x.dtype() == DType::i8 || x.dtype() == DType::u8));
  if (!ok)
    ctx.fail(fmt::format("X has dtype {}; a float{} is needed", dtype_name(x.dtype()),
                         integers_too ? " (or int8/uint8)" : ""));
  if (x.rank() < 3) ctx.fail(fmt::format("X has rank {}; a pool needs [N, C, D1, ...]", x.rank()));
  return x;
}

/// MaxPool's Indices: the flat index into X (storage_order 0: row-major
/// over [N, C, D1, ...]; 1: the spatial dims column-major, 2-D only) of each
/// window's first maximum in row-major window order, as the reference scans
/// (a later element wins only when strictly greater; padding never wins).
/// Separable like the values: per axis, last to first, the taps carry
/// (value, is data, index), the first strictly greater data tap taking over.
Tensor max_pool_indices(NodeContext& ctx, const Tensor& x, const std::vector<AxisWindow>& windows,
                        const Tensor& lowest) {
  GraphBuilder& b = ctx.builder();
  const Shape xs = x.shape();  // a copy: new nodes move the graph's storage
  const int64_t order = ctx.attr_int("storage_order", 0);
  if (order != 0 && order != 1)
    ctx.fail(fmt::format("storage_order {} is not 0 (row major) or 1 (column major)", order));
  if (order == 1 && xs.size() != 4)
    ctx.unsupported(fmt::format("storage_order 1 for {} spatial dims (2 only)", xs.size() - 2));
  std::vector<Tensor> coords;
  for (size_t d = 0; d < xs.size(); ++d)
    coords.push_back(b.iota(DType::i64, xs, static_cast<int64_t>(d)));
  Shape dims = xs;
  if (order == 1) {  // ((n * C + c) * W + w) * H + h
    std::swap(coords[2], coords[3]);
    std::swap(dims[2], dims[3]);
  }
  Tensor index = flat_index(b, coords, dims);
  Tensor value = x;
  Tensor data = b.broadcast_to(b.scalar(1, DType::boolean), xs);
  const Tensor no = b.scalar(0, DType::boolean), zero = b.scalar(0, DType::i64);
  // The last axis first: within each row the first maximum, then across
  // rows the first row holding the maximum (row-major first; the other
  // order would find the column-major first).
  for (size_t i = windows.size(); i-- > 0;) {
    const AxisWindow& a = windows[i];
    const auto axis = static_cast<int64_t>(i + 2);
    const auto pad = [&](const Tensor& t, const Tensor& v) {
      return pad_axis(b, t, axis, a.pad_begin, a.pad_end + a.extra, v);
    };
    value = pad(value, lowest);
    data = pad(data, no);
    index = pad(index, zero);
    std::optional<Tensor> best_value, best_data, best_index;
    for (int64_t t = 0; t < a.kernel; ++t) {
      const int64_t back = a.dilation * (a.kernel - 1 - t);
      const SliceAttrs tap{{axis}, {t * a.dilation}, {back == 0 ? kSliceEnd : -back}, {a.stride}};
      Tensor v = b.slice(value, tap), m = b.slice(data, tap), idx = b.slice(index, tap);
      if (!best_value) {
        best_value = v, best_data = m, best_index = idx;
        continue;
      }
      Tensor take = b.binary(OpKind::And, m,
                             b.binary(OpKind::Or, b.unary(OpKind::Not, *best_data),
                                      b.binary(OpKind::Gt, v, *best_value)));
      best_value = b.where(take, v, *best_value);
      best_index = b.where(take, idx, *best_index);
      best_data = b.binary(OpKind::Or, *best_data, m);
    }
    value = *best_value, data = *best_data, index = *best_index;
  }
  return index;
}

void convert_max_pool(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = pool_input(ctx, /*integers_too=*/true);
  const std::vector<AxisWindow> windows = pool_windows(ctx, x);
  const double lowest = is_float(x.dtype()) ? -std::numeric_limits<double>::infinity()
                                            : static_cast<double>(integer_limits(x.dtype()).first);
  const Tensor pad = b.scalar(lowest, x.dtype());
  ctx.set_output(0, pool_axes(b, x, windows, pad, OpKind::Max));
  if (ctx.num_outputs() > 1 && ctx.has_output(1))
    ctx.set_output(1, max_pool_indices(ctx, x, windows, pad));
}

void convert_average_pool(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = pool_input(ctx, /*integers_too=*/false);
  const std::vector<AxisWindow> windows = pool_windows(ctx, x);
  const DType dt = float_compute_dtype(x.dtype());
  Tensor xc = cast_if(b, x, dt);
  Tensor sum = pool_axes(b, xc, windows, b.scalar(0, dt), OpKind::Add);
  // count_include_pad counts every tap, ceil_mode's extras too (as the ONNX
  // reference does; PyTorch leaves those out).
  Tensor y;
  if (ctx.attr_int("count_include_pad", 0) != 0) {
    double taps = 1;
    for (const AxisWindow& a : windows)
      taps *= static_cast<double>(a.kernel);
    y = b.div(sum, b.scalar(taps, dt));
  } else {
    y = b.div(sum, data_counts(b, xc, windows, dt));
  }
  ctx.set_output(0, cast_if(b, y, x.dtype()));
}

/// |x|^p in `dt`: x * x for p = 2, |x| for p = 1.
Tensor abs_pow(GraphBuilder& b, const Tensor& x, int64_t p, DType dt) {
  Tensor ax = b.unary(OpKind::Abs, x);
  if (p == 1) return ax;
  if (p == 2) return b.mul(x, x);
  return b.binary(OpKind::Pow, ax, b.scalar(static_cast<double>(p), dt));
}
/// s^(1/p): sqrt for p = 2, s for p = 1.
Tensor root(GraphBuilder& b, const Tensor& s, int64_t p, DType dt) {
  if (p == 1) return s;
  if (p == 2) return b.sqrt(s);
  return b.binary(OpKind::Pow, s, b.scalar(1.0 / static_cast<double>(p), dt));
}

int64_t lp_order(NodeContext& ctx) {
  const int64_t p = ctx.attr_int("p", 2);
  if (p < 1) ctx.fail(fmt::format("p is {}, must be >= 1", p));
  return p;
}

// LpPool: (sum of |x|^p over the window, zero padding)^(1/p).
void convert_lp_pool(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = pool_input(ctx, /*integers_too=*/false);
  const int64_t p = lp_order(ctx);
  const std::vector<AxisWindow> windows = pool_windows(ctx, x);
  const DType dt = float_compute_dtype(x.dtype());
  Tensor powered = abs_pow(b, cast_if(b, x, dt), p, dt);
  Tensor sum = pool_axes(b, powered, windows, b.scalar(0, dt), OpKind::Add);
  ctx.set_output(0, cast_if(b, root(b, sum, p, dt), x.dtype()));
}

// GlobalLpPool: the same over all spatial axes, kept as size 1.
void convert_global_lp_pool(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  if (x.rank() < 2) ctx.fail(fmt::format("X has rank {}; it needs [N, C, ...]", x.rank()));
  const int64_t p = lp_order(ctx);
  const DType dt = float_compute_dtype(x.dtype());
  std::vector<int64_t> axes;
  for (int64_t a = 2; a < x.rank(); ++a)
    axes.push_back(a);
  Tensor powered = abs_pow(b, cast_if(b, x, dt), p, dt);
  Tensor sum = axes.empty() ? powered : b.reduce_sum(powered, axes, /*keepdims=*/true);
  ctx.set_output(0, cast_if(b, root(b, sum, p, dt), x.dtype()));
}

}  // namespace

void register_pool_ops(ConverterTable& table) {
  table["MaxPool"] = convert_max_pool;
  table["AveragePool"] = convert_average_pool;
  table["LpPool"] = convert_lp_pool;
  table["GlobalLpPool"] = convert_global_lp_pool;
}

}  // namespace autofuse::frontend::onnx_import
