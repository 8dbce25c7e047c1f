// Ops that select or join parts of tensors: Slice, Gather, Concat, Split,
// Pad (constant, edge, reflect, wrap). On known values (shape computations)
// Slice, Gather and Concat fold at import; a Slice whose bounds are
// symbolic becomes a gather of an iota.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

/// Slice bounds at least this large act as infinite (as in graph
/// inference); clamping them first keeps the index arithmetic in range.
constexpr int64_t kBig = int64_t{1} << 62;

int64_t clamp_big(int64_t v) {
  return std::clamp(v, -kBig, kBig);
}

/// The positions data[start:end:step] selects from a list of length n
/// (Python/ONNX clamping).
std::vector<int64_t> slice_positions(int64_t n, int64_t start, int64_t end, int64_t step) {
  start = clamp_big(start);
  end = clamp_big(end);
  std::vector<int64_t> out;
  if (step > 0) {
    const int64_t s = start < 0 ? std::max(start + n, int64_t{0}) : std::min(start, n);
    const int64_t e = end < 0 ? std::max(end + n, int64_t{0}) : std::min(end, n);
    for (int64_t i = s; i < e; i += step)
      out.push_back(i);
  } else {
    const int64_t s = start < 0 ? std::max(start + n, int64_t{-1}) : std::min(start, n - 1);
    const int64_t e = end < 0 ? std::max(end + n, int64_t{-1}) : std::min(end, n - 1);
    for (int64_t i = s; i > e; i += step)
      out.push_back(i);
  }
  return out;
}

/// A symbolic start/end clamped into [0, dim] for a forward slice.
sym::Expr clamp_bound(NodeContext& ctx, const sym::Expr& e, const sym::Expr& dim) {
  if (std::optional<int64_t> c = e.as_const()) {
    if (*c >= kBig) return dim;
    if (*c <= -kBig) return 0;
  }
  if (proven_non_negative(e)) return sym::proven_le(e, dim) ? e : sym::min(e, dim);
  if (sym::value_range(e).hi < 0) {
    const sym::Expr from_end = dim + e;
    return proven_non_negative(from_end) ? from_end : sym::max(from_end, 0);
  }
  ctx.fail(
      fmt::format("slice bound {} may be negative or not; autofuse needs its sign", e.to_string()));
  return e;  // not reached: fail throws
}

void convert_slice(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  const std::vector<sym::Expr> starts = require_known(ctx, 1, "starts");
  const std::vector<sym::Expr> ends = require_known(ctx, 2, "ends");
  const size_t n = starts.size();
  if (ends.size() != n) ctx.fail(fmt::format("{} starts but {} ends", n, ends.size()));
  std::vector<int64_t> axes, steps(n, 1);
  if (ctx.has_input(3)) {
    axes = require_const_ints(ctx, 3, "axes");
  } else {
    for (size_t i = 0; i < n; ++i)
      axes.push_back(static_cast<int64_t>(i));
  }
  if (ctx.has_input(4)) steps = require_const_ints(ctx, 4, "steps");
  if (axes.size() != n || steps.size() != n)
    ctx.fail(fmt::format("starts, ends, axes and steps differ in length: {}, {}, {}, {}", n,
                         ends.size(), axes.size(), steps.size()));
  for (size_t i = 0; i < n; ++i) {
    axes[i] = normalize_axis(ctx, axes[i], rank, "axis");
    if (steps[i] == 0) ctx.fail(fmt::format("step for axis {} is 0", axes[i]));
  }

  // A known list sliced by constants stays known.
  const bool all_const =
      std::all_of(starts.begin(), starts.end(), [](auto& e) { return e.is_const(); }) &&
      std::all_of(ends.begin(), ends.end(), [](auto& e) { return e.is_const(); });
  if (all_const && rank == 1 && n == 1) {
    if (std::optional<std::vector<sym::Expr>> known = ctx.known_ints(0)) {
      std::vector<sym::Expr> out;
      for (int64_t p : slice_positions(static_cast<int64_t>(known->size()), *starts[0].as_const(),
                                       *ends[0].as_const(), steps[0]))
        out.push_back((*known)[p]);
      return ctx.set_known_output(0, std::move(out), ctx.input_dtype(0), false);
    }
  }

  SliceAttrs attrs;
  std::vector<size_t> symbolic;
  for (size_t i = 0; i < n; ++i) {
    if (starts[i].is_const() && ends[i].is_const()) {
      attrs.axes.push_back(axes[i]);
      attrs.starts.push_back(*starts[i].as_const());
      attrs.ends.push_back(*ends[i].as_const());
      attrs.steps.push_back(steps[i]);
    } else {
      symbolic.push_back(i);
    }
  }
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  if (!attrs.axes.empty()) x = b.slice(x, attrs, symbolic.empty() ? output_name(ctx, 0) : "");
  // Symbolic bounds: gather iota(len) * step + start along the axis.
  for (size_t k = 0; k < symbolic.size(); ++k) {
    const size_t i = symbolic[k];
    if (steps[i] < 0) ctx.fail("a slice with symbolic bounds needs a positive step");
    const sym::Expr& dim = x.shape()[axes[i]];
    const sym::Expr first = clamp_bound(ctx, starts[i], dim);
    const sym::Expr stop = clamp_bound(ctx, ends[i], dim);
    if (!proven_non_negative(first))
      ctx.fail(fmt::format("slice start {} may be negative", first.to_string()));
    sym::Expr len = steps[i] == 1 ? stop - first : sym::ceildiv(stop - first, steps[i]);
    if (!proven_non_negative(len)) len = sym::max(len, 0);
    Tensor index = b.iota(DType::i64, {len}, 0);
    if (steps[i] != 1) index = b.mul(index, b.scalar(static_cast<double>(steps[i]), DType::i64));
    if (first != 0) index = b.add(index, size_tensor(b, first, DType::i64));
    x = b.gather(x, index, axes[i], k + 1 == symbolic.size() ? output_name(ctx, 0) : "");
  }
  ctx.set_output(0, x);
}

