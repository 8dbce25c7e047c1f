// where, cast and reduction cases.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ref/op_cases.h"

namespace autofuse::testing {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

OpCase cast_case(const std::string& tag, HostTensor in, HostTensor want) {
  std::string label =
      fmt::format("cast_{}_to_{}_{}", dtype_name(in.dtype()), dtype_name(want.dtype()), tag);
  DType to = want.dtype();
  return OpCase{label, OpKind::Cast, CastAttrs{to}, {std::move(in)}, {std::move(want)}};
}

OpCase reduce_case(OpKind op, const std::string& tag, HostTensor in, std::vector<int64_t> axes,
                   bool keepdims, HostTensor want) {
  std::string label = fmt::format("{}_{}_{}", op_name(op), dtype_name(in.dtype()), tag);
  return OpCase{
      label, op, ReduceAttrs{std::move(axes), keepdims}, {std::move(in)}, {std::move(want)}};
}

}  // namespace

std::vector<OpCase> other_elementwise_cases() {
  using D = DType;
  std::vector<OpCase> c;
  // where(cond[3], a[2, 1], b[]) -> [2, 3] in every dtype.
  for (DType dt : kAllDTypes) {
    const double hi = dt == D::boolean ? 1 : 2, other = dt == D::boolean ? 0 : 5;
    c.push_back(
        OpCase{fmt::format("where_{}_broadcast", dtype_name(dt)),
               OpKind::Where,
               NoAttrs{},
               {ivec(D::boolean, {1, 0, 1}), tensor(dt, {2, 1}, {1, hi}), tensor(dt, {}, {other})},
               {tensor(dt, {2, 3}, {1, other, 1, hi, other, hi})}});
  }
  // where copies bits: NaN and -0 survive.
  c.push_back(OpCase{"where_f32_special",
                     OpKind::Where,
                     NoAttrs{},
                     {ivec(D::boolean, {1, 0}), vec(D::f32, {kNan, 1}), vec(D::f32, {2, -0.0})},
                     {vec(D::f32, {kNan, -0.0})}});

  // Float -> int: truncate, NaN -> 0, saturate out of range.
  c.push_back(cast_case("saturate", vec(D::f32, {1.9, -1.9, 300, -300, kNan, kInf, -0.5}),
                        ivec(D::i8, {1, -1, 127, -128, 0, 127, 0})));
  c.push_back(
      cast_case("saturate", vec(D::f32, {255.9, -1, 3.5, kNan}), ivec(D::u8, {255, 0, 3, 0})));
  c.push_back(cast_case("saturate", vec(D::f64, {2147483647.9, -2147483648.9, -2.5, 1e10}),
                        ivec(D::i32, {INT32_MAX, INT32_MIN, -2, INT32_MAX})));
  c.push_back(cast_case("saturate", vec(D::f64, {1e30, -1e30, -2.5, 9007199254740993.0, -kInf}),
                        ivec(D::i64, {INT64_MAX, INT64_MIN, -2, 9007199254740992, INT64_MIN})));
  c.push_back(cast_case("trunc", vec(D::f16, {65504, -3.75, 0.5}), ivec(D::i32, {65504, -3, 0})));
  // bf16(1e10) = 149 * 2^26.
  c.push_back(cast_case("trunc", vec(D::bf16, {-127.5, 1e10}), ivec(D::i64, {-127, 9999220736})));
  // Float -> float rounds once to nearest even.
  c.push_back(cast_case("round", vec(D::f32, {65520, 1 + 0x1p-11, 0x1p-25, 1e-8, kNan, 0.1}),
                        vec(D::f16, {kInf, 1, 0, 0, kNan, 0.0999755859375})));
  c.push_back(cast_case("round_once", vec(D::f64, {1 + 0x1p-11 + 0x1p-40, -65519.9}),
                        vec(D::f16, {1 + 0x1p-10, -65504})));
  c.push_back(
      cast_case("round_once", vec(D::f64, {1 + 0x1p-8 + 0x1p-40}), vec(D::bf16, {1 + 0x1p-7})));
  c.push_back(
      cast_case("round", vec(D::f64, {0.1, 1e300, -1e-300}), vec(D::f32, {0.1, kInf, -0.0})));
  c.push_back(cast_case("exact", vec(D::f32, {0.1, -kInf}),
                        vec(D::f64, {static_cast<double>(0.1f), -kInf})));
  c.push_back(cast_case("round", vec(D::f16, {1 + 0x1p-10, 65504}), vec(D::bf16, {1, 65536})));
  c.push_back(cast_case("overflow", vec(D::bf16, {1e10, -kInf}), vec(D::f16, {kInf, -kInf})));
  c.push_back(cast_case("exact", vec(D::bf16, {3.140625}), vec(D::f32, {3.140625})));
  c.push_back(cast_case("exact", vec(D::f16, {0x1p-24, -65504}), vec(D::f64, {0x1p-24, -65504})));
  // x -> bool is x != 0 (NaN is true); bool -> x is 0/1.
  c.push_back(
      cast_case("nonzero", vec(D::f32, {0, -0.0, 0.5, kNan}), ivec(D::boolean, {0, 0, 1, 1})));
  c.push_back(cast_case("nonzero", ivec(D::i32, {0, -5, 256}), ivec(D::boolean, {0, 1, 1})));
  c.push_back(cast_case("nonzero", ivec(D::u8, {0, 255}), ivec(D::boolean, {0, 1})));
  c.push_back(cast_case("values", ivec(D::boolean, {1, 0}), vec(D::f32, {1, 0})));
  c.push_back(cast_case("values", ivec(D::boolean, {1, 0}), vec(D::bf16, {1, 0})));
  c.push_back(cast_case("values", ivec(D::boolean, {1, 0}), ivec(D::i64, {1, 0})));
  // Int -> int wraps.
  c.push_back(
      cast_case("wrap", ivec(D::i64, {255, 128, -129, 1 << 20}), ivec(D::i8, {-1, -128, 127, 0})));
  c.push_back(cast_case("wrap", ivec(D::i8, {-1, -128}), ivec(D::u8, {255, 128})));
  c.push_back(cast_case("wrap", ivec(D::u8, {200, 255}), ivec(D::i8, {-56, -1})));
  c.push_back(
      cast_case("wrap", ivec(D::i64, {INT64_MIN, (int64_t{1} << 32) + 7}), ivec(D::i32, {0, 7})));
  c.push_back(cast_case("widen", ivec(D::i8, {-128}), ivec(D::i64, {-128})));
  // Int -> float rounds to nearest even.
  c.push_back(cast_case("round", ivec(D::i32, {65519, 65520, 2049, 2051}),
                        vec(D::f16, {65504, kInf, 2048, 2052})));
  c.push_back(
      cast_case("round", ivec(D::i64, {(1 << 24) + 1, INT64_MAX}), vec(D::f32, {1 << 24, 0x1p63})));
  c.push_back(cast_case("round", ivec(D::i64, {257, 259, -259}), vec(D::bf16, {256, 260, -260})));
  c.push_back(
      cast_case("round", ivec(D::i64, {(int64_t{1} << 53) + 1, -7}), vec(D::f64, {0x1p53, -7})));
  c.push_back(cast_case("exact", ivec(D::u8, {255}), vec(D::f64, {255})));
  c.push_back(cast_case("exact", ivec(D::i8, {-128}), vec(D::f16, {-128})));
  c.push_back(cast_case("same", vec(D::f32, {kNan, -0.0}), vec(D::f32, {kNan, -0.0})));
  return c;
}

