// ONNX Conv (convert_library.cpp): explicit pads, auto_pad (VALID,
// SAME_UPPER, SAME_LOWER; symbolic sizes with stride 1), strides,
// dilations, groups and bias against a 2-D convolution computed here in
// double, on the reference interpreter and compiled (oneDNN); a Conv ->
// Add -> Relu block has one library conv and one kernel and matches on
// many shapes; bad nodes are UserErrors naming what is wrong. ConvTranspose
// (a Conv of the zero-upsampled input) against its scatter definition;
// ConvInteger and QLinearConv against the same convolution of centered
// integers.
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/runtime/executable.h"
#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_conv_test_local {

using ::testing::HasSubstr;

struct Conv2d {
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};
  int64_t group = 1;
};

/// A 2-D ONNX convolution in double, written from the operator doc.
std::vector<double> conv2d(const HostTensor& x, const HostTensor& w, const HostTensor* bias,
                           const Conv2d& p, std::vector<int64_t>& shape) {
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], wd = x.shape()[3];
  const int64_t m = w.shape()[0], cg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  const int64_t oh = (h + p.pads[0] + p.pads[2] - p.dilations[0] * (kh - 1) - 1) / p.strides[0] + 1;
  const int64_t ow =
      (wd + p.pads[1] + p.pads[3] - p.dilations[1] * (kw - 1) - 1) / p.strides[1] + 1;
  shape = {n, m, oh, ow};
  std::vector<double> out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = bias != nullptr ? bias->get_f64(o) : 0;
          const int64_t g = o / (m / p.group);
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                const int64_t y = i * p.strides[0] - p.pads[0] + u * p.dilations[0];
                const int64_t z = j * p.strides[1] - p.pads[1] + v * p.dilations[1];
                if (y < 0 || y >= h || z < 0 || z >= wd) continue;
                s += x.get_f64(((b * c + g * cg + ci) * h + y) * wd + z) *
                     w.get_f64(((o * cg + ci) * kh + u) * kw + v);
              }
          out.push_back(s);
        }
  return out;
}

TEST(ImportConv, HandWorkedExample) {
  // x = 1..9 in 3x3, w = [[1, 0], [0, -1]]: every output is x[i][j] -
  // x[i+1][j+1] = -4, plus the bias.
  OneNode n{"Conv"};
  n.inputs = {host(DType::f32, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
              host(DType::f32, {1, 1, 2, 2}, {1, 0, 0, -1}), host(DType::f32, {1}, {0.5})};
  n.initializer_inputs = {1, 2};
  expect_close(n.run()[0], {1, 1, 2, 2}, {-3.5, -3.5, -3.5, -3.5}, 0, 0, "reference");
  expect_close(compile_two_threads(n.import())->run(n.graph_inputs())[0], {1, 1, 2, 2},
               {-3.5, -3.5, -3.5, -3.5}, 0, 0, "compiled");
}

TEST(ImportConv, AttributesAgainstADirectConvolution) {
  struct Case {
    std::vector<int64_t> x, w;
    Conv2d p;
    bool bias;
  };
  const Case cases[] = {
      {{2, 3, 7, 9}, {4, 3, 3, 3}, {}, true},
      {{1, 4, 11, 8}, {6, 2, 3, 2}, {{2, 3}, {1, 1}, {0, 1, 2, 0}, 2}, true},
      {{3, 6, 10, 10}, {6, 1, 3, 3}, {{1, 1}, {2, 2}, {2, 2, 2, 2}, 6}, false},  // depthwise
      {{1, 5, 13, 13}, {7, 5, 1, 1}, {{2, 2}, {1, 1}, {0, 0, 0, 0}, 1}, true},
      {{2, 2, 5, 4}, {3, 2, 5, 5}, {{1, 1}, {1, 1}, {2, 2, 2, 2}, 1}, true},  // kernel > input
  };
  uint64_t seed = 1;
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    for (const Case& c : cases) {
      OneNode n{"Conv"};
      n.inputs = {random_host(dt, c.x, seed++), random_host(dt, c.w, seed++, -0.5, 0.5)};
      if (c.bias) n.inputs.push_back(random_host(dt, {c.w[0]}, seed++));
      n.initializer_inputs = {1, 2};
      n.attrs = {attr("strides", c.p.strides), attr("dilations", c.p.dilations),
                 attr("pads", c.p.pads), attr("group", c.p.group)};
      std::vector<int64_t> shape;
      const std::vector<double> want =
          conv2d(n.inputs[0], n.inputs[1], c.bias ? &n.inputs[2] : nullptr, c.p, shape);
      const std::string what =
          fmt::format("{} x [{}] w [{}]", dtype_name(dt), fmt::join(c.x, ","), fmt::join(c.w, ","));
      // Inputs and results are rounded to the dtype; sums of up to 27 terms.
      const double tol = dt == DType::f32 ? 1e-5 : dt == DType::f16 ? 2e-2 : 1e-1;
      expect_close(n.run()[0], shape, want, tol, tol, what + " (reference)");
      expect_close(compile_two_threads(n.import())->run(n.graph_inputs())[0], shape, want, tol, tol,
                   what + " (compiled)");
    }
  }
}