void convert_gather(NodeContext& ctx) {
  const auto rank = static_cast<int64_t>(ctx.input_shape(0).size());
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank, "axis");
  if (rank == 1) {
    std::optional<std::vector<sym::Expr>> data = ctx.known_ints(0);
    std::optional<std::vector<sym::Expr>> indices = data ? ctx.known_ints(1) : std::nullopt;
    if (indices && ctx.input_shape(1).size() <= 1 &&
        std::all_of(indices->begin(), indices->end(), [](auto& e) { return e.is_const(); })) {
      const auto n = static_cast<int64_t>(data->size());
      std::vector<sym::Expr> out;
      for (const sym::Expr& e : *indices) {
        int64_t k = *e.as_const();
        if (k < -n || k >= n)
          ctx.fail(fmt::format("index {} is out of range for {} elements", k, n));
        out.push_back((*data)[k < 0 ? k + n : k]);
      }
      return ctx.set_known_output(0, std::move(out), ctx.input_dtype(0),
                                  ctx.input_shape(1).empty());
    }
  }
  ctx.set_output(0, ctx.builder().gather(ctx.input(0), ctx.input(1), axis, output_name(ctx, 0)));
}

void convert_concat(NodeContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) ctx.fail("needs at least one input");
  const int64_t axis = ctx.attr_int("axis");
  bool known = true;
  std::vector<sym::Expr> joined;
  for (int i = 0; i < n && known; ++i) {
    std::optional<std::vector<sym::Expr>> k = ctx.known_ints(i);
    known = k && ctx.input_shape(i).size() == 1 && ctx.input_dtype(i) == ctx.input_dtype(0);
    if (known) joined.insert(joined.end(), k->begin(), k->end());
  }
  if (known && (axis == 0 || axis == -1))
    return ctx.set_known_output(0, std::move(joined), ctx.input_dtype(0), false);
  if (n == 1) return ctx.forward_input(0, 0);
  std::vector<Tensor> parts;
  for (int i = 0; i < n; ++i)
    parts.push_back(ctx.input(i));
  ctx.set_output(0, ctx.builder().concat(parts, axis, output_name(ctx, 0)));
}

