// Unary op cases: every float op in f32/f16/bf16/f64, every numeric op in
// every integer dtype too (wraparound at the type limits), not on bool.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ref/op_cases.h"

namespace autofuse::testing {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kE = 2.718281828459045;

OpCase make(OpKind op, DType dtype, const std::string& tag, HostTensor in, HostTensor want,
            int ulps = 0) {
  return OpCase{fmt::format("{}_{}_{}", op_name(op), dtype_name(dtype), tag),
                op,
                NoAttrs{},
                {std::move(in)},
                {std::move(want)},
                ulps};
}

/// The same inputs and exact results in every float dtype (each rounded once).
void float_case(std::vector<OpCase>& out, OpKind op, const std::vector<double>& in,
                const std::vector<double>& want, int ulps = 0) {
  for (DType dt : kFloatTypes)
    out.push_back(make(op, dt, "values", vec(dt, in), vec(dt, want), ulps));
}

}  // namespace

std::vector<OpCase> unary_cases() {
  using enum OpKind;
  using D = DType;
  std::vector<OpCase> c;

  float_case(c, Neg, {1.5, -2, 0, -0.0, kInf, kNan}, {-1.5, 2, -0.0, 0, -kInf, kNan});
  c.push_back(
      make(Neg, D::i8, "wrap", ivec(D::i8, {5, -128, 127, 0}), ivec(D::i8, {-5, -128, -127, 0})));
  c.push_back(make(Neg, D::u8, "wrap", ivec(D::u8, {0, 1, 200}), ivec(D::u8, {0, 255, 56})));
  c.push_back(
      make(Neg, D::i32, "wrap", ivec(D::i32, {INT32_MIN, 7}), ivec(D::i32, {INT32_MIN, -7})));
  c.push_back(
      make(Neg, D::i64, "wrap", ivec(D::i64, {INT64_MIN, -3}), ivec(D::i64, {INT64_MIN, 3})));

  float_case(c, Abs, {-1.5, 2, -0.0, -kInf, kNan}, {1.5, 2, 0, kInf, kNan});
  c.push_back(make(Abs, D::i8, "wrap", ivec(D::i8, {-128, -5, 3}), ivec(D::i8, {-128, 5, 3})));
  c.push_back(make(Abs, D::u8, "values", ivec(D::u8, {200, 0}), ivec(D::u8, {200, 0})));
  c.push_back(
      make(Abs, D::i32, "wrap", ivec(D::i32, {INT32_MIN, -9}), ivec(D::i32, {INT32_MIN, 9})));
  c.push_back(
      make(Abs, D::i64, "wrap", ivec(D::i64, {INT64_MIN, -9}), ivec(D::i64, {INT64_MIN, 9})));

  float_case(c, Exp, {0, 1, -1, 0.5, -kInf, kInf, kNan},
             {1, kE, 0.36787944117144233, 1.6487212707001282, 0, kInf, kNan}, 1);
  float_case(c, Log, {1, 2, 0.5, 0, -1, kInf},
             {0, 0.6931471805599453, -0.6931471805599453, -kInf, kNan, kInf}, 1);
  float_case(c, Sqrt, {4, 2, 0.25, 0, -1, -0.0, kInf},
             {2, 1.4142135623730951, 0.5, 0, kNan, -0.0, kInf});
  float_case(c, Rsqrt, {4, 2, 0.25, 0, -0.0, kInf}, {0.5, 0.7071067811865476, 2, kInf, -kInf, 0},
             1);
  float_case(c, Reciprocal, {2, -4, 0, -0.0, kInf, 3}, {0.5, -0.25, kInf, -kInf, 0, 1.0 / 3.0});
  float_case(c, Sin, {0, 1, -0.5, kInf, kNan},
             {0, 0.8414709848078965, -0.479425538604203, kNan, kNan}, 1);
  float_case(c, Cos, {0, 1, -0.5, kInf}, {1, 0.5403023058681398, 0.8775825618903728, kNan}, 1);
  float_case(c, Tanh, {0, 1, -2, kInf, -kInf, kNan},
             {0, 0.7615941559557649, -0.9640275800758169, 1, -1, kNan}, 1);
  float_case(c, Sigmoid, {0, 1, -1, kInf, -kInf, kNan},
             {0.5, 0.7310585786300049, 0.2689414213699951, 1, 0, kNan}, 2);
  float_case(c, Erf, {0, 1, -0.5, kInf, -kInf, kNan},
             {0, 0.8427007929497149, -0.5204998778130465, 1, -1, kNan}, 1);
  float_case(c, Floor, {1.5, -1.5, -0.5, 2, -0.0, kInf, kNan}, {1, -2, -1, 2, -0.0, kInf, kNan});
  float_case(c, Ceil, {1.5, -1.5, -0.5, 2, kNan}, {2, -1, -0.0, 2, kNan});
  // Half to even; -0.5 rounds to -0.
  float_case(c, Round, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1.25, -0.0, kNan},
             {0, 2, 2, -0.0, -2, -2, 1, -0.0, kNan});

  float_case(c, Relu, {-1, 2.5, 0, -0.0, kNan, -kInf, kInf}, {0, 2.5, 0, 0, kNan, 0, kInf});
  c.push_back(make(Relu, D::i8, "values", ivec(D::i8, {-128, 5, 0}), ivec(D::i8, {0, 5, 0})));
  c.push_back(make(Relu, D::u8, "values", ivec(D::u8, {200, 0}), ivec(D::u8, {200, 0})));
  c.push_back(make(Relu, D::i32, "values", ivec(D::i32, {-7, 7}), ivec(D::i32, {0, 7})));
  c.push_back(make(Relu, D::i64, "values", ivec(D::i64, {INT64_MIN, INT64_MAX}),
                   ivec(D::i64, {0, INT64_MAX})));

  // sign(0) == sign(-0) == +0, NaN stays NaN.
  float_case(c, Sign, {3, -0.5, 0, -0.0, kNan, -kInf}, {1, -1, 0, 0, kNan, -1});
  c.push_back(make(Sign, D::i8, "values", ivec(D::i8, {-128, 0, 5}), ivec(D::i8, {-1, 0, 1})));
  c.push_back(make(Sign, D::u8, "values", ivec(D::u8, {0, 200}), ivec(D::u8, {0, 1})));
  c.push_back(
      make(Sign, D::i32, "values", ivec(D::i32, {INT32_MIN, 0, 9}), ivec(D::i32, {-1, 0, 1})));
  c.push_back(make(Sign, D::i64, "values", ivec(D::i64, {INT64_MIN, 0, INT64_MAX}),
                   ivec(D::i64, {-1, 0, 1})));

  c.push_back(make(Not, D::boolean, "values", ivec(D::boolean, {1, 0}), ivec(D::boolean, {0, 1})));
  for (DType dt : kFloatTypes) {
    c.push_back(make(IsNan, dt, "values", vec(dt, {kNan, kInf, 1, -0.0, -kNan}),
                     ivec(D::boolean, {1, 0, 0, 0, 1})));
    c.push_back(make(IsInf, dt, "values", vec(dt, {kNan, kInf, -kInf, 1, 65504}),
                     ivec(D::boolean, {0, 1, 1, 0, 0})));
  }
  // f16/bf16 round per op: exp(1) is e rounded to the storage type.
  c.push_back(make(Exp, D::f16, "e_rounded", vec(D::f16, {1}), vec(D::f16, {2.71875})));
  c.push_back(make(Exp, D::bf16, "e_rounded", vec(D::bf16, {1}), vec(D::bf16, {2.71875})));
  c.push_back(make(Exp, D::f16, "overflow", vec(D::f16, {12}), vec(D::f16, {kInf})));
  return c;
}

}  // namespace autofuse::testing
