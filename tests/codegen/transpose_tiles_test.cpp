// Elementwise kernels in transpose tiles (tiling.h: TransposeTiles;
// codegen/cpu/transpose_tiles.cpp): Loads that read across the vector axis
// go through local tile buffers. Hand-written AscGraphs against the
// reference: 2-D, 3-D with an axis between the tiled ones, the 4-D
// attention transpose (merged axes), mixed dtypes and tile sizes, row
// operands and row outputs, a hoisted gather; sizes 1, primes and odd
// tails, uneven block splits, both tiling keys. Pure copies must be exact.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asc_case_util.h"
#include "autofuse/graph/builder.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace transpose_tiles_test_local {

using ::testing::HasSubstr;

std::string with_dtype(std::string text, DType t) {
  const std::string name(dtype_name(t));
  for (size_t at = text.find("DT"); at != std::string::npos; at = text.find("DT", at + name.size()))
    text.replace(at, 2, name);
  return text;
}

std::vector<sym::Binding> nm_bindings() {
  return {{{"N", 1}, {"M", 1}},    {{"N", 1}, {"M", 17}},   {{"N", 17}, {"M", 1}},
          {{"N", 16}, {"M", 16}},  {{"N", 31}, {"M", 17}},  {{"N", 97}, {"M", 64}},
          {{"N", 5}, {"M", 131}},  {{"N", 257}, {"M", 33}}, {{"N", 64}, {"M", 1000}},
          {{"N", 129}, {"M", 127}}};
}

// y = transpose(x): x [N, M], loop axes (M, N).
AscCase copy_2d(DType t) {
  GraphBuilder b("trcopy");
  Tensor x = b.input("x", t, {S("N"), S("M")});
  const char* asc = R"(kernel trcopy axes(z0: M, z1: N) @IO {
  %0 x = data(arg=0) : DT repeats[1, 1]
  %1 t = load(%0) : DT repeats[M, N] strides[1, M] offset 0
  %2 y_store = store(%1) : DT repeats[M, N] strides[N, 1] offset 0
  %3 y_out = output(%2, arg=0) : DT repeats[M, N]
}
)";
  return {fmt::format("copy {}", dtype_name(t)),
          std::move(b).build({b.transpose(x, {1, 0}, "y")}),
          with_dtype(asc, t),
          nm_bindings(),
          0,
          0};
}

// y = exp(transpose(x)) * 1.5.
AscCase exp_scale_2d(DType t) {
  GraphBuilder b("trexp");
  Tensor x = b.input("x", t, {S("N"), S("M")});
  Tensor y = b.mul(b.exp(b.transpose(x, {1, 0})), b.scalar(1.5, t), "y");
  const char* asc = R"(kernel trexp axes(z0: M, z1: N) @IO {
  %0 x = data(arg=0) : DT repeats[1, 1]
  %1 t = load(%0) : DT repeats[M, N] strides[1, M] offset 0
  %2 e = exp(%1) : DT repeats[M, N]
  %3 s = scalar(1.5) : DT repeats[1, 1]
  %4 s_b = broadcast(%3) : DT repeats[M, N]
  %5 y = mul(%2, %4) : DT repeats[M, N]
  %6 y_store = store(%5) : DT repeats[M, N] strides[N, 1] offset 0
  %7 y_out = output(%6, arg=0) : DT repeats[M, N]
}
)";
  const double tol = t == DType::f16 ? 4e-3 : t == DType::bf16 ? 3e-2 : 1e-5;
  return {fmt::format("exp scale {}", dtype_name(t)),
          std::move(b).build({y}),
          with_dtype(asc, t),
          nm_bindings(),
          tol,
          tol};
}