void convert_split(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  const int64_t axis =
      normalize_axis(ctx, ctx.attr_int("axis", 0), static_cast<int64_t>(in.size()), "axis");
  const sym::Expr dim = in[axis];
  const int outputs = ctx.num_outputs();
  std::vector<sym::Expr> sizes;
  if (ctx.has_input(1)) {
    sizes = require_known(ctx, 1, "split");
  } else if (ctx.has_attr("num_outputs")) {
    // Opset 18: equal chunks of ceil(dim / n), the last one smaller.
    const int64_t parts = ctx.attr_int("num_outputs");
    if (parts != outputs)
      ctx.fail(fmt::format("num_outputs is {} but the node has {} outputs", parts, outputs));
    const sym::Expr chunk = sym::ceildiv(dim, parts);
    sizes.assign(parts - 1, chunk);
    sizes.push_back(dim - chunk * (parts - 1));
  } else {
    if (outputs < 1) ctx.fail("needs at least one output");
    if (std::optional<int64_t> c = dim.as_const(); c && *c % outputs != 0)
      ctx.fail(
          fmt::format("dim {} of size {} does not split into {} equal parts", axis, *c, outputs));
    sizes.assign(outputs, sym::floordiv(dim, outputs));
  }
  if (static_cast<int>(sizes.size()) != outputs)
    ctx.fail(fmt::format("{} split sizes for {} outputs", sizes.size(), outputs));
  std::vector<std::string> names;
  for (int i = 0; i < outputs; ++i)
    names.push_back(output_name(ctx, i));
  std::vector<Tensor> parts = ctx.builder().split(ctx.input(0), axis, sizes, names);
  for (int i = 0; i < outputs; ++i)
    ctx.set_output(i, parts[i]);
}

enum class PadMode { constant, edge, reflect, wrap };

PadMode pad_mode(NodeContext& ctx) {
  const std::string mode = ctx.attr_string("mode", "constant");
  if (mode == "edge") return PadMode::edge;
  if (mode == "reflect") return PadMode::reflect;
  if (mode == "wrap") {
    if (ctx.opset() < 19) ctx.fail("mode 'wrap' exists from opset 19 on");
    return PadMode::wrap;
  }
  // (A return after the call: g++ does not count a virtual [[noreturn]] call
  // as the end of a function.)
  if (mode != "constant")
    ctx.fail(fmt::format("mode '{}' is not one of 'constant', 'edge', 'reflect', 'wrap'", mode));
  return PadMode::constant;
}

/// Position `p` of the axis padded NumPy's way (p < 0: before the data,
/// p >= n: after it) -> the input position it copies; n >= 1. Reflect is
/// periodic with period 2(n-1) (pads longer than n-1 reflect again, as
/// numpy.pad does), wrap with period n.
int64_t pad_source(PadMode mode, int64_t p, int64_t n) {
  auto mod = [](int64_t a, int64_t m) { return ((a % m) + m) % m; };
  switch (mode) {
    case PadMode::edge:
      return std::clamp(p, int64_t{0}, n - 1);
    case PadMode::wrap:
      return mod(p, n);
    case PadMode::reflect: {
      if (n == 1) return 0;
      const int64_t q = mod(p, 2 * (n - 1));
      return q < n ? q : 2 * (n - 1) - q;
    }
    case PadMode::constant:
      break;
  }
  AF_CHECK(false, "pad_source called for constant mode");
  return 0;
}