std::vector<OpCase> reduce_cases() {
  using enum OpKind;
  using D = DType;
  std::vector<OpCase> c;
  for (DType dt : kFloatTypes) {
    const HostTensor x = tensor(dt, {2, 3}, {1, 2, 3, 4, 5, 6});
    c.push_back(reduce_case(ReduceSum, "axis1", x, {1}, false, vec(dt, {6, 15})));
    c.push_back(reduce_case(ReduceSum, "axis0_keep", x, {0}, true, tensor(dt, {1, 3}, {5, 7, 9})));
    c.push_back(reduce_case(ReduceSum, "all", x, {}, false, tensor(dt, {}, {21})));
    c.push_back(reduce_case(ReduceSum, "all_keep", x, {}, true, tensor(dt, {1, 1}, {21})));
    c.push_back(reduce_case(ReduceMean, "axis1", x, {1}, false, vec(dt, {2, 5})));
    c.push_back(reduce_case(ReduceMax, "axis0", x, {0}, false, vec(dt, {4, 5, 6})));
    c.push_back(reduce_case(ReduceMin, "axis1_keep", x, {1}, true, tensor(dt, {2, 1}, {1, 4})));
    c.push_back(reduce_case(ReduceProd, "axis1", x, {1}, false, vec(dt, {6, 120})));
    // NaN propagates through max/min and sums.
    const HostTensor n = tensor(dt, {2, 3}, {1, kNan, 3, -kInf, -5, 2});
    c.push_back(reduce_case(ReduceMax, "nan", n, {1}, false, vec(dt, {kNan, 2})));
    c.push_back(reduce_case(ReduceMin, "nan", n, {1}, false, vec(dt, {kNan, -kInf})));
    c.push_back(reduce_case(ReduceSum, "nan", n, {1}, false, vec(dt, {kNan, -kInf})));
    // Empty reductions give the identities (mean: NaN).
    const HostTensor e(dt, {2, 0});
    c.push_back(reduce_case(ReduceSum, "empty", e, {1}, false, vec(dt, {0, 0})));
    c.push_back(reduce_case(ReduceProd, "empty", e, {1}, false, vec(dt, {1, 1})));
    c.push_back(reduce_case(ReduceMax, "empty", e, {1}, false, vec(dt, {-kInf, -kInf})));
    c.push_back(reduce_case(ReduceMin, "empty", e, {1}, false, vec(dt, {kInf, kInf})));
    c.push_back(reduce_case(ReduceMean, "empty", e, {1}, true, tensor(dt, {2, 1}, {kNan, kNan})));
    c.push_back(reduce_case(ReduceSum, "empty_kept_dim", e, {0}, false, HostTensor(dt, {0})));
  }
  c.push_back(reduce_case(ReduceSum, "rank0", tensor(D::f32, {}, {2.5}), {}, false,
                          tensor(D::f32, {}, {2.5})));
  c.push_back(reduce_case(ReduceMax, "rank0_keep", itensor(D::i8, {}, {-3}), {}, true,
                          itensor(D::i8, {}, {-3})));
  // Several axes of a 3-d tensor, with and without keepdims.
  const HostTensor x3 = tensor(D::f32, {2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  c.push_back(reduce_case(ReduceSum, "axes02_keep", x3, {0, 2}, true,
                          tensor(D::f32, {1, 3, 1}, {14, 22, 30})));
  c.push_back(reduce_case(ReduceSum, "axes02", x3, {2, 0}, false, vec(D::f32, {14, 22, 30})));
  c.push_back(reduce_case(ReduceMax, "axes12", x3, {1, 2}, false, vec(D::f32, {5, 11})));
  c.push_back(reduce_case(ReduceMean, "axes01_neg", x3, {-3, -2}, false, vec(D::f32, {5, 6})));
  // Float sums accumulate in double, rounded once at the end: the storage
  // type alone would lose the small terms.
  c.push_back(reduce_case(ReduceSum, "double_acc", vec(D::f16, {2048, 1, 1}), {}, false,
                          tensor(D::f16, {}, {2050})));
  c.push_back(reduce_case(ReduceSum, "double_acc", vec(D::bf16, {256, 1, 1}), {}, false,
                          tensor(D::bf16, {}, {258})));
  c.push_back(reduce_case(ReduceSum, "double_acc", vec(D::f32, {1e8, 1, -1e8}), {}, false,
                          tensor(D::f32, {}, {1})));
  c.push_back(reduce_case(ReduceProd, "double_acc", vec(D::f16, {256, 256, 0x1p-10}), {}, false,
                          tensor(D::f16, {}, {64})));
  c.push_back(reduce_case(ReduceMean, "double_acc", vec(D::f16, {65504, 65504}), {}, false,
                          tensor(D::f16, {}, {65504})));

  // Integers: int64 accumulation wraps to the storage type; mean truncates.
  c.push_back(reduce_case(ReduceSum, "wrap", ivec(D::i8, {100, 100, 100}), {}, false,
                          itensor(D::i8, {}, {44})));
  c.push_back(
      reduce_case(ReduceSum, "wrap", ivec(D::u8, {200, 100}), {}, false, itensor(D::u8, {}, {44})));
  c.push_back(reduce_case(ReduceSum, "wrap", itensor(D::i32, {2, 2}, {INT32_MAX, 1, 5, 6}), {1},
                          false, ivec(D::i32, {INT32_MIN, 11})));
  c.push_back(reduce_case(ReduceSum, "wrap", ivec(D::i64, {INT64_MAX, 1}), {0}, false,
                          itensor(D::i64, {}, {INT64_MIN})));
  c.push_back(reduce_case(ReduceMean, "trunc", itensor(D::i32, {2, 2}, {-7, 0, 7, 0}), {1}, false,
                          ivec(D::i32, {-3, 3})));
  c.push_back(reduce_case(ReduceMean, "no_wrap", ivec(D::i8, {100, 100}), {}, false,
                          itensor(D::i8, {}, {100})));
  c.push_back(reduce_case(ReduceMean, "no_wrap", ivec(D::u8, {255, 255, 254}), {}, false,
                          itensor(D::u8, {}, {254})));
  c.push_back(reduce_case(ReduceMean, "empty", HostTensor(D::i64, {0}), {}, false,
                          itensor(D::i64, {}, {0})));
  c.push_back(reduce_case(ReduceProd, "wrap", ivec(D::i8, {16, 16, 3}), {}, false,
                          itensor(D::i8, {}, {0})));
  c.push_back(reduce_case(ReduceProd, "wrap", ivec(D::i32, {65536, 3, 65536}), {}, false,
                          itensor(D::i32, {}, {0})));
  c.push_back(
      reduce_case(ReduceProd, "values", ivec(D::u8, {3, 5}), {}, false, itensor(D::u8, {}, {15})));
  c.push_back(reduce_case(ReduceProd, "empty", HostTensor(D::i64, {0}), {}, false,
                          itensor(D::i64, {}, {1})));
  for (DType dt : kIntTypes) {
    const auto [lo, hi] = int_limits(dt);
    const HostTensor x = itensor(dt, {2, 2}, {3, 1, lo, hi});
    c.push_back(reduce_case(ReduceMax, "limits", x, {1}, false, ivec(dt, {3, hi})));
    c.push_back(reduce_case(ReduceMin, "limits", x, {0}, true, itensor(dt, {1, 2}, {lo, 1})));
    c.push_back(
        reduce_case(ReduceMax, "empty", HostTensor(dt, {0, 2}), {0}, false, ivec(dt, {lo, lo})));
    c.push_back(
        reduce_case(ReduceMin, "empty", HostTensor(dt, {0, 2}), {0}, false, ivec(dt, {hi, hi})));
    c.push_back(reduce_case(ReduceSum, "axis0", itensor(dt, {2, 2}, {1, 2, 3, 4}), {0}, false,
                            ivec(dt, {4, 6})));
  }
  return c;
}

}  // namespace autofuse::testing
