// Gathers whose index is a broadcast of a value computed at an outer loop
// level (the embedding lookup): the check is hoisted to that level and the
// vector loop reads a plain row (gather.cpp). Each case has a twin whose
// index is a stride-0 Load over the Gather's repeats, which keeps the
// per-element check; both must match the reference, give the same bits
// (Elementwise and column layout: their lanes do not depend on the loop
// body), and report bad indices the same way.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asc_case_util.h"
#include "autofuse/graph/builder.h"
#include "autofuse/ref/random.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace gather_hoist_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

/// The per-element twin of `c`: its index line `from` replaced by `to`.
AscCase twin(const AscCase& c, const std::string& from, const std::string& to) {
  AscCase t{c.label + " (per element)",
            c.graph,
            replace_all(c.asc, from, to),
            c.bindings,
            c.rtol,
            c.atol};
  if (t.asc == c.asc) throw std::runtime_error(c.label + ": twin line not found");
  return t;
}

// y[n, h] = table[idx[n], h] + x[n, h]: an index per row (level 0).
AscCase embedding_add(DType table, DType index) {
  GraphBuilder b("embadd");
  Tensor t = b.input("table", table, {S("V"), S("H")});
  Tensor i = b.input("idx", index, {S("N")});
  Tensor x = b.input("x", table, {S("N"), S("H")});
  const char* asc = R"(kernel embadd axes(z0: N, z1: H) @IO {
  %0 table = data(arg=0) : DT repeats[1, 1]
  %1 idx = data(arg=1) : IT repeats[N, 1]
  %2 idx_load = load(%1) : IT repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : IT repeats[N, H]
  %4 e = gather(%0, %3, stride=H, size=V) : DT repeats[N, H] strides[0, 1] offset 0
  %5 x = data(arg=2) : DT repeats[N, H]
  %6 x_load = load(%5) : DT repeats[N, H] strides[H, 1] offset 0
  %7 y = add(%4, %6) : DT repeats[N, H]
  %8 y_store = store(%7) : DT repeats[N, H] strides[H, 1] offset 0
  %9 y_out = output(%8, arg=0) : DT repeats[N, H]
}
)";
  AscCase c{fmt::format("embedding add {} by {}", dtype_name(table), dtype_name(index)),
            std::move(b).build({b.add(b.gather(t, i, 0, "e"), x, "y")}),
            typed(asc, table, index),
            {{{"N", 1}, {"H", 1}, {"V", 1}},
             {{"N", 7}, {"H", 3}, {"V", 2}},
             {{"N", 31}, {"H", 17}, {"V", 5}},
             {{"N", 97}, {"H", 64}, {"V", 13}},
             {{"N", 5}, {"H", 131}, {"V", 3}},
             {{"N", 3}, {"H", 1031}, {"V", 7}},
             {{"N", 64}, {"H", 768}, {"V", 11}}}};
  c.rtol = c.atol = tolerance(table);
  return c;
}
const char* kEmbeddingAddIndex = "%3 idx_b = broadcast(%2) : IT repeats[N, H]";

// y[n, h] = table[h, idx[0]] * x[n, h]: one index per call (level -1), the
// gathered column strided along the vector loop.
AscCase column_pick(DType table) {
  GraphBuilder b("colpick");
  Tensor t = b.input("table", table, {S("H"), S("V")});
  Tensor i = b.input("idx", DType::i64, {sym::Expr(1)});
  Tensor x = b.input("x", table, {S("N"), S("H")});
  Tensor g = b.reshape(b.gather(t, i, 1, "g"), {S("H")});
  const char* asc = R"(kernel colpick axes(z0: N, z1: H) @IO {
  %0 table = data(arg=0) : DT repeats[1, 1]
  %1 idx = data(arg=1) : i64 repeats[1, 1]
  %2 idx_load = load(%1) : i64 repeats[1, 1] strides[0, 0] offset 0
  %3 idx_b = broadcast(%2) : i64 repeats[1, H]
  %4 g = gather(%0, %3, stride=1, size=V) : DT repeats[1, H] strides[0, V] offset 0
  %5 g_b = broadcast(%4) : DT repeats[N, H]
  %6 x = data(arg=2) : DT repeats[N, H]
  %7 x_load = load(%6) : DT repeats[N, H] strides[H, 1] offset 0
  %8 y = mul(%5, %7) : DT repeats[N, H]
  %9 y_store = store(%8) : DT repeats[N, H] strides[H, 1] offset 0
  %10 y_out = output(%9, arg=0) : DT repeats[N, H]
}
)";
  AscCase c{fmt::format("column pick {}", dtype_name(table)),
            std::move(b).build({b.mul(g, x, "y")}),
            typed(asc, table, DType::i64),
            {{{"N", 1}, {"H", 1}, {"V", 1}},
             {{"N", 13}, {"H", 5}, {"V", 3}},
             {{"N", 3}, {"H", 257}, {"V", 2}},
             {{"N", 37}, {"H", 100}, {"V", 29}}}};
  c.rtol = c.atol = tolerance(table);
  return c;
}
const char* kColumnPickIndex = "%3 idx_b = broadcast(%2) : i64 repeats[1, H]";

