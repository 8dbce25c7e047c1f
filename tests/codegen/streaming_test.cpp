// Streaming (non-temporal) stores, tiling_key 1, and the prefetching chunks
// of key 2: bit-identical outputs to key 0 for both templates, every dtype
// size, unaligned output starts and uneven block splits; the tiling
// function's choice of key; the shape of the generated code; the prelude
// helpers; other compilers and targets.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace streaming_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

sym::Expr S(const char* name) {
  return sym::Expr::symbol(name);
}

Graph example(const std::string& name) {
  return parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/" + name + ".af");
}

/// x * sigmoid(2x + u) * u: a chunk loop's sigmoid runs its exp over a chunk
/// buffer (inner_loop.cpp's chunk_sigmoid_prologue).
Graph silu(const char* dtype) {
  return parse_graph(fmt::format(R"(graph silu(x: {0}[N, D], u: {0}[N, D]) {{
  two = constant(dtype={0}, value=2)
  x2 = mul(x, two)
  a = add(x2, u)
  s = sigmoid(a)
  g = mul(x, s)
  y = mul(g, u)
  return y
}})",
                                 dtype));
}

Graph scale_shift() {  // rows of D: the broadcast operands keep the axes apart
  GraphBuilder b("scale_shift");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor w = b.input("w", DType::f32, {S("D")});
  Tensor bias = b.input("bias", DType::f32, {S("D")});
  return std::move(b).build({b.add(b.mul(x, w), bias)});
}

Graph mixed_outputs() {  // f32, f16, bf16 and i32 outputs of one loop: different alignments
  GraphBuilder b("mixed_outputs");
  Tensor x = b.input("x", DType::f16, {S("N"), S("D")});
  Tensor w = b.input("w", DType::f32, {S("D")});
  Tensor y = b.mul(b.cast(x, DType::f32), w);
  return std::move(b).build({b.cast(y, DType::bf16), y, b.cast(y, DType::f16),
                             b.cast(b.mul(y, b.scalar(100)), DType::i32)});
}

Graph flat_chain() {  // merges to one axis: a block's segment spans rows
  GraphBuilder b("flat_chain");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor y = b.unary(OpKind::Sigmoid, b.sqrt(b.unary(OpKind::Abs, x)));
  return std::move(b).build({y, b.cast(y, DType::f16)});
}

Graph stats() {  // stores in passes that also accumulate (not streamed)
  GraphBuilder b("stats");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor mean = b.reduce_mean(x, {1}, true);
  Tensor xc = b.sub(x, mean);
  Tensor var = b.reduce_mean(b.mul(xc, xc), {1}, true);
  Tensor y = b.div(xc, b.sqrt(b.add(var, b.scalar(1e-5))));
  Tensor m2 = b.reduce_max(y, {1}, true);
  return std::move(b).build({y, mean, xc, m2, b.mul(y, m2)});
}

// stats() over rows of a constant length, after a residual add whose sum is
// an output too (skip-LayerNorm's): rows of at most tiling::kShortReduceRow
// are reduced from buffers, so every pass's stores stream.
Graph short_stats(int64_t d, DType dt) {
  GraphBuilder b(fmt::format("short_stats_{}_{}", d, dtype_name(dt)));
  Tensor x = b.input("x", dt, {S("N"), sym::Expr(d)});
  Tensor skip = b.input("skip", dt, {S("N"), sym::Expr(d)});
  Tensor h = b.add(x, skip);
  Tensor mean = b.reduce_mean(h, {1}, true);
  Tensor xc = b.sub(h, mean);
  Tensor var = b.reduce_mean(b.mul(xc, xc), {1}, true);
  Tensor y = b.div(xc, b.sqrt(b.add(var, b.scalar(1e-5, dt))));
  Tensor m2 = b.reduce_max(y, {1}, true);
  return std::move(b).build({h, y, mean, xc, m2, b.mul(y, m2)});
}

// Rows of a constant length shorter than a chunk (the broadcast operand keeps
// the axes apart): whole rows of whole cache lines stream whole.
Graph const_rows(int64_t d, DType dt) {
  GraphBuilder b(fmt::format("const_rows_{}_{}", d, dtype_name(dt)));
  Tensor x = b.input("x", dt, {S("N"), sym::Expr(d)});
  Tensor w = b.input("w", dt, {sym::Expr(d)});
  return std::move(b).build({b.add(b.mul(x, w), w)});
}

Graph outer_and_inner() {  // two reduced axes: the store streams in the inner one
  GraphBuilder b("outer_and_inner");
  Tensor x = b.input("x", DType::f32, {S("A"), S("B"), S("C")});
  Tensor y = b.reduce_mean(x, {0, 2}, true);
  return std::move(b).build({b.mul(x, y), y});
}

Graph following_rows() {  // the same rows read in place: one stream
  GraphBuilder b("following_rows");
  Tensor x = b.input("x", DType::f32, {S("A"), S("B"), sym::Expr(64)});
  Tensor w = b.input("w", DType::f32, {S("B"), sym::Expr(1)});  // keeps the axes apart
  return std::move(b).build({b.mul(x, w)});
}

Graph strided_rows() {  // [A, B, 64] read as [B, A, 64]: rows 64 * B elements apart
  GraphBuilder b("strided_rows");
  Tensor x = b.input("x", DType::f32, {S("A"), S("B"), sym::Expr(64)});
  // One statement per node: the order of a call's arguments is the
  // compiler's (the names in the code checked below follow node ids).
  const Tensor k = b.scalar(0.125);
  const Tensor t = b.transpose(x, {1, 0, 2});
  return std::move(b).build({b.mul(t, k)});
}

// x's two halves multiplied (swiglu's gate and up without the sigmoid):
// two Loads whose rows of `half` elements are 2 * half apart.
Graph gated_halves(int64_t half, DType dt) {
  return parse_graph(fmt::format(R"(graph gated_halves_{0}_{1}(x: {1}[N, {2}]) {{
  gate, up = split(x, axis=1, sizes=[{0}, {0}])
  y = mul(gate, up)
  return y
}})",
                                 half, dtype_name(dt), 2 * half));
}

struct Case {
  std::string label;
  Graph graph;
  std::vector<sym::Binding> bindings;
  double tol;
};

