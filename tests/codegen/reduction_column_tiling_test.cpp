// The column layout's tiling decisions (reduction_tiling.cpp) on a machine
// like the project's (2 cores, 1 MiB L2), and the kernels they pick against
// the reference: a column mean with a broadcast consumer (x - mean), whose
// second pass re-reads the tile. Narrow tiles that would keep the tile in
// the L2 were slower than wide ones re-read from the L3 (256-byte runs of
// 2048 rows: 3x), so the tile stays wide; when the row's tiles are too few
// for the cores the reduced axis is split into a whole number of rounds.
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace reduction_column_tiling_test_local {

std::string col_text(const char* dtype) {
  return fmt::format(R"(graph col(x: {}[N, D]) {{
  cm = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub(x, cm)
  return xc
}})",
                     dtype);
}

af_machine two_cores() {
  af_machine m{};
  m.cores = 2;
  m.l1_bytes = 48 << 10;
  m.l2_bytes = 1 << 20;
  m.l3_bytes = 32 << 20;
  m.vector_bytes = 64;
  m.min_block_bytes = 64 << 10;
  return m;
}

TEST(ColumnTiling, DataLargerThanTheCachePrefetchesTileRows) {
  // Each pass prefetches its tile rows tiling::kColumnPrefetchBytes (f32)
  // ahead once the data moved exceeds half the L3; not for data in cache.
  const Graph g = parse_graph(col_text("f32"));
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(g)};
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  const auto so = compile(module);
  const std::string kernel = module.code.substr(module.code.find("_kernel(const void*"));
  size_t loops = 0;
  for (size_t at = kernel.find("if (pf_rows > 0 && i0 + pf_rows < hi) {"); at != std::string::npos;
       at = kernel.find("if (pf_rows > 0 && i0 + pf_rows < hi) {", at + 1))
    ++loops;
  // Both passes, in both copies of the row loop; and the column vector
  // form's lambda of the summing pass (column_vectors.cpp), in both copies.
  EXPECT_EQ(loops, 6u) << kernel;
  EXPECT_NE(kernel.find("__builtin_prefetch(&p0["), std::string::npos);
  af_machine small_l3 = two_cores();
  small_l3.l3_bytes = 4 << 20;
  for (const int64_t n : {int64_t{64}, int64_t{2048}}) {
    const sym::Binding binding = {{"N", n}, {"D", 1000}};
    const std::vector<HostTensor> inputs = random_inputs(g, binding, 7);
    const std::vector<HostTensor> want = run_reference(g, inputs, binding);
    for (const af_machine& m : {two_cores(), small_l3}) {
      const PhasedRun run =
          run_phased(*so, module.kernels[0], kernels[0].graph, g, inputs, binding, m);
      // [64, 1000] moves 0.5 MB, [2048, 1000] 16 MB: above half the L3 only
      // on the 4 MiB one; 32 KiB ahead are 8 rows of a 1000-wide tile.
      const bool large = m.l3_bytes == small_l3.l3_bytes && n == 2048;
      EXPECT_EQ(run.pf_rows, large ? (tiling::kColumnPrefetchBytes / (run.tile * 4)) : 0)
          << n << " rows, L3 " << m.l3_bytes << ", tile " << run.tile;
      EXPECT_TRUE(tensors_close(run.outputs[0], want[0], 1e-5, 1e-5)) << n;
    }
  }
}