// Row layout over two reduced axes: m[n] = mean_{k,h} e, d = e - m with
// e[n, k, h] = table[idx[n, k], h]: the index is fixed per k (checked in
// the pass's loop over k, once per k and pass).
AscCase two_axis_norm(DType table, DType index) {
  GraphBuilder b("norm2");
  Tensor t = b.input("table", table, {S("V"), S("H")});
  Tensor i = b.input("idx", index, {S("N"), S("K")});
  Tensor e = b.gather(t, i, 0, "e");
  Tensor m = b.reduce_mean(e, {1, 2}, true, "m");
  const char* asc = R"(kernel norm2 axes(z0: N, z1: K reduced, z2: H reduced) @IO {
  %0 table = data(arg=0) : DT repeats[1, 1, 1]
  %1 idx = data(arg=1) : IT repeats[N, K, 1]
  %2 idx_load = load(%1) : IT repeats[N, K, 1] strides[K, 1, 0] offset 0
  %3 idx_b = broadcast(%2) : IT repeats[N, K, H]
  %4 e = gather(%0, %3, stride=H, size=V) : DT repeats[N, K, H] strides[0, 0, 1] offset 0
  %5 m = reduce_mean(%4) : DT repeats[N, 1, 1]
  %6 m_b = broadcast(%5) : DT repeats[N, K, H]
  %7 d = sub(%4, %6) : DT repeats[N, K, H]
  %8 d_store = store(%7) : DT repeats[N, K, H] strides[K*H, H, 1] offset 0
  %9 d_out = output(%8, arg=0) : DT repeats[N, K, H]
  %10 m_store = store(%5) : DT repeats[N, 1, 1] strides[1, 0, 0] offset 0
  %11 m_out = output(%10, arg=1) : DT repeats[N, 1, 1]
}
)";
  AscCase c{fmt::format("two-axis norm {} by {}", dtype_name(table), dtype_name(index)),
            std::move(b).build({b.sub(e, m, "d"), m}),
            typed(asc, table, index),
            {{{"N", 1}, {"K", 1}, {"H", 1}, {"V", 1}},
             {{"N", 3}, {"K", 5}, {"H", 7}, {"V", 2}},
             {{"N", 2}, {"K", 17}, {"H", 131}, {"V", 13}},
             {{"N", 5}, {"K", 3}, {"H", 1031}, {"V", 5}},
             {{"N", 1}, {"K", 301}, {"H", 64}, {"V", 3}}}};  // long rows: splits
  c.rtol = c.atol = tolerance(table);
  return c;
}
const char* kTwoAxisIndex = "%3 idx_b = broadcast(%2) : IT repeats[N, K, H]";

// Column layout, a row-level index read by a tile vector:
// s[b, h] = sum_n x[b, n, h] * table[idx[b], h] (folds narrow tiles).
AscCase column_weighted(DType table) {
  GraphBuilder b("colw");
  Tensor x = b.input("x", table, {S("B"), S("N"), S("H")});
  Tensor t = b.input("table", table, {S("V"), S("H")});
  Tensor i = b.input("idx", DType::i32, {S("B")});
  Tensor g = b.reshape(b.gather(t, i, 0, "g"), {S("B"), sym::Expr(1), S("H")});
  const char* asc = R"(kernel colw axes(z0: B, z1: N reduced, z2: H) @IO {
  %0 x = data(arg=0) : DT repeats[B, N, H]
  %1 x_load = load(%0) : DT repeats[B, N, H] strides[N*H, H, 1] offset 0
  %2 table = data(arg=1) : DT repeats[1, 1, 1]
  %3 idx = data(arg=2) : i32 repeats[B, 1, 1]
  %4 idx_load = load(%3) : i32 repeats[B, 1, 1] strides[1, 0, 0] offset 0
  %5 idx_b = broadcast(%4) : i32 repeats[B, 1, H]
  %6 g = gather(%2, %5, stride=H, size=V) : DT repeats[B, 1, H] strides[0, 0, 1] offset 0
  %7 g_b = broadcast(%6) : DT repeats[B, N, H]
  %8 y = mul(%1, %7) : DT repeats[B, N, H]
  %9 s = reduce_sum(%8) : DT repeats[B, 1, H]
  %10 s_store = store(%9) : DT repeats[B, 1, H] strides[H, 0, 1] offset 0
  %11 s_out = output(%10, arg=0) : DT repeats[B, 1, H]
}
)";
  AscCase c{fmt::format("column weighted {}", dtype_name(table)),
            std::move(b).build({b.reduce_sum(b.mul(x, g, "y"), {1}, true, "s")}),
            typed(asc, table, DType::i32),
            {{{"B", 1}, {"N", 1}, {"H", 1}, {"V", 1}},
             {{"B", 3}, {"N", 7}, {"H", 5}, {"V", 2}},
             {{"B", 2}, {"N", 1001}, {"H", 3}, {"V", 13}},
             {{"B", 5}, {"N", 31}, {"H", 131}, {"V", 3}},
             {{"B", 1}, {"N", 3001}, {"H", 17}, {"V", 7}}}};  // long columns: splits
  c.rtol = c.atol = tolerance(table) * 10;
  return c;
}
const char* kColumnWeightedIndex = "%5 idx_b = broadcast(%4) : i32 repeats[B, 1, H]";

