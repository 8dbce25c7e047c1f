// Pad's edge, reflect and wrap modes: imported as slices and concats (or a
// gather for pads longer than one period), run on the reference
// interpreter, compared with numpy.pad's results; and their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_pad_modes_test_local {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

/// Pad of an f32 input `x` (dims as given) with constant `pads` in `mode`.
ModelBuilder pad_model(const std::vector<Dim>& dims, const std::vector<int64_t>& pads,
                       const char* mode, int64_t opset = 21) {
  ModelBuilder m(opset);
  m.input("x", kF32, dims)
      .initializer(ints("pads", pads))
      .node("Pad", {"x", "pads"}, {"y"}, {attr("mode", mode)}, "pad")
      .output("y");
  return m;
}

std::vector<double> padded(const std::vector<Dim>& dims, const std::vector<int64_t>& pads,
                           const char* mode, const HostTensor& x) {
  return values_of(run(pad_model(dims, pads, mode).import(), {x})[0]);
}

/// The UserError of importing `m` ("" when it imports); `unsupported` says
/// whether it was an UnsupportedError.
std::string import_error(const ModelBuilder& m, bool* unsupported = nullptr) {
  try {
    m.import();
  } catch (const UnsupportedError& e) {
    if (unsupported) *unsupported = true;
    return e.what();
  } catch (const UserError& e) {
    if (unsupported) *unsupported = false;
    return e.what();
  }
  return "";
}

TEST(ImportPadModes, OneAxisWithinOnePeriodMatchesNumpy) {
  const HostTensor x = iota_host(DType::f32, {4});
  EXPECT_THAT(padded({4}, {2, 3}, "edge", x), ElementsAre(0, 0, 0, 1, 2, 3, 3, 3, 3));
  EXPECT_THAT(padded({4}, {2, 3}, "reflect", x), ElementsAre(2, 1, 0, 1, 2, 3, 2, 1, 0));
  EXPECT_THAT(padded({4}, {2, 3}, "wrap", x), ElementsAre(2, 3, 0, 1, 2, 3, 0, 1, 2));
  EXPECT_THAT(padded({4}, {0, 0}, "reflect", x), ElementsAre(0, 1, 2, 3));
}

TEST(ImportPadModes, PadsLongerThanTheAxisRepeatAsNumpyDoes) {
  const HostTensor x = iota_host(DType::f32, {4});
  EXPECT_THAT(padded({4}, {5, 6}, "reflect", x),
              ElementsAre(1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2, 3));
  EXPECT_THAT(padded({4}, {6, 9}, "wrap", x),
              ElementsAre(2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0));
  EXPECT_THAT(padded({1}, {2, 1}, "reflect", host(DType::f32, {1}, {7})), ElementsAre(7, 7, 7, 7));
  EXPECT_THAT(padded({1}, {2, 1}, "wrap", host(DType::f32, {1}, {7})), ElementsAre(7, 7, 7, 7));
}

TEST(ImportPadModes, SeveralAxesPadCornersFromPaddedValues) {
  const HostTensor x = iota_host(DType::f32, {2, 3});
  // Rows: 2 after a 2-row axis is longer than one reflection.
  EXPECT_THAT(padded({2, 3}, {1, 2, 2, 1}, "reflect", x),
              ElementsAreArray({5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3,
                                4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}));
  EXPECT_THAT(padded({2, 3}, {1, 0, 0, 4}, "wrap", x),
              ElementsAreArray({3, 4, 5, 3, 4, 5, 3, 0, 1, 2, 0, 1, 2, 0, 3, 4, 5, 3, 4, 5, 3}));
  EXPECT_THAT(padded({2, 2}, {1, 1, 1, 1}, "reflect", iota_host(DType::f32, {2, 2})),
              ElementsAreArray({3, 2, 3, 2, 1, 0, 1, 0, 3, 2, 3, 2, 1, 0, 1, 0}));
}

TEST(ImportPadModes, AxesInputIntegersAndNegativePadsCropFirst) {
  ModelBuilder m(18);
  m.input("x", kI32, {2, 4})
      .initializer(ints("pads", {-1, 2}))
      .initializer(ints("axes", {-1}))
      .node("Pad", {"x", "pads", "", "axes"}, {"y"}, {attr("mode", "edge")})
      .output("y");
  auto out = run(m.import(), {iota_host(DType::i32, {2, 4})});
  ASSERT_EQ(out[0].dtype(), DType::i32);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 5}));
  EXPECT_THAT(values_of(out[0]), ElementsAre(1, 2, 3, 3, 3, 5, 6, 7, 7, 7));
}

TEST(ImportPadModes, SymbolicDimsWhenThePadFitsProvably) {
  const HostTensor x3 = iota_host(DType::f32, {3, 2});
  // Edge needs one element (every symbol is >= 1); wrap by 1 needs N >= 1.
  OnnxModel edge = pad_model({"N", 2}, {1, 0, 2, 0}, "edge").import();
  auto out = run(edge, {x3});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{6, 2}));
  EXPECT_THAT(values_of(out[0]), ElementsAre(0, 1, 0, 1, 2, 3, 4, 5, 4, 5, 4, 5));
  OnnxModel wrap = pad_model({"N"}, {1, 1}, "wrap").import();
  EXPECT_THAT(values_of(run(wrap, {iota_host(DType::f32, {3})})[0]), ElementsAre(2, 0, 1, 2, 0));
  // Reflect by 1 needs N >= 2, which a symbol does not promise.
  bool unsupported = true;
  EXPECT_THAT(import_error(pad_model({"N"}, {1, 0}, "reflect"), &unsupported),
              HasSubstr("needs its size N to be at least 2; autofuse cannot prove that"));
  EXPECT_FALSE(unsupported);
}

TEST(ImportPadModes, Errors) {
  bool unsupported = true;
  EXPECT_THAT(import_error(pad_model({0, 2}, {1, 0, 0, 0}, "edge"), &unsupported),
              HasSubstr("node 'pad' (Pad): axis 0 has size 0: mode 'edge' cannot pad an axis "
                        "that is empty"));
  EXPECT_FALSE(unsupported);
  EXPECT_THAT(import_error(pad_model({2}, {1, 0}, "wrap", 18), &unsupported),
              HasSubstr("mode 'wrap' exists from opset 19 on"));
  EXPECT_FALSE(unsupported);
  EXPECT_THAT(import_error(pad_model({2}, {1, 0}, "mirror"), &unsupported),
              HasSubstr("mode 'mirror' is not one of"));
  EXPECT_FALSE(unsupported);
  // Pads computed from a symbolic size are fine for constant mode only.
  ModelBuilder m(21);
  m.input("x", kF32, {"N"})
      .node("Shape", {"x"}, {"n"})
      .node("Concat", {"n", "n"}, {"pads"}, {attr("axis", 0)})
      .node("Pad", {"x", "pads"}, {"y"}, {attr("mode", "reflect")})
      .output("y");
  EXPECT_THAT(import_error(m, &unsupported),
              HasSubstr("the pads (input 1, 'pads') must be constants in mode 'reflect'"));
  EXPECT_FALSE(unsupported);
}

}  // namespace import_pad_modes_test_local
}  // namespace autofuse::frontend::testing
