// Row tiles (tiling.h kRowTileField): a Reduction whose operand is
// broadcast along the outermost row axis walks its rows in tiles of the
// inner row axes. On a machine with a tiny L2 the tiling function picks
// the tiles (checked in the tiling data); every row is computed as in
// order (the same bytes as a machine that keeps the order) and matches the
// reference, for tails of every length, blocks that split tiles, two and
// three row axes and a gathered operand.
#include <cstring>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
namespace row_tiles_test_local {

using ::testing::HasSubstr;

// x + p over rows of 80 (longer than groups of 8 rows take: a kernel that
// groups its rows, row_groups.cpp, keeps them in order), normalized: p is
// the same for every b.
const char* kTwoAxes = R"(graph two_axes(x: f32[B, S, 80], p: f32[S, 80], g: f32[80]) {
  e = add(x, p)
  m = reduce_mean(e, axes=[2], keepdims=true)
  c = sub(e, m)
  y = mul(c, g)
  return y
})";

// Three row axes (w keeps H and S apart): p varies along H and S, not B.
const char* kThreeAxes =
    R"(graph three_axes(x: f32[B, H, S, 80], p: f32[H, S, 80], w: f32[H, 1, 80]) {
  e = add(x, p)
  f = mul(e, w)
  s = reduce_sum(f, axes=[3], keepdims=true)
  y = sub(f, s)
  return y
})";

// BERT's position embeddings: a row of the table per position.
const char* kGathered = R"(graph gathered(x: f32[B, S, 80], t: f32[V, 80], pos: i64[S]) {
  p = gather(t, pos, axis=0)
  e = add(x, p)
  m = reduce_max(e, axes=[2], keepdims=true)
  y = sub(e, m)
  return y
})";

struct TileCase {
  std::string label;
  Graph graph;
  std::vector<sym::Binding> bindings;
  int64_t tile;  ///< rows per tile with the tiny L2
};

::testing::AssertionResult same_bytes(const HostTensor& a, const HostTensor& b) {
  if (a.nbytes() != b.nbytes() || (a.nbytes() > 0 && std::memcmp(a.data(), b.data(), a.nbytes())))
    return ::testing::AssertionFailure() << tensors_close(a, b, 0, 0).message();
  return ::testing::AssertionSuccess();
}

TEST(RowTiles, TiledRowsMatchRowsInOrder) {
  std::vector<TileCase> cases;
  cases.push_back({"two_axes",
                   parse_graph(kTwoAxes),
                   {{{"B", 3}, {"S", 37}}, {{"B", 2}, {"S", 100}}, {{"B", 5}, {"S", 64}}},
                   6});
  cases.push_back({"three_axes",
                   parse_graph(kThreeAxes),
                   {{{"B", 2}, {"H", 3}, {"S", 13}}, {{"B", 3}, {"H", 5}, {"S", 9}}},
                   3});  // p and w: 640 bytes per row
  cases.push_back({"gathered",
                   parse_graph(kGathered),
                   {{{"B", 3}, {"S", 45}, {"V", 50}}, {{"B", 2}, {"S", 70}, {"V", 7}}},
                   6});
  std::vector<schedule::ScheduledKernel> kernels;
  for (const TileCase& c : cases) {
    kernels.push_back(schedule_graph(c.graph));
    ASSERT_NE(tiling::row_reuse_bytes(kernels.back()), sym::Expr(0)) << c.label;
  }
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_THAT(kernel_text(module.code, module.kernels[i].name),
                HasSubstr("// rows in tiles (tiling.h)"));
  const std::shared_ptr<jit::Module> so = compile(module);
  // An L2 of 16 KiB: tiles of 16384 / 8 / 320 = 6 rows of 80 f32 (once the
  // inner rows' bytes pass 8 KiB); the big L2 keeps the order.
  const af_machine tiny_l2[] = {{1, 32 << 10, 16 << 10, 32 << 20, 64, 1 << 16, 0},
                                {3, 32 << 10, 16 << 10, 32 << 20, 16, 1, 0},
                                {2, 32 << 10, 16 << 10, 32 << 20, 64, 1, 0}};
  const af_machine in_order = one_core();
  for (size_t i = 0; i < cases.size(); ++i) {
    const TileCase& c = cases[i];
    // The tiling data's row_tile: the header, the symbols and the axis
    // sizes, then work, chunk, split, seg_len, tile, tiles, ws_slot, fold
    // and pf_rows (tiling.cpp's struct), then it.
    const size_t row_tile_at =
        5 + module.kernels[i].symbols.size() + static_cast<size_t>(kernels[i].graph.num_axes()) + 9;
    for (const sym::Binding& binding : c.bindings) {
      const std::vector<HostTensor> inputs = random_inputs(c.graph, binding, 3);
      const std::vector<HostTensor> want = run_reference(c.graph, inputs, binding);
      const KernelRun base =
          run_kernel(*so, module.kernels[i], kernels[i].graph, c.graph, inputs, binding, in_order);
      EXPECT_EQ(run_tiling(*so, module.kernels[i], binding, in_order).at(row_tile_at), 0)
          << c.label;
      for (const af_machine& m : tiny_l2) {
        EXPECT_EQ(run_tiling(*so, module.kernels[i], binding, m).at(row_tile_at), c.tile)
            << c.label;
        const KernelRun got =
            run_kernel(*so, module.kernels[i], kernels[i].graph, c.graph, inputs, binding, m);
        std::string where = c.label;
        for (const auto& [s, v] : binding)
          where += fmt::format(" {}={}", s, v);
        where += fmt::format(", {} blocks", got.block_dim);
        for (size_t o = 0; o < want.size(); ++o) {
          EXPECT_TRUE(tensors_close(got.outputs[o], want[o], 1e-5, 1e-5))
              << where << ", output " << o;
          EXPECT_TRUE(same_bytes(got.outputs[o], base.outputs[o])) << where << ", output " << o;
        }
      }
    }
  }
}

TEST(RowTiles, OnlyForOperandsBroadcastAlongTheOuterRowAxis) {
  // Every operand varies along B (or along no row axis): no tiles.
  const auto reuse = [](const char* text) {
    return tiling::row_reuse_bytes(schedule_graph(parse_graph(text)));
  };
  EXPECT_EQ(reuse(R"(graph own(x: f32[B, S, 80], g: f32[80]) {
  y = mul(x, g)
  s = reduce_sum(y, axes=[2], keepdims=true)
  return s
})"),
            sym::Expr(0));
  EXPECT_EQ(reuse(kTwoAxes), sym::Expr(320));
  EXPECT_EQ(reuse(R"(graph one_row_axis(x: f32[S, 80], p: f32[S, 80]) {
  e = add(x, p)
  s = reduce_sum(e, axes=[1], keepdims=true)
  return s
})"),
            sym::Expr(0));
}

}  // namespace row_tiles_test_local
}  // namespace autofuse::codegen_test
