// ONNX ops built from index arithmetic (iota, compares, where, gather):
// ArgMax, ArgMin, Hardmax, TopK, Trilu, EyeLike, OneHot, CumSum, the
// gathers and scatters (GatherElements, GatherND, ReverseSequence,
// ScatterElements, ScatterND), and the rearrangements CenterCropPad,
// DepthToSpace, SpaceToDepth (slice/concat, reshape + transpose).
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

/// Integers beyond this are not exact in a graph constant (a double).
constexpr int64_t kMaxExactInt = int64_t{1} << 53;

Tensor i64_scalar(GraphBuilder& b, int64_t v) {
  return b.scalar(static_cast<double>(std::clamp(v, -kMaxExactInt, kMaxExactInt)), DType::i64);
}

/// `x` with dim `axis` removed (what keepdims=0 gives).
Shape without_axis(const Shape& shape, int64_t axis) {
  Shape out = shape;
  out.erase(out.begin() + axis);
  return out;
}

// ---- ArgMax, ArgMin, Hardmax -------------------------------------------------

/// The int64 index along `axis` of the first (or last) maximum (or minimum)
/// of x, keepdims shape. As in NumPy, NaN beats every number: a row holding
/// NaN gives its first (last) NaN. reduce_max/min propagate NaN, so the
/// extreme m is NaN exactly for such rows, where no x == m holds.
Tensor arg_extreme(GraphBuilder& b, Tensor x, int64_t axis, bool max, bool last) {
  Tensor m = b.reduce(max ? OpKind::ReduceMax : OpKind::ReduceMin, x, {axis}, true);
  Tensor hit = b.binary(OpKind::Eq, x, m);
  if (is_float(x.dtype())) hit = b.binary(OpKind::Or, hit, b.unary(OpKind::IsNan, x));
  Tensor idx = b.iota(DType::i64, x.shape(), axis);
  if (last) return b.reduce(OpKind::ReduceMax, b.where(hit, idx, i64_scalar(b, -1)), {axis}, true);
  return b.reduce(OpKind::ReduceMin, b.where(hit, idx, i64_scalar(b, kMaxExactInt)), {axis}, true);
}

template <bool kMax>
void convert_arg_extreme(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = numeric_input(ctx, 0);
  if (x.rank() == 0) ctx.fail("the input is a scalar; it needs an axis to reduce");
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank(), "axis");
  if (sym::proven_eq(x.shape()[axis], 0)) ctx.fail("the reduced axis is empty");
  Tensor idx = arg_extreme(b, x, axis, kMax, ctx.attr_int("select_last_index", 0) != 0);
  if (ctx.attr_int("keepdims", 1) == 0) idx = b.reshape(idx, without_axis(x.shape(), axis));
  ctx.set_output(0, idx);
}

// Hardmax-13: 1 at the first maximum along `axis`, 0 elsewhere.
void convert_hardmax(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = numeric_input(ctx, 0);
  if (x.rank() == 0) ctx.fail("the input is a scalar; Hardmax needs an axis");
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank(), "axis");
  Tensor first = arg_extreme(b, x, axis, /*max=*/true, /*last=*/false);
  Tensor one_hot = b.binary(OpKind::Eq, b.iota(DType::i64, x.shape(), axis), first);
  ctx.set_output(0, b.cast(one_hot, x.dtype()));
}

// ---- Triangles, identities, one-hot ----------------------------------------------

/// Input `i` as a rank-0 int64 tensor: a constant when known, else the
/// run-time value (rank 0 or a single element).
Tensor int_scalar_input(NodeContext& ctx, int i, std::string_view what) {
  if (std::optional<std::vector<sym::Expr>> known = ctx.known_ints(i); known && known->size() == 1)
    if (std::optional<int64_t> c = (*known)[0].as_const()) return i64_scalar(ctx.builder(), *c);
  Tensor t = ctx.input(i);
  if (!is_integer(t.dtype()) || t.rank() > 1 || (t.rank() == 1 && t.shape()[0] != sym::Expr(1)))
    ctx.fail(fmt::format("the {} (input {}) must be an integer scalar, not {}", what, i,
                         t.type().to_string()));
  return cast_if(ctx.builder(), t.rank() == 0 ? t : ctx.builder().reshape(t, {}), DType::i64);
}

