// Slice inference: the output dim must equal Python's len(range(d)[s:e:k])
// for every value of the symbols, and fold to plain forms where provable.
#include <algorithm>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace infer_slice_test_local {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace graph_test;  // NOLINT

/// CPython's PySlice_AdjustIndices followed by counting the visited indices
/// one by one: an oracle that shares no code with the inference.
int64_t python_slice_length(int64_t dim, int64_t start, int64_t end, int64_t step) {
  const bool forward = step > 0;
  auto adjust = [&](int64_t v) -> int64_t {
    if (v < 0) {
      v += dim;  // v >= INT64_MIN and dim >= 0: no overflow
      if (v < 0) v = forward ? 0 : -1;
    } else if (v >= dim) {
      v = forward ? dim : dim - 1;
    }
    return v;
  };
  const int64_t first = adjust(start);
  const int64_t stop = end == kSliceEnd ? (forward ? dim : -1) : adjust(end);
  int64_t count = 0;
  for (__int128 i = first; forward ? i < stop : i > stop; i += step)
    ++count;
  return count;
}

TEST(InferSliceTest, MatchesPythonForEverySize) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> bounds = {kMin, kSliceEnd - 1, -9, 9};
  for (int64_t v = -5; v <= 5; ++v)
    bounds.push_back(v);
  std::vector<int64_t> ends = bounds;
  ends.push_back(kSliceEnd);
  const int64_t steps[] = {1, 2, 3, kSliceEnd, -1, -2, kMin};
  const Shape dims = {N, N + 2, 2 * N, 0, 1, 5};
  for (const sym::Expr& dim : dims) {
    for (int64_t start : bounds) {
      for (int64_t end : ends) {
        for (int64_t step : steps) {
          OneNode n(OpKind::Slice, {T(DType::f32, {dim})}, SliceAttrs{{0}, {start}, {end}, {step}});
          const sym::Expr out = n.graph.value(n.outputs[0]).type.shape[0];
          ASSERT_THAT(n.guards(), IsEmpty());
          for (int64_t size = 1; size <= 9; ++size) {
            const int64_t d = sym::evaluate(dim, {{"N", size}});
            ASSERT_EQ(sym::evaluate(out, {{"N", size}}), python_slice_length(d, start, end, step))
                << "dim " << dim.to_string() << " = " << d << ", slice " << start << ":" << end
                << ":" << step << " -> " << out.to_string();
          }
        }
      }
    }
  }
}

TEST(InferSliceTest, FoldsProvableCases) {
  struct Case {
    int64_t start, end, step;
    std::string want;
  };
  const Case cases[] = {
      {0, kSliceEnd, 1, "f32[N, D]"},   {1, kSliceEnd, 1, "f32[N, D - 1]"},
      {-1, kSliceEnd, 1, "f32[N, 1]"},  {0, -1, 1, "f32[N, D - 1]"},
      {-1, kSliceEnd, -1, "f32[N, D]"}, {kSliceEnd, kSliceEnd, -1, "f32[N, D]"},
      {0, 0, 1, "f32[N, 0]"},           {5, 2, 1, "f32[N, 0]"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(infer1(OpKind::Slice, {T(DType::f32, {N, D})},
                     SliceAttrs{{-1}, {c.start}, {c.end}, {c.step}}),
              c.want)
        << c.start << ":" << c.end << ":" << c.step;
  }
}

TEST(InferSliceTest, SeveralAxesAndNormalization) {
  OneNode n(OpKind::Slice, {T(DType::i32, {4, N, 10})},
            SliceAttrs{{2, -3}, {1, 0}, {kSliceEnd, 2}, {3, 1}});
  EXPECT_EQ(n.type(), "i32[2, N, 3]");
  const auto& attrs = std::get<SliceAttrs>(n.attrs());
  EXPECT_EQ(attrs.axes, (std::vector<int64_t>{2, 0}));
  // Steps left out mean 1.
  OneNode defaulted(OpKind::Slice, {T(DType::f32, {8})}, SliceAttrs{{0}, {2}, {6}, {}});
  EXPECT_EQ(defaulted.type(), "f32[4]");
  EXPECT_EQ(std::get<SliceAttrs>(defaulted.attrs()).steps, (std::vector<int64_t>{1}));
  EXPECT_EQ(infer1(OpKind::Slice, {T(DType::f32, {N})}, SliceAttrs{}), "f32[N]");
}

TEST(InferSliceTest, Errors) {
  const TensorType x = T(DType::f32, {N, D});
  EXPECT_THAT(infer_error(OpKind::Slice, {x}, SliceAttrs{{0}, {0}, {1}, {0}}),
              HasSubstr("node 'y' (slice): slice: step for axis 0 is 0"));
  EXPECT_THAT(infer_error(OpKind::Slice, {x}, SliceAttrs{{0, -2}, {0, 0}, {1, 1}, {1, 1}}),
              HasSubstr("axis 0 is listed twice"));
  EXPECT_THAT(infer_error(OpKind::Slice, {x}, SliceAttrs{{2}, {0}, {1}, {1}}),
              HasSubstr("axis 2 is out of range for rank 2"));
  EXPECT_THAT(infer_error(OpKind::Slice, {x}, SliceAttrs{{0}, {0, 1}, {1}, {1}}),
              HasSubstr("axes, starts, ends and steps differ in length: 1, 2, 1, 1"));
}

}  // namespace infer_slice_test_local
}  // namespace autofuse
