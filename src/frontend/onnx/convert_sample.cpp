// GridSample (16, 20, 22) and AffineGrid (20): spatial transformers; and
// Col2Im (18), images summed from sliding blocks (see there).
//
// GridSample reads X [N, C, D1..Dk] at the positions a grid [N, O1..Ok, k]
// names (normalized to [-1, 1], the last grid component indexing the last
// spatial dim), as the ONNX reference (op_grid_sample.py, after PyTorch's
// GridSampler) computes it:
//   x = align_corners ? (g + 1) / 2 * (d - 1) : ((g + 1) * d - 1) / 2;
//   nearest rounds x half to even; a coordinate outside [lo, hi] (lo, hi =
//   0, d - 1 with align_corners, else -0.5, d - 0.5) is clamped to [0, d - 1]
//   (border) or reflected into [lo, hi] (reflection);
//   taps: nearest 1 (x itself), linear 2 (floor(x) + 0..1, weights 1 - t
//   and t, t = x - floor(x)), cubic 4 (floor(x) - 1..2, Keys' coefficients
//   with a = -0.75); a tap outside [0, d) reads 0 (zeros), the clamped
//   index (border) or the reflected one (reflection).
// The k dims' taps multiply out: each combination is one element gather
// from X flattened (index (n * C + c) * D1..Dk + the tap's flat position),
// weighted and summed; the coordinate arithmetic is elementwise on
// [N, 1, O...] and everything fuses into one kernel.
//
// AffineGrid builds that grid from theta [N, k, k + 1] and a constant size
// (N, C, D1..Dk): grid[n, o..., j] = sum_i theta[n, j, i] * base_i[o] +
// theta[n, j, k], base_i the normalized coordinate of the spatial dim that
// grid component i indexes (component 0 is the last dim, x).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

using sym::Expr;

enum class SampleMode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

/// One tap of one spatial dim: the (in-range) index into that dim, its
/// weight (none for nearest) and, under zeros padding, whether it is
/// inside (else it reads 0).
struct Tap {
  Tensor index;
  std::optional<Tensor> weight;
  std::optional<Tensor> inside;
};

struct Sampler {
  GraphBuilder& b;
  DType compute;
  Padding padding;
  bool align_corners;
  /// Size tensors made so far, by dtype and size: each is a node (a small
  /// kernel of its own where the size is symbolic), made once.
  mutable std::map<std::pair<DType, Expr>, Tensor> sizes = {};

  Tensor num(double v) const { return b.scalar(v, compute); }
  Tensor size_as(const Expr& d, DType dt) const {
    auto [it, fresh] = sizes.try_emplace({dt, d}, Tensor{});
    if (fresh) it->second = size_tensor(b, d, dt);
    return it->second;
  }
  Tensor size_of(const Expr& d) const { return size_as(d, compute); }

  /// Whether the integral value n (>= 0) is odd.
  Tensor odd(Tensor n) const {
    Tensor half = b.unary(OpKind::Floor, b.div(n, num(2)));
    return b.binary(OpKind::Ne, b.sub(n, b.mul(num(2), half)), num(0));
  }

  /// The reference's _gs_reflect: v reflected by the nearer border until
  /// it lies in [lo, hi] (lo itself where the range is empty). With
  /// dx = n * range + r past a border, an even n lands r inside from that
  /// border, an odd one from the other.
  Tensor reflect(Tensor v, Tensor lo, Tensor hi) const {
    Tensor range = b.sub(hi, lo);
    Tensor below = b.sub(lo, v), above = b.sub(v, hi);
    Tensor nb = b.unary(OpKind::Floor, b.div(below, range));  // dx >= 0: floor is trunc
    Tensor rb = b.sub(below, b.mul(nb, range));
    Tensor from_below = b.where(odd(nb), b.sub(hi, rb), b.add(lo, rb));
    Tensor na = b.unary(OpKind::Floor, b.div(above, range));
    Tensor ra = b.sub(above, b.mul(na, range));
    Tensor from_above = b.where(odd(na), b.add(lo, ra), b.sub(hi, ra));
    Tensor out = b.where(b.binary(OpKind::Lt, v, lo), from_below,
                         b.where(b.binary(OpKind::Gt, v, hi), from_above, v));
    return b.where(b.binary(OpKind::Gt, range, num(0)), out, lo);
  }

  /// int(v): toward zero.
  Tensor trunc(Tensor v) const {
    return b.where(b.binary(OpKind::Lt, v, num(0)), b.unary(OpKind::Ceil, v),
                   b.unary(OpKind::Floor, v));
  }