/// col - row over the last two dims of `shape` (int64, shape [M, N]).
Tensor diagonal_offset(GraphBuilder& b, const Shape& shape) {
  const Shape mn = {shape[shape.size() - 2], shape[shape.size() - 1]};
  return b.sub(b.iota(DType::i64, mn, 1), b.iota(DType::i64, mn, 0));
}

// Trilu-14: keep the elements with col - row >= k (upper) or <= k (lower).
void convert_trilu(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  if (x.rank() < 2) ctx.fail(fmt::format("the input has rank {}; Trilu needs >= 2", x.rank()));
  Tensor k = ctx.has_input(1) ? int_scalar_input(ctx, 1, "k") : i64_scalar(b, 0);
  const bool upper = ctx.attr_int("upper", 1) != 0;
  Tensor d = diagonal_offset(b, x.shape());
  Tensor keep = b.binary(upper ? OpKind::Ge : OpKind::Le, d, k);
  ctx.set_output(0, b.where(keep, x, b.scalar(0, x.dtype())));
}

// EyeLike: ones on diagonal k of a matrix shaped like the input.
void convert_eye_like(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  const Shape shape = ctx.input_shape(0);
  if (shape.size() != 2)
    ctx.fail(fmt::format("the input has rank {}; EyeLike needs a matrix", shape.size()));
  const DType dt = ctx.has_attr("dtype") ? dtype_of_onnx(ctx, ctx.attr_int("dtype"), "dtype")
                                         : ctx.input_dtype(0);
  Tensor eye = b.binary(OpKind::Eq, diagonal_offset(b, shape), i64_scalar(b, ctx.attr_int("k", 0)));
  ctx.set_output(0, cast_if(b, eye, dt));
}

// OneHot-11: depth (known at import) inserted at `axis`; values = [off, on].
// Indices in [-depth, depth) select (negative ones count from the end);
// others give an all-off row. Float indices compare as floats.
void convert_one_hot(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor indices = numeric_input(ctx, 0);
  const std::optional<HostTensor> depth_value = ctx.constant(1);
  if (!depth_value || depth_value->numel() != 1)
    ctx.fail(fmt::format("depth (input 1, '{}') must be a constant scalar, known at import",
                         ctx.node().input(1)));
  const double depth_f = depth_value->get_f64(0);
  if (!(depth_f >= 1) || depth_f > static_cast<double>(kMaxExactInt))
    ctx.fail(fmt::format("depth {} is not a positive size", depth_f));
  const auto depth = static_cast<int64_t>(depth_f);
  const int rank = indices.rank();
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), rank + 1, "axis");

  Tensor values = ctx.input(2);
  if (values.rank() != 1 || values.shape()[0] != sym::Expr(2))
    ctx.fail(
        fmt::format("values must be [off_value, on_value], not {}", values.type().to_string()));
  auto pick = [&](int64_t i) {
    return b.reshape(b.slice(values, SliceAttrs{{0}, {i}, {i + 1}, {1}}), {});
  };
  Tensor off = pick(0), on = pick(1);

  const DType idt = is_float(indices.dtype()) ? DType::f64 : DType::i64;
  Tensor idx = cast_if(b, indices, idt);
  Tensor d = b.scalar(static_cast<double>(depth), idt);
  idx = b.where(b.binary(OpKind::Lt, idx, b.scalar(0, idt)), b.add(idx, d), idx);
  Shape out_shape = indices.shape();
  out_shape.insert(out_shape.begin() + axis, sym::Expr(depth));
  Shape unsqueezed = indices.shape();
  unsqueezed.insert(unsqueezed.begin() + axis, sym::Expr(1));
  Tensor hit = b.binary(OpKind::Eq, b.iota(idt, out_shape, axis), b.reshape(idx, unsqueezed));
  ctx.set_output(0, b.where(hit, on, off));
}