TEST(ColumnTiling, BroadcastConsumerKeepsWideTilesAndBalancedSegments) {
  const Graph g = parse_graph(col_text("f32"));
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(g)};
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  const auto so = compile(module);
  struct Case {
    int64_t n, d, tile, split;
  };
  // [64, 1024]: the tile fits half the L2 whole, but tiles of one output row
  // of 4 KiB are not shared between cores (tiling::kSharedRowBytes) and 64
  // rows are too few to split: one block, one tile. [2048, 1024] and
  // [4099, 1000]: wide tiles re-read, split in 4 (2 rounds of 2 cores; the
  // cap sqrt(N / 64) would give 5 or 8).
  for (const Case c : {Case{64, 1024, 1024, 1}, Case{2048, 1024, 1024, 4},
                       Case{4099, 1000, 1000, 8}, Case{16384, 1024, 1024, 8}}) {
    const sym::Binding binding = {{"N", c.n}, {"D", c.d}};
    const std::vector<HostTensor> inputs = random_inputs(g, binding, 7);
    const PhasedRun run =
        run_phased(*so, module.kernels[0], kernels[0].graph, g, inputs, binding, two_cores());
    EXPECT_EQ(run.tile, c.tile) << c.n << "x" << c.d;
    EXPECT_EQ(run.split, c.split) << c.n << "x" << c.d;
    if (c.n * c.d <= (4 << 20)) {
      const std::vector<HostTensor> want = run_reference(g, inputs, binding);
      EXPECT_TRUE(tensors_close(run.outputs[0], want[0], 1e-5, 1e-5)) << c.n << "x" << c.d;
    }
  }
}

TEST(ColumnTiling, CoresShareOnlyWideOutputRows) {
  // Two cores writing neighbouring tiles of the same output rows take each
  // other's cache lines (tiling::kSharedRowBytes): rows narrower than 8 KiB
  // go to the blocks whole (a split of the reduced axis) or to one block;
  // wider ones in at least two tiles per block.
  const Graph g = parse_graph(col_text("f32"));
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(g)};
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  const auto so = compile(module);
  af_machine one_core = two_cores();
  one_core.cores = 1;
  struct Case {
    int64_t n, d, cores, block_dim, tile, split;
  };
  for (const Case c : {Case{64, 256, 2, 1, 256, 1}, Case{512, 256, 2, 2, 256, 2},
                       Case{512, 256, 1, 1, 256, 1}, Case{256, 1024, 2, 2, 1024, 2},
                       Case{128, 1024, 2, 1, 1024, 1}, Case{256, 2048, 2, 2, 512, 1},
                       Case{64, 4096, 2, 2, 1024, 1}, Case{256, 1000, 2, 2, 1000, 2}}) {
    const sym::Binding binding = {{"N", c.n}, {"D", c.d}};
    const std::vector<HostTensor> inputs = random_inputs(g, binding, 7);
    const PhasedRun run = run_phased(*so, module.kernels[0], kernels[0].graph, g, inputs, binding,
                                     c.cores == 1 ? one_core : two_cores());
    const std::string at = fmt::format("{}x{} on {} cores", c.n, c.d, c.cores);
    EXPECT_EQ(run.block_dim, c.block_dim) << at;
    EXPECT_EQ(run.tile, c.tile) << at;
    EXPECT_EQ(run.split, c.split) << at;
    const std::vector<HostTensor> want = run_reference(g, inputs, binding);
    EXPECT_TRUE(tensors_close(run.outputs[0], want[0], 1e-5, 1e-5)) << at;
  }
}

TEST(ColumnTiling, BroadcastConsumerEveryFloatDtype) {
  std::vector<sym::Binding> shapes;
  for (int64_t n : {1, 7, 128, 1031})
    for (int64_t d : {1, 3, 17, 63, 64, 130, 1000})
      shapes.push_back({{"N", n}, {"D", d}});
  std::vector<GraphCase> cases;
  cases.push_back({"col_f32", parse_graph(col_text("f32")), shapes, 1e-5, 1e-5});
  cases.push_back({"col_f16", parse_graph(col_text("f16")), shapes, 4e-3, 4e-3});
  cases.push_back({"col_bf16", parse_graph(col_text("bf16")), shapes, 3e-2, 3e-2});
  check_split_cases(cases, /*expect_split=*/true);
}

}  // namespace reduction_column_tiling_test_local
}  // namespace autofuse::codegen_test
