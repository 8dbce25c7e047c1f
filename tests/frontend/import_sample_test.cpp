// GridSample and AffineGrid (convert_sample.cpp). The ONNX node tests
// (autofuse conformance) check both against the reference implementation
// on its fixed cases; here: every mode x padding x align_corners compiled
// once with symbolic sizes and run on several shapes (1 everywhere, primes,
// grids reaching past the borders on both sides) against a scalar
// re-statement of the reference (op_grid_sample.py) in this file; 3-D
// sampling; f16/bf16/f64 data; AffineGrid's grid checked by hand and by
// sampling with the identity (y == x); errors.
#include <cmath>
#include <functional>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/runtime/executable.h"
#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_sample_test_local {

using ::testing::HasSubstr;

struct SampleCase {
  const char* mode;
  const char* padding;
  bool align;
};

std::vector<SampleCase> all_cases() {
  std::vector<SampleCase> out;
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true})
        out.push_back({mode, padding, align});
  return out;
}

/// The reference's GridSample for one case, in the compute type T (the
/// converter computes coordinates and weights in T with the same operation
/// order, so nearest rounds exactly as it does).
template <typename T>
std::vector<double> reference_grid_sample(const HostTensor& x, const HostTensor& grid,
                                          const SampleCase& c) {
  const std::vector<int64_t>& xs = x.shape();
  const std::vector<int64_t>& gs = grid.shape();
  const int k = static_cast<int>(xs.size()) - 2;
  const std::string mode = c.mode, padding = c.padding;
  int64_t positions = 1;
  for (int i = 0; i < k; ++i)
    positions *= gs[static_cast<size_t>(1 + i)];
  const auto reflect = [](T v, T lo, T hi) {
    const T range = hi - lo;
    if (!(range > 0)) return lo;
    if (v < lo) {
      const T dx = lo - v, n = std::floor(dx / range), r = dx - n * range;
      return std::fmod(n, T(2)) != 0 ? hi - r : lo + r;
    }
    if (v > hi) {
      const T dx = v - hi, n = std::floor(dx / range), r = dx - n * range;
      return std::fmod(n, T(2)) != 0 ? lo + r : hi - r;
    }
    return v;
  };
  const auto trunc = [](T v) { return v < 0 ? std::ceil(v) : std::floor(v); };
  std::vector<double> out;
  for (int64_t n = 0; n < xs[0]; ++n) {
    for (int64_t ch = 0; ch < xs[1]; ++ch) {
      for (int64_t p = 0; p < positions; ++p) {
        // Per spatial dim: taps (index, weight), or "reads 0" when outside.
        std::vector<std::vector<std::pair<int64_t, T>>> taps(static_cast<size_t>(k));
        for (int dim = 0; dim < k; ++dim) {
          const int64_t d = xs[static_cast<size_t>(2 + dim)];
          const T g = static_cast<T>(grid.get_f64((n * positions + p) * k + (k - 1 - dim)));
          const T dd = static_cast<T>(d);
          T coord = c.align ? (g + T(1)) / T(2) * (dd - T(1)) : ((g + T(1)) * dd - T(1)) / T(2);
          if (mode == "nearest") coord = std::nearbyint(coord);
          const T lo = c.align ? T(0) : T(-0.5), hi = dd - (c.align ? T(1) : T(0.5));
          if (padding != "zeros" && (coord < lo || coord > hi))
            coord = padding == "border" ? std::min(std::max(coord, T(0)), dd - T(1))
                                        : reflect(coord, lo, hi);
          const auto fetch = [&](T i) -> int64_t {  // -1: reads 0
            if (padding == "zeros") return i >= 0 && i < dd ? static_cast<int64_t>(i) : -1;
            if (padding == "border")
              return static_cast<int64_t>(std::min(std::max(i, T(0)), dd - T(1)));
            return static_cast<int64_t>(
                std::min(std::max(trunc(reflect(i, lo, hi)), T(0)), dd - T(1)));
          };
          auto& t = taps[static_cast<size_t>(dim)];
          if (mode == "nearest") {
            t.push_back({fetch(trunc(coord)), T(1)});
            continue;
          }
          const T f = std::floor(coord), u = coord - f;
          if (mode == "linear") {
            t.push_back({fetch(f), T(1) - u});
            t.push_back({fetch(f + T(1)), u});
            continue;
          }
          const T a = T(-0.75);
          const auto near = [&](T v) { return ((a + T(2)) * v - (a + T(3))) * v * v + T(1); };
          const auto far = [&](T v) { return ((a * v - T(5) * a) * v + T(8) * a) * v - T(4) * a; };
          const T w[4] = {far(u + T(1)), near(u), near(T(1) - u), far(T(2) - u)};
          for (int j = 0; j < 4; ++j)
            t.push_back({fetch(f + T(j - 1)), w[j]});
        }
        double sum = 0;
        std::vector<size_t> which(static_cast<size_t>(k), 0);
        while (true) {
          double weight = 1;
          int64_t flat = n * xs[1] + ch;
          bool zero = false;
          for (int dim = 0; dim < k; ++dim) {
            const auto& [index, w] =
                taps[static_cast<size_t>(dim)][which[static_cast<size_t>(dim)]];
            weight *= static_cast<double>(w);
            zero = zero || index < 0;
            flat = flat * xs[static_cast<size_t>(2 + dim)] + std::max<int64_t>(index, 0);
          }
          if (!zero) sum += weight * x.get_f64(flat);
          int dim = k - 1;
          while (dim >= 0 &&
                 ++which[static_cast<size_t>(dim)] == taps[static_cast<size_t>(dim)].size())
            which[static_cast<size_t>(dim--)] = 0;
          if (dim < 0) break;
        }
        out.push_back(sum);
      }
    }
  }
  return out;
}