  Tensor clamp(Tensor v, const Expr& d) const {
    return b.binary(OpKind::Min, b.binary(OpKind::Max, v, num(0)), b.sub(size_of(d), num(1)));
  }

  Tensor lower_border(const Expr&) const { return num(align_corners ? 0.0 : -0.5); }
  Tensor upper_border(const Expr& d) const {
    return b.sub(size_of(d), num(align_corners ? 1.0 : 0.5));
  }

  /// The tap at integral position i (in the compute type) of a dim of size d.
  Tap tap_at(Tensor i, const Expr& d) const {
    Tap tap{clamp(i, d), std::nullopt, std::nullopt};
    if (padding == Padding::Zeros) {
      tap.inside = b.binary(OpKind::And, b.binary(OpKind::Ge, i, num(0)),
                            b.binary(OpKind::Lt, i, size_of(d)));
    } else if (padding == Padding::Reflection) {
      // The reflected value lies in [lo, hi]; the clamp only guards.
      tap.index = clamp(trunc(reflect(i, lower_border(d), upper_border(d))), d);
    }
    tap.index = b.cast(tap.index, DType::i64);
    return tap;
  }
};

SampleMode sample_mode(NodeContext& ctx) {
  const std::string mode = ctx.attr_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "nearest") return SampleMode::Nearest;
  if (mode == "linear" || mode == "bilinear") return SampleMode::Linear;
  if (mode != "cubic" && mode != "bicubic")
    ctx.fail(
        fmt::format("mode '{}' is not one of nearest, linear (bilinear), cubic (bicubic)", mode));
  return SampleMode::Cubic;
}

Padding padding_mode(NodeContext& ctx) {
  const std::string p = ctx.attr_string("padding_mode", "zeros");
  if (p == "zeros") return Padding::Zeros;
  if (p == "border") return Padding::Border;
  if (p != "reflection")
    ctx.fail(fmt::format("padding_mode '{}' is not one of zeros, border, reflection", p));
  return Padding::Reflection;
}

/// Keys' cubic convolution weights (a = -0.75) of the taps at -1, 0, 1, 2
/// from floor(x), t = x - floor(x) in [0, 1).
std::vector<Tensor> cubic_weights(const Sampler& s, Tensor t) {
  GraphBuilder& b = s.b;
  const double a = -0.75;
  // |d| <= 1: (a + 2)|d|^3 - (a + 3)|d|^2 + 1; 1 < |d| < 2: a|d|^3 - 5a|d|^2 + 8a|d| - 4a.
  const auto near = [&](Tensor d) {
    return b.add(b.mul(b.mul(b.sub(b.mul(s.num(a + 2), d), s.num(a + 3)), d), d), s.num(1));
  };
  const auto far = [&](Tensor d) {
    Tensor p = b.add(b.mul(b.sub(b.mul(s.num(a), d), s.num(5 * a)), d), s.num(8 * a));
    return b.sub(b.mul(p, d), s.num(4 * a));
  };
  Tensor one = s.num(1);
  return {far(b.add(t, one)), near(t), near(b.sub(one, t)), far(b.sub(s.num(2), t))};
}