// TopK: the k largest (smallest) along `axis`, in order, with their int64
// indices; equal values keep index order, NaN counts as the largest (as in
// NumPy's sort). Each element's rank is the number of elements that come
// before it (an O(n^2) compare per row, fused into one reduction); output
// slot r then picks the element of rank r.
void convert_topk(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = numeric_input(ctx, 0);
  if (x.rank() == 0) ctx.fail("the input is a scalar; TopK needs an axis");
  const std::vector<int64_t> k = require_const_ints(ctx, 1, "K");
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank(), "axis");
  const Shape ds = x.shape();  // copied: new nodes may move the graph's storage
  if (k.size() != 1 || k[0] < 0 || !sym::proven_le(sym::Expr(k[0]), ds[axis]))
    ctx.fail(fmt::format("K must be one value in [0, {}]", ds[axis].to_string()));
  const bool largest = ctx.attr_int("largest", 1) != 0;
  // Pair space: j (the rival) at axis, i at axis + 1.
  Shape at_i = ds, at_j = ds;
  at_i.insert(at_i.begin() + axis, sym::Expr(1));
  at_j.insert(at_j.begin() + axis + 1, sym::Expr(1));
  Tensor xi = b.reshape(x, at_i), xj = b.reshape(x, at_j);
  Shape pair(ds.size() + 1, sym::Expr(1));
  pair[axis] = pair[axis + 1] = ds[axis];
  Tensor j_first =
      b.binary(OpKind::Lt, b.iota(DType::i64, pair, axis), b.iota(DType::i64, pair, axis + 1));
  Tensor better = b.binary(largest ? OpKind::Gt : OpKind::Lt, xj, xi);
  Tensor same = b.binary(OpKind::Eq, xj, xi);
  if (is_float(x.dtype())) {
    Tensor nan_j = b.unary(OpKind::IsNan, xj), nan_i = b.unary(OpKind::IsNan, xi);
    Tensor nan_wins = largest ? b.binary(OpKind::And, nan_j, b.unary(OpKind::Not, nan_i))
                              : b.binary(OpKind::And, nan_i, b.unary(OpKind::Not, nan_j));
    better = b.binary(OpKind::Or, better, nan_wins);
    same = b.binary(OpKind::Or, same, b.binary(OpKind::And, nan_j, nan_i));
  }
  Tensor before = b.binary(OpKind::Or, better, b.binary(OpKind::And, same, j_first));
  Tensor rank = b.reduce_sum(b.cast(before, DType::i64), {axis}, /*keepdims=*/false);
  Shape slots(ds.size() + 1, sym::Expr(1));
  slots[axis] = sym::Expr(k[0]);
  Tensor pick = b.binary(OpKind::Eq, b.iota(DType::i64, slots, axis), b.reshape(rank, at_i));
  auto select = [&](Tensor v) {
    return b.reduce_sum(b.where(pick, v, b.scalar(0, v.dtype())), {axis + 1}, false);
  };
  ctx.set_output(0, select(xi));
  if (ctx.num_outputs() > 1 && ctx.has_output(1))
    ctx.set_output(1, select(b.iota(DType::i64, at_i, axis + 1)));
}

