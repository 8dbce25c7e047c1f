// Shape ops: Shape/Size (which start known values), Constant,
// ConstantOfShape, Range, and the ops that only change a tensor's shape or
// layout (Reshape, Expand, Tile, Squeeze, Unsqueeze, Flatten, Identity,
// Transpose). Dropout lives with the composites (its mask output). Their
// shape arguments are known values, so shapes computed from symbolic sizes
// stay symbolic.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

/// Integer lists up to this length fold at import (ConstantOfShape, Range).
constexpr int64_t kMaxFoldElements = 4096;

const sym::ShapeEnv& env_of(NodeContext& ctx) {
  return ctx.builder().graph().shape_env();
}

/// Output 0 is input 0 with shape `out`: a constant or known value stays
/// one, anything else becomes a reshape node.
void reshape_value(NodeContext& ctx, const Shape& out) {
  std::vector<int64_t> dims;
  for (const sym::Expr& d : out)
    if (std::optional<int64_t> c = d.as_const()) dims.push_back(*c);
  if (dims.size() == out.size()) {
    if (std::optional<HostTensor> c = ctx.constant(0)) {
      HostTensor reshaped(c->dtype(), dims);
      if (reshaped.numel() != c->numel())
        ctx.fail(fmt::format("cannot reshape {} to {}", c->type_string(), reshaped.type_string()));
      std::copy_n(static_cast<const char*>(c->data()), c->nbytes(),
                  static_cast<char*>(reshaped.data()));
      return ctx.set_constant_output(0, std::move(reshaped));
    }
  }
  if (out.size() <= 1) {
    if (std::optional<std::vector<sym::Expr>> known = ctx.known_ints(0)) {
      const bool length_ok = out.empty()
                                 ? known->size() == 1
                                 : sym::proven_eq(out[0], static_cast<int64_t>(known->size()));
      if (length_ok) return ctx.set_known_output(0, *known, ctx.input_dtype(0), out.empty());
    }
  }
  ctx.set_output(0, ctx.builder().reshape(ctx.input(0), out, output_name(ctx, 0)));
}

void convert_shape(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clamp(ctx.attr_int("start", 0));
  const int64_t end = clamp(ctx.attr_int("end", rank));
  std::vector<sym::Expr> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(env_of(ctx).canonicalize(in[i]));
  ctx.set_known_output(0, std::move(dims), DType::i64, false);
}

void convert_size(NodeContext& ctx) {
  ctx.set_known_output(0, {env_of(ctx).canonicalize(numel(ctx.input_shape(0)))}, DType::i64, true);
}

void convert_constant(NodeContext& ctx) {
  const onnx::NodeProto& node = ctx.node();
  if (node.attribute_size() != 1)
    ctx.fail(fmt::format("needs exactly one value attribute, has {}", node.attribute_size()));
  const std::string& name = node.attribute(0).name();
  if (name == "value") return ctx.set_constant_output(0, ctx.attr_tensor("value"));
  if (name == "value_float" || name == "value_int") {
    const bool is_int = name == "value_int";
    HostTensor t(is_int ? DType::i64 : DType::f32, {});
    if (is_int)
      t.set_i64(0, ctx.attr_int(name));
    else
      t.set_f64(0, ctx.attr_float(name));
    return ctx.set_constant_output(0, std::move(t));
  }
  if (name == "value_floats") {
    const std::vector<float> v = ctx.attr_floats(name);
    HostTensor t(DType::f32, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i)
      t.set_f64(static_cast<int64_t>(i), v[i]);
    return ctx.set_constant_output(0, std::move(t));
  }
  if (name == "value_ints") {
    const std::vector<int64_t> v = ctx.attr_ints(name);
    HostTensor t(DType::i64, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i)
      t.set_i64(static_cast<int64_t>(i), v[i]);
    return ctx.set_constant_output(0, std::move(t));
  }
  if (name == "value_string" || name == "value_strings" || name == "sparse_value")
    ctx.unsupported(fmt::format("string and sparse constants ('{}') are not supported", name));
  ctx.fail(fmt::format("attribute '{}' is not a Constant value attribute", name));
}

void convert_constant_of_shape(NodeContext& ctx) {
  const std::vector<sym::Expr> shape = require_known(ctx, 0, "shape");
  HostTensor value(DType::f32, {1});
  if (ctx.has_attr("value")) value = ctx.attr_tensor("value");
  if (value.numel() != 1)
    ctx.fail(fmt::format("attribute 'value' must hold one element, has {}", value.numel()));
  for (const sym::Expr& d : shape)
    if (!proven_non_negative(d))
      ctx.fail(fmt::format("shape dim {} may be negative", d.to_string()));
  const DType dtype = value.dtype();
  // A short integer list stays known (e.g. the ones of an Expand pattern).
  if (!is_float(dtype) && shape.size() <= 1) {
    const std::optional<int64_t> n = shape.empty() ? 1 : shape[0].as_const();
    if (n && *n <= kMaxFoldElements)
      return ctx.set_known_output(0, std::vector<sym::Expr>(*n, value.get_i64(0)), dtype,
                                  shape.empty());
  }
  GraphBuilder& b = ctx.builder();
  Tensor scalar = b.scalar(value.get_f64(0), dtype);
  ctx.set_output(0, b.broadcast_to(scalar, Shape(shape.begin(), shape.end()), output_name(ctx, 0)));
}