TEST(ImportConv, AutoPadModes) {
  struct Case {
    const char* mode;
    int64_t size, kernel, stride;
    std::vector<int64_t> pads;  // ONNX order: begins, then ends, as the doc computes them
  };
  const Case cases[] = {
      {"VALID", 7, 3, 2, {0, 0, 0, 0}},
      {"SAME_UPPER", 5, 3, 2, {1, 1, 1, 1}},  // out 3: total (3-1)*2 + 3 - 5 = 2
      {"SAME_UPPER", 5, 2, 2, {0, 0, 1, 1}},  // total 1: the odd unit at the end
      {"SAME_LOWER", 5, 2, 2, {1, 1, 0, 0}},  // ... or at the beginning
      {"SAME_LOWER", 6, 4, 1, {2, 2, 1, 1}},  // stride 1: total 3 = K - 1
      {"SAME_UPPER", 9, 3, 3, {0, 0, 0, 0}},  // total 0
  };
  uint64_t seed = 40;
  for (const Case& c : cases) {
    OneNode n{"Conv"};
    n.inputs = {random_host(DType::f32, {1, 2, c.size, c.size}, seed++),
                random_host(DType::f32, {3, 2, c.kernel, c.kernel}, seed++)};
    n.initializer_inputs = {1};
    n.attrs = {attr("auto_pad", c.mode), attr("strides", std::vector<int64_t>{c.stride, c.stride}),
               attr("kernel_shape", std::vector<int64_t>{c.kernel, c.kernel})};
    Conv2d p;
    p.strides = {c.stride, c.stride};
    p.pads = c.pads;
    std::vector<int64_t> shape;
    const std::vector<double> want = conv2d(n.inputs[0], n.inputs[1], nullptr, p, shape);
    if (std::string(c.mode) != "VALID") {
      EXPECT_EQ(shape[2], (c.size + c.stride - 1) / c.stride) << c.mode;
    }
    expect_close(n.run()[0], shape, want, 1e-5, 1e-5,
                 fmt::format("{} size {} kernel {} stride {}", c.mode, c.size, c.kernel, c.stride));
  }
}

TEST(ImportConv, SamePaddingOnSymbolicSizesWithStrideOne) {
  ModelBuilder m(17);
  const HostTensor w = random_host(DType::f32, {4, 3, 3, 2}, 5, -0.5, 0.5);
  m.input("x", kF32, {"N", 3, "H", "W"})
      .initializer(tensor("w", kF32, {4, 3, 3, 2}, values_of(w)))
      .node("Conv", {"x", "w"}, {"y"}, {attr("auto_pad", "SAME_LOWER")})
      .output("y");
  const OnnxModel model = m.import();
  auto exe = compile_two_threads(model);
  uint64_t seed = 60;
  for (auto [h, wd] : {std::pair<int64_t, int64_t>{1, 1}, {5, 7}, {13, 2}}) {
    const HostTensor x = random_host(DType::f32, {2, 3, h, wd}, seed++);
    Conv2d p;
    p.pads = {1, 1, 1, 0};  // totals 2 and 1, the odd unit at the beginning
    std::vector<int64_t> shape;
    const std::vector<double> want = conv2d(x, w, nullptr, p, shape);
    EXPECT_EQ(shape, (std::vector<int64_t>{2, 4, h, wd}));
    expect_close(exe->run(std::vector<HostTensor>{x})[0], shape, want, 1e-5, 1e-5,
                 fmt::format("H={} W={}", h, wd));
  }
}

