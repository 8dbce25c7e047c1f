// print_fused_graph: golden text.
#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace print_test_local {

TEST(PrintFusedGraph, Golden) {
  auto g = fuse_test::parse(R"(
    graph g(x: f32[N, D], w: f32[D, K], gamma: f32[K]) {
      mean = reduce_mean(x, axes=[1], keepdims=true)
      xc = sub(x, mean)
      h = matmul(xc, w)
      c = constant(dtype=f32, shape=[2], value=[1.0, 2.0])
      hr = reshape(h, shape=[N*K])
      hk = reshape(hr, shape=[N, K])
      eps = constant(dtype=f32, value=1e-5)
      s = add(hk, eps)
      y = mul(s, gamma)
      return y, c
    })");
  FusedGraph fused = partition(g, FusionConfig{});
  EXPECT_EQ(print_fused_graph(fused),
            "xc = asc_backend_0(x)  # 2 ops: reduce_mean, sub; axes [N, D]; reduce [1]\n"
            "h = library_matmul_1(w, xc)  # matmul\n"
            "c = constant_2()  # constant f32[2]\n"
            "y = asc_backend_3(gamma, h)  # 5 ops: reshape, reshape, constant, add, mul; axes "
            "[N, K]\n"
            "# kernels: 2\n");
}

TEST(PrintFusedGraph, UnfusedLayerNorm) {
  FusionConfig config;
  config.enabled = false;
  FusedGraph fused = partition(fuse_test::example("layernorm"), config);
  const std::string text = print_fused_graph(fused);
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "var_eps = asc_backend_4(var)  # 2 ops: constant, add; axes [N, 1]\n"));
  EXPECT_THAT(text, ::testing::EndsWith("# kernels: 9\n"));
}

}  // namespace print_test_local
}  // namespace autofuse::fuse
