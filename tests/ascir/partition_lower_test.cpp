// Lowering of the real Kernel regions that fuse::partition finds, fused and
// unfused, for every example graph.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ascir_test_util.h"
#include "autofuse/schedule/schedule.h"

namespace autofuse::ascir {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace partition_lower_test_local {

using ascir_test::count_kind;
using ascir_test::node_named;

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(AUTOFUSE_SOURCE_DIR) + "/examples"))
    if (entry.path().extension() == ".af") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Lowers, elides, schedules and round-trips every Kernel region.
std::vector<schedule::ScheduledKernel> compile_regions(const fuse::FusedGraph& fused) {
  std::vector<schedule::ScheduledKernel> kernels;
  for (const fuse::Region& region : fused.regions) {
    if (region.kind != fuse::RegionKind::Kernel) continue;
    AscGraph g = lower_region(*fused.graph, region);
    elide_casts(g);
    const std::string text = print_asc_graph(g);
    EXPECT_EQ(print_asc_graph(parse_asc_graph(text)), text) << region.name;
    kernels.push_back(schedule::schedule_kernel(std::move(g)));
    const std::string merged = print_asc_graph(kernels.back().graph);
    EXPECT_EQ(print_asc_graph(parse_asc_graph(merged)), merged) << region.name;
  }
  return kernels;
}

struct Expected {
  schedule::Template kind;
  int num_axes;    // after merge_axes
  int num_passes;  // Reduction only
};

// What each example's single fused kernel must look like. An example added
// later without an entry here is still lowered, scheduled and round-tripped.
const std::map<std::string, Expected> kExpected = {
    {"chain10", {schedule::Template::Elementwise, 1, 0}},
    {"gelu", {schedule::Template::Elementwise, 2, 0}},
    {"layernorm", {schedule::Template::Reduction, 2, 3}},
    {"layernorm_bf16", {schedule::Template::Reduction, 2, 3}},
    {"layernorm_f16", {schedule::Template::Reduction, 2, 3}},
    {"rmsnorm", {schedule::Template::Reduction, 2, 2}},
    {"softmax", {schedule::Template::Reduction, 2, 3}},
    {"softmax_mask", {schedule::Template::Reduction, 2, 3}},
};

TEST(PartitionLowerTest, EveryExampleFused) {
  int checked = 0;
  for (const std::string& name : example_names()) {
    SCOPED_TRACE(name);
    auto graph = std::make_shared<const Graph>(ascir_test::example_graph(name));
    const fuse::FusedGraph fused = fuse::partition(graph, fuse::FusionConfig{});
    const auto kernels = compile_regions(fused);
    ASSERT_FALSE(kernels.empty());
    for (const auto& k : kernels) {
      // Mixed precision: no f16/bf16/f32 Cast survives inside a kernel.
      for (const AscNode& n : k.graph.nodes) {
        if (n.kind == AscKind::Cast) {
          EXPECT_FALSE(is_float(n.dtype) && is_float(k.graph.node(n.inputs[0]).dtype) &&
                       n.dtype != DType::f64 && k.graph.node(n.inputs[0]).dtype != DType::f64)
              << n.name;
        }
      }
    }
    auto it = kExpected.find(name);
    if (it == kExpected.end()) continue;
    ASSERT_EQ(kernels.size(), 1u);
    const schedule::ScheduledKernel& k = kernels[0];
    EXPECT_EQ(k.kind, it->second.kind);
    EXPECT_EQ(k.graph.num_axes(), it->second.num_axes);
    EXPECT_EQ(k.num_passes, it->second.num_passes);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(kExpected.size()));
}

TEST(PartitionLowerTest, LayerNormF16MatchesF32AfterCastElision) {
  // Once the casts are gone, the f16 kernel computes exactly what the f32
  // one does; only the buffers' dtypes differ.
  auto schedule_of = [](const std::string& name) {
    auto graph = std::make_shared<const Graph>(ascir_test::example_graph(name));
    return compile_regions(fuse::partition(graph, fuse::FusionConfig{})).at(0);
  };
  const auto f32 = schedule_of("layernorm");
  const auto f16 = schedule_of("layernorm_f16");
  EXPECT_EQ(f16.node_pass, f32.node_pass);
  EXPECT_EQ(f16.is_row_node, f32.is_row_node);
  ASSERT_EQ(f16.graph.nodes.size(), f32.graph.nodes.size());
  for (size_t i = 0; i < f16.graph.nodes.size(); ++i) {
    const AscNode& a = f16.graph.nodes[i];
    const AscNode& b = f32.graph.nodes[i];
    EXPECT_EQ(a.kind, b.kind) << a.name;
    EXPECT_EQ(a.inputs, b.inputs) << a.name;
    EXPECT_EQ(compute_dtype(a.dtype), compute_dtype(b.dtype)) << a.name;
  }
  EXPECT_EQ(node_named(f16.graph, "x_load").dtype, DType::f16);
  EXPECT_EQ(node_named(f16.graph, "y_store").dtype, DType::f16);
}

TEST(PartitionLowerTest, EveryExampleUnfused) {
  fuse::FusionConfig config;
  config.enabled = false;
  for (const std::string& name : example_names()) {
    SCOPED_TRACE(name);
    auto graph = std::make_shared<const Graph>(ascir_test::example_graph(name));
    const fuse::FusedGraph fused = fuse::partition(graph, config);
    const auto kernels = compile_regions(fused);
    EXPECT_EQ(static_cast<int>(kernels.size()), fused.num_kernels());
    int reductions = 0;
    for (const Node& node : graph->nodes())
      reductions += op_info(node.op).op_class == OpClass::Reduce ? 1 : 0;
    int reduction_kernels = 0;
    for (const auto& k : kernels) {
      if (k.kind != schedule::Template::Reduction) continue;
      ++reduction_kernels;
      EXPECT_EQ(k.num_passes, 1);  // one reduction alone: a single pass
      EXPECT_EQ(count_kind(k.graph, AscKind::Reduce), 1);
    }
    EXPECT_EQ(reduction_kernels, reductions);
  }
}

}  // namespace partition_lower_test_local
}  // namespace autofuse::ascir