// CenterCropPad: each listed axis cropped (start (dim - size) / 2 rounded
// down) or zero-padded (begin (size - dim) / 2 rounded down) to `shape`.
void convert_center_crop_pad(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor y = ctx.input(0);
  const std::vector<int64_t> sizes = require_const_ints(ctx, 1, "shape");
  std::vector<int64_t> axes = ctx.attr_ints("axes", std::vector<int64_t>{});
  if (!ctx.has_attr("axes"))
    for (int64_t a = 0; a < y.rank(); ++a)
      axes.push_back(a);
  if (axes.size() != sizes.size())
    ctx.fail(fmt::format("shape has {} values for {} axes", sizes.size(), axes.size()));
  for (size_t n = 0; n < axes.size(); ++n) {
    const int64_t a = normalize_axis(ctx, axes[n], y.rank(), "axis"), size = sizes[n];
    const std::optional<int64_t> dim = y.shape()[a].as_const();
    if (!dim) ctx.unsupported(fmt::format("CenterCropPad of the symbolic dim {}", a));
    if (size < 0) ctx.fail(fmt::format("shape value {} is negative", size));
    if (size < *dim) {
      const int64_t start = (*dim - size) / 2;
      y = b.slice(y, SliceAttrs{{a}, {start}, {start + size}, {1}});
    } else if (size > *dim) {
      const int64_t before = (size - *dim) / 2, after = size - *dim - before;
      auto zeros = [&](int64_t len) {
        Shape s = y.shape();
        s[a] = sym::Expr(len);
        return b.broadcast_to(b.scalar(0, y.dtype()), s);
      };
      std::vector<Tensor> parts;
      if (before > 0) parts.push_back(zeros(before));
      parts.push_back(y);
      parts.push_back(zeros(after));
      y = b.concat(parts, a);
    }
  }
  ctx.set_output(0, y);
}

// ---- CumSum ----------------------------------------------------------------------

// CumSum: out_i = sum of x_j over j <= i (j < i exclusive; j >= i, j > i
// reversed), as a masked sum over a pair of axes (j, i): O(n^2) per row, so
// meant for moderate axis lengths; it fuses into one reduction kernel.
void convert_cumsum(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = numeric_input(ctx, 0);
  const std::vector<int64_t> axis_v = require_const_ints(ctx, 1, "axis");
  if (axis_v.size() != 1) ctx.fail("axis must hold one value");
  const int rank = x.rank();
  if (rank == 0) ctx.fail("the input is a scalar; CumSum needs an axis");
  const int64_t axis = normalize_axis(ctx, axis_v[0], rank, "axis");
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  const sym::Expr n = x.shape()[axis];
  // mask[j, i, 1...]: does x_j count towards out_i?
  Tensor j = b.iota(DType::i64, {n, n}, 0), i = b.iota(DType::i64, {n, n}, 1);
  const OpKind rel =
      reverse ? (exclusive ? OpKind::Gt : OpKind::Ge) : (exclusive ? OpKind::Lt : OpKind::Le);
  Tensor mask = b.binary(rel, j, i);
  Shape mask_shape = {n, n};
  for (int64_t d = axis + 1; d < rank; ++d)
    mask_shape.push_back(sym::Expr(1));
  mask = b.reshape(mask, mask_shape);
  Shape xj_shape = x.shape();
  xj_shape.insert(xj_shape.begin() + axis + 1, sym::Expr(1));
  Tensor terms = b.where(mask, b.reshape(x, xj_shape), b.scalar(0, x.dtype()));
  ctx.set_output(0, b.reduce_sum(terms, {axis}, /*keepdims=*/false));
}

// ---- Gathers -----------------------------------------------------------------------

/// An index into a dim of size `len` as int64, negative values counted from
/// the end; `in_range` marks the valid ones ([-len, len) before wrapping).
struct BoundedIndex {
  Tensor index;
  Tensor in_range;
};
BoundedIndex wrap_index(GraphBuilder& b, Tensor index, const sym::Expr& len) {
  Tensor i = cast_if(b, index, DType::i64);
  Tensor n = size_tensor(b, len, DType::i64);
  i = b.where(b.binary(OpKind::Lt, i, i64_scalar(b, 0)), b.add(i, n), i);
  return {i, b.binary(OpKind::And, b.binary(OpKind::Ge, i, i64_scalar(b, 0)),
                      b.binary(OpKind::Lt, i, n))};
}

Tensor integer_input(NodeContext& ctx, int i, std::string_view what) {
  Tensor t = ctx.input(i);
  if (!is_integer(t.dtype()))
    ctx.fail(fmt::format("the {} (input {}) have dtype {}; they must be integers", what, i,
                         dtype_name(t.dtype())));
  return t;
}

