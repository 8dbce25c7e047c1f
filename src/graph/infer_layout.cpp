// Inference for ops that rearrange or select elements: reduce, transpose,
// reshape, slice, concat, split.
#include <algorithm>

#include "graph/infer_internal.h"

namespace autofuse::graph_detail {

std::vector<TensorType> infer_reduce(const InferContext& ctx, const std::vector<TensorType>& in,
                                     ReduceAttrs& attrs) {
  const TensorType& x = in[0];
  const DType dtype = check_dtype_rule(ctx, {x.dtype});
  std::vector<bool> reduced(x.rank(), attrs.axes.empty());
  for (int64_t& axis : attrs.axes) {
    axis = normalize_axis(ctx, axis, x.rank(), "axis");
    if (reduced[axis]) ctx.fail("axis {} is listed twice", axis);
    reduced[axis] = true;
  }
  // Axes are a set; a sorted list makes equal reductions compare equal.
  std::sort(attrs.axes.begin(), attrs.axes.end());
  Shape out;
  for (int i = 0; i < x.rank(); ++i) {
    if (!reduced[i])
      out.push_back(x.shape[i]);
    else if (attrs.keepdims)
      out.push_back(1);
  }
  return {TensorType{dtype, out}};
}

std::vector<TensorType> infer_transpose(const InferContext& ctx, const std::vector<TensorType>& in,
                                        TransposeAttrs& attrs) {
  const TensorType& x = in[0];
  if (static_cast<int64_t>(attrs.perm.size()) != x.rank())
    ctx.fail("perm has {} entries for rank {}", attrs.perm.size(), x.rank());
  std::vector<bool> seen(x.rank(), false);
  Shape out;
  for (int64_t& p : attrs.perm) {
    p = normalize_axis(ctx, p, x.rank(), "perm entry");
    if (seen[p]) ctx.fail("perm is not a permutation: {} is listed twice", p);
    seen[p] = true;
    out.push_back(x.shape[p]);
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> infer_reshape(const InferContext& ctx, const std::vector<TensorType>& in,
                                      const ShapeAttrs& attrs) {
  const TensorType& x = in[0];
  check_dims_not_negative(ctx, attrs.shape, "target dim");
  const sym::Expr from = ctx.env.canonicalize(numel(x.shape));
  const sym::Expr to = ctx.env.canonicalize(numel(attrs.shape));
  if (ctx.env.proven(from, sym::Rel::Ne, to))
    ctx.fail("element count changes: {} vs {}", from.to_string(), to.to_string());
  ctx.env.require(from, sym::Rel::Eq, to, sym::GuardKind::Assert,
                  fmt::format("element count of reshape{}", ctx.in_node()));
  return {TensorType{x.dtype, attrs.shape}};
}

namespace {

// No tensor dim reaches 2^62, so an index or step at least that large acts
// as infinite; treating it so keeps the symbolic arithmetic far from int64
// overflow and lets `start = end` fold.
constexpr int64_t kBig = int64_t{1} << 62;

/// Python's clamp of a start or end index into a dim of size `dim`:
/// negative counts from the end; the result lies in [lo, dim + hi_offset].
sym::Expr clamp_index(const InferContext& ctx, int64_t index, const sym::Expr& dim, int64_t lo,
                      int64_t hi_offset) {
  if (index <= -kBig) return lo;
  if (index >= kBig) return dim + hi_offset;
  if (index < 0) return fold_max(ctx, dim + index, lo);
  return fold_min(ctx, index, dim + hi_offset);
}

/// Length of dim[start:end:step] under Python semantics, for every value of
/// the symbols in `dim`.
sym::Expr slice_length(const InferContext& ctx, const sym::Expr& dim, int64_t start, int64_t end,
                       int64_t step) {
  sym::Expr distance;
  if (step > 0) {
    const sym::Expr first = clamp_index(ctx, start, dim, 0, 0);
    const sym::Expr stop = end == kSliceEnd ? dim : clamp_index(ctx, end, dim, 0, 0);
    distance = stop - first;
  } else {
    // Walking backwards the valid positions are [-1, dim - 1]; -1 is "before
    // the first element", where a slice to the end stops.
    const sym::Expr first = clamp_index(ctx, start, dim, -1, -1);
    const sym::Expr stop = end == kSliceEnd ? sym::Expr(-1) : clamp_index(ctx, end, dim, -1, -1);
    distance = first - stop;
  }
  const bool huge_step = step >= kBig || step <= -kBig;  // at most one element
  const int64_t stride = huge_step ? 1 : (step > 0 ? step : -step);
  sym::Expr count = stride == 1 ? distance : sym::ceildiv(distance, stride);
  if (huge_step) count = fold_min(ctx, count, 1);
  return fold_max(ctx, count, 0);
}

}  // namespace

std::vector<TensorType> infer_slice(const InferContext& ctx, const std::vector<TensorType>& in,
                                    SliceAttrs& attrs) {
  const TensorType& x = in[0];
  const size_t n = attrs.axes.size();
  // Steps may be left out (all 1).
  if (attrs.steps.empty()) attrs.steps.assign(n, 1);
  if (attrs.starts.size() != n || attrs.ends.size() != n || attrs.steps.size() != n)
    ctx.fail("axes, starts, ends and steps differ in length: {}, {}, {}, {}", n,
             attrs.starts.size(), attrs.ends.size(), attrs.steps.size());
  std::vector<bool> seen(x.rank(), false);
  Shape out = x.shape;
  for (size_t i = 0; i < n; ++i) {
    const int64_t axis = normalize_axis(ctx, attrs.axes[i], x.rank(), "axis");
    if (seen[axis]) ctx.fail("axis {} is listed twice", axis);
    seen[axis] = true;
    attrs.axes[i] = axis;
    if (attrs.steps[i] == 0) ctx.fail("step for axis {} is 0", axis);
    out[axis] = slice_length(ctx, x.shape[axis], attrs.starts[i], attrs.ends[i], attrs.steps[i]);
  }
  return {TensorType{x.dtype, out}};
}

std::vector<TensorType> infer_concat(const InferContext& ctx, const std::vector<TensorType>& in,
                                     AxisAttrs& attrs) {
  const TensorType& first = in[0];
  attrs.axis = normalize_axis(ctx, attrs.axis, first.rank(), "axis");
  Shape out = first.shape;
  for (size_t k = 1; k < in.size(); ++k) {
    const TensorType& t = in[k];
    if (t.dtype != first.dtype)
      ctx.fail("input {} has dtype {}, input 0 has {}", k, dtype_name(t.dtype),
               dtype_name(first.dtype));
    if (t.rank() != first.rank())
      ctx.fail("input {} has rank {}, input 0 has rank {}", k, t.rank(), first.rank());
    for (int d = 0; d < t.rank(); ++d) {
      if (d == attrs.axis) {
        out[d] = out[d] + t.shape[d];
        continue;
      }
      const sym::Expr want = ctx.env.canonicalize(out[d]);
      const sym::Expr got = ctx.env.canonicalize(t.shape[d]);
      if (ctx.env.proven(want, sym::Rel::Eq, got)) continue;
      const std::string reason = fmt::format("concat{}, input {} dim {}", ctx.in_node(), k, d);
      if (!ctx.env.guard(want, sym::Rel::Eq, got, sym::GuardKind::Expect, reason))
        ctx.fail("input {} dim {} is {}, input 0 has {}", k, d, got.to_string(), want.to_string());
      out[d] = ctx.env.canonicalize(want);
    }
  }
  return {TensorType{first.dtype, out}};
}

std::vector<TensorType> infer_split(const InferContext& ctx, const std::vector<TensorType>& in,
                                    SplitAttrs& attrs) {
  const TensorType& x = in[0];
  attrs.axis = normalize_axis(ctx, attrs.axis, x.rank(), "axis");
  if (attrs.sizes.empty()) ctx.fail("needs at least one size");
  check_dims_not_negative(ctx, attrs.sizes, "split size");
  sym::Expr total = 0;
  for (const sym::Expr& s : attrs.sizes)
    total = total + s;
  total = ctx.env.canonicalize(total);
  const sym::Expr dim = ctx.env.canonicalize(x.shape[attrs.axis]);
  if (ctx.env.proven(total, sym::Rel::Ne, dim))
    ctx.fail("sizes sum to {}, but dim {} is {}", total.to_string(), attrs.axis, dim.to_string());
  ctx.env.require(total, sym::Rel::Eq, dim, sym::GuardKind::Assert,
                  fmt::format("split sizes{}", ctx.in_node()));
  std::vector<TensorType> out;
  for (const sym::Expr& s : attrs.sizes) {
    TensorType t = x;
    t.shape[attrs.axis] = s;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace autofuse::graph_detail

namespace autofuse {

sym::Expr slice_first_index(const sym::ShapeEnv& env, const sym::Expr& dim, int64_t start,
                            int64_t step) {
  // Same clamping as clamp_index() above (the values must agree with the
  // inferred length), with the folds done by `env` directly.
  const auto lo_hi = [&](int64_t lo, int64_t hi_offset) -> sym::Expr {
    using graph_detail::kBig;
    if (start <= -kBig) return lo;
    if (start >= kBig) return dim + hi_offset;
    const sym::Expr a = start < 0 ? dim + start : sym::Expr(start);
    if (start < 0) {
      if (env.proven(a, sym::Rel::Ge, sym::Expr(lo))) return a;
      if (env.proven(sym::Expr(lo), sym::Rel::Ge, a)) return sym::Expr(lo);
      return sym::max(a, sym::Expr(lo));
    }
    const sym::Expr b = dim + hi_offset;
    if (env.proven(a, sym::Rel::Le, b)) return a;
    if (env.proven(b, sym::Rel::Le, a)) return b;
    return sym::min(a, b);
  };
  return step > 0 ? lo_hi(0, 0) : lo_hi(-1, -1);
}

}  // namespace autofuse
