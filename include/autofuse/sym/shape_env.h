// Guards and the three levels of shape queries (after Inductor's vocabulary):
//  * proven:  holds for all symbol values (sym::proven_*, plus equalities the
//             env has already guarded). Never records anything.
//  * guarded: the answer for the hints (or the stated assumption when a
//             symbol has no hint); when not proven, a Guard is recorded and
//             checked at run time against the actual sizes.
//  * hint:    a typical value for cost decisions only. A hint never decides
//             correctness.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "autofuse/sym/expr.h"

namespace autofuse::sym {

#define AUTOFUSE_SYM_RELATIONS(X) \
  X(Eq, "==")                     \
  X(Ne, "!=")                     \
  X(Lt, "<")                      \
  X(Le, "<=")                     \
  X(Gt, ">")                      \
  X(Ge, ">=")

enum class Rel : uint8_t {
#define AUTOFUSE_SYM_REL_ENUM(name, text) name,
  AUTOFUSE_SYM_RELATIONS(AUTOFUSE_SYM_REL_ENUM)
#undef AUTOFUSE_SYM_REL_ENUM
};
std::string_view rel_text(Rel rel);
Rel negate(Rel rel);
/// Evaluates `a rel b` on integers.
bool holds(int64_t a, Rel rel, int64_t b);

/// A run-time condition on the symbols. Assert guards must hold for the
/// graph to be valid at all (e.g. reshape keeps the element count); Expect
/// guards record a specialization the compiled code relies on (e.g. two
/// broadcast dims are equal rather than one being 1) and a different
/// specialization would need a different compile.
enum class GuardKind : uint8_t { Assert, Expect };

struct Guard {
  Expr lhs;
  Rel rel;
  Expr rhs;
  GuardKind kind;
  std::string reason;  ///< who needed it, e.g. "broadcast of node 'y' (add), dim 1"

  /// "N == M" (without the reason).
  std::string condition_text() const;
};

class ShapeEnv {
 public:
  /// Sets the hint of a symbol (a typical value; cost decisions only).
  void set_hint(const std::string& symbol, int64_t value);
  std::optional<int64_t> hint(const std::string& symbol) const;

  /// Applies the equalities guarded so far (symbol -> expression), so that
  /// shapes agree once a guard has equated them.
  Expr canonicalize(const Expr& e) const;

  /// Proven after canonicalize(); records nothing.
  bool proven(const Expr& a, Rel rel, const Expr& b) const;

  /// Equal for every binding that passes the guards: proven after
  /// canonicalize(), or an Eq guard recorded between the two (canonical)
  /// sides. Records nothing. Fusion and lowering must agree on this test.
  bool known_equal(const Expr& a, const Expr& b) const;

  /// Guarded query: if proven true/false, that answer. Otherwise the answer
  /// for the hints when every symbol involved has one, else `assume`; a guard
  /// stating the answer is recorded (deduplicated). Eq guards between a lone
  /// symbol and an expression feed canonicalize().
  bool guard(const Expr& a, Rel rel, const Expr& b, GuardKind kind, const std::string& reason,
             bool assume = true);

  /// Records a guard that must hold (no query). Ignored when proven true;
  /// UserError when proven false (the graph can never be valid).
  void require(const Expr& a, Rel rel, const Expr& b, GuardKind kind, const std::string& reason);

  /// Hint level: value under the hints; `fallback` for symbols without one.
  int64_t hint_value(const Expr& e, int64_t fallback = 1) const;

  const std::vector<Guard>& guards() const { return guards_; }

  /// Checks every guard under the binding. UserError naming the first
  /// violated guard, its reason and the values involved.
  void check(const Binding& binding) const;

 private:
  std::map<std::string, int64_t> hints_;
  std::map<std::string, Expr> replacements_;
  std::vector<Guard> guards_;
};

}  // namespace autofuse::sym
