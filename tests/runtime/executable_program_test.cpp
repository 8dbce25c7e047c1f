// The Executable on hand-made programs (no fusion, no codegen): library and
// view regions, constants, output aliasing, a hand-written kernel obeying
// the kernel ABI (tiling cached per shape, blocks on the pool, skipped when
// there is no work), and input / output checking.
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "runtime/program.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace executable_program_test_local {

namespace fs = std::filesystem;
using sym::Expr;
using ::testing::HasSubstr;

/// One region per node: reshape -> View, constant/iota -> Constant, the
/// rest -> Library (or Kernel for the nodes listed, bound to `kernels`).
Program program_of(std::shared_ptr<const Graph> graph, std::vector<LoadedKernel> kernels = {}) {
  Program p;
  p.fused.graph = graph;
  for (const Node& node : graph->nodes()) {
    fuse::Region r;
    r.id = static_cast<int>(p.fused.regions.size());
    r.nodes = {node.id};
    r.inputs = node.inputs;
    r.outputs = node.outputs;
    r.name = graph->value(node.outputs[0]).name;
    auto k = std::find_if(kernels.begin(), kernels.end(),
                          [&](const LoadedKernel& lk) { return lk.outputs[0] == node.outputs[0]; });
    if (k != kernels.end()) {
      r.kind = fuse::RegionKind::Kernel;
      k->region = r.id;
    } else if (node.op == OpKind::Reshape) {
      r.kind = fuse::RegionKind::View;
    } else if (node.op == OpKind::Constant || node.op == OpKind::Iota) {
      r.kind = fuse::RegionKind::Constant;
    } else {
      r.kind = fuse::RegionKind::Library;
    }
    p.fused.regions.push_back(std::move(r));
  }
  p.kernels = std::move(kernels);
  p.report.kernels = static_cast<int>(p.kernels.size());
  return p;
}

void expect_same(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].type_string(), want[i].type_string()) << "output " << i;
    if (got[i].nbytes() == 0) continue;  // memcmp must not see null pointers
    ASSERT_EQ(std::memcmp(got[i].data(), want[i].data(), got[i].nbytes()), 0) << "output " << i;
  }
}

TEST(ExecutableProgram, LibraryViewAndConstantRegions) {
  GraphBuilder b("lib");
  Expr N = Expr::symbol("N"), D = Expr::symbol("D");
  Tensor x = b.input("x", DType::f32, {N, D});
  Tensor w = b.input("w", DType::f32, {D, Expr(5)});
  Tensor t = b.transpose(x, {1, 0}, "t");  // [D, N]
  Tensor r = b.reshape(t, {D * N}, "r");   // view of t
  Tensor c = b.constant(ConstantAttrs{DType::f32, {3}, {1, 2, 3}}, "c");
  Tensor cat = b.concat({r, c}, 0, "cat");  // [D*N + 3]
  Tensor mm = b.matmul(x, w, "mm");         // [N, 5]
  Tensor s = b.slice(mm, SliceAttrs{{1}, {-1}, {kSliceEnd}, {-2}}, "s");
  auto g = std::make_shared<Graph>(std::move(b).build({cat, s, r}));
  auto exe = make_executable(program_of(g), 2);
  for (int64_t n : {1, 3, 17, 100}) {
    for (int64_t d : {1, 7, 64}) {
      std::vector<HostTensor> in =
          random_inputs(*g, {{"N", n}, {"D", d}}, static_cast<uint64_t>(n + d));
      std::vector<HostTensor> want = run_reference(*g, in);
      std::vector<HostTensor> got = exe->run(in);
      ASSERT_EQ(got.size(), 3u);
      // matmul accumulates in f32 (reference: f64), so compare it loosely.
      expect_same({got[0], got[2]}, {want[0], want[2]});
      ASSERT_EQ(got[1].shape(), want[1].shape());
      for (int64_t i = 0; i < want[1].numel(); ++i)
        EXPECT_NEAR(got[1].get_f64(i), want[1].get_f64(i), 1e-5 * static_cast<double>(d));
    }
  }
}

TEST(ExecutableProgram, OutputsThatAreInputsOrAliases) {
  GraphBuilder b("alias");
  Tensor x = b.input("x", DType::i32, {Expr::symbol("N")});
  Tensor r = b.reshape(x, {Expr(1), Expr::symbol("N")}, "r");  // aliases an input
  Tensor t = b.transpose(r, {1, 0}, "t");
  Tensor t2 = b.reshape(t, {Expr::symbol("N")}, "t2");  // aliases t
  Tensor c = b.constant(ConstantAttrs{DType::i32, {2}, {7, 8}}, "c");
  auto g = std::make_shared<Graph>(std::move(b).build({x, r, t, t2, c}));
  auto exe = make_executable(program_of(g), 2);
  for (int64_t n : {1, 5, 1000}) {
    std::vector<HostTensor> in = random_inputs(*g, {{"N", n}}, 3);
    expect_same(exe->run(in), run_reference(*g, in));
  }
}