std::vector<sym::Binding> nd(std::initializer_list<std::pair<int, int>> shapes) {
  std::vector<sym::Binding> out;
  for (auto [n, d] : shapes)
    out.push_back({{"N", n}, {"D", d}});
  return out;
}

std::vector<Case> cases() {
  const auto rows = nd({{3, 7}, {5, 1023}, {2, 1024}, {3, 130}, {1, 2000}});
  std::vector<Case> out;
  out.push_back({"scale_shift", scale_shift(), rows, 1e-6});
  out.push_back({"mixed_outputs", mixed_outputs(), rows, 1e-2});
  out.push_back({"flat_chain", flat_chain(), nd({{1, 7}, {3, 333}, {7, 1001}}), 1e-3});
  // A long loop body: compiled with g++'s scheduling (AF_SCHEDULED).
  out.push_back({"chain30", example("patterns/chain30"), nd({{2, 1001}, {3, 128}}), 1e-5});
  out.push_back({"layernorm", example("layernorm"), rows, 1e-5});
  out.push_back({"layernorm_f16", example("layernorm_f16"), rows, 4e-3});
  out.push_back({"layernorm_bf16", example("layernorm_bf16"), rows, 3e-2});
  out.push_back({"softmax", example("softmax"), rows, 1e-5});
  out.push_back({"silu_f32", silu("f32"), rows, 1e-5});
  out.push_back({"silu_bf16", silu("bf16"), rows, 3e-2});
  out.push_back({"strided_rows",  // prefetched 32 rows on: A > 32 to reach them
                 strided_rows(),
                 {{{"A", 3}, {"B", 2}}, {{"A", 70}, {"B", 3}}},
                 1e-6});
  out.push_back({"gated_halves_bf16",  // rows of 2 KiB, 4 KiB apart: prefetched in chunks
                 gated_halves(1024, DType::bf16),
                 {{{"N", 1}}, {{"N", 3}}, {{"N", 5}}},
                 1e-2});
  out.push_back({"bert_embeddings",  // gathered rows, prefetched two rows on
                 example("patterns/bert_embeddings"),
                 {{{"B", 2}, {"S", 3}, {"V", 5}}, {{"B", 3}, {"S", 7}, {"V", 40}}},
                 1e-5});
  out.push_back({"stats", stats(), rows, 1e-5});
  const std::vector<sym::Binding> n_rows = {{{"N", 1}}, {{"N", 3}}, {{"N", 7}}};
  out.push_back({"short_stats_768", short_stats(768, DType::f32), n_rows, 1e-5});
  out.push_back({"short_stats_1000", short_stats(1000, DType::f32), n_rows, 1e-5});
  out.push_back({"short_stats_200_bf16", short_stats(200, DType::bf16), n_rows, 3e-2});
  out.push_back({"short_stats_40", short_stats(40, DType::f32), n_rows, 1e-5});
  out.push_back({"long_stats_1025", short_stats(1025, DType::f32), n_rows, 1e-5});
  // Short rows of whole lines (f32 16 and 32, bf16 32; and 48 f32) and not
  // (f32 8, bf16 16); a reducing pass over rows of 16 f32 and 32 bf16.
  const std::vector<sym::Binding> more_rows = {{{"N", 1}}, {{"N", 5}}, {{"N", 70}}};
  for (auto [d, dt] :
       {std::pair{16, DType::f32}, std::pair{32, DType::f32}, std::pair{48, DType::f32},
        std::pair{32, DType::bf16}, std::pair{8, DType::f32}, std::pair{16, DType::bf16}})
    out.push_back({fmt::format("const_rows_{}_{}", d, dtype_name(dt)), const_rows(d, dt), more_rows,
                   dt == DType::bf16 ? 1e-2 : 1e-6});
  out.push_back({"short_stats_16", short_stats(16, DType::f32), more_rows, 1e-5});
  out.push_back({"short_stats_32_bf16", short_stats(32, DType::bf16), more_rows, 3e-2});
  out.push_back({"outer_and_inner",
                 outer_and_inner(),
                 {{{"A", 2}, {"B", 3}, {"C", 200}}, {{"A", 3}, {"B", 2}, {"C", 1023}}},
                 1e-5});
  return out;
}

::testing::AssertionResult same_bytes(const HostTensor& a, const HostTensor& b) {
  if (a.nbytes() != b.nbytes() || (a.nbytes() > 0 && std::memcmp(a.data(), b.data(), a.nbytes())))
    return ::testing::AssertionFailure()
           << "outputs differ: " << tensors_close(a, b, 0, 0).message();
  return ::testing::AssertionSuccess();
}

/// Runs every case with keys 0, 1 and 2 on uneven block splits and
/// unaligned output starts; the outputs must be byte-identical (and key 0
/// right against the reference).
void check_keys_agree(const std::vector<Case>& all, const jit::Module& so,
                      const codegen::ModuleSource& module,
                      const std::vector<schedule::ScheduledKernel>& kernels,
                      const std::vector<int64_t>& offsets) {
  const af_machine machines[] = {one_core(), many_tiny_blocks(3, 1), many_tiny_blocks(2, 64)};
  for (size_t i = 0; i < all.size(); ++i) {
    const Case& c = all[i];
    for (const sym::Binding& binding : c.bindings) {
      const std::vector<HostTensor> inputs = random_inputs(c.graph, binding, 7);
      const std::vector<HostTensor> want = run_reference(c.graph, inputs, binding);
      for (const af_machine& m : machines) {
        for (int64_t offset : offsets) {
          const auto run = [&](int64_t key) {
            return run_kernel(so, module.kernels[i], kernels[i].graph, c.graph, inputs, binding, m,
                              RunOptions{key, offset});
          };
          const KernelRun ordinary = run(tiling::kOrdinaryStoresKey);
          const KernelRun streaming = run(tiling::kStreamingStoresKey);
          const KernelRun prefetching = run(tiling::kPrefetchingKey);
          std::string where = c.label;
          for (const auto& [s, v] : binding)
            where += fmt::format(" {}={}", s, v);
          where += fmt::format(", {} blocks, offset {}", ordinary.block_dim, offset);
          for (size_t o = 0; o < want.size(); ++o) {
            EXPECT_TRUE(tensors_close(ordinary.outputs[o], want[o], c.tol, c.tol))
                << where << ", output " << o;
            EXPECT_TRUE(same_bytes(streaming.outputs[o], ordinary.outputs[o]))
                << where << ", output " << o;
            EXPECT_TRUE(same_bytes(prefetching.outputs[o], ordinary.outputs[o]))
                << where << ", output " << o << " (key 2)";
          }
        }
      }
    }
  }
}

