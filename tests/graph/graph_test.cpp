// Graph: node verification, error locations, symbols, outputs and queries.
#include "autofuse/graph/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace graph_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace graph_test;  // NOLINT

SourceLocation at(const std::string& file, int line, int column) {
  SourceLocation where;
  where.file = file;
  where.line = line;
  where.column = column;
  return where;
}

TEST(TensorTypeTest, ToStringAndNumel) {
  EXPECT_EQ(T(DType::f32, {N, 768}).to_string(), "f32[N, 768]");
  EXPECT_EQ(T(DType::boolean, {}).to_string(), "bool[]");
  EXPECT_EQ(T(DType::bf16, {N * D, D + 1}).to_string(), "bf16[D*N, D + 1]");
  EXPECT_EQ(numel({}), sym::Expr(1));
  EXPECT_EQ(numel({N, 4, D}), 4 * N * D);
  EXPECT_EQ(numel({N, 0}), sym::Expr(0));
  EXPECT_EQ(T(DType::f32, {N}).rank(), 1);
}

class GraphTest : public ::testing::Test {
 protected:
  Graph g{"g"};
  ValueId x = g.add_input("x", T(DType::f32, {N, D}));
  ValueId w = g.add_input("w", T(DType::f32, {D}));
};

TEST_F(GraphTest, NodesAndValuesAreRecorded) {
  const std::vector<ValueId> y = g.add_node(OpKind::Mul, {x, w}, NoAttrs{}, {"y"});
  ASSERT_EQ(y.size(), 1u);
  const Value& v = g.value(y[0]);
  EXPECT_EQ(v.name, "y");
  EXPECT_EQ(v.type.to_string(), "f32[N, D]");
  EXPECT_EQ(v.producer, 0);
  EXPECT_EQ(v.output_index, 0);
  const Node& n = g.node(0);
  EXPECT_EQ(n.op, OpKind::Mul);
  EXPECT_EQ(n.inputs, (std::vector<ValueId>{x, w}));
  EXPECT_EQ(n.outputs, y);
  EXPECT_EQ(g.value(x).producer, kNoNode);
  EXPECT_EQ(g.inputs(), (std::vector<ValueId>{x, w}));
  EXPECT_EQ(g.name(), "g");
  EXPECT_EQ(g.find_value("y"), y[0]);
  EXPECT_EQ(g.find_value("x"), x);
  EXPECT_EQ(g.find_value("nope"), std::nullopt);
  EXPECT_THROW(g.value(99), InternalError);
  EXPECT_THROW(g.node(1), InternalError);
}

TEST_F(GraphTest, SignatureErrorsNameNodeAndOp) {
  EXPECT_THAT(user_error_of([&] { g.add_node(OpKind::Add, {x}, NoAttrs{}, {"y"}); }),
              HasSubstr("node 'y' (add): add: expects 2 inputs, got 1"));
  EXPECT_THAT(user_error_of([&] {
                g.add_node(OpKind::Exp, {x, x}, NoAttrs{}, {"y"});
              }),
              HasSubstr("node 'y' (exp): exp: expects 1 input, got 2"));
  EXPECT_THAT(user_error_of([&] {
                g.add_node(OpKind::Constant, {x}, ConstantAttrs{DType::f32, {}, {1}}, {"c"});
              }),
              HasSubstr("node 'c' (constant): constant: expects no inputs, got 1"));
  EXPECT_THAT(user_error_of([&] {
                g.add_node(OpKind::Add, {x, w}, AxisAttrs{0}, {"y"});
              }),
              HasSubstr("node 'y' (add): add: expects no attributes, got axis attributes"));
  EXPECT_THAT(user_error_of([&] { g.add_node(OpKind::Slice, {x}, NoAttrs{}, {"y"}); }),
              HasSubstr("slice: expects slice attributes, got no attributes"));
  EXPECT_THAT(user_error_of([&] { g.add_node(OpKind::Reshape, {x}, SplitAttrs{}, {"y"}); }),
              HasSubstr("reshape: expects shape attributes, got split attributes"));
  EXPECT_THAT(user_error_of([&] {
                g.add_node(OpKind::Add, {x, 42}, NoAttrs{}, {"y"});
              }),
              HasSubstr("node 'y' (add): input 1 is not a value of this graph (id 42)"));
  EXPECT_THAT(user_error_of([&] {
                g.add_node(OpKind::Add, {-1, x}, NoAttrs{}, {"y"});
              }),
              HasSubstr("input 0 is not a value of this graph (id -1)"));
}

