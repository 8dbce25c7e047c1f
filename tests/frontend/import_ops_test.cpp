// Elementwise and reduce converters, checked on the reference interpreter
// against hand-computed values.
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_ops_test_local {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

/// One node `op` over inputs of the given types; returns its output 0.
HostTensor run_op(const std::string& op, const std::vector<HostTensor>& inputs,
                  const std::vector<onnx::AttributeProto>& attrs = {}, int64_t opset = 17) {
  ModelBuilder m(opset);
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.push_back("in" + std::to_string(i));
    std::vector<Dim> dims(inputs[i].shape().begin(), inputs[i].shape().end());
    m.input(names.back(), onnx_type(inputs[i].dtype()), dims);
  }
  m.node(op, names, {"out"}, attrs).output("out");
  return run(m.import(), inputs)[0];
}

TEST(ImportOps, UnaryMath) {
  const HostTensor x = host(DType::f32, {4}, {-1.5, -0.5, 0.5, 2.5});
  EXPECT_THAT(values_of(run_op("Neg", {x})), ElementsAre(1.5, 0.5, -0.5, -2.5));
  EXPECT_THAT(values_of(run_op("Abs", {x})), ElementsAre(1.5, 0.5, 0.5, 2.5));
  EXPECT_THAT(values_of(run_op("Relu", {x})), ElementsAre(0, 0, 0.5, 2.5));
  EXPECT_THAT(values_of(run_op("Floor", {x})), ElementsAre(-2, -1, 0, 2));
  EXPECT_THAT(values_of(run_op("Ceil", {x})), ElementsAre(-1, -0, 1, 3));
  EXPECT_THAT(values_of(run_op("Round", {x})), ElementsAre(-2, -0, 0, 2));  // half to even
  EXPECT_THAT(values_of(run_op("Sign", {x})), ElementsAre(-1, -1, 1, 1));
  EXPECT_THAT(values_of(run_op("Reciprocal", {x})),
              Pointwise(DoubleNear(1e-6), std::vector<double>{-1 / 1.5, -2, 2, 0.4}));
  const HostTensor p = host(DType::f32, {2}, {1, 4});
  EXPECT_THAT(values_of(run_op("Sqrt", {p})), ElementsAre(1, 2));
  EXPECT_THAT(values_of(run_op("Log", {p})),
              Pointwise(DoubleNear(1e-6), std::vector<double>{0, std::log(4.0)}));
  EXPECT_THAT(values_of(run_op("Exp", {p})),
              Pointwise(DoubleNear(1e-4), std::vector<double>{std::exp(1.0), std::exp(4.0)}));
  EXPECT_THAT(values_of(run_op("Sigmoid", {host(DType::f32, {1}, {0})})), ElementsAre(0.5));
  EXPECT_THAT(values_of(run_op("Tanh", {host(DType::f32, {1}, {0})})), ElementsAre(0));
  EXPECT_THAT(values_of(run_op("Erf", {host(DType::f32, {1}, {0})})), ElementsAre(0));
  EXPECT_THAT(values_of(run_op("Sin", {host(DType::f32, {1}, {0})})), ElementsAre(0));
  EXPECT_THAT(values_of(run_op("Cos", {host(DType::f32, {1}, {0})})), ElementsAre(1));
}

TEST(ImportOps, BinaryArithmeticAndIntegerDivTruncates) {
  const HostTensor a = host(DType::f32, {3}, {6, -3, 2});
  const HostTensor b = host(DType::f32, {3}, {4, 2, 8});
  EXPECT_THAT(values_of(run_op("Add", {a, b})), ElementsAre(10, -1, 10));
  EXPECT_THAT(values_of(run_op("Sub", {a, b})), ElementsAre(2, -5, -6));
  EXPECT_THAT(values_of(run_op("Mul", {a, b})), ElementsAre(24, -6, 16));
  EXPECT_THAT(values_of(run_op("Div", {a, b})), ElementsAre(1.5, -1.5, 0.25));
  EXPECT_THAT(
      values_of(run_op("Pow", {host(DType::f32, {2}, {2, 3}), host(DType::f32, {2}, {3, 2})})),
      ElementsAre(8, 9));
  const HostTensor ia = host(DType::i32, {2}, {-7, 7});
  const HostTensor ib = host(DType::i32, {2}, {2, 2});
  EXPECT_THAT(values_of(run_op("Div", {ia, ib})), ElementsAre(-3, 3));
}

