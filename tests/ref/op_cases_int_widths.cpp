// Cases for the integer widths beyond i8/u8/i32/i64: i4, u4 (stored one per
// byte, wrapping to 4 bits), i16, u16, u32 and u64 (which computes in
// uint64: unsigned division, modulo and comparison above 2^63). Every value
// below is worked out by hand; compares, max/min at the limits, where and
// the reduce limits come from the shared loops over kIntTypes.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ref/op_cases.h"

namespace autofuse::testing {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kU64Max = u64(UINT64_MAX);
constexpr int64_t kTwo63 = u64(uint64_t{1} << 63);

OpCase unary(OpKind op, DType dt, const std::string& tag, std::vector<int64_t> in,
             std::vector<int64_t> want) {
  return OpCase{fmt::format("{}_{}_{}", op_name(op), dtype_name(dt), tag),
                op,
                NoAttrs{},
                {ivec(dt, in)},
                {ivec(dt, want)}};
}

OpCase binary(OpKind op, DType dt, const std::string& tag, std::vector<int64_t> a,
              std::vector<int64_t> b, std::vector<int64_t> want) {
  return OpCase{fmt::format("{}_{}_{}", op_name(op), dtype_name(dt), tag),
                op,
                NoAttrs{},
                {ivec(dt, a), ivec(dt, b)},
                {ivec(dt, want)}};
}

OpCase cast(const std::string& tag, HostTensor in, HostTensor want) {
  std::string label =
      fmt::format("cast_{}_to_{}_{}", dtype_name(in.dtype()), dtype_name(want.dtype()), tag);
  const DType to = want.dtype();
  return OpCase{label, OpKind::Cast, CastAttrs{to}, {std::move(in)}, {std::move(want)}};
}

OpCase reduce(OpKind op, const std::string& tag, HostTensor in, HostTensor want) {
  std::string label = fmt::format("{}_{}_{}", op_name(op), dtype_name(in.dtype()), tag);
  return OpCase{label, op, ReduceAttrs{{}, false}, {std::move(in)}, {std::move(want)}};
}

void unary_cases(std::vector<OpCase>& c) {
  using enum OpKind;
  using D = DType;
  c.push_back(unary(Neg, D::i4, "wrap", {-8, 5, 0}, {-8, -5, 0}));
  c.push_back(unary(Neg, D::u4, "wrap", {0, 1, 15}, {0, 15, 1}));
  c.push_back(unary(Neg, D::i16, "wrap", {INT16_MIN, 5}, {INT16_MIN, -5}));
  c.push_back(unary(Neg, D::u16, "wrap", {0, 1, 65535}, {0, 65535, 1}));
  c.push_back(unary(Neg, D::u32, "wrap", {0, 1}, {0, UINT32_MAX}));
  c.push_back(unary(Neg, D::u64, "wrap", {0, 1, kTwo63}, {0, kU64Max, kTwo63}));

  c.push_back(unary(Abs, D::i4, "wrap", {-8, -3, 7}, {-8, 3, 7}));
  c.push_back(unary(Abs, D::u4, "values", {15, 0}, {15, 0}));
  c.push_back(unary(Abs, D::i16, "wrap", {INT16_MIN, -9}, {INT16_MIN, 9}));
  c.push_back(unary(Abs, D::u16, "values", {65535, 0}, {65535, 0}));
  c.push_back(unary(Abs, D::u32, "values", {UINT32_MAX, 0}, {UINT32_MAX, 0}));
  c.push_back(unary(Abs, D::u64, "values", {kU64Max, 0}, {kU64Max, 0}));

  c.push_back(unary(Relu, D::i4, "values", {-8, 7, 0}, {0, 7, 0}));
  c.push_back(unary(Relu, D::u4, "values", {15, 0}, {15, 0}));
  c.push_back(unary(Relu, D::i16, "values", {-7, 7}, {0, 7}));
  c.push_back(unary(Relu, D::u16, "values", {65535, 0}, {65535, 0}));
  c.push_back(unary(Relu, D::u32, "values", {UINT32_MAX, 0}, {UINT32_MAX, 0}));
  c.push_back(unary(Relu, D::u64, "values", {kU64Max, 0}, {kU64Max, 0}));

  c.push_back(unary(Sign, D::i4, "values", {-8, 0, 7}, {-1, 0, 1}));
  c.push_back(unary(Sign, D::u4, "values", {0, 9}, {0, 1}));
  c.push_back(unary(Sign, D::i16, "values", {INT16_MIN, 0, 9}, {-1, 0, 1}));
  c.push_back(unary(Sign, D::u16, "values", {0, 300}, {0, 1}));
  c.push_back(unary(Sign, D::u32, "values", {0, 4000000000}, {0, 1}));
  c.push_back(unary(Sign, D::u64, "values", {0, kTwo63}, {0, 1}));  // not -1
}

void binary_cases(std::vector<OpCase>& c) {
  using enum OpKind;
  using D = DType;
  // i4: [-8, 7], results wrap to 4 bits.
  c.push_back(binary(Add, D::i4, "wrap", {7, -8, 3}, {1, -1, 2}, {-8, 7, 5}));
  c.push_back(binary(Sub, D::i4, "wrap", {-8, 0}, {1, -8}, {7, -8}));
  c.push_back(binary(Mul, D::i4, "wrap", {4, 3, -8}, {4, 3, -1}, {0, -7, -8}));  // 16, 9, 8
  c.push_back(binary(Div, D::i4, "trunc_zero", {7, -7, -8, 5}, {2, 2, -1, 0}, {3, -3, -8, 0}));
  c.push_back(binary(Mod, D::i4, "floor", {5, -5, -8, 7}, {3, 3, -1, 0}, {2, 1, 0, 0}));
  c.push_back(binary(Pow, D::i4, "wrap", {2, 3, -2, 2}, {3, 2, 3, -1}, {-8, -7, -8, 0}));
  // u4: [0, 15].
  c.push_back(binary(Add, D::u4, "wrap", {15, 7}, {1, 8}, {0, 15}));
  c.push_back(binary(Sub, D::u4, "wrap", {3, 9}, {5, 4}, {14, 5}));
  c.push_back(binary(Mul, D::u4, "wrap", {4, 3}, {4, 5}, {0, 15}));
  c.push_back(binary(Div, D::u4, "trunc_zero", {15, 7, 5}, {2, 0, 5}, {7, 0, 1}));
  c.push_back(binary(Mod, D::u4, "values", {15, 7, 5}, {4, 0, 5}, {3, 0, 0}));
  c.push_back(binary(Pow, D::u4, "wrap", {2, 3}, {4, 2}, {0, 9}));
  // i16. 200 * 200 = 40000 = 65536 - 25536; 3^10 = 59049 = 65536 - 6487.
  c.push_back(binary(Add, D::i16, "wrap", {INT16_MAX, -5}, {1, 2}, {INT16_MIN, -3}));
  c.push_back(binary(Sub, D::i16, "wrap", {INT16_MIN, 0}, {1, INT16_MIN}, {INT16_MAX, INT16_MIN}));
  c.push_back(binary(Mul, D::i16, "wrap", {256, 181, 200}, {256, 181, 200}, {0, 32761, -25536}));
  c.push_back(binary(Div, D::i16, "trunc_zero", {INT16_MIN, -7, 9, 7}, {-1, 2, 0, -2},
                     {INT16_MIN, -3, 0, -3}));
  c.push_back(binary(Mod, D::i16, "floor", {-7, 7, INT16_MIN, 5}, {4, -4, -1, 0}, {1, -1, 0, 0}));
  // ONNX's test_mod_mixed_sign_int16 (fmod=0: NumPy's floor mod).
  c.push_back(binary(Mod, D::i16, "onnx_mixed_sign", {-4, 7, 5, 4, -7, 8}, {2, -3, 8, -2, 3, 5},
                     {0, -2, 5, 0, 2, 3}));
  c.push_back(binary(Pow, D::i16, "wrap", {2, 3, -2, 2, -1}, {15, 10, 3, -1, -3},
                     {INT16_MIN, -6487, -8, 0, -1}));
  // u16.
  c.push_back(binary(Add, D::u16, "wrap", {65535, 1}, {1, 2}, {0, 3}));
  c.push_back(binary(Sub, D::u16, "wrap", {3, 9}, {5, 4}, {65534, 5}));
  c.push_back(binary(Mul, D::u16, "wrap", {256, 255}, {256, 257}, {0, 65535}));
  c.push_back(binary(Div, D::u16, "trunc_zero", {65535, 7, 5}, {2, 0, 9}, {32767, 0, 0}));
  c.push_back(binary(Mod, D::u16, "values", {65535, 7, 5}, {256, 0, 9}, {255, 0, 5}));
  c.push_back(binary(Pow, D::u16, "wrap", {2, 3}, {16, 10}, {0, 59049}));
  // u32. 65535 * 65537 = 2^32 - 1; 3^20 = 3486784401 < 2^32.
  c.push_back(binary(Add, D::u32, "wrap", {UINT32_MAX, 7}, {2, 1}, {1, 8}));
  c.push_back(binary(Sub, D::u32, "wrap", {0, 10}, {1, 3}, {UINT32_MAX, 7}));
  c.push_back(binary(Mul, D::u32, "wrap", {65536, 65535}, {65536, 65537}, {0, UINT32_MAX}));
  c.push_back(binary(Div, D::u32, "trunc_zero", {UINT32_MAX, 9, 7}, {2, 0, 7}, {2147483647, 0, 1}));
  c.push_back(binary(Mod, D::u32, "values", {UINT32_MAX, 10, 3}, {10, 0, 5}, {5, 0, 3}));
  c.push_back(binary(Pow, D::u32, "wrap", {2, 3}, {32, 20}, {0, 3486784401}));
  // u64: unsigned beyond 2^63. 3^40 = 12157665459056928801 < 2^64.
  c.push_back(binary(Add, D::u64, "wrap", {kU64Max, 5}, {1, 6}, {0, 11}));
  c.push_back(binary(Sub, D::u64, "wrap", {0, kTwo63}, {1, 1}, {kU64Max, INT64_MAX}));
  c.push_back(
      binary(Mul, D::u64, "wrap", {int64_t{1} << 32, 3}, {int64_t{1} << 32, kTwo63}, {0, kTwo63}));
  c.push_back(binary(Div, D::u64, "unsigned", {kU64Max, kTwo63, 5}, {2, 0, 5}, {INT64_MAX, 0, 1}));
  c.push_back(
      binary(Mod, D::u64, "unsigned", {kU64Max, kTwo63 + 5, 7}, {10, kTwo63, 0}, {5, 5, 0}));
  c.push_back(binary(Pow, D::u64, "wrap", {2, 3, 1}, {64, 40, kU64Max},
                     {0, u64(12157665459056928801ull), 1}));
}

void cast_cases(std::vector<OpCase>& c) {
  using D = DType;
  // To i4/u4: round half to even, then saturate, from every type (ONNX).
  c.push_back(cast("round_saturate", vec(D::f32, {-9, -8.5, -7.5, 2.5, 3.5, 7.4, 100, kNan, -0.4}),
                   ivec(D::i4, {-8, -8, -8, 2, 4, 7, 7, 0, 0})));
  c.push_back(cast("saturate", ivec(D::i32, {-100, 100, -3}), ivec(D::i4, {-8, 7, -3})));
  c.push_back(cast("saturate", ivec(D::u64, {kU64Max, 5}), ivec(D::i4, {7, 5})));
  c.push_back(cast("saturate", ivec(D::u4, {15, 7}), ivec(D::i4, {7, 7})));
  c.push_back(cast("round_saturate", vec(D::f16, {-1, 15.5, 14.5, 0.5, 1.5}),
                   ivec(D::u4, {0, 15, 14, 0, 2})));
  c.push_back(cast("saturate", ivec(D::i8, {-5, 20, 9}), ivec(D::u4, {0, 15, 9})));
  // From i4/u4: exact; to other ints it is an ordinary int -> int cast.
  c.push_back(cast("exact", ivec(D::i4, {-8, 7, -1}), vec(D::f32, {-8, 7, -1})));
  c.push_back(cast("wrap", ivec(D::i4, {-1, 7}), ivec(D::u8, {255, 7})));
  c.push_back(cast("exact", ivec(D::u4, {15, 0}), vec(D::f16, {15, 0})));
  c.push_back(cast("widen", ivec(D::u4, {15}), ivec(D::i64, {15})));
  // i16 / u16 / u32: float -> int saturates, int -> int wraps.
  c.push_back(cast("saturate", vec(D::f32, {40000, -40000, -2.5}),
                   ivec(D::i16, {INT16_MAX, INT16_MIN, -2})));
  c.push_back(cast("wrap", ivec(D::i16, {300, -1}), ivec(D::i8, {44, -1})));
  c.push_back(cast("exact", ivec(D::i16, {INT16_MIN}), vec(D::f16, {-32768})));
  c.push_back(cast("wrap", ivec(D::i64, {65536 + 3, -1}), ivec(D::u16, {3, 65535})));
  c.push_back(cast("exact", ivec(D::u16, {65535}), vec(D::f32, {65535})));
  c.push_back(cast("round", ivec(D::u16, {65535}), vec(D::bf16, {65536})));
  c.push_back(cast("saturate", vec(D::f64, {5e9, -1, 3.9}), ivec(D::u32, {UINT32_MAX, 0, 3})));
  c.push_back(cast("wrap", ivec(D::u32, {UINT32_MAX}), ivec(D::i32, {-1})));
  c.push_back(cast("overflow", ivec(D::u32, {65520, 65519}), vec(D::f16, {INFINITY, 65504})));
  c.push_back(cast("widen", ivec(D::u32, {UINT32_MAX}), ivec(D::i64, {UINT32_MAX})));
  // u64: the full unsigned range, rounded once (2^63 + 2^55 + 1 is just
  // above a bf16 halfway point: through a float rounded to nearest it would
  // tie down to 2^63).
  c.push_back(
      cast("saturate", vec(D::f32, {1e20, -5, 0x1p63}), ivec(D::u64, {kU64Max, 0, kTwo63})));
  c.push_back(cast("round", ivec(D::u64, {kU64Max}), vec(D::f32, {0x1p64})));
  c.push_back(cast("round", ivec(D::u64, {kTwo63 + 1}), vec(D::f64, {0x1p63})));
  c.push_back(cast("round_once", ivec(D::u64, {kTwo63 + (int64_t{1} << 55) + 1}),
                   vec(D::bf16, {0x1p63 + 0x1p56})));
  c.push_back(cast("wrap", ivec(D::u64, {kU64Max}), ivec(D::i64, {-1})));
  c.push_back(cast("wrap", ivec(D::i64, {-1}), ivec(D::u64, {kU64Max})));
  c.push_back(cast("nonzero", ivec(D::u64, {kTwo63, 0}), ivec(D::boolean, {1, 0})));
  c.push_back(cast("values", ivec(D::boolean, {1, 0}), ivec(D::i4, {1, 0})));
}

void reduce_cases(std::vector<OpCase>& c) {
  using enum OpKind;
  using D = DType;
  c.push_back(reduce(ReduceSum, "wrap", ivec(D::i4, {7, 7}), itensor(D::i4, {}, {-2})));
  c.push_back(reduce(ReduceSum, "wrap", ivec(D::u4, {15, 1}), itensor(D::u4, {}, {0})));
  c.push_back(reduce(ReduceMean, "no_wrap", ivec(D::i4, {7, 7, 7}), itensor(D::i4, {}, {7})));
  c.push_back(reduce(ReduceProd, "wrap", ivec(D::i4, {2, 2, 2}), itensor(D::i4, {}, {-8})));
  c.push_back(reduce(ReduceSum, "wrap", ivec(D::u32, {UINT32_MAX, 2}), itensor(D::u32, {}, {1})));
  c.push_back(
      reduce(ReduceSum, "wrap", ivec(D::i16, {INT16_MAX, 1}), itensor(D::i16, {}, {INT16_MIN})));
  c.push_back(reduce(ReduceProd, "wrap", ivec(D::u16, {256, 256, 3}), itensor(D::u16, {}, {0})));
  // 256 * 128 * 3 = 98304 = 65536 + 32768.
  c.push_back(
      reduce(ReduceProd, "wrap", ivec(D::i16, {256, 128, 3}), itensor(D::i16, {}, {INT16_MIN})));
  c.push_back(
      reduce(ReduceProd, "wrap", ivec(D::u32, {65536, 65536, 5}), itensor(D::u32, {}, {0})));
  c.push_back(reduce(ReduceProd, "wrap", ivec(D::u64, {kTwo63, 3}), itensor(D::u64, {}, {kTwo63})));
  c.push_back(reduce(ReduceProd, "wrap", ivec(D::u4, {3, 7}), itensor(D::u4, {}, {5})));  // 21
  // Integer means divide the exact sum and truncate toward zero.
  c.push_back(reduce(ReduceMean, "trunc", ivec(D::i16, {-7, 0}), itensor(D::i16, {}, {-3})));
  c.push_back(reduce(ReduceMean, "no_wrap", ivec(D::u16, {65535, 65535, 65534}),
                     itensor(D::u16, {}, {65534})));
  c.push_back(reduce(ReduceMean, "no_wrap", ivec(D::u32, {UINT32_MAX, UINT32_MAX}),
                     itensor(D::u32, {}, {UINT32_MAX})));
  c.push_back(reduce(ReduceMean, "no_wrap", ivec(D::u4, {15, 15, 14}), itensor(D::u4, {}, {14})));
  // u64 mean: the sum wraps modulo 2^64, then divides unsigned.
  c.push_back(reduce(ReduceMean, "unsigned", ivec(D::u64, {kTwo63, 2}),
                     itensor(D::u64, {}, {u64((uint64_t{1} << 62) + 1)})));
  c.push_back(reduce(ReduceMean, "wrapped_sum", ivec(D::u64, {kU64Max, kU64Max - 2}),
                     itensor(D::u64, {}, {INT64_MAX - 1})));
}

}  // namespace

std::vector<OpCase> int_width_cases() {
  std::vector<OpCase> c;
  unary_cases(c);
  binary_cases(c);
  cast_cases(c);
  reduce_cases(c);
  return c;
}

}  // namespace autofuse::testing