// Column layout, the index fixed per reduced index (level 1):
// s[h] = sum_n table[idx[n], h].
AscCase column_bag(DType table) {
  GraphBuilder b("colbag");
  Tensor t = b.input("table", table, {S("V"), S("H")});
  Tensor i = b.input("idx", DType::i64, {S("N")});
  const char* asc = R"(kernel colbag axes(z0: N reduced, z1: H) @IO {
  %0 table = data(arg=0) : DT repeats[1, 1]
  %1 idx = data(arg=1) : i64 repeats[N, 1]
  %2 idx_load = load(%1) : i64 repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : i64 repeats[N, H]
  %4 e = gather(%0, %3, stride=H, size=V) : DT repeats[N, H] strides[0, 1] offset 0
  %5 s = reduce_sum(%4) : DT repeats[1, H]
  %6 s_store = store(%5) : DT repeats[1, H] strides[0, 1] offset 0
  %7 s_out = output(%6, arg=0) : DT repeats[1, H]
}
)";
  AscCase c{fmt::format("column bag {}", dtype_name(table)),
            std::move(b).build({b.reduce_sum(b.gather(t, i, 0, "e"), {0}, true, "s")}),
            typed(asc, table, DType::i64),
            {{{"N", 1}, {"H", 1}, {"V", 1}},
             {{"N", 7}, {"H", 3}, {"V", 2}},
             {{"N", 131}, {"H", 17}, {"V", 5}},
             {{"N", 5}, {"H", 1031}, {"V", 3}},
             {{"N", 4099}, {"H", 5}, {"V", 11}}}};  // long columns: splits
  c.rtol = c.atol = tolerance(table) * 10;
  return c;
}
const char* kColumnBagIndex = "%3 idx_b = broadcast(%2) : i64 repeats[N, H]";

/// The per-element index of a twin: the broadcast line `line` of repeats
/// `repeats` becomes a stride-0 Load of Data `data` with strides `strides`.
std::string load_line(const std::string& line, const std::string& data,
                      const std::string& strides) {
  const size_t eq = line.find(" = ");
  const size_t colon = line.find(" : ");
  return line.substr(0, eq) + " = load(" + data + ")" + line.substr(colon) + " strides[" + strides +
         "] offset 0";
}

/// Every hoisted case followed by its twin.
std::vector<AscCase> cases_and_twins(bool reductions) {
  std::vector<AscCase> hoisted;
  std::vector<std::string> from, to;
  const auto add = [&](AscCase c, const std::string& line, const std::string& data,
                       const std::string& strides) {
    hoisted.push_back(std::move(c));
    from.push_back(line);
    to.push_back(load_line(line, data, strides));
  };
  if (!reductions) {
    for (DType table : {DType::f32, DType::f16, DType::bf16})
      for (DType index : {DType::i64, DType::i32})
        add(embedding_add(table, index), typed(kEmbeddingAddIndex, table, index), "%1", "1, 0");
    for (DType table : {DType::f32, DType::bf16})
      add(column_pick(table), kColumnPickIndex, "%1", "0, 0");
  } else {
    for (DType table : {DType::f32, DType::f16, DType::bf16}) {
      const DType index = table == DType::f16 ? DType::i32 : DType::i64;
      add(two_axis_norm(table, index), typed(kTwoAxisIndex, table, index), "%1", "K, 1, 0");
      add(column_weighted(table), kColumnWeightedIndex, "%3", "1, 0, 0");
      add(column_bag(table), kColumnBagIndex, "%1", "1, 0");
    }
  }
  std::vector<AscCase> out;
  for (size_t i = 0; i < hoisted.size(); ++i) {
    out.push_back(hoisted[i]);
    out.push_back(twin(hoisted[i], from[i], to[i]));
  }
  return out;
}

