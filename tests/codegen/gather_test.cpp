// Gather nodes in generated kernels: embedding lookups and column gathers in
// both templates (vector loops, per-row and per-call gathers, tile vectors of
// the column layout, split reductions), f32/f16/bf16 tables with i64/i32
// indices, negative indices, sizes 1 and primes; bad indices are reported
// in the af_status (never read out of bounds) by every block split.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asc_case_util.h"
#include "autofuse/graph/builder.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace gather_test_local {

using ::testing::HasSubstr;

std::vector<sym::Binding> nhv_bindings() {
  return {{{"N", 1}, {"H", 1}, {"V", 1}},   {{"N", 7}, {"H", 3}, {"V", 2}},
          {{"N", 31}, {"H", 17}, {"V", 5}}, {{"N", 97}, {"H", 64}, {"V", 13}},
          {{"N", 5}, {"H", 131}, {"V", 3}}, {{"N", 2}, {"H", 301}, {"V", 1}}};
}

// out[n, h] = table[idx[n], h]: the gathered row contiguous along h.
const char* kEmbedding = R"(kernel emb axes(z0: N, z1: H) @IO {
  %0 table = data(arg=0) : DT repeats[N, H]
  %1 idx = data(arg=1) : IT repeats[N, 1]
  %2 idx_load = load(%1) : IT repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : IT repeats[N, H]
  %4 e = gather(%0, %3, stride=H, size=V) : DT repeats[N, H] strides[0, 1] offset 0
  %5 e_store = store(%4) : DT repeats[N, H] strides[H, 1] offset 0
  %6 e_out = output(%5, arg=0) : DT repeats[N, H]
}
)";

AscCase embedding(DType table, DType index) {
  GraphBuilder b("emb");
  Tensor t = b.input("table", table, {S("V"), S("H")});
  Tensor i = b.input("idx", index, {S("N")});
  return {fmt::format("embedding {} by {}", dtype_name(table), dtype_name(index)),
          std::move(b).build({b.gather(t, i, 0, "e")}), typed(kEmbedding, table, index),
          nhv_bindings()};
}

// y = g * g with g = gather(x, idx, axis 1): x [N, V], idx [H]; the index
// varies along the vector loop, the non-gathered part along the rows.
AscCase columns() {
  GraphBuilder b("cols");
  Tensor x = b.input("x", DType::f32, {S("N"), S("V")});
  Tensor i = b.input("idx", DType::i32, {S("H")});
  Tensor g = b.gather(x, i, 1, "g");
  const char* asc = R"(kernel cols axes(z0: N, z1: H) @IO {
  %0 x = data(arg=0) : f32 repeats[N, H]
  %1 idx = data(arg=1) : i32 repeats[1, H]
  %2 idx_load = load(%1) : i32 repeats[1, H] strides[0, 1] offset 0
  %3 idx_b = broadcast(%2) : i32 repeats[N, H]
  %4 g = gather(%0, %3, stride=1, size=V) : f32 repeats[N, H] strides[V, 0] offset 0
  %5 y = mul(%4, %4) : f32 repeats[N, H]
  %6 y_store = store(%5) : f32 repeats[N, H] strides[H, 1] offset 0
  %7 y_out = output(%6, arg=0) : f32 repeats[N, H]
}
)";
  return {"columns", std::move(b).build({b.mul(g, g, "y")}), asc, nhv_bindings()};
}

