// The generator's data movement steps: transpose, reshape, slice (with
// steps, negative ones too), concat, split, gather (in-range indices: the
// index inputs feed only their gather, so random_inputs draws them in range)
// and broadcast_to. They run as library ops today; the compiled result must
// still equal the reference bit for bit when their input does.
#include <algorithm>
#include <numeric>

#include "fuzz/subgraph_gen.h"

namespace autofuse::fuzz::detail {

namespace {

bool nonempty(const sym::Expr& d) {
  return sym::value_range(d).lo >= 1;
}

}  // namespace

Val SubgraphGen::step_movement() {
  const Val x = pick_operand();
  switch (rng_.below(7)) {
    case 0:
      if (x.rank() >= 2) {
        std::vector<int64_t> perm(static_cast<size_t>(x.rank()));
        std::iota(perm.begin(), perm.end(), 0);
        for (size_t i = perm.size() - 1; i > 0; --i)
          std::swap(perm[i], perm[static_cast<size_t>(rng_.below(static_cast<int>(i) + 1))]);
        return keep(movement(x, b_.transpose(x.t, perm)));
      }
      return reshape_step(x);
    case 1:
      return reshape_step(x);
    case 2:
      return slice_step(x);
    case 3:
      return concat_step(x);
    case 4:
      return split_step(x);
    case 5:
      return gather_step(x);
    default:
      return broadcast_step(x);
  }
}

Val SubgraphGen::reshape_step(const Val& x) {
  Shape s = x.shape();
  const size_t r = s.size();
  std::vector<size_t> ones;
  for (size_t d = 0; d < r; ++d)
    if (s[d].as_const() == 1) ones.push_back(d);
  std::vector<size_t> products;  // dims A*B that can split back into [A, B]
  for (size_t d = 0; d < r; ++d)
    if (s[d].kind() == sym::Kind::Mul && s[d].operands().size() >= 2) products.push_back(d);
  switch (rng_.below(5)) {
    case 0:  // insert a 1
      if (r < 6) {
        s.insert(s.begin() + rng_.between(0, static_cast<int>(r)), sym::Expr(1));
        break;
      }
      [[fallthrough]];
    case 1:  // drop a 1
      if (!ones.empty()) {
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(rng_.pick(ones)));
        break;
      }
      [[fallthrough]];
    case 2:  // split a product
      if (!products.empty()) {
        const size_t d = rng_.pick(products);
        const auto ops = s[d].operands();
        sym::Expr rest = 1;
        for (size_t i = 1; i < ops.size(); ++i)
          rest = rest * ops[i];
        s[d] = ops[0];
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(d) + 1, rest);
        break;
      }
      [[fallthrough]];
    case 3:  // merge two neighbours
      if (r >= 2) {
        const size_t d = static_cast<size_t>(rng_.below(static_cast<int>(r) - 1));
        s[d] = s[d] * s[d + 1];
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(d) + 1);
        break;
      }
      [[fallthrough]];
    default:  // flatten (rank 1: to [1, n])
      s = r >= 2 ? Shape{numel(s)} : Shape{1, numel(s)};
  }
  return keep(movement(x, b_.reshape(x.t, s)));
}

Val SubgraphGen::slice_step(const Val& x) {
  if (x.rank() == 0) return reshape_step(x);
  SliceAttrs a;
  const int n = rng_.between(1, std::min(2, x.rank()));
  std::vector<int64_t> dims(static_cast<size_t>(x.rank()));
  std::iota(dims.begin(), dims.end(), 0);
  for (int i = 0; i < n; ++i) {
    const int j = rng_.between(i, x.rank() - 1);
    std::swap(dims[static_cast<size_t>(i)], dims[static_cast<size_t>(j)]);
    const int64_t step = rng_.pick(std::vector<int64_t>{1, 1, 2, 3, -1, -2});
    a.axes.push_back(dims[static_cast<size_t>(i)]);
    a.steps.push_back(step);
    if (step > 0) {
      a.starts.push_back(rng_.pick(std::vector<int64_t>{0, 0, 1, 2, -1, -3}));
      a.ends.push_back(rng_.pick(std::vector<int64_t>{kSliceEnd, kSliceEnd, -1, 3, 1000}));
    } else {
      a.starts.push_back(rng_.pick(std::vector<int64_t>{-1, -1, 2, 1000}));
      a.ends.push_back(rng_.pick(std::vector<int64_t>{kSliceEnd, kSliceEnd, 0, -4}));
    }
  }
  return keep(movement(x, b_.slice(x.t, a)));
}