TEST(ImportConv, ConvAddReluIsOneLibraryCallAndOneKernel) {
  ModelBuilder m(17);
  const HostTensor w = random_host(DType::f32, {8, 4, 3, 3}, 7, -0.4, 0.4);
  const HostTensor b = random_host(DType::f32, {8}, 8);
  const HostTensor shift = random_host(DType::f32, {1, 8, 1, 1}, 9);
  m.input("x", kF32, {"N", 4, "H", "W"})
      .initializer(tensor("w", kF32, {8, 4, 3, 3}, values_of(w)))
      .initializer(tensor("b", kF32, {8}, values_of(b)))
      .initializer(tensor("shift", kF32, {1, 8, 1, 1}, values_of(shift)))
      .node("Conv", {"x", "w", "b"}, {"c"},
            {attr("pads", std::vector<int64_t>{1, 1, 1, 1}),
             attr("strides", std::vector<int64_t>{2, 2})})
      .node("Add", {"c", "shift"}, {"s"})
      .node("Relu", {"s"}, {"y"})
      .output("y");
  const OnnxModel model = m.import();
  EXPECT_EQ(fused_kernels(model), 1);
  auto exe = compile_two_threads(model);
  EXPECT_EQ(exe->report().kernels, 1) << fuse::print_fused_graph(exe->fused());
  uint64_t seed = 80;
  for (auto [n, h, wd] : {std::array<int64_t, 3>{1, 1, 1}, {2, 7, 5}, {3, 17, 31}, {1, 64, 63}}) {
    const HostTensor x = random_host(DType::f32, {n, 4, h, wd}, seed++);
    const std::vector<HostTensor> want = run(model, {x});
    const std::vector<HostTensor> got = exe->run(std::vector<HostTensor>{x});
    expect_close(got[0], want[0].shape(), values_of(want[0]), 1e-5, 1e-5,
                 fmt::format("N={} H={} W={}", n, h, wd));
  }
  // One module for every shape (compiled, or loaded from the shared cache).
  EXPECT_EQ(exe->report().jit.compiles + exe->report().jit.cache_hits, 1);
}

TEST(ImportConv, BadNodesAreClearErrors) {
  OneNode n{"Conv"};
  n.inputs = {host(DType::f32, {1, 2, 5, 5}, std::vector<double>(50, 1.0)),
              host(DType::f32, {3, 2, 3, 3}, std::vector<double>(54, 1.0))};
  n.initializer_inputs = {1};
  n.attrs = {attr("kernel_shape", std::vector<int64_t>{3, 2})};
  EXPECT_THAT(import_error(n), HasSubstr("kernel_shape [3, 2] differs from W's spatial dims"));
  n.attrs = {attr("auto_pad", "SAME")};
  EXPECT_THAT(import_error(n), HasSubstr("auto_pad 'SAME' is not one of"));
  n.attrs = {attr("strides", std::vector<int64_t>{1})};
  EXPECT_THAT(import_error(n), HasSubstr("strides and dilations need 2 entries"));
  n.attrs = {attr("group", int64_t{2})};
  EXPECT_THAT(import_error(n), HasSubstr("input has 2 channels, weight 2 x group 2 = 4"));
  n.attrs = {};
  n.inputs[1] = host(DType::f16, {3, 2, 3, 3}, std::vector<double>(54, 1.0));
  EXPECT_THAT(import_error(n), HasSubstr("X, W and B must have one float dtype, got f32, f16"));
  n.inputs = {host(DType::f32, {1, 1, 2, 2, 2, 2}, std::vector<double>(16, 1.0)),
              host(DType::f32, {1, 1, 1, 1, 1, 1}, {1.0})};
  EXPECT_THAT(import_error(n), HasSubstr("Conv over 4 spatial axes (at most 3)"));
}

TEST(ImportConv, StridedSamePaddingOfASymbolicSizeIsUnsupported) {
  ModelBuilder m(17);
  m.input("x", kF32, {"N", 3, "H", 8})
      .initializer(tensor("w", kF32, {4, 3, 3, 3}, std::vector<double>(108, 0.5)))
      .node("Conv", {"x", "w"}, {"y"},
            {attr("auto_pad", "SAME_UPPER"), attr("strides", std::vector<int64_t>{2, 2})})
      .output("y");
  try {
    m.import();
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("auto_pad SAME_UPPER with stride 2 on spatial axis 0"));
  }
}

// ---- ConvTranspose ---------------------------------------------------------

struct ConvT2d {
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0}, output_padding{0, 0};
  int64_t group = 1;
};