void convert_grid_sample(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0), grid = float_input(ctx, 1);
  const Shape xs = x.shape(), gs = grid.shape();  // copies: new nodes move the graph's storage
  const int k = x.rank() - 2;
  if (k < 1 || grid.rank() != k + 2 || gs.back() != Expr(k))
    ctx.fail(fmt::format("X {} and grid {}: grid must be [N, O1..Ok, k] for X [N, C, D1..Dk]",
                         x.type().to_string(), grid.type().to_string()));
  if (!sym::proven_eq(gs[0], xs[0]))
    ctx.fail(
        fmt::format("grid batch {} differs from X's {}", gs[0].to_string(), xs[0].to_string()));
  const SampleMode mode = sample_mode(ctx);
  const Sampler s{b, float_compute_dtype(x.dtype()), padding_mode(ctx),
                  ctx.attr_int("align_corners", 0) != 0};
  // Per-position tensors have shape [N, 1, O1..Ok] (broadcast over C).
  Shape pos = {gs[0], Expr(1)};
  pos.insert(pos.end(), gs.begin() + 1, gs.end() - 1);
  Tensor g = cast_if(b, grid, s.compute);
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(k));
  for (int dim = 0; dim < k; ++dim) {
    const Expr d = xs[static_cast<size_t>(2 + dim)];
    const int64_t component = k - 1 - dim;  // the grid lists x (the last dim) first
    Tensor n = b.reshape(b.slice(g, SliceAttrs{{k + 1}, {component}, {component + 1}, {1}}), pos);
    Tensor c = s.align_corners
                   ? b.mul(b.div(b.add(n, s.num(1)), s.num(2)), b.sub(s.size_of(d), s.num(1)))
                   : b.div(b.sub(b.mul(b.add(n, s.num(1)), s.size_of(d)), s.num(1)), s.num(2));
    if (mode == SampleMode::Nearest) c = b.unary(OpKind::Round, c);
    Tensor lo = s.lower_border(d), hi = s.upper_border(d);
    if (s.padding != Padding::Zeros) {
      Tensor outside =
          b.binary(OpKind::Or, b.binary(OpKind::Lt, c, lo), b.binary(OpKind::Gt, c, hi));
      Tensor moved = s.padding == Padding::Border ? s.clamp(c, d) : s.reflect(c, lo, hi);
      c = b.where(outside, moved, c);
    }
    std::vector<Tap>& dim_taps = taps[static_cast<size_t>(dim)];
    if (mode == SampleMode::Nearest) {
      dim_taps.push_back(s.tap_at(s.trunc(c), d));  // int(x)
      continue;
    }
    Tensor f = b.unary(OpKind::Floor, c);
    Tensor t = b.sub(c, f);
    std::vector<Tensor> weights = mode == SampleMode::Linear
                                      ? std::vector<Tensor>{b.sub(s.num(1), t), t}
                                      : cubic_weights(s, t);
    const int first = mode == SampleMode::Linear ? 0 : -1;
    for (size_t w = 0; w < weights.size(); ++w) {
      Tap tap = s.tap_at(b.add(f, s.num(first + static_cast<int>(w))), d);
      tap.weight = weights[w];
      dim_taps.push_back(tap);
    }
  }
  // Every combination of one tap per dim: a gather from X flattened, at
  // (n * C + c) * D1..Dk plus each dim's tap index times its stride (the
  // products made once per tap). Every index is in range by construction.
  Shape out_shape = {xs[0], xs[1]};
  out_shape.insert(out_shape.end(), gs.begin() + 1, gs.end() - 1);
  Shape lead_pos = {xs[0], xs[1]};
  lead_pos.resize(static_cast<size_t>(k + 2), Expr(1));
  Expr stride(1);
  for (int dim = k; dim-- > 0;) {
    for (Tap& tap : taps[static_cast<size_t>(dim)])
      if (stride != Expr(1)) tap.index = b.mul(tap.index, s.size_as(stride, DType::i64));
    stride = stride * xs[static_cast<size_t>(2 + dim)];
  }
  Tensor base = b.mul(b.add(b.mul(b.iota(DType::i64, lead_pos, 0), s.size_as(xs[1], DType::i64)),
                            b.iota(DType::i64, lead_pos, 1)),
                      s.size_as(stride, DType::i64));
  Tensor data = b.reshape(cast_if(b, x, s.compute), Shape{numel(xs)});
  std::optional<Tensor> sum;
  std::vector<size_t> which(static_cast<size_t>(k), 0);
  while (true) {
    Tensor flat = base;
    std::optional<Tensor> weight, inside;
    for (int dim = 0; dim < k; ++dim) {
      const Tap& tap = taps[static_cast<size_t>(dim)][which[static_cast<size_t>(dim)]];
      flat = b.add(flat, tap.index);
      if (tap.weight) weight = weight ? b.mul(*weight, *tap.weight) : *tap.weight;
      if (tap.inside) inside = inside ? b.binary(OpKind::And, *inside, *tap.inside) : *tap.inside;
    }
    Tensor value = b.gather(data, b.broadcast_to(flat, out_shape), 0);
    if (inside) value = b.where(*inside, value, s.num(0));
    if (weight) value = b.mul(value, *weight);
    sum = sum ? b.add(*sum, value) : value;
    int dim = k - 1;
    while (dim >= 0 && ++which[static_cast<size_t>(dim)] == taps[static_cast<size_t>(dim)].size())
      which[static_cast<size_t>(dim--)] = 0;
    if (dim < 0) break;
  }
  ctx.set_output(0, cast_if(b, *sum, x.dtype()));
}