void convert_range(NodeContext& ctx) {
  const DType dtype = ctx.input_dtype(0);
  GraphBuilder& b = ctx.builder();
  for (int i = 0; i < 3; ++i)
    if (!ctx.input_shape(i).empty() || ctx.input_dtype(i) != dtype)
      ctx.fail("start, limit and delta must be scalars of one dtype");
  if (is_float(dtype)) {
    std::optional<HostTensor> start = ctx.constant(0), limit = ctx.constant(1),
                              delta = ctx.constant(2);
    if (!start || !limit || !delta) ctx.fail("float start, limit and delta must be constants");
    const double s = start->get_f64(0), l = limit->get_f64(0), d = delta->get_f64(0);
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      ctx.fail("delta must be non-zero and all of start, limit, delta finite");
    const double count = std::max(std::ceil((l - s) / d), 0.0);
    if (count > 1e12) ctx.fail(fmt::format("the range has {} elements", count));
    Tensor iota = b.iota(dtype, {static_cast<int64_t>(count)}, 0);
    ctx.set_output(0,
                   b.add(b.mul(iota, b.scalar(d, dtype)), b.scalar(s, dtype), output_name(ctx, 0)));
    return;
  }
  const sym::Expr start = require_known(ctx, 0, "start")[0];
  const sym::Expr limit = require_known(ctx, 1, "limit")[0];
  const std::optional<int64_t> delta = require_known(ctx, 2, "delta")[0].as_const();
  if (!delta || *delta == 0) ctx.fail("delta must be a non-zero constant");
  const sym::Expr count = *delta > 0 ? sym::max(sym::ceildiv(limit - start, *delta), 0)
                                     : sym::max(sym::ceildiv(start - limit, -*delta), 0);
  const std::optional<int64_t> n = count.as_const();
  if (n && *n <= kMaxFoldElements) {
    std::vector<sym::Expr> values;
    for (int64_t i = 0; i < *n; ++i)
      values.push_back(start + i * *delta);
    return ctx.set_known_output(0, std::move(values), dtype, false);
  }
  Tensor out = b.iota(dtype, {count}, 0);
  if (*delta != 1) out = b.mul(out, b.scalar(static_cast<double>(*delta), dtype));
  if (start != 0) out = b.add(out, ctx.input(0));
  // A final no-op reshape would be a node; the name is cosmetic, so keep it.
  ctx.set_output(0, out);
}

/// prod(num) / prod(den) for a reshape's -1 dim: equal factors cancel
/// first, so symbolic quotients come out exact where they are.
sym::Expr quotient(const sym::ShapeEnv& env, Shape num, const Shape& den) {
  sym::Expr rest = 1;
  for (const sym::Expr& d : den) {
    const sym::Expr cd = env.canonicalize(d);
    auto it = std::find_if(num.begin(), num.end(),
                           [&](const sym::Expr& n) { return env.canonicalize(n) == cd; });
    if (it != num.end())
      num.erase(it);
    else
      rest = rest * cd;
  }
  sym::Expr top = 1;
  for (const sym::Expr& n : num)
    top = top * env.canonicalize(n);
  return rest == 1 ? top : sym::floordiv(top, rest);
}

void convert_reshape(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  const std::vector<sym::Expr> target = require_known(ctx, 1, "shape");
  const bool allow_zero = ctx.attr_int("allowzero", 0) != 0;
  Shape out;
  std::optional<size_t> infer;
  for (size_t i = 0; i < target.size(); ++i) {
    const std::optional<int64_t> c = target[i].as_const();
    if (c && *c == 0 && !allow_zero) {
      if (i >= in.size())
        ctx.fail(fmt::format("shape entry {} is 0 (copy the input dim), but the input has rank {}",
                             i, in.size()));
      out.push_back(in[i]);
    } else if (c && *c == -1) {
      if (infer) ctx.fail("the shape has more than one -1");
      infer = i;
      out.emplace_back(0);  // replaced below
    } else if (c && *c < -1) {
      ctx.fail(fmt::format("shape entry {} is {}", i, *c));
    } else {
      out.push_back(target[i]);
    }
  }
  if (infer) {
    Shape others = out;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(*infer));
    out[*infer] = quotient(env_of(ctx), in, others);
  }
  reshape_value(ctx, out);
}

