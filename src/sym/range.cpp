// Value ranges and proofs. Intervals use saturating infinities (kNegInf /
// kPosInf); polynomials get two extra lower-bound methods:
//  * shift: each atom with a finite bound L is written L + y (or U - y) with
//    y >= 0; after expanding, terms with non-negative coefficients are >= 0
//    (proves N*M >= N, N*N >= N, ...);
//  * case split / linearization of an atom that occurs linearly:
//    c*min(x, y) = min(c*x, c*y) for c > 0 (and the like for max),
//    k*floordiv(x, k) in [x - k + 1, x] for a constant k > 0, and
//    mod(x, d) <= d - 1 for d >= 1.
#include <algorithm>

#include "sym/internal.h"

namespace autofuse::sym {

using detail::kNegInf;
using detail::kPosInf;
using detail::Monomial;
using detail::Poly;

namespace {

int64_t saturate(__int128 v) {
  if (v <= kNegInf) return kNegInf;
  if (v >= kPosInf) return kPosInf;
  return static_cast<int64_t>(v);
}

bool is_inf(int64_t v) {
  return v == kNegInf || v == kPosInf;
}

int64_t neg_ext(int64_t v) {
  if (v == kPosInf) return kNegInf;
  if (v == kNegInf) return kPosInf;
  return -v;
}

Range neg_range(Range r) {
  return {neg_ext(r.hi), neg_ext(r.lo)};
}

int64_t add_lo(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return kNegInf;
  return saturate(static_cast<__int128>(a) + b);
}

int64_t add_hi(int64_t a, int64_t b) {
  if (a == kPosInf || b == kPosInf) return kPosInf;
  return saturate(static_cast<__int128>(a) + b);
}

int64_t mul_ext(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (is_inf(a) || is_inf(b)) return ((a < 0) == (b < 0)) ? kPosInf : kNegInf;
  return saturate(static_cast<__int128>(a) * b);
}

Range mul_range(Range a, Range b) {
  int64_t c[4] = {mul_ext(a.lo, b.lo), mul_ext(a.lo, b.hi), mul_ext(a.hi, b.lo),
                  mul_ext(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

/// floordiv(x, y) for y >= 1; x and y may be infinite. The ambiguous
/// corners (inf/inf) only ever feed the bound where the returned infinity is
/// the safe answer, because floordiv is monotone in x.
int64_t floordiv_ext(int64_t x, int64_t y) {
  if (y == kPosInf) {
    if (is_inf(x)) return x;
    return x >= 0 ? 0 : -1;
  }
  if (is_inf(x)) return x;
  return *detail::floor_div(x, y);
}

/// Range of floordiv(x, d) for d >= 1.
Range floordiv_range_pos(Range x, Range d) {
  return {std::min(floordiv_ext(x.lo, d.lo), floordiv_ext(x.lo, d.hi)),
          std::max(floordiv_ext(x.hi, d.lo), floordiv_ext(x.hi, d.hi))};
}

Range floordiv_range(Range x, Range d) {
  if (d.lo >= 1) return floordiv_range_pos(x, d);
  if (d.hi <= -1) return floordiv_range_pos(neg_range(x), neg_range(d));
  return {kNegInf, kPosInf};
}

Range mod_range(Range x, Range d, std::optional<int64_t> d_const) {
  if (d_const && *d_const > 0 && !is_inf(x.lo) && !is_inf(x.hi)) {
    int64_t qlo = *detail::floor_div(x.lo, *d_const);
    int64_t qhi = *detail::floor_div(x.hi, *d_const);
    if (qlo == qhi) {                  // no wrap-around inside the range
      int64_t shift = qlo * *d_const;  // between x.lo - d + 1 and x.lo: no overflow
      return {x.lo - shift, x.hi - shift};
    }
  }
  if (d.lo >= 1) {
    Range r{0, d.hi == kPosInf ? kPosInf : d.hi - 1};
    if (x.lo >= 0) r.hi = std::min(r.hi, x.hi);
    return r;
  }
  if (d.hi <= -1) {
    Range r{d.lo == kNegInf ? kNegInf : d.lo + 1, 0};
    if (x.hi <= 0) r.lo = std::max(r.lo, x.lo);
    return r;
  }
  return {d.lo == kNegInf ? kNegInf : std::min<int64_t>(0, d.lo + 1),
          d.hi == kPosInf ? kPosInf : std::max<int64_t>(0, d.hi - 1)};
}

Range atom_range(const Expr& e);

using AtomRanges = std::vector<std::pair<Expr, Range>>;

const Range& cached_range(AtomRanges& cache, const Expr& atom) {
  for (const auto& [a, r] : cache) {
    if (a == atom) return r;
  }
  cache.emplace_back(atom, atom_range(atom));
  return cache.back().second;
}

Range interval(const Poly& p, AtomRanges& cache) {
  Range sum{0, 0};
  for (const auto& [mono, coef] : p.terms) {
    Range t{coef, coef};
    for (const Expr& atom : mono)
      t = mul_range(t, cached_range(cache, atom));
    sum = {add_lo(sum.lo, t.lo), add_hi(sum.hi, t.hi)};
  }
  return sum;
}

/// The shift method (see the file comment). kNegInf when it does not apply.
int64_t shifted_lower_bound(const Poly& p, AtomRanges& cache) {
  struct Shift {
    Expr atom;
    int64_t base;   // L or U
    int64_t sign;   // +1: atom = L + y, -1: atom = U - y
    int64_t y_max;  // kPosInf when unbounded
  };
  std::vector<Shift> shifts;
  for (const auto& [mono, coef] : p.terms) {
    for (const Expr& atom : mono) {
      if (std::any_of(shifts.begin(), shifts.end(), [&](const Shift& s) { return s.atom == atom; }))
        continue;
      Range r = cached_range(cache, atom);
      int64_t width =
          (is_inf(r.lo) || is_inf(r.hi)) ? kPosInf : saturate(static_cast<__int128>(r.hi) - r.lo);
      if (!is_inf(r.lo)) {
        shifts.push_back({atom, r.lo, 1, width});
      } else if (!is_inf(r.hi)) {
        shifts.push_back({atom, r.hi, -1, width});
      } else {
        return kNegInf;
      }
    }
  }
  if (shifts.size() > 16) return kNegInf;
  using Exps = std::vector<uint8_t>;
  // Coefficients stay below 2^62 so that a product with an int64 fits __int128.
  constexpr __int128 kLimit = static_cast<__int128>(1) << 62;
  std::map<Exps, __int128> total;
  for (const auto& [mono, coef] : p.terms) {
    std::map<Exps, __int128> term{{Exps(shifts.size(), 0), coef}};
    for (const Expr& atom : mono) {
      size_t i = 0;
      while (!(shifts[i].atom == atom))
        ++i;
      std::map<Exps, __int128> next;
      for (const auto& [exps, c] : term) {
        next[exps] += c * shifts[i].base;
        Exps raised = exps;
        if (++raised[i] > 8) return kNegInf;
        next[raised] += c * shifts[i].sign;
      }
      for (const auto& [exps, c] : next) {
        if (c > kLimit || c < -kLimit) return kNegInf;
      }
      if (next.size() > 4096) return kNegInf;
      term = std::move(next);
    }
    for (const auto& [exps, c] : term)
      total[exps] += c;
  }
  // Each y is in [0, y_max]: a term with a positive coefficient is >= 0, a
  // negative one is >= c * prod(y_max^e).
  __int128 lo = 0;
  for (const auto& [exps, c] : total) {
    bool constant = std::all_of(exps.begin(), exps.end(), [](uint8_t e) { return e == 0; });
    if (constant || c >= 0) {
      if (constant) lo += c;
      continue;
    }
    __int128 worst = c;
    for (size_t i = 0; i < exps.size(); ++i) {
      for (int k = 0; k < exps[i]; ++k) {
        if (shifts[i].y_max == kPosInf) return kNegInf;
        worst *= shifts[i].y_max;
        if (worst < -kLimit) return kNegInf;
      }
    }
    lo += worst;
    if (lo < -kLimit || lo > kLimit) return kNegInf;
  }
  return saturate(lo);
}

int64_t lower_bound_impl(const Poly& p, int depth, int64_t target);

/// Case split or linearization of an atom that occurs linearly; the best
/// bound over the candidate atoms.
int64_t split_lower_bound(const Poly& p, int depth, int64_t target) {
  int64_t best = kNegInf;
  for (const auto& [mono, coef] : p.terms) {
    if (mono.size() != 1) continue;
    const Expr& atom = mono[0];
    Kind kind = atom.kind();
    if (kind != Kind::Min && kind != Kind::Max && kind != Kind::FloorDiv && kind != Kind::CeilDiv &&
        !(kind == Kind::Mod && coef < 0)) {
      continue;
    }
    // The atom must not occur in any other term.
    bool linear = true;
    for (const auto& [other, c] : p.terms) {
      if (&other == &mono) continue;
      if (std::any_of(other.begin(), other.end(), [&](const Expr& a) { return a == atom; })) {
        linear = false;
        break;
      }
    }
    if (!linear) continue;
    Poly rest = p;
    rest.terms.erase(mono);
    Poly x = Poly::from_expr(atom.operands()[0]);
    const Expr& y_expr = atom.operands()[1];
    int64_t c = coef;
    if (kind == Kind::Min || kind == Kind::Max) {
      Poly p1 = detail::add(rest, detail::scale(x, c));
      Poly p2 = detail::add(rest, detail::scale(Poly::from_expr(y_expr), c));
      int64_t l1 = lower_bound_impl(p1, depth - 1, target);
      int64_t l2 = lower_bound_impl(p2, depth - 1, target);
      bool is_min_of_cases = (kind == Kind::Min) == (c > 0);
      best = std::max(best, is_min_of_cases ? std::min(l1, l2) : std::max(l1, l2));
      continue;
    }
    if (kind == Kind::Mod) {
      // mod(x, d) <= d - 1 for d >= 1, and the coefficient is negative.
      if (value_range(y_expr).lo < 1) continue;
      Poly bound = detail::sub(Poly::from_expr(y_expr), Poly::constant(1));
      best = std::max(
          best, lower_bound_impl(detail::add(rest, detail::scale(bound, c)), depth - 1, target));
      continue;
    }
    auto k = y_expr.as_const();
    if (!k || *k <= 0) continue;
    // k*floordiv(x, k) is in [x - k + 1, x]; k*ceildiv(x, k) in [x, x + k - 1].
    // Bound k*p (same sign as p), then divide back rounding up.
    Poly scaled_rest = detail::scale(rest, *k);
    Poly low = kind == Kind::FloorDiv ? detail::sub(x, Poly::constant(*k - 1)) : x;
    Poly high = kind == Kind::FloorDiv ? x : detail::add(x, Poly::constant(*k - 1));
    int64_t lb = lower_bound_impl(detail::add(scaled_rest, detail::scale(c > 0 ? low : high, c)),
                                  depth - 1, mul_ext(target, *k));
    if (lb != kNegInf) best = std::max(best, lb == kPosInf ? kPosInf : *detail::ceil_div(lb, *k));
  }
  return best;
}

/// A lower bound of p; stops improving once it reaches `target` (the
/// proofs only compare against their target; kPosInf asks for the best).
int64_t lower_bound_impl(const Poly& p, int depth, int64_t target) {
  if (auto c = p.as_const()) return *c;
  AtomRanges cache;
  int64_t lo = interval(p, cache).lo;
  if (lo >= target) return lo;
  // For a linear polynomial the shift method gives the interval bound again.
  bool linear = std::all_of(p.terms.begin(), p.terms.end(),
                            [](const auto& term) { return term.first.size() <= 1; });
  if (!linear) lo = std::max(lo, shifted_lower_bound(p, cache));
  if (lo >= target || depth <= 0) return lo;
  try {
    lo = std::max(lo, split_lower_bound(p, depth, target));
  } catch (const UserError&) {
    // Overflow while forming a case: that case proves nothing.
  }
  return lo;
}

constexpr int kSplitDepth = 3;

Range atom_range(const Expr& e) {
  switch (e.kind()) {
    case Kind::Const:
      return {*e.as_const(), *e.as_const()};
    case Kind::Symbol:
      return {1, kPosInf};
    case Kind::Add:
    case Kind::Mul: {
      Poly p = Poly::from_expr(e);
      return {detail::lower_bound(p, kPosInf), detail::upper_bound(p)};
    }
    case Kind::FloorDiv:
      return floordiv_range(value_range(e.operands()[0]), value_range(e.operands()[1]));
    case Kind::CeilDiv:
      return neg_range(
          floordiv_range(neg_range(value_range(e.operands()[0])), value_range(e.operands()[1])));
    case Kind::Mod:
      return mod_range(value_range(e.operands()[0]), value_range(e.operands()[1]),
                       e.operands()[1].as_const());
    case Kind::Min:
    case Kind::Max: {
      Range a = value_range(e.operands()[0]);
      Range b = value_range(e.operands()[1]);
      if (e.kind() == Kind::Min) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
  }
  return {kNegInf, kPosInf};
}

}  // namespace

namespace detail {

int64_t lower_bound(const Poly& p, int64_t target) {
  return lower_bound_impl(p, kSplitDepth, target);
}

int64_t upper_bound(const Poly& p) {
  try {
    return neg_ext(lower_bound(scale(p, -1), kPosInf));
  } catch (const UserError&) {
    AtomRanges cache;
    return interval(p, cache).hi;
  }
}

int64_t lower_bound_of_difference(const Expr& a, const Expr& b, int64_t target) {
  try {
    return lower_bound(sub(Poly::from_expr(b), Poly::from_expr(a)), target);
  } catch (const UserError&) {
    return kNegInf;  // b - a does not even fit: nothing proven
  }
}

}  // namespace detail

Range value_range(const Expr& e) {
  return atom_range(e);
}

bool proven_le(const Expr& a, const Expr& b) {
  return a == b || detail::lower_bound_of_difference(a, b, 0) >= 0;
}

bool proven_lt(const Expr& a, const Expr& b) {
  return detail::lower_bound_of_difference(a, b, 1) >= 1;
}

bool proven_eq(const Expr& a, const Expr& b) {
  return a == b || (detail::lower_bound_of_difference(a, b, 0) >= 0 &&
                    detail::lower_bound_of_difference(b, a, 0) >= 0);
}

bool proven_ne(const Expr& a, const Expr& b) {
  return detail::lower_bound_of_difference(a, b, 1) >= 1 ||
         detail::lower_bound_of_difference(b, a, 1) >= 1;
}

}  // namespace autofuse::sym
