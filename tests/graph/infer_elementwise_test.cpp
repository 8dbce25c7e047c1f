// Inference of unary, binary, where, cast and broadcast_to, including the
// symbolic broadcasting rules and the guards they record.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace infer_elementwise_test_local {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace graph_test;  // NOLINT

TEST(InferUnaryTest, DTypeAndShapeTable) {
  struct Case {
    OpKind op;
    TensorType in;
    std::string want;
  };
  const Case cases[] = {
      {OpKind::Exp, T(DType::f32, {N, 768}), "f32[N, 768]"},
      {OpKind::Tanh, T(DType::bf16, {N, D}), "bf16[N, D]"},
      {OpKind::Neg, T(DType::i32, {N}), "i32[N]"},
      {OpKind::Abs, T(DType::i8, {}), "i8[]"},
      {OpKind::Relu, T(DType::f16, {2, N}), "f16[2, N]"},
      {OpKind::Sign, T(DType::i64, {N + 1}), "i64[N + 1]"},
      {OpKind::Not, T(DType::boolean, {N}), "bool[N]"},
      {OpKind::IsNan, T(DType::f16, {N}), "bool[N]"},
      {OpKind::IsInf, T(DType::f64, {3}), "bool[3]"},
      {OpKind::Round, T(DType::f32, {0}), "f32[0]"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(infer1(c.op, {c.in}), c.want) << op_name(c.op);
}

TEST(InferUnaryTest, DTypeErrors) {
  EXPECT_THAT(infer_error(OpKind::Exp, {T(DType::i32, {N})}),
              HasSubstr("node 'y' (exp): exp: needs a float input, got i32"));
  EXPECT_THAT(infer_error(OpKind::Neg, {T(DType::boolean, {N})}),
              HasSubstr("neg: needs a numeric input, got bool"));
  EXPECT_THAT(infer_error(OpKind::Not, {T(DType::f32, {N})}),
              HasSubstr("not: needs a bool or integer input, got f32"));
  EXPECT_THAT(infer_error(OpKind::IsNan, {T(DType::i64, {N})}),
              HasSubstr("isnan: needs a float input, got i64"));
}

TEST(InferBinaryTest, DTypeAndShapeTable) {
  struct Case {
    OpKind op;
    TensorType a, b;
    std::string want;
  };
  const Case cases[] = {
      {OpKind::Add, T(DType::f32, {N, 768}), T(DType::f32, {N, 768}), "f32[N, 768]"},
      {OpKind::Sub, T(DType::f32, {N, D}), T(DType::f32, {D}), "f32[N, D]"},
      {OpKind::Mul, T(DType::f16, {N, 1}), T(DType::f16, {1, D}), "f16[N, D]"},
      {OpKind::Div, T(DType::i32, {}), T(DType::i32, {N}), "i32[N]"},
      {OpKind::Pow, T(DType::f32, {2, 1, 3}), T(DType::f32, {4, 1}), "f32[2, 4, 3]"},
      {OpKind::Mod, T(DType::i64, {N, 1}), T(DType::i64, {N, D}), "i64[N, D]"},
      {OpKind::And, T(DType::boolean, {N}), T(DType::boolean, {N}), "bool[N]"},
      {OpKind::Or, T(DType::u16, {N, 1}), T(DType::u16, {D}), "u16[N, D]"},
      {OpKind::Lt, T(DType::f32, {N, D}), T(DType::f32, {1}), "bool[N, D]"},
      {OpKind::Eq, T(DType::boolean, {N}), T(DType::boolean, {}), "bool[N]"},
      {OpKind::Ge, T(DType::u8, {2 * N}), T(DType::u8, {N + N}), "bool[2*N]"},
  };
  for (const Case& c : cases) {
    OneNode n(c.op, {c.a, c.b}, NoAttrs{});
    EXPECT_EQ(n.type(), c.want) << op_name(c.op);
    EXPECT_THAT(n.guards(), IsEmpty()) << op_name(c.op);
  }
}

TEST(InferBinaryTest, DTypeErrors) {
  EXPECT_THAT(infer_error(OpKind::Add, {T(DType::f32, {N}), T(DType::f16, {N})}),
              HasSubstr("node 'y' (add): add: operand dtypes differ: f32 vs f16"));
  EXPECT_THAT(infer_error(OpKind::Lt, {T(DType::i32, {N}), T(DType::i64, {N})}),
              HasSubstr("lt: operand dtypes differ: i32 vs i64"));
  EXPECT_THAT(infer_error(OpKind::Or, {T(DType::f16, {N}), T(DType::f16, {N})}),
              HasSubstr("or: needs a bool or integer input, got f16"));
  EXPECT_THAT(infer_error(OpKind::Xor, {T(DType::u8, {N}), T(DType::i8, {N})}),
              HasSubstr("xor: operand dtypes differ: u8 vs i8"));
  EXPECT_THAT(infer_error(OpKind::Max, {T(DType::boolean, {N}), T(DType::boolean, {N})}),
              HasSubstr("max: needs a numeric input, got bool"));
}

TEST(BroadcastTest, SymbolAgainstOneOrItself) {
  EXPECT_EQ(infer1(OpKind::Add, {T(DType::f32, {N}), T(DType::f32, {1})}), "f32[N]");
  EXPECT_EQ(infer1(OpKind::Add, {T(DType::f32, {1}), T(DType::f32, {N})}), "f32[N]");
  EXPECT_EQ(infer1(OpKind::Add, {T(DType::f32, {N}), T(DType::f32, {N})}), "f32[N]");
  EXPECT_EQ(infer1(OpKind::Add, {T(DType::f32, {N * D}), T(DType::f32, {D * N})}), "f32[D*N]");
}

TEST(BroadcastTest, TwoSymbolsAreGuardedEqual) {
  OneNode n(OpKind::Add, {T(DType::f32, {N, D}), T(DType::f32, {M, D})}, NoAttrs{});
  ASSERT_EQ(n.graph.shape_env().guards().size(), 1u);
  const sym::Guard& g = n.graph.shape_env().guards()[0];
  EXPECT_EQ(g.kind, sym::GuardKind::Expect);
  EXPECT_EQ(g.reason, "broadcast in node 'y' (add), dim 0");
  EXPECT_THAT(g.condition_text(), AnyOf("N == M", "M == N"));
  EXPECT_THAT(n.type(), AnyOf("f32[N, D]", "f32[M, D]"));
  // The guard equates N and M from now on: the same add again needs nothing.
  n.graph.add_node(OpKind::Add, {n.graph.inputs()[0], n.graph.inputs()[1]}, NoAttrs{}, {"z"});
  EXPECT_EQ(n.graph.shape_env().guards().size(), 1u);
  EXPECT_EQ(n.graph.value(n.graph.find_value("z").value()).type, n.graph.value(n.outputs[0]).type);
}

TEST(BroadcastTest, HintOfOneGuardsTheStretch) {
  OneNode n(OpKind::Mul, {T(DType::f32, {N}), T(DType::f32, {M})}, NoAttrs{}, 1,
            {{"N", 1}, {"M", 8}});
  EXPECT_EQ(n.type(), "f32[M]");
  EXPECT_THAT(n.guards(), ElementsAre("N == 1 [broadcast in node 'y' (mul), dim 0]"));

  OneNode flipped(OpKind::Mul, {T(DType::f32, {M, D}), T(DType::f32, {N, D})}, NoAttrs{}, 1,
                  {{"N", 1}, {"M", 8}});
  EXPECT_EQ(flipped.type(), "f32[M, D]");
  EXPECT_THAT(flipped.guards(), ElementsAre("N == 1 [broadcast in node 'y' (mul), dim 0]"));
}

TEST(BroadcastTest, HintsThatCannotBroadcastAreAnError) {
  EXPECT_THAT(user_error_of([] {
                OneNode(OpKind::Add, {T(DType::f32, {N}), T(DType::f32, {M})}, NoAttrs{}, 1,
                        {{"N", 4}, {"M", 8}});
              }),
              HasSubstr("node 'y' (add): cannot broadcast dim 0: N vs M (hints 4 vs 8)"));
}

TEST(BroadcastTest, ProvenDifferentMayStillStretchAOne) {
  // N and N + 1 are never equal, but N may be 1; then N + 1 is 2.
  OneNode n(OpKind::Add, {T(DType::f32, {N}), T(DType::f32, {N + 1})}, NoAttrs{});
  EXPECT_EQ(n.type(), "f32[2]");
  EXPECT_THAT(n.guards(), ElementsAre("N == 1 [broadcast in node 'y' (add), dim 0]"));
}

TEST(BroadcastTest, ProvenIncompatible) {
  EXPECT_THAT(infer_error(OpKind::Add, {T(DType::f32, {2, 3}), T(DType::f32, {2, 4})}),
              HasSubstr("node 'y' (add): cannot broadcast dim 1: 3 vs 4"));
  EXPECT_THAT(infer_error(OpKind::Add, {T(DType::f32, {2}), T(DType::f32, {N + 2})}),
              HasSubstr("cannot broadcast dim 0: 2 vs N + 2"));
  EXPECT_THAT(infer_error(OpKind::Sub, {T(DType::f32, {N, 3}), T(DType::f32, {5, 1, 4})}),
              HasSubstr("cannot broadcast dim 2: 3 vs 4"));
}

TEST(BroadcastTest, FreeFunction) {
  sym::ShapeEnv env;
  EXPECT_EQ(broadcast_shapes({N, 1}, {D}, env, ""), (Shape{N, D}));
  EXPECT_EQ(broadcast_shapes({}, {N}, env, ""), (Shape{N}));
  EXPECT_TRUE(env.guards().empty());
  // A failure leaves the env untouched, even after an earlier dim guarded.
  EXPECT_THROW(broadcast_shapes({N, 3}, {M, 4}, env, "x"), UserError);
  EXPECT_TRUE(env.guards().empty());
  const Shape s = broadcast_shapes({N, 3}, {M, 3}, env, "x");
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].reason, "broadcast in x, dim 0");
  EXPECT_EQ(s[1], sym::Expr(3));
}

