// The Executable on kernels with Gather nodes (hand-written AscGraphs, since
// this test does not depend on the lowering): results match the reference,
// a bad index is a UserError naming the gather (from any block, any launch
// of a split reduction), the inputs are untouched and the Executable stays
// usable.
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "autofuse/ascir/asc_graph.h"
#include "autofuse/codegen/cpu_codegen.h"
#include "autofuse/graph/builder.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/schedule/schedule.h"
#include "runtime/program.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace gather_status_test_local {

namespace fs = std::filesystem;
using sym::Expr;

// emb[n, h] = table[idx[n], h] (elementwise template).
const char* kEmbedding = R"(kernel emb axes(z0: N, z1: H) inputs({table}, {idx}) outputs({out}) {
  %0 table = data(arg=0) : f32 repeats[N, H]
  %1 idx = data(arg=1) : i64 repeats[N, 1]
  %2 idx_load = load(%1) : i64 repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : i64 repeats[N, H]
  %4 emb = gather(%0, %3, stride=H, size=V) : f32 repeats[N, H] strides[0, 1] offset 0
  %5 emb_store = store(%4) : f32 repeats[N, H] strides[H, 1] offset 0
  %6 emb_out = output(%5, arg=0) : f32 repeats[N, H]
}
)";

// rows[n] = sum_h table[idx[n], h] (reduction template; long rows split).
const char* kRowSum =
    R"(kernel rowsum axes(z0: N, z1: H reduced) inputs({table}, {idx}) outputs({out}) {
  %0 table = data(arg=0) : f32 repeats[N, H]
  %1 idx = data(arg=1) : i32 repeats[N, 1]
  %2 idx_load = load(%1) : i32 repeats[N, 1] strides[1, 0] offset 0
  %3 idx_b = broadcast(%2) : i32 repeats[N, H]
  %4 looked_up = gather(%0, %3, stride=H, size=V) : f32 repeats[N, H] strides[0, 1] offset 0
  %5 rows = reduce_sum(%4) : f32 repeats[N, 1]
  %6 rows_store = store(%5) : f32 repeats[N, 1] strides[1, 0] offset 0
  %7 rows_out = output(%6, arg=0) : f32 repeats[N, 1]
}
)";

class GatherStatus : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "af_gather_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    cache_dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(cache_dir_, ec);
  }

  /// One Kernel region for the graph's single gather node (plus reduction),
  /// compiled from `asc_text`.
  std::unique_ptr<Executable> build(std::shared_ptr<const Graph> g, const std::string& asc_text,
                                    int threads) {
    const ValueId table = g->inputs()[0], idx = g->inputs()[1], out = g->outputs()[0];
    std::string text = asc_text;
    for (const auto& [key, id] :
         {std::pair<std::string, ValueId>{"{table}", table}, {"{idx}", idx}, {"{out}", out}})
      text.replace(text.find(key), key.size(), std::to_string(id));
    std::vector<schedule::ScheduledKernel> kernels = {
        schedule::schedule_kernel(ascir::parse_asc_graph(text))};
    const codegen::ModuleSource source = codegen::generate_cpu_module(kernels);
    jit::CompilerOptions opts;
    opts.cache_dir = cache_dir_;
    jit::CompileStats stats;
    Program p;
    p.fused.graph = g;
    fuse::Region r;
    r.kind = fuse::RegionKind::Kernel;
    r.name = "k";
    for (const Node& n : g->nodes())
      r.nodes.push_back(n.id);
    r.inputs = g->inputs();
    r.outputs = g->outputs();
    p.fused.regions.push_back(r);
    LoadedKernel k;
    k.region = 0;
    k.name = source.kernels[0].name;
    k.inputs = g->inputs();
    k.outputs = g->outputs();
    k.symbols = source.kernels[0].symbols;
    k.gathers = source.kernels[0].gathers;
    p.module = jit::compile_and_load(source.code, opts, stats);
    resolve_kernel_symbols(*p.module, k);
    p.kernels.push_back(std::move(k));
    p.report.kernels = 1;
    return make_executable(std::move(p), threads);
  }

  std::string cache_dir_;
};

std::shared_ptr<const Graph> embedding_graph() {
  GraphBuilder b("g");
  Tensor table = b.input("table", DType::f32, {Expr::symbol("V"), Expr::symbol("H")});
  Tensor idx = b.input("idx", DType::i64, {Expr::symbol("N")});
  return std::make_shared<Graph>(std::move(b).build({b.gather(table, idx, 0, "emb")}));
}

