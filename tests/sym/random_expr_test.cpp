// Randomized cross-check of the simplifying factories: random expression
// trees in a plain test-local AST with its own evaluator (floor division,
// floor mod, ...), built through the factories, then compared under random
// bindings. Also checks printer/parser round-trips, hashing, value_range
// soundness and proof soundness.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "autofuse/error.h"
#include "autofuse/sym/expr.h"

namespace autofuse::sym {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace random_expr_test_local {

enum class Op { Const, Sym, Add, Sub, Mul, Neg, FloorDiv, CeilDiv, Mod, Min, Max };

struct Ast {
  Op op;
  int64_t value = 0;
  std::string name;
  std::vector<std::shared_ptr<const Ast>> kids;
};
using AstPtr = std::shared_ptr<const Ast>;

std::string ast_text(const Ast& a) {
  auto k = [&](size_t i) { return ast_text(*a.kids[i]); };
  switch (a.op) {
    case Op::Const:
      return std::to_string(a.value);
    case Op::Sym:
      return a.name;
    case Op::Add:
      return "(" + k(0) + " + " + k(1) + ")";
    case Op::Sub:
      return "(" + k(0) + " - " + k(1) + ")";
    case Op::Mul:
      return "(" + k(0) + " * " + k(1) + ")";
    case Op::Neg:
      return "(-" + k(0) + ")";
    case Op::FloorDiv:
      return "floordiv(" + k(0) + ", " + k(1) + ")";
    case Op::CeilDiv:
      return "ceildiv(" + k(0) + ", " + k(1) + ")";
    case Op::Mod:
      return "mod(" + k(0) + ", " + k(1) + ")";
    case Op::Min:
      return "min(" + k(0) + ", " + k(1) + ")";
    case Op::Max:
      return "max(" + k(0) + ", " + k(1) + ")";
  }
  return "?";
}

/// Direct evaluation with the documented semantics; nullopt on division by
/// zero or int64 overflow.
std::optional<int64_t> ast_eval(const Ast& a, const Binding& b) {
  if (a.op == Op::Const) return a.value;
  if (a.op == Op::Sym) return b.at(a.name);
  auto x = ast_eval(*a.kids[0], b);
  if (!x) return std::nullopt;
  if (a.op == Op::Neg) {
    if (*x == INT64_MIN) return std::nullopt;
    return -*x;
  }
  auto y = ast_eval(*a.kids[1], b);
  if (!y) return std::nullopt;
  int64_t r = 0;
  switch (a.op) {
    case Op::Add:
      if (__builtin_add_overflow(*x, *y, &r)) return std::nullopt;
      return r;
    case Op::Sub:
      if (__builtin_sub_overflow(*x, *y, &r)) return std::nullopt;
      return r;
    case Op::Mul:
      if (__builtin_mul_overflow(*x, *y, &r)) return std::nullopt;
      return r;
    case Op::Min:
      return std::min(*x, *y);
    case Op::Max:
      return std::max(*x, *y);
    default:
      break;
  }
  if (*y == 0 || (*x == INT64_MIN && *y == -1)) return std::nullopt;
  // Floor division from first principles: q*y <= x < (q+1)*y for y > 0.
  int64_t q = *x / *y;
  int64_t rem = *x % *y;
  if (rem != 0 && ((rem < 0) != (*y < 0))) --q;
  switch (a.op) {
    case Op::FloorDiv:
      return q;
    case Op::Mod:
      return *x - q * *y;
    case Op::CeilDiv:
      return (*x % *y == 0) ? q : q + 1;
    default:
      return std::nullopt;
  }
}

Expr ast_build(const Ast& a) {
  auto k = [&](size_t i) { return ast_build(*a.kids[i]); };
  switch (a.op) {
    case Op::Const:
      return a.value;
    case Op::Sym:
      return Expr::symbol(a.name);
    case Op::Add:
      return k(0) + k(1);
    case Op::Sub:
      return k(0) - k(1);
    case Op::Mul:
      return k(0) * k(1);
    case Op::Neg:
      return -k(0);
    case Op::FloorDiv:
      return floordiv(k(0), k(1));
    case Op::CeilDiv:
      return ceildiv(k(0), k(1));
    case Op::Mod:
      return mod(k(0), k(1));
    case Op::Min:
      return min(k(0), k(1));
    case Op::Max:
      return max(k(0), k(1));
  }
  return 0;
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  AstPtr leaf() {
    auto a = std::make_shared<Ast>();
    if (uniform(0, 9) < 6) {
      a->op = Op::Sym;
      a->name = std::string(1, static_cast<char>('a' + uniform(0, 3)));
    } else {
      a->op = Op::Const;
      a->value = uniform(0, 19) == 0 ? uniform(-1000, 1000) : uniform(-6, 8);
    }
    return a;
  }

  /// Divisors: mostly small positive constants or symbols, so that the
  /// division rules fire; sometimes anything (including zero).
  AstPtr divisor(int depth) {
    int pick = uniform(0, 9);
    if (pick < 4) {
      auto a = std::make_shared<Ast>();
      a->op = Op::Const;
      a->value = uniform(0, 5) == 0 ? -uniform(1, 4) : uniform(1, 8);
      return a;
    }
    if (pick < 6) {
      auto a = std::make_shared<Ast>();
      a->op = Op::Sym;
      a->name = std::string(1, static_cast<char>('a' + uniform(0, 3)));
      return a;
    }
    return tree(depth);
  }

  AstPtr tree(int depth) {
    if (depth <= 0 || uniform(0, 9) < 2) return leaf();
    auto a = std::make_shared<Ast>();
    a->op = static_cast<Op>(uniform(static_cast<int>(Op::Add), static_cast<int>(Op::Max)));
    if (a->op == Op::Neg) {
      a->kids = {tree(depth - 1)};
    } else if (a->op == Op::FloorDiv || a->op == Op::CeilDiv || a->op == Op::Mod) {
      a->kids = {tree(depth - 1), divisor(depth - 1)};
    } else {
      a->kids = {tree(depth - 1), tree(depth - 1)};
    }
    return a;
  }

  Binding binding() {
    Binding b;
    // Small values and the boundary 1 are where floor semantics bite; an
    // occasional large binding checks that nothing assumes small sizes.
    bool large = uniform(0, 9) == 0;
    for (char c = 'a'; c <= 'd'; ++c) {
      int v = uniform(0, 4) == 0 ? 1 : uniform(1, large ? 1000000 : 50);
      b[std::string(1, c)] = v;
    }
    return b;
  }

 private:
  std::mt19937 rng_;
};

/// AUTOFUSE_FUZZ_SEED / AUTOFUSE_FUZZ_SCALE override the fixed seed and
/// multiply the case count, for longer fuzzing runs by hand.
uint32_t fuzz_seed(uint32_t fixed) {
  const char* s = std::getenv("AUTOFUSE_FUZZ_SEED");
  return s != nullptr ? static_cast<uint32_t>(std::strtoul(s, nullptr, 10)) : fixed;
}

int fuzz_scale() {
  const char* s = std::getenv("AUTOFUSE_FUZZ_SCALE");
  return s != nullptr ? std::max(1, std::atoi(s)) : 1;
}

std::string binding_text(const Binding& b) {
  std::string s;
  for (const auto& [k, v] : b)
    s += k + "=" + std::to_string(v) + " ";
  return s;
}

TEST(RandomExpr, FactoriesAgreeWithDirectEvaluation) {
  Generator gen(fuzz_seed(20240611));
  const int kTrees = 20000 * fuzz_scale();
  constexpr int kBindings = 3;
  int compared = 0;
  int failures = 0;
  for (int i = 0; i < kTrees && failures < 10; ++i) {
    AstPtr ast = gen.tree(gen.uniform(1, 4));
    Expr e;
    try {
      e = ast_build(*ast);
    } catch (const UserError& err) {
      ADD_FAILURE() << "building " << ast_text(*ast) << " threw: " << err.what();
      ++failures;
      continue;
    }
    // Round trip through the text syntax.
    std::string text = e.to_string();
    Expr reparsed = parse_expr(text);
    if (!(reparsed == e) || reparsed.hash() != e.hash() || reparsed.to_string() != text) {
      ADD_FAILURE() << "round trip of " << ast_text(*ast) << ": " << text << " -> "
                    << reparsed.to_string();
      ++failures;
    }
    Range range = value_range(e);
    for (int j = 0; j < kBindings; ++j) {
      Binding b = gen.binding();
      auto expected = ast_eval(*ast, b);
      if (!expected) continue;  // the raw tree divides by zero or overflows
      auto got = try_evaluate(e, b);
      // With huge sizes the expanded form may overflow even 128-bit
      // intermediates where the factored tree does not; with sizes <= 50 it
      // must always evaluate.
      bool large = std::any_of(b.begin(), b.end(), [](const auto& kv) { return kv.second > 50; });
      if (!got && large) continue;
      ++compared;
      bool in_range = got && range.lo <= *got && *got <= range.hi;
      if (!got || *got != *expected || !in_range) {
        ADD_FAILURE() << "tree:    " << ast_text(*ast) << "\nexpr:    " << text
                      << "\nbinding: " << binding_text(b) << "\nexpected " << *expected << ", got "
                      << (got ? std::to_string(*got) : "error") << ", range [" << range.lo << ", "
                      << range.hi << "]";
        ++failures;
        break;
      }
    }
  }
  // The generator must exercise the comparison, not skip everything.
  EXPECT_GT(compared, kTrees * kBindings / 2);
}

TEST(RandomExpr, ProofsAreSound) {
  Generator gen(fuzz_seed(7));
  int proven = 0;
  int failures = 0;
  for (int i = 0; i < 2000 * fuzz_scale() && failures < 10; ++i) {
    AstPtr x = gen.tree(gen.uniform(1, 3));
    AstPtr y = gen.tree(gen.uniform(1, 3));
    Expr ex = ast_build(*x);
    Expr ey = ast_build(*y);
    bool le = proven_le(ex, ey), lt = proven_lt(ex, ey);
    bool eq = proven_eq(ex, ey), ne = proven_ne(ex, ey);
    proven += le + lt + eq + ne;
    for (int j = 0; j < 6; ++j) {
      Binding b = gen.binding();
      auto vx = ast_eval(*x, b);
      auto vy = ast_eval(*y, b);
      if (!vx || !vy) continue;
      bool ok =
          (!le || *vx <= *vy) && (!lt || *vx < *vy) && (!eq || *vx == *vy) && (!ne || *vx != *vy);
      if (!ok) {
        ADD_FAILURE() << "x = " << ex.to_string() << "\ny = " << ey.to_string()
                      << "\nle/lt/eq/ne proven: " << le << lt << eq << ne
                      << "\nbinding: " << binding_text(b) << " x=" << *vx << " y=" << *vy;
        ++failures;
        break;
      }
    }
  }
  EXPECT_GT(proven, 100);
}

}  // namespace random_expr_test_local
}  // namespace autofuse::sym
