// The module as a whole: kernel names, the tiling function's choices, and
// the structure of the generated source (what later passes and dumps rely
// on).
#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace module_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

sym::Expr S(const char* name) {
  return sym::Expr::symbol(name);
}

Graph bias_gelu() {
  GraphBuilder b("bias_gelu");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor bias = b.input("bias", DType::f32, {S("D")});
  Tensor h = b.add(x, bias);
  Tensor e = b.unary(OpKind::Erf, b.mul(h, b.scalar(0.7071067811865476)));
  Tensor y = b.mul(b.mul(h, b.scalar(0.5)), b.add(e, b.scalar(1)));
  return std::move(b).build({y});
}

Graph row_sum() {
  GraphBuilder b("row_sum");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  return std::move(b).build({b.reduce_sum(x, {1}, true)});
}

TEST(Module, KernelNamesAreUniqueIdentifiers) {
  schedule::ScheduledKernel a = schedule_graph(row_sum());
  schedule::ScheduledKernel b = a;
  schedule::ScheduledKernel c = a;
  c.graph.name = "9 bad-name";
  const codegen::ModuleSource m = codegen::generate_cpu_module({a, b, c});
  ASSERT_EQ(m.kernels.size(), 3u);
  EXPECT_EQ(m.kernels[0].name, "row_sum");
  EXPECT_EQ(m.kernels[1].name, "row_sum_2");
  EXPECT_EQ(m.kernels[2].name, "k_9_bad_name");
  EXPECT_THAT(m.kernels[0].symbols, ElementsAre("D", "N"));
  EXPECT_EQ(m.kernels[0].num_inputs, 1);
  EXPECT_EQ(m.kernels[0].num_outputs, 1);
  EXPECT_THAT(m.code, HasSubstr("extern \"C\" void row_sum_2_kernel("));
  EXPECT_THAT(m.code, HasSubstr("extern \"C\" void k_9_bad_name_tiling("));
  // Deterministic text.
  EXPECT_EQ(codegen::generate_cpu_module({a, b, c}).code, m.code);
}

TEST(Module, TinyWorkRunsAsOneBlockLargeWorkOnEveryCore) {
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(bias_gelu()),
                                                    schedule_graph(row_sum())};
  const codegen::ModuleSource m = codegen::generate_cpu_module(kernels);
  const auto so = compile(m);
  const af_machine machine{2, 32 << 10, 1 << 20, 32 << 20, 64, 64 << 10, 0};
  const Graph graphs[] = {bias_gelu(), row_sum()};
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (auto [n, d, blocks] : {std::tuple{1, 8, 1}, std::tuple{16, 64, 1},
                                std::tuple{512, 1024, 2}, std::tuple{3, 100000, 2}}) {
      // row_sum of 3 rows splits into blocks of whole rows: 2 blocks.
      const sym::Binding binding = {{"N", n}, {"D", d}};
      const auto inputs = random_inputs(graphs[k], binding, 1);
      const KernelRun run =
          run_kernel(*so, m.kernels[k], kernels[k].graph, graphs[k], inputs, binding, machine);
      EXPECT_EQ(run.block_dim, blocks) << m.kernels[k].name << " N=" << n << " D=" << d;
    }
  }
}

TEST(Module, TilingDataAndFunctions) {
  const schedule::ScheduledKernel k = schedule_graph(bias_gelu());
  const tiling::TilingSource t = tiling::emit_tiling(k, "gelu0");
  EXPECT_EQ(t.struct_name, "gelu0_tiling_data");
  EXPECT_THAT(t.code, HasSubstr("struct gelu0_tiling_data {\n  af_tiling_header header;\n"));
  EXPECT_THAT(t.code, HasSubstr("  int64_t s_D;\n  int64_t s_N;\n"));
  EXPECT_THAT(t.code, HasSubstr("extern \"C\" int64_t gelu0_tiling_data_size(void)"));
  EXPECT_THAT(t.code, HasSubstr("const int64_t s_D = symbols[0];"));
  EXPECT_THAT(t.code, HasSubstr("af_choose_blocks(units, "));
  EXPECT_THAT(t.code, HasSubstr("machine->vector_bytes"));  // elementwise: whole vectors
  EXPECT_THAT(t.code, Not(HasSubstr("malloc")));
  // x, bias (it varies along the inner axis) and y: 12 bytes per element.
  EXPECT_EQ(tiling::bytes_per_unit(k).to_string(), "12");
  EXPECT_EQ(tiling::work_units(k).to_string(), (S("N") * S("D")).to_string());

  const schedule::ScheduledKernel r = schedule_graph(row_sum());
  EXPECT_EQ(tiling::work_units(r).to_string(), "N");
  EXPECT_EQ(tiling::bytes_per_unit(r).to_string(), (4 * S("D") + 4).to_string());
}

