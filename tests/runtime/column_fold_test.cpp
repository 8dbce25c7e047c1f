// The column-layout Reduction folds several rows of the last reduced axis
// into one vector loop when the tile is narrow. A buffer that varies along
// another reduced axis but not along the folded one cannot be addressed
// that way (lane j needs column j % W of its own row): such kernels must not
// fold (regression: a fuzz-test graph, wrong results for A = 3, 5).
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/runtime/executable.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace column_fold_test_local {

namespace fs = std::filesystem;

// s sums over axes 0 and 1 (the column layout, axis 2 kept); y reads u,
// which varies along axis 0 and 2 but not along axis 1.
const char* kGraph = R"(graph g(x: f32[4, A], u: f32[A, 1, A], w: f32[4, A]) {
  b = broadcast_to(x, shape=[A, 4, A])
  e = exp(b)
  s = reduce_sum(e, axes=[0, 1], keepdims=true)
  t = tanh(s)
  m = mul(b, t)
  q = sqrt(u)
  n = isnan(q)
  y = where(n, w, m)
  return y
})";

TEST(ColumnFold, BufferConstantAlongTheFoldedAxisIsReadPerRow) {
  std::string pattern = (fs::temp_directory_path() / "af_column_fold.XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  auto graph = std::make_shared<const Graph>(parse_graph(kGraph));
  CompileOptions o;
  o.compiler.cache_dir = pattern;
  auto exe = Executable::build(graph, o);
  EXPECT_EQ(exe->fused().num_kernels(), 1);
  uint64_t seed = 1;
  for (int64_t a : {1, 2, 3, 5, 17, 70}) {
    const std::vector<HostTensor> in = random_inputs(*graph, {{"A", a}}, seed++);
    const std::vector<HostTensor> got = exe->run(in), want = run_reference(*graph, in);
    ASSERT_EQ(got.size(), 1u);
    for (int64_t i = 0; i < want[0].numel(); ++i)
      ASSERT_NEAR(got[0].get_f64(i), want[0].get_f64(i), 1e-5 * (1 + std::abs(want[0].get_f64(i))))
          << "A=" << a << " element " << i;
  }
  std::error_code ec;
  fs::remove_all(pattern, ec);
}

}  // namespace column_fold_test_local
}  // namespace autofuse::runtime