// y[c, b, a] = x[a, b, c] + 1: the tiled axes (C, A) have B between them.
AscCase reverse_3d() {
  GraphBuilder b("rev3");
  Tensor x = b.input("x", DType::f32, {S("A"), S("B"), S("C")});
  Tensor y = b.add(b.transpose(x, {2, 1, 0}), b.scalar(1.0, DType::f32), "y");
  const char* asc = R"(kernel rev3 axes(z0: C, z1: B, z2: A) @IO {
  %0 x = data(arg=0) : f32 repeats[1, 1, 1]
  %1 t = load(%0) : f32 repeats[C, B, A] strides[1, C, B*C] offset 0
  %2 one = scalar(1) : f32 repeats[1, 1, 1]
  %3 one_b = broadcast(%2) : f32 repeats[C, B, A]
  %4 y = add(%1, %3) : f32 repeats[C, B, A]
  %5 y_store = store(%4) : f32 repeats[C, B, A] strides[B*A, A, 1] offset 0
  %6 y_out = output(%5, arg=0) : f32 repeats[C, B, A]
}
)";
  return {"reverse 3-d",
          std::move(b).build({y}),
          asc,
          {{{"A", 1}, {"B", 1}, {"C", 1}},
           {{"A", 17}, {"B", 3}, {"C", 5}},
           {{"A", 5}, {"B", 7}, {"C", 33}},
           {{"A", 64}, {"B", 2}, {"C", 16}},
           {{"A", 3}, {"B", 1}, {"C", 100}},
           {{"A", 31}, {"B", 4}, {"C", 47}}}};
}

// Attention [B, S, H, D] -> [B, H, D, S] times a scale: H and D merge.
AscCase attention_4d(DType t) {
  GraphBuilder b("att4");
  Tensor x = b.input("x", t, {S("B"), S("S"), S("H"), S("D")});
  Tensor y = b.mul(b.transpose(x, {0, 2, 3, 1}), b.scalar(0.125, t), "y");
  const char* asc = R"(kernel att4 axes(z0: B, z1: H, z2: D, z3: S) @IO {
  %0 x = data(arg=0) : DT repeats[1, 1, 1, 1]
  %1 t = load(%0) : DT repeats[B, H, D, S] strides[S*H*D, D, 1, H*D] offset 0
  %2 s = scalar(0.125) : DT repeats[1, 1, 1, 1]
  %3 s_b = broadcast(%2) : DT repeats[B, H, D, S]
  %4 y = mul(%1, %3) : DT repeats[B, H, D, S]
  %5 y_store = store(%4) : DT repeats[B, H, D, S] strides[H*D*S, D*S, S, 1] offset 0
  %6 y_out = output(%5, arg=0) : DT repeats[B, H, D, S]
}
)";
  return {fmt::format("attention 4-d {}", dtype_name(t)),
          std::move(b).build({y}),
          with_dtype(asc, t),
          {{{"B", 1}, {"S", 1}, {"H", 1}, {"D", 1}},
           {{"B", 2}, {"S", 7}, {"H", 3}, {"D", 5}},
           {{"B", 1}, {"S", 128}, {"H", 2}, {"D", 64}},
           {{"B", 3}, {"S", 13}, {"H", 4}, {"D", 8}},
           {{"B", 1}, {"S", 33}, {"H", 1}, {"D", 17}}},
          0,
          0};
}

