// Cases for the four float8 types: ops compute in f32 and round each result
// to the type (nearest even; overflow is inf in f8e5m2 and NaN in the types
// without inf; the FNUZ types have no -0), and cast follows ONNX's
// `saturate`. Exact results are written as math values (each rounded once
// by the tensor helpers); where the rounding is the point, the rounded
// value is written out. Grid reminders: e4m3 has 3 mantissa bits (spacing
// 0.125 in [1, 2)), e5m2 has 2 (spacing 0.25); max finite: e4m3fn 448,
// e4m3fnuz 240, e5m2 and e5m2fnuz 57344.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ref/op_cases.h"

namespace autofuse::testing {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_e4m3(DType dt) {
  return dt == DType::f8e4m3fn || dt == DType::f8e4m3fnuz;
}
bool is_fnuz(DType dt) {
  return dt == DType::f8e4m3fnuz || dt == DType::f8e5m2fnuz;
}

OpCase make(OpKind op, DType dt, const std::string& tag, std::vector<HostTensor> in,
            HostTensor want) {
  return OpCase{fmt::format("{}_{}_{}", op_name(op), dtype_name(dt), tag),
                op,
                NoAttrs{},
                std::move(in),
                {std::move(want)}};
}

/// The same inputs and exact results in every float8 type (rounded once).
void unary_case(std::vector<OpCase>& c, OpKind op, const std::vector<double>& in,
                const std::vector<double>& want) {
  for (DType dt : kFloat8Types)
    c.push_back(make(op, dt, "values", {vec(dt, in)}, vec(dt, want)));
}
void binary_case(std::vector<OpCase>& c, OpKind op, const std::vector<double>& a,
                 const std::vector<double>& b, const std::vector<double>& want) {
  for (DType dt : kFloat8Types)
    c.push_back(make(op, dt, "values", {vec(dt, a), vec(dt, b)}, vec(dt, want)));
}

OpCase cast(const std::string& tag, HostTensor in, HostTensor want, bool saturate = true) {
  std::string label =
      fmt::format("cast_{}_to_{}_{}", dtype_name(in.dtype()), dtype_name(want.dtype()), tag);
  const DType to = want.dtype();
  return OpCase{label, OpKind::Cast, CastAttrs{to, saturate}, {std::move(in)}, {std::move(want)}};
}

void unary_cases(std::vector<OpCase>& c) {
  using enum OpKind;
  // No infinities here: e4m3fn and the FNUZ types have none.
  unary_case(c, Neg, {1.5, -2, 0.25, kNan}, {-1.5, 2, -0.25, kNan});
  unary_case(c, Abs, {-1.5, 2, -0.0, kNan}, {1.5, 2, 0, kNan});
  unary_case(c, Exp, {0, -1, 0.5}, {1, 0.36787944117144233, 1.6487212707001282});
  unary_case(c, Log, {1, 2, 0, -1}, {0, 0.6931471805599453, -kInf, kNan});
  unary_case(c, Sqrt, {4, 2, 0.25, -1}, {2, 1.4142135623730951, 0.5, kNan});
  unary_case(c, Rsqrt, {4, 0.25, 2}, {0.5, 2, 0.7071067811865476});
  unary_case(c, Reciprocal, {2, -4, 3}, {0.5, -0.25, 1.0 / 3.0});
  unary_case(c, Sin, {0, 1, -0.5}, {0, 0.8414709848078965, -0.479425538604203});
  unary_case(c, Cos, {0, 1, -0.5}, {1, 0.5403023058681398, 0.8775825618903728});
  unary_case(c, Tanh, {0, 1, -2}, {0, 0.7615941559557649, -0.9640275800758169});
  unary_case(c, Sigmoid, {0, 1, -1}, {0.5, 0.7310585786300049, 0.2689414213699951});
  unary_case(c, Erf, {0, 1, -0.5}, {0, 0.8427007929497149, -0.5204998778130465});
  unary_case(c, Floor, {1.5, -1.5, -0.5, 2}, {1, -2, -1, 2});
  unary_case(c, Ceil, {1.5, -1.5, 2.5, 2}, {2, -1, 3, 2});
  unary_case(c, Round, {0.5, 1.5, 2.5, -1.5}, {0, 2, 2, -2});  // half to even
  unary_case(c, Relu, {-1, 2.5, 0, kNan}, {0, 2.5, 0, kNan});
  unary_case(c, Sign, {3, -0.5, 0, kNan}, {1, -1, 0, kNan});
  for (DType dt : kFloat8Types) {
    const double big = dt == DType::f8e5m2 ? kInf : 448;  // e4m3fnuz: 448 is NaN
    c.push_back(make(IsNan, dt, "values", {vec(dt, {kNan, 1, -0.0, big})},
                     ivec(DType::boolean, {1, 0, 0, dt == DType::f8e4m3fnuz})));
    c.push_back(make(IsInf, dt, "values", {vec(dt, {kNan, 1, big, -big})},
                     ivec(DType::boolean, {0, 0, dt == DType::f8e5m2, dt == DType::f8e5m2})));
    // e rounded to the type: e4m3 2.75, e5m2 2.5 (2.718 is nearer 2.5 than 3).
    c.push_back(make(Exp, dt, "e_rounded", {vec(dt, {1})}, vec(dt, {is_e4m3(dt) ? 2.75 : 2.5})));
    // -0: the FNUZ types have none, so neg(0) is +0 there.
    c.push_back(make(Neg, dt, "zero", {vec(dt, {0})}, vec(dt, {is_fnuz(dt) ? 0.0 : -0.0})));
  }
}

void binary_cases(std::vector<OpCase>& c) {
  using enum OpKind;
  binary_case(c, Add, {1.5, 0.25, -2}, {0.5, 0.25, 3}, {2, 0.5, 1});
  binary_case(c, Sub, {1, 0.5, -2}, {0.25, 0.5, 1}, {0.75, 0, -3});
  binary_case(c, Mul, {1.5, -2, 0.5}, {2, 0.5, 0.5}, {3, -1, 0.25});
  binary_case(c, Div, {1, 3, -1}, {4, 4, 2}, {0.25, 0.75, -0.5});
  binary_case(c, Pow, {2, 4, -2}, {3, 0.5, 2}, {8, 2, 4});
  binary_case(c, Max, {1, kNan, 2, -3}, {2, 1, kNan, -4}, {2, kNan, kNan, -3});
  binary_case(c, Min, {1, kNan, 2, -3}, {2, 1, kNan, -4}, {1, kNan, kNan, -4});
  binary_case(c, Mod, {5, -5, 5, 3.5}, {3, 3, -3, 2}, {2, 1, -1, 1.5});
  for (DType dt : kFloat8Types) {
    // Ties to even: 1 + 1/16 is halfway between 1 and 1.125 in e4m3 (-> 1),
    // 1.125 + 1/16 between 1.125 and 1.25 (-> 1.25); e5m2 likewise with 1/8.
    const double h = is_e4m3(dt) ? 0.0625 : 0.125, s = 2 * h;
    c.push_back(
        make(Add, dt, "tie_even", {vec(dt, {1, 1 + s}), vec(dt, {h, h})}, vec(dt, {1, 1 + 2 * s})));
    // Overflow: the max plus its spacing is inf in e5m2, NaN elsewhere.
    const double max = dt == DType::f8e4m3fn ? 448 : dt == DType::f8e4m3fnuz ? 240 : 57344;
    const double step = dt == DType::f8e4m3fn ? 32 : dt == DType::f8e4m3fnuz ? 16 : 8192;
    c.push_back(make(Add, dt, "overflow", {vec(dt, {max, -max}), vec(dt, {step, -step})},
                     vec(dt, dt == DType::f8e5m2 ? std::vector<double>{kInf, -kInf}
                                                 : std::vector<double>{kNan, kNan})));
    c.push_back(make(Div, dt, "by_zero", {vec(dt, {1}), vec(dt, {0})},
                     vec(dt, {dt == DType::f8e5m2 ? kInf : kNan})));
  }
  // Every compare on every float8 type.
  struct Want {
    OpKind op;
    std::vector<int64_t> want;
  };
  const Want wants[] = {{Eq, {0, 1, 0, 0, 1}}, {Ne, {1, 0, 1, 1, 0}}, {Lt, {1, 0, 0, 0, 0}},
                        {Le, {1, 1, 0, 0, 1}}, {Gt, {0, 0, 1, 0, 0}}, {Ge, {0, 1, 1, 0, 1}}};
  for (const Want& w : wants)
    for (DType dt : kFloat8Types)
      c.push_back(make(w.op, dt, "values",
                       {vec(dt, {1, 2, 3, kNan, -0.0}), vec(dt, {2, 2, 2, kNan, 0})},
                       ivec(DType::boolean, w.want)));
}

void cast_cases(std::vector<OpCase>& c) {
  using D = DType;
  // f32 -> float8 with the ONNX table: saturate maps out-of-range and inf
  // to +-max; saturate=false gives inf (e5m2) or NaN.
  c.push_back(cast("saturate", vec(D::f32, {1e6, -kInf, kNan, 464, 465, 0.3}),
                   vec(D::f8e4m3fn, {448, -448, kNan, 448, 448, 0.3})));
  c.push_back(cast("no_saturate", vec(D::f32, {1e6, -kInf, kNan, 464, 465, 0.3}),
                   vec(D::f8e4m3fn, {kNan, kNan, kNan, 448, kNan, 0.3}), false));
  c.push_back(cast("saturate", vec(D::f32, {1e6, kInf, -1e-7}), vec(D::f8e4m3fnuz, {240, 240, 0})));
  c.push_back(cast("no_saturate", vec(D::f32, {1e6, kInf, 247, 248}),
                   vec(D::f8e4m3fnuz, {kNan, kNan, 240, kNan}), false));
  c.push_back(
      cast("saturate", vec(D::f32, {1e6, -kInf, 61439}), vec(D::f8e5m2, {57344, -57344, 57344})));
  c.push_back(cast("no_saturate", vec(D::f32, {1e6, -kInf, 61440, 61439}),
                   vec(D::f8e5m2, {kInf, -kInf, kInf, 57344}), false));
  c.push_back(cast("saturate", vec(D::f32, {-1e6, kInf, 0x1p-17, 0x1p-18}),
                   vec(D::f8e5m2fnuz, {-57344, 57344, 0x1p-17, 0})));
  c.push_back(
      cast("no_saturate", vec(D::f32, {-1e6, kInf}), vec(D::f8e5m2fnuz, {kNan, kNan}), false));
  // Other sources round once: 17 is a tie in e4m3 (-> 16), and the f64
  // just above the 1 / 1.125 halfway point rounds up.
  c.push_back(cast("round", ivec(D::i32, {17, 19, -300}), vec(D::f8e4m3fn, {16, 20, -288})));
  c.push_back(cast("round_once", vec(D::f64, {1.0625 + 0x1p-40}), vec(D::f8e4m3fn, {1.125})));
  c.push_back(cast("round", vec(D::f16, {0.3, -1000}), vec(D::f8e5m2, {0.3125, -1024})));
  c.push_back(cast("values", ivec(D::boolean, {1, 0}), vec(D::f8e5m2fnuz, {1, 0})));
  // float8 -> float8: decode exactly, then the target's rules.
  c.push_back(
      cast("saturate", vec(D::f8e5m2, {kInf, 57344, 0.25}), vec(D::f8e4m3fn, {448, 448, 0.25})));
  c.push_back(
      cast("no_saturate", vec(D::f8e5m2, {kInf, 0.25}), vec(D::f8e4m3fnuz, {kNan, 0.25}), false));
  c.push_back(cast("exact", vec(D::f8e4m3fnuz, {224, -0x1p-10}), vec(D::f8e5m2, {224, -0x1p-10})));
  // float8 -> other types: exact, then the usual rules.
  c.push_back(
      cast("exact", vec(D::f8e4m3fn, {448, -0x1p-9, kNan}), vec(D::f32, {448, -0x1p-9, kNan})));
  c.push_back(cast("exact", vec(D::f8e4m3fnuz, {-0.875}), vec(D::f16, {-0.875})));
  c.push_back(cast("exact", vec(D::f8e5m2, {-kInf, 0x1p-16}), vec(D::f64, {-kInf, 0x1p-16})));
  c.push_back(cast("trunc", vec(D::f8e5m2fnuz, {-2.5, 57344, kNan}), ivec(D::i32, {-2, 57344, 0})));
  c.push_back(cast("nonzero", vec(D::f8e4m3fn, {0, kNan, -0.5}), ivec(D::boolean, {0, 1, 1})));
  c.push_back(cast("round_saturate", vec(D::f8e4m3fn, {2.5, -10}), ivec(D::i4, {2, -8})));
}

void reduce_cases(std::vector<OpCase>& c) {
  using enum OpKind;
  for (DType dt : kFloat8Types) {
    const HostTensor x = tensor(dt, {2, 3}, {1, 2, 3, 4, 5, 6});
    const auto reduce = [&](OpKind op, const std::string& tag, HostTensor want) {
      c.push_back(OpCase{fmt::format("{}_{}_{}", op_name(op), dtype_name(dt), tag),
                         op,
                         ReduceAttrs{{1}, false},
                         {x},
                         {std::move(want)}});
    };
    // 15 is a tie in e5m2 (spacing 2 in [8, 16)): -> 16.
    reduce(ReduceSum, "axis1", vec(dt, {6, is_e4m3(dt) ? 15.0 : 16.0}));
    reduce(ReduceMean, "axis1", vec(dt, {2, 5}));
    reduce(ReduceMax, "axis1", vec(dt, {3, 6}));
    reduce(ReduceMin, "axis1", vec(dt, {1, 4}));
    reduce(ReduceProd, "axis1", vec(dt, {6, is_e4m3(dt) ? 120.0 : 128.0}));  // e5m2: 112 or 128
  }
}

}  // namespace

std::vector<OpCase> float8_cases() {
  std::vector<OpCase> c;
  unary_cases(c);
  binary_cases(c);
  cast_cases(c);
  reduce_cases(c);
  return c;
}

}  // namespace autofuse::testing