/// One GridSample node per case, outputs y0, y1, ...; X [N, C, spatial...]
/// and grid [N, out..., k] of dtype dt.
OnnxModel grid_sample_model(const std::vector<SampleCase>& cases, const std::vector<Dim>& x_dims,
                            const std::vector<Dim>& grid_dims, DType dt = DType::f32) {
  ModelBuilder m(20);
  m.input("x", onnx_type(dt), x_dims).input("grid", onnx_type(dt), grid_dims);
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string y = fmt::format("y{}", i);
    m.node("GridSample", {"x", "grid"}, {y},
           {attr("mode", cases[i].mode), attr("padding_mode", cases[i].padding),
            attr("align_corners", static_cast<int64_t>(cases[i].align))});
    m.output(y);
  }
  return m.import();
}

struct Shape2d {
  int64_t n, c, h, w, ho, wo;
};

TEST(ImportGridSample, EveryModePaddingAndAlignmentOnSymbolicShapes) {
  const std::vector<SampleCase> cases = all_cases();
  const OnnxModel model = grid_sample_model(cases, {"N", "C", "H", "W"}, {"N", "Ho", "Wo", 2});
  auto exe = compile_two_threads(model);
  uint64_t seed = 11;
  for (const Shape2d& s : {Shape2d{1, 1, 1, 1, 1, 1}, Shape2d{2, 3, 5, 7, 3, 4},
                           Shape2d{1, 2, 4, 13, 6, 5}, Shape2d{3, 1, 2, 3, 1, 9}}) {
    const HostTensor x = random_host(DType::f32, {s.n, s.c, s.h, s.w}, seed++);
    // Past both borders (|g| up to 1.6), and a few exact ones.
    HostTensor grid = random_host(DType::f32, {s.n, s.ho, s.wo, 2}, seed++, -1.6, 1.6);
    grid.set_f64(0, -1.0);
    if (grid.numel() > 3) grid.set_f64(3, 1.0);
    const std::vector<HostTensor> got = exe->run(std::vector<HostTensor>{x, grid});
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::string what =
          fmt::format("{} {} align {} shape {}x{}x{}x{} grid {}x{}", cases[i].mode,
                      cases[i].padding, cases[i].align, s.n, s.c, s.h, s.w, s.ho, s.wo);
      expect_close(got[i], {s.n, s.c, s.ho, s.wo}, reference_grid_sample<float>(x, grid, cases[i]),
                   1e-5, 1e-5, what);
    }
  }
}