// Two transposed Loads (f16 and f64: 16 x 8 tiles), a row operand w[m], a
// contiguous operand z and a row output r = 2 * w.
AscCase mixed() {
  GraphBuilder b("mixed");
  Tensor a = b.input("a", DType::f16, {S("N"), S("M")});
  Tensor bb = b.input("b", DType::f64, {S("N"), S("M")});
  Tensor w = b.input("w", DType::f32, {S("M")});
  Tensor z = b.input("z", DType::f32, {S("M"), S("N")});
  Tensor af = b.cast(b.transpose(a, {1, 0}), DType::f32);
  Tensor bf = b.cast(b.transpose(bb, {1, 0}), DType::f32);
  Tensor p = b.mul(af, b.reshape(w, {S("M"), sym::Expr(1)}));
  Tensor y = b.add(b.add(p, z), bf, "y");
  Tensor r = b.mul(w, b.scalar(2.0, DType::f32), "r");
  const char* asc = R"(kernel mixed axes(z0: M, z1: N) @IO {
  %0 a = data(arg=0) : f16 repeats[1, 1]
  %1 a_t = load(%0) : f16 repeats[M, N] strides[1, M] offset 0
  %2 a_f = cast(%1) : f32 repeats[M, N]
  %3 b = data(arg=1) : f64 repeats[1, 1]
  %4 b_t = load(%3) : f64 repeats[M, N] strides[1, M] offset 0
  %5 b_f = cast(%4) : f32 repeats[M, N]
  %6 w = data(arg=2) : f32 repeats[M, 1]
  %7 w_load = load(%6) : f32 repeats[M, 1] strides[1, 0] offset 0
  %8 w_b = broadcast(%7) : f32 repeats[M, N]
  %9 z = data(arg=3) : f32 repeats[M, N]
  %10 z_load = load(%9) : f32 repeats[M, N] strides[N, 1] offset 0
  %11 p = mul(%2, %8) : f32 repeats[M, N]
  %12 q = add(%11, %10) : f32 repeats[M, N]
  %13 y = add(%12, %5) : f32 repeats[M, N]
  %14 y_store = store(%13) : f32 repeats[M, N] strides[N, 1] offset 0
  %15 y_out = output(%14, arg=0) : f32 repeats[M, N]
  %16 two = scalar(2) : f32 repeats[1, 1]
  %17 two_b = broadcast(%16) : f32 repeats[M, 1]
  %18 r = mul(%7, %17) : f32 repeats[M, 1]
  %19 r_store = store(%18) : f32 repeats[M, 1] strides[1, 0] offset 0
  %20 r_out = output(%19, arg=1) : f32 repeats[M, 1]
}
)";
  return {"mixed", std::move(b).build({y, r}), asc, nm_bindings(), 1e-6, 1e-6};
}

// y[m, n] = x[n, m] + table[idx[m], n]: a gather checked once per row.
AscCase with_gather() {
  GraphBuilder b("trg");
  Tensor x = b.input("x", DType::f32, {S("N"), S("M")});
  Tensor table = b.input("table", DType::f32, {S("V"), S("N")});
  Tensor idx = b.input("idx", DType::i64, {S("M")});
  Tensor y = b.add(b.transpose(x, {1, 0}), b.gather(table, idx, 0), "y");
  const char* asc = R"(kernel trg axes(z0: M, z1: N) @IO {
  %0 x = data(arg=0) : f32 repeats[1, 1]
  %1 x_t = load(%0) : f32 repeats[M, N] strides[1, M] offset 0
  %2 table = data(arg=1) : f32 repeats[1, 1]
  %3 idx = data(arg=2) : i64 repeats[M, 1]
  %4 idx_load = load(%3) : i64 repeats[M, 1] strides[1, 0] offset 0
  %5 idx_b = broadcast(%4) : i64 repeats[M, N]
  %6 g = gather(%2, %5, stride=N, size=V) : f32 repeats[M, N] strides[0, 1] offset 0
  %7 y = add(%1, %6) : f32 repeats[M, N]
  %8 y_store = store(%7) : f32 repeats[M, N] strides[N, 1] offset 0
  %9 y_out = output(%8, arg=0) : f32 repeats[M, N]
}
)";
  std::vector<sym::Binding> bindings;
  for (sym::Binding bd : nm_bindings()) {
    bd["V"] = bd["M"] % 7 + 1;
    bindings.push_back(bd);
  }
  return {"with gather", std::move(b).build({y}), asc, bindings};
}

/// The tiles the schedule of case `c` gets.
tiling::TransposeTiles tiles_of(const AscCase& c) {
  return tiling::transpose_tiles(schedule::schedule_kernel(parse_case(c)));
}

