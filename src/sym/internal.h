// Internals of the sym module shared by its .cpp files: the node layout,
// node construction (no simplification), checked integer arithmetic, the
// polynomial view of canonical expressions, and the bound helpers the
// simplifier uses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autofuse/error.h"
#include "autofuse/sym/expr.h"

namespace autofuse::sym {

struct ExprNode {
  Kind kind = Kind::Const;
  int64_t value = 0;           ///< Const only
  std::string name;            ///< Symbol only
  std::vector<Expr> operands;  ///< canonical order
  size_t hash = 0;             ///< cached structural hash
};

namespace detail {

// ---- Raw node construction (callers guarantee canonical form) ----
Expr make_const(int64_t value);
Expr make_symbol(std::string name);
Expr make_node(Kind kind, std::vector<Expr> operands);

/// Symbol, FloorDiv, CeilDiv, Mod, Min, Max: the factors of a monomial.
inline bool is_atom(Kind kind) {
  return kind != Kind::Const && kind != Kind::Add && kind != Kind::Mul;
}

// ---- Checked arithmetic. Overflow while building an expression is a
// UserError (a size expression that does not fit int64), never UB. ----
[[noreturn]] void throw_overflow(std::string_view what);
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);
int64_t checked_neg(int64_t a);
/// Floor semantics; nullopt on division by zero or overflow.
std::optional<int64_t> floor_div(int64_t a, int64_t b);
std::optional<int64_t> ceil_div(int64_t a, int64_t b);
std::optional<int64_t> floor_mod(int64_t a, int64_t b);

// ---- Polynomial view: sum of coefficient * monomial. ----

/// Atoms in Expr::compare order, repeated for powers; empty = constant 1.
using Monomial = std::vector<Expr>;

/// Term order inside an Add node: higher degree first, then atoms
/// lexicographically. The constant monomial sorts last.
struct MonomialLess {
  bool operator()(const Monomial& a, const Monomial& b) const;
};

struct Poly {
  std::map<Monomial, int64_t, MonomialLess> terms;  ///< nonzero coefficients only

  static Poly from_expr(const Expr& e);
  static Poly constant(int64_t value);
  Expr to_expr() const;
  bool is_zero() const { return terms.empty(); }
  std::optional<int64_t> as_const() const;
  int64_t constant_term() const;
  /// Adds coef*mono (checked).
  void add_term(const Monomial& mono, int64_t coef);
};

Poly add(const Poly& a, const Poly& b);
Poly sub(const Poly& a, const Poly& b);
Poly mul(const Poly& a, const Poly& b);
Poly scale(const Poly& a, int64_t factor);
/// Product of two monomials (merged, sorted).
Monomial mono_mul(const Monomial& a, const Monomial& b);

// ---- Bounds (range.cpp) ----

inline constexpr int64_t kNegInf = INT64_MIN;
inline constexpr int64_t kPosInf = INT64_MAX;

/// A proven lower bound of the polynomial over all symbol values >= 1
/// (kNegInf when none is found). The search stops once the bound reaches
/// `target`; pass kPosInf for the best bound.
int64_t lower_bound(const Poly& p, int64_t target);
int64_t upper_bound(const Poly& p);
/// Proven lower bound of b - a (kNegInf when it cannot even be formed).
int64_t lower_bound_of_difference(const Expr& a, const Expr& b, int64_t target);

}  // namespace detail
}  // namespace autofuse::sym