TEST(ImportGridSample, VolumetricSampling) {
  // (Cubic in 3-D, 64 taps, compiles for a minute on CI's machine; the
  // 2-D cases cover its weights, the tap loop is the same.)
  const std::vector<SampleCase> cases = {
      {"nearest", "zeros", false}, {"linear", "border", true}, {"linear", "reflection", false}};
  const OnnxModel model =
      grid_sample_model(cases, {"N", 2, "D", "H", "W"}, {"N", "Do", "Ho", "Wo", 3});
  auto exe = compile_two_threads(model);
  const HostTensor x = random_host(DType::f32, {2, 2, 3, 4, 5}, 3);
  const HostTensor grid = random_host(DType::f32, {2, 2, 3, 4, 3}, 4, -1.4, 1.4);
  const std::vector<HostTensor> got = exe->run(std::vector<HostTensor>{x, grid});
  for (size_t i = 0; i < cases.size(); ++i)
    expect_close(got[i], {2, 2, 2, 3, 4}, reference_grid_sample<float>(x, grid, cases[i]), 1e-5,
                 1e-5,
                 fmt::format("{} {} align {}", cases[i].mode, cases[i].padding, cases[i].align));
}

TEST(ImportGridSample, HalfBfloatAndDoubleData) {
  // f16/bf16 compute in f32 and round the result; f64 computes in f64.
  const std::vector<SampleCase> cases = {
      {"nearest", "border", false}, {"linear", "zeros", false}, {"cubic", "reflection", true}};
  for (DType dt : {DType::f16, DType::bf16, DType::f64}) {
    const OnnxModel model = grid_sample_model(cases, {1, 2, "H", "W"}, {1, 3, 4, 2}, dt);
    auto exe = compile_two_threads(model);
    const HostTensor x = random_host(dt, {1, 2, 5, 6}, 5);
    const HostTensor grid = random_host(dt, {1, 3, 4, 2}, 6, -1.3, 1.3);
    const std::vector<HostTensor> got = exe->run(std::vector<HostTensor>{x, grid});
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::string what =
          fmt::format("{} {} {}", dtype_name(dt), cases[i].mode, cases[i].padding);
      EXPECT_EQ(got[i].dtype(), dt) << what;
      const std::vector<double> want = dt == DType::f64
                                           ? reference_grid_sample<double>(x, grid, cases[i])
                                           : reference_grid_sample<float>(x, grid, cases[i]);
      expect_close(got[i], {1, 2, 3, 4}, want, 2 * rtol_of(dt), 2 * rtol_of(dt), what);
    }
  }
}

OnnxModel affine_grid_model(const std::vector<int64_t>& size, bool align,
                            const std::vector<Dim>& theta_dims) {
  ModelBuilder m(20);
  m.input("theta", kF32, theta_dims)
      .initializer(ints("size", size))
      .node("AffineGrid", {"theta", "size"}, {"grid"},
            {attr("align_corners", static_cast<int64_t>(align))})
      .output("grid");
  return m.import();
}

TEST(ImportAffineGrid, HandWorkedGrids) {
  // theta = [[2, 0, 0.5], [0, 1, -1]] on H = 2, W = 3: base x = -2/3, 0, 2/3
  // (not aligned) or -1, 0, 1 (aligned); base y = -1/2, 1/2 or -1, 1.
  const HostTensor theta = host(DType::f32, {1, 2, 3}, {2, 0, 0.5, 0, 1, -1});
  const std::vector<double> xs_off = {-2.0 / 3, 0, 2.0 / 3}, ys_off = {-0.5, 0.5};
  const std::vector<double> xs_on = {-1, 0, 1}, ys_on = {-1, 1};
  for (bool align : {false, true}) {
    const std::vector<double>& bx = align ? xs_on : xs_off;
    const std::vector<double>& by = align ? ys_on : ys_off;
    std::vector<double> want;
    for (double y : by)
      for (double x : bx) {
        want.push_back(2 * x + 0.5);
        want.push_back(y - 1);
      }
    auto exe = compile_two_threads(affine_grid_model({1, 1, 2, 3}, align, {"N", 2, 3}));
    expect_close(exe->run(std::vector<HostTensor>{theta})[0], {1, 2, 3, 2}, want, 1e-6, 1e-6,
                 align ? "aligned" : "not aligned");
    expect_close(run(affine_grid_model({1, 1, 2, 3}, align, {1, 2, 3}), {theta})[0], {1, 2, 3, 2},
                 want, 1e-6, 1e-6, "reference interpreter");
  }
}

