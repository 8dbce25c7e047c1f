// Resize (opsets 13-19; the ONNX reference implementation, op_resize.py, is
// what the node tests check) as gathers and weighted sums that fuse. The
// interpolation is separable: each resized axis, last to first, becomes
// n taps (1 nearest, 2 linear, 4 cubic), tap t reading the input at
// index_t[o] (edge-clamped) with weight w_t[o], plus tf_crop_and_resize's
// extrapolation mask. An axis of static size gets its taps as constants
// computed here in double exactly as the reference does (the coordinate
// transform, neighbours preferring the lower index, a ratio of 1 at integer
// coordinates, exclude_outside's renormalization). An axis of symbolic size
// D upscaled by an integer factor k (out = D * k) under a transform that is
// periodic in the output (asymmetric, half_pixel, half_pixel_symmetric,
// pytorch_half_pixel) gets them from a table of k rows: output o = q * k +
// r reads q + offset_t[r] with weight w_t[r], the table gathered at r =
// o mod k. Other symbolic cases are refused with an UnsupportedError.
// antialias widens linear and cubic filters by 1 / scale when downscaling
// (more taps, static sizes only: upscaling is periodic and unchanged).
// Upsample-7/9 (deprecated) runs the same path with the asymmetric
// transform and nearest by floor (convert_upsample).
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

using sym::Expr;

enum class Mode { Nearest, Linear, Cubic };

struct ResizeAttrs {
  Mode mode = Mode::Nearest;
  std::string transform = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
  bool antialias = false;
};

int taps_of(Mode mode) {
  return mode == Mode::Nearest ? 1 : mode == Mode::Linear ? 2 : 4;
}

/// One output position of one axis: the input coordinate and whether it
/// extrapolates (tf_crop_and_resize outside the input).
struct Coordinate {
  double x = 0;
  bool outside = false;
};

/// The reference's coordinate transform of output position `o` on an axis
/// of `in` positions, `out` of them kept of `scale * in`; roi = {start, end}.
Coordinate source_coordinate(const ResizeAttrs& a, double o, int64_t in, int64_t out, double scale,
                             double roi_start, double roi_end) {
  const double width = scale * static_cast<double>(in), n = static_cast<double>(in);
  const std::string& t = a.transform;
  if (t == "align_corners") return {width == 1 ? 0.0 : o * (n - 1) / (width - 1)};
  if (t == "asymmetric") return {o / scale};
  if (t == "pytorch_half_pixel") return {width == 1 ? -0.5 : (o + 0.5) / scale - 0.5};
  if (t == "half_pixel") return {(o + 0.5) / scale - 0.5};
  if (t == "half_pixel_symmetric") {
    const double offset = n / 2 * (1 - static_cast<double>(out) / width);
    return {offset + (o + 0.5) / scale - 0.5};
  }
  // tf_crop_and_resize
  double x = width == 1 ? (roi_end - roi_start) * (n - 1) / 2
                        : o * (roi_end - roi_start) * (n - 1) / (width - 1);
  x += roi_start * (n - 1);
  return {x, x < 0 || x > n - 1};
}

/// The taps at source coordinate x: the first one's index and every tap's
/// weight. The neighbours are the n nearest positions preferring lower
/// ones: from ceil(x) - n / 2 on.
struct Taps {
  int64_t first = 0;  ///< index of tap 0 (before edge clamping)
  std::vector<double> weights;
};

/// The antialiasing filter's weights (linear: a triangle, cubic: the
/// cubic kernel) stretched by 1 / scale when downscaling, over taps at
/// offsets start, start + 1, ... from the lower neighbour, normalized.
std::vector<double> antialias_weights(const ResizeAttrs& a, double ratio, double scale) {
  const double s = std::min(scale, 1.0), A = a.cubic_a;
  const bool linear = a.mode == Mode::Linear;
  const auto start = static_cast<int64_t>(std::floor((linear ? -1 : -2) / s) + 1);
  std::vector<double> w;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    const double d = std::abs(s * (static_cast<double>(i) - ratio));
    double v = 0;
    if (linear) {
      v = std::clamp(1 - d, 0.0, 1.0);
    } else if (d <= 1) {
      v = (A + 2) * d * d * d - (A + 3) * d * d + 1;
    } else if (d < 2) {
      v = A * d * d * d - 5 * A * d * d + 8 * A * d - 4 * A;
    }
    w.push_back(v);
    sum += v;
  }
  for (double& v : w)
    v /= sum;
  return w;
}