/// The module of `all`, and its kernels.
codegen::ModuleSource module_of(const std::vector<Case>& all,
                                std::vector<schedule::ScheduledKernel>& kernels) {
  for (const Case& c : all)
    kernels.push_back(schedule_graph(c.graph));
  return codegen::generate_cpu_module(kernels);
}

TEST(Streaming, KeysGiveIdenticalResults) {
  const std::vector<Case> all = cases();
  std::vector<schedule::ScheduledKernel> kernels;
  const codegen::ModuleSource module = module_of(all, kernels);
  check_keys_agree(all, *compile(module), module, kernels, {0, 1, 5, 17});
}

TEST(Streaming, SigmoidsOfChunksExponentiateABuffer) {
  // Chunk loops (streaming, prefetching, bf16 chunks) write -|x| to e<id>
  // and run af_exp_nonpos_row over it; the plain and tail loops keep
  // af_sigmoid (KeysGiveIdenticalResults: the same bits). Not when a Gather
  // is in the kernel (its checks belong to one loop).
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(silu("bf16"))};
  const std::string code = codegen::generate_cpu_module(kernels).code;
  EXPECT_NE(code.find("af_exp_nonpos_row(e"), std::string::npos);
  EXPECT_NE(code.find("= af_sigmoid_from_exp("), std::string::npos);
  EXPECT_NE(code.find("= af_sigmoid("), std::string::npos);
  kernels = {schedule_graph(parse_graph(R"(graph g(t: f32[V, 256], ids: i64[N]) {
  e = gather(t, ids, axis=0)
  s = sigmoid(e)
  return s
})"))};
  const std::string gathered = codegen::generate_cpu_module(kernels).code;
  EXPECT_EQ(gathered.find("= af_sigmoid_from_exp("), std::string::npos);
  EXPECT_NE(gathered.find("= af_sigmoid("), std::string::npos);
}

TEST(Streaming, OtherCompilersAndTargets) {
  // Each path of af_nt_store: clang's builtin, g++'s SSE2 and AVX moves
  // (the default -march=native run above takes the AVX-512 one here).
  std::vector<Case> all;
  all.push_back({"mixed_outputs", mixed_outputs(), nd({{3, 1023}}), 1e-2});
  all.push_back({"layernorm_f16", example("layernorm_f16"), nd({{2, 1000}}), 4e-3});
  all.push_back({"chain30", example("patterns/chain30"), nd({{2, 1001}}), 1e-5});  // AF_SCHEDULED
  all.push_back({"softmax", example("softmax"), nd({{3, 1000}}), 1e-5});  // af_exp_nonpos_row
  all.push_back({"silu_bf16", silu("bf16"), nd({{3, 1000}}), 3e-2});      // chunk sigmoids
  std::vector<schedule::ScheduledKernel> kernels;
  codegen::ModuleSource module = module_of(all, kernels);
  module.code += "extern \"C\" int t_nt_stores(void) { return AF_NT_STORES; }\n";
  // af_exp_nonpos_row against af_exp_nonpos on every 4099th float <= 64
  // (NaN included): clang's AVX-512 path and the fallbacks.
  module.code += R"(extern "C" int64_t t_exp_row_mismatches(void) {
  float x[1000], row[1000];
  int64_t n = 0, bad = 0;
  for (uint64_t u = 0; u < (UINT64_C(1) << 32) || n > 0; u += 4099) {
    if (u < (UINT64_C(1) << 32)) {
      const uint32_t b = (uint32_t)u;
      __builtin_memcpy(&x[n], &b, 4);
      if (!(x[n] > 64.0f)) row[n] = x[n], ++n;
      if (n < 1000) continue;
    }
    af_exp_nonpos_row(row, n);
    for (int64_t i = 0; i < n; ++i) {
      const float want = af_exp_nonpos(x[i]);
      bad += want != want ? row[i] == row[i] : __builtin_memcmp(&want, &row[i], 4) != 0;
    }
    n = 0;
    if (u >= (UINT64_C(1) << 32)) break;
  }
  return bad;
}
)";
  struct Target {
    const char* cxx;
    std::vector<std::string> flags;
  };
  const Target targets[] = {
      {"clang++", {"-O2", "-march=native", "-std=gnu++14", "-fopenmp-simd", "-Werror"}},
      {"g++", {"-O2", "-march=x86-64", "-fopenmp-simd", "-Werror"}},
      {"g++", {"-O2", "-mavx2", "-mfma", "-fopenmp-simd", "-Werror"}}};
  for (const Target& t : targets) {
    if (std::system(fmt::format("{} --version > /dev/null 2>&1", t.cxx).c_str()) != 0) continue;
    std::string trace = t.cxx;
    for (const std::string& f : t.flags)
      trace += " " + f;
    SCOPED_TRACE(trace);
    jit::CompilerOptions options;
    options.cxx = t.cxx;
    options.flags = t.flags;
    options.cache_dir =
        (std::filesystem::temp_directory_path() / "autofuse-codegen-tests").string();
    jit::CompileStats stats;
    const auto so = jit::compile_and_load(module.code, options, stats);
    EXPECT_EQ(reinterpret_cast<int (*)()>(so->symbol("t_nt_stores"))(), 1);
    EXPECT_EQ(reinterpret_cast<int64_t (*)()>(so->symbol("t_exp_row_mismatches"))(), 0);
    check_keys_agree(all, *so, module, kernels, {0, 3});
  }
}