void convert_expand(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  const std::vector<sym::Expr> target = require_known(ctx, 1, "shape");
  // ONNX Expand broadcasts both ways; the shapes' broadcast is the result.
  // Guards it needs are recorded again by broadcast_to on the real env.
  sym::ShapeEnv scratch = env_of(ctx);
  Shape out = broadcast_shapes(in, Shape(target.begin(), target.end()), scratch,
                               fmt::format("Expand node '{}'", ctx.node().name()));
  if (out == in) return ctx.forward_input(0, 0);
  ctx.set_output(0, ctx.builder().broadcast_to(ctx.input(0), out, output_name(ctx, 0)));
}

void convert_tile(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  const std::vector<sym::Expr> repeats = require_known(ctx, 1, "repeats");
  if (repeats.size() != in.size())
    ctx.fail(fmt::format("repeats has {} entries for rank {}", repeats.size(), in.size()));
  // x[d0, d1] -> reshape [1, d0, 1, d1] -> broadcast [r0, d0, r1, d1]
  // -> reshape [r0*d0, r1*d1]; axes repeated once are left alone.
  Shape split, wide, out;
  bool any = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!proven_non_negative(repeats[i]))
      ctx.fail(fmt::format("repeat {} may be negative", repeats[i].to_string()));
    if (repeats[i] != 1) {
      any = true;
      split.emplace_back(1);
      wide.push_back(repeats[i]);
    }
    split.push_back(in[i]);
    wide.push_back(in[i]);
    out.push_back(repeats[i] * in[i]);
  }
  if (!any) return ctx.forward_input(0, 0);
  GraphBuilder& b = ctx.builder();
  Tensor x = b.broadcast_to(b.reshape(ctx.input(0), split), wide);
  ctx.set_output(0, b.reshape(x, out, output_name(ctx, 0)));
}

void convert_squeeze(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  std::optional<std::vector<int64_t>> axes = axes_input_or_attr(ctx, 1, "axes");
  if (!axes || axes->empty()) {
    // Without axes every size-1 dim goes; a symbolic dim is kept (its size
    // is not known to be 1).
    for (size_t i = 0; i < in.size(); ++i)
      drop[i] = in[i] == 1;
  } else {
    for (int64_t a : *axes) {
      const int64_t axis = normalize_axis(ctx, a, rank, "axis");
      if (std::optional<int64_t> c = in[axis].as_const(); c && *c != 1)
        ctx.fail(fmt::format("cannot squeeze dim {} of size {}", axis, *c));
      drop[axis] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  reshape_value(ctx, out);
}

void convert_unsqueeze(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  std::optional<std::vector<int64_t>> axes = axes_input_or_attr(ctx, 1, "axes");
  if (!axes) ctx.fail("needs axes");
  const auto rank = static_cast<int64_t>(in.size() + axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    const int64_t axis = normalize_axis(ctx, a, rank, "axis");
    if (inserted[axis]) ctx.fail(fmt::format("axis {} is listed twice", axis));
    inserted[axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(inserted[i] ? sym::Expr(1) : in[next++]);
  reshape_value(ctx, out);
}

void convert_flatten(NodeContext& ctx) {
  const Shape in = ctx.input_shape(0);
  const auto rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -rank || axis > rank)
    ctx.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  if (axis < 0) axis += rank;
  const Shape head(in.begin(), in.begin() + axis), tail(in.begin() + axis, in.end());
  reshape_value(ctx, {numel(head), numel(tail)});
}

void convert_identity(NodeContext& ctx) {
  ctx.forward_input(0, 0);
}

void convert_transpose(NodeContext& ctx) {
  const auto rank = static_cast<int64_t>(ctx.input_shape(0).size());
  std::vector<int64_t> reversed;
  for (int64_t i = rank - 1; i >= 0; --i)
    reversed.push_back(i);
  std::vector<int64_t> perm = ctx.attr_ints("perm", reversed);
  bool identity = static_cast<int64_t>(perm.size()) == rank;
  for (size_t i = 0; identity && i < perm.size(); ++i)
    identity = perm[i] == static_cast<int64_t>(i);
  if (identity) return ctx.forward_input(0, 0);
  ctx.set_output(0, ctx.builder().transpose(ctx.input(0), perm, output_name(ctx, 0)));
}

}  // namespace

void register_shape_ops(ConverterTable& table) {
  table["Shape"] = convert_shape;
  table["Size"] = convert_size;
  table["Constant"] = convert_constant;
  table["ConstantOfShape"] = convert_constant_of_shape;
  table["Range"] = convert_range;
  table["Reshape"] = convert_reshape;
  table["Expand"] = convert_expand;
  table["Tile"] = convert_tile;
  table["Squeeze"] = convert_squeeze;
  table["Unsqueeze"] = convert_unsqueeze;
  table["Flatten"] = convert_flatten;
  table["Identity"] = convert_identity;
  table["Transpose"] = convert_transpose;
  register_select_ops(table);
}

}  // namespace autofuse::frontend::onnx_import
