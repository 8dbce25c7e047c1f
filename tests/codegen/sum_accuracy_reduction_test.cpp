// Accuracy of float sums at large sizes (reduction_pass.cpp), against an
// exact sum of the same input values in double, for f32, f16 and bf16
// inputs (computed in f32) and n up to 2^24:
//
//   row layout (chunks of kSumChunk = 1024, pairwise over chunks):
//     |got - exact| <= (1024 / 4 + 2 * log2(n) + 4) * 2^-24 * sum|x|
//                      + 2^-24 |exact| (the f32 result's rounding)
//   (per-lane partials on L >= 4 lanes: 1024 / L per chunk; log2(n) levels
//   of chunk sums and lanes; a split adds at most log2(n) more roundings);
//   column layout (per column: chunks of 64 rows, Kahan over the chunk sums;
//   narrow tiles fold rows into lanes, combined pairwise):
//     (64 + 4 + log2(fold) + split) * 2^-24 * sum|x| + the same.
//
// The adversarial input is one 1 followed by values below half an ulp of 1:
// a serial sum, or per-lane partials over the whole row (the previous
// scheme), lose all the small values of the lane that holds the 1 (an error
// of n / L of them, ~3% here); the test checks that this input tells the two
// apart. Random inputs (all positive, and mixed signs) follow.
#include <cmath>

#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "reduction_test_util.h"
#include "sanitizer.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace sum_accuracy_reduction_test_local {

constexpr double kEps = 0x1p-24;

sym::Expr S(const char* name) {
  return sym::Expr::symbol(name);
}

/// A value below half an ulp of 1 in f32 arithmetic, exact in `dt`.
double small_value(DType dt) {
  return dt == DType::f16 ? 0x1p-24 : 0x1p-25;  // f16: its smallest subnormal (a tie: rounds to 1)
}

enum class Input { OnePlusSmall, Uniform, MixedSigns };

HostTensor make_input(DType dt, const std::vector<int64_t>& shape, Input kind, int64_t column) {
  HostTensor x(dt, shape);
  const int64_t n = x.numel();
  const int64_t cols = shape.size() > 1 ? shape.back() : 1;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1p-53;  // [0, 1)
    double v = 0;
    switch (kind) {
      case Input::OnePlusSmall:
        v = i % cols != column ? u : i / cols == 0 ? 1.0 : small_value(dt);
        break;
      case Input::Uniform:
        v = u;
        break;
      case Input::MixedSigns:
        v = 2 * u - 1;
        break;
    }
    x.set_f64(i, v);  // rounds to dt
  }
  return x;
}

/// Per column (stride `cols`): the exact sum and the sum of magnitudes.
void exact_sums(const HostTensor& x, int64_t cols, std::vector<double>& sum,
                std::vector<double>& abs_sum) {
  sum.assign(static_cast<size_t>(cols), 0);
  abs_sum.assign(static_cast<size_t>(cols), 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.get_f64(i);
    sum[static_cast<size_t>(i % cols)] += v;  // n <= 2^24 values: exact to ~2^-29 relative
    abs_sum[static_cast<size_t>(i % cols)] += std::fabs(v);
  }
}

/// Per-lane partial sums over the whole row in f32 (the scheme before the
/// cascade), to show that the adversarial input breaks it.
double lane_partials(const HostTensor& x, int lanes) {
  std::vector<float> acc(static_cast<size_t>(lanes), 0.0f);
  for (int64_t i = 0; i < x.numel(); ++i)
    acc[static_cast<size_t>(i % lanes)] += static_cast<float>(x.get_f64(i));
  float total = 0;
  for (float a : acc)
    total += a;
  return total;
}

struct Kernel {
  Graph graph;
  schedule::ScheduledKernel scheduled;
};

/// The f32 sum of `dt` inputs (f16 and bf16 inputs are read and summed in
/// f32: the cast vanishes in the kernel; an f16 result could not hold these
/// sums).
Kernel sum_kernel(DType dt, bool column) {
  GraphBuilder b(column ? "column_sum" : "total_sum");
  Tensor x = column ? b.input("x", dt, {S("N"), S("D")}) : b.input("x", dt, {S("N")});
  if (dt != DType::f32) x = b.cast(x, DType::f32);
  Tensor s = b.reduce_sum(x, {0}, /*keepdims=*/false);
  Kernel k{std::move(b).build({s}), {}};
  k.scheduled = schedule_graph(k.graph);
  return k;
}