TEST(Streaming, TilingPicksTheKeyFromTheOutputBytes) {
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(example("layernorm")),
                                                    schedule_graph(scale_shift()),
                                                    schedule_graph(example("layernorm_f16"))};
  {  // per-row output: nothing streams
    GraphBuilder r("row_sum");
    Tensor x = r.input("x", DType::f32, {S("N"), S("D")});
    kernels.push_back(schedule_graph(std::move(r).build({r.reduce_sum(x, {1}, true)})));
  }
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  const auto so = compile(module);
  af_machine m{2, 32 << 10, 1 << 20, 32 << 20, 64, 64 << 10, 0};  // streams above 16 MiB of output
  const auto key = [&](size_t k, int64_t n, int64_t d) {
    const std::vector<int64_t> td = run_tiling(*so, module.kernels[k], {{"N", n}, {"D", d}}, m);
    return reinterpret_cast<const af_tiling_header*>(td.data())->tiling_key;
  };
  for (size_t k : {0, 1}) {  // f32 outputs: 4 * N * D bytes
    EXPECT_EQ(key(k, 16384, 1024), 1) << module.kernels[k].name;
    EXPECT_EQ(key(k, 4097, 1024), 1) << module.kernels[k].name;
    EXPECT_EQ(key(k, 4096, 1024), 0) << module.kernels[k].name;  // exactly half the L3
    EXPECT_EQ(key(k, 16, 1024), 0) << module.kernels[k].name;
    EXPECT_EQ(key(k, 1, 64), 0) << module.kernels[k].name;
  }
  EXPECT_EQ(key(2, 8192, 1024), 0);  // f16: half the bytes
  EXPECT_EQ(key(2, 8193, 1024), 1);
  EXPECT_EQ(key(3, 1 << 20, 1 << 10), 0);  // row_sum: no streamed store
  m.l3_bytes = 0;
  EXPECT_EQ(key(0, 1, 1), 1);
  EXPECT_EQ(key(3, 1, 1), 0);
  EXPECT_THAT(module.code, HasSubstr("td->header.tiling_key = INT64_C(4)*s_D*s_N > "
                                     "machine->l3_bytes / 2 ? (memory_bound ? 1 : 2) : 0;"));
  EXPECT_THAT(module.code, HasSubstr("td->header.tiling_key = 0;"));
}

TEST(Streaming, ComputeBoundLoopsKeepOrdinaryStores) {
  // loop_traffic: per element of the vector loop, vector instructions
  // (ascir::vector_op_cost) and bytes through memory (w and bias are
  // broadcast along N: they stay in the cache).
  const auto scale_shift_in = [](DType dt) {
    GraphBuilder b(fmt::format("scale_shift_{}", dtype_name(dt)));
    Tensor x = b.input("x", dt, {S("N"), S("D")});
    Tensor w = b.input("w", dt, {S("D")});
    Tensor bias = b.input("bias", dt, {S("D")});
    return std::move(b).build({b.add(b.mul(x, w), bias)});
  };
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(scale_shift_in(DType::f32)),
                                                    schedule_graph(scale_shift_in(DType::bf16))};
  const tiling::LoopTraffic f32 = tiling::loop_traffic(kernels[0]);
  EXPECT_EQ(f32.ops, 6);  // three loads, mul, add, store
  EXPECT_EQ(f32.bytes, 8);
  // bf16: each load widens (3), the store rounds (13).
  const tiling::LoopTraffic bf16 = tiling::loop_traffic(kernels[1]);
  EXPECT_EQ(bf16.ops, 24);
  EXPECT_EQ(bf16.bytes, 4);
  {  // a reduction's per-row values are not per element: rmsnorm f32
    const tiling::LoopTraffic rms = tiling::loop_traffic(schedule_graph(example("rmsnorm")));
    EXPECT_EQ(rms.bytes, 8) << rms.ops;
    EXPECT_LE(rms.ops, 8);
  }

  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  EXPECT_THAT(module.code,
              HasSubstr("const bool memory_bound = machine->stream_max_ops_per_kib <= 0 || "
                        "INT64_C(24) * 1024 <= machine->stream_max_ops_per_kib * af_max(1, "
                        "machine->vector_bytes / 4) * INT64_C(4);"));
  const auto so = compile(module);
  // AVX2 (8 f32 lanes) and the default limit (runtime/machine.h): f32 is
  // 6 * 1024 / (8 * 8) = 96 instructions per KiB, bf16 768.
  af_machine m{2, 32 << 10, 1 << 20, 32 << 20, 32, 64 << 10, 480};
  const auto key = [&](size_t k, int64_t n, int64_t d) {
    const std::vector<int64_t> td = run_tiling(*so, module.kernels[k], {{"N", n}, {"D", d}}, m);
    return reinterpret_cast<const af_tiling_header*>(td.data())->tiling_key;
  };
  EXPECT_EQ(key(0, 16384, 1024), 1);  // 64 MiB of f32 output
  // 64 MiB of bf16 output, compute-bound: ordinary stores, prefetching.
  EXPECT_EQ(key(1, 16384, 2048), 2);
  EXPECT_EQ(key(1, 16, 1024), 0);
  m.vector_bytes = 64;  // 16 lanes: 24 * 1024 <= 480 * 16 * 4
  EXPECT_EQ(key(1, 16384, 2048), 1);
  EXPECT_EQ(key(1, 16, 1024), 0);  // small output: never
  m.vector_bytes = 32;
  m.stream_max_ops_per_kib = 768;  // the limit is inclusive
  EXPECT_EQ(key(1, 16384, 2048), 1);
  m.stream_max_ops_per_kib = 767;
  EXPECT_EQ(key(1, 16384, 2048), 2);
  EXPECT_EQ(key(1, 16, 1024), 0);
  m.stream_max_ops_per_kib = 0;  // no limit
  EXPECT_EQ(key(1, 16384, 2048), 1);
  EXPECT_EQ(key(0, 16384, 1024), 1);
}

