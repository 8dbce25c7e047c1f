// MaxPool, AveragePool, LpPool and GlobalLpPool (convert_pool.cpp) against
// pools computed here in double from the operator docs: kernels, strides,
// dilations, explicit and automatic pads, ceil_mode (the opset-22 rule),
// count_include_pad, every accepted dtype, on the reference interpreter and
// compiled; symbolic sizes; a Relu -> MaxPool block compiles once and
// matches on many shapes; what is not implemented is an UnsupportedError.
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/runtime/executable.h"
#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_pool_test_local {

using ::testing::HasSubstr;

enum class Kind { Max, Average, Lp };

struct Pool2d {
  std::vector<int64_t> kernel{2, 2}, strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};
  bool ceil = false, include_pad = false;
  int64_t p = 2;

  std::vector<onnx::AttributeProto> attrs(Kind kind) const {
    std::vector<onnx::AttributeProto> a = {attr("kernel_shape", kernel), attr("strides", strides),
                                           attr("pads", pads),
                                           attr("ceil_mode", int64_t{ceil ? 1 : 0})};
    if (dilations != std::vector<int64_t>{1, 1}) a.push_back(attr("dilations", dilations));
    if (kind == Kind::Average) a.push_back(attr("count_include_pad", int64_t{include_pad}));
    if (kind == Kind::Lp) a.push_back(attr("p", p));
    return a;
  }
};

/// Output length of one axis: floor (or ceil, dropping a window that would
/// start in the end padding) of (P - span) / s, plus 1.
int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil) {
  const int64_t padded = in + pb + pe, span = d * (k - 1) + 1;
  if (!ceil) return (padded - span) / s + 1;
  int64_t out = (padded - span + s - 1) / s + 1;
  if ((out - 1) * s >= in + pb) --out;
  return out;
}

/// A 2-D pool in double, from the operator docs.
std::vector<double> pool2d(const HostTensor& x, Kind kind, const Pool2d& p,
                           std::vector<int64_t>& shape) {
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t oh =
      out_len(h, p.kernel[0], p.strides[0], p.dilations[0], p.pads[0], p.pads[2], p.ceil);
  const int64_t ow =
      out_len(w, p.kernel[1], p.strides[1], p.dilations[1], p.pads[1], p.pads[3], p.ceil);
  shape = {n, c, oh, ow};
  std::vector<double> out;
  for (int64_t plane = 0; plane < n * c; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double acc = kind == Kind::Max ? -std::numeric_limits<double>::infinity() : 0;
        int64_t counted = 0;
        for (int64_t u = 0; u < p.kernel[0]; ++u)
          for (int64_t v = 0; v < p.kernel[1]; ++v) {
            const int64_t y = i * p.strides[0] - p.pads[0] + u * p.dilations[0];
            const int64_t z = j * p.strides[1] - p.pads[1] + v * p.dilations[1];
            const bool inside = y >= 0 && y < h && z >= 0 && z < w;
            // count_include_pad counts every tap, ceil_mode's extras too (the
            // ONNX reference; PyTorch would leave the extras out).
            if (inside || p.include_pad) ++counted;
            if (!inside) continue;
            const double value = x.get_f64((plane * h + y) * w + z);
            if (kind == Kind::Max) acc = std::max(acc, value);
            if (kind == Kind::Average) acc += value;
            if (kind == Kind::Lp) acc += std::pow(std::abs(value), static_cast<double>(p.p));
          }
        if (kind == Kind::Average) acc /= static_cast<double>(counted);
        if (kind == Kind::Lp) acc = std::pow(acc, 1.0 / static_cast<double>(p.p));
        out.push_back(acc);
      }
  return out;
}

const char* op_of(Kind kind) {
  return kind == Kind::Max ? "MaxPool" : kind == Kind::Average ? "AveragePool" : "LpPool";
}

