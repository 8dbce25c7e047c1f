// Shape computations at import (known values) and the shape/layout
// converters, checked on the reference interpreter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_shape_test_local {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string import_error(const ModelBuilder& m) {
  try {
    m.import();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

const Shape& output_shape(const OnnxModel& model, int i) {
  return model.graph->value(model.graph->outputs()[i]).type.shape;
}

// x[batch, seq, 8] -> reshape to [batch, seq, 2, 4] with the target shape
// computed from Shape(x) the way exporters write it.
ModelBuilder dynamic_reshape_model() {
  ModelBuilder m;
  m.input("x", kF32, {"batch", "seq", 8})
      .node("Shape", {"x"}, {"shape"})
      .initializer(ints("i0", {0}, true))
      .initializer(ints("i1", {1}, true))
      .initializer(ints("axes0", {0}))
      .initializer(ints("tail", {2, 4}))
      .node("Gather", {"shape", "i0"}, {"b"}, {attr("axis", 0)})
      .node("Gather", {"shape", "i1"}, {"s"}, {attr("axis", 0)})
      .node("Unsqueeze", {"b", "axes0"}, {"b1"})
      .node("Unsqueeze", {"s", "axes0"}, {"s1"})
      .node("Concat", {"b1", "s1", "tail"}, {"target"}, {attr("axis", 0)})
      .node("Reshape", {"x", "target"}, {"y"})
      .output("y", kF32, {"batch", "seq", 2, 4});
  return m;
}

TEST(ImportShape, ShapeGatherUnsqueezeConcatReshapeStaysSymbolic) {
  OnnxModel model = dynamic_reshape_model().import();
  const auto N = sym::Expr::symbol("batch"), S = sym::Expr::symbol("seq");
  EXPECT_THAT(output_shape(model, 0), ElementsAre(N, S, sym::Expr(2), sym::Expr(4)));
  // The shape computation folded away: one reshape node, no constants.
  ASSERT_EQ(model.graph->nodes().size(), 1u);
  EXPECT_EQ(model.graph->nodes()[0].op, OpKind::Reshape);
  for (auto [b, s] : {std::pair{1, 1}, {2, 3}, {3, 5}}) {
    auto out = run(model, {iota_host(DType::f32, {b, s, 8})});
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{b, s, 2, 4}));
    EXPECT_EQ(values_of(out[0]), values_of(iota_host(DType::f32, {b, s, 8})));
  }
}

TEST(ImportShape, ReshapeWithMinusOneAndZero) {
  ModelBuilder m;
  m.input("x", kF32, {"N", 6, 2})
      .initializer(ints("shape", {0, -1, 3}))
      .node("Reshape", {"x", "shape"}, {"y"})
      .output("y");
  OnnxModel model = m.import();
  EXPECT_THAT(output_shape(model, 0),
              ElementsAre(sym::Expr::symbol("N"), sym::Expr(4), sym::Expr(3)));
  EXPECT_EQ(run(model, {iota_host(DType::f32, {2, 6, 2})})[0].shape(),
            (std::vector<int64_t>{2, 4, 3}));
}

TEST(ImportShape, ReshapeMinusOneCancelsSymbolicFactors) {
  ModelBuilder m;
  m.input("x", kF32, {"N", "S", 4})
      .node("Shape", {"x"}, {"sh"})
      .initializer(ints("i1", {1}))
      .initializer(ints("minus1", {-1}))
      .node("Gather", {"sh", "i1"}, {"s"})  // [S]
      .node("Concat", {"minus1", "s"}, {"t"}, {attr("axis", 0)})
      .node("Reshape", {"x", "t"}, {"y"})  // [-1, S] = [4*N, S]
      .output("y");
  OnnxModel model = m.import();
  const auto N = sym::Expr::symbol("N"), S = sym::Expr::symbol("S");
  EXPECT_THAT(output_shape(model, 0), ElementsAre(4 * N, S));
}