TEST(TransposeTiles, CopiesAreExact) {
  std::vector<AscCase> cases;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i64,
                  DType::boolean})
    cases.push_back(copy_2d(t));
  for (const AscCase& c : cases) {
    const tiling::TransposeTiles tiles = tiles_of(c);
    const size_t bytes = dtype_size(c.graph.value(c.graph.inputs()[0]).type.dtype);
    EXPECT_EQ(tiles.axis, 0) << c.label;
    EXPECT_EQ(tiles.rows, bytes == 1 ? 64 : 16) << c.label;
    EXPECT_EQ(tiles.cols, bytes == 8 ? 8 : 16) << c.label;
    EXPECT_EQ(tiles.loads, std::vector<int>{1}) << c.label;
  }
  const std::string code = check_asc_cases(cases);
  EXPECT_THAT(code, HasSubstr("tiles of 16 x 16"));
  EXPECT_THAT(code, HasSubstr("blk[c_][r_] = p0[b1 + r_ + (c0 + c_) * (s_M)]"));
  EXPECT_THAT(code, HasSubstr("t1[(i0 - r0) * 16 + (i1 - c0)]"));
}

TEST(TransposeTiles, ComputeMatchesTheReference) {
  std::vector<AscCase> cases;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    cases.push_back(exp_scale_2d(t));
  cases.push_back(reverse_3d());
  cases.push_back(attention_4d(DType::f32));
  cases.push_back(attention_4d(DType::bf16));
  cases.push_back(mixed());
  cases.push_back(with_gather());
  EXPECT_EQ(tiles_of(cases[4]).axis, 0);  // C, with B between it and A
  {
    const schedule::ScheduledKernel k = schedule::schedule_kernel(parse_case(cases[5]));
    ASSERT_EQ(k.graph.num_axes(), 3);  // B, H*D, S
    EXPECT_EQ(tiling::transpose_tiles(k).axis, 1);
  }
  const tiling::TransposeTiles mixed_tiles = tiles_of(cases[7]);
  EXPECT_EQ(mixed_tiles.loads, (std::vector<int>{1, 4}));
  EXPECT_EQ(mixed_tiles.rows, 16);
  EXPECT_EQ(mixed_tiles.cols, 8);  // the f64 Load's
  const std::string code = check_asc_cases(cases);
  EXPECT_THAT(code, HasSubstr("if (c0 == 0) q1[b19] = "));  // the row output, once per row
  EXPECT_THAT(code, HasSubstr("const int64_t go6 = "));     // the gather, checked per row
}

TEST(TransposeTiles, BadGatherIndicesAreReported) {
  std::vector<AscCase> cases = {with_gather()};
  const CompiledCases compiled = compile_cases(cases);
  for (int64_t bad : {int64_t{0}, int64_t{1}, int64_t{1} << 40})
    expect_reported(cases[0], compiled, 0, 2, 3, bad, {0}, "V");
}

