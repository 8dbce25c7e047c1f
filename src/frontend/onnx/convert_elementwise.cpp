// Elementwise ONNX ops: unary and binary math, comparisons, logic, Where,
// Cast/CastLike, the variadic Max/Min/Sum/Mean and the attribute variants
// (Mod's fmod, IsInf's detect_*). When every operand is a known value (a
// shape computation) the op folds at import instead of becoming a node, so
// shapes computed from symbolic sizes stay symbolic.
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "autofuse/ref/interpreter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

// ---- Folding known values ---------------------------------------------------

std::optional<sym::Expr> as_bool(bool b) {
  return sym::Expr(b ? 1 : 0);
}

/// A proven comparison `a rel b` as 0/1; nullopt when not decidable.
std::optional<sym::Expr> fold_compare(const sym::Expr& a, sym::Rel rel, const sym::Expr& b) {
  switch (rel) {
    case sym::Rel::Eq:
      if (sym::proven_eq(a, b)) return as_bool(true);
      if (sym::proven_ne(a, b)) return as_bool(false);
      break;
    case sym::Rel::Lt:
      if (sym::proven_lt(a, b)) return as_bool(true);
      if (sym::proven_ge(a, b)) return as_bool(false);
      break;
    case sym::Rel::Le:
      if (sym::proven_le(a, b)) return as_bool(true);
      if (sym::proven_gt(a, b)) return as_bool(false);
      break;
    default:
      break;
  }
  return std::nullopt;
}

/// ONNX integer Div truncates toward zero; symbolic operands fold only where
/// that equals floor division (non-negative dividend).
std::optional<sym::Expr> fold_div(const sym::Expr& a, const sym::Expr& b) {
  const std::optional<int64_t> ca = a.as_const(), cb = b.as_const();
  if (ca && cb) {
    if (*cb == 0 || (*ca == std::numeric_limits<int64_t>::min() && *cb == -1)) return std::nullopt;
    return sym::Expr(*ca / *cb);
  }
  if (!proven_non_negative(a)) return std::nullopt;
  if (cb && *cb < 0) return -sym::floordiv(a, -*cb);
  if (sym::value_range(b).lo >= 1) return sym::floordiv(a, b);
  return std::nullopt;
}