TEST(ImportShape, ConstantOfShapeAndRangeOverASymbolicSize) {
  // positions = Range(0, seq, 1); ones = ConstantOfShape([batch, seq]).
  ModelBuilder m;
  m.input("x", kI64, {"batch", "seq"})
      .node("Shape", {"x"}, {"sh"})
      .initializer(ints("i1", {1}, true))
      .initializer(ints("zero", {0}, true))
      .initializer(ints("one", {1}, true))
      .node("Gather", {"sh", "i1"}, {"seq"})
      .node("Range", {"zero", "seq", "one"}, {"pos"})
      .node("ConstantOfShape", {"sh"}, {"ones"}, {attr("value", tensor("v", kF32, {1}, {1.5}))})
      .node("Add", {"x", "pos"}, {"y"})
      .output("y")
      .output("ones");
  OnnxModel model = m.import();
  const auto B = sym::Expr::symbol("batch"), S = sym::Expr::symbol("seq");
  EXPECT_THAT(output_shape(model, 1), ElementsAre(B, S));
  for (int64_t s : {1, 4}) {
    auto out = run(model, {iota_host(DType::i64, {2, s})});
    std::vector<double> want;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < s; ++j)
        want.push_back(static_cast<double>(b * s + j + j));
    EXPECT_EQ(values_of(out[0]), want);
    EXPECT_EQ(values_of(out[1]), std::vector<double>(2 * s, 1.5));
  }
}

