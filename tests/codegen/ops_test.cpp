// Every elementwise op for every dtype it takes, and every cast pair, on
// edge values (signed zeros, denormals, infinities, NaN, integer extremes,
// zero divisors), against the reference. Binary ops see every pair of
// values: x[i] = pool[i / P], y[i] = pool[i % P].
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/ref/random.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace ops_test_local {

using ::testing::HasSubstr;

sym::Expr S(const char* name) {
  return sym::Expr::symbol(name);
}

std::vector<double> pool(DType dt) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (dt) {
    case DType::boolean:
      return {0, 1};
    case DType::i4:
      return {0, 1, -1, 2, -2, 3, -7, 7, -8, 5};
    case DType::u4:
      return {0, 1, 2, 3, 7, 8, 9, 14, 15};
    case DType::u8:
      return {0, 1, 2, 3, 7, 8, 100, 127, 128, 200, 254, 255};
    case DType::i16:
      return {0, 1, -1, 2, -2, 3, -7, 15, 300, -300, 32767, -32768, 257};
    case DType::u16:
      return {0, 1, 2, 3, 7, 15, 255, 256, 1000, 32768, 65534, 65535};
    case DType::u32:
      return {0, 1, 2, 3, 7, 31, 65536, 100000, 2147483648.0, 4294967294.0, 4294967295.0};
    case DType::u64:  // stored with set_f64: exact up to 2^64 - 1 (the last value)
      return {0,
              1,
              2,
              3,
              7,
              63,
              64,
              4e12,
              9007199254740992.0,
              9223372036854775808.0,
              1.8e19,
              18446744073709551615.0};
    case DType::i8:
      return {0, 1, -1, 2, -2, 3, -7, 8, 100, -100, 127, -128, -127};
    case DType::i32:
      return {0, 1, -1, 2, -2, 3, -7, 31, 100000, -100000, 2147483647.0, -2147483648.0, 65537};
    case DType::i64:
      return {0,
              1,
              -1,
              2,
              -2,
              3,
              -7,
              63,
              4e12,
              -4e12,
              9007199254740992.0,
              -9223372036854775808.0,
              9223372036854775807.0};
    default:
      return {0.0,   -0.0,  1.0,  -1.0,  0.5,    -0.5,  1.5,     2.5,  -2.5,  3.0,
              7.25,  -0.75, 1e-3, 1e-40, -3e-39, 65504, 70000.0, 1e30, -1e30, 300.7,
              -1e10, inf,   -inf, NAN,   0.999,  88.5,  -103.5,  1e5};
  }
}

/// Unary inputs: the pool, repeated. Binary and where: every pair.
std::vector<HostTensor> pool_inputs(const Graph& g, const sym::Binding& binding) {
  std::vector<HostTensor> out = random_inputs(g, binding, 7);
  const bool pairs = g.inputs().size() >= 2;
  for (size_t k = 0; k < out.size(); ++k) {
    HostTensor& t = out[k];
    if (t.dtype() == DType::boolean && pairs && g.inputs().size() == 3)
      continue;  // where: random cond
    const std::vector<double> p = pool(t.dtype());
    const int64_t size = static_cast<int64_t>(p.size());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t j = !pairs ? i % size : (k + 1 == out.size() ? i % size : (i / size) % size);
      if (t.dtype() == DType::u64) {
        t.set_f64(i, p[static_cast<size_t>(j)]);
      } else if (is_integer(t.dtype())) {
        // Exact for the int64 extremes (a double cannot hold INT64_MAX).
        const double v = p[static_cast<size_t>(j)];
        t.set_i64(i, v >= 9.2e18    ? std::numeric_limits<int64_t>::max()
                     : v <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                                    : static_cast<int64_t>(v));
      } else {
        t.set_f64(i, p[static_cast<size_t>(j)]);
      }
    }
  }
  return out;
}

bool accepts(OpKind op, DType dt) {
  switch (op_info(op).dtype_rule) {
    case DTypeRule::FloatSame:
    case DTypeRule::FloatToBool:
      return is_float(dt);
    case DTypeRule::NumericSame:
      return is_numeric(dt);
    case DTypeRule::BoolOrIntSame:
      return dt == DType::boolean || is_integer(dt);
    case DTypeRule::AnyToBool:
      return true;
    default:
      return false;
  }
}

/// Tolerance of an op's result: exact where the kernel computes the same
/// operation as the reference; the transcendental functions are our own
/// polynomials (a few ulp, tests/codegen/prelude_test.cpp).
double op_rtol(OpKind op, DType dt) {
  using enum OpKind;
  const bool approx =
      op == Exp || op == Log || op == Sin || op == Cos || op == Tanh || op == Sigmoid || op == Erf;
  if (!approx || dt == DType::f64) return 0;
  if (dt == DType::f16) return 1e-3;   // one f16 ulp: the f32 values may round differently
  if (dt == DType::bf16) return 8e-3;  // one bf16 ulp
  if (dt == DType::f8e4m3fn || dt == DType::f8e4m3fnuz) return 0.125;  // one e4m3 ulp
  if (dt == DType::f8e5m2 || dt == DType::f8e5m2fnuz) return 0.25;     // one e5m2 ulp
  return 5e-7;                                                         // 4 f32 ulp
}

std::vector<sym::Binding> pool_binding(DType dt, bool pairs) {
  const int64_t p = static_cast<int64_t>(pool(dt).size());
  return {{{"N", pairs ? p * p : p}}, {{"N", pairs ? p * p + 5 : 3 * p + 1}}};
}