TEST(InferWhereTest, ThreeWayBroadcast) {
  EXPECT_EQ(
      infer1(OpKind::Where, {T(DType::boolean, {N, 1}), T(DType::f32, {1, D}), T(DType::f32, {})}),
      "f32[N, D]");
  EXPECT_EQ(
      infer1(OpKind::Where, {T(DType::boolean, {}), T(DType::i32, {N}), T(DType::i32, {2, 1})}),
      "i32[2, N]");
  OneNode n(OpKind::Where, {T(DType::boolean, {N}), T(DType::f16, {1}), T(DType::f16, {M})},
            NoAttrs{});
  EXPECT_THAT(n.guards(), ElementsAre(AnyOf("N == M [broadcast in node 'y' (where), dim 0]",
                                            "M == N [broadcast in node 'y' (where), dim 0]")));
}

TEST(InferWhereTest, Errors) {
  EXPECT_THAT(
      infer_error(OpKind::Where, {T(DType::f32, {N}), T(DType::f32, {N}), T(DType::f32, {N})}),
      HasSubstr("node 'y' (where): where: condition must be bool, got f32"));
  EXPECT_THAT(
      infer_error(OpKind::Where, {T(DType::boolean, {N}), T(DType::f32, {N}), T(DType::f16, {N})}),
      HasSubstr("where: operand dtypes differ: f32 vs f16"));
  EXPECT_THAT(
      infer_error(OpKind::Where, {T(DType::boolean, {3}), T(DType::f32, {3}), T(DType::f32, {2})}),
      HasSubstr("cannot broadcast dim 0: 3 vs 2"));
}