TEST(ImportShape, RangeWithSymbolicStartAndFloatRange) {
  ModelBuilder m;
  m.input("x", kF32, {"n"})
      .node("Size", {"x"}, {"n"})
      .initializer(ints("lim", {10}, true))
      .initializer(ints("two", {2}, true))
      .node("Range", {"n", "lim", "two"}, {"r"})  // n, n+2, ... < 10
      .initializer(tensor("fs", kF32, {}, {1}))
      .initializer(tensor("fl", kF32, {}, {2}))
      .initializer(tensor("fd", kF32, {}, {0.25}))
      .node("Range", {"fs", "fl", "fd"}, {"f"})
      .output("r")
      .output("f");
  OnnxModel model = m.import();
  auto out = run(model, {iota_host(DType::f32, {3})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(3, 5, 7, 9));
  EXPECT_THAT(values_of(out[1]), ElementsAre(1, 1.25, 1.5, 1.75));
  out = run(model, {iota_host(DType::f32, {12})});
  EXPECT_EQ(out[0].numel(), 0);
}

TEST(ImportShape, ExpandIsBidirectional) {
  ModelBuilder m;
  m.input("x", kF32, {"N", 1})
      .initializer(ints("target", {3, 1, 4}))
      .node("Expand", {"x", "target"}, {"y"})
      .output("y");
  OnnxModel model = m.import();
  const auto N = sym::Expr::symbol("N");
  EXPECT_THAT(output_shape(model, 0), ElementsAre(sym::Expr(3), N, sym::Expr(4)));
  auto out = run(model, {host(DType::f32, {2, 1}, {5, 6})});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(out[0].get_f64(4), 6);
}

// PyTorch exports x.expand(b, -1) as Where(Equal(shape, -1), ones, shape).
TEST(ImportShape, ExpandPatternWithWhereEqualFolds) {
  ModelBuilder m;
  m.input("x", kF32, {1, "S"})
      .input("y", kF32, {"B", 1})
      .node("Shape", {"y"}, {"ys"})
      .initializer(ints("i0", {0}))
      .node("Gather", {"ys", "i0"}, {"b"})
      .initializer(ints("minus1", {-1}))
      .node("Concat", {"b", "minus1"}, {"shape"}, {attr("axis", 0)})
      .node("Shape", {"shape"}, {"rank"})
      .node("ConstantOfShape", {"rank"}, {"ones"}, {attr("value", ints("v", {1}))})
      .initializer(ints("m1", {-1}, true))
      .node("Mul", {"ones", "m1"}, {"neg_ones"})
      .node("Equal", {"shape", "neg_ones"}, {"is_neg"})
      .node("Where", {"is_neg", "ones", "shape"}, {"fixed"})
      .node("Expand", {"x", "fixed"}, {"out"})
      .output("out");
  OnnxModel model = m.import();
  EXPECT_THAT(output_shape(model, 0), ElementsAre(sym::Expr::symbol("B"), sym::Expr::symbol("S")));
  EXPECT_EQ(model.graph->nodes().size(), 1u);  // just the broadcast
  auto out = run(model, {host(DType::f32, {1, 2}, {1, 2}), iota_host(DType::f32, {3, 1})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(1, 2, 1, 2, 1, 2));
}

TEST(ImportShape, TileSqueezeUnsqueezeFlattenTranspose) {
  ModelBuilder m;
  m.input("x", kF32, {2, 3})
      .initializer(ints("reps", {2, 1}))
      .node("Tile", {"x", "reps"}, {"t"})  // [4, 3]
      .initializer(ints("ax", {0, 3}))
      .node("Unsqueeze", {"x", "ax"}, {"u"})  // [1, 2, 3, 1]
      .initializer(ints("sq", {-1}))
      .node("Squeeze", {"u", "sq"}, {"s"})               // [1, 2, 3]
      .node("Squeeze", {"u"}, {"s_all"})                 // [2, 3]
      .node("Flatten", {"u"}, {"f"}, {attr("axis", 2)})  // [2, 3]
      .node("Transpose", {"x"}, {"tr"})                  // [3, 2]
      .output("t")
      .output("s")
      .output("s_all")
      .output("f")
      .output("tr");
  OnnxModel model = m.import();
  auto out = run(model, {iota_host(DType::f32, {2, 3})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5));
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out[3].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(values_of(out[4]), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(ImportShape, TileAlongTheLastAxis) {
  ModelBuilder m;
  m.input("x", kF32, {2, 2})
      .initializer(ints("reps", {1, 3}))
      .node("Tile", {"x", "reps"}, {"t"})
      .output("t");
  auto out = run(m.import(), {iota_host(DType::f32, {2, 2})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3));
}

TEST(ImportShape, SliceConstantBoundsAndNegativeSteps) {
  ModelBuilder m;
  m.input("x", kF32, {3, 5})
      .initializer(ints("st", {1, -1}))
      .initializer(ints("en", {INT64_MAX, INT64_MIN}))
      .initializer(ints("ax", {0, 1}))
      .initializer(ints("sp", {1, -2}))
      .node("Slice", {"x", "st", "en", "ax", "sp"}, {"y"})
      .output("y");
  auto out = run(m.import(), {iota_host(DType::f32, {3, 5})});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(values_of(out[0]), ElementsAre(9, 7, 5, 14, 12, 10));
}

TEST(ImportShape, SliceWithSymbolicEndBecomesAGather) {
  // bias[:, :S] with S from another input's shape (a causal-mask pattern).
  ModelBuilder m;
  m.input("q", kF32, {"S"})
      .initializer(tensor("bias", kF32, {2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}))
      .node("Shape", {"q"}, {"qs"})
      .initializer(ints("zero", {0}))
      .initializer(ints("one", {1}))
      .node("Slice", {"bias", "zero", "qs", "one"}, {"y"})
      .output("y");
  OnnxModel model = m.import();
  for (int64_t s : {1, 4, 9}) {
    auto out = run(model, {iota_host(DType::f32, {s})});
    const int64_t len = std::min<int64_t>(s, 6);
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, len}));
    EXPECT_EQ(out[0].get_f64(len), 6);  // row 1 starts at 6
  }
}

TEST(ImportShape, SliceOfAKnownShapeFolds) {
  ModelBuilder m;
  m.input("x", kF32, {"A", "B", "C"})
      .node("Shape", {"x"}, {"sh"})
      .initializer(ints("st", {-2}))
      .initializer(ints("en", {INT64_MAX}))
      .node("Slice", {"sh", "st", "en"}, {"bc"})
      .node("ReduceProd", {"bc"}, {"prod"}, {attr("keepdims", 1)})
      .initializer(ints("a", {-1}))
      .node("Concat", {"a", "prod"}, {"t"}, {attr("axis", 0)})
      .node("Reshape", {"x", "t"}, {"y"})
      .output("y");
  OnnxModel model = m.import();
  const auto A = sym::Expr::symbol("A"), B = sym::Expr::symbol("B"), C = sym::Expr::symbol("C");
  EXPECT_THAT(output_shape(model, 0), ElementsAre(A, B * C));
}

TEST(ImportShape, SplitVariantsAndConcat) {
  ModelBuilder m(18);
  m.input("x", kF32, {2, 5})
      .initializer(ints("sizes", {2, 3}))
      .node("Split", {"x", "sizes"}, {"a", "b"}, {attr("axis", 1)})
      .node("Split", {"x"}, {"c", "d", "e"}, {attr("axis", 1), attr("num_outputs", 3)})
      .node("Concat", {"b", "a"}, {"ba"}, {attr("axis", -1)})
      .output("ba")
      .output("e");
  auto out = run(m.import(), {iota_host(DType::f32, {2, 5})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(2, 3, 4, 0, 1, 7, 8, 9, 5, 6));
  EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{2, 1}));  // ceil(5/3)=2, 2, then 1
  EXPECT_THAT(values_of(out[1]), ElementsAre(4, 9));

  ModelBuilder equal(13);
  equal.input("x", kF32, {"N", 4}).node("Split", {"x"}, {"a", "b"}, {attr("axis", 1)}).output("b");
  EXPECT_THAT(values_of(run(equal.import(), {iota_host(DType::f32, {1, 4})})[0]),
              ElementsAre(2, 3));
}

