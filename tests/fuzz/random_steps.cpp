// The generator's steps: each draws an op family, fixes up its operands
// with the domain helpers of random_ops.cpp, and keeps the result as the
// new chain head.
#include <algorithm>
#include <cmath>

#include "fuzz/subgraph_gen.h"

namespace autofuse::fuzz::detail {

Val SubgraphGen::safe_binary(OpKind op, Val a, Val b) {
  switch (op) {
    case OpKind::Add:
    case OpKind::Sub:
      a = squash(a, 4);
      b = squash(b, 4);
      break;
    case OpKind::Mul:
      a = squash(a, 16);
      b = squash(b, 16);
      break;
    case OpKind::Div:
      a = squash(a, 16);
      b = positive(b);
      if (rng_.chance(0.3)) b = unary(OpKind::Neg, b);
      break;
    case OpKind::Pow:
      if (!(a.lo >= 0.25 && a.hi <= 4))
        a = binary(OpKind::Add, unary(OpKind::Sigmoid, a), scalar(0.5, a.dtype()));  // [0.5, 1.5]
      if (b.mag() > 2) {
        if (rng_.chance(0.5))
          b = binary(OpKind::Min, binary(OpKind::Max, b, scalar(-2, b.dtype())),
                     scalar(2, b.dtype()));
        else
          b = binary(OpKind::Mul, unary(OpKind::Tanh, b), scalar(2, b.dtype()));
      }
      break;
    default:  // max, min
      break;
  }
  return binary(op, a, b);
}

Val SubgraphGen::step_unary() {
  static const std::vector<OpKind> kOps = {
      OpKind::Neg,     OpKind::Abs,        OpKind::Exp, OpKind::Log, OpKind::Sqrt,
      OpKind::Rsqrt,   OpKind::Reciprocal, OpKind::Sin, OpKind::Cos, OpKind::Tanh,
      OpKind::Sigmoid, OpKind::Relu,       OpKind::Erf};
  Val x = pick_operand();
  const OpKind op = rng_.pick(kOps);
  switch (op) {
    case OpKind::Log:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
      x = positive(x);
      break;
    case OpKind::Reciprocal:
      x = positive(x);
      if (rng_.chance(0.3)) x = unary(OpKind::Neg, x);
      break;
    case OpKind::Exp:
      x = squash(x, 4);
      break;
    case OpKind::Sin:
    case OpKind::Cos:
      x = squash(x, 16);
      break;
    default:
      break;
  }
  return keep(unary(op, x));
}

Val SubgraphGen::step_binary() {
  static const std::vector<OpKind> kOps = {OpKind::Add, OpKind::Add, OpKind::Sub, OpKind::Sub,
                                           OpKind::Mul, OpKind::Mul, OpKind::Div, OpKind::Pow,
                                           OpKind::Max, OpKind::Min};
  const OpKind op = rng_.pick(kOps);
  Val a = pick_operand();
  Val b = partner(a, true);
  if (op != OpKind::Div && op != OpKind::Pow && rng_.chance(0.5)) std::swap(a, b);
  return keep(safe_binary(op, a, b));
}

Val SubgraphGen::step_where() {
  Val a = pick_operand();
  const Tensor cond = condition(a.shape());
  const Shape cond_shape = cond.shape();
  Val b = partner(a, true, &cond_shape);
  if (rng_.chance(0.5)) std::swap(a, b);
  return keep(where(cond, a, b));
}

Val SubgraphGen::step_cast() {
  const Val x = pick_operand();
  std::vector<DType> to;
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    if (t != x.dtype()) to.push_back(t);
  return keep(cast(x, rng_.pick(to)));
}

Val SubgraphGen::step_quantize() {
  Val x = pick_operand();
  if (!x.exact || x.mag() > 16) x = exact_operand(x.shape());
  Val q;
  switch (rng_.below(6)) {
    case 0:
      q = unary(OpKind::Floor, binary(OpKind::Mul, x, scalar(4, x.dtype())));
      break;
    case 1:
      q = unary(OpKind::Ceil, binary(OpKind::Mul, x, scalar(2, x.dtype())));
      break;
    case 2:  // f16/bf16 inputs hit exact .5 ties here
      q = unary(OpKind::Round, binary(OpKind::Mul, binary(OpKind::Mul, x, scalar(4, x.dtype())),
                                      scalar(2, x.dtype())));
      break;
    case 3:
      q = unary(OpKind::Sign, x);
      break;
    case 4: {  // floor-mod by a constant or by an exact value >= 0.5 in size
      Val d = x;
      if (rng_.chance(0.5)) {
        d = scalar(rng_.pick(std::vector<double>{0.75, -1.5, 0.5, 1.25}), x.dtype());
      } else {
        const Val e = exact_operand(x.shape());
        d = binary(OpKind::Max, unary(OpKind::Abs, e), scalar(0.5, e.dtype()));
      }
      if (rng_.chance(0.3)) d = unary(OpKind::Neg, d);
      q = binary(OpKind::Mod, x, d);
      break;
    }
    default:
      q = binary(OpKind::Max,
                 unary(rng_.pick(std::vector<OpKind>{OpKind::Relu, OpKind::Abs, OpKind::Neg}), x),
                 scalar(-0.5, x.dtype()));
  }
  const Val head = pool_[static_cast<size_t>(head_)];  // before q becomes the head
  q = keep(q);
  if (broadcasts(head.shape(), q.shape()) && (options_.elementwise_only || rng_.chance(0.5))) {
    const OpKind op = rng_.pick(std::vector<OpKind>{OpKind::Mul, OpKind::Add, OpKind::Max});
    return keep(safe_binary(op, head, q));
  }
  return q;
}

Val SubgraphGen::step_reduce() {
  Val x = pick_operand();
  std::vector<int64_t> axes;
  if (!choose_axes(x, axes)) return step_unary();
  const bool keepdims = rng_.chance(0.5);
  const int r = rng_.below(100);
  Val result;
  if (r < 28) {
    result = reduce(OpKind::ReduceMean, x, axes, keepdims);
  } else if (r < 54) {
    // Sums of non-negative values (relative error) or of small integers (exact).
    bool integral = false;
    Val terms = x;
    if (x.lo >= 0) {
    } else if (x.exact && x.mag() <= 4 && rng_.chance(0.5)) {  // |terms| <= 16
      terms = unary(OpKind::Floor, binary(OpKind::Mul, x, scalar(4, x.dtype())));
      integral = true;
    } else {
      switch (rng_.below(4)) {
        case 0: {
          const Val y = squash(x, 4);
          terms = binary(OpKind::Mul, y, y);
          break;
        }
        case 1:
          terms = unary(OpKind::Exp, squash(x, 4));
          break;
        case 2:
          terms = unary(OpKind::Abs, x);
          break;
        default:
          terms = unary(OpKind::Sigmoid, x);
      }
    }
    result = reduce(OpKind::ReduceSum, terms, axes, keepdims);
    // Integers whose sums stay below 2^24 sum exactly in f32, in any order.
    if (integral && result.dtype() == DType::f32 && result.mag() < 0x1p24) result.exact = true;
  } else if (r < 72) {
    result = reduce(OpKind::ReduceMax, x, axes, keepdims);
  } else if (r < 86) {
    result = reduce(OpKind::ReduceMin, x, axes, keepdims);
  } else {
    // Products of exact factors in [-1, 1]: +-1 (exact), the values, or |x| clamped to [0.5, 1].
    Val e = x.exact && x.mag() <= 1 ? x : keep(input(random_float_dtype(), x.shape()));
    const int kind = rng_.below(3);
    if (kind == 1)
      e = where(b_.binary(OpKind::Gt, e.t, b_.scalar(0, e.dtype())), scalar(1, e.dtype()),
                scalar(-1, e.dtype()));
    else if (kind == 2)
      e = binary(OpKind::Max, unary(OpKind::Abs, e), scalar(0.5, e.dtype()));
    result = reduce(OpKind::ReduceProd, e, axes, keepdims);
    result.exact = kind == 1;
  }
  result = keep(result);
  if (rng_.chance(0.6)) {  // a consumer that broadcasts the result back over x
    const Val back = with_kept_dims(result, x, axes, keepdims);
    const OpKind op = rng_.pick(std::vector<OpKind>{OpKind::Sub, OpKind::Sub, OpKind::Div,
                                                    OpKind::Mul, OpKind::Add, OpKind::Max});
    return keep(safe_binary(op, x, back));
  }
  return result;
}

Val SubgraphGen::step_pattern() {
  const Val x = squash(pick_operand(), 4);
  std::vector<int64_t> axes;
  const int rank = x.rank();
  if (rank >= 1 && rng_.chance(0.6) && sym::value_range(x.shape().back()).lo >= 1) {
    axes = {rank - 1};
  } else if (!choose_axes(x, axes)) {
    return step_unary();
  }
  const bool keepdims = rng_.chance(0.5);
  switch (rng_.below(4)) {
    case 0: {  // softmax
      const Val m = reduce(OpKind::ReduceMax, x, axes, true);
      Val d = binary(OpKind::Sub, x, m);
      d.lo = x.lo - x.hi;
      d.hi = 0;
      const Val e = unary(OpKind::Exp, d);
      Val s = reduce(OpKind::ReduceSum, e, axes, keepdims);
      s.lo = 1;  // the max element contributes exp(0) = 1
      Val y = binary(OpKind::Div, e, with_kept_dims(s, x, axes, keepdims));
      y.lo = 0;
      y.hi = 1;
      return keep(y);
    }
    case 1: {  // layernorm
      const Val mu = reduce(OpKind::ReduceMean, x, axes, true);
      const Val xc = binary(OpKind::Sub, x, mu);
      const Val var = reduce(OpKind::ReduceMean, binary(OpKind::Mul, xc, xc), axes, keepdims);
      // eps >= 0.1 bounds d(y)/d(xc) by 1/sqrt(eps) on tiny rows.
      const double eps = rng_.pick(std::vector<double>{0.125, 0.25, 1});
      const Val rs = unary(
          OpKind::Rsqrt,
          binary(OpKind::Add, with_kept_dims(var, x, axes, keepdims), scalar(eps, var.dtype())));
      return keep(binary(OpKind::Mul, xc, rs));
    }
    case 2: {  // rmsnorm
      const Val ms = reduce(OpKind::ReduceMean, binary(OpKind::Mul, x, x), axes, keepdims);
      const double eps = rng_.pick(std::vector<double>{0.125, 0.25, 1});
      const Val rs = unary(OpKind::Rsqrt, binary(OpKind::Add, with_kept_dims(ms, x, axes, keepdims),
                                                 scalar(eps, ms.dtype())));
      return keep(binary(OpKind::Mul, x, rs));
    }
    default: {  // logsumexp
      const Val m = reduce(OpKind::ReduceMax, x, axes, keepdims);
      Val d = binary(OpKind::Sub, x, with_kept_dims(m, x, axes, keepdims));
      d.lo = x.lo - x.hi;
      d.hi = 0;
      Val s = reduce(OpKind::ReduceSum, unary(OpKind::Exp, d), axes, keepdims);
      s.lo = 1;
      return keep(binary(OpKind::Add, unary(OpKind::Log, s), m));
    }
  }
}

}  // namespace autofuse::fuzz::detail