TEST(ImportAffineGrid, IdentityGridSamplesTheInputBack) {
  // AffineGrid of the identity, then linear GridSample with the same
  // align_corners, lands on every pixel's center: y == x (2-D and 3-D).
  for (int k : {2, 3}) {
    for (bool align : {false, true}) {
      std::vector<int64_t> size = {2, 3, 4, 5};
      if (k == 3) size.insert(size.begin() + 2, 3);
      std::vector<double> identity;
      for (int r = 0; r < k; ++r)
        for (int col = 0; col <= k; ++col)
          identity.push_back(r == col ? 1 : 0);
      std::vector<double> thetas = identity;
      thetas.insert(thetas.end(), identity.begin(), identity.end());
      std::vector<Dim> x_dims;
      for (int64_t d : size)
        x_dims.push_back(d);
      ModelBuilder m(20);
      m.input("theta", kF32, {2, k, k + 1})
          .input("x", kF32, x_dims)
          .initializer(ints("size", size))
          .node("AffineGrid", {"theta", "size"}, {"grid"},
                {attr("align_corners", static_cast<int64_t>(align))})
          .node("GridSample", {"x", "grid"}, {"y"},
                {attr("mode", "linear"), attr("align_corners", static_cast<int64_t>(align))})
          .output("y");
      auto exe = compile_two_threads(m.import());
      const HostTensor x = random_host(DType::f32, size, static_cast<uint64_t>(20 + k));
      const HostTensor theta = host(DType::f32, {2, k, k + 1}, thetas);
      expect_close(exe->run(std::vector<HostTensor>{theta, x})[0], size, values_of(x), 1e-5, 1e-5,
                   fmt::format("k={} align {}", k, align));
    }
  }
}

struct Col2ImCase {
  std::vector<int64_t> image, block, dilations, pads, strides;
};

/// Col2Im by scattering every column element, as the reference does.
std::vector<double> reference_col2im(const HostTensor& x, const Col2ImCase& c) {
  const size_t k = c.image.size();
  std::vector<int64_t> blocks(k);
  int64_t kernel = 1, positions = 1, image = 1;
  for (size_t i = 0; i < k; ++i) {
    blocks[i] = (c.image[i] + c.pads[i] + c.pads[k + i] - c.dilations[i] * (c.block[i] - 1) - 1) /
                    c.strides[i] +
                1;
    kernel *= c.block[i];
    positions *= blocks[i];
    image *= c.image[i];
  }
  const int64_t planes = x.shape()[0] * (x.shape()[1] / kernel);
  std::vector<double> out(static_cast<size_t>(planes * image), 0.0);
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t o = 0; o < kernel; ++o)
      for (int64_t q = 0; q < positions; ++q) {
        int64_t rest_o = o, rest_q = q, p = 0, scale = 1;
        bool inside = true;
        for (size_t i = k; i-- > 0;) {
          const int64_t oi = rest_o % c.block[i], qi = rest_q % blocks[i];
          rest_o /= c.block[i];
          rest_q /= blocks[i];
          const int64_t at = qi * c.strides[i] - c.pads[i] + oi * c.dilations[i];
          inside = inside && at >= 0 && at < c.image[i];
          p += at * scale;
          scale *= c.image[i];
        }
        if (inside)
          out[static_cast<size_t>(plane * image + p)] +=
              x.get_f64((plane * kernel + o) * positions + q);
      }
  return out;
}