// b = x + tb[idx[n]] + tc[i0]: a per-row gather (loop level 0) and a
// per-call one (level -1), both reported outside vector loops.
AscCase row_and_call_gathers() {
  GraphBuilder b("rowcall");
  Tensor x = b.input("x", DType::f32, {S("N"), S("H")});
  Tensor tb = b.input("tb", DType::f32, {S("V")});
  Tensor idx = b.input("idx", DType::i64, {S("N"), sym::Expr(1)});
  Tensor tc = b.input("tc", DType::f32, {S("W")});
  Tensor i0 = b.input("i0", DType::i32, {sym::Expr(1)});
  Tensor r = b.gather(tb, idx, 0, "r");  // [N, 1]
  Tensor s = b.gather(tc, i0, 0, "s");   // [1]
  const char* asc = R"(kernel rowcall axes(z0: N, z1: H) @IO {
  %0 x = data(arg=0) : f32 repeats[N, H]
  %1 x_load = load(%0) : f32 repeats[N, H] strides[H, 1] offset 0
  %2 tb = data(arg=1) : f32 repeats[N, 1]
  %3 idx = data(arg=2) : i64 repeats[N, 1]
  %4 idx_load = load(%3) : i64 repeats[N, 1] strides[1, 0] offset 0
  %5 r = gather(%2, %4, stride=1, size=V) : f32 repeats[N, 1] strides[0, 0] offset 0
  %6 r_b = broadcast(%5) : f32 repeats[N, H]
  %7 tc = data(arg=3) : f32 repeats[1, 1]
  %8 i0 = data(arg=4) : i32 repeats[1, 1]
  %9 i0_load = load(%8) : i32 repeats[1, 1] strides[0, 0] offset 0
  %10 s = gather(%7, %9, stride=1, size=W) : f32 repeats[1, 1] strides[0, 0] offset 0
  %11 s_b = broadcast(%10) : f32 repeats[N, H]
  %12 a = add(%1, %6) : f32 repeats[N, H]
  %13 y = add(%12, %11) : f32 repeats[N, H]
  %14 y_store = store(%13) : f32 repeats[N, H] strides[H, 1] offset 0
  %15 y_out = output(%14, arg=0) : f32 repeats[N, H]
}
)";
  std::vector<sym::Binding> bindings;
  for (sym::Binding bd : nhv_bindings()) {
    bd["W"] = bd["V"] + 2;
    bindings.push_back(bd);
  }
  return {"row and call gathers", std::move(b).build({b.add(b.add(x, r), s, "y")}), asc, bindings};
}

// Row layout: d = e - mean(e), and per row mean + tb[idx[n]] (a row-node
// gather computed between passes); e is recomputed in both passes.
AscCase embedding_norm(DType table, DType index) {
  GraphBuilder b("embnorm");
  Tensor t = b.input("table", table, {S("V"), S("H")});
  Tensor i = b.input("idx", index, {S("N")});
  Tensor tb = b.input("tb", table, {S("V")});
  Tensor e = b.gather(t, i, 0, "e");
  Tensor m = b.reduce_mean(e, {1}, true, "m");
  Tensor d = b.sub(e, m, "d");
  Tensor rb = b.gather(tb, b.reshape(i, {S("N"), sym::Expr(1)}), 0, "rb");
  Tensor mr = b.add(m, rb, "mr");
  const char* asc = R"(kernel embnorm axes(z0: N, z1: H reduced) @IO {
  %0 table = data(arg=0) : DT repeats[N, H]
  %1 idx = data(arg=1) : IT repeats[N, 1]
  %2 idx_load = load(%1) : IT repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : IT repeats[N, H]
  %4 e = gather(%0, %3, stride=H, size=V) : DT repeats[N, H] strides[0, 1] offset 0
  %5 m = reduce_mean(%4) : DT repeats[N, 1]
  %6 m_b = broadcast(%5) : DT repeats[N, H]
  %7 d = sub(%4, %6) : DT repeats[N, H]
  %8 d_store = store(%7) : DT repeats[N, H] strides[H, 1] offset 0
  %9 d_out = output(%8, arg=0) : DT repeats[N, H]
  %10 tb = data(arg=2) : DT repeats[N, 1]
  %11 rb = gather(%10, %2, stride=1, size=V) : DT repeats[N, 1] strides[0, 0] offset 0
  %12 mr = add(%5, %11) : DT repeats[N, 1]
  %13 mr_store = store(%12) : DT repeats[N, 1] strides[1, 0] offset 0
  %14 mr_out = output(%13, arg=1) : DT repeats[N, 1]
}
)";
  AscCase c{fmt::format("embedding norm {} by {}", dtype_name(table), dtype_name(index)),
            std::move(b).build({d, mr}), typed(asc, table, index), nhv_bindings()};
  c.bindings.push_back({{"N", 2}, {"H", 9001}, {"V", 3}});  // long rows: splits
  c.rtol = c.atol = tolerance(table);
  return c;
}