TEST(Streaming, SourceStructure) {
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(scale_shift()),
                                                    schedule_graph(example("layernorm")),
                                                    schedule_graph(stats()),
                                                    schedule_graph(example("rmsnorm")),
                                                    schedule_graph(short_stats(768, DType::f32)),
                                                    schedule_graph(short_stats(1025, DType::f32)),
                                                    schedule_graph(const_rows(32, DType::f32)),
                                                    schedule_graph(const_rows(8, DType::f32)),
                                                    schedule_graph(short_stats(16, DType::f32))};
  GraphBuilder r("row_sum");
  Tensor x = r.input("x", DType::f32, {S("N"), S("D")});
  kernels.push_back(schedule_graph(std::move(r).build({r.reduce_sum(x, {1}, true)})));
  const codegen::ModuleSource m = codegen::generate_cpu_module(kernels);
  for (const char* name : {"scale_shift", "layernorm"}) {
    const std::string k = kernel_text(m.code, name);
    SCOPED_TRACE(k);
    // A Reduction has its row loop three times (unsplit rows in groups when
    // they may be short, row_groups.cpp; the rest; split ones; reduction.cpp):
    // its per-row code appears three times.
    const size_t copies = std::string(name) == "layernorm" ? 3u : 1u;
    // The key is read twice per row (keys 1 and 2) and once for the fence,
    // never in a loop body; layernorm's last pass once more as a vector
    // pass (a symbolic row of 64-1024: `nt_`, vector_pass.cpp), in the loop
    // of unsplit rows one by one (not in groups of rows of at most 64, nor
    // among split rows).
    const size_t vector_pass = std::string(name) == "layernorm" ? 1u : 0u;
    EXPECT_EQ(count(k, "tiling_key"), 2 * copies + vector_pass + 1);
    EXPECT_THAT(k, HasSubstr("if (AF_NT_STORES && td->header.tiling_key == 1 && "));
    EXPECT_THAT(k, HasSubstr(" + af_nt_peel(&q0["));
    EXPECT_THAT(k, HasSubstr("\n  if (AF_NT_STORES && td->header.tiling_key == 1) af_nt_fence();"));
    // Part and chunk loops, key 2's chunk and tail loops, the plain loop of
    // key 0 and short rows (layernorm: and its variance pass's short-row
    // loop, short_row_reduce.cpp; the mean reduces the input row in place).
    EXPECT_EQ(count(k, "#pragma omp simd\n"), std::string(name) == "layernorm" ? 18u : 5u);
    EXPECT_THAT(k, HasSubstr("} else if (td->header.tiling_key == 2 && "));
    EXPECT_THAT(k, HasSubstr("for (int64_t i1 = nt_hi; i1 < "));  // key 2's tail
    EXPECT_THAT(k, HasSubstr("} else {\n#pragma omp simd\n"));    // the plain loop
    EXPECT_THAT(k, HasSubstr("float t"));                         // the chunk buffer
    EXPECT_THAT(k, HasSubstr("[AF_NT_CHUNK] __attribute__((aligned(64)));"));
    // The per-row branch precedes both loops.
    EXPECT_LT(k.find("tiling_key == 1 && "), k.find("for (int64_t i1 = nt_from; i1 < nt_to;"));
    EXPECT_LT(k.find("tiling_key == 1 && "), k.find("for (int64_t i1 = nt_k;"));
    EXPECT_EQ(count(k, "af_nt_store(&q0["), copies);
    // The fence comes after the last loop.
    EXPECT_GT(k.find("af_nt_fence()"), k.rfind("af_nt_store("));
  }
  // stats: y and xc are stored in passes that accumulate; only the last
  // output (y * m2, a pass of its own) streams.
  const std::string s = kernel_text(m.code, "stats");
  EXPECT_EQ(count(s, "af_nt_store("), 3u) << s;  // one per row loop copy
  EXPECT_THAT(s, HasSubstr("af_nt_store(&q4["));
  // Constant rows of at most tiling::kShortReduceRow are reduced from
  // buffers: the stores of every pass stream (h in the mean's pass, xc in the
  // variance's, y in the max's, y * m2), the buffer writes in each variant.
  // Longer rows accumulate in the loop: only the last pass streams. xc (h
  // - mean, recomputed from two loads, an add and a sub) is a cost buffer
  // (row_buffers.cpp): the passes after the mean's run in a buffered and a
  // recomputing variant, each with its streaming loop. The last pass (y *
  // m2: no Reduce, f32 stores) is also a storing vector pass
  // (vector_pass.cpp, under AF_VECTOR_PASS), streaming by af_put16_f32.
  const std::string ss = kernel_text(m.code, "short_stats_768_f32");
  EXPECT_EQ(count(ss, "af_nt_store("), 14u) << ss;
  // Key 2's chunks only where they prefetch: the last pass (y * m2), in the
  // unsplit and split row loops (short rows of 768 are not grouped), in
  // both variants.
  EXPECT_EQ(count(ss, "tiling_key == 2 && "), 4u) << ss;
  for (const char* q : {"q0", "q1", "q3", "q5"})
    EXPECT_THAT(ss, HasSubstr(fmt::format("af_nt_store(&{}[", q)));
  EXPECT_THAT(ss, HasSubstr("af_put16_f32(&q5[b29 + (i1 + 16)], b_[0], 16, nt_);"));
  EXPECT_THAT(ss, HasSubstr("      rb"));
  const std::string ls = kernel_text(m.code, "short_stats_1025_f32");
  EXPECT_EQ(count(ls, "af_nt_store("), 4u) << ls;  // both loops, both variants
  EXPECT_THAT(ls, HasSubstr("af_nt_store(&q5["));
  // Rows shorter than a chunk of whole cache lines stream whole: in the
  // elementwise whole-rows loop (every key) after one test of the first
  // row's alignment (nt_rows), and in the per-row path (a block's partial
  // first and last rows) after a test of each row's; rows of 8 f32 (half a
  // line) never stream. A reducing pass over rows of 16 f32 streams its
  // stores whole, in both row loop copies.
  const std::string cr = kernel_text(m.code, "const_rows_32_f32");
  EXPECT_THAT(cr, HasSubstr("    if (c == 0 && end - f >= ninner) {  // whole rows\n"));
  EXPECT_THAT(cr, HasSubstr("const bool nt_rows = AF_NT_STORES && td->header.tiling_key == 1 && "
                            "((uintptr_t)&q0[b7 + (0)] & 63u) == 0;"));
  EXPECT_THAT(cr, HasSubstr("      if (nt_rows) {  // streaming whole lines"));
  EXPECT_THAT(cr, HasSubstr("af_nt_store_aligned(&q0[b7 + (nt_k)], t7, (int64_t)sizeof(t7));"));
  EXPECT_THAT(cr, HasSubstr("td->header.tiling_key == 1 && c_end - c == 32) {  // whole lines"));
  EXPECT_EQ(count(cr, "af_nt_store("), 1u) << cr;  // the partial rows'
  EXPECT_THAT(cr, HasSubstr("float t"));
  EXPECT_THAT(cr, HasSubstr("[32] __attribute__((aligned(64)));"));
  EXPECT_THAT(cr, Not(HasSubstr("AF_NT_CHUNK) {")));
  EXPECT_THAT(kernel_text(m.code, "const_rows_8_f32"),
              HasSubstr("if (c == 0 && end - f >= ninner && td->header.tiling_key != 1) {"));
  EXPECT_THAT(kernel_text(m.code, "const_rows_8_f32"), Not(HasSubstr("whole lines")));
  const std::string s16 = kernel_text(m.code, "short_stats_16_f32");
  // h, xc, y, y * m2; three copies (a constant row of 16 has no cost
  // buffers, row_buffers.cpp, so no buffered variants).
  EXPECT_EQ(count(s16, "// whole lines"), 12u) << s16;
  EXPECT_THAT(s16, Not(HasSubstr("ub_long")));
  // A constant row of 768 uses its cost buffer whenever the row buffers
  // fit: no ub_long test.
  EXPECT_THAT(ss, HasSubstr("if (ub_rows) {  // row buffers"));
  EXPECT_THAT(ss, Not(HasSubstr("ub_long")));
  // rmsnorm's output streams; row_sum has nothing to stream: no key at all.
  EXPECT_EQ(count(kernel_text(m.code, "rmsnorm"), "af_nt_store("), 3u);  // three row loop copies
  EXPECT_THAT(kernel_text(m.code, "row_sum"), Not(HasSubstr("af_nt")));
  EXPECT_THAT(kernel_text(m.code, "row_sum"), Not(HasSubstr("tiling_key")));
  // The chunk the streaming loops and tiling::streams assume.
  EXPECT_THAT(m.code, HasSubstr(fmt::format("#define AF_NT_CHUNK {}\n", tiling::kStreamChunk)));
  // No intrinsics header (compile time).
  EXPECT_THAT(m.code, Not(HasSubstr("#include <immintrin.h>")));
}