/// The reference and the compiled model both match pool2d.
void expect_pool(Kind kind, DType dt, const std::vector<int64_t>& x_shape, const Pool2d& p,
                 uint64_t seed) {
  OneNode n{op_of(kind)};
  n.opset = 22;
  const double lo = dt == DType::u8 ? 0 : dt == DType::i8 ? -120 : -3;
  const double hi = dt == DType::u8 ? 250 : dt == DType::i8 ? 120 : 3;
  n.inputs = {random_host(dt, x_shape, seed, lo, hi)};
  n.attrs = p.attrs(kind);
  std::vector<int64_t> shape;
  const std::vector<double> want = pool2d(n.inputs[0], kind, p, shape);
  const std::string what =
      fmt::format("{} {} x [{}] kernel [{}] strides [{}] dilations [{}] pads [{}]{}{}", op_of(kind),
                  dtype_name(dt), fmt::join(x_shape, ","), fmt::join(p.kernel, ","),
                  fmt::join(p.strides, ","), fmt::join(p.dilations, ","), fmt::join(p.pads, ","),
                  p.ceil ? " ceil" : "", p.include_pad ? " include_pad" : "");
  // Max is exact; sums round once per op in f32, then to the dtype.
  const double tol = kind == Kind::Max ? 0 : dt == DType::f32 ? 1e-5 : rtol_of(dt);
  expect_close(n.run()[0], shape, want, tol, tol, what + " (reference)");
  expect_close(compile_two_threads(n.import())->run(n.graph_inputs())[0], shape, want, tol, tol,
               what + " (compiled)");
}

Pool2d pool(std::vector<int64_t> kernel, std::vector<int64_t> strides,
            std::vector<int64_t> pads = {0, 0, 0, 0}, std::vector<int64_t> dilations = {1, 1}) {
  Pool2d p;
  p.kernel = std::move(kernel);
  p.strides = std::move(strides);
  p.pads = std::move(pads);
  p.dilations = std::move(dilations);
  return p;
}

std::vector<Pool2d> geometries() {
  std::vector<Pool2d> out = {
      pool({2, 2}, {2, 2}),
      pool({3, 3}, {2, 2}, {1, 1, 1, 1}),          // ResNet's stem pool
      pool({3, 2}, {1, 3}, {0, 1, 2, 0}),          // asymmetric
      pool({2, 3}, {2, 1}, {1, 0, 0, 1}, {2, 2}),  // dilated
      pool({5, 5}, {3, 3}, {2, 2, 2, 2}),
  };
  Pool2d ceil = pool({3, 3}, {2, 2});
  ceil.ceil = true;
  out.push_back(ceil);
  Pool2d ceil_pads = pool({2, 2}, {2, 2}, {1, 1, 1, 1});  // a window would start in the end pad
  ceil_pads.ceil = true;
  out.push_back(ceil_pads);
  return out;
}

/// Every geometry in f32; in the other dtypes (each a compile) the stem
/// pool and both ceil_mode cases.
bool runs(DType dt, size_t geometry) {
  return dt == DType::f32 || geometry == 1 || geometry >= 5;
}

TEST(ImportPool, MaxPoolEveryDtype) {
  uint64_t seed = 1;
  for (DType dt : {DType::f32, DType::f16, DType::bf16, DType::u8, DType::i8})
    for (size_t g = 0; g < geometries().size(); ++g)
      if (runs(dt, g)) expect_pool(Kind::Max, dt, {2, 3, 9, 8}, geometries()[g], seed++);
}

TEST(ImportPool, AveragePoolCountsPadsAsAsked) {
  uint64_t seed = 100;
  for (DType dt : {DType::f32, DType::bf16})
    for (bool include_pad : {false, true})
      for (size_t g = 0; g < geometries().size(); ++g) {
        if (!runs(dt, g)) continue;
        Pool2d p = geometries()[g];
        p.include_pad = include_pad;
        expect_pool(Kind::Average, dt, {1, 2, 11, 7}, p, seed++);
      }
}

TEST(ImportPool, LpPoolOrders) {
  uint64_t seed = 200;
  for (int64_t order : {1, 2, 3})
    for (Pool2d p : {pool({2, 2}, {2, 2}), pool({3, 3}, {1, 2}, {1, 1, 1, 1})}) {
      p.p = order;
      expect_pool(Kind::Lp, DType::f32, {2, 2, 7, 6}, p, seed++);
    }
}

TEST(ImportPool, GlobalLpPool) {
  OneNode n{"GlobalLpPool"};
  n.inputs = {host(DType::f32, {1, 2, 2, 2}, {3, 4, 0, 0, 1, -1, 1, -1})};
  expect_close(n.run()[0], {1, 2, 1, 1}, {5, 2}, 1e-6, 1e-6, "p = 2");
  n.attrs = {attr("p", int64_t{1})};
  expect_close(n.run()[0], {1, 2, 1, 1}, {7, 4}, 1e-6, 1e-6, "p = 1");
}

