// Randomized fusion coverage: random fusible graphs (random_graph.h)
// compiled once each with runtime::Executable::build, run on several shape
// bindings and compared with the reference interpreter (fuzz_check.h).
//
// CI (fixed seed): kCiGraphs graphs (32 under ASan) of 8 subgraphs, each run on 8
// bindings = kCiGraphs * 64 cases, split into kShards tests that ctest runs
// in parallel; for one graph in 4 a graph of 3 subgraphs is also compiled
// unfused (fusion disabled: one kernel per op) and checked on 8 bindings;
// elementwise-only graphs must compile to one kernel per subgraph.
//
// Longer runs: run the binary directly (ctest stops a test after 600 s):
//   AUTOFUSE_FUZZ_CASES=100000 AUTOFUSE_FUZZ_SEED=7 build/release/tests/fuzz_tests
// AUTOFUSE_FUZZ_CASES is the number of (subgraph, binding) cases, rounded
// up to whole graphs; AUTOFUSE_FUZZ_SEED replaces the CI seed. A failure
// prints the seed, the graph as .af text (also written to
// $AUTOFUSE_FUZZ_DIR, default <tmp>/autofuse_fuzz) and the command that
// replays it: `autofuse run FILE.af --shape A=..,B=.. --seed S --check`.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "fuzz/fuzz_check.h"
#include "sanitizer.h"