void convert_affine_grid(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor theta = float_input(ctx, 0);
  const std::vector<int64_t> size = require_const_ints(ctx, 1, "size");
  const int k = static_cast<int>(size.size()) - 2;
  const Shape ts = theta.shape();
  if (k != 2 && k != 3)
    ctx.fail(fmt::format("size has {} entries; AffineGrid takes (N, C, H, W) or (N, C, D, H, W)",
                         size.size()));
  if (theta.rank() != 3 || ts[1] != Expr(k) || ts[2] != Expr(k + 1))
    ctx.fail(fmt::format("theta {} must be [N, {}, {}]", theta.type().to_string(), k, k + 1));
  // A symbolic theta batch is taken as is (size's N must equal it; the grid
  // has one entry per theta either way).
  if (ts[0].as_const() && *ts[0].as_const() != size[0])
    ctx.fail(
        fmt::format("theta's batch {} differs from size's N = {}", ts[0].to_string(), size[0]));
  for (int64_t v : size)
    if (v < 1) ctx.fail(fmt::format("size {} must be positive", v));
  const bool align = ctx.attr_int("align_corners", 0) != 0;
  const DType dt = float_compute_dtype(theta.dtype());
  Tensor th = cast_if(b, theta, dt);
  // Output [N, D1..Dk, k]; base_i varies along the spatial dim grid
  // component i indexes (component 0: the last dim).
  Shape out = {ts[0]};
  for (int dim = 0; dim < k; ++dim)
    out.push_back(Expr(size[static_cast<size_t>(2 + dim)]));
  out.push_back(Expr(k));
  const Expr comps(k);
  const auto theta_at = [&](int64_t col) {  // theta[n, :, col] as [N, 1.., k]
    Shape shape(static_cast<size_t>(k + 2), Expr(1));
    shape[0] = ts[0];
    shape.back() = comps;
    return b.reshape(b.slice(th, SliceAttrs{{2}, {col}, {col + 1}, {1}}), shape);
  };
  Tensor grid = b.broadcast_to(theta_at(k), out);
  for (int i = 0; i < k; ++i) {
    const int dim = k - 1 - i;  // the spatial dim component i indexes
    const int64_t d = size[static_cast<size_t>(2 + dim)];
    // The reference's arange: align_corners -1 + 2 j / (d - 1) (d = 1: -1),
    // else -1 + (2 j + 1) / d.
    Tensor j = b.iota(dt, Shape{Expr(d)}, 0);
    Tensor base = align ? (d > 1 ? b.sub(b.mul(j, b.scalar(2.0 / static_cast<double>(d - 1), dt)),
                                         b.scalar(1, dt))
                                 : b.sub(j, b.scalar(1, dt)))
                        : b.sub(b.div(b.add(b.mul(j, b.scalar(2, dt)), b.scalar(1, dt)),
                                      b.scalar(static_cast<double>(d), dt)),
                                b.scalar(1, dt));
    Shape shape(static_cast<size_t>(k + 2), Expr(1));
    shape[static_cast<size_t>(1 + dim)] = Expr(d);
    grid = b.add(grid, b.mul(theta_at(i), b.reshape(base, shape)));
  }
  ctx.set_output(0, cast_if(b, grid, theta.dtype()));
}

