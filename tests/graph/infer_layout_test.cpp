// Inference of reduce, transpose, reshape, concat and split.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace infer_layout_test_local {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace graph_test;  // NOLINT

TEST(InferReduceTest, ShapesAndNormalizedAxes) {
  struct Case {
    std::vector<int64_t> axes;
    bool keepdims;
    std::string want;
    std::vector<int64_t> normalized;
  };
  const Case cases[] = {
      {{1}, true, "f32[N, 1, 4]", {1}},  {{-1}, false, "f32[N, D]", {2}},
      {{2, 0}, false, "f32[D]", {0, 2}}, {{-3, 1}, true, "f32[1, 1, 4]", {0, 1}},
      {{}, false, "f32[]", {}},          {{}, true, "f32[1, 1, 1]", {}},
  };
  for (const Case& c : cases) {
    OneNode n(OpKind::ReduceSum, {T(DType::f32, {N, D, 4})}, ReduceAttrs{c.axes, c.keepdims});
    EXPECT_EQ(n.type(), c.want);
    EXPECT_EQ(std::get<ReduceAttrs>(n.attrs()).axes, c.normalized);
    EXPECT_EQ(std::get<ReduceAttrs>(n.attrs()).keepdims, c.keepdims);
  }
  EXPECT_EQ(infer1(OpKind::ReduceMax, {T(DType::i32, {N})}, ReduceAttrs{{0}, false}), "i32[]");
  EXPECT_EQ(infer1(OpKind::ReduceMean, {T(DType::f16, {})}, ReduceAttrs{{}, true}), "f16[]");
}

TEST(InferReduceTest, Errors) {
  const TensorType x = T(DType::f32, {N, D});
  EXPECT_THAT(infer_error(OpKind::ReduceSum, {x}, ReduceAttrs{{2}, false}),
              HasSubstr("node 'y' (reduce_sum): reduce_sum: axis 2 is out of range for rank 2"));
  EXPECT_THAT(infer_error(OpKind::ReduceSum, {x}, ReduceAttrs{{-3}, false}),
              HasSubstr("axis -3 is out of range for rank 2"));
  EXPECT_THAT(infer_error(OpKind::ReduceMin, {x}, ReduceAttrs{{1, -1}, false}),
              HasSubstr("reduce_min: axis 1 is listed twice"));
  EXPECT_THAT(infer_error(OpKind::ReduceProd, {T(DType::boolean, {N})}, ReduceAttrs{{0}, false}),
              HasSubstr("reduce_prod: needs a numeric input, got bool"));
}

