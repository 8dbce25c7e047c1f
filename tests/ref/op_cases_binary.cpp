// Binary op cases: broadcasting, per-op rounding of f16/bf16, integer
// wraparound, division and mod by zero, floor-mod signs, NaN propagation,
// and every compare op on every dtype.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ref/op_cases.h"

namespace autofuse::testing {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

OpCase make(OpKind op, DType dtype, const std::string& tag, HostTensor a, HostTensor b,
            HostTensor want, int ulps = 0) {
  return OpCase{fmt::format("{}_{}_{}", op_name(op), dtype_name(dtype), tag),
                op,
                NoAttrs{},
                {std::move(a), std::move(b)},
                {std::move(want)},
                ulps};
}

/// Rank-1 operands of equal length, every float dtype.
void float_case(std::vector<OpCase>& out, OpKind op, const std::string& tag,
                const std::vector<double>& a, const std::vector<double>& b,
                const std::vector<double>& want, int ulps = 0) {
  for (DType dt : kFloatTypes)
    out.push_back(make(op, dt, tag, vec(dt, a), vec(dt, b), vec(dt, want), ulps));
}

void int_case(std::vector<OpCase>& out, OpKind op, DType dt, const std::string& tag,
              const std::vector<int64_t>& a, const std::vector<int64_t>& b,
              const std::vector<int64_t>& want) {
  out.push_back(make(op, dt, tag, ivec(dt, a), ivec(dt, b), ivec(dt, want)));
}

void compare_cases(std::vector<OpCase>& c) {
  using enum OpKind;
  struct Want {
    OpKind op;
    std::vector<int64_t> floats, ints, bools;
  };
  // floats: a = {1, 2, 3, nan, -0, -inf}, b = {2, 2, 2, nan, 0, -inf}
  // ints:   a = {1, 2, 3, lo},   b = {2, 2, 2, hi}
  // bools:  a = {0, 0, 1, 1},    b = {0, 1, 0, 1}
  const Want wants[] = {
      {Eq, {0, 1, 0, 0, 1, 1}, {0, 1, 0, 0}, {1, 0, 0, 1}},
      {Ne, {1, 0, 1, 1, 0, 0}, {1, 0, 1, 1}, {0, 1, 1, 0}},
      {Lt, {1, 0, 0, 0, 0, 0}, {1, 0, 0, 1}, {0, 1, 0, 0}},
      {Le, {1, 1, 0, 0, 1, 1}, {1, 1, 0, 1}, {1, 1, 0, 1}},
      {Gt, {0, 0, 1, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 1, 0}},
      {Ge, {0, 1, 1, 0, 1, 1}, {0, 1, 1, 0}, {1, 0, 1, 1}},
  };
  for (const Want& w : wants) {
    for (DType dt : kFloatTypes)
      c.push_back(make(w.op, dt, "values", vec(dt, {1, 2, 3, kNan, -0.0, -kInf}),
                       vec(dt, {2, 2, 2, kNan, 0, -kInf}), ivec(DType::boolean, w.floats)));
    for (DType dt : kIntTypes) {
      const IntLimits l = int_limits(dt);
      c.push_back(make(w.op, dt, "values", ivec(dt, {1, 2, 3, l.lo}), ivec(dt, {2, 2, 2, l.hi}),
                       ivec(DType::boolean, w.ints)));
    }
    c.push_back(make(w.op, DType::boolean, "values", ivec(DType::boolean, {0, 0, 1, 1}),
                     ivec(DType::boolean, {0, 1, 0, 1}), ivec(DType::boolean, w.bools)));
  }
  // Broadcast compare: [2, 1] vs [3].
  c.push_back(make(Lt, DType::i32, "broadcast", itensor(DType::i32, {2, 1}, {1, 5}),
                   ivec(DType::i32, {0, 2, 6}),
                   itensor(DType::boolean, {2, 3}, {0, 1, 1, 0, 0, 1})));
}

}  // namespace