TEST(ExecutableProgram, GatherIndexErrorNamesTheNode) {
  GraphBuilder b("g");
  Tensor data = b.input("data", DType::f32, {Expr::symbol("N"), Expr(4)});
  Tensor idx = b.input("idx", DType::i64, {Expr(2)});
  auto g = std::make_shared<Graph>(std::move(b).build({b.gather(data, idx, 0, "rows")}));
  auto exe = make_executable(program_of(g), 2);
  std::vector<HostTensor> in = random_inputs(*g, {{"N", 3}}, 1);
  in[1].set_i64(1, 3);
  try {
    exe->run(in);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().node, "rows");
    EXPECT_THAT(e.message(), HasSubstr("index 3"));
  }
  in[1].set_i64(1, -3);
  expect_same(exe->run(in), run_reference(*g, in));  // still usable
}

/// A hand-written module for `z = x + y` over [N, D] f32, obeying the
/// kernel ABI: blocks of at least `min_block_bytes` bytes moved, at most
/// `cores` blocks; counts its tiling calls.
std::string add_module_source() {
  return std::string("#include \"") + AUTOFUSE_SOURCE_DIR +
         "/include/autofuse/codegen/kernel_abi.h\"\n" + R"(
typedef struct {
  af_tiling_header header;
  int64_t n;
  int64_t per_block;
} AddTiling;
extern "C" {
int64_t add_tiling_calls = 0;
}
extern "C" int64_t add_tiling_data_size(void) { return sizeof(AddTiling); }
extern "C" void add_tiling(const int64_t* symbols, const af_machine* m, void* data) {
  AddTiling* t = (AddTiling*)data;
  ++add_tiling_calls;
  t->n = symbols[0] * symbols[1];
  int64_t blocks = t->n * 12 / m->min_block_bytes;
  if (blocks > m->cores) blocks = m->cores;
  if (blocks < 1) blocks = 1;
  t->per_block = (t->n + blocks - 1) / blocks;
  t->header.block_dim = (t->n + t->per_block - 1) / t->per_block;
  t->header.tiling_key = 0;
}
extern "C" void add_kernel(const void* data, void* const* args, int64_t block) {
  const AddTiling* t = (const AddTiling*)data;
  const float* x = (const float*)args[0];
  const float* y = (const float*)args[1];
  float* z = (float*)args[2];
  int64_t lo = block * t->per_block, hi = lo + t->per_block;
  if (hi > t->n) hi = t->n;
  for (int64_t i = lo; i < hi; ++i) z[i] = x[i] + y[i];
}
)";
}

class ExecutableKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "af_exe_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    cache_dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(cache_dir_, ec);
  }

  /// z = x + y (the kernel), then out = transpose(z) and z itself.
  std::unique_ptr<Executable> build(std::shared_ptr<Graph>& g, int64_t** tiling_calls) {
    GraphBuilder b("k");
    Expr N = Expr::symbol("N"), D = Expr::symbol("D");
    Tensor x = b.input("x", DType::f32, {N, D});
    Tensor y = b.input("y", DType::f32, {N, D});
    Tensor z = b.add(x, y, "z");
    Tensor zt = b.transpose(z, {1, 0}, "zt");
    Tensor e = b.input("e", DType::f32, {Expr(0), D});  // empty
    Tensor ee = b.add(e, e, "ee");                      // a kernel without work
    g = std::make_shared<Graph>(std::move(b).build({zt, z, ee}));

    jit::CompilerOptions opts;
    opts.cache_dir = cache_dir_;
    opts.flags = {"-O2"};
    jit::CompileStats stats;
    auto module = jit::compile_and_load(add_module_source(), opts, stats);
    std::vector<LoadedKernel> kernels(2);
    kernels[0].name = "add";
    kernels[0].inputs = {x.id, y.id};
    kernels[0].outputs = {z.id};
    kernels[0].symbols = {"N", "D"};
    kernels[1] = kernels[0];
    kernels[1].inputs = {e.id, e.id};
    kernels[1].outputs = {ee.id};
    for (LoadedKernel& k : kernels)
      resolve_kernel_symbols(*module, k);
    *tiling_calls = static_cast<int64_t*>(module->symbol("add_tiling_calls"));
    Program p = program_of(g, std::move(kernels));
    p.module = module;
    return make_executable(std::move(p), 3);
  }

  std::string cache_dir_;
};