TEST(ImportOps, PowWithMixedTypes) {
  // int base, float exponent: computed in float, result in the base type.
  const HostTensor out =
      run_op("Pow", {host(DType::i32, {3}, {1, 2, 3}), host(DType::f32, {3}, {4, 5, 6})});
  EXPECT_EQ(out.dtype(), DType::i32);
  EXPECT_THAT(values_of(out), ElementsAre(1, 32, 729));
  const HostTensor f =
      run_op("Pow", {host(DType::f32, {2}, {2, 3}), host(DType::i64, {2}, {2, 3})});
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_THAT(values_of(f), ElementsAre(4, 27));
}

TEST(ImportOps, ModFloorAndFmod) {
  const HostTensor a = host(DType::i32, {4}, {-4, 7, 5, -5});
  const HostTensor b = host(DType::i32, {4}, {3, -3, 3, -3});
  EXPECT_THAT(values_of(run_op("Mod", {a, b})), ElementsAre(2, -2, 2, -2));
  EXPECT_THAT(values_of(run_op("Mod", {a, b}, {attr("fmod", 1)})), ElementsAre(-1, 1, 2, -2));
  const HostTensor fa = host(DType::f32, {3}, {-4.5, 7, 5.5});
  const HostTensor fb = host(DType::f32, {3}, {2, -3, 2});
  EXPECT_THAT(values_of(run_op("Mod", {fa, fb}, {attr("fmod", 1)})),
              Pointwise(DoubleNear(1e-6), std::vector<double>{-0.5, 1, 1.5}));
}