std::shared_ptr<const Graph> row_sum_graph() {
  GraphBuilder b("g");
  Tensor table = b.input("table", DType::f32, {Expr::symbol("V"), Expr::symbol("H")});
  Tensor idx = b.input("idx", DType::i32, {Expr::symbol("N")});
  Tensor looked_up = b.gather(table, idx, 0, "looked_up");
  return std::make_shared<Graph>(std::move(b).build({b.reduce_sum(looked_up, {1}, false, "rows")}));
}

void expect_close(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].type_string(), want[o].type_string());
    for (int64_t i = 0; i < got[o].numel(); ++i)
      ASSERT_NEAR(got[o].get_f64(i), want[o].get_f64(i), 1e-4)
          << "output " << o << " [" << i << "]";
  }
}

/// Runs `exe` on `in` and expects exactly `message`, with the inputs unchanged.
void expect_error(Executable& exe, const std::vector<HostTensor>& in, const std::string& message) {
  std::vector<std::vector<std::byte>> before;
  for (const HostTensor& t : in) {
    const auto* p = static_cast<const std::byte*>(t.data());
    before.emplace_back(p, p + t.nbytes());
  }
  try {
    exe.run(in);
    ADD_FAILURE() << "no error, expected: " << message;
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), message);
    EXPECT_EQ(std::string(e.what()), message);
  }
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(std::memcmp(before[i].data(), in[i].data(), in[i].nbytes()), 0) << "input " << i;
}

TEST_F(GatherStatus, ElementwiseKernelReportsBadIndices) {
  auto g = embedding_graph();
  auto exe = build(g, kEmbedding, 4);
  for (auto [n, h, v] : {std::tuple{1, 1, 1}, {7, 3, 5}, {4000, 97, 13}}) {
    const sym::Binding binding = {{"N", n}, {"H", h}, {"V", v}};
    std::vector<HostTensor> in = random_inputs(*g, binding, 3);
    expect_close(exe->run(in), run_reference(*g, in));
    HostTensor& idx = in[1];
    for (int64_t pos : {int64_t{0}, int64_t{n / 2}, int64_t{n - 1}}) {
      const int64_t old = idx.get_i64(pos);
      idx.set_i64(pos, v);
      expect_error(*exe, in, fmt::format("gather 'emb': index {} out of range [-{}, {})", v, v, v));
      idx.set_i64(pos, -v - 1);
      expect_error(*exe, in,
                   fmt::format("gather 'emb': index {} out of range [-{}, {})", -v - 1, v, v));
      idx.set_i64(pos, old);
    }
    // Every block reports at once: one report wins whole.
    for (int64_t i = 0; i < n; ++i)
      idx.set_i64(i, 1000 + v);
    expect_error(*exe, in,
                 fmt::format("gather 'emb': index {} out of range [-{}, {})", 1000 + v, v, v));
    // Still usable: the next good run (same shape, cached tiling) is right.
    std::vector<HostTensor> good = random_inputs(*g, binding, 4);
    expect_close(exe->run(good), run_reference(*g, good));
    std::vector<HostTensor> out = {HostTensor(DType::f32, {n, h})};
    exe->run_into(good, out);
    expect_close(out, run_reference(*g, good));
  }
}

TEST_F(GatherStatus, SplitReductionReportsFromItsFirstLaunch) {
  auto g = row_sum_graph();
  auto exe = build(g, kRowSum, 4);
  // One long row: the tiling splits it into segments over several launches.
  for (auto [n, h, v] : {std::tuple{1, 300000, 3}, {3, 7, 2}, {257, 1031, 11}}) {
    const sym::Binding binding = {{"N", n}, {"H", h}, {"V", v}};
    std::vector<HostTensor> in = random_inputs(*g, binding, 5);
    const std::vector<HostTensor> want = run_reference(*g, in);
    ASSERT_EQ(want[0].numel(), n);
    std::vector<HostTensor> got = exe->run(in);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(got[0].get_f64(i), want[0].get_f64(i), 1e-5 * h) << i;
    const int64_t old = in[1].get_i64(n - 1);
    in[1].set_i64(n - 1, -v - 1);
    expect_error(*exe, in,
                 fmt::format("gather 'looked_up': index {} out of range [-{}, {})", -v - 1, v, v));
    in[1].set_i64(n - 1, old);
    got = exe->run(in);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(got[0].get_f64(i), want[0].get_f64(i), 1e-5 * h) << i;
  }
}

}  // namespace gather_status_test_local
}  // namespace autofuse::runtime