// GatherElements: out[p] = data[p with p[axis] replaced by indices[p]].
void convert_gather_elements(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor data = ctx.input(0), indices = integer_input(ctx, 1, "indices");
  const int rank = data.rank();
  if (rank == 0 || indices.rank() != rank)
    ctx.fail(fmt::format("data {} and indices {} need the same rank >= 1", data.type().to_string(),
                         indices.type().to_string()));
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank, "axis");
  const Shape ds = data.shape();  // copied: new nodes may move the graph's storage
  const Shape is = indices.shape();
  for (int d = 0; d < rank; ++d)
    if (d != axis && !sym::proven_le(is[d], ds[d]))
      ctx.fail(fmt::format("indices dim {} ({}) may exceed the data's ({})", d, is[d].to_string(),
                           ds[d].to_string()));
  const BoundedIndex idx = wrap_index(b, indices, ds[axis]);
  std::vector<Tensor> coords;
  for (int d = 0; d < rank; ++d)
    coords.push_back(d == axis ? idx.index : b.iota(DType::i64, is, d));
  ctx.set_output(0, gather_flat(b, data, rank, flat_index(b, coords, ds), idx.in_range));
}

/// The length of GatherND/ScatterND index tuples: the indices' last dim,
/// which must be a constant; -1 otherwise.
int64_t tuple_length(const Shape& indices_shape) {
  if (indices_shape.empty()) return -1;
  return indices_shape.back().as_const().value_or(-1);
}

// GatherND: out[l..., r...] = data[b..., indices[l..., :], r...] for the
// batch_dims leading dims b shared by data and indices.
void convert_gather_nd(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor data = ctx.input(0), indices = integer_input(ctx, 1, "indices");
  const Shape ds = data.shape(), is = indices.shape();
  const auto bd = static_cast<size_t>(ctx.attr_int("batch_dims", 0));
  const int64_t k = tuple_length(is);
  if (k < 0 || bd >= is.size() || bd + static_cast<size_t>(k) > ds.size())
    ctx.fail(fmt::format("indices {} with batch_dims {} do not index data {}",
                         indices.type().to_string(), bd, data.type().to_string()));
  for (size_t d = 0; d < bd; ++d)
    if (!sym::proven_eq(is[d], ds[d])) ctx.fail(fmt::format("batch dim {} differs", d));
  const Shape lead(is.begin(), is.end() - 1);
  std::vector<Tensor> coords;
  for (size_t d = 0; d < bd; ++d)
    coords.push_back(b.iota(DType::i64, lead, static_cast<int64_t>(d)));
  Tensor valid = b.broadcast_to(b.scalar(1, DType::boolean), lead);
  for (int64_t i = 0; i < k; ++i) {
    const auto last = static_cast<int64_t>(is.size()) - 1;
    Tensor comp = b.reshape(b.slice(indices, SliceAttrs{{last}, {i}, {i + 1}, {1}}), lead);
    const BoundedIndex idx = wrap_index(b, comp, ds[bd + static_cast<size_t>(i)]);
    coords.push_back(idx.index);
    valid = b.binary(OpKind::And, valid, idx.in_range);
  }
  const size_t n = bd + static_cast<size_t>(k);
  if (n == 0) return ctx.forward_input(0, 0);  // no index: the whole data
  Tensor flat = flat_index(b, coords, Shape(ds.begin(), ds.begin() + static_cast<long>(n)));
  ctx.set_output(0, gather_flat(b, data, n, b.broadcast_to(flat, lead), valid));
}

