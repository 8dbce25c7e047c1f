// Outputs written in pieces (one Store per piece, each at its offset): a
// concat computed in one kernel, in both templates and both reduction
// layouts, with streaming stores, uneven block splits and split reductions.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asc_case_util.h"
#include "autofuse/graph/builder.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace concat_pieces_test_local {

std::vector<sym::Binding> nd_bindings() {
  return {{{"N", 1}, {"D", 1}},   {{"N", 3}, {"D", 7}},  {{"N", 13}, {"D", 64}},
          {{"N", 2}, {"D", 131}}, {{"N", 97}, {"D", 5}}, {{"N", 11}, {"D", 300}}};
}

std::string with_dtype(std::string text, DType t) {
  const std::string name(dtype_name(t));
  for (size_t at = text.find("DT"); at != std::string::npos; at = text.find("DT", at + 1))
    text.replace(at, 2, name);
  return text;
}

// cat = concat(neg(a), b) along axis 1: [N, 2*D], pieces at offsets 0 and D.
AscCase elementwise_concat(DType t) {
  GraphBuilder b("cat");
  Tensor a = b.input("a", t, {S("N"), S("D")});
  Tensor c = b.input("b", t, {S("N"), S("D")});
  const char* asc = R"(kernel cat axes(z0: N, z1: D) @IO {
  %0 a = data(arg=0) : DT repeats[N, D]
  %1 a_load = load(%0) : DT repeats[N, D] strides[D, 1] offset 0
  %2 b = data(arg=1) : DT repeats[N, D]
  %3 b_load = load(%2) : DT repeats[N, D] strides[D, 1] offset 0
  %4 na = neg(%1) : DT repeats[N, D]
  %5 cat_0 = store(%4) : DT repeats[N, D] strides[2*D, 1] offset 0
  %6 cat_1 = store(%3) : DT repeats[N, D] strides[2*D, 1] offset D
  %7 cat = output(%5, %6, arg=0) : DT repeats[N, D]
}
)";
  return {fmt::format("elementwise concat {}", dtype_name(t)),
          std::move(b).build({b.concat({b.unary(OpKind::Neg, a), c}, 1, "cat")}),
          with_dtype(asc, t), nd_bindings()};
}

// Three pieces along axis 0 of a [3*N, D] output, one of them a broadcast
// row, and a second, ordinary output.
AscCase three_pieces() {
  GraphBuilder b("three");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor w = b.input("w", DType::f32, {sym::Expr(1), S("D")});
  Tensor xw = b.mul(x, w, "xw");
  Tensor wb = b.add(b.mul(x, b.scalar(0)), w);  // w broadcast to [N, D]
  const char* asc = R"(kernel three axes(z0: N, z1: D) @IO {
  %0 x = data(arg=0) : f32 repeats[N, D]
  %1 x_load = load(%0) : f32 repeats[N, D] strides[D, 1] offset 0
  %2 w = data(arg=1) : f32 repeats[1, D]
  %3 w_load = load(%2) : f32 repeats[1, D] strides[0, 1] offset 0
  %4 w_b = broadcast(%3) : f32 repeats[N, D]
  %5 xw = mul(%1, %4) : f32 repeats[N, D]
  %6 p0 = store(%5) : f32 repeats[N, D] strides[D, 1] offset 0
  %7 p1 = store(%4) : f32 repeats[N, D] strides[D, 1] offset N*D
  %8 p2 = store(%1) : f32 repeats[N, D] strides[D, 1] offset 2*N*D
  %9 cat = output(%6, %7, %8, arg=0) : f32 repeats[N, D]
  %10 xw_store = store(%5) : f32 repeats[N, D] strides[D, 1] offset 0
  %11 xw_out = output(%10, arg=1) : f32 repeats[N, D]
}
)";
  return {"three pieces", std::move(b).build({b.concat({xw, wb, x}, 0, "cat"), xw}), asc,
          nd_bindings()};
}

