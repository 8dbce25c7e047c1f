// Symbolic integer expressions for sizes, strides and offsets.
//
// Semantics (fixed here, relied on everywhere):
//  * Values are int64. Symbols stand for sizes and are known to be >= 1.
//  * floordiv(a, b) rounds toward -infinity, mod(a, b) = a - b*floordiv(a, b)
//    (result has the sign of b), ceildiv(a, b) = -floordiv(-a, b). These are
//    their own node kinds, never C truncation. Evaluating a division or mod by
//    zero is a UserError (a shape that makes a size expression divide by zero).
//  * Building never overflows silently: a constant or coefficient that does
//    not fit int64 while simplifying is a UserError. Simplification is exact
//    where the result is defined; it may drop a division by zero that the
//    unsimplified form would hit (x - x is 0 for any x).
//  * Expressions are immutable and always in canonical form: the factories
//    (operators, floordiv(), min(), ...) simplify as they build, so two
//    expressions that are equal as polynomials compare and hash equal
//    (`s0*s1 + s1*s0 == 2*s0*s1`).
//
// Canonical form: a sum is an Add node over terms (each term a Mul with a
// constant coefficient, or a bare atom) plus an optional constant, terms in a
// fixed total order; a product is a Mul node whose first operand is the
// integer coefficient (omitted when 1) followed by its atoms in order (x*x is
// two operands). Atoms are Symbol, FloorDiv, CeilDiv, Mod, Min, Max.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace autofuse::sym {

/// The node kinds. Drives kind_name(), the printer and the parser.
#define AUTOFUSE_SYM_KINDS(X) \
  X(Const)                    \
  X(Symbol)                   \
  X(Add)                      \
  X(Mul)                      \
  X(FloorDiv)                 \
  X(CeilDiv)                  \
  X(Mod)                      \
  X(Min)                      \
  X(Max)

enum class Kind : uint8_t {
#define AUTOFUSE_SYM_ENUM(name) name,
  AUTOFUSE_SYM_KINDS(AUTOFUSE_SYM_ENUM)
#undef AUTOFUSE_SYM_ENUM
};

std::string_view kind_name(Kind kind);

struct ExprNode;

/// Handle to an immutable, canonical expression node. Cheap to copy.
class Expr {
 public:
  Expr();               ///< the constant 0
  Expr(int64_t value);  // NOLINT(google-explicit-constructor): sizes read naturally as `N + 1`
  Expr(int value) : Expr(static_cast<int64_t>(value)) {}  // NOLINT

  /// A named size symbol (value >= 1). Names are C identifiers.
  static Expr symbol(const std::string& name);

  Kind kind() const;
  bool is_const() const { return kind() == Kind::Const; }
  bool is_symbol() const { return kind() == Kind::Symbol; }
  /// The value of a Const node; nullopt for anything else.
  std::optional<int64_t> as_const() const;
  /// The name of a Symbol node; internal error for anything else.
  const std::string& symbol_name() const;
  /// Operands in canonical order (empty for Const and Symbol).
  std::span<const Expr> operands() const;

  size_t hash() const;
  /// Structural equality of canonical forms (so polynomial equality).
  bool operator==(const Expr& other) const;
  bool operator!=(const Expr& other) const { return !(*this == other); }
  /// A fixed total order on expressions (used for canonical sorting).
  static int compare(const Expr& a, const Expr& b);
  bool operator<(const Expr& other) const { return compare(*this, other) < 0; }

  /// Text syntax, e.g. `2*N*D + floordiv(N, 4) - 1`. parse_expr() reads it back.
  std::string to_string() const;

  const ExprNode* node() const { return node_.get(); }
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

 private:
  std::shared_ptr<const ExprNode> node_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr floordiv(const Expr& a, const Expr& b);
Expr ceildiv(const Expr& a, const Expr& b);
Expr mod(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);

/// Values of symbols.
using Binding = std::map<std::string, int64_t>;

/// Evaluates under a binding. UserError if a symbol is unbound or a
/// division/mod by zero happens; overflow of int64 is a UserError too.
int64_t evaluate(const Expr& e, const Binding& binding);
/// Like evaluate() but nullopt instead of an error.
std::optional<int64_t> try_evaluate(const Expr& e, const Binding& binding);

/// Replaces symbols by expressions (result re-canonicalized).
Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements);

/// Adds every symbol name that occurs in `e` to `out`.
void collect_symbols(const Expr& e, std::set<std::string>& out);

/// Parses the text syntax of Expr::to_string(): integers, identifiers
/// (symbols), + - * ( ), floordiv(a,b), ceildiv(a,b), mod(a,b), min(a,b),
/// max(a,b). UserError with the column on bad input.
Expr parse_expr(std::string_view text);

/// Prints as a C++ expression over int64_t. Symbols are printed by
/// `symbol_to_cpp` (e.g. `td->N`); floor-div, ceil-div and mod call the
/// helpers af_floordiv/af_ceildiv/af_mod, min/max call af_min/af_max.
std::string to_cpp(const Expr& e, std::string (*symbol_to_cpp)(const std::string&) = nullptr);

/// Inclusive value range of an expression over all symbol values >= 1.
/// INT64_MIN / INT64_MAX stand for -inf / +inf.
struct Range {
  int64_t lo;
  int64_t hi;
};
Range value_range(const Expr& e);

/// Proven facts: true only if the relation holds for every value of the
/// symbols (each >= 1). False means "not proven", not "false".
bool proven_eq(const Expr& a, const Expr& b);
bool proven_ne(const Expr& a, const Expr& b);
bool proven_lt(const Expr& a, const Expr& b);
bool proven_le(const Expr& a, const Expr& b);
inline bool proven_gt(const Expr& a, const Expr& b) {
  return proven_lt(b, a);
}
inline bool proven_ge(const Expr& a, const Expr& b) {
  return proven_le(b, a);
}

}  // namespace autofuse::sym

template <>
struct std::hash<autofuse::sym::Expr> {
  size_t operator()(const autofuse::sym::Expr& e) const { return e.hash(); }
};