TEST(ImportOps, ComparisonLogicAndWhere) {
  const HostTensor a = host(DType::f32, {3}, {1, 2, 3});
  const HostTensor b = host(DType::f32, {3}, {2, 2, 2});
  EXPECT_THAT(values_of(run_op("Equal", {a, b})), ElementsAre(0, 1, 0));
  EXPECT_THAT(values_of(run_op("Less", {a, b})), ElementsAre(1, 0, 0));
  EXPECT_THAT(values_of(run_op("LessOrEqual", {a, b})), ElementsAre(1, 1, 0));
  EXPECT_THAT(values_of(run_op("Greater", {a, b})), ElementsAre(0, 0, 1));
  EXPECT_THAT(values_of(run_op("GreaterOrEqual", {a, b})), ElementsAre(0, 1, 1));
  const HostTensor t = host(DType::boolean, {4}, {0, 0, 1, 1});
  const HostTensor u = host(DType::boolean, {4}, {0, 1, 0, 1});
  EXPECT_THAT(values_of(run_op("And", {t, u})), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(values_of(run_op("Or", {t, u})), ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(values_of(run_op("Xor", {t, u})), ElementsAre(0, 1, 1, 0));
  EXPECT_THAT(values_of(run_op("Not", {t})), ElementsAre(1, 1, 0, 0));
  EXPECT_THAT(values_of(run_op("Where", {host(DType::boolean, {3}, {1, 0, 1}), a, b})),
              ElementsAre(1, 2, 3));
}

TEST(ImportOps, BitwiseOpsOnIntegersLogicalOpsOnBoolOnly) {
  // 0x0F0F = 3855 with 0x00FF = 255 (broadcast over the rows).
  const HostTensor a = host(DType::i16, {2, 2}, {3855, -1, INT16_MIN, 0});
  const HostTensor b = host(DType::i16, {2}, {255, 21845});
  EXPECT_THAT(values_of(run_op("BitwiseAnd", {a, b}, {}, 18)), ElementsAre(15, 21845, 0, 0));
  EXPECT_THAT(values_of(run_op("BitwiseOr", {a, b}, {}, 18)),
              ElementsAre(4095, -1, INT16_MIN + 255, 21845));
  EXPECT_THAT(values_of(run_op("BitwiseXor", {a, b}, {}, 18)),
              ElementsAre(4080, -21846, INT16_MIN + 255, 21845));
  EXPECT_THAT(values_of(run_op("BitwiseNot", {host(DType::u8, {3}, {0, 255, 170})}, {}, 18)),
              ElementsAre(255, 0, 85));
  const auto expect_error = [](const std::string& op, const std::vector<HostTensor>& in,
                               const std::string& text) {
    try {
      run_op(op, in, {}, 18);
      ADD_FAILURE() << op << ": expected a UserError";
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(text)) << op;
      EXPECT_THAT(e.what(), HasSubstr(op)) << op;
    }
  };
  expect_error("And", {a, a}, "input 0 has dtype i16; it must be bool");
  expect_error("Not", {a}, "input 0 has dtype i16; it must be bool");
  expect_error("BitwiseOr", {host(DType::f32, {1}, {1}), host(DType::f32, {1}, {1})},
               "input 0 has dtype f32; bitwise ops take integer tensors");
  expect_error("BitwiseAnd", {a, host(DType::u16, {2}, {1, 2})}, "operand dtypes differ");
}

TEST(ImportOps, IsNanIsInfWithDetectAttributes) {
  const double inf = std::numeric_limits<double>::infinity();
  const HostTensor x = host(DType::f32, {4}, {-inf, 1, inf, std::nan("")});
  EXPECT_THAT(values_of(run_op("IsNaN", {x})), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(values_of(run_op("IsInf", {x})), ElementsAre(1, 0, 1, 0));
  EXPECT_THAT(values_of(run_op("IsInf", {x}, {attr("detect_negative", 0)})),
              ElementsAre(0, 0, 1, 0));
  EXPECT_THAT(values_of(run_op("IsInf", {x}, {attr("detect_positive", 0)})),
              ElementsAre(1, 0, 0, 0));
  EXPECT_THAT(
      values_of(run_op("IsInf", {x}, {attr("detect_positive", 0), attr("detect_negative", 0)})),
      ElementsAre(0, 0, 0, 0));
}

TEST(ImportOps, VariadicMaxMinSumMean) {
  const HostTensor a = host(DType::f32, {3}, {1, 5, 3});
  const HostTensor b = host(DType::f32, {3}, {4, 2, 6});
  const HostTensor c = host(DType::f32, {1}, {3});
  EXPECT_THAT(values_of(run_op("Max", {a, b, c})), ElementsAre(4, 5, 6));
  EXPECT_THAT(values_of(run_op("Min", {a, b, c})), ElementsAre(1, 2, 3));
  EXPECT_THAT(values_of(run_op("Sum", {a, b, c})), ElementsAre(8, 10, 12));
  EXPECT_THAT(values_of(run_op("Mean", {a, b, c})),
              Pointwise(DoubleNear(1e-6), std::vector<double>{8 / 3.0, 10 / 3.0, 4}));
  EXPECT_THAT(values_of(run_op("Sum", {a})), ElementsAre(1, 5, 3));
}

TEST(ImportOps, CastAndCastLike) {
  const HostTensor x = host(DType::f32, {3}, {-1.7, 0, 2.9});
  const HostTensor i = run_op("Cast", {x}, {attr("to", kI32)});
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_THAT(values_of(i), ElementsAre(-1, 0, 2));
  const HostTensor b = run_op("CastLike", {x, host(DType::boolean, {1}, {0})});
  EXPECT_EQ(b.dtype(), DType::boolean);
  EXPECT_THAT(values_of(b), ElementsAre(1, 0, 1));
  EXPECT_THAT(values_of(run_op("Cast", {x}, {attr("to", kF32)})),
              ElementsAre(static_cast<float>(-1.7), 0, static_cast<float>(2.9)));
}

TEST(ImportOps, KnownIntegerArithmeticFolds) {
  // (Size(x) + 2) * 3 / 2 - 1, then Max with 4: all at import.
  ModelBuilder m;
  m.input("x", kF32, {"N"})
      .node("Size", {"x"}, {"n"})
      .initializer(ints("two", {2}, true))
      .initializer(ints("three", {3}, true))
      .initializer(ints("one", {1}, true))
      .initializer(ints("four", {4}, true))
      .node("Add", {"n", "two"}, {"a"})
      .node("Mul", {"a", "three"}, {"b"})
      .node("Div", {"b", "two"}, {"c"})
      .node("Sub", {"c", "one"}, {"d"})
      .node("Max", {"d", "four"}, {"e"})
      .initializer(ints("axes", {0}))
      .node("Unsqueeze", {"e", "axes"}, {"shape"})
      .node("ConstantOfShape", {"shape"}, {"y"}, {attr("value", tensor("v", kF32, {1}, {2}))})
      .output("y");
  OnnxModel model = m.import();
  const sym::Expr N = sym::Expr::symbol("N");
  const Shape& shape = model.graph->value(model.graph->outputs()[0]).type.shape;
  ASSERT_EQ(shape.size(), 1u);
  for (int64_t n : {1, 2, 5}) {
    const int64_t want = std::max<int64_t>((n + 2) * 3 / 2 - 1, 4);
    EXPECT_EQ(sym::evaluate(shape[0], {{"N", n}}), want) << n;
    EXPECT_EQ(run(model, {iota_host(DType::f32, {n})})[0].numel(), want);
  }
}

TEST(ImportOps, ReduceWithAxesAttributeAndInput) {
  const HostTensor x = iota_host(DType::f32, {2, 3});
  // Opset 17: ReduceSum reads input axes, ReduceMean the attribute.
  ModelBuilder m(17);
  m.input("x", kF32, {2, 3})
      .initializer(ints("axes", {-1}))
      .node("ReduceSum", {"x", "axes"}, {"sum"}, {attr("keepdims", 0)})
      .node("ReduceMean", {"x"}, {"mean"}, {attr("axes", std::vector<int64_t>{0})})
      .node("ReduceMax", {"x"}, {"max"}, {attr("keepdims", 0)})
      .node("ReduceMin", {"x"}, {"min"}, {attr("axes", std::vector<int64_t>{1})})
      .node("ReduceProd", {"x"}, {"prod"},
            {attr("axes", std::vector<int64_t>{0}), attr("keepdims", 0)})
      .output("sum")
      .output("mean")
      .output("max")
      .output("min")
      .output("prod");
  auto out = run(m.import(), {x});
  EXPECT_THAT(values_of(out[0]), ElementsAre(3, 12));
  EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_THAT(values_of(out[1]), ElementsAre(1.5, 2.5, 3.5));
  EXPECT_EQ(out[2].rank(), 0);
  EXPECT_THAT(values_of(out[2]), ElementsAre(5));
  EXPECT_EQ(out[3].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_THAT(values_of(out[3]), ElementsAre(0, 3));
  EXPECT_THAT(values_of(out[4]), ElementsAre(0, 4, 10));
}

TEST(ImportOps, ReduceOpset18AxesInputAndNoop) {
  ModelBuilder m(18);
  m.input("x", kF32, {2, 2})
      .initializer(ints("axes", {0}))
      .initializer(ints("none", {}))
      .node("ReduceMax", {"x", "axes"}, {"max"})
      .node("ReduceMean", {"x", "none"}, {"same"}, {attr("noop_with_empty_axes", 1)})
      .node("ReduceMean", {"x", "none"}, {"all"})
      .output("max")
      .output("same")
      .output("all");
  auto out = run(m.import(), {iota_host(DType::f32, {2, 2})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(2, 3));
  EXPECT_THAT(values_of(out[1]), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_THAT(values_of(out[2]), ElementsAre(1.5));
}

TEST(ImportOps, ReduceMaxMinOfBool) {
  const HostTensor x = host(DType::boolean, {2, 2}, {1, 0, 1, 1});
  const std::vector<onnx::AttributeProto> keep = {attr("keepdims", 0)};
  ModelBuilder m(20);
  m.input("x", kBool, {2, 2})
      .initializer(ints("axes", {1}))
      .node("ReduceMax", {"x", "axes"}, {"any"}, keep)
      .node("ReduceMin", {"x", "axes"}, {"all"}, keep)
      .output("any")
      .output("all");
  auto out = run(m.import(), {x});
  EXPECT_EQ(out[0].dtype(), DType::boolean);
  EXPECT_THAT(values_of(out[0]), ElementsAre(1, 1));
  EXPECT_THAT(values_of(out[1]), ElementsAre(0, 1));
}

TEST(ImportOps, ReduceWithUnknownAxesIsAClearError) {
  ModelBuilder m(18);
  m.input("x", kF32, {2, 2})
      .input("axes", kI64, {1})
      .node("ReduceMax", {"x", "axes"}, {"max"}, {}, "rmax")
      .output("max");
  try {
    m.import();
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("node 'rmax' (ReduceMax): the axes (input 1, 'axes') must be "
                                    "known at import"));
  }
}

}  // namespace import_ops_test_local
}  // namespace autofuse::frontend::testing