Taps taps_at(const ResizeAttrs& a, double x, double scale) {
  const double fl = std::floor(x);
  const bool integral = fl == x;
  const double ratio = integral ? 1.0 : x - fl;
  Taps t;
  if (a.mode == Mode::Nearest) {
    // Two candidates (floor, floor + 1; x - 1, x when integral), one chosen.
    bool upper = true;
    if (!integral) {
      const std::string& m = a.nearest_mode;
      upper = m == "round_prefer_floor"  ? ratio > 0.5
              : m == "round_prefer_ceil" ? ratio >= 0.5
                                         : m == "ceil";
    }
    t.first = static_cast<int64_t>(std::ceil(x)) - 1 + (upper ? 1 : 0);
    t.weights = {1.0};
    return t;
  }
  if (a.antialias) {
    t.weights = antialias_weights(a, ratio, scale);
  } else if (a.mode == Mode::Linear) {
    t.weights = {1 - ratio, ratio};
  } else {
    const double A = a.cubic_a, r = ratio, s = 1 - ratio;
    t.weights = {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                 ((A + 2) * r - (A + 3)) * r * r + 1, ((A + 2) * s - (A + 3)) * s * s + 1,
                 ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
  }
  // The n nearest positions, ties to the lower one (n is even).
  t.first = static_cast<int64_t>(std::ceil(x)) - static_cast<int64_t>(t.weights.size()) / 2;
  return t;
}

/// One axis's taps as graph tensors: index_t [out] (i64, clamped) and
/// weight_t [out] (absent for nearest), and the extrapolation mask.
struct AxisTaps {
  std::vector<Tensor> index, weight;
  std::optional<Tensor> outside;
  /// > 0 instead of taps: every input repeated this often along the axis
  /// (nearest upscaling by an integer whose table is all offset 0), a
  /// broadcast that fuses at memory speed.
  int64_t repeat = 0;
};

ConstantAttrs vector_constant(DType dt, const std::vector<double>& values) {
  return ConstantAttrs{dt, {static_cast<int64_t>(values.size())}, values};
}

/// Taps of an axis of static size `in` (constants).
AxisTaps static_taps(GraphBuilder& b, const ResizeAttrs& a, int64_t in, int64_t out, double scale,
                     double roi_start, double roi_end, DType compute) {
  // n is the same at every position (antialiasing widens it by 1 / scale).
  const auto n = static_cast<int>(taps_at(a, 0.5, scale).weights.size());
  std::vector<std::vector<double>> index(n), weight(n);
  std::vector<double> outside;
  bool any_outside = false;
  for (int64_t o = 0; o < out; ++o) {
    const Coordinate c =
        source_coordinate(a, static_cast<double>(o), in, out, scale, roi_start, roi_end);
    Taps t = taps_at(a, c.x, scale);
    if (a.exclude_outside && a.mode != Mode::Nearest) {
      double sum = 0;
      for (int k = 0; k < n; ++k) {
        const int64_t i = t.first + k;
        if (i < 0 || i >= in) t.weights[static_cast<size_t>(k)] = 0;
        sum += t.weights[static_cast<size_t>(k)];
      }
      for (double& w : t.weights)
        w /= sum;
    }
    for (int k = 0; k < n; ++k) {
      index[k].push_back(static_cast<double>(std::clamp<int64_t>(t.first + k, 0, in - 1)));
      if (a.mode != Mode::Nearest) weight[k].push_back(t.weights[static_cast<size_t>(k)]);
    }
    outside.push_back(c.outside ? 1 : 0);
    any_outside = any_outside || c.outside;
  }
  AxisTaps taps;
  for (int k = 0; k < n; ++k) {
    taps.index.push_back(b.constant(vector_constant(DType::i64, index[k])));
    if (a.mode != Mode::Nearest)
      taps.weight.push_back(b.constant(vector_constant(compute, weight[k])));
  }
  if (any_outside) taps.outside = b.constant(vector_constant(DType::boolean, outside));
  return taps;
}

/// Taps of an axis of symbolic size `in` upscaled by the integer `k`, from
/// a k-row table (see the file comment); nullopt where not periodic.
std::optional<AxisTaps> periodic_taps(NodeContext& ctx, const ResizeAttrs& a, const Expr& in,
                                      int64_t k, DType compute) {
  const std::string& t = a.transform;
  const bool periodic = t == "asymmetric" || t == "half_pixel" || t == "half_pixel_symmetric" ||
                        t == "pytorch_half_pixel";
  if (!periodic || (a.exclude_outside && a.mode != Mode::Nearest)) return std::nullopt;
  GraphBuilder& b = ctx.builder();
  const int n = taps_of(a.mode);
  std::vector<std::vector<double>> offset(n), weight(n);
  for (int64_t r = 0; r < k; ++r) {
    // Output q * k + r sits at q + c with c from r alone (asymmetric: r / k;
    // the half-pixel forms: (r + 0.5) / k - 0.5; with out = in * k the
    // symmetric form's offset and PyTorch's out == 1 case change nothing).
    const double scale = static_cast<double>(k);
    const double c = t == "asymmetric" ? static_cast<double>(r) / scale
                                       : (static_cast<double>(r) + 0.5) / scale - 0.5;
    const Taps taps = taps_at(a, c, scale);
    for (int j = 0; j < n; ++j) {
      offset[j].push_back(static_cast<double>(taps.first + j));
      if (a.mode != Mode::Nearest) weight[j].push_back(taps.weights[static_cast<size_t>(j)]);
    }
  }
  AxisTaps taps;
  if (a.mode == Mode::Nearest &&
      std::all_of(offset[0].begin(), offset[0].end(), [](double v) { return v == 0; })) {
    taps.repeat = k;
    return taps;
  }
  const Expr out = in * Expr(k);
  Tensor o = b.iota(DType::i64, {out}, 0);
  Tensor kk = b.scalar(static_cast<double>(k), DType::i64);
  Tensor q = b.div(o, kk), r = b.binary(OpKind::Mod, o, kk);
  Tensor last = size_tensor(b, in - Expr(1), DType::i64);  // in - 1 >= 0: in >= 1
  for (int j = 0; j < n; ++j) {
    Tensor shift = b.gather(b.constant(vector_constant(DType::i64, offset[j])), r, 0);
    Tensor index = b.add(q, shift);
    index = b.binary(OpKind::Min, b.binary(OpKind::Max, index, b.scalar(0, DType::i64)), last);
    taps.index.push_back(index);
    if (a.mode != Mode::Nearest)
      taps.weight.push_back(b.gather(b.constant(vector_constant(compute, weight[j])), r, 0));
  }
  return taps;
}

/// `v` [out] reshaped to broadcast along `axis` of a rank-`rank` tensor.
Tensor along(GraphBuilder& b, const Tensor& v, int64_t axis, int rank) {
  Shape shape(static_cast<size_t>(rank), Expr(1));
  shape[static_cast<size_t>(axis)] = v.shape()[0];
  return b.reshape(v, shape);
}

Tensor apply_taps(GraphBuilder& b, const Tensor& x, int64_t axis, const AxisTaps& taps,
                  const ResizeAttrs& a) {
  if (taps.repeat > 0) {  // [.., D, ..] -> [.., D, 1, ..] -> [.., D, k, ..] -> [.., D * k, ..]
    const auto at = static_cast<std::ptrdiff_t>(axis) + 1;
    Shape column = x.shape();
    column.insert(column.begin() + at, Expr(1));
    Shape repeated = column;
    repeated[static_cast<size_t>(at)] = Expr(taps.repeat);
    Shape out = x.shape();
    out[static_cast<size_t>(axis)] = out[static_cast<size_t>(axis)] * Expr(taps.repeat);
    return b.reshape(b.broadcast_to(b.reshape(x, column), repeated), out);
  }
  std::optional<Tensor> sum;
  for (size_t t = 0; t < taps.index.size(); ++t) {
    Tensor value = b.gather(x, taps.index[t], axis);
    if (!taps.weight.empty()) value = b.mul(value, along(b, taps.weight[t], axis, x.rank()));
    sum = sum ? b.add(*sum, value) : value;
  }
  if (taps.outside)
    sum = b.where(along(b, *taps.outside, axis, x.rank()), b.scalar(a.extrapolation, x.dtype()),
                  *sum);
  return *sum;
}

ResizeAttrs resize_attrs(NodeContext& ctx) {
  ResizeAttrs a;
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "linear" || mode == "bilinear" || mode == "trilinear") {
    a.mode = Mode::Linear;
  } else if (mode == "cubic" || mode == "bicubic") {
    a.mode = Mode::Cubic;
  } else if (mode != "nearest") {
    ctx.fail(fmt::format("mode '{}' is not one of nearest, linear, cubic", mode));
  }
  a.transform = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  static const char* const kTransforms[] = {"half_pixel",         "half_pixel_symmetric",
                                            "pytorch_half_pixel", "align_corners",
                                            "asymmetric",         "tf_crop_and_resize"};
  if (std::find(std::begin(kTransforms), std::end(kTransforms), a.transform) ==
      std::end(kTransforms))
    ctx.fail(fmt::format("coordinate_transformation_mode '{}' is unknown", a.transform));
  a.nearest_mode = ctx.attr_string("nearest_mode", "round_prefer_floor");
  if (a.nearest_mode != "round_prefer_floor" && a.nearest_mode != "round_prefer_ceil" &&
      a.nearest_mode != "floor" && a.nearest_mode != "ceil")
    ctx.fail(fmt::format("nearest_mode '{}' is unknown", a.nearest_mode));
  a.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75f);
  a.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
  a.extrapolation = ctx.attr_float("extrapolation_value", 0.0f);
  a.antialias = ctx.attr_int("antialias", 0) != 0;
  return a;
}