TEST(ImportPool, OneAndThreeSpatialAxes) {
  // 1-D: [1, 1, 5], kernel 2, stride 2, ceil: windows [0,1], [2,3], [4].
  OneNode one{"MaxPool"};
  one.inputs = {host(DType::f32, {1, 1, 5}, {1, 5, 2, -3, 4})};
  one.attrs = {attr("kernel_shape", std::vector<int64_t>{2}),
               attr("strides", std::vector<int64_t>{2}), attr("ceil_mode", int64_t{1})};
  expect_close(one.run()[0], {1, 1, 3}, {5, 2, 4}, 0, 0, "1-D max");
  // 3-D average of a 2x2x2 cube: its mean.
  OneNode three{"AveragePool"};
  three.inputs = {host(DType::f32, {1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})};
  three.attrs = {attr("kernel_shape", std::vector<int64_t>{2, 2, 2})};
  expect_close(three.run()[0], {1, 1, 1, 1, 1}, {4.5}, 1e-6, 0, "3-D average");
}

TEST(ImportPool, AutoPadOnSymbolicSizesAndReluMaxPoolBlock) {
  ModelBuilder m(17);
  m.input("x", kF32, {"N", 3, "H", "W"})
      .node("Relu", {"x"}, {"r"})
      .node("MaxPool", {"r"}, {"y"},
            {attr("kernel_shape", std::vector<int64_t>{3, 3}), attr("auto_pad", "SAME_UPPER")})
      .output("y");
  const OnnxModel model = m.import();
  auto exe = compile_two_threads(model);
  uint64_t seed = 300;
  for (auto [n, h, w] : {std::array<int64_t, 3>{1, 1, 1}, {2, 5, 7}, {1, 31, 17}, {3, 64, 65}}) {
    const HostTensor x = random_host(DType::f32, {n, 3, h, w}, seed++);
    HostTensor relu = x;
    for (int64_t i = 0; i < relu.numel(); ++i)
      relu.set_f64(i, std::max(0.0, x.get_f64(i)));
    std::vector<int64_t> shape;
    const std::vector<double> want =
        pool2d(relu, Kind::Max, pool({3, 3}, {1, 1}, {1, 1, 1, 1}), shape);
    expect_close(exe->run(std::vector<HostTensor>{x})[0], shape, want, 0, 0,
                 fmt::format("N={} H={} W={}", n, h, w));
  }
  // One module for every shape (compiled, or loaded from the shared cache).
  EXPECT_EQ(exe->report().jit.compiles + exe->report().jit.cache_hits, 1);
}

/// MaxPool's Indices in the reference's scan: windows in row-major order, a
/// data element replacing the best only when strictly greater, padding
/// skipped; storage_order 1 numbers the spatial positions column-major.
std::vector<double> max_pool_indices(const HostTensor& x, const Pool2d& p, int64_t order) {
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t oh =
      out_len(h, p.kernel[0], p.strides[0], p.dilations[0], p.pads[0], p.pads[2], p.ceil);
  const int64_t ow =
      out_len(w, p.kernel[1], p.strides[1], p.dilations[1], p.pads[1], p.pads[3], p.ceil);
  std::vector<double> out;
  for (int64_t plane = 0; plane < n * c; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = 0;
        int64_t at = -1;
        for (int64_t u = 0; u < p.kernel[0]; ++u)
          for (int64_t v = 0; v < p.kernel[1]; ++v) {
            const int64_t y = i * p.strides[0] - p.pads[0] + u * p.dilations[0];
            const int64_t z = j * p.strides[1] - p.pads[1] + v * p.dilations[1];
            if (y < 0 || y >= h || z < 0 || z >= w) continue;
            const double value = x.get_f64((plane * h + y) * w + z);
            if (at < 0 || value > best) {
              best = value;
              at = plane * h * w + (order == 0 ? y * w + z : y + z * h);
            }
          }
        out.push_back(static_cast<double>(at));
      }
  return out;
}