// Column layout: s[h] = sum_n table[idx[n], h] * w[h] with w[h] = t2[i2[h]]
// a tile vector (gathered in a stage's tile loop), also stored.
AscCase column_sum(DType table) {
  GraphBuilder b("colsum");
  Tensor t = b.input("table", table, {S("V"), S("H")});
  Tensor i = b.input("idx", DType::i64, {S("N")});
  Tensor t2 = b.input("t2", table, {S("W")});
  Tensor i2 = b.input("i2", DType::i32, {S("H")});
  Tensor w = b.gather(t2, i2, 0, "w");
  Tensor s = b.reduce_sum(b.mul(b.gather(t, i, 0, "e"), w, "y"), {0}, true, "s");
  const char* asc = R"(kernel colsum axes(z0: N reduced, z1: H) @IO {
  %0 table = data(arg=0) : DT repeats[N, H]
  %1 idx = data(arg=1) : i64 repeats[N, 1]
  %2 idx_load = load(%1) : i64 repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : i64 repeats[N, H]
  %4 e = gather(%0, %3, stride=H, size=V) : DT repeats[N, H] strides[0, 1] offset 0
  %5 t2 = data(arg=2) : DT repeats[1, H]
  %6 i2 = data(arg=3) : i32 repeats[1, H]
  %7 i2_load = load(%6) : i32 repeats[1, H] strides[0, 1] offset 0
  %8 w = gather(%5, %7, stride=1, size=W) : DT repeats[1, H] strides[0, 0] offset 0
  %9 w_b = broadcast(%8) : DT repeats[N, H]
  %10 y = mul(%4, %9) : DT repeats[N, H]
  %11 s = reduce_sum(%10) : DT repeats[1, H]
  %12 s_store = store(%11) : DT repeats[1, H] strides[0, 1] offset 0
  %13 s_out = output(%12, arg=0) : DT repeats[1, H]
  %14 w_store = store(%8) : DT repeats[1, H] strides[0, 1] offset 0
  %15 w_out = output(%14, arg=1) : DT repeats[1, H]
}
)";
  std::vector<sym::Binding> bindings;
  for (sym::Binding bd : nhv_bindings()) {
    bd["W"] = bd["V"] * 3 + 1;
    bindings.push_back(bd);
  }
  bindings.push_back({{"N", 3001}, {"H", 5}, {"V", 7}, {"W", 2}});  // long columns: splits
  AscCase c{fmt::format("column sum {}", dtype_name(table)), std::move(b).build({s, w}),
            typed(asc, table, DType::i64), bindings};
  c.rtol = c.atol = tolerance(table);
  return c;
}

// Column layout over narrow rows: s[h] = sum_n table[idx[n, h]], a 1-D
// table read by a full index; the tiling folds rows into the tile loop.
AscCase bag_sum() {
  GraphBuilder b("bag");
  Tensor t = b.input("table", DType::f32, {S("V")});
  Tensor i = b.input("idx", DType::i64, {S("N"), S("H")});
  const char* asc = R"(kernel bag axes(z0: N reduced, z1: H) @IO {
  %0 table = data(arg=0) : f32 repeats[N, H]
  %1 idx = data(arg=1) : i64 repeats[N, H]
  %2 idx_load = load(%1) : i64 repeats[N, H] strides[H, 1] offset 0
  %3 e = gather(%0, %2, stride=1, size=V) : f32 repeats[N, H] strides[0, 0] offset 0
  %4 s = reduce_sum(%3) : f32 repeats[1, H]
  %5 s_store = store(%4) : f32 repeats[1, H] strides[0, 1] offset 0
  %6 s_out = output(%5, arg=0) : f32 repeats[1, H]
}
)";
  return {"bag sum",
          std::move(b).build({b.reduce_sum(b.gather(t, i, 0, "e"), {0}, true, "s")}),
          asc,
          {{{"N", 1}, {"H", 1}, {"V", 1}},
           {{"N", 1000}, {"H", 3}, {"V", 7}},
           {{"N", 77}, {"H", 17}, {"V", 2}},
           {{"N", 5}, {"H", 100}, {"V", 31}},
           {{"N", 4099}, {"H", 5}, {"V", 3}}},
          1e-5,
          1e-5};
}

