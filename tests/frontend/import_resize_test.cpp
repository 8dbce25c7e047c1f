// Resize (convert_resize.cpp). The ONNX node tests (autofuse conformance)
// check the static-size taps against the reference implementation for
// every mode and transform; here: hand-worked upsamplings, and the
// symbolic-size path (integer upscale factors, taps from a k-row table)
// compiled on several shapes against the same resize imported with those
// shapes fixed (the static path); errors for what is not implemented.
#include <memory>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/runtime/executable.h"
#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_resize_test_local {

using ::testing::HasSubstr;

struct ResizeCase {
  const char* mode;
  const char* transform;
  const char* nearest_mode = "round_prefer_floor";
};

/// Resize of x [N, C, H, W] by scales [1, 1, k, k], X's dims as given.
OnnxModel resize_model(const std::vector<Dim>& dims, int64_t k, const ResizeCase& c,
                       DType dt = DType::f32) {
  ModelBuilder m(19);
  m.input("x", onnx_type(dt), dims)
      .initializer(
          tensor("scales", kF32, {4}, {1, 1, static_cast<double>(k), static_cast<double>(k)}))
      .node("Resize", {"x", "", "scales"}, {"y"},
            {attr("mode", c.mode), attr("coordinate_transformation_mode", c.transform),
             attr("nearest_mode", c.nearest_mode)})
      .output("y");
  return m.import();
}

TEST(ImportResize, HandWorkedUpsamplings) {
  const HostTensor x = host(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4});
  // Nearest, asymmetric, 2x: every input repeated in a 2x2 block.
  expect_close(run(resize_model({1, 1, 2, 2}, 2, {"nearest", "asymmetric"}), {x})[0], {1, 1, 4, 4},
               {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 0, 0, "nearest");
  // Linear, half_pixel, 2x: rows at source -0.25, 0.25, 0.75, 1.25 (edges
  // clamp): the first row is 1, 1.25, 1.75, 2.
  const HostTensor y = run(resize_model({1, 1, 2, 2}, 2, {"linear", "half_pixel"}), {x})[0];
  expect_close(y, {1, 1, 4, 4},
               {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4},
               1e-6, 1e-6, "linear");
}

TEST(ImportResize, SymbolicSizesMatchTheStaticTaps) {
  const ResizeCase cases[] = {
      {"nearest", "asymmetric"},
      {"nearest", "asymmetric", "round_prefer_ceil"},
      {"nearest", "asymmetric", "ceil"},
      {"nearest", "half_pixel"},
      {"nearest", "half_pixel", "floor"},
      {"nearest", "pytorch_half_pixel", "round_prefer_ceil"},
      {"nearest", "half_pixel_symmetric"},
      {"linear", "half_pixel"},
      {"linear", "asymmetric"},
      {"linear", "pytorch_half_pixel"},
      {"cubic", "half_pixel"},
      {"cubic", "asymmetric"},
  };
  uint64_t seed = 1;
  for (int64_t k : {2, 3}) {
    for (size_t ci = 0; ci < std::size(cases); ++ci) {
      const ResizeCase& c = cases[ci];
      // k = 3 (each case a compile): a nearest, a linear and a cubic table.
      if (k == 3 && ci != 1 && ci != 7 && ci != 11) continue;
      const std::string what = fmt::format("{} {} {} k={}", c.mode, c.transform, c.nearest_mode, k);
      const OnnxModel model = resize_model({"N", 2, "H", "W"}, k, c);
      auto exe = compile_two_threads(model);
      for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {8, 2}}) {
        const HostTensor x = random_host(DType::f32, {2, 2, h, w}, seed++);
        const HostTensor want = run(resize_model({2, 2, h, w}, k, c), {x})[0];
        expect_close(exe->run(std::vector<HostTensor>{x})[0], want.shape(), values_of(want), 1e-5,
                     1e-5, fmt::format("{} H={} W={}", what, h, w));
        expect_close(run(model, {x})[0], want.shape(), values_of(want), 1e-6, 1e-6,
                     what + " (reference)");
      }
    }
  }
}