TEST(InferTransposeTest, Permutes) {
  OneNode n(OpKind::Transpose, {T(DType::f16, {N, D, 3})}, TransposeAttrs{{2, 0, -2}});
  EXPECT_EQ(n.type(), "f16[3, N, D]");
  EXPECT_EQ(std::get<TransposeAttrs>(n.attrs()).perm, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(infer1(OpKind::Transpose, {T(DType::i8, {})}, TransposeAttrs{{}}), "i8[]");
  EXPECT_EQ(infer1(OpKind::Transpose, {T(DType::f32, {N, D})}, TransposeAttrs{{1, 0}}),
            "f32[D, N]");
}

TEST(InferTransposeTest, Errors) {
  const TensorType x = T(DType::f32, {N, D, 3});
  EXPECT_THAT(infer_error(OpKind::Transpose, {x}, TransposeAttrs{{0, 0, 1}}),
              HasSubstr("node 'y' (transpose): transpose: perm is not a permutation: 0 is listed "
                        "twice"));
  EXPECT_THAT(infer_error(OpKind::Transpose, {x}, TransposeAttrs{{0, 2, -3}}),
              HasSubstr("perm is not a permutation: 0 is listed twice"));
  EXPECT_THAT(infer_error(OpKind::Transpose, {x}, TransposeAttrs{{1, 0}}),
              HasSubstr("perm has 2 entries for rank 3"));
  EXPECT_THAT(infer_error(OpKind::Transpose, {x}, TransposeAttrs{{0, 1, 3}}),
              HasSubstr("perm entry 3 is out of range for rank 3"));
}

TEST(InferReshapeTest, ProvenCounts) {
  struct Case {
    Shape in, to;
    std::string want;
  };
  const Case cases[] = {
      {{N, D}, {N * D}, "f32[D*N]"}, {{N, 4}, {2 * N, 2}, "f32[2*N, 2]"},
      {{2, 3}, {3, 2}, "f32[3, 2]"}, {{1, 1}, {}, "f32[]"},
      {{}, {1, 1}, "f32[1, 1]"},     {{N, 0}, {0, D}, "f32[0, D]"},
  };
  for (const Case& c : cases) {
    OneNode n(OpKind::Reshape, {T(DType::f32, c.in)}, ShapeAttrs{c.to});
    EXPECT_EQ(n.type(), c.want);
    EXPECT_THAT(n.guards(), IsEmpty()) << c.want;
  }
}

TEST(InferReshapeTest, UnprovenCountIsAsserted) {
  OneNode n(OpKind::Reshape, {T(DType::f32, {N, D})}, ShapeAttrs{{M}});
  // The output dim is canonical: the guard may have made M an alias.
  EXPECT_EQ(n.graph.value(n.outputs[0]).type.shape[0], n.graph.shape_env().canonicalize(M));
  ASSERT_EQ(n.graph.shape_env().guards().size(), 1u);
  const sym::Guard& g = n.graph.shape_env().guards()[0];
  EXPECT_EQ(g.kind, sym::GuardKind::Assert);
  EXPECT_EQ(g.reason, "element count of reshape in node 'y' (reshape)");
  EXPECT_THAT(g.condition_text(), AnyOf("D*N == M", "M == D*N"));
  // A symbol that appears only in the target shape is a graph symbol too.
  EXPECT_THAT(n.graph.symbols(), ElementsAre("N", "D", "M"));
}

TEST(InferReshapeTest, Errors) {
  EXPECT_THAT(infer_error(OpKind::Reshape, {T(DType::f32, {6})}, ShapeAttrs{{4}}),
              HasSubstr("node 'y' (reshape): reshape: element count changes: 6 vs 4"));
  EXPECT_THAT(infer_error(OpKind::Reshape, {T(DType::f32, {N})}, ShapeAttrs{{N + 1}}),
              HasSubstr("element count changes: N vs N + 1"));
  EXPECT_THAT(infer_error(OpKind::Reshape, {T(DType::f32, {4})}, ShapeAttrs{{-1, -4}}),
              HasSubstr("target dim 0 is negative: -1"));
}

TEST(InferConcatTest, Shapes) {
  EXPECT_EQ(infer1(OpKind::Concat, {T(DType::f32, {N, 4}), T(DType::f32, {N, 5})}, AxisAttrs{1}),
            "f32[N, 9]");
  EXPECT_EQ(infer1(OpKind::Concat, {T(DType::i32, {N})}, AxisAttrs{0}), "i32[N]");
  OneNode n(OpKind::Concat, {T(DType::f32, {N, D}), T(DType::f32, {M, D}), T(DType::f32, {2, D})},
            AxisAttrs{-2});
  EXPECT_EQ(n.graph.value(n.outputs[0]).type.shape, (Shape{N + M + 2, D}));
  EXPECT_EQ(std::get<AxisAttrs>(n.attrs()).axis, 0);
  EXPECT_THAT(n.guards(), IsEmpty());
}

TEST(InferConcatTest, UnprovenDimsAreGuarded) {
  OneNode n(OpKind::Concat, {T(DType::f32, {N, D}), T(DType::f32, {N, M})}, AxisAttrs{0});
  EXPECT_THAT(n.type(), AnyOf("f32[2*N, D]", "f32[2*N, M]"));
  ASSERT_EQ(n.graph.shape_env().guards().size(), 1u);
  EXPECT_EQ(n.graph.shape_env().guards()[0].kind, sym::GuardKind::Expect);
  EXPECT_EQ(n.graph.shape_env().guards()[0].reason, "concat in node 'y' (concat), input 1 dim 1");
}

TEST(InferConcatTest, Errors) {
  EXPECT_THAT(infer_error(OpKind::Concat, {T(DType::f32, {N}), T(DType::f16, {N})}, AxisAttrs{0}),
              HasSubstr("node 'y' (concat): concat: input 1 has dtype f16, input 0 has f32"));
  EXPECT_THAT(
      infer_error(OpKind::Concat, {T(DType::f32, {N}), T(DType::f32, {N, 1})}, AxisAttrs{0}),
      HasSubstr("input 1 has rank 2, input 0 has rank 1"));
  EXPECT_THAT(
      infer_error(OpKind::Concat, {T(DType::f32, {N, 3}), T(DType::f32, {N, 4})}, AxisAttrs{0}),
      HasSubstr("input 1 dim 1 is 4, input 0 has 3"));
  EXPECT_THAT(infer_error(OpKind::Concat, {T(DType::f32, {N}), T(DType::f32, {N})}, AxisAttrs{1}),
              HasSubstr("axis 1 is out of range for rank 1"));
  EXPECT_THAT(infer_error(OpKind::Concat, {T(DType::f32, {})}, AxisAttrs{0}),
              HasSubstr("axis 0 is out of range for rank 0"));
  EXPECT_THAT(infer_error(OpKind::Concat, {}, AxisAttrs{0}),
              HasSubstr("concat: expects at least 1 input, got 0"));
}

TEST(InferSplitTest, Shapes) {
  OneNode n(OpKind::Split, {T(DType::f32, {N, 2 * D})}, SplitAttrs{-1, {D, D}}, 2);
  EXPECT_EQ(n.type(0), "f32[N, D]");
  EXPECT_EQ(n.type(1), "f32[N, D]");
  EXPECT_EQ(std::get<SplitAttrs>(n.attrs()).axis, 1);
  EXPECT_THAT(n.guards(), IsEmpty());
  EXPECT_EQ(n.graph.value(n.outputs[1]).output_index, 1);

  OneNode c(OpKind::Split, {T(DType::i64, {8, N})}, SplitAttrs{0, {3, 0, 5}}, 3);
  EXPECT_EQ(c.type(0), "i64[3, N]");
  EXPECT_EQ(c.type(1), "i64[0, N]");
  EXPECT_EQ(c.type(2), "i64[5, N]");
}

TEST(InferSplitTest, UnprovenSumIsAsserted) {
  OneNode n(OpKind::Split, {T(DType::f32, {N})}, SplitAttrs{0, {D, M}}, 2);
  EXPECT_EQ(n.type(0), "f32[D]");
  EXPECT_EQ(n.type(1), "f32[M]");
  ASSERT_EQ(n.graph.shape_env().guards().size(), 1u);
  EXPECT_EQ(n.graph.shape_env().guards()[0].kind, sym::GuardKind::Assert);
  EXPECT_EQ(n.graph.shape_env().guards()[0].reason, "split sizes in node 'y0' (split)");
  EXPECT_THAT(n.graph.symbols(), ElementsAre("N", "D", "M"));
}

TEST(InferSplitTest, Errors) {
  const TensorType x = T(DType::f32, {N, 8});
  EXPECT_THAT(infer_error(OpKind::Split, {x}, SplitAttrs{1, {3, 4}}, 2),
              HasSubstr("node 'y0' (split): split: sizes sum to 7, but dim 1 is 8"));
  EXPECT_THAT(infer_error(OpKind::Split, {x}, SplitAttrs{1, {-1, 9}}, 2),
              HasSubstr("split size 0 is negative: -1"));
  EXPECT_THAT(infer_error(OpKind::Split, {x}, SplitAttrs{2, {4, 4}}, 2),
              HasSubstr("axis 2 is out of range for rank 2"));
  EXPECT_THAT(infer_error(OpKind::Split, {x}, SplitAttrs{1, {4, 4}}, 1),
              HasSubstr("node 'y' (split): expects 2 output names, got 1"));
  EXPECT_THAT(user_error_of([&] {
                Graph g;
                const ValueId a = g.add_input("a", x);
                g.add_node(OpKind::Split, {a}, SplitAttrs{1, {}}, {});
              }),
              HasSubstr("split: needs at least one size"));
}

}  // namespace infer_layout_test_local
}  // namespace autofuse