TEST(GatherKernel, ElementwiseLookupsMatchTheReference) {
  std::vector<AscCase> cases;
  for (DType table : {DType::f32, DType::f16, DType::bf16})
    for (DType index : {DType::i64, DType::i32})
      cases.push_back(embedding(table, index));
  cases.push_back(columns());
  cases.push_back(row_and_call_gathers());
  const std::string code = check_asc_cases(cases);
  // Vector loops carry the flags as reductions; other levels report at once.
  EXPECT_THAT(code, HasSubstr("reduction(|:gf4) reduction(max:gk4)"));
  EXPECT_THAT(code, HasSubstr("if (gb10) af_gather_fail(af_st, 1, gr10"));
  EXPECT_THAT(code, HasSubstr("if (gb5) af_gather_fail(af_st, 0, gr5"));
}

TEST(GatherKernel, ReductionsMatchTheReference) {
  std::vector<AscCase> cases;
  for (DType table : {DType::f32, DType::f16, DType::bf16}) {
    cases.push_back(embedding_norm(table, table == DType::f16 ? DType::i32 : DType::i64));
    cases.push_back(column_sum(table));
  }
  cases.push_back(bag_sum());
  for (const AscCase& c : cases)  // the layouts this test means to cover
    EXPECT_EQ(schedule::schedule_kernel(parse_case(c)).tile_axis,
              c.label.starts_with("embedding") ? -1 : 1)
        << c.label;
  check_asc_cases(cases);
  {
    const schedule::ScheduledKernel bag = schedule::schedule_kernel(parse_case(cases.back()));
    EXPECT_TRUE(tiling::folds_rows(bag));
  }
  // The long columns and rows do split across launches.
  const CompiledCases compiled = compile_cases(cases);
  for (size_t i : {size_t{0}, size_t{1}}) {
    const sym::Binding binding = cases[i].bindings.back();
    const std::vector<HostTensor> in = random_inputs(cases[i].graph, binding, 1);
    const PhasedRun run =
        run_phased(*compiled.so, compiled.module.kernels[i], compiled.kernels[i].graph,
                   cases[i].graph, in, binding, split_machine(64, 64));
    EXPECT_GT(run.split, 1) << cases[i].label;
  }
  const sym::Binding narrow = {{"N", 1000}, {"H", 3}, {"V", 7}};
  const std::vector<HostTensor> in = random_inputs(cases.back().graph, narrow, 1);
  const PhasedRun run =
      run_phased(*compiled.so, compiled.module.kernels.back(), compiled.kernels.back().graph,
                 cases.back().graph, in, narrow, one_core());
  EXPECT_GT(run.fold, 1);
}

TEST(GatherKernel, CasesWithoutGathersReadNoStatus) {
  std::vector<AscCase> cases;
  cases.push_back(embedding(DType::f32, DType::i64));
  const CompiledCases compiled = compile_cases(cases);
  EXPECT_EQ(compiled.module.kernels[0].gathers, (std::vector<std::string>{"e"}));
  // 2 inputs, 1 output, the workspace slot: the status is args[4].
  EXPECT_NE(compiled.module.code.find("af_status* const af_st = (af_status*)args[4]"),
            std::string::npos);
  GraphBuilder b("plain");
  Tensor x = b.input("x", DType::f32, {S("N")});
  std::vector<schedule::ScheduledKernel> plain = {
      schedule_graph(std::move(b).build({b.unary(OpKind::Neg, x)}))};
  const codegen::ModuleSource m = codegen::generate_cpu_module(plain);
  EXPECT_TRUE(m.kernels[0].gathers.empty());
  EXPECT_EQ(m.code.find("af_status* const af_st"), std::string::npos);
}