// ReverseSequence: along time_axis, the first sequence_lens[b] steps of
// batch entry b reversed, the rest copied.
void convert_reverse_sequence(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  const Shape ds = x.shape();
  const int64_t ta = ctx.attr_int("time_axis", 0), ba = ctx.attr_int("batch_axis", 1);
  if (x.rank() < 2 || ta == ba || ta < 0 || ta > 1 || ba < 0 || ba > 1)
    ctx.fail(fmt::format("time_axis {} and batch_axis {} must be 0 and 1 of an input of rank >= 2",
                         ta, ba));
  Shape len_shape(ds.size(), sym::Expr(1));
  len_shape[static_cast<size_t>(ba)] = ds[static_cast<size_t>(ba)];
  Tensor len = b.reshape(cast_if(b, integer_input(ctx, 1, "sequence_lens"), DType::i64), len_shape);
  Tensor t = b.iota(DType::i64, ds, ta);
  Tensor src = b.where(b.binary(OpKind::Lt, t, len), b.sub(b.sub(len, i64_scalar(b, 1)), t), t);
  std::vector<Tensor> coords;
  for (int64_t d = 0; d < x.rank(); ++d)
    coords.push_back(d == ta ? src : b.iota(DType::i64, ds, d));
  // A length beyond the time axis makes src leave it: rejected, not wrapped.
  Tensor valid = b.binary(OpKind::Lt, src, size_tensor(b, ds[static_cast<size_t>(ta)], DType::i64));
  ctx.set_output(0, gather_flat(b, x, ds.size(), flat_index(b, coords, ds), valid));
}

// ---- Scatters -------------------------------------------------------------------

/// The scatter result over a pair space: `match` (bool) pairs each output
/// position with the updates along `axis`; `upd` broadcasts to it, `data`
/// has the result's shape and `data_pair` is data with 1 inserted at
/// `axis`. Duplicate indices with reduction "none" (undefined in ONNX) add.
Tensor scatter_reduce(NodeContext& ctx, Tensor data, Tensor data_pair, Tensor match, Tensor upd,
                      int64_t axis) {
  GraphBuilder& b = ctx.builder();
  const std::string reduction = ctx.attr_string("reduction", "none");
  const DType dt = data.dtype();
  auto masked = [&](Tensor other) { return b.where(match, upd, other); };
  if (reduction == "none") {
    Tensor hit = b.reduce(OpKind::ReduceMax, b.cast(match, DType::u8), {axis}, false);
    Tensor sum = b.reduce_sum(masked(b.scalar(0, dt)), {axis}, false);
    return b.where(b.cast(hit, DType::boolean), sum, data);
  }
  if (reduction == "add") return b.add(data, b.reduce_sum(masked(b.scalar(0, dt)), {axis}, false));
  if (reduction == "mul")
    return b.mul(data, b.reduce(OpKind::ReduceProd, masked(b.scalar(1, dt)), {axis}, false));
  if (reduction != "max" && reduction != "min")
    ctx.fail(fmt::format("reduction \"{}\" is not one of none, add, mul, max, min", reduction));
  // Unmatched pairs hold data (neutral); the final max/min with data
  // covers rows whose every pair matched.
  const OpKind op = reduction == "max" ? OpKind::Max : OpKind::Min;
  Tensor extreme = b.reduce(reduction == "max" ? OpKind::ReduceMax : OpKind::ReduceMin,
                            masked(data_pair), {axis}, false);
  return b.binary(op, data, extreme);
}

/// Bool scatters compute on 0/1 bytes.
Tensor scatter_operand(NodeContext& ctx, int i) {
  Tensor t = ctx.input(i);
  return t.dtype() == DType::boolean ? ctx.builder().cast(t, DType::u8) : t;
}