/// `x` padded along `axis` with `begin` and `end` (>= 0) copies of its own
/// elements (edge, reflect, wrap). Pads within one period become slices of
/// x (negative steps for reflect) concatenated around it, which works for
/// symbolic dims too; longer pads of a static dim gather x at constant
/// positions.
Tensor pad_by_copies(NodeContext& ctx, const Tensor& x, int64_t axis, int64_t begin, int64_t end,
                     PadMode mode, std::string_view mode_name) {
  GraphBuilder& b = ctx.builder();
  const sym::Expr n = x.shape()[axis];
  const sym::ShapeEnv& env = b.graph().shape_env();
  auto at_least = [&](int64_t k) { return env.proven(sym::Expr(k), sym::Rel::Le, n); };
  if (!at_least(1))
    ctx.fail(fmt::format("axis {} has size {}: mode '{}' cannot pad an axis that {} empty", axis,
                         n.to_string(), mode_name, n.is_const() ? "is" : "may be"));
  auto slice = [&](int64_t start, int64_t stop, int64_t step) {
    return b.slice(x, SliceAttrs{{axis}, {start}, {stop}, {step}});
  };
  auto repeat = [&](const Tensor& one, int64_t count) {
    Shape shape = one.shape();
    shape[axis] = count;
    return b.broadcast_to(one, shape);
  };
  const int64_t longest = std::max(begin, end);
  std::optional<Tensor> before, after;
  if (mode == PadMode::edge) {
    if (begin > 0) before = repeat(slice(0, 1, 1), begin);
    if (end > 0) after = repeat(slice(-1, kSliceEnd, 1), end);
  } else if (mode == PadMode::reflect && at_least(longest + 1)) {
    // x[begin:0:-1] and x[-2:-2-end:-1]: the mirror images without the edge.
    if (begin > 0) before = slice(begin, 0, -1);
    if (end > 0) after = slice(-2, -2 - end, -1);
  } else if (mode == PadMode::wrap && at_least(longest)) {
    if (begin > 0) before = slice(-begin, kSliceEnd, 1);
    if (end > 0) after = slice(0, end, 1);
  } else {
    const std::optional<int64_t> size = n.as_const();
    if (!size)
      ctx.fail(
          fmt::format("mode '{}' pads axis {} by {}, which needs its size {} to be at least "
                      "{}; autofuse cannot prove that",
                      mode_name, axis, longest, n.to_string(),
                      mode == PadMode::reflect ? longest + 1 : longest));
    ConstantAttrs positions{DType::i64, {begin + *size + end}, {}};
    for (int64_t p = -begin; p < *size + end; ++p)
      positions.values.push_back(static_cast<double>(pad_source(mode, p, *size)));
    return b.gather(x, b.constant(std::move(positions)), axis);
  }
  std::vector<Tensor> parts;
  if (before) parts.push_back(*before);
  parts.push_back(x);
  if (after) parts.push_back(*after);
  return parts.size() == 1 ? x : b.concat(parts, axis);
}

/// One axis of a constant Pad done by a gather (static pads and size).
struct GatherPad {
  int64_t axis;
  int64_t begin;
  int64_t size;
  int64_t end;
};

/// The axis as a GatherPad when its pads and size are numbers (the index
/// arithmetic needs them), nullopt otherwise. A negative pad was a crop
/// (done before): 0 here.
std::optional<GatherPad> gather_pad(const Tensor& x, int64_t axis, const sym::Expr& begin_pad,
                                    const sym::Expr& end_pad) {
  const std::optional<int64_t> begin = begin_pad.as_const(), end = end_pad.as_const();
  const std::optional<int64_t> size = x.shape().at(static_cast<size_t>(axis)).as_const();
  if (!begin || !end || !size || *size < 1) return std::nullopt;
  return GatherPad{axis, std::max<int64_t>(*begin, 0), *size, std::max<int64_t>(*end, 0)};
}

/// Constant padding of static dims as elementwise ops a kernel fuses:
/// out[p] = (p_a in [begin_a, begin_a + n_a) for every padded axis a) ?
/// x[clamp(p - begin)] : value, with x read by a chain of gathers (one per
/// axis, at the clamped positions) directly on x, so the chain is one view
/// of x's buffer and the whole pad one kernel with its neighbours (a concat
/// of a constant block and x has pieces of unequal extent, which only a
/// library copy does).
Tensor pad_constant_by_gathers(GraphBuilder& b, const Tensor& x, const Tensor& value,
                               const std::vector<GatherPad>& pads) {
  const auto i64 = [&](int64_t v) { return b.scalar(static_cast<double>(v), DType::i64); };
  Tensor gathered = x;
  std::optional<Tensor> inside;
  for (const GatherPad& p : pads) {
    const int64_t padded = p.begin + p.size + p.end;
    const Tensor position = b.iota(DType::i64, {sym::Expr(padded)}, 0);
    const Tensor source = b.sub(position, i64(p.begin));
    const Tensor clamped =
        b.binary(OpKind::Max, b.binary(OpKind::Min, source, i64(p.size - 1)), i64(0));
    gathered = b.gather(gathered, clamped, p.axis);
    // The mask varies along the axis only: [padded, 1, ..., 1] broadcasts there.
    Shape mask_shape(static_cast<size_t>(x.rank() - p.axis), sym::Expr(1));
    mask_shape[0] = sym::Expr(padded);
    const Tensor mask_position = b.iota(DType::i64, mask_shape, 0);
    const Tensor in = b.binary(OpKind::And, b.binary(OpKind::Ge, mask_position, i64(p.begin)),
                               b.binary(OpKind::Lt, mask_position, i64(p.begin + p.size)));
    inside = inside ? b.binary(OpKind::And, *inside, in) : in;
  }
  return b.where(*inside, gathered, value);
}

