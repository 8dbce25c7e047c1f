// ShapeEnv: hints, guards and the equalities they establish.
#include "autofuse/sym/shape_env.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include <fmt/ranges.h>

#include "sym/internal.h"

namespace autofuse::sym {

std::string_view rel_text(Rel rel) {
  switch (rel) {
#define AUTOFUSE_SYM_REL_TEXT(name, text) \
  case Rel::name:                         \
    return text;
    AUTOFUSE_SYM_RELATIONS(AUTOFUSE_SYM_REL_TEXT)
#undef AUTOFUSE_SYM_REL_TEXT
  }
  return "?";
}

Rel negate(Rel rel) {
  switch (rel) {
    case Rel::Eq:
      return Rel::Ne;
    case Rel::Ne:
      return Rel::Eq;
    case Rel::Lt:
      return Rel::Ge;
    case Rel::Le:
      return Rel::Gt;
    case Rel::Gt:
      return Rel::Le;
    case Rel::Ge:
      return Rel::Lt;
  }
  return rel;
}

bool holds(int64_t a, Rel rel, int64_t b) {
  switch (rel) {
    case Rel::Eq:
      return a == b;
    case Rel::Ne:
      return a != b;
    case Rel::Lt:
      return a < b;
    case Rel::Le:
      return a <= b;
    case Rel::Gt:
      return a > b;
    case Rel::Ge:
      return a >= b;
  }
  return false;
}

std::string Guard::condition_text() const {
  return fmt::format("{} {} {}", lhs.to_string(), rel_text(rel), rhs.to_string());
}

namespace {

bool proven_rel(const Expr& a, Rel rel, const Expr& b) {
  switch (rel) {
    case Rel::Eq:
      return proven_eq(a, b);
    case Rel::Ne:
      return proven_ne(a, b);
    case Rel::Lt:
      return proven_lt(a, b);
    case Rel::Le:
      return proven_le(a, b);
    case Rel::Gt:
      return proven_gt(a, b);
    case Rel::Ge:
      return proven_ge(a, b);
  }
  return false;
}

/// The signs of (a - b) a relation allows: bit 0 negative, 1 zero, 2 positive.
unsigned sign_set(Rel rel) {
  switch (rel) {
    case Rel::Eq:
      return 0b010;
    case Rel::Ne:
      return 0b101;
    case Rel::Lt:
      return 0b001;
    case Rel::Le:
      return 0b011;
    case Rel::Gt:
      return 0b100;
    case Rel::Ge:
      return 0b110;
  }
  return 0b111;
}

/// Signs of (b - a) given those of (a - b).
unsigned mirror(unsigned signs) {
  return ((signs & 1) << 2) | (signs & 2) | ((signs >> 2) & 1);
}

/// Symbols in order of first appearance (for error messages).
void symbols_in_order(const Expr& e, std::vector<std::string>& out) {
  if (e.is_symbol()) {
    if (std::find(out.begin(), out.end(), e.symbol_name()) == out.end()) {
      out.push_back(e.symbol_name());
    }
    return;
  }
  for (const Expr& op : e.operands())
    symbols_in_order(op, out);
}

bool contains_symbol(const Expr& e, const std::string& name) {
  std::set<std::string> symbols;
  collect_symbols(e, symbols);
  return symbols.count(name) != 0;
}

}  // namespace

namespace {

/// Solves a == b for a symbol when neither side is a lone symbol: cancels
/// the gcd of the coefficients and the symbols common to every term of
/// a - b (symbols are >= 1, so K*M == N*M gives K == N), then picks the
/// latest-sorting symbol that occurs only as a term with coefficient +-1.
std::optional<std::pair<std::string, Expr>> solve_for_symbol(const Expr& a, const Expr& b) {
  using detail::Monomial;
  using detail::Poly;
  Poly d = detail::sub(Poly::from_expr(a), Poly::from_expr(b));
  if (d.is_zero()) return std::nullopt;
  uint64_t g = 0;
  std::optional<Monomial> common;
  for (const auto& [mono, coef] : d.terms) {
    uint64_t c = coef < 0 ? 0 - static_cast<uint64_t>(coef) : static_cast<uint64_t>(coef);
    g = std::gcd(g, c);
    Monomial symbols;
    for (const Expr& atom : mono) {
      if (atom.is_symbol()) symbols.push_back(atom);
    }
    if (!common) {
      common = symbols;
    } else {
      Monomial kept;
      std::set_intersection(common->begin(), common->end(), symbols.begin(), symbols.end(),
                            std::back_inserter(kept));
      common = kept;
    }
  }
  Poly reduced;
  for (const auto& [mono, coef] : d.terms) {
    Monomial rest;
    std::set_difference(mono.begin(), mono.end(), common->begin(), common->end(),
                        std::back_inserter(rest));
    reduced.add_term(rest, coef / static_cast<int64_t>(g));
  }
  std::optional<std::pair<std::string, Expr>> best;
  for (const auto& [mono, coef] : reduced.terms) {
    if (mono.size() != 1 || !mono[0].is_symbol() || (coef != 1 && coef != -1)) continue;
    const std::string& name = mono[0].symbol_name();
    Poly rest = reduced;
    rest.terms.erase(mono);
    Expr rest_expr = rest.to_expr();
    if (contains_symbol(rest_expr, name)) continue;
    if (best && name < best->first) continue;
    // coef*s + rest = 0  =>  s = -coef*rest (coef is +-1).
    best = std::pair{name, detail::scale(rest, -coef).to_expr()};
  }
  return best;
}

/// Adds the equality a == b (both canonical) to the replacements.
void add_equality(std::map<std::string, Expr>& replacements, const Expr& a, const Expr& b) {
  // Replace a lone symbol by the other side; between two symbols, the one
  // that sorts later goes. A side that mentions the symbol is not solved.
  std::optional<std::string> target;
  Expr value;
  if (a.is_symbol() && b.is_symbol()) {
    if (a == b) return;
    bool a_later = b < a;
    target = (a_later ? a : b).symbol_name();
    value = a_later ? b : a;
  } else if (a.is_symbol() && !contains_symbol(b, a.symbol_name())) {
    target = a.symbol_name();
    value = b;
  } else if (b.is_symbol() && !contains_symbol(a, b.symbol_name())) {
    target = b.symbol_name();
    value = a;
  } else {
    try {
      if (auto solved = solve_for_symbol(a, b)) std::tie(target, value) = *solved;
    } catch (const UserError&) {
      // Overflow while rearranging: leave the equality unsolved.
    }
  }
  if (!target) return;
  std::map<std::string, Expr> step{{*target, value}};
  for (auto& [name, rhs] : replacements)
    rhs = substitute(rhs, step);
  replacements.emplace(*target, value);
}

/// Appends `guard` unless already there; an equality also feeds the
/// replacements (canonicalized with the replacements so far).
void record_guard(std::vector<Guard>& guards, std::map<std::string, Expr>& replacements,
                  Guard guard) {
  for (const Guard& g : guards) {
    if (g.rel == guard.rel && g.lhs == guard.lhs && g.rhs == guard.rhs) return;
  }
  if (guard.rel == Rel::Eq) {
    add_equality(replacements, substitute(guard.lhs, replacements),
                 substitute(guard.rhs, replacements));
  }
  guards.push_back(std::move(guard));
}

}  // namespace

void ShapeEnv::set_hint(const std::string& symbol, int64_t value) {
  hints_[symbol] = value;
}

std::optional<int64_t> ShapeEnv::hint(const std::string& symbol) const {
  auto it = hints_.find(symbol);
  if (it == hints_.end()) return std::nullopt;
  return it->second;
}

Expr ShapeEnv::canonicalize(const Expr& e) const {
  // Replacements are kept fully resolved (no right-hand side mentions a
  // replaced symbol), so one pass suffices.
  if (replacements_.empty()) return e;
  return substitute(e, replacements_);
}

bool ShapeEnv::proven(const Expr& a, Rel rel, const Expr& b) const {
  return proven_rel(canonicalize(a), rel, canonicalize(b));
}

namespace {

/// The hint of `symbol`, also through guarded equalities: a symbol that was
/// replaced takes the value of its replacement, and a symbol that replaced
/// others takes the hint of one of them.
std::optional<int64_t> resolved_hint(const std::map<std::string, int64_t>& hints,
                                     const std::map<std::string, Expr>& replacements,
                                     const std::string& symbol) {
  if (auto it = hints.find(symbol); it != hints.end()) return it->second;
  if (auto it = replacements.find(symbol); it != replacements.end()) {
    std::set<std::string> symbols;
    collect_symbols(it->second, symbols);
    Binding binding;
    for (const std::string& s : symbols) {
      auto h = hints.find(s);
      if (h == hints.end()) return std::nullopt;
      binding[s] = h->second;
    }
    return try_evaluate(it->second, binding);
  }
  for (const auto& [name, value] : replacements) {
    if (value.is_symbol() && value.symbol_name() == symbol) {
      if (auto h = hints.find(name); h != hints.end()) return h->second;
    }
  }
  return std::nullopt;
}

}  // namespace

int64_t ShapeEnv::hint_value(const Expr& e, int64_t fallback) const {
  std::set<std::string> symbols;
  collect_symbols(e, symbols);
  Binding binding;
  for (const std::string& s : symbols) {
    binding[s] = resolved_hint(hints_, replacements_, s).value_or(fallback);
  }
  // A hint only steers cost decisions: an expression that cannot be
  // evaluated under the hints (e.g. divides by zero) gets the fallback.
  return try_evaluate(e, binding).value_or(fallback);
}

bool ShapeEnv::known_equal(const Expr& a, const Expr& b) const {
  const Expr ca = canonicalize(a), cb = canonicalize(b);
  if (proven(ca, Rel::Eq, cb)) return true;
  for (const Guard& g : guards_) {
    if (g.rel != Rel::Eq) continue;
    const Expr l = canonicalize(g.lhs), r = canonicalize(g.rhs);
    if ((l == ca && r == cb) || (l == cb && r == ca)) return true;
  }
  return false;
}

bool ShapeEnv::guard(const Expr& a, Rel rel, const Expr& b, GuardKind kind,
                     const std::string& reason, bool assume) {
  Expr ca = canonicalize(a);
  Expr cb = canonicalize(b);
  if (proven_rel(ca, rel, cb)) return true;
  if (proven_rel(ca, negate(rel), cb)) return false;

  // Stay consistent with what earlier guards already state about a - b.
  unsigned query = sign_set(rel);
  try {
    Expr diff = ca - cb;
    for (const Guard& g : guards_) {
      Expr gdiff = canonicalize(g.lhs) - canonicalize(g.rhs);
      unsigned known;
      if (gdiff == diff) {
        known = sign_set(g.rel);
      } else if (gdiff == -diff) {
        known = mirror(sign_set(g.rel));
      } else {
        continue;
      }
      if ((known & ~query) == 0) return true;
      if ((known & query) == 0) return false;
    }
  } catch (const UserError&) {
    // a - b overflows: no earlier guard can be about it.
  }

  bool answer = assume;
  std::set<std::string> symbols;
  collect_symbols(a, symbols);
  collect_symbols(b, symbols);
  Binding binding;
  for (const std::string& s : symbols) {
    if (auto h = resolved_hint(hints_, replacements_, s)) binding[s] = *h;
  }
  if (binding.size() == symbols.size()) {
    auto va = try_evaluate(a, binding);
    auto vb = try_evaluate(b, binding);
    if (va && vb) answer = holds(*va, rel, *vb);
  }
  record_guard(guards_, replacements_, Guard{a, answer ? rel : negate(rel), b, kind, reason});
  return answer;
}

void ShapeEnv::require(const Expr& a, Rel rel, const Expr& b, GuardKind kind,
                       const std::string& reason) {
  Expr ca = canonicalize(a);
  Expr cb = canonicalize(b);
  if (proven_rel(ca, rel, cb)) return;
  if (proven_rel(ca, negate(rel), cb)) {
    throw UserError(fmt::format("{} {} {} can never hold ({})", a.to_string(), rel_text(rel),
                                b.to_string(), reason));
  }
  record_guard(guards_, replacements_, Guard{a, rel, b, kind, reason});
}

void ShapeEnv::check(const Binding& binding) const {
  for (const auto& [name, value] : binding) {
    if (value < 1) {
      throw UserError(fmt::format(
          "shape binding gives symbol '{}' the value {}; sizes must be >= 1", name, value));
    }
  }
  for (const Guard& g : guards_) {
    std::optional<int64_t> lhs, rhs;
    try {
      lhs = evaluate(g.lhs, binding);
      rhs = evaluate(g.rhs, binding);
    } catch (const UserError& e) {
      throw UserError(
          fmt::format("cannot check guard {} ({}): {}", g.condition_text(), g.reason, e.message()));
    }
    if (holds(*lhs, g.rel, *rhs)) continue;
    std::vector<std::string> symbols;
    symbols_in_order(g.lhs, symbols);
    symbols_in_order(g.rhs, symbols);
    std::vector<std::string> parts;
    for (const std::string& s : symbols)
      parts.push_back(fmt::format("{} = {}", s, binding.at(s)));
    // Sides that are not plain symbols get their value too.
    for (const auto& [side, value] : {std::pair{&g.lhs, *lhs}, std::pair{&g.rhs, *rhs}}) {
      if (!side->is_symbol() && !side->is_const()) {
        parts.push_back(fmt::format("{} = {}", side->to_string(), value));
      }
    }
    throw UserError(fmt::format("shape binding violates guard {} ({}): {}", g.condition_text(),
                                g.reason, fmt::join(parts, ", ")));
  }
}

}  // namespace autofuse::sym