std::vector<OpCase> binary_cases() {
  using enum OpKind;
  using D = DType;
  std::vector<OpCase> c;

  // Broadcasting [2, 1] + [3] -> [2, 3], every float dtype.
  for (DType dt : kFloatTypes)
    c.push_back(make(Add, dt, "broadcast", tensor(dt, {2, 1}, {1, 2}), vec(dt, {0.5, 0.25, -1}),
                     tensor(dt, {2, 3}, {1.5, 1.25, 0, 2.5, 2.25, 1})));
  // Rank-0 operand broadcasts against a 3-d one.
  c.push_back(make(Add, D::f32, "scalar_3d", tensor(D::f32, {2, 1, 2}, {1, 2, 3, 4}),
                   tensor(D::f32, {}, {10}), tensor(D::f32, {2, 1, 2}, {11, 12, 13, 14})));
  float_case(c, Add, "special", {kInf, kInf, -0.0, 0}, {-kInf, 1, -0.0, -0.0},
             {kNan, kInf, -0.0, 0});
  // Rounded to the storage type after the op: ties go to even.
  c.push_back(make(Add, D::f16, "tie_even", vec(D::f16, {2048, 2048, 1}),
                   vec(D::f16, {1, 3, 0x1p-11}), vec(D::f16, {2048, 2052, 1})));
  c.push_back(make(Add, D::bf16, "tie_even", vec(D::bf16, {256, 256}), vec(D::bf16, {1, 3}),
                   vec(D::bf16, {256, 260})));
  c.push_back(
      make(Add, D::f16, "overflow", vec(D::f16, {65504}), vec(D::f16, {16}), vec(D::f16, {kInf})));
  int_case(c, Add, D::i8, "wrap", {100, -100, 1}, {100, -100, 2}, {-56, 56, 3});
  int_case(c, Add, D::u8, "wrap", {200, 1}, {100, 2}, {44, 3});
  int_case(c, Add, D::i32, "wrap", {INT32_MAX, -5}, {1, 2}, {INT32_MIN, -3});
  int_case(c, Add, D::i64, "wrap", {INT64_MAX, INT64_MIN}, {1, -1}, {INT64_MIN, INT64_MAX});

  float_case(c, Sub, "values", {1, 0, -0.0, kInf}, {0.25, 0, 0, kInf}, {0.75, 0, -0.0, kNan});
  int_case(c, Sub, D::i8, "wrap", {-128, 5}, {1, 7}, {127, -2});
  int_case(c, Sub, D::u8, "wrap", {3, 9}, {5, 4}, {254, 5});
  int_case(c, Sub, D::i32, "wrap", {INT32_MIN, 0}, {1, INT32_MIN}, {INT32_MAX, INT32_MIN});
  int_case(c, Sub, D::i64, "wrap", {INT64_MIN, 0}, {1, INT64_MIN}, {INT64_MAX, INT64_MIN});

  float_case(c, Mul, "values", {1.5, -2, kInf, 0}, {2, 0.5, 0, -1}, {3, -1, kNan, -0.0});
  int_case(c, Mul, D::i8, "wrap", {16, 100, -128}, {16, 3, -1}, {0, 44, -128});
  int_case(c, Mul, D::u8, "wrap", {16, 15}, {17, 17}, {16, 255});
  int_case(c, Mul, D::i32, "wrap", {65536, 65537}, {65536, 65537}, {0, 131073});
  int_case(c, Mul, D::i64, "wrap", {INT64_MIN, int64_t{1} << 62, 3037000500}, {-1, 4, 3037000500},
           {INT64_MIN, 0, -9223372036709301616});

  float_case(c, Div, "values", {1, -1, 0, 1, 3, kInf}, {0, 0, 0, -0.0, 4, kInf},
             {kInf, -kInf, kNan, -kInf, 0.75, kNan});
  // Truncation toward zero; x / 0 == 0; MIN / -1 wraps.
  int_case(c, Div, D::i8, "trunc_zero", {7, -7, 7, -7, 5, -128, 7}, {2, 2, -2, -2, 0, -1, -1},
           {3, -3, -3, 3, 0, -128, -7});
  int_case(c, Div, D::u8, "trunc_zero", {7, 200, 5}, {2, 3, 0}, {3, 66, 0});
  int_case(c, Div, D::i32, "trunc_zero", {INT32_MIN, -7, 9}, {-1, 0, -4}, {INT32_MIN, 0, -2});
  int_case(c, Div, D::i64, "trunc_zero", {INT64_MIN, 9, INT64_MIN, INT64_MAX}, {-1, 2, 0, -1},
           {INT64_MIN, 4, 0, -INT64_MAX});

  float_case(c, Pow, "values", {2, 4, -2, 0, 2, -2, 1, kNan}, {3, 0.5, 3, 0, -1, 0.5, kNan, 0},
             {8, 2, -8, 1, 0.5, kNan, 1, 1}, 1);
  // Repeated squaring with wraparound; negative exponents give 0 except for +-1.
  int_case(c, Pow, D::i8, "wrap", {2, 3, -2, 2, 1, -1, -1, 0}, {7, 4, 3, -1, -5, -3, -2, 0},
           {-128, 81, -8, 0, 1, -1, 1, 1});
  int_case(c, Pow, D::u8, "wrap", {2, 3}, {8, 5}, {0, 243});
  int_case(c, Pow, D::i32, "wrap", {2, 3}, {31, 21}, {INT32_MIN, 1870418611});
  int_case(c, Pow, D::i64, "wrap", {2, 2, 3, 7}, {63, 64, 40, -1},
           {INT64_MIN, 0, -6289078614652622815, 0});

  // NaN propagates from either side.
  float_case(c, Max, "nan", {1, kNan, 2, -3, kInf}, {2, 1, kNan, -4, -kInf},
             {2, kNan, kNan, -3, kInf});
  float_case(c, Min, "nan", {1, kNan, 2, -3, kInf}, {2, 1, kNan, -4, -kInf},
             {1, kNan, kNan, -4, -kInf});
  for (DType dt : kIntTypes) {
    const IntLimits l = int_limits(dt);
    int_case(c, Max, dt, "limits", {l.lo, l.hi, 3}, {l.hi, l.lo, 5}, {l.hi, l.hi, 5});
    int_case(c, Min, dt, "limits", {l.lo, l.hi, 3}, {l.hi, l.lo, 5}, {l.lo, l.lo, 3});
  }

  // Floor-mod: the result has the divisor's sign; a zero result too.
  float_case(c, Mod, "signs", {5, -5, 5, -5, 4, -4, 4, 5.5, 1, kInf, 5},
             {3, 3, -3, -3, 2, 2, -2, 2, 0, 2, kInf},
             {2, 1, -1, -2, 0, 0, -0.0, 1.5, kNan, kNan, 5});
  c.push_back(
      make(Mod, D::f32, "neg_by_inf", vec(D::f32, {-5}), vec(D::f32, {kInf}), vec(D::f32, {kInf})));
  int_case(c, Mod, D::i8, "floor", {5, -5, 5, -5, 7, -128, -128}, {3, 3, -3, -3, 0, -1, 3},
           {2, 1, -1, -2, 0, 0, 1});
  int_case(c, Mod, D::u8, "floor", {200, 7, 5}, {7, 0, 255}, {4, 0, 5});
  int_case(c, Mod, D::i32, "floor", {INT32_MIN, -7, 7}, {-1, 4, -4}, {0, 1, -1});
  int_case(c, Mod, D::i64, "floor", {INT64_MIN, INT64_MIN, 7, 9}, {-1, 3, -2, 0}, {0, 1, -1, 0});

  const std::vector<int64_t> a = {0, 0, 1, 1}, b = {0, 1, 0, 1};
  c.push_back(make(And, D::boolean, "truth", ivec(D::boolean, a), ivec(D::boolean, b),
                   ivec(D::boolean, {0, 0, 0, 1})));
  c.push_back(make(Or, D::boolean, "truth", ivec(D::boolean, a), ivec(D::boolean, b),
                   ivec(D::boolean, {0, 1, 1, 1})));
  c.push_back(make(Xor, D::boolean, "truth", ivec(D::boolean, a), ivec(D::boolean, b),
                   ivec(D::boolean, {0, 1, 1, 0})));
  c.push_back(make(And, D::boolean, "broadcast", itensor(D::boolean, {2, 1}, {0, 1}),
                   itensor(D::boolean, {1, 2}, {1, 0}), itensor(D::boolean, {2, 2}, {0, 0, 1, 0})));

  compare_cases(c);
  return c;
}

}  // namespace autofuse::testing