TEST(SumAccuracy, WithinTheStatedBoundAtTwoToThe24) {
  // 2^20 under ASan (the bound and the adversarial input's check hold
  // there too): ASan checks the runner's memory, not the accuracy at size,
  // which the release build tests.
  const int64_t n = int64_t{1} << (kUnderAddressSanitizer ? 20 : 24);
  for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
    std::vector<Kernel> kernels;
    kernels.push_back(sum_kernel(dt, false));
    kernels.push_back(sum_kernel(dt, true));
    std::vector<schedule::ScheduledKernel> scheduled = {kernels[0].scheduled, kernels[1].scheduled};
    ASSERT_EQ(scheduled[0].tile_axis, -1);
    ASSERT_EQ(scheduled[1].tile_axis, 1);
    const codegen::ModuleSource module = codegen::generate_cpu_module(scheduled);
    const auto so = compile(module);
    for (Input kind : {Input::OnePlusSmall, Input::Uniform, Input::MixedSigns}) {
      for (bool column : {false, true}) {
        const Kernel& k = kernels[column ? 1 : 0];
        const int64_t cols = column ? 4 : 1;
        const std::vector<int64_t> shape =
            column ? std::vector<int64_t>{n / cols, cols} : std::vector<int64_t>{n};
        const sym::Binding binding =
            column ? sym::Binding{{"N", n / cols}, {"D", cols}} : sym::Binding{{"N", n}};
        const HostTensor x = make_input(dt, shape, kind, column ? 2 : 0);
        std::vector<double> sum, abs_sum;
        exact_sums(x, cols, sum, abs_sum);
        if (kind == Input::OnePlusSmall && !column) {
          // The input defeats per-lane partials (16 lanes: AVX-512 f32).
          const double bound = (1024.0 / 4 + 2 * 24 + 4) * kEps * abs_sum[0];
          EXPECT_GT(std::fabs(lane_partials(x, 16) - sum[0]), 100 * bound) << dtype_name(dt);
        }
        for (const af_machine& m : {one_core(), split_machine(16, 64)}) {
          const PhasedRun run = run_phased(*so, module.kernels[column ? 1 : 0], k.scheduled.graph,
                                           k.graph, {x}, binding, m);
          const HostTensor& got = run.outputs.at(0);
          for (int64_t c = 0; c < cols; ++c) {
            const auto ci = static_cast<size_t>(c);
            const double terms = column ? 64.0 + 4 + std::log2(static_cast<double>(run.fold)) +
                                              static_cast<double>(run.split)
                                        : 1024.0 / 4 + 2 * 24 + 4;
            const double bound = terms * kEps * abs_sum[ci] + kEps * std::fabs(sum[ci]);
            const double err = std::fabs(got.get_f64(c) - sum[ci]);
            EXPECT_LE(err, bound) << dtype_name(dt) << (column ? " column " : " row ") << c
                                  << " input " << static_cast<int>(kind) << " cores " << m.cores
                                  << " split " << run.split << ": got " << got.get_f64(c)
                                  << ", exact " << sum[ci] << ", error / (eps sum|x|) "
                                  << err / (kEps * abs_sum[ci]);
          }
          if (m.cores == 16) {
            EXPECT_GT(run.split, 1) << "split across 16 cores";
          }
          if (column) {
            EXPECT_GT(run.fold, 1) << "4 columns: rows fold into the vector loop";
          }
        }
      }
    }
  }
}