TEST(ImportCol2Im, OneTwoAndThreeSpatialDimsWithASymbolicBatch) {
  const Col2ImCase cases[] = {
      {{7}, {3}, {1}, {1, 0}, {2}},
      {{5, 6}, {2, 3}, {1, 1}, {0, 1, 1, 0}, {1, 2}},
      {{6, 5}, {3, 2}, {2, 1}, {1, 1, 2, 0}, {2, 1}},  // dilated, blocks overlapping unevenly
      {{3, 4, 3}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 1, 0}, {1, 2, 1}},
  };
  uint64_t seed = 40;
  for (const Col2ImCase& c : cases) {
    const size_t k = c.image.size();
    int64_t kernel = 1, positions = 1;
    for (size_t i = 0; i < k; ++i) {
      kernel *= c.block[i];
      positions *=
          (c.image[i] + c.pads[i] + c.pads[k + i] - c.dilations[i] * (c.block[i] - 1) - 1) /
              c.strides[i] +
          1;
    }
    const std::string what =
        fmt::format("image [{}] block [{}]", fmt::join(c.image, ","), fmt::join(c.block, ","));
    for (int64_t channels : {1, 3}) {
      ModelBuilder mc(18);
      mc.input("x", kF32, {"N", channels * kernel, positions})
          .initializer(ints("image", c.image))
          .initializer(ints("block", c.block))
          .node("Col2Im", {"x", "image", "block"}, {"y"},
                {attr("dilations", c.dilations), attr("pads", c.pads), attr("strides", c.strides)})
          .output("y");
      auto exe = compile_two_threads(mc.import());
      for (int64_t n : {1, 2}) {
        const HostTensor x = random_host(DType::f32, {n, channels * kernel, positions}, seed++);
        std::vector<int64_t> shape = {n, channels};
        shape.insert(shape.end(), c.image.begin(), c.image.end());
        expect_close(exe->run(std::vector<HostTensor>{x})[0], shape, reference_col2im(x, c), 1e-5,
                     1e-5, fmt::format("{} N={} C={}", what, n, channels));
      }
    }
  }
}

TEST(ImportGridSample, BadNodes) {
  const auto error = [](const std::vector<Dim>& x, const std::vector<Dim>& g,
                        std::vector<onnx::AttributeProto> attrs) {
    ModelBuilder m(20);
    m.input("x", kF32, x).input("grid", kF32, g).node("GridSample", {"x", "grid"}, {"y"}, attrs);
    m.output("y");
    return import_error(m);
  };
  EXPECT_THAT(error({1, 1, 4, 4}, {1, 3, 3, 3}, {}), HasSubstr("grid must be [N, O1..Ok, k]"));
  EXPECT_THAT(error({1, 1, 4, 4}, {2, 3, 3, 2}, {}), HasSubstr("grid batch 2 differs"));
  EXPECT_THAT(error({1, 1, 4, 4}, {1, 3, 3, 2}, {attr("mode", "area")}),
              HasSubstr("mode 'area' is not one of nearest, linear (bilinear), cubic (bicubic)"));
  EXPECT_THAT(error({1, 1, 4, 4}, {1, 3, 3, 2}, {attr("padding_mode", "wrap")}),
              HasSubstr("padding_mode 'wrap' is not one of zeros, border, reflection"));
  ModelBuilder m(20);
  m.input("theta", kF32, {1, 2, 3})
      .input("size", kI64, {4})
      .node("AffineGrid", {"theta", "size"}, {"grid"})
      .output("grid");
  EXPECT_THAT(import_error(m), HasSubstr("size"));
  ModelBuilder m3(20);
  m3.input("theta", kF32, {1, 2, 3})
      .initializer(ints("size", {1, 1, 2, 2, 2}))
      .node("AffineGrid", {"theta", "size"}, {"grid"})
      .output("grid");
  EXPECT_THAT(import_error(m3), HasSubstr("theta f32[1, 2, 3] must be [N, 3, 4]"));
  const auto col2im_error = [](const std::vector<Dim>& x) {
    ModelBuilder m(18);
    m.input("x", kF32, x)
        .initializer(ints("image", {4, 4}))
        .initializer(ints("block", {2, 2}))
        .node("Col2Im", {"x", "image", "block"}, {"y"})
        .output("y");
    return import_error(m);
  };
  EXPECT_THAT(col2im_error({1, 8, 9}), HasSubstr("no error"));
  EXPECT_THAT(col2im_error({1, 8, 10}), HasSubstr("must be [N, C * 4, 9] (the block positions)"));
  EXPECT_THAT(col2im_error({1, 6, 9}),
              HasSubstr("input dim 1 (6) is not a multiple of the block size 4"));
  EXPECT_THAT(col2im_error({1, "CK", 9}), HasSubstr("unsupported: "));
}

}  // namespace import_sample_test_local
}  // namespace autofuse::frontend::testing