TEST(GatherKernel, BadIndicesAreReportedNotRead) {
  std::vector<AscCase> cases;
  cases.push_back(embedding(DType::f32, DType::i64));
  cases.push_back(embedding(DType::bf16, DType::i32));
  cases.push_back(row_and_call_gathers());
  cases.push_back(embedding_norm(DType::f16, DType::i32));
  cases.push_back(column_sum(DType::f32));
  cases.push_back(bag_sum());
  const CompiledCases compiled = compile_cases(cases);
  for (int64_t bad : {int64_t{0}, int64_t{1}, int64_t{1} << 40, -(int64_t{1} << 40)}) {
    expect_reported(cases[0], compiled, 0, 1, 5, bad, {0}, "V");
    expect_reported(cases[1], compiled, 1, 1, 3, bad, {0}, "V");
    expect_reported(cases[2], compiled, 2, 2, 4, bad, {0}, "V");     // r: per row
    expect_reported(cases[2], compiled, 2, 4, 0, bad, {1}, "W");     // s: per call
    expect_reported(cases[3], compiled, 3, 1, 2, bad, {0, 1}, "V");  // e and rb share idx
    expect_reported(cases[4], compiled, 4, 1, 9, bad, {0}, "V");     // e: pass loop
    expect_reported(cases[4], compiled, 4, 3, 1, bad, {1}, "W");     // w: tile vector
    expect_reported(cases[5], compiled, 5, 1, 11, bad, {0}, "V");    // folded lanes
  }
}

TEST(GatherKernel, EmptyGatheredDimReadsNothing) {
  // size = V - 1 is not provably >= 1: with V = 1 every index is bad and
  // nothing may be read (the table pointer is null here).
  GraphBuilder b("empty");
  Tensor t = b.input("table", DType::f32, {S("V"), S("H")});
  Tensor i = b.input("idx", DType::i64, {S("N")});
  std::vector<AscCase> cases = {
      {"empty dim",
       std::move(b).build({b.gather(t, i, 0, "e")}),
       replace_all(typed(kEmbedding, DType::f32, DType::i64), "size=V", "size=V - 1"),
       {}}};
  const CompiledCases compiled = compile_cases(cases);
  EXPECT_NE(compiled.module.code.find("(gb4 ? (float)0 : p0["), std::string::npos);
  for (int64_t n : {1, 5, 300}) {
    const sym::Binding binding = {{"N", n}, {"H", 70}, {"V", 1}};
    std::vector<HostTensor> in = {HostTensor(DType::f32, {0, 70}), HostTensor(DType::i64, {n})};
    ASSERT_EQ(in[0].data(), nullptr);
    for (int64_t k = 0; k < n; ++k)
      in[1].set_i64(k, -k % 2);  // 0 and -1: out of range [0, 0)
    for (const af_status& st : run_statuses(compiled, 0, cases[0], in, binding)) {
      EXPECT_EQ(st.code, AF_STATUS_GATHER_INDEX);
      EXPECT_EQ(st.bound, 0);
      EXPECT_TRUE(st.index == 0 || st.index == -1) << st.index;
    }
    const KernelRun run =
        run_kernel(*compiled.so, compiled.module.kernels[0], compiled.kernels[0].graph,
                   cases[0].graph, in, binding, one_core());
    for (int64_t k = 0; k < run.outputs[0].numel(); ++k)
      ASSERT_EQ(run.outputs[0].get_f64(k), 0.0) << k;
  }
}

TEST(GatherKernel, UnsignedAndNarrowIndices) {
  // The graph's gather takes i32/i64 indices: the reference casts to i64
  // (random indices of these dtypes are in [-8, 8], so V >= 9).
  std::vector<AscCase> cases;
  for (DType index : {DType::u8, DType::i16, DType::u32, DType::u64}) {
    GraphBuilder b("narrow");
    Tensor t = b.input("table", DType::f32, {S("V"), S("H")});
    Tensor i = b.input("idx", index, {S("N")});
    cases.push_back({fmt::format("embedding by {}", dtype_name(index)),
                     std::move(b).build({b.gather(t, b.cast(i, DType::i64), 0, "e")}),
                     typed(kEmbedding, DType::f32, index),
                     {{{"N", 1}, {"H", 1}, {"V", 9}},
                      {{"N", 37}, {"H", 19}, {"V", 9}},
                      {{"N", 6}, {"H", 130}, {"V", 23}}}});
  }
  check_asc_cases(cases);
  const CompiledCases compiled = compile_cases(cases);
  for (size_t i = 0; i < cases.size(); ++i)
    expect_reported(cases[i], compiled, i, 1, 1, 0, {0}, "V");  // index == n
}

}  // namespace gather_test_local
}  // namespace autofuse::codegen_test