TEST(TransposeTiles, OnlyWhenTheContiguousAxisMoves) {
  // [B, S, H, D] -> [B, H, S, D]: D stays innermost, the strided Load is
  // contiguous in the vector loop.
  GraphBuilder b1("outer");
  Tensor x1 = b1.input("x", DType::f32, {S("B"), S("S"), S("H"), S("D")});
  AscCase outer{"outer dims",
                std::move(b1).build({b1.transpose(x1, {0, 2, 1, 3}, "y")}),
                R"(kernel outer axes(z0: B, z1: H, z2: S, z3: D) @IO {
  %0 x = data(arg=0) : f32 repeats[1, 1, 1, 1]
  %1 t = load(%0) : f32 repeats[B, H, S, D] strides[S*H*D, D, H*D, 1] offset 0
  %2 y_store = store(%1) : f32 repeats[B, H, S, D] strides[H*S*D, S*D, D, 1] offset 0
  %3 y_out = output(%2, arg=0) : f32 repeats[B, H, S, D]
}
)",
                {{{"B", 2}, {"S", 3}, {"H", 5}, {"D", 7}}}};
  EXPECT_EQ(tiles_of(outer).axis, -1);
  // A Store across the vector axis: not tiled (the Load side is contiguous).
  GraphBuilder b2("store");
  Tensor x2 = b2.input("x", DType::f32, {S("N"), S("M")});
  AscCase store{"strided store",
                std::move(b2).build({b2.transpose(x2, {1, 0}, "y")}),
                R"(kernel store axes(z0: N, z1: M) @IO {
  %0 x = data(arg=0) : f32 repeats[1, 1]
  %1 t = load(%0) : f32 repeats[N, M] strides[M, 1] offset 0
  %2 y_store = store(%1) : f32 repeats[N, M] strides[1, N] offset 0
  %3 y_out = output(%2, arg=0) : f32 repeats[N, M]
}
)",
                {{{"N", 5}, {"M", 7}}}};
  EXPECT_EQ(tiles_of(store).axis, -1);
  // Strided along the vector axis but contiguous along no axis (a slice
  // with step 2 of both dims): nothing to read in lines.
  GraphBuilder b3("steps");
  Tensor x3 = b3.input("x", DType::f32, {S("N"), S("M")});
  AscCase steps{"steps",
                std::move(b3).build({b3.transpose(x3, {1, 0}, "y")}),
                R"(kernel steps axes(z0: M, z1: N) @IO {
  %0 x = data(arg=0) : f32 repeats[1, 1]
  %1 t = load(%0) : f32 repeats[M, N] strides[2, 2*M] offset 0
  %2 y_store = store(%1) : f32 repeats[M, N] strides[N, 1] offset 0
  %3 y_out = output(%2, arg=0) : f32 repeats[M, N]
}
)",
                {}};
  EXPECT_EQ(tiles_of(steps).axis, -1);
  // The tiled kernels do not stream (a tile row is shorter than a chunk).
  std::vector<AscCase> cases = {copy_2d(DType::f32)};
  const CompiledCases compiled = compile_cases(cases);
  EXPECT_EQ(compiled.module.code.find("af_nt_store(&q"), std::string::npos);
}

TEST(TransposeTiles, BlocksSplitTilesEvenly) {
  std::vector<AscCase> cases = {exp_scale_2d(DType::f32)};
  const CompiledCases compiled = compile_cases(cases);
  // Tiling data: header (5), symbols M and N, sizes (2), work, chunk.
  for (const auto& [n, m] : {std::pair<int64_t, int64_t>{4096, 4096}, {1000, 37}, {17, 3}}) {
    for (int64_t cores : {1, 3, 7, 64}) {
      const sym::Binding binding = {{"N", n}, {"M", m}};
      const std::vector<int64_t> td = run_tiling(*compiled.so, compiled.module.kernels[0], binding,
                                                 many_tiny_blocks(cores, 64));
      const int64_t tiles = (n + 15) / 16 * ((m + 15) / 16);
      const int64_t block_dim = td.at(0), work = td.at(9), chunk = td.at(10);
      const std::string where = fmt::format("{}x{} on {} cores", n, m, cores);
      EXPECT_EQ(work, tiles) << where;
      // As even as whole tiles allow: every block but the last takes
      // ceil(tiles / cores) tiles, the last at least one.
      EXPECT_EQ(chunk, (tiles + std::min(cores, tiles) - 1) / std::min(cores, tiles)) << where;
      EXPECT_EQ(block_dim, (tiles + chunk - 1) / chunk) << where;
      EXPECT_GT(work - (block_dim - 1) * chunk, 0) << where;
    }
  }
}

}  // namespace transpose_tiles_test_local
}  // namespace autofuse::codegen_test