/// The values of optional input i as doubles when it is given and not
/// empty; nullopt when absent or empty; a UserError naming it when not
/// constant.
std::optional<std::vector<double>> constant_values(NodeContext& ctx, int i, const char* what) {
  if (!ctx.has_input(i)) return std::nullopt;
  const std::optional<HostTensor> c = ctx.constant(i);
  if (!c) {
    if (ctx.input_shape(i).size() == 1 && ctx.input_shape(i)[0] == Expr(0)) return std::nullopt;
    ctx.fail(fmt::format("the {} (input {}, '{}') must be known at import: a constant", what, i,
                         ctx.node().input(i)));
  }
  if (c->numel() == 0) return std::nullopt;
  std::vector<double> v;
  for (int64_t e = 0; e < c->numel(); ++e)
    v.push_back(c->get_f64(e));
  return v;
}

/// x resized along `axes` by `scales_in` or to `sizes_in` (exactly one
/// given, one entry per axis), roi {starts..., ends...} for
/// tf_crop_and_resize. Shared by Resize and Upsample.
Tensor resize(NodeContext& ctx, Tensor x, const ResizeAttrs& a, const std::vector<int64_t>& axes,
              const std::optional<std::vector<double>>& scales_in,
              const std::optional<std::vector<Expr>>& sizes_in, const std::vector<double>& roi) {
  GraphBuilder& b = ctx.builder();
  const size_t na = axes.size();
  if (a.mode != Mode::Nearest && !is_float(x.dtype()))
    ctx.unsupported(fmt::format("{} interpolation of {} (float types only)",
                                a.mode == Mode::Linear ? "linear" : "cubic",
                                dtype_name(x.dtype())));
  if (scales_in.has_value() == sizes_in.has_value())
    ctx.fail("exactly one of scales and sizes must be given");
  if ((scales_in && scales_in->size() != na) || (sizes_in && sizes_in->size() != na))
    ctx.fail(fmt::format("scales/sizes need {} entries (one per resized axis)", na));
  // Per resized axis: the output size and the scale of the coordinate
  // transform, as the reference computes them.
  std::vector<Expr> out(na);
  std::vector<double> scale(na, 1.0);
  if (scales_in) {
    for (size_t i = 0; i < na; ++i) {
      scale[i] = (*scales_in)[i];
      if (!(scale[i] > 0)) ctx.fail(fmt::format("scale {} must be > 0", scale[i]));
      const Expr in = x.shape()[static_cast<size_t>(axes[i])];
      if (std::optional<int64_t> n = in.as_const()) {
        out[i] = Expr(static_cast<int64_t>(scale[i] * static_cast<double>(*n)));
      } else if (scale[i] == std::floor(scale[i])) {
        out[i] = in * Expr(static_cast<int64_t>(scale[i]));
      } else {
        ctx.unsupported(fmt::format("scale {} of axis {} of symbolic size {}", scale[i], axes[i],
                                    in.to_string()));
      }
    }
  } else {
    const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
    std::vector<double> ratio(na);
    for (size_t i = 0; i < na; ++i) {
      const Expr in = x.shape()[static_cast<size_t>(axes[i])];
      out[i] = (*sizes_in)[i];
      if (sym::proven_eq(out[i], in) && policy == "stretch") continue;  // scale 1
      const std::optional<int64_t> n = in.as_const(), m = out[i].as_const();
      if (!n || !m)
        ctx.unsupported(fmt::format("sizes {} for axis {} of size {} (both must be known)",
                                    out[i].to_string(), axes[i], in.to_string()));
      ratio[i] = static_cast<double>(*m) / static_cast<double>(*n);
      scale[i] = ratio[i];
    }
    if (policy == "not_larger" || policy == "not_smaller") {
      const double s = policy == "not_larger" ? *std::min_element(ratio.begin(), ratio.end())
                                              : *std::max_element(ratio.begin(), ratio.end());
      for (size_t i = 0; i < na; ++i) {
        scale[i] = s;
        const int64_t n = *x.shape()[static_cast<size_t>(axes[i])].as_const();
        out[i] = Expr(static_cast<int64_t>(s * static_cast<double>(n) + 0.5));
      }
    } else if (policy != "stretch") {
      ctx.fail(fmt::format("keep_aspect_ratio_policy '{}' is unknown", policy));
    }
  }

  const DType compute = a.mode == Mode::Nearest ? x.dtype() : float_compute_dtype(x.dtype());
  Tensor y = cast_if(b, x, compute);
  for (size_t i = na; i-- > 0;) {  // the last axis first, as the reference nests them
    const int64_t axis = axes[i];
    const Expr in = x.shape()[static_cast<size_t>(axis)];  // a copy: taps add nodes
    if (scale[i] == 1 && sym::proven_eq(out[i], in) && a.transform != "tf_crop_and_resize")
      continue;  // every transform maps such an axis onto itself
    AxisTaps taps;
    if (std::optional<int64_t> n = in.as_const()) {
      if (*n == 0) ctx.fail(fmt::format("axis {} is empty: nothing to interpolate from", axis));
      taps = static_taps(b, a, *n, *out[i].as_const(), scale[i], roi[i], roi[na + i], compute);
    } else if (std::optional<AxisTaps> p =
                   periodic_taps(ctx, a, in, static_cast<int64_t>(scale[i]), compute)) {
      taps = *p;
    } else {
      ctx.unsupported(fmt::format("{} resizing of axis {} of symbolic size {}", a.transform, axis,
                                  in.to_string()));
    }
    y = apply_taps(b, y, axis, taps, a);
  }
  return cast_if(b, y, x.dtype());
}

