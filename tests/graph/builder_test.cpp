// GraphBuilder conveniences.
#include "autofuse/graph/builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace builder_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace graph_test;  // NOLINT

TEST(GraphBuilderTest, LayerNorm) {
  GraphBuilder b("layernorm");
  Tensor x = b.input("x", DType::f32, {N, D});
  Tensor gamma = b.input("gamma", DType::f32, {D});
  Tensor mean = b.reduce_mean(x, {-1}, /*keepdims=*/true);
  Tensor xc = b.sub(x, mean, "xc");
  Tensor var = b.reduce_mean(b.mul(xc, xc), {1}, true);
  Tensor inv = b.rsqrt(b.add(var, b.scalar(1e-5)));
  Tensor y = b.mul(b.mul(xc, inv), gamma, "y");
  EXPECT_EQ(mean.type().to_string(), "f32[N, 1]");
  EXPECT_EQ(inv.type().to_string(), "f32[N, 1]");
  EXPECT_EQ(y.shape(), (Shape{N, D}));
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.rank(), 2);
  Graph g = std::move(b).build({y, mean});
  EXPECT_EQ(g.name(), "layernorm");
  EXPECT_EQ(g.outputs(), (std::vector<ValueId>{y.id, mean.id}));
  std::vector<std::string> names;
  for (const Value& v : g.values())
    names.push_back(v.name);
  EXPECT_THAT(names,
              ElementsAre("x", "gamma", "v0", "xc", "v1", "v2", "v3", "v4", "v5", "v6", "y"));
  EXPECT_TRUE(g.shape_env().guards().empty());
}

TEST(GraphBuilderTest, FreshNamesSkipUsedOnes) {
  GraphBuilder b;
  Tensor v0 = b.input("v0", DType::f32, {N});
  Tensor v2 = b.exp(v0, "v2");
  Tensor a = b.exp(v0);
  Tensor c = b.exp(v2);
  EXPECT_EQ(b.graph().value(a.id).name, "v1");
  EXPECT_EQ(b.graph().value(c.id).name, "v3");
}

TEST(GraphBuilderTest, ScalarAndConstants) {
  GraphBuilder b;
  Tensor s = b.scalar(2.5);
  EXPECT_EQ(s.type().to_string(), "f32[]");
  const Node& node = b.graph().node(b.graph().value(s.id).producer);
  EXPECT_EQ(node.op, OpKind::Constant);
  EXPECT_EQ(std::get<ConstantAttrs>(node.attrs), (ConstantAttrs{DType::f32, {}, {2.5}}));
  EXPECT_EQ(b.scalar(3, DType::i32, "three").type().to_string(), "i32[]");
  EXPECT_EQ(b.iota(DType::i64, {N, 2}, 0).type().to_string(), "i64[N, 2]");
  EXPECT_THAT(
      user_error_of([&] { b.scalar(0.5, DType::i32, "half"); }),
      HasSubstr("node 'half' (constant): constant: value 0.5 at index 0 is not a valid i32"));
}

TEST(GraphBuilderTest, SplitAndOtherHelpers) {
  GraphBuilder b;
  Tensor x = b.input("x", DType::f32, {N, 3 * D});
  std::vector<Tensor> parts = b.split(x, 1, {D, 2 * D}, {"q"});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(b.graph().value(parts[0].id).name, "q");
  EXPECT_EQ(b.graph().value(parts[1].id).name, "v0");
  EXPECT_EQ(parts[1].type().to_string(), "f32[N, 2*D]");
  Tensor t = b.transpose(parts[0], {1, 0});
  EXPECT_EQ(t.type().to_string(), "f32[D, N]");
  Tensor cat = b.concat({parts[0], parts[1]}, -1);
  EXPECT_EQ(cat.shape(), (Shape{N, 3 * D}));
  Tensor r = b.reshape(x, {3 * N * D});
  EXPECT_EQ(r.type().to_string(), "f32[3*D*N]");
  Tensor bc = b.broadcast_to(b.input("row", DType::f32, {D}), {N, D});
  EXPECT_EQ(bc.type().to_string(), "f32[N, D]");
  Tensor idx = b.input("idx", DType::i32, {5});
  EXPECT_EQ(b.gather(x, idx, 0).type().to_string(), "f32[5, 3*D]");
  Tensor cond = b.op(OpKind::Gt, {x, b.scalar(0)});
  EXPECT_EQ(b.where(cond, x, b.scalar(0)).type().to_string(), "f32[N, 3*D]");
  EXPECT_EQ(b.cast(cond, DType::f16).type().to_string(), "f16[N, 3*D]");
  EXPECT_EQ(b.slice(x, SliceAttrs{{0}, {1}, {kSliceEnd}, {1}}).type().to_string(),
            "f32[N - 1, 3*D]");
  EXPECT_EQ(b.matmul(x, b.input("m", DType::f32, {3 * D, 7})).type().to_string(), "f32[N, 7]");
  EXPECT_EQ(b.reduce_max(x, {}, false).type().to_string(), "f32[]");
}

TEST(GraphBuilderTest, Errors) {
  GraphBuilder b;
  Tensor x = b.input("x", DType::f32, {N});
  Tensor h = b.input("h", DType::f16, {N});
  EXPECT_THAT(user_error_of([&] { b.add(x, h, "z"); }),
              HasSubstr("node 'z' (add): add: operand dtypes differ: f32 vs f16"));
  GraphBuilder other;
  Tensor foreign = other.input("f", DType::f32, {N});
  EXPECT_THAT(user_error_of([&] { b.add(x, foreign); }),
              HasSubstr("input 1 was not made by this builder"));
  EXPECT_THAT(user_error_of([&] {
                b.split(x, 0, {N}, {"a", "b"});
              }),
              HasSubstr("split: 2 names for 1 outputs"));
  EXPECT_THAT(user_error_of([&] {
                std::move(b).build({x, x});
              }),
              HasSubstr("node 'x': is listed as a graph output twice"));
}

}  // namespace builder_test_local
}  // namespace autofuse