/// The source of kernel `i` of the module.
std::string kernel_code(const CompiledCases& compiled, size_t i) {
  const std::string& code = compiled.module.code;
  const std::string head = fmt::format("// ---- kernel {} ", compiled.module.kernels.at(i).name);
  const size_t from = code.find(head);
  const size_t to = code.find("// ---- kernel ", from + head.size());
  return code.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

void check_hoisting(const std::vector<AscCase>& cases) {
  check_asc_cases(cases);
  const CompiledCases compiled = compile_cases(cases);
  for (size_t i = 0; i < cases.size(); i += 2) {
    const int gather = cases[i].label.starts_with("column weighted") ? 6 : 4;
    const std::string go = fmt::format("const int64_t go{} = ", gather);
    const std::string flag = fmt::format("reduction(|:gf{})", gather);
    // Hoisted: a row offset and no per-element flags; the twin: the flags.
    EXPECT_THAT(kernel_code(compiled, i), HasSubstr(go)) << cases[i].label;
    EXPECT_THAT(kernel_code(compiled, i), Not(HasSubstr(flag))) << cases[i].label;
    EXPECT_THAT(kernel_code(compiled, i + 1), Not(HasSubstr(go))) << cases[i + 1].label;
    EXPECT_THAT(kernel_code(compiled, i + 1), HasSubstr(flag)) << cases[i + 1].label;
    // Row-layout sums take the compiler's lane count, which the loop body
    // changes: only the other kernels are compared bit for bit.
    if (!cases[i].label.starts_with("two-axis")) expect_same_bits(cases, compiled, i, i + 1);
  }
}

TEST(GatherHoist, ElementwiseMatchesReferenceAndPerElementBits) {
  check_hoisting(cases_and_twins(false));
}

TEST(GatherHoist, ReductionsMatchReferenceAndPerElementBits) {
  const std::vector<AscCase> cases = cases_and_twins(true);
  for (const AscCase& c : cases) {  // the layouts this test means to cover
    const int tile_axis = c.label.starts_with("two-axis")     ? -1
                          : c.label.starts_with("column bag") ? 1
                                                              : 2;
    EXPECT_EQ(schedule::schedule_kernel(parse_case(c)).tile_axis, tile_axis) << c.label;
  }
  check_hoisting(cases);
}

TEST(GatherHoist, BadIndicesAreReportedAsPerElement) {
  std::vector<AscCase> cases;
  for (const AscCase& c : cases_and_twins(false))
    if (c.label.starts_with("embedding add f32 by i64") ||
        c.label.starts_with("embedding add bf16 by u8") || c.label.starts_with("column pick f32"))
      cases.push_back(c);
  for (const AscCase& c : cases_and_twins(true))
    if (c.label.find("f32") != std::string::npos) cases.push_back(c);
  const CompiledCases compiled = compile_cases(cases);
  for (int64_t bad : {int64_t{0}, int64_t{1}, int64_t{1} << 40, -(int64_t{1} << 40)}) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const size_t input = cases[i].label.starts_with("column weighted") ? 2 : 1;
      expect_reported(cases[i], compiled, i, input, 5, bad, {0}, "V");
    }
  }
}

TEST(GatherHoist, EmptyReducedLoopsReadAndReportNothing) {
  // H = 0: the pass loop over h never runs, so no element is read and the
  // per-element form reported nothing; the hoisted check must not either.
  std::vector<AscCase> cases;
  for (const AscCase& c : cases_and_twins(true))
    if (c.label.starts_with("two-axis norm f32")) cases.push_back(c);
  ASSERT_EQ(cases.size(), 2u);
  const CompiledCases compiled = compile_cases(cases);
  EXPECT_THAT(kernel_code(compiled, 0), HasSubstr("&& n2 > 0) af_gather_fail"));
  const sym::Binding binding = {{"N", 3}, {"K", 4}, {"H", 0}, {"V", 5}};
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<HostTensor> in = random_inputs(cases[i].graph, binding, 1);
    for (int64_t k = 0; k < in[1].numel(); ++k)
      in[1].set_i64(k, 99);
    for (const af_status& st : run_statuses(compiled, i, cases[i], in, binding))
      EXPECT_EQ(st.code, AF_STATUS_OK) << cases[i].label;
  }
}

}  // namespace gather_hoist_test_local
}  // namespace autofuse::codegen_test