void convert_resize(NodeContext& ctx) {
  Tensor x = ctx.input(0);
  const ResizeAttrs a = resize_attrs(ctx);
  const int rank = x.rank();
  std::vector<int64_t> axes;
  for (int64_t d : ctx.attr_ints("axes", std::vector<int64_t>{}))
    axes.push_back(normalize_axis(ctx, d, rank, "axes"));
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  const size_t na = axes.size();
  const std::optional<std::vector<double>> scales_in = constant_values(ctx, 2, "scales");
  std::optional<std::vector<Expr>> sizes_in;
  if (ctx.num_inputs() > 3 && ctx.has_input(3)) {
    sizes_in = require_known(ctx, 3, "sizes");
    if (sizes_in->empty()) sizes_in.reset();
  }
  std::vector<double> roi(2 * na, 0.0);
  for (size_t i = 0; i < na; ++i)
    roi[na + i] = 1.0;
  if (a.transform == "tf_crop_and_resize") {
    const std::optional<std::vector<double>> r = constant_values(ctx, 1, "roi");
    if (!r || r->size() != 2 * na)
      ctx.fail(fmt::format("tf_crop_and_resize needs roi with {} entries", 2 * na));
    roi = *r;
  }

  ctx.set_output(0, resize(ctx, x, a, axes, scales_in, sizes_in, roi));
}