TEST(ImportShape, GatherOnData) {
  ModelBuilder m;
  m.input("ids", kI64, {"S"})
      .initializer(tensor("table", kF32, {3, 2}, {0, 1, 10, 11, 20, 21}))
      .node("Gather", {"table", "ids"}, {"emb"})
      .output("emb");
  auto out = run(m.import(), {host(DType::i64, {3}, {2, 0, -1})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(20, 21, 0, 1, 20, 21));
}

TEST(ImportShape, PadConstantWithNegativePads) {
  ModelBuilder m;
  m.input("x", kF32, {2, 3})
      .initializer(ints("pads", {1, -1, 0, 1}))  // rows: +1 before; cols: -1 before, +1 after
      .initializer(tensor("v", kF32, {}, {9}))
      .node("Pad", {"x", "pads", "v"}, {"y"})
      .output("y");
  auto out = run(m.import(), {iota_host(DType::f32, {2, 3})});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 3}));
  EXPECT_THAT(values_of(out[0]), ElementsAre(9, 9, 9, 1, 2, 9, 4, 5, 9));
}

TEST(ImportShape, PadWithAxes) {
  ModelBuilder m(18);
  m.input("x", kF32, {2, 2})
      .initializer(ints("pads", {1, 2}))
      .initializer(ints("axes", {-1}))
      .node("Pad", {"x", "pads", "", "axes"}, {"y"})
      .output("y");
  auto out = run(m.import(), {iota_host(DType::f32, {2, 2})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(0, 0, 1, 0, 0, 0, 2, 3, 0, 0));
}

TEST(ImportShape, UnknownShapeArgumentsAreClearErrors) {
  ModelBuilder m;
  m.input("x", kF32, {4})
      .input("shape", kI64, {1})
      .node("Reshape", {"x", "shape"}, {"y"}, {}, "rs")
      .output("y");
  EXPECT_THAT(import_error(m), HasSubstr("node 'rs' (Reshape): the shape (input 1, 'shape') must "
                                         "be known at import"));
}

TEST(ImportShape, SymbolicSizeUsedAsData) {
  // Size(x) cast to float and added to x: the size becomes a tensor.
  ModelBuilder m;
  m.input("x", kF32, {"N"})
      .node("Size", {"x"}, {"n"})
      .node("Cast", {"n"}, {"nf"}, {attr("to", kF32)})
      .node("Add", {"x", "nf"}, {"y"})
      .output("y");
  OnnxModel model = m.import();
  EXPECT_THAT(values_of(run(model, {iota_host(DType::f32, {3})})[0]), ElementsAre(3, 4, 5));
  EXPECT_THAT(values_of(run(model, {iota_host(DType::f32, {1})})[0]), ElementsAre(1));
}

}  // namespace import_shape_test_local
}  // namespace autofuse::frontend::testing
