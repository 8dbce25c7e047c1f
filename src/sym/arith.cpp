// The simplifying factories: + - * via the polynomial view, floordiv /
// ceildiv / mod with divisor splitting and range rules, and min / max with
// flattening and pruning of proven-dominated operands. Every rewrite here is
// exact for all integers given that symbols are >= 1.
#include <algorithm>
#include <numeric>

#include "sym/internal.h"

namespace autofuse::sym {

using detail::Monomial;
using detail::Poly;

Expr operator+(const Expr& a, const Expr& b) {
  if (auto ca = a.as_const(), cb = b.as_const(); ca && cb) return detail::checked_add(*ca, *cb);
  return detail::add(Poly::from_expr(a), Poly::from_expr(b)).to_expr();
}

Expr operator-(const Expr& a, const Expr& b) {
  return detail::sub(Poly::from_expr(a), Poly::from_expr(b)).to_expr();
}

Expr operator*(const Expr& a, const Expr& b) {
  if (auto ca = a.as_const(), cb = b.as_const(); ca && cb) return detail::checked_mul(*ca, *cb);
  return detail::mul(Poly::from_expr(a), Poly::from_expr(b)).to_expr();
}

Expr operator-(const Expr& a) {
  return detail::scale(Poly::from_expr(a), -1).to_expr();
}

namespace {

enum class Div { Floor, Ceil, Mod };

Kind div_kind(Div div) {
  switch (div) {
    case Div::Floor:
      return Kind::FloorDiv;
    case Div::Ceil:
      return Kind::CeilDiv;
    case Div::Mod:
      return Kind::Mod;
  }
  return Kind::Mod;
}

std::optional<int64_t> fold(Div div, int64_t a, int64_t b) {
  switch (div) {
    case Div::Floor:
      return detail::floor_div(a, b);
    case Div::Ceil:
      return detail::ceil_div(a, b);
    case Div::Mod:
      return detail::floor_mod(a, b);
  }
  return std::nullopt;
}

bool positive(const Expr& e) {
  return value_range(e).lo >= 1;
}

bool mono_positive(const Monomial& m) {
  return std::all_of(m.begin(), m.end(), [](const Expr& atom) { return positive(atom); });
}

/// If `m` contains `d` as a sub-multiset, the rest of `m`.
std::optional<Monomial> mono_divide(const Monomial& m, const Monomial& d) {
  Monomial rest;
  size_t j = 0;
  for (const Expr& atom : m) {
    if (j < d.size() && atom == d[j]) {
      ++j;
    } else {
      rest.push_back(atom);
    }
  }
  if (j != d.size()) return std::nullopt;
  return rest;
}

Monomial mono_intersect(const Monomial& a, const Monomial& b) {
  Monomial r;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(r),
                        [](const Expr& x, const Expr& y) { return Expr::compare(x, y) < 0; });
  return r;
}

/// gcd(|a|, |b|) for a > 0; safe for INT64_MIN (std::gcd is not).
int64_t gcd(int64_t a, int64_t b) {
  uint64_t x = static_cast<uint64_t>(a);
  uint64_t y = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  while (y != 0) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return static_cast<int64_t>(x);  // <= a, so it fits
}

/// For a divisor d > 0: 0 <= n < d gives floordiv 0 and mod n; 0 < n <= d
/// gives ceildiv 1 (and n = 0 is caught before).
std::optional<Expr> quotient_from_bounds(Div div, const Expr& n, const Expr& d) {
  int64_t lo = value_range(n).lo;
  if (div == Div::Ceil) {
    if (lo >= 1 && proven_le(n, d)) return Expr(1);
    return std::nullopt;
  }
  if (lo >= 0 && proven_lt(n, d)) return div == Div::Floor ? Expr(0) : n;
  return std::nullopt;
}

Expr make_div(Div div, const Expr& a, const Expr& b) {
  return detail::make_node(div_kind(div), {a, b});
}

Expr build_div(Div div, const Expr& a, const Expr& b);

/// div(rest, c*m) where c > 0 and m is a provably positive monomial, and no
/// term of `rest` is a multiple of c*m.
Expr divide_remainder(Div div, Poly rest, int64_t c, Monomial m) {
  if (rest.is_zero()) return 0;
  // Cancel the common factor g of numerator and divisor (g > 0):
  // floordiv(g*a, g*b) = floordiv(a, b), ceildiv likewise, mod(g*a, g*b) = g*mod(a, b).
  int64_t g = c;
  Monomial common = m;
  for (const auto& [mono, coef] : rest.terms) {
    g = gcd(g, coef);
    common = mono_intersect(common, mono);
  }
  if (g > 1 || !common.empty()) {
    Poly reduced;
    for (const auto& [mono, coef] : rest.terms) {
      reduced.terms.emplace(*mono_divide(mono, common), coef / g);
    }
    Monomial m_reduced = *mono_divide(m, common);
    Expr inner = divide_remainder(div, std::move(reduced), c / g, std::move(m_reduced));
    if (div != Div::Mod) return inner;
    Poly factor;
    factor.terms.emplace(common, g);
    return detail::mul(factor, Poly::from_expr(inner)).to_expr();
  }
  if (c == 1 && m.empty()) return div == Div::Mod ? Expr(0) : rest.to_expr();

  Expr numerator = rest.to_expr();
  Poly divisor_poly;
  divisor_poly.terms.emplace(m, c);
  Expr divisor = divisor_poly.to_expr();

  // Range rules: the quotient is the same for every value in the range.
  if (m.empty()) {
    Range r = value_range(numerator);
    if (r.lo != detail::kNegInf && r.hi != detail::kPosInf) {
      auto qlo = detail::floor_div(r.lo, c), qhi = detail::floor_div(r.hi, c);
      if (div == Div::Ceil) {
        auto clo = detail::ceil_div(r.lo, c), chi = detail::ceil_div(r.hi, c);
        if (clo && chi && *clo == *chi) return *clo;
      } else if (qlo && qhi && *qlo == *qhi) {
        if (div == Div::Floor) return *qlo;
        return numerator - Expr(detail::checked_mul(*qlo, c));
      }
    }
  } else if (auto q = quotient_from_bounds(div, numerator, divisor)) {
    return *q;
  }

  // Nested divisions by positive divisors.
  if (numerator.kind() == div_kind(div) || numerator.kind() == Kind::Mod) {
    const Expr& x = numerator.operands()[0];
    const Expr& k = numerator.operands()[1];
    if (div == Div::Mod && numerator.kind() == Kind::Mod) {
      // mod(mod(x, k), d) = mod(x, d) when d divides k (k != 0).
      if (k == divisor) return numerator;
      auto kc = k.as_const();
      if (kc && m.empty() && *kc % c == 0) return build_div(Div::Mod, x, divisor);
    } else if (div != Div::Mod && numerator.kind() == div_kind(div) && positive(k)) {
      // floordiv(floordiv(x, k), d) = floordiv(x, k*d) for k, d > 0; ceildiv likewise.
      // An overflowing k*d keeps the nested form.
      try {
        return build_div(div, x, k * divisor);
      } catch (const UserError&) {
      }
    }
  }
  return make_div(div, numerator, divisor);
}

Expr build_div(Div div, const Expr& a, const Expr& b) {
  auto ca = a.as_const();
  auto cb = b.as_const();
  if (cb && *cb == 0) return make_div(div, a, b);  // evaluation reports the division by zero
  if (ca && cb) {
    if (auto v = fold(div, *ca, *cb)) return *v;
    detail::throw_overflow(fmt::format("{}({}, {})",
                                       div == Div::Floor  ? "floordiv"
                                       : div == Div::Ceil ? "ceildiv"
                                                          : "mod",
                                       *ca, *cb));
  }
  Poly pa = Poly::from_expr(a);
  Poly pb = Poly::from_expr(b);
  if (pb.terms.size() == 1) {
    const auto& [m, c] = *pb.terms.begin();
    if (c != INT64_MIN && mono_positive(m)) {
      if (c < 0) {
        // floordiv(a, b) = floordiv(-a, -b), ceildiv likewise, mod(a, b) = -mod(-a, -b).
        Expr r = build_div(div, -a, -b);
        return div == Div::Mod ? -r : r;
      }
      // Split off the terms that are multiples of c*m:
      // div(q*d + rest, d) = q + div(rest, d), mod(q*d + rest, d) = mod(rest, d).
      // For mod, a coefficient is also reduced toward zero (mod(N + 5, 4) =
      // mod(N + 1, 4)); the division forms keep their terms whole for readability.
      Poly quotient, rest;
      for (const auto& [mono, coef] : pa.terms) {
        std::optional<Monomial> q;
        if (div == Div::Mod || coef % c == 0) q = mono_divide(mono, m);
        if (q && coef / c != 0) {
          quotient.add_term(*q, coef / c);
          rest.add_term(mono, coef % c);
        } else {
          rest.add_term(mono, coef);
        }
      }
      Expr r = divide_remainder(div, std::move(rest), c, m);
      return div == Div::Mod ? r : quotient.to_expr() + r;
    }
  }
  if (positive(b)) {
    // a = k*b for a constant k: the quotient is k, the remainder 0.
    const auto& [lead_mono, lead_coef] = *pb.terms.begin();
    auto it = pa.terms.find(lead_mono);
    if (it != pa.terms.end() && it->second % lead_coef == 0) {
      int64_t k = it->second / lead_coef;
      if (detail::sub(pa, detail::scale(pb, k)).is_zero()) return div == Div::Mod ? 0 : k;
    }
    if (auto q = quotient_from_bounds(div, a, b)) return *q;
  }
  return make_div(div, a, b);
}

/// Appends the operands of nested `kind` nodes.
void flatten(Kind kind, const Expr& e, std::vector<Expr>& out) {
  if (e.kind() == kind) {
    for (const Expr& op : e.operands())
      flatten(kind, op, out);
  } else {
    out.push_back(e);
  }
}

Expr build_min_max(Kind kind, const Expr& a, const Expr& b) {
  bool is_min = kind == Kind::Min;
  std::vector<Expr> ops;
  flatten(kind, a, ops);
  flatten(kind, b, ops);
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  // `x` makes `y` redundant when min(x, y) = x (resp. max).
  auto dominates = [&](const Expr& x, const Expr& y) {
    return is_min ? proven_le(x, y) : proven_ge(x, y);
  };
  // Sorted input order makes the surviving set deterministic.
  std::vector<Expr> kept;
  for (const Expr& x : ops) {
    if (std::any_of(kept.begin(), kept.end(), [&](const Expr& y) { return dominates(y, x); })) {
      continue;
    }
    std::erase_if(kept, [&](const Expr& y) { return dominates(x, y); });
    kept.push_back(x);
  }
  AF_CHECK(!kept.empty(), "min/max pruning removed every operand");
  std::sort(kept.begin(), kept.end());
  // Right-nested binary nodes over the sorted operands.
  Expr acc = kept.back();
  for (size_t i = kept.size() - 1; i-- > 0;)
    acc = detail::make_node(kind, {kept[i], acc});
  return acc;
}

}  // namespace

Expr floordiv(const Expr& a, const Expr& b) {
  return build_div(Div::Floor, a, b);
}
Expr ceildiv(const Expr& a, const Expr& b) {
  return build_div(Div::Ceil, a, b);
}
Expr mod(const Expr& a, const Expr& b) {
  return build_div(Div::Mod, a, b);
}
Expr min(const Expr& a, const Expr& b) {
  return build_min_max(Kind::Min, a, b);
}
Expr max(const Expr& a, const Expr& b) {
  return build_min_max(Kind::Max, a, b);
}

}  // namespace autofuse::sym