// bf16 x * w (bf16 operands: products exact in f32, rounded once at the
// store): a loop whose bf16 store streams rounds it by the chunk
// (AF_BF16_CVT: vcvtne2ps2bf16, or element by element for a chunk holding a
// subnormal) under every key, and only such a loop.
Graph bf16_product(int64_t d = 0) {  // d > 0: rows of d
  GraphBuilder b(d > 0 ? fmt::format("bf16_product_{}", d) : "bf16_product");
  const sym::Expr cols = d > 0 ? sym::Expr(d) : S("D");
  Tensor x = b.input("x", DType::bf16, {S("N"), cols});
  Tensor w = b.input("w", DType::bf16, {cols});
  return std::move(b).build({b.mul(x, w)});
}

TEST(Streaming, Bf16StoresByTheChunk) {
  std::vector<schedule::ScheduledKernel> kernels = {
      schedule_graph(bf16_product()), schedule_graph(bf16_product(16)),
      schedule_graph(bf16_product(48)), schedule_graph(mixed_outputs()),
      schedule_graph(scale_shift())};
  const codegen::ModuleSource m = codegen::generate_cpu_module(kernels);
  const std::string k = kernel_text(m.code, "bf16_product");
  {
    SCOPED_TRACE(k);
    // Streaming chunks (key 1), key 0's loop and key 2's chunks (when it
    // prefetches) each in a chunked form under AF_BF16_CVT and the plain one.
    EXPECT_THAT(k, HasSubstr("af_bf16_chunk_t t"));
    EXPECT_THAT(k, HasSubstr("= AF_BF16_CHUNK_VALUE("));
    EXPECT_EQ(count(k, "af_bf16_nt_store(&q0["), 1u);
    EXPECT_GE(count(k, "#if AF_BF16_CVT  // bf16 stores rounded by the chunk\n"), 1u);
    EXPECT_EQ(count(k, "#if AF_BF16_CVT"), count(k, "af_bf16_store(&q0["));
    // Each loop also in lane form for AVX2 (lane_loops.cpp), its own #if
    // (after the word pairs' where the loop has them, word_pairs.cpp).
    EXPECT_EQ(
        count(k, "#if AF_BF16_CVT") + count(k, "#if AF_LANE_PAIRS") + count(k, "#if AF_WORD_PAIRS"),
        count(k, "#endif\n"));
    EXPECT_THAT(k, Not(HasSubstr("t3[i1 - nt_k] = af_f32_to_bf16(")));
    EXPECT_THAT(k, HasSubstr("af_put16_bf16(&t6[i1 - nt_k], v5, n_);"));
    EXPECT_THAT(k, HasSubstr("af_load16_bf16(&v1, &p0["));
    // A chunk's loop has no tail; a row's part before the aligned chunks may.
    EXPECT_THAT(k, HasSubstr("const int64_t n_ = 16;  // whole vectors\n"));
    EXPECT_THAT(k, HasSubstr("const int64_t n_ = nt_to - i1;\n"));
  }
  // Rows of 16 and 48 bf16 (shorter than a chunk and not whole cache
  // lines: they never stream) are whole rows rounded by the vector after
  // their loop, in the whole-rows loop and the per-row path.
  for (const char* name : {"bf16_product_16", "bf16_product_48"}) {
    const std::string r = kernel_text(m.code, name);
    EXPECT_GE(count(r, "#if AF_BF16_CVT  // bf16 stores rounded by the vector\n"), 2u) << r;
    EXPECT_THAT(r, HasSubstr("= AF_BF16_CHUNK_VALUE(")) << r;
  }
  // f32 outputs keep their loops.
  EXPECT_THAT(kernel_text(m.code, "scale_shift"), Not(HasSubstr("AF_BF16")));
  // mixed_outputs (its f16 and int conversions: a long loop body) is a
  // scheduled kernel, whose ordinary loops run by the chunk in every build:
  // its bf16 chunks are rounded by af_bf16_store without an #if.
  const std::string mixed = kernel_text(m.code, "mixed_outputs");
  EXPECT_THAT(mixed, HasSubstr("= AF_BF16_CHUNK_VALUE("));
  EXPECT_THAT(mixed, HasSubstr("af_bf16_store(&q0["));
  EXPECT_THAT(mixed, HasSubstr("__builtin_memcpy(&q1["));

  // Edge values: ties, inf, NaN, and subnormal products in some chunks only.
  // Outputs equal the reference's (one rounding to nearest even) under all
  // three keys, aligned or not.
  const std::shared_ptr<jit::Module> so = compile(m);
  const float specials[] = {1.0f + 1.0f / 128,  // times 1.5: a tie
                            3.0e38f,
                            std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            1.0e-20f,
                            -0.0f};
  const auto check = [&](size_t kernel, const Graph& g, const sym::Binding& binding) {
    std::vector<HostTensor> inputs = random_inputs(g, binding, 11);
    HostTensor& x = inputs[0];
    HostTensor& w = inputs[inputs.size() - 1];
    const int64_t d = w.numel();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (i % 97 == 5) x.set_f64(i, specials[(i / 97) % 6]);
      if (i / d == 1 && i % d < 64) x.set_f64(i, 1.5e-19);  // row 1's first chunk: subnormal
    }
    for (int64_t j = 0; j < d; ++j)
      if (j % 7 == 3) w.set_f64(j, j % 2 ? 1.5 : 1.0e-20);  // (1 + 2^-7) * 1.5: a tie
    const std::vector<HostTensor> want = run_reference(g, inputs, binding);
    for (int64_t key :
         {tiling::kOrdinaryStoresKey, tiling::kStreamingStoresKey, tiling::kPrefetchingKey}) {
      for (int64_t offset : {0, 1, 32}) {
        const KernelRun run = run_kernel(*so, m.kernels[kernel], kernels[kernel].graph, g, inputs,
                                         binding, one_core(), RunOptions{key, offset});
        EXPECT_TRUE(tensors_close(run.outputs[0], want[0], 0, 0))
            << fmt::format("{} N={} key {} offset {}", g.name(), binding.at("N"), key, offset);
      }
    }
  };
  for (const sym::Binding& binding : std::vector<sym::Binding>{
           {{"N", 3}, {"D", 1000}}, {{"N", 2}, {"D", 64}}, {{"N", 5}, {"D", 131}}})
    check(0, bf16_product(), binding);
  for (int64_t n : {1, 3, 70}) {
    check(1, bf16_product(16), {{"N", n}});
    check(2, bf16_product(48), {{"N", n}});
  }
}