TEST_F(GraphTest, OutputNameErrors) {
  EXPECT_THAT(user_error_of([&] { g.add_node(OpKind::Exp, {x}, NoAttrs{}, {"x"}); }),
              HasSubstr("node 'x' (exp): value name 'x' is already used"));
  EXPECT_THAT(user_error_of([&] { g.add_node(OpKind::Exp, {x}, NoAttrs{}, {"1y"}); }),
              HasSubstr("value name '1y' is not an identifier"));
  EXPECT_THAT(user_error_of([&] { g.add_node(OpKind::Exp, {x}, NoAttrs{}, {"a-b"}); }),
              HasSubstr("value name 'a-b' is not an identifier"));
  EXPECT_THAT(user_error_of([&] { g.add_node(OpKind::Exp, {x}, NoAttrs{}, {""}); }),
              HasSubstr("value name '' is not an identifier"));
  EXPECT_THAT(user_error_of([&] { g.add_node(OpKind::Exp, {x}, NoAttrs{}, {}); }),
              HasSubstr("op exp: expects 1 output name, got 0"));
  EXPECT_THAT(user_error_of([&] {
                g.add_node(OpKind::Exp, {x}, NoAttrs{}, {"p", "q"});
              }),
              HasSubstr("expects 1 output name, got 2"));
  EXPECT_THAT(user_error_of([&] {
                g.add_node(OpKind::Split, {x}, SplitAttrs{1, {1, D - 1}}, {"p", "p"});
              }),
              HasSubstr("node 'p' (split): value name 'p' is already used"));
  g.add_node(OpKind::Exp, {x}, NoAttrs{}, {"_ok_1"});
}

TEST_F(GraphTest, ErrorsCarryTheSourceLocation) {
  const ValueId a = g.add_input("a", T(DType::f32, {2, 3}));
  const ValueId b = g.add_input("b", T(DType::f32, {2, 4}));
  const std::string message = user_error_of([&] {
    g.add_node(OpKind::Add, {a, b}, NoAttrs{}, {"y"}, at("model.af", 7, 3));
  });
  EXPECT_EQ(message, "model.af:7:3: node 'y' (add): cannot broadcast dim 1: 3 vs 4");
  try {
    g.add_node(OpKind::Add, {a, b}, NoAttrs{}, {"y"}, at("m.af", 2, 5));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, "m.af");
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 5);
    EXPECT_EQ(e.where().node, "y");
    EXPECT_EQ(e.where().op, "add");
    EXPECT_EQ(e.message(), "cannot broadcast dim 1: 3 vs 4");
  }
}

TEST_F(GraphTest, FailedNodeLeavesTheGraphUnchanged) {
  const ValueId a = g.add_input("a", T(DType::f32, {N, 3}));
  const ValueId b = g.add_input("b", T(DType::f32, {K, 4}));
  const size_t values = g.values().size();
  // Dim 0 would be guarded (N == K) before dim 1 fails.
  EXPECT_THROW(g.add_node(OpKind::Add, {a, b}, NoAttrs{}, {"y"}), UserError);
  EXPECT_EQ(g.values().size(), values);
  EXPECT_TRUE(g.nodes().empty());
  EXPECT_TRUE(g.shape_env().guards().empty());
  EXPECT_EQ(g.find_value("y"), std::nullopt);
  // The name is still free.
  g.add_node(OpKind::Exp, {a}, NoAttrs{}, {"y"});
}

TEST_F(GraphTest, InputErrors) {
  EXPECT_THAT(user_error_of([&] { g.add_input("x", T(DType::f32, {})); }),
              HasSubstr("node 'x': value name 'x' is already used"));
  EXPECT_THAT(user_error_of([&] { g.add_input("9", T(DType::f32, {})); }),
              HasSubstr("value name '9' is not an identifier"));
  EXPECT_THAT(
      user_error_of([&] { g.add_input("z", T(DType::f32, {N - N - 1}), at("f.af", 1, 9)); }),
      HasSubstr("f.af:1:9: node 'z': input dim 0 is negative: -1"));
  EXPECT_EQ(g.inputs().size(), 2u);
  EXPECT_THROW(Graph("bad name"), UserError);
}

