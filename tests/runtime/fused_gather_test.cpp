// A gather fused into a kernel (embedding lookup + add + row statistics),
// end to end from graph text: results equal the reference on several
// shapes; an index out of range is a UserError naming the gather, leaves
// the inputs untouched and the Executable usable; negative indices count
// from the end. The unfused path (library gather) reports the same index.
#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace fused_gather_test_local {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const char* kEmbedding = R"(graph emb(ids: i64[B, S], table: f32[V, 24], pos: f32[S, 24]) {
  w = gather(table, ids, axis=0)
  x = add(w, pos)
  m = reduce_mean(x, axes=[2], keepdims=true)
  y = sub(x, m)
  return y
})";

class FusedGather : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "af_fused_gather.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    cache_ = pattern;
    graph_ = std::make_shared<const Graph>(parse_graph(kEmbedding));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(cache_, ec);
  }
  std::unique_ptr<Executable> build(bool fused) const {
    CompileOptions o;
    o.compiler.cache_dir = cache_;
    o.fusion.enabled = fused;
    return Executable::build(graph_, o);
  }

  std::string cache_;
  std::shared_ptr<const Graph> graph_;
};

void expect_equal(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].type_string(), want[o].type_string());
    for (int64_t i = 0; i < want[o].numel(); ++i)
      ASSERT_NEAR(got[o].get_f64(i), want[o].get_f64(i), 1e-5 * (1 + std::abs(want[o].get_f64(i))))
          << "element " << i;
  }
}

TEST_F(FusedGather, OneKernelMatchesTheReference) {
  auto exe = build(true);
  EXPECT_EQ(exe->fused().num_kernels(), 1) << fuse::print_fused_graph(exe->fused());
  EXPECT_EQ(exe->fused().regions.size(), 1u) << fuse::print_fused_graph(exe->fused());
  uint64_t seed = 3;
  for (auto [b, s, v] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 1}, {2, 7, 13}, {3, 31, 5}, {5, 128, 1000}}) {
    std::vector<HostTensor> in = random_inputs(*graph_, {{"B", b}, {"S", s}, {"V", v}}, seed++);
    // Every index in range, negative ones too (they count from the end).
    for (int64_t i = 0; i < in[0].numel(); ++i)
      in[0].set_i64(i, (i * 7919) % (2 * v) - v);
    expect_equal(exe->run(in), run_reference(*graph_, in));
  }
}

TEST_F(FusedGather, BadIndexIsAUserErrorAndNothingIsLost) {
  auto exe = build(true);
  std::vector<HostTensor> in = random_inputs(*graph_, {{"B", 2}, {"S", 9}, {"V", 7}}, 1);
  for (int64_t i = 0; i < in[0].numel(); ++i)
    in[0].set_i64(i, i % 7);
  const std::vector<HostTensor> good = exe->run(in);
  for (int64_t bad : {int64_t{7}, int64_t{-8}, int64_t{1} << 40}) {
    std::vector<HostTensor> broken = in;
    broken[0].set_i64(11, bad);
    const HostTensor ids_before = broken[0];
    try {
      exe->run(broken);
      ADD_FAILURE() << "index " << bad << " was accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("gather 'w': index {} out of range [-7, 7)", bad));
    }
    for (int64_t i = 0; i < ids_before.numel(); ++i)
      ASSERT_EQ(broken[0].get_i64(i), ids_before.get_i64(i));
    expect_equal(exe->run(in), good);  // still usable
  }
  // The unfused path (the library gather) refuses the same index.
  auto unfused = build(false);
  std::vector<HostTensor> broken = in;
  broken[0].set_i64(11, 7);
  EXPECT_THROW(
      {
        try {
          unfused->run(broken);
        } catch (const UserError& e) {
          EXPECT_THAT(e.what(), HasSubstr("gather index 7"));
          throw;
        }
      },
      UserError);
}

}  // namespace fused_gather_test_local
}  // namespace autofuse::runtime