// ScatterElements: data with data[p with p[axis] = indices[q]] combined
// with updates[q] (q ranging over indices). Pair space: data's shape with
// the indices' axis inserted after `axis`; indices smaller than the data
// along other dims are padded with a never-matching index.
void convert_scatter_elements(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor data = scatter_operand(ctx, 0), upd = scatter_operand(ctx, 2);
  Tensor indices = integer_input(ctx, 1, "indices");
  const Shape ds = data.shape(), is = indices.shape();
  const int rank = data.rank();
  if (rank == 0 || indices.rank() != rank || upd.type() != TensorType{data.dtype(), is})
    ctx.fail(fmt::format("data {}, indices {} and updates {} do not match", data.type().to_string(),
                         indices.type().to_string(), upd.type().to_string()));
  const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank, "axis");
  Tensor idx = wrap_index(b, indices, ds[axis]).index;  // out of range matches nothing
  for (int d = 0; d < rank; ++d) {
    if (d == axis || sym::proven_eq(is[d], ds[d])) continue;
    if (!sym::proven_le(is[d], ds[d]))
      ctx.fail(fmt::format("indices dim {} ({}) may exceed the data's ({})", d, is[d].to_string(),
                           ds[d].to_string()));
    Shape pad = idx.shape();
    pad[d] = ds[d] - is[d];
    idx = b.concat({idx, b.broadcast_to(i64_scalar(b, -1), pad)}, d);
    upd = b.concat({upd, b.broadcast_to(b.scalar(0, upd.dtype()), pad)}, d);
  }
  Shape pair_i = ds, pair_j = ds;  // positions at axis, updates at axis + 1
  pair_i.insert(pair_i.begin() + axis + 1, sym::Expr(1));
  pair_j[axis] = sym::Expr(1);
  pair_j.insert(pair_j.begin() + axis + 1, is[axis]);
  Shape iota_shape(pair_i.size(), sym::Expr(1));
  iota_shape[axis] = ds[axis];
  Tensor match = b.binary(OpKind::Eq, b.iota(DType::i64, iota_shape, axis), b.reshape(idx, pair_j));
  Tensor out =
      scatter_reduce(ctx, data, b.reshape(data, pair_i), match, b.reshape(upd, pair_j), axis + 1);
  ctx.set_output(0, cast_if(b, out, ctx.input_dtype(0)));
}