TEST(GraphSymbolsTest, InputOrderThenAttributes) {
  Graph g;
  g.add_input("a", T(DType::f32, {N, D}));
  const ValueId b = g.add_input("b", T(DType::f32, {B, N * K}));
  g.add_input("c", T(DType::f32, {D, 3}));
  EXPECT_THAT(g.symbols(), ElementsAre("N", "D", "B", "K"));
  g.add_node(OpKind::Reshape, {b}, ShapeAttrs{{B, N, K}}, {"r"});
  EXPECT_THAT(g.symbols(), ElementsAre("N", "D", "B", "K"));
  g.add_node(OpKind::BroadcastTo, {b}, ShapeAttrs{{S("E"), B, N * K}}, {"e"});
  g.add_node(OpKind::Iota, {}, IotaAttrs{DType::i64, {S("F") + 1}, 0}, {"f"});
  EXPECT_THAT(g.symbols(), ElementsAre("N", "D", "B", "K", "E", "F"));
}

TEST_F(GraphTest, SetOutputs) {
  const ValueId y = g.add_node(OpKind::Mul, {x, w}, NoAttrs{}, {"y"})[0];
  g.set_outputs({y, x});
  EXPECT_EQ(g.outputs(), (std::vector<ValueId>{y, x}));
  EXPECT_THAT(user_error_of([&] {
                g.set_outputs({y, 7});
              }),
              HasSubstr("output 1 is not a value of this graph (id 7)"));
  EXPECT_THAT(user_error_of([&] {
                g.set_outputs({y, x, y}, at("o.af", 4, 10));
              }),
              HasSubstr("o.af:4:10: node 'y': is listed as a graph output twice"));
  // A failed call keeps the previous outputs.
  EXPECT_EQ(g.outputs(), (std::vector<ValueId>{y, x}));
}

TEST_F(GraphTest, UseCounts) {
  const ValueId sq = g.add_node(OpKind::Mul, {x, x}, NoAttrs{}, {"sq"})[0];
  const ValueId y = g.add_node(OpKind::Add, {sq, w}, NoAttrs{}, {"y"})[0];
  const ValueId z = g.add_node(OpKind::Sub, {y, x}, NoAttrs{}, {"z"})[0];
  g.set_outputs({z, y});
  const std::vector<int> counts = g.use_counts();
  ASSERT_EQ(counts.size(), g.values().size());
  EXPECT_EQ(counts[x], 2);  // mul(x, x) is one node; sub is the other
  EXPECT_EQ(counts[w], 1);
  EXPECT_EQ(counts[sq], 1);
  EXPECT_EQ(counts[y], 2);  // sub + graph output
  EXPECT_EQ(counts[z], 1);  // graph output only
}

TEST(InferTypesTest, FreeFunctionNormalizesAttrs) {
  sym::ShapeEnv env;
  Attrs attrs = ReduceAttrs{{-1, 0}, true};
  const std::vector<TensorType> out =
      infer_types(OpKind::ReduceMax, {T(DType::f32, {N, D})}, attrs, env, "node 'r'");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_string(), "f32[1, 1]");
  EXPECT_EQ(std::get<ReduceAttrs>(attrs).axes, (std::vector<int64_t>{0, 1}));
  // Errors carry no location and leave attrs as they were.
  Attrs bad = ReduceAttrs{{-1, 5}, false};
  try {
    infer_types(OpKind::ReduceMax, {T(DType::f32, {N, D})}, bad, env, "node 'r'");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "reduce_max: axis 5 is out of range for rank 2");
  }
  EXPECT_EQ(std::get<ReduceAttrs>(bad).axes, (std::vector<int64_t>{-1, 5}));
  Attrs none = NoAttrs{};
  EXPECT_THROW(infer_types(OpKind::Add, {T(DType::f32, {N})}, none, env, ""), UserError);
}

}  // namespace graph_test_local
}  // namespace autofuse