// Row layout: concat(a - mean(a), a, mean(a)) along axis 1: [N, 2*D + 1];
// the pieces are stored in passes 1 and 0 and (the row value) after them.
AscCase row_concat(DType t) {
  GraphBuilder b("rowcat");
  Tensor a = b.input("a", t, {S("N"), S("D")});
  Tensor m = b.reduce_mean(a, {1}, true, "m");
  const char* asc = R"(kernel rowcat axes(z0: N, z1: D reduced) @IO {
  %0 a = data(arg=0) : DT repeats[N, D]
  %1 a_load = load(%0) : DT repeats[N, D] strides[D, 1] offset 0
  %2 m = reduce_mean(%1) : DT repeats[N, 1]
  %3 m_b = broadcast(%2) : DT repeats[N, D]
  %4 c = sub(%1, %3) : DT repeats[N, D]
  %5 cat_0 = store(%4) : DT repeats[N, D] strides[2*D + 1, 1] offset 0
  %6 cat_1 = store(%1) : DT repeats[N, D] strides[2*D + 1, 1] offset D
  %7 cat_2 = store(%2) : DT repeats[N, 1] strides[2*D + 1, 0] offset 2*D
  %8 cat = output(%5, %6, %7, arg=0) : DT repeats[N, D]
}
)";
  AscCase c{fmt::format("row concat {}", dtype_name(t)),
            std::move(b).build({b.concat({b.sub(a, m), a, m}, 1, "cat")}), with_dtype(asc, t),
            nd_bindings()};
  c.rtol = c.atol = t == DType::f32 ? 1e-5 : 3e-2;
  c.bindings.push_back({{"N", 2}, {"D", 20011}});  // long rows: split
  return c;
}

// Column layout: concat(x - colmean(x), colmean(x), x) along axis 0:
// [2*N + 1, D], the middle piece a tile vector stored between passes.
AscCase column_concat() {
  GraphBuilder b("colcat");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor m = b.reduce_mean(x, {0}, true, "m");
  const char* asc = R"(kernel colcat axes(z0: N reduced, z1: D) @IO {
  %0 x = data(arg=0) : f32 repeats[N, D]
  %1 x_load = load(%0) : f32 repeats[N, D] strides[D, 1] offset 0
  %2 m = reduce_mean(%1) : f32 repeats[1, D]
  %3 m_b = broadcast(%2) : f32 repeats[N, D]
  %4 c = sub(%1, %3) : f32 repeats[N, D]
  %5 cat_0 = store(%4) : f32 repeats[N, D] strides[D, 1] offset 0
  %6 cat_1 = store(%2) : f32 repeats[1, D] strides[0, 1] offset N*D
  %7 cat_2 = store(%1) : f32 repeats[N, D] strides[D, 1] offset N*D + D
  %8 cat = output(%5, %6, %7, arg=0) : f32 repeats[N, D]
}
)";
  std::vector<sym::Binding> bindings = nd_bindings();
  bindings.push_back({{"N", 5001}, {"D", 3}});  // long columns: split
  return {"column concat",
          std::move(b).build({b.concat({b.sub(x, m), m, x}, 0, "cat")}),
          asc,
          bindings,
          1e-5,
          1e-5};
}

TEST(ConcatPieces, ElementwiseMatchesTheReference) {
  std::vector<AscCase> cases;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::f64})
    cases.push_back(elementwise_concat(t));
  cases.push_back(three_pieces());
  const std::string code = check_asc_cases(cases);
  // Both pieces stream under key 1.
  EXPECT_THAT(code, ::testing::HasSubstr("t5[AF_NT_CHUNK]"));
  EXPECT_THAT(code, ::testing::HasSubstr("t6[AF_NT_CHUNK]"));
}

TEST(ConcatPieces, ReductionsMatchTheReference) {
  std::vector<AscCase> cases;
  for (DType t : {DType::f32, DType::bf16})
    cases.push_back(row_concat(t));
  cases.push_back(column_concat());
  EXPECT_EQ(schedule::schedule_kernel(parse_case(cases.back())).tile_axis, 1);
  check_asc_cases(cases);
}

}  // namespace concat_pieces_test_local
}  // namespace autofuse::codegen_test
