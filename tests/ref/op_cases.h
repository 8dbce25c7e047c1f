// Hand-computed reference cases: one op, small inputs, the expected outputs
// written out. Expected float values are written as exact math values and
// rounded once to the case's dtype (so exp(1) in f16 is the f16 rounding of
// 2.71828...); `ulps` allows libm's last-place error in f32/f64 results.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "autofuse/graph/ops.h"
#include "autofuse/ref/tensor.h"

namespace autofuse::testing {

struct OpCase {
  std::string label;  ///< unique, [A-Za-z0-9_]
  OpKind op;
  Attrs attrs;
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> expected;
  int ulps = 0;  ///< allowed error in f32/f64 results (f16/bf16 are exact)
};

void PrintTo(const OpCase& c, std::ostream* os);

/// A tensor from doubles, each rounded to the dtype (HostTensor::set_f64).
HostTensor tensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values);
/// A tensor from exact integers (HostTensor::set_i64).
HostTensor itensor(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values);
/// A rank-1 tensor.
inline HostTensor vec(DType dtype, const std::vector<double>& values) {
  return tensor(dtype, {static_cast<int64_t>(values.size())}, values);
}
inline HostTensor ivec(DType dtype, const std::vector<int64_t>& values) {
  return itensor(dtype, {static_cast<int64_t>(values.size())}, values);
}

/// Builds a one-node graph with static input shapes and runs the reference.
std::vector<HostTensor> run_single_op(OpKind op, const std::vector<HostTensor>& inputs,
                                      const Attrs& attrs = NoAttrs{});

/// Same dtype and shape, and equal elements: NaN matches NaN, zeros must
/// agree in sign, f32/f64 may differ by `ulps` units in the last place.
::testing::AssertionResult same_tensor(const HostTensor& got, const HostTensor& want, int ulps = 0);

std::vector<OpCase> unary_cases();
std::vector<OpCase> binary_cases();
std::vector<OpCase> other_elementwise_cases();  // where, cast
std::vector<OpCase> reduce_cases();
std::vector<OpCase> layout_cases();     // movement, creation, matmul
std::vector<OpCase> int_width_cases();  // i4, u4, i16, u16, u32, u64
std::vector<OpCase> float8_cases();
std::vector<OpCase> bitwise_cases();  // not/and/or/xor on integers
std::vector<OpCase> all_cases();

inline constexpr DType kFloatTypes[] = {DType::f32, DType::f16, DType::bf16, DType::f64};
inline constexpr DType kFloat8Types[] = {DType::f8e4m3fn, DType::f8e4m3fnuz, DType::f8e5m2,
                                         DType::f8e5m2fnuz};
inline constexpr DType kIntTypes[] = {DType::i8, DType::u8,  DType::i32, DType::i64, DType::i4,
                                      DType::u4, DType::i16, DType::u16, DType::u32, DType::u64};

/// An integer dtype's smallest and largest value; u64's largest is written
/// as its bits in an int64 (-1), which set_i64 stores as UINT64_MAX.
struct IntLimits {
  int64_t lo, hi;
};
IntLimits int_limits(DType dtype);
/// A u64 value as the int64 with its bits (for ivec / itensor).
constexpr int64_t u64(uint64_t v) {
  return static_cast<int64_t>(v);
}

}  // namespace autofuse::testing