TEST(ImportPool, MaxPoolIndicesFirstMaximumInBothStorageOrders) {
  // Values from {-inf, -1, 0, 1}: many ties, and windows whose data is all
  // -inf next to the padding (which must never be the index).
  uint64_t seed = 300;
  for (size_t g = 0; g < geometries().size(); ++g) {
    for (int64_t order : {0, 1}) {
      HostTensor x = random_host(DType::f32, {2, 2, 7, 6}, seed++, -1.5, 1.5);
      for (int64_t e = 0; e < x.numel(); ++e) {
        const double v = std::round(x.get_f64(e));
        x.set_f64(e, v < -1 ? -std::numeric_limits<double>::infinity() : v);
      }
      OneNode n{"MaxPool"};
      n.opset = 22;
      n.inputs = {x};
      n.attrs = geometries()[g].attrs(Kind::Max);
      n.attrs.push_back(attr("storage_order", order));
      n.num_outputs = 2;
      std::vector<int64_t> shape;
      const std::vector<double> values = pool2d(x, Kind::Max, geometries()[g], shape);
      const std::vector<double> want = max_pool_indices(x, geometries()[g], order);
      const std::string what = fmt::format("geometry {} storage_order {}", g, order);
      const std::vector<HostTensor> ref = n.run();
      expect_close(ref[0], shape, values, 0, 0, what + " values (reference)");
      EXPECT_EQ(ref[1].dtype(), DType::i64) << what;
      expect_close(ref[1], shape, want, 0, 0, what + " indices (reference)");
      if (g % 2 == 1) continue;  // compiled: every other geometry (each a compile)
      const std::vector<HostTensor> got = compile_two_threads(n.import())->run(n.graph_inputs());
      expect_close(got[0], shape, values, 0, 0, what + " values (compiled)");
      expect_close(got[1], shape, want, 0, 0, what + " indices (compiled)");
    }
  }
}

TEST(ImportPool, BadOrUnimplementedNodes) {
  OneNode n{"MaxPool"};
  n.inputs = {host(DType::f32, {1, 1, 4, 4}, std::vector<double>(16, 1.0))};
  n.attrs = {attr("kernel_shape", std::vector<int64_t>{2, 2})};
  n.num_outputs = 2;
  n.attrs.push_back(attr("storage_order", int64_t{2}));
  EXPECT_THAT(import_error(n), HasSubstr("storage_order 2 is not 0 (row major) or 1"));
  n.num_outputs = 1;
  n.attrs = {attr("kernel_shape", std::vector<int64_t>{2})};
  EXPECT_THAT(import_error(n), HasSubstr("need 2 entries (one per spatial axis), got 1"));
  n.attrs = {};
  EXPECT_THAT(import_error(n), HasSubstr("kernel_shape"));
  // ceil_mode's last window starting in the end padding: defined from opset 22.
  n.opset = 21;
  n.attrs = {attr("kernel_shape", std::vector<int64_t>{2, 2}),
             attr("strides", std::vector<int64_t>{2, 2}),
             attr("pads", std::vector<int64_t>{0, 0, 1, 1}), attr("ceil_mode", int64_t{1})};
  EXPECT_THAT(import_error(n), HasSubstr("unsupported: "));
  EXPECT_THAT(import_error(n), HasSubstr("starts in the end padding"));
  OneNode avg{"AveragePool"};
  avg.inputs = {host(DType::i32, {1, 1, 4, 4}, std::vector<double>(16, 1.0))};
  avg.attrs = {attr("kernel_shape", std::vector<int64_t>{2, 2})};
  EXPECT_THAT(import_error(avg), HasSubstr("X has dtype i32; a float is needed"));
}

TEST(ImportPool, CeilModeWithStrideOnASymbolicSizeIsUnsupported) {
  ModelBuilder m(17);
  m.input("x", kF32, {"N", 3, "H", 8})
      .node("MaxPool", {"x"}, {"y"},
            {attr("kernel_shape", std::vector<int64_t>{3, 3}),
             attr("strides", std::vector<int64_t>{2, 2}), attr("ceil_mode", int64_t{1})})
      .output("y");
  try {
    m.import();
    FAIL() << "expected an error";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("ceil_mode with stride 2 on spatial axis 0 of symbolic size H"));
  }
}

}  // namespace import_pool_test_local
}  // namespace autofuse::frontend::testing