/// A 2-D ONNX ConvTranspose in double by its scatter definition: x[i]
/// contributes x[i] * W[k] to y[i * s + k * d - pad_begin].
std::vector<double> conv_transpose2d(const HostTensor& x, const HostTensor& w,
                                     const HostTensor* bias, const ConvT2d& p,
                                     std::vector<int64_t>& shape) {
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], wd = x.shape()[3];
  const int64_t mg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  const int64_t cg = c / p.group, m = mg * p.group;
  const int64_t oh = p.strides[0] * (h - 1) + p.output_padding[0] + p.dilations[0] * (kh - 1) + 1 -
                     p.pads[0] - p.pads[2];
  const int64_t ow = p.strides[1] * (wd - 1) + p.output_padding[1] + p.dilations[1] * (kw - 1) + 1 -
                     p.pads[1] - p.pads[3];
  shape = {n, m, oh, ow};
  std::vector<double> y(static_cast<size_t>(n * m * oh * ow));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t e = 0; e < oh * ow; ++e)
        y[static_cast<size_t>((b * m + o) * oh * ow + e)] = bias ? bias->get_f64(o) : 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < wd; ++j)
          for (int64_t mm = 0; mm < mg; ++mm)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                const int64_t yi = i * p.strides[0] + u * p.dilations[0] - p.pads[0];
                const int64_t yj = j * p.strides[1] + v * p.dilations[1] - p.pads[1];
                if (yi < 0 || yi >= oh || yj < 0 || yj >= ow) continue;
                const int64_t o = (ci / cg) * mg + mm;
                y[static_cast<size_t>(((b * m + o) * oh + yi) * ow + yj)] +=
                    x.get_f64(((b * c + ci) * h + i) * wd + j) *
                    w.get_f64(((ci * mg + mm) * kh + u) * kw + v);
              }
  return y;
}

TEST(ImportConvTranspose, AttributesAgainstTheScatterDefinition) {
  struct Case {
    std::vector<int64_t> x, w;
    ConvT2d p;
    bool bias;
  };
  const Case cases[] = {
      {{1, 2, 4, 5}, {2, 3, 3, 3}, {}, true},
      {{2, 3, 5, 4}, {3, 2, 3, 2}, {{2, 3}, {1, 1}, {1, 0, 0, 2}, {1, 2}, 1}, true},
      {{1, 4, 3, 3}, {4, 3, 2, 3}, {{2, 2}, {2, 1}, {0, 1, 1, 0}, {0, 0}, 2}, false},  // groups
      {{1, 2, 6, 5}, {2, 1, 3, 3}, {{1, 2}, {1, 1}, {3, 1, 3, 2}, {0, 1}, 1}, true},   // crops
      {{2, 1, 1, 1}, {1, 2, 4, 4}, {{3, 3}, {1, 1}, {0, 0, 0, 0}, {2, 0}, 1}, true},   // 1x1 input
  };
  uint64_t seed = 400;
  for (DType dt : {DType::f32, DType::bf16}) {
    for (const Case& c : cases) {
      if (dt == DType::bf16 && c.x[1] != 4) continue;  // one case in bf16
      OneNode n{"ConvTranspose"};
      n.inputs = {random_host(dt, c.x, seed++), random_host(dt, c.w, seed++, -0.5, 0.5)};
      if (c.bias) n.inputs.push_back(random_host(dt, {c.w[1] * c.p.group}, seed++));
      n.initializer_inputs = {1, 2};
      n.attrs = {attr("strides", c.p.strides), attr("dilations", c.p.dilations),
                 attr("pads", c.p.pads), attr("output_padding", c.p.output_padding),
                 attr("group", c.p.group)};
      std::vector<int64_t> shape;
      const std::vector<double> want =
          conv_transpose2d(n.inputs[0], n.inputs[1], c.bias ? &n.inputs[2] : nullptr, c.p, shape);
      const std::string what =
          fmt::format("{} x [{}] w [{}]", dtype_name(dt), fmt::join(c.x, ","), fmt::join(c.w, ","));
      const double tol = dt == DType::f32 ? 1e-5 : 1e-1;
      expect_close(n.run()[0], shape, want, tol, tol, what + " (reference)");
      expect_close(compile_two_threads(n.import())->run(n.graph_inputs())[0], shape, want, tol, tol,
                   what + " (compiled)");
    }
  }
}

