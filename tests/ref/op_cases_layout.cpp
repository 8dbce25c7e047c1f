// Movement, creation, matmul and conv cases.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ref/op_cases.h"

namespace autofuse::testing {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

OpCase make(OpKind op, const std::string& tag, Attrs attrs, std::vector<HostTensor> in,
            std::vector<HostTensor> want) {
  DType dt = in.empty() ? want.front().dtype() : in.front().dtype();
  return OpCase{fmt::format("{}_{}_{}", op_name(op), dtype_name(dt), tag), op, std::move(attrs),
                std::move(in), std::move(want)};
}

Shape shape_of(std::vector<int64_t> dims) {
  return Shape(dims.begin(), dims.end());
}

SliceAttrs slice1(int64_t axis, int64_t start, int64_t end, int64_t step) {
  return SliceAttrs{{axis}, {start}, {end}, {step}};
}

}  // namespace

std::vector<OpCase> layout_cases() {
  using enum OpKind;
  using D = DType;
  std::vector<OpCase> c;

  // Movement copies bits, so one case per element size plus bool is enough
  // to cover every storage width; f16 also checks NaN survives.
  for (DType dt : {D::f32, D::f16, D::i8, D::boolean, D::f64}) {
    const double one = 1, two = dt == D::boolean ? 0 : 2, three = dt == D::boolean ? 1 : 3;
    c.push_back(make(BroadcastTo, "row", ShapeAttrs{shape_of({2, 3})}, {vec(dt, {one, two, three})},
                     {tensor(dt, {2, 3}, {one, two, three, one, two, three})}));
  }
  c.push_back(make(BroadcastTo, "col_and_new_dim", ShapeAttrs{shape_of({2, 2, 3})},
                   {tensor(D::i64, {2, 1}, {7, 8})},
                   {tensor(D::i64, {2, 2, 3}, {7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8})}));
  c.push_back(make(BroadcastTo, "nan", ShapeAttrs{shape_of({2})}, {tensor(D::f16, {1}, {kNan})},
                   {vec(D::f16, {kNan, kNan})}));

  // 3-d transpose: x[i, j, k] = 12i + 4j + k, out[k, i, j] = x[i, j, k].
  std::vector<double> iota24(24);
  for (int i = 0; i < 24; ++i)
    iota24[i] = i;
  c.push_back(make(Transpose, "3d", TransposeAttrs{{2, 0, 1}}, {tensor(D::f32, {2, 3, 4}, iota24)},
                   {tensor(D::f32, {4, 2, 3}, {0, 4, 8,  12, 16, 20, 1, 5, 9,  13, 17, 21,
                                               2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23})}));
  c.push_back(make(Transpose, "2d", TransposeAttrs{{1, 0}},
                   {itensor(D::u8, {2, 3}, {1, 2, 3, 4, 5, 6})},
                   {itensor(D::u8, {3, 2}, {1, 4, 2, 5, 3, 6})}));
  c.push_back(make(Transpose, "2d", TransposeAttrs{{1, 0}}, {tensor(D::bf16, {1, 2}, {1, 2})},
                   {tensor(D::bf16, {2, 1}, {1, 2})}));

  c.push_back(make(Reshape, "2x3_to_3x2", ShapeAttrs{shape_of({3, 2})},
                   {itensor(D::i32, {2, 3}, {1, 2, 3, 4, 5, 6})},
                   {itensor(D::i32, {3, 2}, {1, 2, 3, 4, 5, 6})}));
  c.push_back(make(Reshape, "to_scalar", ShapeAttrs{shape_of({})}, {tensor(D::f64, {1, 1}, {2.5})},
                   {tensor(D::f64, {}, {2.5})}));

  // Python slicing: x = [0, 1, 2, 3, 4].
  const HostTensor x5 = ivec(D::i64, {0, 1, 2, 3, 4});
  c.push_back(make(Slice, "step2", slice1(0, 1, 4, 2), {x5}, {ivec(D::i64, {1, 3})}));
  c.push_back(make(Slice, "neg_step_to_end", slice1(0, -1, kSliceEnd, -2), {x5},
                   {ivec(D::i64, {4, 2, 0})}));
  c.push_back(make(Slice, "reverse_clamped", slice1(0, 10, -10, -1), {x5},
                   {ivec(D::i64, {4, 3, 2, 1, 0})}));
  c.push_back(make(Slice, "neg_start_end", slice1(0, -4, -1, 1), {x5}, {ivec(D::i64, {1, 2, 3})}));
  c.push_back(make(Slice, "neg_step_stop", slice1(0, 3, 0, -1), {x5}, {ivec(D::i64, {3, 2, 1})}));
  c.push_back(make(Slice, "empty", slice1(0, 3, 1, 1), {x5}, {HostTensor(D::i64, {0})}));
  c.push_back(
      make(Slice, "huge_step", slice1(0, 2, kSliceEnd, INT64_MAX), {x5}, {ivec(D::i64, {2})}));
  c.push_back(make(Slice, "2d_two_axes", SliceAttrs{{1, 0}, {-3, 1}, {-1, kSliceEnd}, {1, 1}},
                   {tensor(D::f16, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})},
                   {tensor(D::f16, {1, 2}, {5, 6})}));
  c.push_back(make(Slice, "2d_reverse_rows", SliceAttrs{{0}, {-1}, {kSliceEnd}, {-1}},
                   {tensor(D::f32, {2, 2}, {1, 2, 3, 4})}, {tensor(D::f32, {2, 2}, {3, 4, 1, 2})}));

  c.push_back(make(Concat, "axis1", AxisAttrs{1},
                   {tensor(D::f32, {2, 1}, {1, 2}), tensor(D::f32, {2, 2}, {3, 4, 5, 6})},
                   {tensor(D::f32, {2, 3}, {1, 3, 4, 2, 5, 6})}));
  c.push_back(make(Concat, "axis0_three", AxisAttrs{0},
                   {ivec(D::i8, {1}), ivec(D::i8, {2, 3}), ivec(D::i8, {4})},
                   {ivec(D::i8, {1, 2, 3, 4})}));
  c.push_back(make(Concat, "neg_axis", AxisAttrs{-1},
                   {itensor(D::boolean, {1, 1}, {1}), itensor(D::boolean, {1, 1}, {0})},
                   {itensor(D::boolean, {1, 2}, {1, 0})}));

  c.push_back(
      make(Split, "axis1", SplitAttrs{1, {2, 3}},
           {tensor(D::f32, {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})},
           {tensor(D::f32, {2, 2}, {0, 1, 5, 6}), tensor(D::f32, {2, 3}, {2, 3, 4, 7, 8, 9})}));
  c.push_back(make(Split, "axis0", SplitAttrs{0, {1, 0, 2}}, {ivec(D::u8, {7, 8, 9})},
                   {ivec(D::u8, {7}), HostTensor(D::u8, {0}), ivec(D::u8, {8, 9})}));

  // data = [[1, 2], [3, 4], [5, 6]].
  const HostTensor data = tensor(D::f32, {3, 2}, {1, 2, 3, 4, 5, 6});
  c.push_back(make(Gather, "axis0_neg_index", AxisAttrs{0}, {data, ivec(D::i64, {-1, 0})},
                   {tensor(D::f32, {2, 2}, {5, 6, 1, 2})}));
  c.push_back(make(Gather, "axis1_2d_indices", AxisAttrs{1},
                   {data, itensor(D::i32, {2, 2}, {1, 0, -2, 1})},
                   {tensor(D::f32, {3, 2, 2}, {2, 1, 1, 2, 4, 3, 3, 4, 6, 5, 5, 6})}));
  c.push_back(make(Gather, "scalar_index", AxisAttrs{0},
                   {ivec(D::i8, {5, 6, 7}), itensor(D::i32, {}, {2})}, {itensor(D::i8, {}, {7})}));
  c.push_back(make(Gather, "repeat_index", AxisAttrs{0},
                   {vec(D::bf16, {0.5, 1.5}), ivec(D::i64, {-2, 1, 1})},
                   {vec(D::bf16, {0.5, 1.5, 1.5})}));

  // Constants: one value is a splat; each value is rounded once to the dtype.
  c.push_back(make(Constant, "splat", ConstantAttrs{D::f16, {2}, {0.1}}, {},
                   {vec(D::f16, {0.0999755859375, 0.0999755859375})}));
  c.push_back(make(Constant, "values", ConstantAttrs{D::i8, {4}, {1, -2, 127, -128}}, {},
                   {ivec(D::i8, {1, -2, 127, -128})}));
  c.push_back(make(Constant, "values", ConstantAttrs{D::boolean, {2}, {0, 1}}, {},
                   {ivec(D::boolean, {0, 1})}));
  c.push_back(make(Constant, "scalar", ConstantAttrs{D::bf16, {}, {1.0 / 3.0}}, {},
                   {tensor(D::bf16, {}, {0.333984375})}));
  c.push_back(make(Constant, "values", ConstantAttrs{D::f64, {2, 1}, {0.1, -1e300}}, {},
                   {tensor(D::f64, {2, 1}, {0.1, -1e300})}));

  c.push_back(make(Iota, "axis1", IotaAttrs{D::i64, shape_of({2, 3}), 1}, {},
                   {itensor(D::i64, {2, 3}, {0, 1, 2, 0, 1, 2})}));
  c.push_back(make(Iota, "axis0", IotaAttrs{D::f32, shape_of({2, 3}), 0}, {},
                   {tensor(D::f32, {2, 3}, {0, 0, 0, 1, 1, 1})}));
  c.push_back(
      make(Iota, "axis_neg", IotaAttrs{D::u8, shape_of({3}), -1}, {}, {ivec(D::u8, {0, 1, 2})}));

  // matmul; batch dims broadcast: a[2, 1, 2, 2] x b[3, 2, 2] -> [2, 3, 2, 2].
  c.push_back(
      make(MatMul, "2d", NoAttrs{},
           {tensor(D::f32, {2, 3}, {1, 2, 3, 4, 5, 6}), tensor(D::f32, {3, 2}, {1, 0, 0, 1, 1, 1})},
           {tensor(D::f32, {2, 2}, {4, 5, 10, 11})}));
  for (DType dt : kFloatTypes) {
    c.push_back(make(MatMul, "batch_broadcast", NoAttrs{},
                     {tensor(dt, {2, 1, 2, 2}, {1, 0, 0, 1, 1, 2, 3, 4}),
                      tensor(dt, {3, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0, 2, 0, 0, 2})},
                     {tensor(dt, {2, 3, 2, 2}, {1, 2,  3,  4,  0, 1, 1, 0, 2, 0, 0, 2,
                                                7, 10, 15, 22, 2, 1, 4, 3, 2, 4, 6, 8})}));
  }
  // Double accumulation, rounded once: f16 alone would give 2048.
  c.push_back(make(MatMul, "double_acc", NoAttrs{},
                   {tensor(D::f16, {1, 3}, {2048, 1, 1}), tensor(D::f16, {3, 1}, {1, 1, 1})},
                   {tensor(D::f16, {1, 1}, {2050})}));
  c.push_back(make(MatMul, "k_zero", NoAttrs{},
                   {HostTensor(D::f64, {2, 0}), HostTensor(D::f64, {0, 1})},
                   {tensor(D::f64, {2, 1}, {0, 0})}));

  // conv, depthwise (group 2), stride 2, pads top/left only, with bias:
  // channel 0 is 1..9 under [[1, 2], [3, 4]] + 0.5, channel 1 all ones under
  // [[1, 1], [1, -1]] - 1 (worked by hand on the zero-padded 4x4 planes).
  for (DType dt : kFloatTypes) {
    c.push_back(
        make(Conv, "depthwise_stride_pad", ConvAttrs{{2, 2}, {1, 1}, {1, 1, 0, 0}, 2},
             {tensor(dt, {1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1}),
              tensor(dt, {2, 1, 2, 2}, {1, 2, 3, 4, 1, 1, 1, -1}), tensor(dt, {2}, {0.5, -1})},
             {tensor(dt, {1, 2, 2, 2}, {4.5, 18.5, 36.5, 77.5, -2, -1, -1, 1})}));
  }
  // 1-D, dilation 3: out[i] = x[i] + 10 x[i + 3].
  c.push_back(make(Conv, "dilated_1d", ConvAttrs{{1}, {3}, {0, 0}, 1},
                   {tensor(D::f32, {1, 1, 5}, {1, 2, 3, 4, 5}), tensor(D::f32, {1, 1, 2}, {1, 10})},
                   {tensor(D::f32, {1, 1, 2}, {41, 52})}));
  return c;
}

}  // namespace autofuse::testing