// Upsample (7, 9; deprecated in 10 for Resize): every axis scaled by
// scales (an attribute in 7, input 1 after), out = floor(in * scale),
// nearest or linear with the asymmetric transform (x = o / scale) and
// nearest taking floor(x), as Resize-10 and ONNX Runtime define it.
void convert_upsample(NodeContext& ctx) {
  Tensor x = ctx.input(0);
  ResizeAttrs a;
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "linear" || mode == "bilinear") {
    a.mode = Mode::Linear;
  } else if (mode != "nearest") {
    ctx.fail(fmt::format("mode '{}' is not one of nearest, linear", mode));
  }
  a.transform = "asymmetric";
  a.nearest_mode = "floor";
  std::optional<std::vector<double>> scales;
  if (ctx.num_inputs() > 1) {
    scales = constant_values(ctx, 1, "scales");
  } else {
    const std::vector<float> attr = ctx.attr_floats("scales", std::vector<float>{});
    if (!attr.empty()) scales = std::vector<double>(attr.begin(), attr.end());
  }
  if (!scales) ctx.fail("scales must be given (input 1, or the attribute in Upsample-7)");
  for (double s : *scales)
    if (!(s >= 1)) ctx.fail(fmt::format("scale {} must be >= 1 (Upsample)", s));
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < x.rank(); ++d)
    axes.push_back(d);
  std::vector<double> roi(2 * axes.size(), 0.0);
  std::fill(roi.begin() + static_cast<long>(axes.size()), roi.end(), 1.0);
  ctx.set_output(0, resize(ctx, x, a, axes, scales, std::nullopt, roi));
}

}  // namespace

void register_resize_ops(ConverterTable& table) {
  table["Resize"] = convert_resize;
  table["Upsample"] = convert_upsample;
}

}  // namespace autofuse::frontend::onnx_import