Val SubgraphGen::concat_step(const Val& x) {
  if (x.rank() == 0) return reshape_step(x);
  const int64_t axis = rng_.below(x.rank());
  std::vector<Val> parts = {x};
  const int n = rng_.between(2, 3);
  for (int i = 1; i < n; ++i) {
    Val p;
    std::vector<const Val*> same;
    for (const Val& v : pool_)
      if (v.shape() == x.shape()) same.push_back(&v);
    if (rng_.chance(0.4)) {
      p = *rng_.pick(same);  // x itself at least
    } else {
      Shape s = x.shape();
      s[static_cast<size_t>(axis)] = rng_.chance(0.5) || symbols_.empty()
                                         ? sym::Expr(rng_.pick(std::vector<int64_t>{1, 2, 3}))
                                         : sym::Expr::symbol(rng_.pick(symbols_));
      p = keep(input(random_float_dtype(), s));
    }
    parts.push_back(cast(p, x.dtype()));
  }
  for (const Val& p : parts)
    if (p.dtype() != x.dtype())  // a part too large for f16: all in f32
      for (Val& q : parts)
        q = cast(q, DType::f32);
  if (rng_.chance(0.5)) std::swap(parts[0], parts.back());
  std::vector<Tensor> ts;
  for (const Val& p : parts)
    ts.push_back(p.t);
  return keep(movement_of(parts, b_.concat(ts, axis)));
}

Val SubgraphGen::split_step(const Val& x) {
  std::vector<int64_t> axes;
  for (int d = 0; d < x.rank(); ++d)
    if (nonempty(x.shape()[static_cast<size_t>(d)])) axes.push_back(d);
  if (axes.empty()) return reshape_step(x);
  const int64_t axis = rng_.pick(axes);
  const sym::Expr dim = x.shape()[static_cast<size_t>(axis)];
  std::vector<sym::Expr> sizes;
  if (std::optional<int64_t> c = dim.as_const(); c && *c >= 2) {
    const int64_t first = rng_.between(1, static_cast<int>(*c) - 1);
    sizes = {first, *c - first};
  } else if (rng_.chance(0.5)) {
    sizes = {dim - 1, 1};  // an empty part when dim == 1
  } else {
    sizes = {1, dim - 1};
  }
  std::vector<Tensor> outs = b_.split(x.t, axis, sizes);
  for (const Tensor& t : outs)
    keep(movement(x, t));
  // Any part may go on as the head; the others stay candidates.
  head_ = static_cast<int>(pool_.size()) - 1 - rng_.below(static_cast<int>(outs.size()));
  return pool_[static_cast<size_t>(head_)];
}

Val SubgraphGen::gather_step(const Val& x) {
  std::vector<int64_t> axes;
  for (int d = 0; d < x.rank(); ++d)
    if (nonempty(x.shape()[static_cast<size_t>(d)])) axes.push_back(d);
  if (axes.empty()) return reshape_step(x);
  const int64_t axis = rng_.pick(axes);
  Shape idx_shape;
  switch (rng_.below(4)) {
    case 0:
      break;  // a scalar index drops the axis
    case 1:
      idx_shape = {rng_.pick(std::vector<int64_t>{1, 3, 5})};
      break;
    case 2:
      idx_shape = {symbols_.empty() ? sym::Expr(2) : sym::Expr::symbol(rng_.pick(symbols_))};
      break;
    default:
      idx_shape = x.rank() <= 4 ? Shape{2, 3} : Shape{4};
  }
  const DType idx_dtype = rng_.chance(0.5) ? DType::i64 : DType::i32;
  const Val idx = integer_input(idx_dtype, idx_shape);
  return keep(movement(x, b_.gather(x.t, idx.t, axis)));
}

Val SubgraphGen::broadcast_step(const Val& x) {
  Shape target = x.shape();
  bool changed = false;
  for (sym::Expr& d : target)
    if (d.as_const() == 1 && rng_.chance(0.7)) {
      d = symbols_.empty() || rng_.chance(0.3) ? sym::Expr(3)
                                               : sym::Expr::symbol(rng_.pick(symbols_));
      changed = true;
    }
  if ((!changed || rng_.chance(0.3)) && target.size() < 6)
    target.insert(target.begin(), symbols_.empty() || rng_.chance(0.3)
                                      ? sym::Expr(2)
                                      : sym::Expr::symbol(rng_.pick(symbols_)));
  return keep(movement(x, b_.broadcast_to(x.t, target)));
}

}  // namespace autofuse::fuzz::detail