namespace autofuse::fuzz {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace fuzz_test_local {

constexpr uint64_t kCiSeed = 0x5eed2024;
constexpr int kCiGraphs = 48;
// The graphs compiled and checked: under ASan the first 32 (4 per shard,
// still every thread count and a large binding in each shard); ASan checks
// the runtime's memory on them, the release build checks all 48.
constexpr int kCheckedCiGraphs = kUnderAddressSanitizer ? 32 : kCiGraphs;
constexpr int kShards = 8;
constexpr int kBindingsPerGraph = 8;
constexpr int kUnfusedEvery = 4;

uint64_t base_seed() {
  const char* s = std::getenv("AUTOFUSE_FUZZ_SEED");
  return s ? std::strtoull(s, nullptr, 0) : kCiSeed;
}

int total_graphs(const GenOptions& gen) {
  const char* s = std::getenv("AUTOFUSE_FUZZ_CASES");
  if (!s) return kCheckedCiGraphs;
  const long long cases = std::strtoll(s, nullptr, 0);
  const long long per_graph = static_cast<long long>(gen.subgraphs) * kBindingsPerGraph;
  return static_cast<int>(std::max(1LL, (cases + per_graph - 1) / per_graph));
}

/// Bindings from tiny to large (runs cost little next to a compile): element
/// caps from 16 to 2^16, and 2^19 for one graph in 4 (many blocks).
std::vector<sym::Binding> bindings_for(const RandomGraph& rg, uint64_t seed, int graph_index) {
  const bool large = (graph_index + graph_index / kShards) % 4 == 0;  // in every shard
  const int64_t caps[kBindingsPerGraph] = {16,   64,    512,   2048,
                                           8192, 32768, 65536, large ? kMaxElements : 16384};
  std::vector<sym::Binding> out;
  for (int b = 0; b < kBindingsPerGraph; ++b)
    out.push_back(random_binding(rg, mix_seed(seed, 1000 + static_cast<uint64_t>(b)), caps[b]));
  return out;
}

void report(const std::vector<std::string>& failures) {
  for (size_t i = 0; i < failures.size() && i < 5; ++i)
    ADD_FAILURE() << failures[i];
  if (failures.size() > 5) ADD_FAILURE() << failures.size() - 5 << " more failures";
}

class FuzzShard : public ::testing::TestWithParam<int> {};

TEST_P(FuzzShard, CompiledMatchesReference) {
  const GenOptions gen;
  FuzzStats fused, unfused;
  std::vector<std::string> failures;
  for (int g = GetParam(); g < total_graphs(gen); g += kShards) {
    const uint64_t seed = mix_seed(base_seed(), static_cast<uint64_t>(g));
    const RandomGraph rg = random_graph(seed, gen);
    const std::vector<sym::Binding> bindings = bindings_for(rg, seed, g);
    // Threads (= cores the tiling splits for) vary: one block, even and uneven splits.
    const int threads = std::vector<int>{0, 1, 3, 5}[static_cast<size_t>(g / kShards % 4)];
    for (std::string& f : check_graph(seed, gen, rg, bindings, {.threads = threads}, fused))
      failures.push_back(std::move(f));
    if ((g / kShards) % kUnfusedEvery == 1) {  // in every shard
      // Unfused, every op is a kernel: a smaller graph keeps the compile short.
      GenOptions small = gen;
      small.subgraphs = 3;
      const uint64_t small_seed = seed ^ 0xf00d;
      const RandomGraph few = random_graph(small_seed, small);
      for (std::string& f : check_graph(small_seed, small, few, bindings_for(few, small_seed, g),
                                        {.fused = false}, unfused))
        failures.push_back(std::move(f));
    }
  }
  std::cout << "fused:   " << fused.summary() << "\nunfused: " << unfused.summary() << "\n";
  EXPECT_GT(fused.cases, 0);
  report(failures);
}

INSTANTIATE_TEST_SUITE_P(Fuzz, FuzzShard, ::testing::Range(0, kShards));

// An elementwise-only subgraph (every output spanning its whole shape) is
// one kernel: 8 subgraphs, 8 kernels.
TEST(FuzzFusion, ElementwiseSubgraphsAreOneKernelEach) {
  GenOptions gen;
  gen.elementwise_only = true;
  FuzzStats stats;
  std::vector<std::string> failures;
  const int graphs = std::max(4, total_graphs(gen) / 16);  // 4 in CI
  for (int g = 0; g < graphs; ++g) {
    const uint64_t seed = mix_seed(base_seed() ^ 0xe1e, static_cast<uint64_t>(g));
    const RandomGraph rg = random_graph(seed, gen);
    const std::vector<sym::Binding> bindings = {random_binding(rg, seed, 4096),
                                                random_binding(rg, seed + 1, 32768)};
    for (std::string& f : check_graph(seed, gen, rg, bindings, {.kernels_per_subgraph = 1}, stats))
      failures.push_back(std::move(f));
  }
  std::cout << stats.summary() << "\n";
  EXPECT_EQ(stats.kernels, graphs * gen.subgraphs);
  report(failures);
}

// The failure path: a corrupted result gives a report with the seed, the
// lone subgraph's text (also in a file that parses back to it) and a CLI
// command that runs: on the uncorrupted compile the CLI finds no mismatch.
TEST(FuzzReport, FailureReportReplaysWithTheCli) {
  GenOptions gen;
  gen.subgraphs = 2;
  const uint64_t seed = mix_seed(kCiSeed, 4242);
  const RandomGraph rg = random_graph(seed, gen);
  FuzzStats stats;
  const std::vector<std::string> failures =
      check_graph(seed, gen, rg, {random_binding(rg, seed, 256)}, {.tamper_for_test = true}, stats);
  ASSERT_EQ(failures.size(), 1u);
  const std::string& f = failures[0];
  EXPECT_NE(f.find(fmt::format("fuzz failure: seed {} subgraph 0", seed)), std::string::npos) << f;
  EXPECT_NE(f.find("the subgraph alone fails too"), std::string::npos) << f;
  const std::smatch m = [&] {
    std::smatch match;
    std::regex_search(f, match,
                      std::regex("autofuse run (\\S+)((?: --shape \\S+)? --seed \\d+ --check)"));
    return match;
  }();
  ASSERT_EQ(m.size(), 3u) << f;
  const std::string file = m[1], args = m[2];
  const std::string text = print_graph(parse_graph_file(file));
  EXPECT_NE(f.find(text), std::string::npos) << "the file differs from the printed graph";
  EXPECT_NE(text.find("graph fuzz_"), std::string::npos);
  if (!std::filesystem::exists(AUTOFUSE_CLI_PATH)) GTEST_SKIP() << "no CLI at " AUTOFUSE_CLI_PATH;
  const std::string command = fmt::format("{} run {}{} > /dev/null", AUTOFUSE_CLI_PATH, file, args);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

// The generator: deterministic, its text replays, and it reaches the op set.
TEST(FuzzGenerator, DeterministicAndTextRoundTrips) {
  const GenOptions gen;
  for (int g = 0; g < kCiGraphs; ++g) {
    const uint64_t seed = mix_seed(kCiSeed, static_cast<uint64_t>(g));
    const RandomGraph rg = random_graph(seed, gen);
    // Shapes line up by construction: no guard specializes the compile.
    for (const sym::Guard& guard : rg.graph->shape_env().guards())
      ADD_FAILURE() << "seed " << seed << " records guard " << guard.condition_text() << " ("
                    << guard.reason << ")";
    const std::string text = print_graph(*rg.graph);
    EXPECT_EQ(text, print_graph(*random_graph(seed, gen).graph));
    EXPECT_EQ(print_graph(parse_graph(text)), text) << text;
    const std::string lone = print_graph(*random_graph(seed, gen, g % gen.subgraphs).graph);
    EXPECT_EQ(print_graph(parse_graph(lone)), lone) << lone;
  }
}

TEST(FuzzGenerator, CiSeedsReachEveryFusibleOp) {
  const GenOptions gen;
  std::set<OpKind> seen;
  std::set<std::string> reduce_forms;
  for (int g = 0; g < kCiGraphs; ++g) {
    const RandomGraph rg = random_graph(mix_seed(kCiSeed, static_cast<uint64_t>(g)), gen);
    for (const Node& n : rg.graph->nodes()) {
      seen.insert(n.op);
      if (const auto* r = std::get_if<ReduceAttrs>(&n.attrs)) {
        const int rank = rg.graph->value(n.inputs[0]).type.rank();
        const int count = r->axes.empty() ? rank : static_cast<int>(r->axes.size());
        reduce_forms.insert(count == rank                ? "all"
                            : r->axes[0] == 0            ? "outer"
                            : r->axes.back() == rank - 1 ? "inner"
                                                         : "middle");
        reduce_forms.insert(r->keepdims ? "keepdims" : "dropdims");
        // A reduction over a wide literal innermost dim: the static short
        // rows (their vector pass) that symbolic dims never produce.
        const Shape& in = rg.graph->value(n.inputs[0]).type.shape;
        if (!in.empty() && (r->axes.empty() || r->axes.back() == rank - 1) &&
            in.back().as_const().value_or(0) >= 64)
          reduce_forms.insert("inner static row");
      }
    }
  }
  for (OpKind op : all_ops()) {
    if (op == OpKind::MatMul || op == OpKind::Conv) continue;  // library ops, not generated
    if (op_info(op).op_class == OpClass::Constant) continue;   // scalars: checked below
    EXPECT_TRUE(seen.count(op)) << op_name(op) << " never generated";
  }
  EXPECT_TRUE(seen.count(OpKind::Constant));
  for (const char* form :
       {"all", "outer", "inner", "middle", "keepdims", "dropdims", "inner static row"})
    EXPECT_TRUE(reduce_forms.count(form)) << form;
}

TEST(FuzzGenerator, BindingsStayWithinTheirCap) {
  const GenOptions gen;
  std::set<int64_t> sizes;
  for (int g = 0; g < kCiGraphs; ++g) {
    const uint64_t seed = mix_seed(kCiSeed, static_cast<uint64_t>(g));
    const RandomGraph rg = random_graph(seed, gen);
    for (const sym::Binding& b : bindings_for(rg, seed, g)) {
      for (const auto& [name, value] : b)
        sizes.insert(value);
      for (const Value& v : rg.graph->values()) {
        int64_t count = 1;
        for (const sym::Expr& d : v.type.shape)
          count *= sym::evaluate(d, b);
        EXPECT_LE(count, kMaxElements) << v.name;
      }
    }
  }
  for (int64_t s : {1, 3, 7, 13, 31, 97, 65, 1023})
    EXPECT_TRUE(sizes.count(s)) << s << " never bound";
}

}  // namespace fuzz_test_local
}  // namespace autofuse::fuzz