std::optional<sym::Expr> fold_element(OpKind op, const std::vector<sym::Expr>& v) {
  const std::optional<int64_t> c0 = v[0].as_const();
  std::optional<int64_t> c1;
  if (v.size() > 1) c1 = v[1].as_const();
  switch (op) {
    case OpKind::Add:
      return v[0] + v[1];
    case OpKind::Sub:
      return v[0] - v[1];
    case OpKind::Mul:
      return v[0] * v[1];
    case OpKind::Div:
      return fold_div(v[0], v[1]);
    case OpKind::Mod:  // floor mod (fmod = 0)
      if (c1 && *c1 != 0 && (c0 || *c1 > 0)) return sym::mod(v[0], v[1]);
      return std::nullopt;
    case OpKind::Max:
      return sym::max(v[0], v[1]);
    case OpKind::Min:
      return sym::min(v[0], v[1]);
    case OpKind::Eq:
      return fold_compare(v[0], sym::Rel::Eq, v[1]);
    case OpKind::Lt:
      return fold_compare(v[0], sym::Rel::Lt, v[1]);
    case OpKind::Le:
      return fold_compare(v[0], sym::Rel::Le, v[1]);
    case OpKind::Gt:
      return fold_compare(v[1], sym::Rel::Lt, v[0]);
    case OpKind::Ge:
      return fold_compare(v[1], sym::Rel::Le, v[0]);
    case OpKind::Neg:
      return -v[0];
    case OpKind::Abs:
      if (proven_non_negative(v[0])) return v[0];
      if (proven_non_negative(-v[0])) return -v[0];
      return std::nullopt;
    case OpKind::Not:
      if (c0) return as_bool(*c0 == 0);
      return std::nullopt;
    case OpKind::And:
      if (c0 && c1) return as_bool(*c0 != 0 && *c1 != 0);
      return std::nullopt;
    case OpKind::Or:
      if (c0 && c1) return as_bool(*c0 != 0 || *c1 != 0);
      return std::nullopt;
    case OpKind::Xor:
      if (c0 && c1) return as_bool((*c0 != 0) != (*c1 != 0));
      return std::nullopt;
    case OpKind::Where:
      if (c0) return *c0 != 0 ? v[1] : v[2];
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

/// Whether a constant fits the integer dtype (folds must not hide wrapping).
bool fits(DType dtype, int64_t v) {
  if (!is_integer(dtype) && !is_bool(dtype)) return true;
  const auto [lo, hi] = integer_limits(dtype);
  return v >= lo && v <= hi;
}

/// Folds the node when every operand is known; true if it did.
bool try_fold(NodeContext& ctx, OpKind op, DType out_dtype) {
  std::optional<KnownOperands> known = known_operands(ctx);
  if (!known) return false;
  std::vector<sym::Expr> out;
  try {
    for (size_t k = 0; k < known->length; ++k) {
      std::vector<sym::Expr> args;
      for (size_t i = 0; i < known->values.size(); ++i)
        args.push_back(known->at(i, k));
      std::optional<sym::Expr> r = fold_element(op, args);
      if (!r) return false;
      if (std::optional<int64_t> c = r->as_const(); c && !fits(out_dtype, *c)) return false;
      out.push_back(*r);
    }
  } catch (const UserError&) {
    return false;  // int64 overflow while simplifying: leave it to run time
  }
  ctx.set_known_output(0, std::move(out), out_dtype, known->scalar);
  return true;
}

// ---- Converters -------------------------------------------------------------

template <OpKind K>
void convert_unary(NodeContext& ctx) {
  if (try_fold(ctx, K, ctx.input_dtype(0))) return;
  ctx.set_output(0, ctx.builder().unary(K, ctx.input(0), output_name(ctx, 0)));
}

template <OpKind K>
void convert_binary(NodeContext& ctx) {
  const bool compare =
      K == OpKind::Eq || K == OpKind::Lt || K == OpKind::Le || K == OpKind::Gt || K == OpKind::Ge;
  if (try_fold(ctx, K, compare ? DType::boolean : ctx.input_dtype(0))) return;
  ctx.set_output(0, ctx.builder().binary(K, ctx.input(0), ctx.input(1), output_name(ctx, 0)));
}

/// Fails unless every input's dtype satisfies `ok`; `must` says what it must be.
void require_input_dtypes(NodeContext& ctx, bool (*ok)(DType), std::string_view must) {
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ok(ctx.input_dtype(i)))
      ctx.fail(fmt::format("input {} has dtype {}; {}", i, dtype_name(ctx.input_dtype(i)), must));
}

/// And, Or, Xor, Not: ONNX defines them on bool only (the graph ops are also
/// bitwise on integers: the Bitwise* ops).
template <OpKind K>
void convert_logical(NodeContext& ctx) {
  require_input_dtypes(ctx, is_bool, "it must be bool");
  if constexpr (K == OpKind::Not)
    convert_unary<K>(ctx);
  else
    convert_binary<K>(ctx);
}

/// BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (opset 18): integer
/// tensors of one dtype, two's complement in its width. Not folded: the
/// folds of not/and/or/xor are the logical ones.
template <OpKind K>
void convert_bitwise(NodeContext& ctx) {
  require_input_dtypes(ctx, is_integer, "bitwise ops take integer tensors");
  GraphBuilder& b = ctx.builder();
  if constexpr (K == OpKind::Not)
    ctx.set_output(0, b.unary(K, ctx.input(0), output_name(ctx, 0)));
  else
    ctx.set_output(0, b.binary(K, ctx.input(0), ctx.input(1), output_name(ctx, 0)));
}

/// Max, Min, Sum, Mean: any number of inputs (>= 1), folded left to right.
template <OpKind K, bool kMean = false>
void convert_variadic(NodeContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) ctx.fail("needs at least one input");
  for (int i = 0; i < n; ++i)
    if (!ctx.has_input(i)) ctx.fail(fmt::format("input {} is empty", i));
  if (n == 1) return ctx.forward_input(0, 0);
  if (n == 2 && !kMean && try_fold(ctx, K, ctx.input_dtype(0))) return;
  GraphBuilder& b = ctx.builder();
  Tensor acc = ctx.input(0);
  for (int i = 1; i < n; ++i)
    acc = b.binary(K, acc, ctx.input(i), !kMean && i == n - 1 ? output_name(ctx, 0) : "");
  if (kMean) acc = b.div(acc, b.scalar(n, acc.dtype()), output_name(ctx, 0));
  ctx.set_output(0, acc);
}

