// value_range and the proven_* queries: true cases and "not proven" cases.
#include <gtest/gtest.h>

#include "autofuse/sym/expr.h"

namespace autofuse::sym {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace proof_test_local {

constexpr int64_t kInf = INT64_MAX;
constexpr int64_t kNegInf = INT64_MIN;

TEST(ValueRange, Table) {
  struct Case {
    const char* text;
    int64_t lo, hi;
  };
  for (const Case& c : std::vector<Case>{
           {"7", 7, 7},
           {"N", 1, kInf},
           {"-N", kNegInf, -1},
           {"N - 5", -4, kInf},
           {"N*M", 1, kInf},
           {"N*M - N", 0, kInf},
           {"N*N - 2*N + 1", 0, kInf},
           {"mod(N, 4)", 0, 3},
           {"mod(N, 4) - 3", -3, 0},
           {"mod(N, -4)", -3, 0},
           {"mod(N, M)", 0, kInf},
           {"floordiv(N, 4)", 0, kInf},
           {"floordiv(-N, 4)", kNegInf, -1},
           {"ceildiv(N, 4)", 1, kInf},
           {"floordiv(mod(N, 8), 2)", 0, 3},
           {"floordiv(mod(N, 8) - 9, M)", -9, -1},
           {"min(N, 4)", 1, 4},
           {"max(N, 4)", 4, kInf},
           {"min(N, 4) - max(M, 2)", kNegInf, 2},
           {"N - M", kNegInf, kInf},
       }) {
    Range r = value_range(parse_expr(c.text));
    EXPECT_EQ(r.lo, c.lo) << c.text;
    EXPECT_EQ(r.hi, c.hi) << c.text;
  }
}

enum class Q { Eq, Ne, Lt, Le };

bool ask(Q q, const Expr& a, const Expr& b) {
  switch (q) {
    case Q::Eq:
      return proven_eq(a, b);
    case Q::Ne:
      return proven_ne(a, b);
    case Q::Lt:
      return proven_lt(a, b);
    case Q::Le:
      return proven_le(a, b);
  }
  return false;
}

struct ProofCase {
  Q q;
  const char* a;
  const char* b;
  bool proven;
};

TEST(Proofs, Table) {
  for (const ProofCase& c : std::vector<ProofCase>{
           // proven
           {Q::Le, "N", "N*M", true},
           {Q::Le, "N", "N*N", true},
           {Q::Le, "N*M", "N*M*K", true},
           {Q::Lt, "N", "N + 1", true},
           {Q::Le, "1", "N", true},
           {Q::Lt, "0", "N*M", true},
           {Q::Ne, "N", "0", true},
           {Q::Ne, "N + 1", "1", true},
           {Q::Eq, "N + N", "2*N", true},
           {Q::Eq, "min(N, N)", "N", true},
           {Q::Le, "floordiv(N, 2)", "N", true},
           {Q::Lt, "floordiv(N, 2)", "N", true},
           {Q::Le, "N", "2*ceildiv(N, 2)", true},
           {Q::Le, "min(N, M)", "N", true},
           {Q::Le, "min(N, M)", "max(N, M)", true},
           {Q::Le, "M", "max(N, M)", true},
           {Q::Le, "mod(x, 4)", "3", true},
           {Q::Lt, "mod(N, M)", "M", true},
           {Q::Le, "0", "mod(N, M)", true},
           {Q::Le, "min(N, 4)", "4", true},
           {Q::Lt, "N*M - N", "N*M", true},
           {Q::Le, "N + M", "N*M + 1", true},
           // not proven (false or unknown)
           {Q::Le, "N", "M", false},
           {Q::Lt, "N", "N", false},
           {Q::Eq, "N", "M", false},
           {Q::Ne, "N", "M", false},
           {Q::Ne, "N", "1", false},
           {Q::Le, "N", "1", false},
           {Q::Lt, "floordiv(N, 2)", "1", false},
           {Q::Le, "N*M", "N", false},
           {Q::Lt, "mod(N, M)", "N", false},
           {Q::Le, "max(N, M)", "N", false},
           {Q::Eq, "floordiv(N, 2)*2", "N", false},
           {Q::Lt, "N", "N*M", false},
       }) {
    EXPECT_EQ(ask(c.q, parse_expr(c.a), parse_expr(c.b)), c.proven)
        << c.a << " vs " << c.b << " query " << static_cast<int>(c.q);
  }
}

TEST(Proofs, DerivedComparisons) {
  Expr N = Expr::symbol("N");
  EXPECT_TRUE(proven_gt(N + 1, N));
  EXPECT_TRUE(proven_ge(N, 1));
  EXPECT_FALSE(proven_gt(N, 1));
  // Differences that do not fit int64 prove nothing rather than fail.
  EXPECT_FALSE(proven_le(Expr(INT64_MIN) * N, Expr(INT64_MAX) * N));
}

}  // namespace proof_test_local
}  // namespace autofuse::sym