void convert_pad(NodeContext& ctx) {
  const PadMode mode = pad_mode(ctx);
  const std::string mode_name = ctx.attr_string("mode", "constant");
  const Shape in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  const std::vector<sym::Expr> pads = require_known(ctx, 1, "pads");
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    for (int64_t a : require_const_ints(ctx, 3, "axes"))
      axes.push_back(normalize_axis(ctx, a, rank, "axis"));
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  const size_t n = axes.size();
  if (pads.size() != 2 * n)
    ctx.fail(fmt::format("pads has {} entries for {} axes (needs {})", pads.size(), n, 2 * n));
  for (const sym::Expr& p : pads) {
    if (mode != PadMode::constant && !p.is_const())
      ctx.fail(fmt::format("the pads (input 1, '{}') must be constants in mode '{}', but hold {}",
                           ctx.node().input(1), mode_name, p.to_string()));
    if (!p.is_const() && !proven_non_negative(p))
      ctx.fail(
          fmt::format("pad {} may be negative; symbolic pads must be non-negative", p.to_string()));
  }

  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  // Negative pads crop: one slice for all of them, before any padding.
  SliceAttrs crop;
  for (size_t i = 0; i < n; ++i) {
    const std::optional<int64_t> begin = pads[i].as_const(), end = pads[i + n].as_const();
    if ((begin && *begin < 0) || (end && *end < 0)) {
      crop.axes.push_back(axes[i]);
      crop.starts.push_back(begin && *begin < 0 ? -*begin : 0);
      crop.ends.push_back(end && *end < 0 ? *end : kSliceEnd);
      crop.steps.push_back(1);
    }
  }
  if (!crop.axes.empty()) x = b.slice(x, crop);
  if (mode != PadMode::constant) {
    for (size_t i = 0; i < n; ++i) {
      const int64_t begin = std::max<int64_t>(*pads[i].as_const(), 0);
      const int64_t end = std::max<int64_t>(*pads[i + n].as_const(), 0);
      if (begin > 0 || end > 0) x = pad_by_copies(ctx, x, axes[i], begin, end, mode, mode_name);
    }
    return ctx.set_output(0, x);
  }
  Tensor value = ctx.has_input(2) ? ctx.input(2) : b.scalar(0, x.dtype());
  if (value.rank() > 0) value = b.reshape(value, {});
  // Symbolic pads or sizes: concats, first, so that the gathers of the
  // static axes read the result directly (one chain, one where).
  std::vector<GatherPad> gathered;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Tensor> parts;
    auto block = [&](const sym::Expr& size) {
      Shape shape = x.shape();
      shape[axes[i]] = size;
      return b.broadcast_to(value, shape);
    };
    const sym::Expr begin = pads[i], end = pads[i + n];
    const bool pad_begin = !begin.is_const() || *begin.as_const() > 0;
    const bool pad_end = !end.is_const() || *end.as_const() > 0;
    if (!pad_begin && !pad_end) continue;
    if (std::optional<GatherPad> g = gather_pad(x, axes[i], begin, end)) {
      gathered.push_back(*g);
      continue;
    }
    if (pad_begin) parts.push_back(block(begin));
    parts.push_back(x);
    if (pad_end) parts.push_back(block(end));
    x = b.concat(parts, axes[i]);
  }
  if (!gathered.empty()) x = pad_constant_by_gathers(b, x, value, gathered);
  ctx.set_output(0, x);
}

}  // namespace

void register_select_ops(ConverterTable& table) {
  table["Slice"] = convert_slice;
  table["Gather"] = convert_gather;
  table["Concat"] = convert_concat;
  table["Split"] = convert_split;
  table["Pad"] = convert_pad;
}

}  // namespace autofuse::frontend::onnx_import