void convert_mod(NodeContext& ctx) {
  const bool fmod = ctx.attr_int("fmod", 0) != 0;
  const DType dtype = ctx.input_dtype(0);
  if (!fmod) {
    // Floor mod, as our mod (for floats ONNX asks for fmod = 1, but NumPy's
    // floor mod is the meaning of fmod = 0 there too).
    if (try_fold(ctx, OpKind::Mod, dtype)) return;
    ctx.set_output(
        0, ctx.builder().binary(OpKind::Mod, ctx.input(0), ctx.input(1), output_name(ctx, 0)));
    return;
  }
  // C fmod: the sign of the dividend, x - trunc(x / y) * y.
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0), y = ctx.input(1);
  Tensor q = b.div(x, y);
  if (is_float(dtype)) {
    Tensor negative = b.binary(OpKind::Lt, q, b.scalar(0, dtype));
    q = b.where(negative, b.unary(OpKind::Ceil, q), b.unary(OpKind::Floor, q));
  }  // integer div already truncates toward zero
  ctx.set_output(0, b.sub(x, b.mul(q, y), output_name(ctx, 0)));
}

void convert_pow(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0), y = ctx.input(1);
  const DType xt = x.dtype(), yt = y.dtype();
  if (xt == yt || is_float(xt)) {
    if (xt != yt) y = b.cast(y, xt);
    ctx.set_output(0, b.binary(OpKind::Pow, x, y, output_name(ctx, 0)));
    return;
  }
  if (is_float(yt)) {
    // Integer base, float exponent: computed in the exponent's type, the
    // result cast back to the base type (as the ONNX reference does).
    Tensor r = b.binary(OpKind::Pow, b.cast(x, yt), y);
    ctx.set_output(0, b.cast(r, xt, output_name(ctx, 0)));
    return;
  }
  ctx.set_output(0, b.binary(OpKind::Pow, x, b.cast(y, xt), output_name(ctx, 0)));
}

void convert_isinf(NodeContext& ctx) {
  const bool positive = ctx.attr_int("detect_positive", 1) != 0;
  const bool negative = ctx.attr_int("detect_negative", 1) != 0;
  GraphBuilder& b = ctx.builder();
  Tensor x = ctx.input(0);
  const std::string name = output_name(ctx, 0);
  if (!positive && !negative) {
    ctx.set_output(0, b.broadcast_to(b.scalar(0, DType::boolean), x.shape(), name));
    return;
  }
  Tensor inf = b.unary(OpKind::IsInf, x, positive && negative ? name : "");
  if (!(positive && negative)) {
    const OpKind side = positive ? OpKind::Gt : OpKind::Lt;
    inf = b.binary(OpKind::And, inf, b.binary(side, x, b.scalar(0, x.dtype())), name);
  }
  ctx.set_output(0, inf);
}

void convert_where(NodeContext& ctx) {
  if (ctx.input_dtype(1) == ctx.input_dtype(2) && try_fold(ctx, OpKind::Where, ctx.input_dtype(1)))
    return;
  ctx.set_output(
      0, ctx.builder().where(ctx.input(0), ctx.input(1), ctx.input(2), output_name(ctx, 0)));
}