TEST(ImportResize, NearestKeepsIntegersAndBf16Exact) {
  const ResizeCase c{"nearest", "asymmetric"};
  for (DType dt : {DType::u8, DType::i32, DType::bf16}) {
    const HostTensor x = random_host(dt, {1, 3, 4, 5}, 9, 0, 100);
    const HostTensor want = run(resize_model({1, 3, 4, 5}, 2, c, dt), {x})[0];
    auto exe = compile_two_threads(resize_model({1, 3, "H", "W"}, 2, c, dt));
    const HostTensor got = exe->run(std::vector<HostTensor>{x})[0];
    EXPECT_EQ(got.dtype(), dt);
    expect_close(got, want.shape(), values_of(want), 0, 0, std::string(dtype_name(dt)));
  }
}

TEST(ImportResize, UpsampleOpsets7And9) {
  // Upsample-9 (scales input) and Upsample-7 (scales attribute): nearest
  // takes floor(o / scale), linear is asymmetric with edge clamping.
  const HostTensor x = host(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4});
  const auto upsample = [&](int64_t opset, const char* mode, double sh, double sw) {
    ModelBuilder m(opset);
    m.input("x", kF32, {1, 1, 2, 2});
    if (opset >= 9) {
      m.initializer(tensor("scales", kF32, {4}, {1, 1, sh, sw}));
      m.node("Upsample", {"x", "scales"}, {"y"}, {attr("mode", mode)});
    } else {
      m.node("Upsample", {"x"}, {"y"},
             {attr("mode", mode), attr("scales", std::vector<float>{1, 1, static_cast<float>(sh),
                                                                    static_cast<float>(sw)})});
    }
    m.output("y");
    return m;
  };
  for (int64_t opset : {7, 9}) {
    const std::string what = fmt::format("opset {}", opset);
    expect_close(run(upsample(opset, "nearest", 2, 1.5).import(), {x})[0], {1, 1, 4, 3},
                 {1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4}, 0, 0, what + " nearest");
    // Rows at 0, 0.5, 1, 1.5 (clamped to 1): 1, 2 / 2, 3 / 3, 4 / 3, 4.
    expect_close(run(upsample(opset, "linear", 2, 1).import(), {x})[0], {1, 1, 4, 2},
                 {1, 2, 2, 3, 3, 4, 3, 4}, 1e-6, 1e-6, what + " linear");
  }
  EXPECT_THAT(import_error(upsample(9, "nearest", 0.5, 1)), HasSubstr("scale 0.5 must be >= 1"));
}

std::string resize_error(const std::vector<Dim>& dims, const std::vector<double>& scales,
                         const std::vector<onnx::AttributeProto>& attrs, bool sizes_too = false) {
  ModelBuilder m(19);
  m.input("x", kF32, dims).initializer(tensor("scales", kF32, {4}, scales));
  std::vector<std::string> in{"x", "", "scales"};
  if (sizes_too) {
    m.initializer(ints("sizes", {1, 1, 4, 4}));
    in.push_back("sizes");
  }
  m.node("Resize", in, {"y"}, attrs).output("y");
  return import_error(m);
}

TEST(ImportResize, UnimplementedOrBadNodes) {
  EXPECT_THAT(resize_error({1, 1, "H", 4}, {1, 1, 1.5, 1}, {}), HasSubstr("unsupported: "));
  EXPECT_THAT(resize_error({1, 1, "H", 4}, {1, 1, 1.5, 1}, {}),
              HasSubstr("scale 1.5 of axis 2 of symbolic size H"));
  EXPECT_THAT(resize_error({1, 1, "H", 4}, {1, 1, 2, 1},
                           {attr("coordinate_transformation_mode", "align_corners")}),
              HasSubstr("align_corners resizing of axis 2 of symbolic size H"));
  EXPECT_THAT(resize_error({1, 1, 2, 2}, {1, 1, 2, 2}, {}, /*sizes_too=*/true),
              HasSubstr("exactly one of scales and sizes must be given"));
  EXPECT_THAT(resize_error({1, 1, 2, 2}, {1, 1, 2, 2}, {attr("mode", "area")}),
              HasSubstr("mode 'area' is not one of nearest, linear, cubic"));
  EXPECT_THAT(resize_error({1, 1, 2, 2}, {1, 1, 0, 2}, {}), HasSubstr("scale 0 must be > 0"));
}

}  // namespace import_resize_test_local
}  // namespace autofuse::frontend::testing