// Col2Im: the image [N, C, D1..Dk] summed from sliding blocks
// x [N, C * K1..Kk, L] (L = B1..Bk block positions, Bi = (Di + pads -
// dilation * (Ki - 1) - 1) / stride + 1): image position p receives, from
// every kernel offset o, block q with q * stride - pad_begin + o * dilation
// = p on every dim. The image and block shapes are constants, so each
// offset's block index per image position (or none) is a constant table:
// one gather from x's offset-o plane per offset, masked and summed, fused.
void convert_col2im(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = float_input(ctx, 0);
  const std::vector<int64_t> image = require_const_ints(ctx, 1, "image_shape");
  const std::vector<int64_t> block = require_const_ints(ctx, 2, "block_shape");
  const size_t k = image.size();
  if (k == 0 || block.size() != k)
    ctx.fail(
        fmt::format("image_shape has {} entries and block_shape {}; both need one per "
                    "spatial dim",
                    image.size(), block.size()));
  const std::vector<int64_t> dilations = ctx.attr_ints("dilations", std::vector<int64_t>(k, 1));
  const std::vector<int64_t> strides = ctx.attr_ints("strides", std::vector<int64_t>(k, 1));
  const std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (dilations.size() != k || strides.size() != k || pads.size() != 2 * k)
    ctx.fail(fmt::format("dilations, strides and pads need {}, {} and {} entries", k, k, 2 * k));
  std::vector<int64_t> blocks(k);
  int64_t kernel_size = 1, positions = 1, image_size = 1;
  for (size_t i = 0; i < k; ++i) {
    if (image[i] < 1 || block[i] < 1 || dilations[i] < 1 || strides[i] < 1 || pads[i] < 0 ||
        pads[k + i] < 0)
      ctx.fail(
          fmt::format("dim {}: image {}, block {}, dilation {}, stride {} must be >= 1 and "
                      "pads >= 0",
                      i, image[i], block[i], dilations[i], strides[i]));
    const int64_t span = dilations[i] * (block[i] - 1) + 1;
    blocks[i] = (image[i] + pads[i] + pads[k + i] - span) / strides[i] + 1;
    if (image[i] + pads[i] + pads[k + i] < span)
      ctx.fail(fmt::format("dim {}: the padded image ({}) is smaller than the dilated block ({})",
                           i, image[i] + pads[i] + pads[k + i], span));
    kernel_size *= block[i];
    positions *= blocks[i];
    image_size *= image[i];
  }
  const Shape xs = x.shape();
  if (x.rank() != 3 || !sym::proven_eq(xs[2], Expr(positions)))
    ctx.fail(fmt::format("input {} must be [N, C * {}, {}] (the block positions)",
                         x.type().to_string(), kernel_size, positions));
  const Expr channels = sym::floordiv(xs[1], Expr(kernel_size));
  if (!xs[1].as_const() && !sym::proven_eq(channels * Expr(kernel_size), xs[1]))
    ctx.unsupported(
        fmt::format("input dim 1 ({}): a symbolic size not known to be a multiple "
                    "of the block size {}",
                    xs[1].to_string(), kernel_size));
  if (!sym::proven_eq(channels * Expr(kernel_size), xs[1]))
    ctx.fail(fmt::format("input dim 1 ({}) is not a multiple of the block size {}",
                         xs[1].to_string(), kernel_size));
  const DType compute = float_compute_dtype(x.dtype());
  Tensor planes =
      b.reshape(cast_if(b, x, compute), Shape{xs[0], channels, Expr(kernel_size), Expr(positions)});
  std::optional<Tensor> sum;
  for (int64_t o = 0; o < kernel_size; ++o) {
    // The offset's block index for every image position, or -1.
    std::vector<double> table(static_cast<size_t>(image_size), -1);
    bool any = false;
    for (int64_t p = 0; p < image_size; ++p) {
      int64_t rest_p = p, rest_o = o, q = 0, scale = 1;
      bool hit = true;
      for (size_t i = k; i-- > 0;) {
        const int64_t pi = rest_p % image[i], oi = rest_o % block[i];
        rest_p /= image[i];
        rest_o /= block[i];
        const int64_t at = pi + pads[i] - oi * dilations[i];
        if (at < 0 || at % strides[i] != 0 || at / strides[i] >= blocks[i]) {
          hit = false;
          break;
        }
        q += at / strides[i] * scale;
        scale *= blocks[i];
      }
      if (hit) table[static_cast<size_t>(p)] = static_cast<double>(q), any = true;
    }
    if (!any) continue;  // an offset that lands only in the padding
    std::vector<double> index(table), mask(table.size());
    for (size_t p = 0; p < table.size(); ++p) {
      mask[p] = table[p] >= 0 ? 1 : 0;
      index[p] = std::max(table[p], 0.0);
    }
    const std::vector<int64_t> len = {image_size};
    Tensor plane = b.reshape(b.slice(planes, SliceAttrs{{2}, {o}, {o + 1}, {1}}),
                             Shape{xs[0], channels, Expr(positions)});
    Tensor value = b.gather(plane, b.constant(ConstantAttrs{DType::i64, len, index}), 2);
    value =
        b.where(b.constant(ConstantAttrs{DType::boolean, len, mask}), value, b.scalar(0, compute));
    sum = sum ? b.add(*sum, value) : value;
  }
  Shape out = {xs[0], channels};
  for (int64_t d : image)
    out.push_back(Expr(d));
  Tensor y = sum ? b.reshape(*sum, out) : b.broadcast_to(b.scalar(0, compute), out);
  ctx.set_output(0, cast_if(b, y, x.dtype()));
}

}  // namespace

void register_sample_ops(ConverterTable& table) {
  table["GridSample"] = convert_grid_sample;
  table["AffineGrid"] = convert_affine_grid;
  table["Col2Im"] = convert_col2im;
}

}  // namespace autofuse::frontend::onnx_import
