// ShapeEnv: guard levels (proven / hinted / assumed), dedupe, consistency,
// canonicalization through equalities, require(), hint_value() and check().
#include "autofuse/sym/shape_env.h"

#include <gtest/gtest.h>

#include "autofuse/error.h"

namespace autofuse::sym {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace shape_env_test_local {

const Expr N = Expr::symbol("N");
const Expr M = Expr::symbol("M");
const Expr K = Expr::symbol("K");

TEST(Rel, TextNegateHolds) {
  EXPECT_EQ(rel_text(Rel::Eq), "==");
  EXPECT_EQ(rel_text(Rel::Ge), ">=");
  for (Rel r : {Rel::Eq, Rel::Ne, Rel::Lt, Rel::Le, Rel::Gt, Rel::Ge}) {
    EXPECT_EQ(negate(negate(r)), r);
    for (int64_t a : {-1, 0, 1}) {
      for (int64_t b : {-1, 0, 1})
        EXPECT_NE(holds(a, r, b), holds(a, negate(r), b));
    }
  }
  EXPECT_TRUE(holds(2, Rel::Gt, 1));
  EXPECT_FALSE(holds(2, Rel::Le, 1));
  Guard g{N * 2, Rel::Le, M + 1, GuardKind::Assert, "why"};
  EXPECT_EQ(g.condition_text(), "2*N <= M + 1");
}

TEST(ShapeEnv, ProvenRecordsNothing) {
  ShapeEnv env;
  EXPECT_TRUE(env.guard(N + 1, Rel::Gt, N, GuardKind::Assert, "r"));
  EXPECT_FALSE(env.guard(N, Rel::Eq, 0, GuardKind::Assert, "r"));
  EXPECT_TRUE(env.guard(N * M, Rel::Ge, M, GuardKind::Assert, "r"));
  EXPECT_TRUE(env.guards().empty());
  EXPECT_TRUE(env.proven(N, Rel::Ne, 0));
  EXPECT_FALSE(env.proven(N, Rel::Eq, M));
}

TEST(ShapeEnv, HintsDecideAndGuardIsRecordedOnce) {
  ShapeEnv env;
  env.set_hint("N", 3);
  env.set_hint("M", 4);
  EXPECT_EQ(env.hint("N"), 3);
  EXPECT_EQ(env.hint("K"), std::nullopt);
  EXPECT_FALSE(env.guard(N, Rel::Eq, M, GuardKind::Expect, "b", /*assume=*/true));
  EXPECT_FALSE(env.guard(N, Rel::Eq, M, GuardKind::Expect, "b", true));
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].condition_text(), "N != M");
  EXPECT_EQ(env.guards()[0].kind, GuardKind::Expect);
  EXPECT_EQ(env.guards()[0].reason, "b");
  // The opposite query is answered from the recorded guard.
  EXPECT_TRUE(env.guard(M, Rel::Ne, N, GuardKind::Expect, "c"));
  EXPECT_TRUE(env.guard(N, Rel::Lt, M, GuardKind::Expect, "d"));
  EXPECT_EQ(env.guards().size(), 2u);
  EXPECT_EQ(env.guards()[1].condition_text(), "N < M");
}

TEST(ShapeEnv, WithoutHintsTheAssumptionDecides) {
  ShapeEnv env;
  env.set_hint("N", 5);  // K has no hint
  EXPECT_TRUE(env.guard(K, Rel::Ne, 1, GuardKind::Expect, "k is not broadcast", true));
  // Consistent with the assumption just recorded, whatever `assume` says now.
  EXPECT_FALSE(env.guard(K, Rel::Eq, 1, GuardKind::Expect, "again", true));
  EXPECT_FALSE(env.guard(N + K, Rel::Lt, 3, GuardKind::Assert, "mixed", false));
  ASSERT_EQ(env.guards().size(), 2u);
  EXPECT_EQ(env.guards()[0].condition_text(), "K != 1");
  EXPECT_EQ(env.guards()[1].condition_text(), "K + N >= 3");
}

// GPT-2's causal mask slices a [256] buffer to min(256, seq) and adds it to a
// [seq] value: the broadcast guard seq == min(256, seq) cannot canonicalize
// (both sides hold seq), yet fusion and lowering must both treat the two
// sizes as one (regression: lowering demanded a proof and failed).
TEST(ShapeEnv, KnownEqualAcceptsProofsAndUnsolvedEqGuards) {
  ShapeEnv env;
  const Expr clamped = min(Expr(256), N);
  EXPECT_FALSE(env.known_equal(N, clamped));
  EXPECT_TRUE(env.known_equal(N + 1, 1 + N));
  env.require(N, Rel::Eq, clamped, GuardKind::Expect, "broadcast");
  EXPECT_FALSE(env.proven(N, Rel::Eq, clamped));
  EXPECT_TRUE(env.known_equal(N, clamped));
  EXPECT_TRUE(env.known_equal(clamped, N));
  EXPECT_FALSE(env.known_equal(N, M));
  EXPECT_FALSE(env.known_equal(N, clamped + 1));
}