TEST(Module, SourceStructure) {
  const codegen::ModuleSource m =
      codegen::generate_cpu_module({schedule_graph(bias_gelu()), schedule_graph(row_sum())});
  // The prelude comes first and is self-contained.
  EXPECT_EQ(m.code.find("// ---- kernel_abi.h ----"), 0u);
  EXPECT_THAT(m.code, Not(HasSubstr("#pragma once")));
  // Elementwise: the bias is loaded per element of the row (it varies along
  // the inner axis), the scalars once per call, the vector loop has no calls.
  EXPECT_THAT(m.code, HasSubstr("// ---- kernel bias_gelu (bias_gelu, elementwise template) ----"));
  EXPECT_THAT(m.code, HasSubstr("const int64_t c_end = af_min(ninner, c + (end - f));"));
  EXPECT_THAT(
      m.code,
      HasSubstr("#pragma omp simd\n        for (int64_t i1 = nt_from; i1 < nt_to; ++i1) {"));
  EXPECT_THAT(m.code,
              HasSubstr("#pragma omp simd\n      for (int64_t i1 = c; i1 < c_end; ++i1) {"));
  EXPECT_THAT(m.code, HasSubstr("= af_erf("));
  // Reduction: a short row reduced in place by the prelude, a long one with
  // per-row accumulators in an OpenMP reduction clause.
  EXPECT_THAT(m.code, HasSubstr("// ---- kernel row_sum (row_sum, reduction template) ----"));
  EXPECT_THAT(m.code, HasSubstr("= af_row_sum_f32_in(&p0["));
  EXPECT_THAT(m.code, HasSubstr("#pragma omp simd reduction(+:a"));
  EXPECT_THAT(m.code, HasSubstr("for (int64_t row = row_begin; row < row_end; ++row) {"));
}

TEST(Module, SplitIntoTranslationUnits) {
  const Graph gelu = bias_gelu(), sum = row_sum();
  const schedule::ScheduledKernel kg = schedule_graph(gelu), ks = schedule_graph(sum);
  const codegen::ModuleSource m = codegen::generate_cpu_module({ks, kg, ks});
  ASSERT_EQ(m.launch_code.size(), 3u);
  // One unit: the module itself.
  EXPECT_THAT(codegen::split_translation_units(m, 1), ElementsAre(m.code));
  EXPECT_THAT(codegen::split_translation_units(m, 0), ElementsAre(m.code));
  for (int max_units : {2, 3, 7}) {
    const std::vector<std::string> units = codegen::split_translation_units(m, max_units);
    ASSERT_EQ(units.size(), std::min<size_t>(3, static_cast<size_t>(max_units)));
    EXPECT_EQ(codegen::split_translation_units(m, max_units), units);  // deterministic
    // Each unit is the prelude and whole launches; each launch is in one unit.
    const size_t prelude = m.code.find("\n// ---- kernel ");
    for (const std::string& u : units)
      EXPECT_EQ(u.substr(0, prelude), m.code.substr(0, prelude));
    for (const std::string& launch : m.launch_code) {
      int found = 0;
      for (const std::string& u : units)
        found += count(u, launch) > 0 ? 1 : 0;
      EXPECT_EQ(found, 1) << max_units;
    }
    size_t total = 0;
    for (const std::string& u : units)
      total += u.size() - prelude;
    EXPECT_EQ(total, m.code.size() - prelude);
  }
  // Two units compiled in parallel and linked: every kernel runs as in the
  // module compiled whole.
  const std::vector<std::string> units = codegen::split_translation_units(m, 2);
  jit::CompilerOptions options;
  options.use_cache = false;
  jit::CompileStats stats;
  const auto so = jit::compile_and_load(m.code, units, options, stats);
  EXPECT_EQ(stats.units, 2);
  const sym::Binding binding = {{"N", 7}, {"D", 300}};
  const auto gelu_in = random_inputs(gelu, binding, 3);
  EXPECT_TRUE(tensors_close(
      run_kernel(*so, m.kernels[1], kg.graph, gelu, gelu_in, binding, one_core()).outputs[0],
      run_reference(gelu, gelu_in, binding)[0], 1e-6, 1e-6));
  const auto sum_in = random_inputs(sum, binding, 4);
  for (size_t k : {0u, 2u})
    EXPECT_TRUE(tensors_close(
        run_kernel(*so, m.kernels[k], ks.graph, sum, sum_in, binding, one_core()).outputs[0],
        run_reference(sum, sum_in, binding)[0], 1e-5, 1e-5));
}

TEST(Module, CompilesAndRunsWithClang) {
  if (std::system("clang++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no clang++";
  // clang 14 defaults to gnu++14: the module must not need C++17.
  const Graph graph = bias_gelu();
  const schedule::ScheduledKernel k = schedule_graph(graph);
  const codegen::ModuleSource m = codegen::generate_cpu_module({k});
  jit::CompilerOptions options;
  options.cxx = "clang++";
  options.flags.push_back("-std=gnu++14");
  options.flags.push_back("-Werror");
  options.use_cache = false;
  jit::CompileStats stats;
  const auto so = jit::compile_and_load(m.code, options, stats);
  const sym::Binding binding = {{"N", 5}, {"D", 77}};
  const auto inputs = random_inputs(graph, binding, 3);
  const KernelRun run =
      run_kernel(*so, m.kernels[0], k.graph, graph, inputs, binding, many_tiny_blocks(3, 4));
  const auto want = run_reference(graph, inputs, binding);
  EXPECT_TRUE(tensors_close(run.outputs[0], want[0], 1e-6, 1e-6));
}

}  // namespace module_test_local
}  // namespace autofuse::codegen_test
