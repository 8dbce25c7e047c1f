// The index-arithmetic converters (convert_index.cpp): arg-extremes, TopK,
// triangles, one-hots, CumSum, the gathers and scatters and the
// rearrangements, imported and run on the reference interpreter against
// hand-computed values.
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_index_test_local {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Runs `n` and checks its first output's dtype, shape and values.
void expect_output(const OneNode& n, DType dtype, const std::vector<int64_t>& shape,
                   const std::vector<double>& want, const std::string& what) {
  const HostTensor got = n.run()[0];
  EXPECT_EQ(got.dtype(), dtype) << what;
  EXPECT_EQ(got.shape(), shape) << what;
  EXPECT_THAT(values_of(got), ElementsAreArray(want)) << what;
}

void expect_import_error(const OneNode& n, const std::string& message) {
  try {
    n.import();
    FAIL() << "expected a UserError saying: " << message;
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(ImportIndex, ArgMaxArgMinFirstAndLastOfTies) {
  // Rows: ties of the maximum at 0 and 2, of the minimum at 1 and 3.
  const HostTensor x = host(DType::f32, {2, 4}, {5, 1, 5, 1, -2, 7, 3, 7});
  OneNode n{"ArgMax"};
  n.inputs = {x};
  n.attrs = {attr("axis", 1)};
  expect_output(n, DType::i64, {2, 1}, {0, 1}, "argmax axis 1");
  n.attrs = {attr("axis", -1), attr("select_last_index", 1), attr("keepdims", 0)};
  expect_output(n, DType::i64, {2}, {2, 3}, "argmax last, no keepdims");
  n.attrs = {};
  expect_output(n, DType::i64, {1, 4}, {0, 1, 0, 1}, "argmax default axis 0");
  OneNode m{"ArgMin"};
  m.inputs = {x};
  m.attrs = {attr("axis", 1), attr("keepdims", 0)};
  expect_output(m, DType::i64, {2}, {1, 0}, "argmin axis 1");
  m.attrs = {attr("axis", 1), attr("keepdims", 0), attr("select_last_index", 1)};
  expect_output(m, DType::i64, {2}, {3, 0}, "argmin last");
}

TEST(ImportIndex, ArgMaxOfIntegersAndNaN) {
  OneNode n{"ArgMax"};
  n.inputs = {host(DType::i32, {3, 2}, {4, -9, 4, 12, 3, 12})};
  n.attrs = {attr("axis", 0), attr("keepdims", 0)};
  expect_output(n, DType::i64, {2}, {0, 1}, "int32 first");
  n.attrs.push_back(attr("select_last_index", 1));
  expect_output(n, DType::i64, {2}, {1, 2}, "int32 last");
  // NaN beats every number (NumPy): the first (last) NaN of the row.
  for (const char* op : {"ArgMax", "ArgMin"}) {
    OneNode f{op};
    f.inputs = {host(DType::f32, {2, 4}, {1, kNaN, 9, kNaN, -1, 2, -3, 0})};
    f.attrs = {attr("axis", 1), attr("keepdims", 0)};
    expect_output(f, DType::i64, {2}, {1, std::string(op) == "ArgMax" ? 1.0 : 2.0}, op);
    f.attrs.push_back(attr("select_last_index", 1));
    expect_output(f, DType::i64, {2}, {3, std::string(op) == "ArgMax" ? 1.0 : 2.0}, op);
  }
}

TEST(ImportIndex, HardmaxMarksTheFirstMaximum) {
  OneNode n{"Hardmax"};
  n.opset = 13;
  n.inputs = {host(DType::f32, {2, 3}, {1, 3, 3, -1, -5, -2})};
  expect_output(n, DType::f32, {2, 3}, {0, 1, 0, 1, 0, 0}, "axis -1");
  n.attrs = {attr("axis", 0)};
  expect_output(n, DType::f32, {2, 3}, {1, 1, 1, 0, 0, 0}, "axis 0");
}

TEST(ImportIndex, TriluUpperLowerWithK) {
  // 3x4 values 1..12, and a batch of two.
  std::vector<double> v;
  for (int i = 1; i <= 24; ++i)
    v.push_back(i);
  const HostTensor x = host(DType::f32, {2, 3, 4}, v);
  auto expect_trilu = [&](bool upper, int64_t k, const std::string& what) {
    std::vector<double> want;
    for (int b = 0; b < 2; ++b)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) {
          const bool keep = upper ? c - r >= k : c - r <= k;
          want.push_back(keep ? v[static_cast<size_t>((b * 3 + r) * 4 + c)] : 0);
        }
    OneNode n{"Trilu"};
    n.inputs = {x, host(DType::i64, {}, {static_cast<double>(k)})};
    n.attrs = {attr("upper", upper ? 1 : 0)};
    n.initializer_inputs = {1};
    expect_output(n, DType::f32, {2, 3, 4}, want, what + " (constant k)");
    n.initializer_inputs = {};  // k as a run-time input
    expect_output(n, DType::f32, {2, 3, 4}, want, what + " (run-time k)");
  };
  for (int64_t k : {-4, -1, 0, 2, 5}) {
    expect_trilu(true, k, fmt::format("triu k={}", k));
    expect_trilu(false, k, fmt::format("tril k={}", k));
  }
  OneNode no_k{"Trilu"};
  no_k.inputs = {host(DType::i32, {2, 2}, {1, 2, 3, 4})};
  expect_output(no_k, DType::i32, {2, 2}, {1, 2, 0, 4}, "default: upper, k = 0");
}

TEST(ImportIndex, EyeLikeOffsetsAndDtype) {
  OneNode n{"EyeLike"};
  n.inputs = {HostTensor(DType::i32, {3, 4})};
  n.attrs = {attr("k", 1)};
  expect_output(n, DType::i32, {3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, "k 1");
  n.attrs = {attr("k", -2), attr("dtype", kF64)};
  expect_output(n, DType::f64, {3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, "k -2, f64");
}

TEST(ImportIndex, OneHotWrapsNegativeIndicesAndDropsOutOfRange) {
  OneNode n{"OneHot"};
  n.opset = 11;
  n.inputs = {host(DType::i64, {4}, {0, -1, 3, 4}), host(DType::f32, {}, {4}),
              host(DType::f32, {2}, {-1, 5})};
  n.initializer_inputs = {1};
  expect_output(n, DType::f32, {4, 4},
                {5, -1, -1, -1, -1, -1, -1, 5, -1, -1, -1, 5, -1, -1, -1, -1}, "axis -1");
  // axis 0 with float indices; values as an initializer.
  n.inputs[0] = host(DType::f32, {2}, {2, -4});
  n.attrs = {attr("axis", 0)};
  n.initializer_inputs = {1, 2};
  expect_output(n, DType::f32, {4, 2}, {-1, 5, -1, -1, 5, -1, -1, -1}, "axis 0, float indices");
  n.initializer_inputs = {2};
  expect_import_error(n, "depth (input 1, 'in1') must be a constant");
}

TEST(ImportIndex, CumSumAllModes) {
  const HostTensor x = host(DType::i32, {2, 3}, {1, 2, 3, 4, 5, 6});
  struct Case {
    int64_t axis, exclusive, reverse;
    std::vector<double> want;
  };
  for (const Case& c : std::vector<Case>{{1, 0, 0, {1, 3, 6, 4, 9, 15}},
                                         {-1, 1, 0, {0, 1, 3, 0, 4, 9}},
                                         {1, 0, 1, {6, 5, 3, 15, 11, 6}},
                                         {1, 1, 1, {5, 3, 0, 11, 6, 0}},
                                         {0, 0, 0, {1, 2, 3, 5, 7, 9}},
                                         {0, 1, 1, {4, 5, 6, 0, 0, 0}}}) {
    OneNode n{"CumSum"};
    n.inputs = {x, host(DType::i32, {}, {static_cast<double>(c.axis)})};
    n.initializer_inputs = {1};
    n.attrs = {attr("exclusive", c.exclusive), attr("reverse", c.reverse)};
    expect_output(n, DType::i32, {2, 3}, c.want,
                  fmt::format("axis {} exclusive {} reverse {}", c.axis, c.exclusive, c.reverse));
  }
  OneNode f{"CumSum"};
  f.inputs = {host(DType::f32, {4}, {0.5, kNaN, 1, 2}), host(DType::i64, {1}, {0})};
  f.initializer_inputs = {1};
  f.attrs = {attr("reverse", 1)};
  const HostTensor got = f.run()[0];
  EXPECT_TRUE(std::isnan(got.get_f64(0)) && std::isnan(got.get_f64(1)));
  EXPECT_EQ(got.get_f64(2), 3);
  EXPECT_EQ(got.get_f64(3), 2);
}

TEST(ImportIndex, GatherElementsAlongEachAxis) {
  const HostTensor data = host(DType::f32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  OneNode n{"GatherElements"};
  n.inputs = {data, host(DType::i64, {2, 3}, {1, 2, 0, 2, 0, 0})};
  expect_output(n, DType::f32, {2, 3}, {4, 8, 3, 7, 2, 3}, "axis 0");
  n.inputs[1] = host(DType::i32, {3, 2}, {-1, 0, 1, -3, 2, 2});
  n.attrs = {attr("axis", 1)};
  expect_output(n, DType::f32, {3, 2}, {3, 1, 5, 4, 9, 9}, "axis 1, negative int32 indices");
  // An index outside [-3, 3) is a run-time error, never a wrong element.
  n.inputs[1] = host(DType::i64, {1, 1}, {3});
  EXPECT_THROW(n.run(), UserError);
  n.inputs[1] = host(DType::i64, {4, 1}, {0, 0, 0, 0});
  expect_import_error(n, "indices dim 0 (4) may exceed the data's (3)");
}

TEST(ImportIndex, TopKLargestSmallestTiesAndNaN) {
  OneNode n{"TopK"};
  n.opset = 11;
  n.num_outputs = 2;
  n.inputs = {host(DType::f32, {2, 5}, {3, 1, 3, kNaN, 2, -1, 4, 4, 0, 9}),
              host(DType::i64, {1}, {3})};
  n.initializer_inputs = {1};
  std::vector<HostTensor> out = n.run();
  // NaN counts as the largest; equal values keep index order.
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(std::isnan(out[0].get_f64(0)));
  const std::vector<double> values = values_of(out[0]);
  EXPECT_THAT(std::vector<double>(values.begin() + 1, values.end()),
              ElementsAreArray({3, 3, 9, 4, 4}));
  EXPECT_THAT(values_of(out[1]), ElementsAreArray({3, 0, 2, 4, 1, 2}));
  n.attrs = {attr("largest", 0), attr("axis", 1)};
  out = n.run();
  EXPECT_THAT(values_of(out[0]), ElementsAreArray({1, 2, 3, -1, 0, 4}));
  EXPECT_THAT(values_of(out[1]), ElementsAreArray({1, 4, 0, 0, 3, 1}));
  // Integers along axis 0, K = 1.
  n.inputs = {host(DType::i32, {3, 2}, {5, -2, 7, -2, 7, -3}), host(DType::i64, {1}, {1})};
  n.attrs = {attr("axis", 0)};
  out = n.run();
  EXPECT_THAT(values_of(out[0]), ElementsAreArray({7, -2}));
  EXPECT_THAT(values_of(out[1]), ElementsAreArray({1, 0}));
  n.inputs[1] = host(DType::i64, {1}, {4});
  expect_import_error(n, "K must be one value in [0, 3]");
}

TEST(ImportIndex, GatherNDWithAndWithoutBatchDims) {
  const HostTensor data = iota_host(DType::f32, {2, 2, 3});
  OneNode n{"GatherND"};
  // Pairs (i, j) pick rows data[i, j, :]; negative indices count from the end.
  n.inputs = {data, host(DType::i64, {2, 2}, {1, 0, -2, 1})};
  expect_output(n, DType::f32, {2, 3}, {6, 7, 8, 3, 4, 5}, "k = 2");
  n.inputs[1] = host(DType::i64, {1, 3}, {1, 1, 2});
  expect_output(n, DType::f32, {1}, {11}, "k = 3: scalars");
  // batch_dims 1: out[b] = data[b, indices[b, 0]].
  n.inputs[1] = host(DType::i32, {2, 1}, {1, 0});
  n.attrs = {attr("batch_dims", 1)};
  expect_output(n, DType::f32, {2, 3}, {3, 4, 5, 6, 7, 8}, "batch_dims 1");
  n.inputs[1] = host(DType::i64, {2, 1}, {2, 0});
  EXPECT_THROW(n.run(), UserError) << "index 2 of a dim of 2";
}

TEST(ImportIndex, ReverseSequenceReversesEachPrefix) {
  const HostTensor x = iota_host(DType::f32, {3, 4});  // (batch, time)
  OneNode n{"ReverseSequence"};
  n.opset = 13;
  n.inputs = {x, host(DType::i64, {3}, {1, 4, 2})};
  n.attrs = {attr("batch_axis", 0), attr("time_axis", 1)};
  expect_output(n, DType::f32, {3, 4}, {0, 1, 2, 3, 7, 6, 5, 4, 9, 8, 10, 11}, "batch axis 0");
  n.inputs = {x, host(DType::i64, {4}, {3, 1, 2, 0})};  // (time, batch)
  n.attrs = {};
  expect_output(n, DType::f32, {3, 4}, {8, 1, 6, 3, 4, 5, 2, 7, 0, 9, 10, 11}, "time axis 0");
  n.inputs[1] = host(DType::i64, {4}, {4, 1, 1, 1});
  EXPECT_THROW(n.run(), UserError) << "a length beyond the time axis";
}

TEST(ImportIndex, ScatterElementsReductions) {
  const HostTensor data = host(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  OneNode n{"ScatterElements"};
  n.opset = 18;
  // Row 0 hits column 2 twice; row 1 hits column 0 (as -3) and column 1.
  n.inputs = {data, host(DType::i64, {2, 2}, {2, 2, -3, 1}),
              host(DType::f32, {2, 2}, {10, 20, 30, 0.5})};
  n.attrs = {attr("axis", 1), attr("reduction", "add")};
  expect_output(n, DType::f32, {2, 3}, {1, 2, 33, 34, 5.5, 6}, "add");
  n.attrs = {attr("axis", 1), attr("reduction", "mul")};
  expect_output(n, DType::f32, {2, 3}, {1, 2, 600, 120, 2.5, 6}, "mul");
  n.attrs = {attr("axis", 1), attr("reduction", "max")};
  expect_output(n, DType::f32, {2, 3}, {1, 2, 20, 30, 5, 6}, "max");
  n.attrs = {attr("axis", 1), attr("reduction", "min")};
  expect_output(n, DType::f32, {2, 3}, {1, 2, 3, 4, 0.5, 6}, "min: data when smaller");
  // reduction none without duplicates; indices smaller than data on dim 1.
  n.inputs = {data, host(DType::i64, {1, 2}, {1, 0}), host(DType::f32, {1, 2}, {-1, -2})};
  n.attrs = {attr("axis", 0)};
  expect_output(n, DType::f32, {2, 3}, {1, -2, 3, -1, 5, 6}, "none, axis 0");
  // Bool data.
  n.inputs = {host(DType::boolean, {3}, {0, 1, 0}), host(DType::i64, {1}, {2}),
              host(DType::boolean, {1}, {1})};
  n.attrs = {};
  expect_output(n, DType::boolean, {3}, {0, 1, 1}, "bool");
}

TEST(ImportIndex, DeprecatedScatterIsScatterElements) {
  // Scatter-9 (an opset-10 model) and Scatter-11 mean ScatterElements
  // without a reduction.
  for (int64_t opset : {10, 11}) {
    OneNode n{"Scatter"};
    n.opset = opset;
    n.inputs = {host(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}), host(DType::i64, {1, 2}, {1, 0}),
                host(DType::f32, {1, 2}, {-1, -2})};
    n.attrs = {attr("axis", 0)};
    expect_output(n, DType::f32, {2, 3}, {1, -2, 3, -1, 5, 6}, fmt::format("opset {}", opset));
  }
}

TEST(ImportIndex, ScatterNDSlicesAndDuplicates) {
  const HostTensor data = iota_host(DType::f32, {3, 2});
  OneNode n{"ScatterND"};
  n.opset = 18;
  // Rows 2 and 0 replaced.
  n.inputs = {data, host(DType::i64, {2, 1}, {2, 0}), host(DType::f32, {2, 2}, {7, 8, 9, 10})};
  expect_output(n, DType::f32, {3, 2}, {9, 10, 2, 3, 7, 8}, "none");
  // Both updates hit row 1: max of data and both, even where every pair matches.
  n.inputs[1] = host(DType::i64, {2, 1}, {1, -2});
  n.attrs = {attr("reduction", "max")};
  expect_output(n, DType::f32, {3, 2}, {0, 1, 9, 10, 4, 5}, "max with duplicates");
  n.attrs = {attr("reduction", "min")};
  expect_output(n, DType::f32, {3, 2}, {0, 1, 2, 3, 4, 5}, "min with duplicates");
  // Full index tuples: single elements.
  n.inputs = {data, host(DType::i64, {2, 2}, {0, 1, 2, 0}), host(DType::f32, {2}, {-1, -2})};
  n.attrs = {attr("reduction", "add")};
  expect_output(n, DType::f32, {3, 2}, {0, 0, 2, 3, 2, 5}, "add, k = 2");
}

TEST(ImportIndex, CenterCropPadCropsAndPads) {
  const HostTensor x = iota_host(DType::i32, {5, 2});
  OneNode n{"CenterCropPad"};
  n.opset = 18;
  // Rows cropped 5 -> 2 (start 1); columns padded 2 -> 5 (1 before, 2 after).
  n.inputs = {x, host(DType::i64, {2}, {2, 5})};
  n.initializer_inputs = {1};
  expect_output(n, DType::i32, {2, 5}, {0, 2, 3, 0, 0, 0, 4, 5, 0, 0}, "all axes");
  n.inputs[1] = host(DType::i64, {1}, {3});
  n.attrs = {attr("axes", std::vector<int64_t>{-2})};
  expect_output(n, DType::i32, {3, 2}, {2, 3, 4, 5, 6, 7}, "axes [-2]");
}

TEST(ImportIndex, DepthToSpaceAndSpaceToDepth) {
  // (1, 8, 1, 1) -> (1, 2, 2, 2): DCR reads channel (b1, b2, c), CRD (c, b1, b2).
  const HostTensor x = iota_host(DType::f32, {1, 8, 1, 1});
  OneNode d2s{"DepthToSpace"};
  d2s.inputs = {x};
  d2s.attrs = {attr("blocksize", 2)};
  expect_output(d2s, DType::f32, {1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7}, "DCR");
  d2s.attrs.push_back(attr("mode", "CRD"));
  expect_output(d2s, DType::f32, {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, "CRD");

  // SpaceToDepth inverts DepthToSpace (DCR) on a larger shape.
  const HostTensor y = iota_host(DType::f32, {2, 3, 4, 6});
  ModelBuilder m(13);
  m.input("y", kF32, {2, 3, 4, 6})
      .node("SpaceToDepth", {"y"}, {"z"}, {attr("blocksize", 2)})
      .node("DepthToSpace", {"z"}, {"back"}, {attr("blocksize", 2)})
      .output("z")
      .output("back");
  const std::vector<HostTensor> out = run(m.import(), {y});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 12, 2, 3}));
  // z[0, (b1 * 2 + b2) * 3 + c, h, w] = y[0, c, 2h + b1, 2w + b2]: channel 4
  // is (b1, b2, c) = (0, 1, 1), so z[0, 4, 0, 0] = y[0, 1, 0, 1] = 25.
  EXPECT_EQ(out[0].get_f64(4 * 6), 25);
  EXPECT_EQ(values_of(out[1]), values_of(y));

  OneNode bad{"DepthToSpace"};
  bad.inputs = {HostTensor(DType::f32, {1, 6, 2, 2})};
  bad.attrs = {attr("blocksize", 2)};
  expect_import_error(bad, "dim 1 (6) must be a multiple of 4");
}

}  // namespace import_index_test_local
}  // namespace autofuse::frontend::testing