TEST(InferCastTest, AnyToAny) {
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes)
      EXPECT_EQ(infer1(OpKind::Cast, {T(from, {N, 4})}, CastAttrs{to}),
                std::string(dtype_name(to)) + "[N, 4]");
}

TEST(InferBroadcastToTest, Shapes) {
  struct Case {
    Shape in, to;
    std::string want;
  };
  const Case cases[] = {
      {{D}, {N, D}, "f32[N, D]"}, {{1, D}, {N, D}, "f32[N, D]"},       {{}, {N, 3}, "f32[N, 3]"},
      {{1}, {0}, "f32[0]"},       {{N, 1}, {2, N, D}, "f32[2, N, D]"},
  };
  for (const Case& c : cases) {
    OneNode n(OpKind::BroadcastTo, {T(DType::f32, c.in)}, ShapeAttrs{c.to});
    EXPECT_EQ(n.type(), c.want);
    EXPECT_THAT(n.guards(), IsEmpty());
  }
}

TEST(InferBroadcastToTest, GuardsUnprovenDims) {
  OneNode n(OpKind::BroadcastTo, {T(DType::f32, {M})}, ShapeAttrs{{N, M}});
  EXPECT_EQ(n.type(), "f32[N, M]");
  EXPECT_THAT(n.guards(), IsEmpty());

  OneNode guarded(OpKind::BroadcastTo, {T(DType::f32, {M})}, ShapeAttrs{{N}});
  ASSERT_EQ(guarded.graph.shape_env().guards().size(), 1u);
  EXPECT_EQ(guarded.graph.shape_env().guards()[0].reason,
            "broadcast in node 'y' (broadcast_to), dim 0");

  OneNode hinted(OpKind::BroadcastTo, {T(DType::f32, {M, 1})}, ShapeAttrs{{N, 5}}, 1,
                 {{"M", 1}, {"N", 6}});
  EXPECT_EQ(hinted.type(), "f32[N, 5]");
  EXPECT_THAT(hinted.guards(), ElementsAre("M == 1 [broadcast in node 'y' (broadcast_to), dim 0]"));
}

TEST(InferBroadcastToTest, Errors) {
  EXPECT_THAT(user_error_of([] {
                OneNode(OpKind::BroadcastTo, {T(DType::f32, {N})}, ShapeAttrs{{M}}, 1,
                        {{"N", 2}, {"M", 3}});
              }),
              HasSubstr("cannot broadcast dim 0 of size N to M (hints 2 vs 3)"));
  EXPECT_THAT(infer_error(OpKind::BroadcastTo, {T(DType::f32, {3})}, ShapeAttrs{{N, 4}}),
              HasSubstr("node 'y' (broadcast_to): broadcast_to: cannot broadcast dim 0 of size 3 "
                        "to 4"));
  // The target's dims do not stretch.
  EXPECT_THAT(infer_error(OpKind::BroadcastTo, {T(DType::f32, {4})}, ShapeAttrs{{1}}),
              HasSubstr("cannot broadcast dim 0 of size 4 to 1"));
  EXPECT_THAT(infer_error(OpKind::BroadcastTo, {T(DType::f32, {N, D})}, ShapeAttrs{{D}}),
              HasSubstr("cannot broadcast rank 2 to the lower rank 1"));
  EXPECT_THAT(infer_error(OpKind::BroadcastTo, {T(DType::f32, {1})}, ShapeAttrs{{N - 2 * N}}),
              HasSubstr("target dim 0 is negative: -N"));
}

}  // namespace infer_elementwise_test_local
}  // namespace autofuse