TEST_F(ExecutableKernel, RunsKernelsAndCachesTilingPerShape) {
  std::shared_ptr<Graph> g;
  int64_t* tiling_calls = nullptr;
  auto exe = build(g, &tiling_calls);
  EXPECT_EQ(exe->report().kernels, 2);
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1}, {3, 7}, {17, 768}, {1000, 1023}};
  for (int rep = 0; rep < 3; ++rep) {
    for (auto [n, d] : shapes) {
      std::vector<HostTensor> in = random_inputs(*g, {{"N", n}, {"D", d}}, 5);
      expect_same(exe->run(in), run_reference(*g, in));
    }
  }
  // Once per distinct shape; the empty kernel never asks for tiling.
  EXPECT_EQ(*tiling_calls, static_cast<int64_t>(shapes.size()));
}

TEST_F(ExecutableKernel, RunIntoChecksOutputs) {
  std::shared_ptr<Graph> g;
  int64_t* tiling_calls = nullptr;
  auto exe = build(g, &tiling_calls);
  std::vector<HostTensor> in = random_inputs(*g, {{"N", 4}, {"D", 6}}, 1);
  std::vector<HostTensor> want = run_reference(*g, in);
  std::vector<HostTensor> out = {HostTensor(DType::f32, {6, 4}), HostTensor(DType::f32, {4, 6}),
                                 HostTensor(DType::f32, {0, 6})};
  exe->run_into(in, out);
  expect_same(out, want);
  // Running again into the same tensors gives the same result.
  exe->run_into(in, out);
  expect_same(out, want);

  std::vector<HostTensor> bad_shape = {HostTensor(DType::f32, {4, 6}),
                                       HostTensor(DType::f32, {4, 6}),
                                       HostTensor(DType::f32, {0, 6})};
  try {
    exe->run_into(in, bad_shape);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("output 0 ('zt') must be f32[6, 4]"));
  }
  std::vector<HostTensor> bad_dtype = {HostTensor(DType::f16, {6, 4}),
                                       HostTensor(DType::f32, {4, 6}),
                                       HostTensor(DType::f32, {0, 6})};
  EXPECT_THROW(exe->run_into(in, bad_dtype), UserError);
  std::vector<HostTensor> too_few = {HostTensor(DType::f32, {6, 4})};
  EXPECT_THROW(exe->run_into(in, too_few), UserError);
}

TEST_F(ExecutableKernel, BadInputsAreUserErrors) {
  std::shared_ptr<Graph> g;
  int64_t* tiling_calls = nullptr;
  auto exe = build(g, &tiling_calls);
  std::vector<HostTensor> good = random_inputs(*g, {{"N", 4}, {"D", 6}}, 1);
  exe->run(good);
  // Missing input.
  EXPECT_THROW(exe->run(std::span<const HostTensor>(good.data(), 2)), UserError);
  const HostTensor e(DType::f32, {0, 6});
  // Shapes that disagree on N.
  std::vector<HostTensor> mismatch = {HostTensor(DType::f32, {4, 6}),
                                      HostTensor(DType::f32, {5, 6}), e};
  EXPECT_THROW(exe->run(mismatch), UserError);
  // A static dim that differs.
  std::vector<HostTensor> fixed = {HostTensor(DType::f32, {4, 6}), HostTensor(DType::f32, {4, 6}),
                                   HostTensor(DType::f32, {1, 6})};
  EXPECT_THROW(exe->run(fixed), UserError);
  // Wrong rank and wrong dtype.
  std::vector<HostTensor> rank = {HostTensor(DType::f32, {4, 6}), HostTensor(DType::f32, {24}), e};
  EXPECT_THROW(exe->run(rank), UserError);
  std::vector<HostTensor> dtype = {HostTensor(DType::f32, {4, 6}), HostTensor(DType::f64, {4, 6}),
                                   e};
  EXPECT_THROW(exe->run(dtype), UserError);
  // Still fine afterwards.
  expect_same(exe->run(good), run_reference(*g, good));
}

TEST_F(ExecutableKernel, ManyShapesEvictOldEntries) {
  std::shared_ptr<Graph> g;
  int64_t* tiling_calls = nullptr;
  auto exe = build(g, &tiling_calls);
  for (int64_t n = 1; n <= 40; ++n) {
    std::vector<HostTensor> in = random_inputs(*g, {{"N", n}, {"D", 3}}, static_cast<uint64_t>(n));
    expect_same(exe->run(in), run_reference(*g, in));
  }
  EXPECT_EQ(*tiling_calls, 40);
  // The most recent shapes are still cached.
  std::vector<HostTensor> in = random_inputs(*g, {{"N", 40}, {"D", 3}}, 9);
  exe->run(in);
  EXPECT_EQ(*tiling_calls, 40);
}

}  // namespace executable_program_test_local
}  // namespace autofuse::runtime