// ScatterND: data[indices[m, :]] (a slice of the trailing dims) combined
// with updates[m]. Pair space (L, M, rest...): L the flat positions of
// data's first k dims, M the index tuples.
void convert_scatter_nd(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor data = scatter_operand(ctx, 0), upd = scatter_operand(ctx, 2);
  Tensor indices = integer_input(ctx, 1, "indices");
  const Shape ds = data.shape(), is = indices.shape();
  const int64_t k = tuple_length(is);
  if (k < 1 || k > data.rank())
    ctx.fail(fmt::format("indices {} do not index data {}", indices.type().to_string(),
                         data.type().to_string()));
  const Shape lead(is.begin(), is.end() - 1), rest(ds.begin() + k, ds.end());
  Shape want_upd = lead;
  want_upd.insert(want_upd.end(), rest.begin(), rest.end());
  if (upd.type() != TensorType{data.dtype(), want_upd})
    ctx.fail(fmt::format("updates {} must be {}", upd.type().to_string(),
                         TensorType{data.dtype(), want_upd}.to_string()));
  std::vector<Tensor> coords;
  Tensor valid = b.broadcast_to(b.scalar(1, DType::boolean), lead);
  for (int64_t i = 0; i < k; ++i) {
    const auto last = static_cast<int64_t>(is.size()) - 1;
    Tensor comp = b.reshape(b.slice(indices, SliceAttrs{{last}, {i}, {i + 1}, {1}}), lead);
    const BoundedIndex idx = wrap_index(b, comp, ds[static_cast<size_t>(i)]);
    coords.push_back(idx.index);
    valid = b.binary(OpKind::And, valid, idx.in_range);
  }
  const Shape first(ds.begin(), ds.begin() + k);
  Tensor flat = b.where(valid, flat_index(b, coords, first), i64_scalar(b, -1));
  const sym::Expr l = numel(first), m = numel(lead);
  const Shape ones(rest.size(), sym::Expr(1));
  auto with = [&](std::initializer_list<sym::Expr> head, const Shape& tail) {
    Shape s(head);
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  Tensor match = b.binary(OpKind::Eq, b.iota(DType::i64, with({l, sym::Expr(1)}, ones), 0),
                          b.reshape(flat, with({sym::Expr(1), m}, ones)));
  Tensor out = scatter_reduce(ctx, b.reshape(data, with({l}, rest)),
                              b.reshape(data, with({l, sym::Expr(1)}, rest)), match,
                              b.reshape(upd, with({sym::Expr(1), m}, rest)), 1);
  ctx.set_output(0, cast_if(b, b.reshape(out, ds), ctx.input_dtype(0)));
}

// ---- DepthToSpace, SpaceToDepth -------------------------------------------------

int64_t block_size(NodeContext& ctx) {
  const int64_t bs = ctx.attr_int("blocksize");
  if (bs < 1) ctx.fail(fmt::format("blocksize {} must be >= 1", bs));
  return bs;
}

/// The 4-d input (N, C, H, W) and that `dim` is a multiple of `factor`.
Tensor nchw_input(NodeContext& ctx, std::initializer_list<int> dims, int64_t factor) {
  Tensor x = ctx.input(0);
  if (x.rank() != 4)
    ctx.fail(fmt::format("the input has rank {}; it must be 4 (N, C, H, W)", x.rank()));
  for (int d : dims)
    if (!sym::proven_eq(sym::mod(x.shape()[d], sym::Expr(factor)), 0))
      ctx.fail(
          fmt::format("dim {} ({}) must be a multiple of {}", d, x.shape()[d].to_string(), factor));
  return x;
}

// DepthToSpace: DCR reads the channel as (b1, b2, c), CRD as (c, b1, b2).
void convert_depth_to_space(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  const int64_t bs = block_size(ctx);
  Tensor x = nchw_input(ctx, {1}, bs * bs);
  const std::string mode = ctx.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    ctx.fail(fmt::format("mode \"{}\" is not one of \"DCR\", \"CRD\"", mode));
  const Shape s = x.shape();
  const sym::Expr c = sym::floordiv(s[1], sym::Expr(bs * bs)), k(bs);
  Tensor t = mode == "DCR"
                 ? b.transpose(b.reshape(x, {s[0], k, k, c, s[2], s[3]}), {0, 3, 4, 1, 5, 2})
                 : b.transpose(b.reshape(x, {s[0], c, k, k, s[2], s[3]}), {0, 1, 4, 2, 5, 3});
  ctx.set_output(0, b.reshape(t, {s[0], c, s[2] * k, s[3] * k}));
}

// SpaceToDepth: the inverse of DepthToSpace in DCR mode.
void convert_space_to_depth(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  const int64_t bs = block_size(ctx);
  Tensor x = nchw_input(ctx, {2, 3}, bs);
  const Shape s = x.shape();
  const sym::Expr k(bs), h = sym::floordiv(s[2], k), w = sym::floordiv(s[3], k);
  Tensor t = b.transpose(b.reshape(x, {s[0], s[1], h, k, w, k}), {0, 3, 5, 1, 2, 4});
  ctx.set_output(0, b.reshape(t, {s[0], s[1] * k * k, h, w}));
}

}  // namespace

void register_index_ops(ConverterTable& table) {
  table["ArgMax"] = convert_arg_extreme<true>;
  table["ArgMin"] = convert_arg_extreme<false>;
  table["Hardmax"] = convert_hardmax;
  table["Trilu"] = convert_trilu;
  table["EyeLike"] = convert_eye_like;
  table["OneHot"] = convert_one_hot;
  table["TopK"] = convert_topk;
  table["CenterCropPad"] = convert_center_crop_pad;
  table["CumSum"] = convert_cumsum;
  table["GatherElements"] = convert_gather_elements;
  table["GatherND"] = convert_gather_nd;
  table["ReverseSequence"] = convert_reverse_sequence;
  table["ScatterElements"] = convert_scatter_elements;
  table["Scatter"] =
      convert_scatter_elements;  // deprecated (9-10): ScatterElements without reduction
  table["ScatterND"] = convert_scatter_nd;
  table["DepthToSpace"] = convert_depth_to_space;
  table["SpaceToDepth"] = convert_space_to_depth;
}

}  // namespace autofuse::frontend::onnx_import
