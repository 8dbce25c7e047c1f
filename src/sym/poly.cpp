// The polynomial view of canonical expressions: sums of coefficient *
// monomial over atoms. Every factory of + - * goes through here, which is
// what makes equal polynomials structurally equal.
#include <algorithm>

#include "sym/internal.h"

namespace autofuse::sym::detail {

bool MonomialLess::operator()(const Monomial& a, const Monomial& b) const {
  if (a.size() != b.size()) return a.size() > b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    int c = Expr::compare(a[i], b[i]);
    if (c != 0) return c < 0;
  }
  return false;
}

Poly Poly::constant(int64_t value) {
  Poly p;
  if (value != 0) p.terms.emplace(Monomial{}, value);
  return p;
}

Poly Poly::from_expr(const Expr& e) {
  Poly p;
  switch (e.kind()) {
    case Kind::Const:
      return constant(*e.as_const());
    case Kind::Add:
      for (const Expr& term : e.operands()) {
        Poly t = from_expr(term);
        for (auto& [mono, coef] : t.terms)
          p.add_term(mono, coef);
      }
      return p;
    case Kind::Mul: {
      int64_t coef = 1;
      Monomial mono;
      for (const Expr& op : e.operands()) {
        if (auto c = op.as_const()) {
          coef = *c;
        } else {
          mono.push_back(op);
        }
      }
      p.terms.emplace(std::move(mono), coef);
      return p;
    }
    default:
      p.terms.emplace(Monomial{e}, 1);
      return p;
  }
}

std::optional<int64_t> Poly::as_const() const {
  if (terms.empty()) return 0;
  if (terms.size() == 1 && terms.begin()->first.empty()) return terms.begin()->second;
  return std::nullopt;
}

int64_t Poly::constant_term() const {
  auto it = terms.find(Monomial{});
  return it == terms.end() ? 0 : it->second;
}

void Poly::add_term(const Monomial& mono, int64_t coef) {
  if (coef == 0) return;
  auto [it, inserted] = terms.emplace(mono, coef);
  if (inserted) return;
  it->second = checked_add(it->second, coef);
  if (it->second == 0) terms.erase(it);
}

namespace {

Expr term_to_expr(const Monomial& mono, int64_t coef) {
  if (mono.empty()) return make_const(coef);
  if (coef == 1 && mono.size() == 1) return mono[0];
  std::vector<Expr> ops;
  ops.reserve(mono.size() + 1);
  if (coef != 1) ops.push_back(make_const(coef));
  ops.insert(ops.end(), mono.begin(), mono.end());
  return make_node(Kind::Mul, std::move(ops));
}

}  // namespace

Expr Poly::to_expr() const {
  if (terms.empty()) return make_const(0);
  if (terms.size() == 1) return term_to_expr(terms.begin()->first, terms.begin()->second);
  std::vector<Expr> ops;
  ops.reserve(terms.size());
  // The map order puts the constant (empty monomial) last.
  for (const auto& [mono, coef] : terms)
    ops.push_back(term_to_expr(mono, coef));
  return make_node(Kind::Add, std::move(ops));
}

Poly add(const Poly& a, const Poly& b) {
  Poly r = a;
  for (const auto& [mono, coef] : b.terms)
    r.add_term(mono, coef);
  return r;
}

Poly scale(const Poly& a, int64_t factor) {
  Poly r;
  if (factor == 0) return r;
  for (const auto& [mono, coef] : a.terms)
    r.terms.emplace(mono, checked_mul(coef, factor));
  return r;
}

Poly sub(const Poly& a, const Poly& b) {
  Poly r = a;
  for (const auto& [mono, coef] : b.terms)
    r.add_term(mono, checked_neg(coef));
  return r;
}

Monomial mono_mul(const Monomial& a, const Monomial& b) {
  Monomial r;
  r.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(r),
             [](const Expr& x, const Expr& y) { return Expr::compare(x, y) < 0; });
  return r;
}

Poly mul(const Poly& a, const Poly& b) {
  Poly r;
  for (const auto& [ma, ca] : a.terms) {
    for (const auto& [mb, cb] : b.terms)
      r.add_term(mono_mul(ma, mb), checked_mul(ca, cb));
  }
  return r;
}

}  // namespace autofuse::sym::detail