TEST(SumAccuracy, OneChunkRowsSumPlainlyBitForBit) {
  // A row of a static length <= 1024 is one cascade chunk: the kernel sums
  // it plainly (no chunk counter per row and Reduce) and must get the
  // cascade's result bit for bit (the same row summed with a symbolic
  // length, which keeps the cascade), split or not. The summed value is
  // x + x, not a product: g++ contracts (-ffp-contract=fast) a product into
  // the sum's add once it sees through a short static row's buffer, and the
  // fused multiply-add rounds once less (found on an AVX2 machine, where
  // the static row of 16 is two vectors; the symbolic row keeps its buffer).
  const auto row_sum = [](const char* name, sym::Expr d) {
    GraphBuilder b(name);
    Tensor x = b.input("x", DType::f32, {S("N"), d});
    Tensor y = b.reduce_sum(b.add(x, x), {1}, /*keepdims=*/false);
    Kernel k{std::move(b).build({y}), {}};
    k.scheduled = schedule_graph(k.graph);
    return k;
  };
  // (Rows of 64 and more sum x + x in a vector pass, static rows only, in
  // another order: vector_pass.cpp; their result is checked against the
  // reference elsewhere.)
  for (int64_t d : {1, 16, 63}) {
    const Kernel fixed = row_sum("fixed", sym::Expr(d)), symbolic = row_sum("symbolic", S("D"));
    const codegen::ModuleSource module =
        codegen::generate_cpu_module({fixed.scheduled, symbolic.scheduled});
    const auto kernel_code = [&](size_t k) {  // from its kernel function to the next's
      const size_t at = module.code.find(module.kernels[k].name + "_kernel(");
      return module.code.substr(
          at, k == 0 ? module.code.find("symbolic_kernel(") - at : std::string::npos);
    };
    EXPECT_EQ(kernel_code(0).find("pairwise partial sums"), std::string::npos) << d;
    EXPECT_NE(kernel_code(1).find("pairwise partial sums"), std::string::npos) << d;
    const auto so = compile(module);
    const int64_t n = 37;
    const HostTensor x = make_input(DType::f32, {n, d}, Input::MixedSigns, 0);
    for (const af_machine& m : {one_core(), split_machine(16, 64)}) {
      const PhasedRun a = run_phased(*so, module.kernels[0], fixed.scheduled.graph, fixed.graph,
                                     {x}, {{"N", n}}, m);
      const PhasedRun b = run_phased(*so, module.kernels[1], symbolic.scheduled.graph,
                                     symbolic.graph, {x}, {{"N", n}, {"D", d}}, m);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(a.outputs[0].get_f64(i), b.outputs[0].get_f64(i)) << "d " << d << " row " << i;
    }
  }
}

TEST(SumAccuracy, SplitsUseEveryCore) {
  // An all-axes sum of 16M f32 on 16 cores: 16 blocks, two launches
  // (partials, then their sum); the column sums of [2^22, 4] likewise.
  std::vector<schedule::ScheduledKernel> kernels = {sum_kernel(DType::f32, false).scheduled,
                                                    sum_kernel(DType::f32, true).scheduled};
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  const auto so = compile(module);
  af_machine m{16, 48 << 10, 1 << 20, 32 << 20, 64, 64 << 10, 0};
  const auto header = [&](size_t k, const sym::Binding& b, int64_t max_phases) {
    using TilingFn = void (*)(const int64_t*, const af_machine*, void*);
    auto fn = reinterpret_cast<TilingFn>(so->symbol(module.kernels[k].name + "_tiling"));
    std::vector<int64_t> symbols;
    for (const std::string& s : module.kernels[k].symbols)
      symbols.push_back(b.at(s));
    std::vector<int64_t> td(64, 0);
    reinterpret_cast<af_tiling_header*>(td.data())->max_phases = max_phases;
    fn(symbols.data(), &m, td.data());
    return *reinterpret_cast<const af_tiling_header*>(td.data());
  };
  const sym::Binding total = {{"N", int64_t{1} << 24}};
  const sym::Binding columns = {{"N", int64_t{1} << 22}, {"D", 4}};
  for (size_t k : {0, 1}) {
    const sym::Binding& b = k == 0 ? total : columns;
    const af_tiling_header split = header(k, b, 64);
    EXPECT_EQ(split.block_dim, 16) << k;
    EXPECT_EQ(split.num_phases, 2) << k;
    EXPECT_GT(split.workspace_bytes, 0) << k;
    const af_tiling_header single = header(k, b, 0);  // a caller without phases
    EXPECT_EQ(single.block_dim, 1) << k;
    EXPECT_LE(single.num_phases, 1) << k;
    EXPECT_EQ(single.workspace_bytes, 0) << k;
    const af_tiling_header tiny =
        header(k, k == 0 ? sym::Binding{{"N", 1000}} : sym::Binding{{"N", 100}, {"D", 4}},
               64);  // a few KB: one block, one launch
    EXPECT_EQ(tiny.block_dim, 1) << k;
    EXPECT_LE(tiny.num_phases, 1) << k;
  }
}

}  // namespace sum_accuracy_reduction_test_local
}  // namespace autofuse::codegen_test