TEST(ShapeEnv, EqualitiesCanonicalize) {
  ShapeEnv env;
  EXPECT_TRUE(env.guard(N, Rel::Eq, M, GuardKind::Expect, "broadcast"));
  // M sorts before N, so N is replaced by M.
  EXPECT_EQ(env.canonicalize(N * M + N), M * M + M);
  EXPECT_TRUE(env.proven(N, Rel::Eq, M));
  EXPECT_TRUE(env.guard(N, Rel::Eq, M, GuardKind::Expect, "again"));
  EXPECT_TRUE(env.guard(2 * N, Rel::Eq, M + M, GuardKind::Expect, "again"));
  EXPECT_EQ(env.guards().size(), 1u);
  // Chains resolve fully, in either order of discovery.
  ShapeEnv chain;
  const Expr A = Expr::symbol("A"), B = Expr::symbol("B"), C = Expr::symbol("C");
  chain.require(C, Rel::Eq, B, GuardKind::Assert, "c");
  chain.require(B, Rel::Eq, A, GuardKind::Assert, "b");
  EXPECT_EQ(chain.canonicalize(A + B + C), 3 * A);
  // A lone symbol equal to an expression is replaced by it.
  ShapeEnv expr_env;
  expr_env.require(N, Rel::Eq, 2 * M + 1, GuardKind::Assert, "reshape");
  EXPECT_EQ(expr_env.canonicalize(floordiv(N, 2)), M);
  EXPECT_TRUE(expr_env.proven(N, Rel::Gt, M));
  // Otherwise a linear occurrence is solved for, after cancelling common factors.
  ShapeEnv linear;
  linear.require(K * M, Rel::Eq, N * M, GuardKind::Assert, "common factor");
  EXPECT_EQ(linear.canonicalize(N), K);
  linear.require(2 * M + 2 * N, Rel::Eq, 2 * K + 6, GuardKind::Assert, "gcd");
  EXPECT_EQ(linear.canonicalize(M), Expr(3));  // M + K = K + 3
  EXPECT_EQ(linear.canonicalize(N * M), 3 * K);
  // An equation that mentions the symbol on both sides is recorded but not solved.
  ShapeEnv unsolved;
  unsolved.require(N, Rel::Eq, floordiv(N * M, 2), GuardKind::Assert, "odd");
  EXPECT_EQ(unsolved.canonicalize(N), N);
  EXPECT_EQ(unsolved.guards().size(), 1u);
}

TEST(ShapeEnv, Require) {
  ShapeEnv env;
  env.require(N * M, Rel::Ge, N, GuardKind::Assert, "proven");
  EXPECT_TRUE(env.guards().empty());
  try {
    env.require(N + 1, Rel::Eq, N, GuardKind::Assert, "reshape of node 'r'");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "N + 1 == N can never hold (reshape of node 'r')");
  }
  env.require(N * M, Rel::Eq, K, GuardKind::Assert, "reshape keeps the element count");
  env.require(N * M, Rel::Eq, K, GuardKind::Assert, "reshape keeps the element count");
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].condition_text(), "M*N == K");
  EXPECT_EQ(env.canonicalize(K + 1), M * N + 1);
}

TEST(ShapeEnv, HintValue) {
  ShapeEnv env;
  env.set_hint("N", 6);
  EXPECT_EQ(env.hint_value(N * M + 1), 7);
  EXPECT_EQ(env.hint_value(N * M + 1, 10), 61);
  EXPECT_EQ(env.hint_value(floordiv(N, M - 1), 9), 0);
  EXPECT_EQ(env.hint_value(floordiv(N, M - 1)), 1);  // divides by zero: the fallback
  env.require(M, Rel::Eq, N, GuardKind::Assert, "eq");
  EXPECT_EQ(env.hint_value(M), 6);  // through the equality
}

TEST(ShapeEnv, CheckNamesTheViolatedGuard) {
  ShapeEnv env;
  env.guard(N, Rel::Eq, M, GuardKind::Expect, "broadcast of node 'y' (add), dim 0");
  env.require(K, Rel::Ge, 2, GuardKind::Assert, "pooling window of node 'p'");
  env.require(N * K, Rel::Le, 100, GuardKind::Assert, "buffer size");
  env.check({{"N", 3}, {"M", 3}, {"K", 2}});
  auto failure = [&](const Binding& b) -> std::string {
    try {
      env.check(b);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(failure({{"N", 3}, {"M", 4}, {"K", 2}}),
            "shape binding violates guard N == M (broadcast of node 'y' (add), dim 0): N = 3, "
            "M = 4");
  EXPECT_EQ(failure({{"N", 3}, {"M", 3}, {"K", 1}}),
            "shape binding violates guard K >= 2 (pooling window of node 'p'): K = 1");
  EXPECT_EQ(failure({{"N", 60}, {"M", 60}, {"K", 2}}),
            "shape binding violates guard K*N <= 100 (buffer size): K = 2, N = 60, K*N = 120");
  EXPECT_EQ(failure({{"N", 3}, {"M", 3}}),
            "cannot check guard K >= 2 (pooling window of node 'p'): symbol 'K' has no value");
  EXPECT_EQ(failure({{"N", 0}, {"M", 0}, {"K", 2}}),
            "shape binding gives symbol 'M' the value 0; sizes must be >= 1");
}

}  // namespace shape_env_test_local
}  // namespace autofuse::sym