TEST(ImportConvTranspose, OutputShapeSetsThePads) {
  // Default output 3 * (3 - 1) + 3 = 9 rows, 2 * 2 + 3 = 7 columns; asking
  // for 10 x 8 extends the end (a negative total padding), 8 x 6 pads.
  for (const std::vector<int64_t>& out : {std::vector<int64_t>{10, 8}, {8, 6}, {1, 1, 9, 7}}) {
    OneNode n{"ConvTranspose"};
    n.inputs = {random_host(DType::f32, {1, 1, 3, 3}, 7), random_host(DType::f32, {1, 2, 3, 3}, 8)};
    n.initializer_inputs = {1};
    n.attrs = {attr("strides", std::vector<int64_t>{3, 2}), attr("output_shape", out)};
    const int64_t rows = out[out.size() - 2], cols = out.back();
    ConvT2d p;
    p.strides = {3, 2};
    // total = default - wanted, the odd unit at the start (NOTSET), floor
    // division for negatives.
    const int64_t tr = 9 - rows, tc = 7 - cols;
    const auto floor_half = [](int64_t t) { return t >= 0 ? t / 2 : -((-t + 1) / 2); };
    p.pads = {tr - floor_half(tr), tc - floor_half(tc), floor_half(tr), floor_half(tc)};
    std::vector<int64_t> shape;
    const std::vector<double> want = conv_transpose2d(n.inputs[0], n.inputs[1], nullptr, p, shape);
    EXPECT_EQ(shape, (std::vector<int64_t>{1, 2, rows, cols}));
    expect_close(n.run()[0], shape, want, 1e-5, 1e-5, fmt::format("{} x {}", rows, cols));
  }
}

TEST(ImportConvTranspose, SamePaddingOnSymbolicSizesDoublesThem) {
  ModelBuilder m(17);
  const HostTensor w = random_host(DType::f32, {3, 2, 3, 3}, 9, -0.5, 0.5);
  m.input("x", kF32, {"N", 3, "H", "W"})
      .initializer(tensor("w", kF32, {3, 2, 3, 3}, values_of(w)))
      .node("ConvTranspose", {"x", "w"}, {"y"},
            {attr("auto_pad", "SAME_UPPER"), attr("strides", std::vector<int64_t>{2, 2})})
      .output("y");
  const OnnxModel model = m.import();
  auto exe = compile_two_threads(model);
  uint64_t seed = 500;
  for (auto [h, wd] : {std::pair<int64_t, int64_t>{1, 1}, {4, 7}, {9, 2}}) {
    const HostTensor x = random_host(DType::f32, {2, 3, h, wd}, seed++);
    ConvT2d p;
    p.strides = {2, 2};
    p.pads = {0, 0, 1, 1};  // total 3 - 2 = 1: SAME_UPPER puts it at the end
    std::vector<int64_t> shape;
    const std::vector<double> want = conv_transpose2d(x, w, nullptr, p, shape);
    EXPECT_EQ(shape, (std::vector<int64_t>{2, 2, 2 * h, 2 * wd}));
    expect_close(exe->run(std::vector<HostTensor>{x})[0], shape, want, 1e-5, 1e-5,
                 fmt::format("H={} W={}", h, wd));
  }
  // One module for every shape (compiled, or loaded from the shared cache).
  EXPECT_EQ(exe->report().jit.compiles + exe->report().jit.cache_hits, 1);
}

TEST(ImportConvTranspose, BadNodesAreClearErrors) {
  OneNode n{"ConvTranspose"};
  n.inputs = {host(DType::f32, {1, 3, 2, 2}, std::vector<double>(12, 1.0)),
              host(DType::f32, {3, 2, 2, 2}, std::vector<double>(24, 1.0))};
  n.initializer_inputs = {1};
  n.attrs = {attr("group", int64_t{2})};
  EXPECT_THAT(import_error(n), HasSubstr("W's 3 input channels do not divide into 2 groups"));
  n.attrs = {attr("output_padding", std::vector<int64_t>{1})};
  EXPECT_THAT(import_error(n), HasSubstr("output_padding has 1 entries, expected 2"));
  ModelBuilder m(17);
  m.input("x", kF32, {"N", 3, "H", 4})
      .initializer(tensor("w", kF32, {3, 2, 2, 2}, std::vector<double>(24, 1.0)))
      .node("ConvTranspose", {"x", "w"}, {"y"}, {attr("output_shape", std::vector<int64_t>{5, 5})})
      .output("y");
  try {
    m.import();
    FAIL() << "expected an error";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("output_shape with spatial axis 0 of symbolic size H"));
  }
}

