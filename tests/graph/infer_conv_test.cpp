// Inference of conv: output dims (static and symbolic), attribute defaults,
// guards for what only run time can tell, and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace infer_conv_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace graph_test;  // NOLINT

const sym::Expr H = S("H"), W = S("W");

ConvAttrs attrs(std::vector<int64_t> strides, std::vector<int64_t> dilations,
                std::vector<int64_t> pads, int64_t group = 1) {
  return ConvAttrs{std::move(strides), std::move(dilations), std::move(pads), group};
}

TEST(InferConvTest, StaticShapes) {
  struct Case {
    Shape x, w;
    ConvAttrs attrs;
    std::string want;
  };
  const Case cases[] = {
      {{1, 1, 5, 5}, {1, 1, 3, 3}, {}, "f32[1, 1, 3, 3]"},
      {{2, 3, 7, 13}, {5, 3, 3, 3}, attrs({}, {}, {1, 1, 1, 1}), "f32[2, 5, 7, 13]"},
      // (11 + 0 + 2 - 3) / 2 + 1 = 6; (9 + 1 + 0 - 2) / 3 + 1 = 3
      {{1, 4, 11, 9}, {6, 2, 3, 2}, attrs({2, 3}, {}, {0, 1, 2, 0}, 2), "f32[1, 6, 6, 3]"},
      // dilation 2: the 3-tap kernel spans 5
      {{3, 6, 10, 10}, {6, 1, 3, 3}, attrs({}, {2, 2}, {}, 6), "f32[3, 6, 6, 6]"},
      {{1, 2, 31}, {3, 2, 4}, attrs({3}, {2}, {1, 3}), "f32[1, 3, 10]"},
      {{1, 2, 5, 6, 7},
       {4, 1, 2, 3, 2},
       attrs({1, 2, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 1}, 2),
       "f32[1, 4, 5, 3, 7]"},
  };
  for (const Case& c : cases) {
    OneNode n(OpKind::Conv, {T(DType::f32, c.x), T(DType::f32, c.w)}, c.attrs);
    EXPECT_EQ(n.type(), c.want);
    EXPECT_THAT(n.guards(), IsEmpty());
  }
}

TEST(InferConvTest, DefaultsAreNormalizedPerSpatialAxis) {
  OneNode n(OpKind::Conv, {T(DType::bf16, {N, 4, H, W}), T(DType::bf16, {8, 4, 1, 1})},
            ConvAttrs{});
  const auto& a = std::get<ConvAttrs>(n.attrs());
  EXPECT_THAT(a.strides, ElementsAre(1, 1));
  EXPECT_THAT(a.dilations, ElementsAre(1, 1));
  EXPECT_THAT(a.pads, ElementsAre(0, 0, 0, 0));
  EXPECT_EQ(a.group, 1);
  EXPECT_EQ(n.type(), "bf16[N, 8, H, W]");
}

TEST(InferConvTest, SymbolicSpatialDimsFloorDivideAndGuardTheKernel) {
  OneNode n(OpKind::Conv,
            {T(DType::f32, {N, 3, H, W}), T(DType::f32, {16, 3, 3, 3}), T(DType::f32, {16})},
            attrs({2, 1}, {1, 2}, {1, 0, 1, 0}));
  EXPECT_EQ(n.type(), "f32[N, 16, floordiv(H - 1, 2) + 1, W - 4]");
  EXPECT_THAT(
      n.guards(),
      ElementsAre(HasSubstr("conv spatial axis 1 at least the dilated kernel in node 'y'")));
}

TEST(InferConvTest, UnprovenChannelsAreAsserted) {
  OneNode n(OpKind::Conv, {T(DType::f32, {N, D, 8, 8}), T(DType::f32, {M, K, 3, 3})},
            attrs({}, {}, {}, 2));
  EXPECT_EQ(n.type(), "f32[N, M, 6, 6]");
  EXPECT_THAT(n.guards(), ElementsAre(HasSubstr("conv input channels = weight dim 1 x group"),
                                      HasSubstr("conv output channels divisible by group")));
}

TEST(InferConvTest, Errors) {
  const TensorType x = T(DType::f32, {1, 4, 8, 8});
  const TensorType w = T(DType::f32, {6, 4, 3, 3});
  EXPECT_THAT(infer_error(OpKind::Conv, {T(DType::f32, {1, 4}), w}, ConvAttrs{}),
              HasSubstr("input has rank 2; conv takes [N, C, D1..Dk] with 1 to 3 spatial axes"));
  EXPECT_THAT(infer_error(OpKind::Conv, {x, T(DType::f32, {6, 4, 3})}, ConvAttrs{}),
              HasSubstr("weight has rank 3"));
  EXPECT_THAT(infer_error(OpKind::Conv, {x, T(DType::f32, {6, 3, 3, 3})}, ConvAttrs{}),
              HasSubstr("input has 4 channels, weight 3 x group 1 = 3"));
  EXPECT_THAT(infer_error(OpKind::Conv, {x, T(DType::f32, {6, 1, 3, 3})}, attrs({}, {}, {}, 4)),
              HasSubstr("6 output channels do not divide into 4 groups"));
  EXPECT_THAT(infer_error(OpKind::Conv, {x, w, T(DType::f32, {5})}, ConvAttrs{}),
              HasSubstr("bias has 5 entries for 6 output channels"));
  EXPECT_THAT(infer_error(OpKind::Conv, {x, w}, attrs({1}, {}, {})),
              HasSubstr("strides has 1 entries, expected 2"));
  EXPECT_THAT(infer_error(OpKind::Conv, {x, w}, attrs({0, 1}, {}, {})),
              HasSubstr("strides[0] is 0, must be >= 1"));
  EXPECT_THAT(infer_error(OpKind::Conv, {x, w}, attrs({}, {}, {0, -1, 0, 0})),
              HasSubstr("pads[1] is -1, must be >= 0"));
  EXPECT_THAT(
      infer_error(OpKind::Conv, {x, w}, attrs({}, {4, 1}, {})),
      HasSubstr("spatial axis 0: the padded input (8) is smaller than the dilated kernel (9)"));
  EXPECT_THAT(infer_error(OpKind::Conv, {T(DType::i32, {1, 4, 8, 8}), T(DType::i32, {6, 4, 3, 3})},
                          ConvAttrs{}),
              HasSubstr("needs a float input, got i32"));
  EXPECT_THAT(infer_error(OpKind::Conv, {x, T(DType::f16, {6, 4, 3, 3})}, ConvAttrs{}),
              HasSubstr("operand dtypes differ: f32 vs f16"));
  EXPECT_THAT(infer_error(OpKind::Conv,
                          {T(DType::f8e4m3fn, {1, 4, 8, 8}), T(DType::f8e4m3fn, {6, 4, 3, 3})},
                          ConvAttrs{}),
              HasSubstr("f8e4m3fn is not supported"));
}

}  // namespace infer_conv_test_local
}  // namespace autofuse
