// not/and/or/xor on every integer dtype: bitwise, two's complement in the
// dtype's width (i4/u4 in 4 bits). Each row pairs a's and b's elements;
// every expected value is worked out by hand (bit patterns in the comments).
#include <fmt/format.h>

#include "ref/op_cases.h"

namespace autofuse::testing {

namespace {

struct BitwiseRows {
  DType dtype;
  std::vector<int64_t> a, b, and_, or_, xor_, not_a;
};

std::vector<BitwiseRows> rows() {
  using D = DType;
  constexpr int64_t kU64Max = u64(UINT64_MAX);
  return {
      // 0x55 = 85, 0xAA = -86.
      {D::i8,
       {-128, 127, -1, 85, -86},
       {-1, 15, 0, -86, 85},
       {-128, 15, 0, 0, 0},
       {-1, 127, -1, -1, -1},
       {127, 112, -1, -1, -1},
       {127, -128, 0, -86, 85}},
      // 0xF0 & 0x3C = 0x30, | = 0xFC, ^ = 0xCC.
      {D::u8,
       {255, 240, 15, 0, 170},
       {1, 60, 255, 0, 85},
       {1, 48, 15, 0, 0},
       {255, 252, 255, 0, 255},
       {254, 204, 240, 0, 255},
       {0, 15, 240, 255, 85}},
      // 0x1234 with 0x00FF: & 0x34, | 0x12FF, ^ 0x12CB.
      {D::i16,
       {INT16_MIN, 4660, -1},
       {INT16_MAX, 255, 21845},
       {0, 52, 21845},
       {-1, 4863, -1},
       {-1, 4811, -21846},
       {INT16_MAX, -4661, 0}},
      // 0xAAAA, 0x0F0F against 0x5555, 0x00FF.
      {D::u16,
       {65535, 43690, 3855},
       {32768, 21845, 255},
       {32768, 0, 15},
       {65535, 65535, 4095},
       {32767, 65535, 4080},
       {0, 21845, 61680}},
      // ~0x7FFF0000 = 0x8000FFFF.
      {D::i32,
       {INT32_MIN, 2147418112, -2},
       {-1, 65535, 1},
       {INT32_MIN, 0, 0},
       {-1, INT32_MAX, -1},
       {INT32_MAX, INT32_MAX, -1},
       {INT32_MAX, -2147418113, 1}},
      // 0xFFFFFFFF ^ 0x12345678 = 0xEDCBA987.
      {D::u32,
       {UINT32_MAX, 2147483649},
       {305419896, 2147483648},
       {305419896, 2147483648},
       {UINT32_MAX, 2147483649},
       {3989547399, 1},
       {0, 2147483646}},
      // 0x00FF00FF00FF00FF against -256 (0xFF..FF00).
      {D::i64,
       {INT64_MIN, -1, 0x00FF00FF00FF00FF},
       {INT64_MAX, 0x0F0F0F0F0F0F0F0F, -256},
       {0, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF0000},
       {-1, -1, -1},
       {-1, u64(0xF0F0F0F0F0F0F0F0ull), u64(0xFF00FF00FF00FFFFull)},
       {INT64_MAX, 0, u64(0xFF00FF00FF00FF00ull)}},
      {D::u64,
       {kU64Max, u64(uint64_t{1} << 63)},
       {0x0123456789ABCDEF, 1},
       {0x0123456789ABCDEF, 0},
       {kU64Max, u64((uint64_t{1} << 63) + 1)},
       {u64(0xFEDCBA9876543210ull), u64((uint64_t{1} << 63) + 1)},
       {0, INT64_MAX}},
      // 4 bits: -8 = 1000, 7 = 0111, 5 = 0101, -6 = 1010, -4 = 1100.
      {D::i4,
       {-8, 7, -1, 5},
       {-1, -8, 3, -6},
       {-8, 0, 3, 0},
       {-1, -1, -1, -1},
       {7, -1, -4, -1},
       {7, -8, 0, -6}},
      {D::u4,
       {15, 10, 6, 0},
       {1, 5, 12, 0},
       {1, 0, 4, 0},
       {15, 15, 14, 0},
       {14, 15, 10, 0},
       {0, 5, 9, 15}},
  };
}

}  // namespace

std::vector<OpCase> bitwise_cases() {
  using enum OpKind;
  std::vector<OpCase> c;
  for (const BitwiseRows& r : rows()) {
    const std::string dt(dtype_name(r.dtype));
    c.push_back({fmt::format("not_{}_bitwise", dt),
                 Not,
                 NoAttrs{},
                 {ivec(r.dtype, r.a)},
                 {ivec(r.dtype, r.not_a)}});
    for (const auto& [op, want] : {std::pair{And, &r.and_}, {Or, &r.or_}, {Xor, &r.xor_}})
      c.push_back({fmt::format("{}_{}_bitwise", op_name(op), dt),
                   op,
                   NoAttrs{},
                   {ivec(r.dtype, r.a), ivec(r.dtype, r.b)},
                   {ivec(r.dtype, *want)}});
  }
  return c;
}

}  // namespace autofuse::testing