/// Cast and CastLike. `saturate` (opset 19) only matters for float8 targets
/// (ONNX ignores it otherwise; the graph op wants it true there).
void cast_to(NodeContext& ctx, DType to, bool saturate) {
  const DType from = ctx.input_dtype(0);
  if (from == to) return ctx.forward_input(0, 0);
  const CastAttrs attrs{to, saturate || !is_float8(to)};
  if (std::optional<HostTensor> c = ctx.constant(0)) {
    ctx.set_constant_output(0, cast_tensor(*c, attrs));  // exactly as the op would
    return;
  }
  // Symbolic known values stay known through integer casts (sizes fit; a
  // cast to i4/u4 saturates instead of wrapping, so it is left to run time).
  if (!is_float(to) && to != DType::boolean && !is_int4(to)) {
    if (std::optional<std::vector<sym::Expr>> known = ctx.known_ints(0)) {
      ctx.set_known_output(0, *known, to, ctx.input_shape(0).empty());
      return;
    }
  }
  ctx.set_output(0, ctx.builder().cast(ctx.input(0), attrs, output_name(ctx, 0)));
}

void convert_cast(NodeContext& ctx) {
  cast_to(ctx, dtype_of_onnx(ctx, ctx.attr_int("to"), "attribute 'to'"),
          ctx.attr_int("saturate", 1) != 0);
}

void convert_cast_like(NodeContext& ctx) {
  cast_to(ctx, ctx.input_dtype(1), ctx.attr_int("saturate", 1) != 0);
}

}  // namespace

void register_elementwise_ops(ConverterTable& table) {
  table["Neg"] = convert_unary<OpKind::Neg>;
  table["Abs"] = convert_unary<OpKind::Abs>;
  table["Exp"] = convert_unary<OpKind::Exp>;
  table["Log"] = convert_unary<OpKind::Log>;
  table["Sqrt"] = convert_unary<OpKind::Sqrt>;
  table["Reciprocal"] = convert_unary<OpKind::Reciprocal>;
  table["Sin"] = convert_unary<OpKind::Sin>;
  table["Cos"] = convert_unary<OpKind::Cos>;
  table["Tanh"] = convert_unary<OpKind::Tanh>;
  table["Sigmoid"] = convert_unary<OpKind::Sigmoid>;
  table["Relu"] = convert_unary<OpKind::Relu>;
  table["Erf"] = convert_unary<OpKind::Erf>;
  table["Floor"] = convert_unary<OpKind::Floor>;
  table["Ceil"] = convert_unary<OpKind::Ceil>;
  table["Round"] = convert_unary<OpKind::Round>;
  table["Sign"] = convert_unary<OpKind::Sign>;
  table["Not"] = convert_logical<OpKind::Not>;
  table["IsNaN"] = convert_unary<OpKind::IsNan>;
  table["IsInf"] = convert_isinf;

  table["Add"] = convert_binary<OpKind::Add>;
  table["Sub"] = convert_binary<OpKind::Sub>;
  table["Mul"] = convert_binary<OpKind::Mul>;
  table["Div"] = convert_binary<OpKind::Div>;
  table["Pow"] = convert_pow;
  table["Mod"] = convert_mod;
  table["And"] = convert_logical<OpKind::And>;
  table["Or"] = convert_logical<OpKind::Or>;
  table["Xor"] = convert_logical<OpKind::Xor>;
  table["BitwiseAnd"] = convert_bitwise<OpKind::And>;
  table["BitwiseOr"] = convert_bitwise<OpKind::Or>;
  table["BitwiseXor"] = convert_bitwise<OpKind::Xor>;
  table["BitwiseNot"] = convert_bitwise<OpKind::Not>;
  table["Equal"] = convert_binary<OpKind::Eq>;
  table["Less"] = convert_binary<OpKind::Lt>;
  table["LessOrEqual"] = convert_binary<OpKind::Le>;
  table["Greater"] = convert_binary<OpKind::Gt>;
  table["GreaterOrEqual"] = convert_binary<OpKind::Ge>;

  table["Max"] = convert_variadic<OpKind::Max>;
  table["Min"] = convert_variadic<OpKind::Min>;
  table["Sum"] = convert_variadic<OpKind::Add>;
  table["Mean"] = convert_variadic<OpKind::Add, true>;

  table["Where"] = convert_where;
  table["Cast"] = convert_cast;
  table["CastLike"] = convert_cast_like;
}

}  // namespace autofuse::frontend::onnx_import