TEST(Streaming, PrefetchesOfLaterRows) {
  // Multi-pass rows: the streaming chunk loop of the last pass prefetches
  // the next row of every input pass 0 reads, one prefetch per cache line
  // of the chunk (row_prefetch.cpp); one-pass kernels and row-invariant
  // operands (gamma) do not.
  std::vector<schedule::ScheduledKernel> kernels = {
      schedule_graph(example("layernorm")),
      schedule_graph(example("layernorm_f16")),
      schedule_graph(scale_shift()),
      schedule_graph(outer_and_inner()),
      schedule_graph(example("patterns/bert_embeddings")),
      schedule_graph(strided_rows()),
      schedule_graph(following_rows()),
      schedule_graph(flat_chain()),
      schedule_graph(gated_halves(1024, DType::bf16)),
      schedule_graph(gated_halves(256, DType::bf16))};
  GraphBuilder r("row_sum");
  Tensor x = r.input("x", DType::f32, {S("N"), S("D")});
  kernels.push_back(schedule_graph(std::move(r).build({r.reduce_sum(x, {1}, true)})));
  const codegen::ModuleSource m = codegen::generate_cpu_module(kernels);
  const std::string ln = kernel_text(m.code, "layernorm");
  // 64 f32 = 4 lines, in each copy of the row loop (grouped, unsplit,
  // split) and each key's chunk loop (1: streaming stores; 2: ordinary),
  // and in the vector pass's runs of 64 (a symbolic row of 64-1024 one by
  // one, vector_pass.cpp; every key).
  EXPECT_EQ(count(ln, "__builtin_prefetch(&p0["), 28u) << ln;
  EXPECT_EQ(count(ln, "__builtin_prefetch("), 28u) << ln;        // not gamma, beta
  EXPECT_THAT(ln, HasSubstr("const bool pf_more = i0 + 2 < "));  // two rows on
  EXPECT_THAT(ln, HasSubstr("__builtin_prefetch(&p0[b1 + (nt_k + 48) + pf1]);"));
  EXPECT_THAT(ln, HasSubstr("__builtin_prefetch(&p0[b1 + (i1 + 48) + pf1]);"));
  // Inside the chunk loop, before its vector loop.
  const size_t chunks = ln.find("for (int64_t nt_k = nt_lo;");
  EXPECT_LT(ln.find("__builtin_prefetch(", chunks), ln.find("for (int64_t i1 = nt_k;", chunks));
  const size_t key2 = ln.find("tiling_key == 2 && ");
  EXPECT_LT(key2, ln.find("__builtin_prefetch(", ln.find("for (int64_t nt_k = lo;", key2)));
  // 2 lines, in each of the last pass's two variants (f16's x - mean is
  // kept in a row buffer for its cost, row_buffers.cpp; the row still
  // prefetches x for the next row's first pass).
  const std::string ln16 = kernel_text(m.code, "layernorm_f16");
  // Five row loop copies (f16's loop body is long: its medium rows run in
  // fours and pairs too, row_groups.cpp), two keys each, and the storing
  // vector pass's runs of 64 (F16C: kernel_prelude_f16.h) in the three
  // copies for rows of 64-1024.
  EXPECT_EQ(count(ln16, "__builtin_prefetch("), 46u) << ln16;
  EXPECT_THAT(ln16, HasSubstr("if (ub_rows && ub_long) {"));
  EXPECT_THAT(kernel_text(m.code, "row_sum"), Not(HasSubstr("prefetch")));
  // Two reduced axes (A and C): the row is B; the chunk loop runs in the
  // inner one and prefetches there.
  EXPECT_THAT(kernel_text(m.code, "outer_and_inner"), HasSubstr("__builtin_prefetch(&p0["));
  // Elementwise: short rows that are apart in memory (a transposed read)
  // are prefetched 8 KiB ahead (32 rows of 64 f32) at the row's start under
  // keys 1 and 2 (in the whole-rows loop's streaming and prefetching
  // copies and the per-row path); other rows in the chunk loop, about 4 KiB
  // ahead in whole rows (16 rows of 64 f32; a runtime count for a symbolic
  // row), and at the start of each row of those two whole-rows copies; the
  // row-invariant operands not.
  const std::string sr = kernel_text(m.code, "strided_rows");
  EXPECT_EQ(count(sr, "__builtin_prefetch("), 12u) << sr;
  // Output rows 64 * A elements apart: their alignment is one test.
  EXPECT_THAT(sr, HasSubstr("const bool nt_rows = AF_NT_STORES && td->header.tiling_key == 1 && "
                            "(int64_t)(INT64_C(64)*s_A) * 4 % 64 == 0 && "
                            "((uintptr_t)&q0[b5 + (0)] & 63u) == 0;"));
  EXPECT_THAT(sr, HasSubstr("if (td->header.tiling_key != 0 && i1 + 32 < n1) {"));  // i1: A
  EXPECT_THAT(sr, HasSubstr("__builtin_prefetch(&p0[b2 + 32 * (INT64_C(64)*s_B) + 48]);"));
  EXPECT_THAT(sr, Not(HasSubstr("pf_more")));
  const std::string fr = kernel_text(m.code, "following_rows");
  EXPECT_THAT(fr, HasSubstr("const bool pf_more = i1 + 16 < n1;"));  // i1: B
  EXPECT_THAT(fr, HasSubstr("const int64_t pf1 = pf_more ? 16 * (int64_t)(INT64_C(64)) : 0;"));
  // x only, not w; in the whole-rows loop's streaming and prefetching
  // copies and the general path's chunk loops (both keys).
  EXPECT_EQ(count(fr, "__builtin_prefetch("), 16u) << fr;
  EXPECT_THAT(fr, HasSubstr("if (td->header.tiling_key != 0 && i1 + 16 < n1) {\n"
                            "            __builtin_prefetch(&p0[b1 + (0) + 16 * (INT64_C(64))]);"));
  EXPECT_LT(fr.find("for (int64_t nt_k = nt_lo;"), fr.find("__builtin_prefetch(&p0[b1 + (nt_k"));
  // Strided rows longer than 512 bytes (swiglu bf16's halves: 2 KiB rows 4
  // KiB apart) are prefetched in the chunk loop like following rows, two
  // rows (4 KiB) on: one prefetch per line at the row's start held the miss
  // buffers (session 40's Ice Lake: swiglu bf16 [16, 512] 0.71x the time).
  const std::string gh = kernel_text(m.code, "gated_halves_1024_bf16");
  EXPECT_THAT(gh, Not(HasSubstr("(strided)"))) << gh;
  EXPECT_THAT(gh, HasSubstr("const bool pf_more = i0 + 2 < n0;"));
  EXPECT_THAT(gh, HasSubstr("const int64_t pf2 = pf_more ? 2 * (int64_t)(INT64_C(2048)) : 0;"));
  EXPECT_THAT(gh, HasSubstr("__builtin_prefetch(&p0[b2 + (nt_k + 32) + pf2]);"));
  // 2 Loads x 2 lines in keys 1 and 2 of the loops and of the vector pass
  EXPECT_EQ(count(gh, "__builtin_prefetch("), 12u) << gh;
  // Rows of 512 bytes: still 8 KiB on at the row's start.
  const std::string gh256 = kernel_text(m.code, "gated_halves_256_bf16");
  EXPECT_THAT(gh256, HasSubstr("(strided)"));
  EXPECT_THAT(gh256, Not(HasSubstr("pf_more")));
  const std::string ss = kernel_text(m.code, "scale_shift");
  EXPECT_THAT(ss, HasSubstr("const bool pf_more = i0 + af_max(1, (4096 + af_max(1, n1 * 4) - 1) / "
                            "af_max(1, n1 * 4)) < n0;"));
  EXPECT_EQ(count(ss, "__builtin_prefetch("), 8u) << ss;  // x only, keys 1 and 2
  // One flat axis: 4 KiB (1024 f32) on, inside the block's segment.
  const std::string fc = kernel_text(m.code, "flat_chain");
  EXPECT_THAT(fc, HasSubstr("if (nt_k + 1024 + AF_NT_CHUNK <= nt_hi) {  // x_load"));
  EXPECT_THAT(fc, HasSubstr("__builtin_prefetch(&p0[b1 + (nt_k + 1072)]);"));
  EXPECT_EQ(count(fc, "__builtin_prefetch("), 8u) << fc;
  EXPECT_THAT(fc, Not(HasSubstr("pf_more")));
  // Embedding rows: the index two rows on is loaded, wrapped and clamped
  // to the table, and its row prefetched (word, pos, token_type tables).
  const std::string be = kernel_text(m.code, "bert_embeddings");
  // 12 per row loop copy, key and variant (the sum of the three rows is a
  // cost buffer: buffered and recomputing variants of the last pass), and
  // 12 per copy and variant in that pass's vector form (vector_pass.cpp:
  // every key alike).
  EXPECT_EQ(count(be, "__builtin_prefetch("), 96u + 48u) << be;
  EXPECT_THAT(be, HasSubstr("if (pf_more) { const int64_t r_ = (int64_t)p0[b1 + 2 * ("));
  EXPECT_THAT(be, HasSubstr("r_ < 0 ? r_ + (int64_t)(s_V) : r_; pf14 = ((uint64_t)w_ < "
                            "(uint64_t)(int64_t)(s_V) ? w_ : 0) * (INT64_C(768));"));
  EXPECT_THAT(be, HasSubstr("__builtin_prefetch(&p3[b14 + (nt_k + 0) + pf14]);"));
  EXPECT_THAT(be, HasSubstr("__builtin_prefetch(&p3[b14 + (i2 + 0) + pf14]);"));
}

}  // namespace streaming_test_local
}  // namespace autofuse::codegen_test
