// Inference of gather, constant, iota and matmul.
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace infer_misc_test_local {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace graph_test;  // NOLINT

TEST(InferGatherTest, Shapes) {
  struct Case {
    TensorType data, indices;
    int64_t axis;
    std::string want;
  };
  const Case cases[] = {
      {T(DType::f32, {N, D}), T(DType::i64, {B, 3}), 0, "f32[B, 3, D]"},
      {T(DType::f32, {N, D}), T(DType::i32, {B}), 1, "f32[N, B]"},
      {T(DType::f16, {N, D, 4}), T(DType::i32, {}), -2, "f16[N, 4]"},
      {T(DType::i8, {N}), T(DType::i64, {2, 2}), 0, "i8[2, 2]"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(infer1(OpKind::Gather, {c.data, c.indices}, AxisAttrs{c.axis}), c.want);
}

TEST(InferGatherTest, Errors) {
  EXPECT_THAT(infer_error(OpKind::Gather, {T(DType::f32, {N}), T(DType::f32, {B})}, AxisAttrs{0}),
              HasSubstr("node 'y' (gather): gather: indices must be i32 or i64, got f32"));
  EXPECT_THAT(infer_error(OpKind::Gather, {T(DType::f32, {N}), T(DType::i32, {B})}, AxisAttrs{1}),
              HasSubstr("axis 1 is out of range for rank 1"));
  EXPECT_THAT(infer_error(OpKind::Gather, {T(DType::f32, {}), T(DType::i32, {B})}, AxisAttrs{0}),
              HasSubstr("axis 0 is out of range for rank 0"));
}

TEST(InferConstantTest, Types) {
  EXPECT_EQ(infer1(OpKind::Constant, {}, ConstantAttrs{DType::f32, {}, {1.5}}), "f32[]");
  EXPECT_EQ(infer1(OpKind::Constant, {}, ConstantAttrs{DType::f16, {2, 3}, {0.5}}), "f16[2, 3]");
  EXPECT_EQ(infer1(OpKind::Constant, {}, ConstantAttrs{DType::i32, {3}, {1, -2, 2147483647}}),
            "i32[3]");
  EXPECT_EQ(infer1(OpKind::Constant, {}, ConstantAttrs{DType::boolean, {2}, {0, 1}}), "bool[2]");
  EXPECT_EQ(infer1(OpKind::Constant, {}, ConstantAttrs{DType::u8, {0}, {}}), "u8[0]");
  EXPECT_EQ(infer1(OpKind::Constant, {}, ConstantAttrs{DType::i64, {1}, {-9007199254740992.0}}),
            "i64[1]");
  // Floats take anything, NaN and infinities included.
  EXPECT_EQ(infer1(OpKind::Constant, {}, ConstantAttrs{DType::f64, {2}, {std::nan(""), -INFINITY}}),
            "f64[2]");
}

TEST(InferConstantTest, BadValues) {
  auto error = [](ConstantAttrs attrs) { return infer_error(OpKind::Constant, {}, attrs); };
  EXPECT_THAT(error({DType::f32, {2, 2}, {1, 2, 3}}),
              HasSubstr("node 'y' (constant): constant: has 3 values for 4 elements (give 1 or "
                        "4)"));
  EXPECT_THAT(error({DType::f32, {2}, {}}), HasSubstr("has 0 values for 2 elements"));
  EXPECT_THAT(error({DType::f32, {2, -1}, {1}}), HasSubstr("shape dim 1 is negative: -1"));
  EXPECT_THAT(error({DType::i32, {}, {1.5}}), HasSubstr("value 1.5 at index 0 is not a valid i32"));
  EXPECT_THAT(error({DType::i64, {2}, {0, 9007199254740994.0}}),
              HasSubstr("at index 1 is not a valid i64"));
  EXPECT_THAT(error({DType::u8, {}, {-1}}), HasSubstr("value -1 at index 0 is not a valid u8"));
  EXPECT_THAT(error({DType::i8, {}, {128}}), HasSubstr("is not a valid i8"));
  EXPECT_THAT(error({DType::i32, {}, {std::nan("")}}), HasSubstr("is not a valid i32"));
  EXPECT_THAT(error({DType::boolean, {3}, {0, 1, 2}}),
              HasSubstr("value 2 at index 2 is not a valid bool"));
  const int64_t big = int64_t{1} << 40;
  EXPECT_THAT(error({DType::f32, {big, big}, {1}}), HasSubstr("shape has too many elements"));
}

TEST(InferIotaTest, Types) {
  OneNode n(OpKind::Iota, {}, IotaAttrs{DType::i32, {N, 4}, -1});
  EXPECT_EQ(n.type(), "i32[N, 4]");
  EXPECT_EQ(std::get<IotaAttrs>(n.attrs()).axis, 1);
  EXPECT_THAT(n.graph.symbols(), ElementsAre("N"));
  EXPECT_EQ(infer1(OpKind::Iota, {}, IotaAttrs{DType::f32, {3}, 0}), "f32[3]");
}

TEST(InferIotaTest, Errors) {
  EXPECT_THAT(infer_error(OpKind::Iota, {}, IotaAttrs{DType::i64, {N}, 1}),
              HasSubstr("node 'y' (iota): iota: axis 1 is out of range for rank 1"));
  EXPECT_THAT(infer_error(OpKind::Iota, {}, IotaAttrs{DType::i64, {}, 0}),
              HasSubstr("axis 0 is out of range for rank 0"));
  EXPECT_THAT(infer_error(OpKind::Iota, {}, IotaAttrs{DType::boolean, {N}, 0}),
              HasSubstr("dtype must be numeric, got bool"));
  EXPECT_THAT(infer_error(OpKind::Iota, {}, IotaAttrs{DType::i64, {-2}, 0}),
              HasSubstr("shape dim 0 is negative: -2"));
}

TEST(InferMatMulTest, Shapes) {
  struct Case {
    Shape a, b;
    std::string want;
  };
  const Case cases[] = {
      {{N, K}, {K, M}, "f32[N, M]"},
      {{B, N, K}, {K, M}, "f32[B, N, M]"},
      {{B, 1, N, 64}, {3, 64, 32}, "f32[B, 3, N, 32]"},
      {{2, 3}, {3, 4}, "f32[2, 4]"},
  };
  for (const Case& c : cases) {
    OneNode n(OpKind::MatMul, {T(DType::f32, c.a), T(DType::f32, c.b)}, NoAttrs{});
    EXPECT_EQ(n.type(), c.want);
    EXPECT_THAT(n.guards(), IsEmpty());
  }
  EXPECT_EQ(infer1(OpKind::MatMul, {T(DType::bf16, {N, K}), T(DType::bf16, {K, K})}), "bf16[N, K]");
}

TEST(InferMatMulTest, UnprovenInnerDimIsAsserted) {
  OneNode n(OpKind::MatMul, {T(DType::f32, {N, K}), T(DType::f32, {D, M})}, NoAttrs{});
  ASSERT_EQ(n.graph.shape_env().guards().size(), 1u);
  const sym::Guard& g = n.graph.shape_env().guards()[0];
  EXPECT_EQ(g.kind, sym::GuardKind::Assert);
  EXPECT_EQ(g.reason, "matmul inner dim in node 'y' (matmul)");
  EXPECT_THAT(g.condition_text(), AnyOf("K == D", "D == K"));
}

TEST(InferMatMulTest, Errors) {
  EXPECT_THAT(infer_error(OpKind::MatMul, {T(DType::f32, {N}), T(DType::f32, {N, M})}),
              HasSubstr("node 'y' (matmul): matmul: input 0 has rank 1, needs rank >= 2"));
  EXPECT_THAT(infer_error(OpKind::MatMul, {T(DType::f32, {2, 3}), T(DType::f32, {4, 5})}),
              HasSubstr("inner dims differ: 3 vs 4"));
  EXPECT_THAT(infer_error(OpKind::MatMul, {T(DType::i32, {2, 3}), T(DType::i32, {3, 5})}),
              HasSubstr("matmul: needs a float input, got i32"));
  EXPECT_THAT(infer_error(OpKind::MatMul, {T(DType::f32, {2, 3}), T(DType::f16, {3, 5})}),
              HasSubstr("operand dtypes differ: f32 vs f16"));
  EXPECT_THAT(infer_error(OpKind::MatMul, {T(DType::f32, {2, N, 3}), T(DType::f32, {4, 3, 5})}),
              HasSubstr("cannot broadcast dim 0: 2 vs 4"));
}

}  // namespace infer_misc_test_local
}  // namespace autofuse