TEST(Ops, UnaryEveryDtype) {
  std::vector<GraphCase> cases;
  for (OpKind op : all_ops()) {
    if (op_info(op).op_class != OpClass::Unary) continue;
    for (DType dt : kAllDTypes) {
      if (!accepts(op, dt)) continue;
      const std::string name = fmt::format("{}_{}", op_name(op), dtype_name(dt));
      GraphBuilder b(name);
      Tensor x = b.input("x", dt, {S("N")});
      Tensor y = b.unary(op, x);
      const double tol = op_rtol(op, dt);
      cases.push_back(
          {name, std::move(b).build({y}), pool_binding(dt, false), tol, tol * 1e-30, pool_inputs});
    }
  }
  check_cases(cases);
}

TEST(Ops, BinaryEveryDtype) {
  std::vector<GraphCase> cases;
  for (OpKind op : all_ops()) {
    if (op_info(op).op_class != OpClass::Binary) continue;
    for (DType dt : kAllDTypes) {
      if (!accepts(op, dt)) continue;
      const std::string name = fmt::format("{}_{}", op_name(op), dtype_name(dt));
      GraphBuilder b(name);
      Tensor x = b.input("x", dt, {S("N")});
      Tensor y = b.input("y", dt, {S("N")});
      Tensor z = b.binary(op, x, y);
      cases.push_back({name, std::move(b).build({z}), pool_binding(dt, true), 0, 0, pool_inputs});
    }
  }
  for (DType dt : kAllDTypes) {
    const std::string name = fmt::format("where_{}", dtype_name(dt));
    GraphBuilder b(name);
    Tensor c = b.input("c", DType::boolean, {S("N")});
    Tensor x = b.input("x", dt, {S("N")});
    Tensor y = b.input("y", dt, {S("N")});
    Tensor z = b.where(c, x, y);
    cases.push_back({name, std::move(b).build({z}), pool_binding(dt, true), 0, 0, pool_inputs});
  }
  check_cases(cases);
}

TEST(Ops, MaxMinWithConstants) {
  // A bound that is a constant, not NaN, takes one compare and one blend
  // (af_fmax_vk & co.): the same results as the general form on every pool
  // value (NaN stays, signed zeros and equal values as the reference), with
  // the constant first or second; a NaN constant keeps the general form.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> bounds = {0.0, -0.0, 1.5, -2.5, inf, -inf, 1e-40, 65504, NAN};
  std::vector<GraphCase> cases;
  for (DType dt : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const std::string name = fmt::format("clamps_{}", dtype_name(dt));
    GraphBuilder b(name);
    Tensor x = b.input("x", dt, {S("N")});
    std::vector<Tensor> outs;
    for (double k : bounds) {
      const Tensor c = b.scalar(k, dt);
      for (OpKind op : {OpKind::Max, OpKind::Min}) {
        outs.push_back(b.binary(op, x, c));
        outs.push_back(b.binary(op, c, x));
      }
    }
    cases.push_back({name, std::move(b).build(outs), pool_binding(dt, false), 0, 0, pool_inputs});
  }
  const std::string code = check_cases(cases);
  for (const char* helper : {"af_fmax_vk(", "af_fmax_kv(", "af_fmin_vk(", "af_fmin_kv("})
    EXPECT_THAT(code, HasSubstr(helper));
  EXPECT_THAT(code, HasSubstr("= af_fmax("));  // the NaN bound
  EXPECT_THAT(code, HasSubstr("= af_fmin("));
}

TEST(Ops, EveryCastPair) {
  std::vector<GraphCase> cases;
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      if (from == to) continue;
      const std::string name = fmt::format("cast_{}_{}", dtype_name(from), dtype_name(to));
      GraphBuilder b(name);
      Tensor x = b.input("x", from, {S("N")});
      // Through an op, so the cast is not elided into the load or store:
      // f32 <-> f16 casts inside a kernel must round exactly like the reference.
      Tensor y = b.cast(x, to);
      Tensor z = is_bool(to) ? b.unary(OpKind::Not, y) : b.binary(OpKind::Max, y, y);
      cases.push_back(
          {name, std::move(b).build({y, z}), pool_binding(from, false), 0, 0, pool_inputs});
    }
  }
  check_cases(cases);
}

TEST(Ops, ScalarsAndIota) {
  std::vector<GraphCase> cases;
  for (DType dt : kAllDTypes) {
    if (is_bool(dt)) continue;  // iota is numeric
    const std::string name = fmt::format("iota_scalar_{}", dtype_name(dt));
    GraphBuilder b(name);
    Tensor x = b.input("x", dt, {S("N"), S("D")});
    Tensor i0 = b.iota(dt, {S("N"), S("D")}, 0);
    Tensor i1 = b.iota(dt, {S("N"), S("D")}, 1);
    Tensor y = b.binary(OpKind::Max, b.binary(OpKind::Min, x, i0), i1);
    Tensor z = b.binary(OpKind::Sub, y, b.scalar(is_float(dt) ? 0.1 : 3, dt));
    cases.push_back({name,
                     std::move(b).build({z}),
                     {{{"N", 3}, {"D", 5}}, {{"N", 300}, {"D", 301}}, {{"N", 1}, {"D", 1}}},
                     dt == DType::bf16 ? 8e-3 : 1e-3,
                     0});
  }
  check_cases(cases);
}

}  // namespace ops_test_local
}  // namespace autofuse::codegen_test