// ---- ConvInteger, QLinearConv -------------------------------------------------

/// `t` with `zp` subtracted (a scalar, or one per dim-0 slice).
HostTensor centered(const HostTensor& t, const std::vector<double>& zp) {
  HostTensor out(DType::f64, t.shape());
  const int64_t per = t.numel() / std::max<int64_t>(1, t.shape()[0]);
  for (int64_t i = 0; i < t.numel(); ++i)
    out.set_f64(i, t.get_f64(i) - zp[zp.size() == 1 ? 0 : static_cast<size_t>(i / per)]);
  return out;
}

TEST(ImportConvInteger, CenteredIntegersConvolveExactly) {
  for (DType dt : {DType::u8, DType::i8}) {
    const double lo = dt == DType::u8 ? 0 : -128, hi = dt == DType::u8 ? 256 : 128;
    OneNode n{"ConvInteger"};
    n.inputs = {random_host(dt, {2, 4, 7, 6}, 1, lo, hi), random_host(dt, {6, 2, 3, 3}, 2, lo, hi),
                host(dt, {}, {dt == DType::u8 ? 128.0 : -3.0}),
                host(dt, {6}, {1, 2, 3, 4, 5, dt == DType::u8 ? 255.0 : -128.0})};
    n.initializer_inputs = {1, 2, 3};
    n.attrs = {attr("group", int64_t{2}), attr("pads", std::vector<int64_t>{1, 0, 1, 2}),
               attr("strides", std::vector<int64_t>{2, 1})};
    Conv2d p;
    p.group = 2;
    p.pads = {1, 0, 1, 2};
    p.strides = {2, 1};
    std::vector<int64_t> shape;
    const std::vector<double> want =
        conv2d(centered(n.inputs[0], {n.inputs[2].get_f64(0)}),
               centered(n.inputs[1], values_of(n.inputs[3])), nullptr, p, shape);
    const HostTensor got = n.run()[0];
    EXPECT_EQ(got.dtype(), DType::i32);
    expect_close(got, shape, want, 0, 0, std::string(dtype_name(dt)) + " (reference)");
    expect_close(compile_two_threads(n.import())->run(n.graph_inputs())[0], shape, want, 0, 0,
                 std::string(dtype_name(dt)) + " (compiled)");
  }
}

TEST(ImportConvInteger, QLinearConvRequantizesAndSaturates) {
  // x u8 (zp 100, scale 0.5), w i8 per output channel (scales 0.25, 2),
  // y i8 (scale 1.5, zp -10), int32 bias.
  OneNode n{"QLinearConv"};
  n.inputs = {random_host(DType::u8, {1, 3, 5, 5}, 3, 0, 256),
              host(DType::f32, {}, {0.5}),
              host(DType::u8, {}, {100}),
              random_host(DType::i8, {2, 3, 2, 2}, 4, -128, 128),
              host(DType::f32, {2}, {0.25, 2}),
              host(DType::i8, {2}, {0, 0}),
              host(DType::f32, {}, {1.5}),
              host(DType::i8, {}, {-10}),
              host(DType::i32, {2}, {1000, -7})};
  n.initializer_inputs = {1, 2, 3, 4, 5, 6, 7, 8};
  Conv2d p;
  std::vector<int64_t> shape;
  const HostTensor bias = host(DType::f64, {2}, {1000, -7});
  const std::vector<double> acc =
      conv2d(centered(n.inputs[0], {100}), centered(n.inputs[3], {0}), &bias, p, shape);
  std::vector<double> want;
  const int64_t plane = shape[2] * shape[3];
  bool saturated = false;
  for (size_t i = 0; i < acc.size(); ++i) {
    const float scale = 0.5f * (i / static_cast<size_t>(plane) == 0 ? 0.25f : 2.0f) / 1.5f;
    const double v = std::nearbyint(acc[i] * static_cast<double>(scale) - 10);
    saturated = saturated || v < -128 || v > 127;
    want.push_back(std::clamp(v, -128.0, 127.0));
  }
  EXPECT_TRUE(saturated) << "the case should reach the int8 limits";
  expect_close(n.run()[0], shape, want, 0, 0, "reference");
  expect_close(compile_two_threads(n.import())->run(n.graph_inputs())[0], shape, want, 0, 0,
               "compiled");
}

}  // namespace import_conv_test_local
}  // namespace autofuse::frontend::testing
