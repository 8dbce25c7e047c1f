// The generator's ops with their bookkeeping: each result carries an
// interval holding every element, whether kernel and reference hold it bit
// for bit (`exact`), the coarsest rounding on its way and the largest
// magnitude that entered a cancellation (see OutputSpec). The domain helpers
// (squash, positive, condition) use that to keep every op well conditioned:
//  * kernels compute f16/bf16 in f32 and round once per store, the
//    reference rounds after every op; the two differ by ~half an ulp of the
//    narrow type per op, relative to each value. add/sub (and the mean of
//    signed values, sin/cos of large arguments) turn that into an absolute
//    error of the operands' size: `scale` records it for the tolerance.
//  * log/sqrt/rsqrt/reciprocal/div/pow see values >= 0.25 (or <= -0.25), so
//    their condition number stays <= 4; exp sees values <= 4; nothing can
//    overflow f16 (values are kept below 30000, else computed in f32).
//  * floor/ceil/round/sign, compares and mod see exact values only: inputs
//    and what exact ops (neg, abs, relu, max, min, where, data movement,
//    *2, *4, floor, ...) make of them. A half-ulp difference would flip them.
#include <algorithm>
#include <cmath>
#include <limits>

#include "fuzz/subgraph_gen.h"

namespace autofuse::fuzz::detail {

namespace {

struct Interval {
  double lo, hi;
};

Interval hull(std::initializer_list<double> xs) {
  return {std::min(xs), std::max(xs)};
}

Interval unary_interval(OpKind op, double l, double h) {
  switch (op) {
    case OpKind::Neg:
      return {-h, -l};
    case OpKind::Abs:
      if (l >= 0) return {l, h};
      if (h <= 0) return {-h, -l};
      return {0, std::max(-l, h)};
    case OpKind::Relu:
      return {std::max(l, 0.0), std::max(h, 0.0)};
    case OpKind::Exp:
      return {std::exp(l), std::exp(h)};
    case OpKind::Log:
      return {std::log(l), std::log(h)};
    case OpKind::Sqrt:
      return {std::sqrt(l), std::sqrt(h)};
    case OpKind::Rsqrt:
      return {1 / std::sqrt(h), 1 / std::sqrt(l)};
    case OpKind::Reciprocal:
      return {1 / h, 1 / l};
    case OpKind::Tanh:
      return {std::tanh(l), std::tanh(h)};
    case OpKind::Sigmoid:
      return {1 / (1 + std::exp(-l)), 1 / (1 + std::exp(-h))};
    case OpKind::Erf:
      return {std::erf(l), std::erf(h)};
    case OpKind::Floor:
      return {std::floor(l), std::floor(h)};
    case OpKind::Ceil:
      return {std::ceil(l), std::ceil(h)};
    case OpKind::Round:
      return {std::nearbyint(l), std::nearbyint(h)};
    case OpKind::Sign:
      return {l < 0 ? -1.0 : l > 0 ? 1.0 : 0.0, h < 0 ? -1.0 : h > 0 ? 1.0 : 0.0};
    default:  // sin, cos
      return {-1, 1};
  }
}

Interval binary_interval(OpKind op, const Val& a, const Val& b) {
  switch (op) {
    case OpKind::Add:
      return {a.lo + b.lo, a.hi + b.hi};
    case OpKind::Sub:
      return {a.lo - b.hi, a.hi - b.lo};
    case OpKind::Mul:
      return hull({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi});
    case OpKind::Div:
      return hull({a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi});
    case OpKind::Pow:  // a > 0: monotone in each argument, extremes at corners
      return hull(
          {std::pow(a.lo, b.lo), std::pow(a.lo, b.hi), std::pow(a.hi, b.lo), std::pow(a.hi, b.hi)});
    case OpKind::Max:
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    case OpKind::Min:
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    default: {  // mod: |result| < |divisor|
      const double m = b.mag();
      return {-m, m};
    }
  }
}

/// Whether values of this size stay finite, with headroom, in the type.
bool fits(DType t, Interval i) {
  const double limit = t == DType::f16 ? 30000 : 1e30;
  return std::max(std::abs(i.lo), std::abs(i.hi)) <= limit;
}

bool exact_unary(OpKind op) {
  return op == OpKind::Neg || op == OpKind::Abs || op == OpKind::Relu || op == OpKind::Floor ||
         op == OpKind::Ceil || op == OpKind::Round || op == OpKind::Sign;
}

/// A result computed from `ins`: rounding and scale carried over.
Val derived(std::initializer_list<const Val*> ins, Tensor t, Interval i) {
  Val v;
  v.t = t;
  v.lo = i.lo;
  v.hi = i.hi;
  v.rounding = t.dtype();
  for (const Val* in : ins) {
    v.rounding = coarser(v.rounding, in->rounding);
    v.scale = std::max(v.scale, in->scale);
  }
  return v;
}

bool is_power_of_two_factor(const Val& v) {
  return v.exact && v.lo == v.hi && (v.lo == 2 || v.lo == 4);
}

}  // namespace

Val SubgraphGen::cast(const Val& x, DType to) {
  if (!fits(to, {x.lo, x.hi})) to = DType::f32;
  if (x.dtype() == to) return x;
  Val v = derived({&x}, b_.cast(x.t, to), {x.lo, x.hi});
  v.exact = x.exact && (to == DType::f32 || to == x.fmt);
  v.fmt = x.fmt;
  return v;
}

Val SubgraphGen::unary(OpKind op, const Val& x0) {
  Val x = x0;
  // A half-ulp difference would flip these: generator invariant.
  AF_CHECK(x.exact || !(op == OpKind::Floor || op == OpKind::Ceil || op == OpKind::Round ||
                        op == OpKind::Sign),
           "fuzz generator: {} of an inexact value", op_name(op));
  const Interval i = unary_interval(op, x.lo, x.hi);
  if (!fits(x.dtype(), i)) x = cast(x, DType::f32);
  Val v = derived({&x}, b_.unary(op, x.t), i);
  // Small integers (floor, sign, ...) stay exact in f16 and bf16 too.
  v.exact = x.exact && exact_unary(op) && v.mag() <= 256;
  v.fmt = x.fmt;
  if (op == OpKind::Sin || op == OpKind::Cos) v.scale = std::max(v.scale, x.mag());
  return v;
}

void SubgraphGen::align_dtypes(Val& a, Val& b) {
  if (a.dtype() == b.dtype()) return;
  DType to = rng_.chance(0.5) ? a.dtype() : b.dtype();
  // f32 holds exact values of every type exactly (f16 -> bf16 would round).
  if (!fits(to, {a.lo, a.hi}) || !fits(to, {b.lo, b.hi}) || (a.exact && b.exact)) to = DType::f32;
  a = cast(a, to);
  b = cast(b, to);
}

Val SubgraphGen::binary(OpKind op, Val a, Val b) {
  align_dtypes(a, b);
  AF_CHECK(op != OpKind::Mod || (a.exact && b.exact), "fuzz generator: mod of inexact values");
  Interval i = binary_interval(op, a, b);
  if (op == OpKind::Mul && a.t.id == b.t.id) {  // x * x
    const double l2 = a.lo * a.lo, h2 = a.hi * a.hi;
    i = a.lo >= 0 ? Interval{l2, h2} : a.hi <= 0 ? Interval{h2, l2} : Interval{0, std::max(l2, h2)};
  }
  if (!fits(a.dtype(), i)) {
    a = cast(a, DType::f32);
    b = cast(b, DType::f32);
  }
  Val v = derived({&a, &b}, b_.binary(op, a.t, b.t), i);
  const bool both_exact = a.exact && b.exact;
  v.fmt = a.fmt == b.fmt ? a.fmt : DType::f32;
  if (op == OpKind::Max || op == OpKind::Min) v.exact = both_exact;
  if (op == OpKind::Mul && both_exact) {
    v.exact = is_power_of_two_factor(a) || is_power_of_two_factor(b);
    v.fmt = is_power_of_two_factor(a) ? b.fmt : a.fmt;
  }
  // fmod is exact; the sign fix-up (r + b) rounds only in a narrow type.
  if (op == OpKind::Mod) v.exact = both_exact && v.dtype() == DType::f32;
  // A cancellation is possible when the terms can have opposite signs.
  const bool b_may_flip = op == OpKind::Add ? (a.lo < 0 && b.hi > 0) || (a.hi > 0 && b.lo < 0)
                                            : (a.hi > 0 && b.hi > 0) || (a.lo < 0 && b.lo < 0);
  if ((op == OpKind::Add || op == OpKind::Sub) && b_may_flip)
    v.scale = std::max({v.scale, a.mag(), b.mag()});
  return v;
}

Val SubgraphGen::where(Tensor cond, Val a, Val b) {
  align_dtypes(a, b);
  Val v = derived({&a, &b}, b_.where(cond, a.t, b.t), {std::min(a.lo, b.lo), std::max(a.hi, b.hi)});
  v.exact = a.exact && b.exact;
  v.fmt = a.fmt == b.fmt ? a.fmt : DType::f32;
  return v;
}

Val SubgraphGen::reduce(OpKind op, const Val& x0, const std::vector<int64_t>& axes, bool keepdims) {
  Val x = x0;
  const double k = static_cast<double>(kMaxElements);  // most elements one reduction sees
  Interval i = {x.lo, x.hi};
  if (op == OpKind::ReduceSum) i = {x.lo >= 0 ? x.lo : x.lo * k, x.hi <= 0 ? x.hi : x.hi * k};
  if (op == OpKind::ReduceProd) i = {-1, 1};  // callers pass |x| <= 1
  if (!fits(x.dtype(), i)) x = cast(x, DType::f32);
  Val v = derived({&x}, b_.reduce(op, x.t, axes, keepdims), i);
  v.fmt = x.fmt;
  v.exact = x.exact && (op == OpKind::ReduceMax || op == OpKind::ReduceMin);
  // The mean of signed values is small while its error is that of the values.
  if (op == OpKind::ReduceMean && x.lo < 0 && x.hi > 0) v.scale = std::max(v.scale, x.mag());
  return v;
}

Val SubgraphGen::movement(const Val& x, Tensor out) {
  Val v = x;
  v.t = out;
  v.is_input = false;
  return v;
}

Val SubgraphGen::movement_of(const std::vector<Val>& ins, Tensor out) {
  Val v = movement(ins.at(0), out);
  for (const Val& in : ins) {
    v.lo = std::min(v.lo, in.lo);
    v.hi = std::max(v.hi, in.hi);
    v.exact = v.exact && in.exact;
    if (in.fmt != v.fmt) v.fmt = DType::f32;
    v.rounding = coarser(v.rounding, in.rounding);
    v.scale = std::max(v.scale, in.scale);
  }
  return v;
}

Val SubgraphGen::squash(const Val& x0, double limit) {
  Val x = x0;
  while (x.mag() > limit) {
    const int choice = rng_.below(3);
    if (choice == 0 && x.lo >= 0.25) {
      x = unary(OpKind::Log, x);
    } else if (choice == 1 && x.mag() <= 64 * limit) {
      // A power-of-two scale: relative error only.
      double factor = 1;
      while (x.mag() * factor > limit)
        factor /= 2;
      x = binary(OpKind::Mul, x, scalar(factor, x.dtype()));
    } else {
      x = unary(OpKind::Tanh, x);
    }
  }
  return x;
}

Val SubgraphGen::positive(const Val& x, double min_lo) {
  if (x.lo >= min_lo) return x;
  switch (rng_.below(4)) {
    case 0:
      return binary(OpKind::Add, unary(OpKind::Abs, squash(x, 4)),
                    scalar(rng_.chance(0.5) ? 0.5 : 1, x.dtype()));
    case 1:
      return unary(OpKind::Exp, squash(x, 1.3));  // >= e^-1.3 > 0.27
    case 2: {
      const Val y = squash(x, 2);
      return binary(OpKind::Add, binary(OpKind::Mul, y, y), scalar(0.5, x.dtype()));
    }
    default:
      return binary(OpKind::Add, unary(OpKind::Sigmoid, x), scalar(0.25, x.dtype()));
  }
}

Tensor SubgraphGen::condition(const Shape& shape, int depth) {
  const int r = rng_.below(10);
  if (depth == 0 && r < 2) {
    const OpKind op = rng_.pick(std::vector<OpKind>{OpKind::And, OpKind::Or, OpKind::Xor});
    const Tensor c1 = condition(shape, 1);
    const Tensor c2 = condition(broadcast_shape(shape, c1.shape()), 1);
    return b_.binary(op, c1, c2);
  }
  if (depth == 0 && r == 2) return b_.unary(OpKind::Not, condition(shape, 1));
  Val e = exact_operand(shape);
  if (r == 3) {
    // NaN / inf predicates whose answer depends only on exact values.
    switch (rng_.below(3)) {
      case 0:
        return b_.unary(OpKind::IsNan, b_.unary(OpKind::Sqrt, e.t));
      case 1:
        return b_.unary(OpKind::IsNan, b_.unary(OpKind::Log, e.t));
      default: {
        const Tensor q = b_.unary(OpKind::Floor, b_.mul(e.t, b_.scalar(2, e.dtype())));
        return b_.unary(OpKind::IsInf, b_.unary(OpKind::Reciprocal, q));
      }
    }
  }
  const OpKind op = rng_.pick(
      std::vector<OpKind>{OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge, OpKind::Eq, OpKind::Ne});
  Val other = rng_.chance(0.5)
                  ? scalar(rng_.pick(std::vector<double>{0, 0.25, -0.5, 0.5}), e.dtype())
                  : exact_operand(broadcast_shape(shape, e.shape()));
  if (op == OpKind::Eq || op == OpKind::Ne) {  // equal values happen once quantized
    e = unary(OpKind::Floor, binary(OpKind::Mul, e, scalar(4, e.dtype())));
    other = unary(OpKind::Floor, binary(OpKind::Mul, other, scalar(4, other.dtype())));
  }
  if (e.dtype() != other.dtype()) {  // f32 holds both exactly
    e = cast(e, DType::f32);
    other = cast(other, DType::f32);
  }
  AF_CHECK(e.exact && other.exact, "fuzz generator: compare of inexact values");
  return rng_.chance(0.5) ? b_.binary(op, e.t, other.t) : b_.binary(op, other.t, e.t);
}

bool SubgraphGen::choose_axes(const Val& x, std::vector<int64_t>& axes) {
  const int r = x.rank();
  std::vector<bool> ok(static_cast<size_t>(r));
  std::vector<int64_t> all;
  for (int d = 0; d < r; ++d) {
    ok[static_cast<size_t>(d)] = sym::value_range(x.shape()[static_cast<size_t>(d)]).lo >= 1;
    if (ok[static_cast<size_t>(d)]) all.push_back(d);
  }
  if (all.empty()) return false;
  axes.clear();
  auto all_ok = [&](int from, int to) {
    for (int d = from; d < to; ++d)
      if (!ok[static_cast<size_t>(d)]) return false;
    return true;
  };
  const int k = rng_.between(1, r);
  switch (rng_.below(5)) {
    case 0:  // inner
      if (all_ok(r - k, r))
        for (int d = r - k; d < r; ++d)
          axes.push_back(d);
      break;
    case 1:  // outer
      if (all_ok(0, k))
        for (int d = 0; d < k; ++d)
          axes.push_back(d);
      break;
    case 2:  // one middle axis
      if (r >= 3) {
        const int d = rng_.between(1, r - 2);
        if (ok[static_cast<size_t>(d)]) axes.push_back(d);
      }
      break;
    case 3:  // several
      for (int64_t d : all)
        if (rng_.chance(0.5)) axes.push_back(d);
      break;
    default:  // all: {} or every axis listed
      if (static_cast<int>(all.size()) == r) {
        if (rng_.chance(0.5)) axes = all;
        return true;
      }
  }
  if (axes.empty()) axes.push_back(rng_.pick(all));
  return true;
}

Val SubgraphGen::with_kept_dims(const Val& r, const Val& like, const std::vector<int64_t>& axes,
                                bool keepdims) {
  if (keepdims) return r;
  Shape target = like.shape();
  bool prefix = true;  // reduced axes 0..k-1: the result already broadcasts
  for (size_t d = 0; d < target.size(); ++d) {
    const bool reduced = axes.empty() || std::find(axes.begin(), axes.end(), d) != axes.end();
    if (reduced) target[d] = 1;
    if (reduced && d > 0 &&
        !(axes.empty() || std::find(axes.begin(), axes.end(), d - 1) != axes.end()))
      prefix = false;
  }
  if (prefix && rng_.chance(0.5)) return r;
  return movement(r, b_.reshape(r.t, target));
}

}  // namespace autofuse::fuzz::detail
