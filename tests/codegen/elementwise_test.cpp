// Elementwise kernels against the reference: broadcasting, odd shapes,
// uneven block splits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/graph/text.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace elementwise_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

sym::Expr S(const char* name) {
  return sym::Expr::symbol(name);
}

std::vector<sym::Binding> nd_bindings() {
  return {{{"N", 1}, {"D", 1}},
          {{"N", 3}, {"D", 7}},
          {{"N", 5}, {"D", 64}},
          {{"N", 13}, {"D", 131}},
          {{"N", 2}, {"D", 1000}}};
}

TEST(Elementwise, BroadcastChains) {
  std::vector<GraphCase> cases;
  {
    GraphBuilder b("add_bias");
    Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
    Tensor bias = b.input("bias", DType::f32, {S("D")});
    Tensor y = b.mul(b.add(x, bias), b.scalar(0.5));
    cases.push_back({"add_bias", std::move(b).build({y}), nd_bindings()});
  }
  {
    GraphBuilder b("row_scale");
    Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
    Tensor s = b.input("s", DType::f32, {S("N"), 1});
    Tensor y = b.sub(b.mul(x, s), s);
    Tensor z = b.exp(s);  // a per-row output next to a full one
    cases.push_back({"row_scale", std::move(b).build({y, z}), nd_bindings()});
  }
  {
    GraphBuilder b("rank1");
    Tensor x = b.input("x", DType::f32, {S("N")});
    Tensor y = b.sqrt(b.unary(OpKind::Abs, x));
    cases.push_back({"rank1",
                     std::move(b).build({y}),
                     {{{"N", 1}}, {{"N", 17}}, {{"N", 1001}}, {{"N", 4099}}}});
  }
  {
    GraphBuilder b("mixed_f16");
    Tensor x = b.input("x", DType::f16, {S("N"), S("D")});
    Tensor w = b.input("w", DType::bf16, {S("D")});
    Tensor y = b.add(b.cast(x, DType::f32), b.cast(w, DType::f32));
    Tensor z = b.cast(y, DType::f16);
    cases.push_back({"mixed_f16", std::move(b).build({z, y}), nd_bindings(), 1e-3, 1e-3});
  }
  check_cases(cases);
}

TEST(Elementwise, GeneratedSourceShape) {
  std::vector<GraphCase> cases;
  GraphBuilder b("bias_relu");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor bias = b.input("bias", DType::f32, {S("D")});
  Tensor y = b.unary(OpKind::Relu, b.add(x, bias));
  cases.push_back({"bias_relu", std::move(b).build({y}), nd_bindings()});
  const std::string code = check_cases(cases);
  EXPECT_THAT(code, HasSubstr("struct bias_relu_tiling_data {"));
  EXPECT_THAT(code, HasSubstr("extern \"C\" int64_t bias_relu_tiling_data_size(void)"));
  EXPECT_THAT(code, HasSubstr("extern \"C\" void bias_relu_tiling("));
  EXPECT_THAT(code, HasSubstr("extern \"C\" void bias_relu_kernel("));
  EXPECT_THAT(code, HasSubstr("#pragma omp simd"));
  EXPECT_THAT(code, HasSubstr("af_choose_blocks("));
}

// Long loop bodies (chain30's 33 vector instructions per vector) are
// compiled with g++'s scheduling; short ones (bias + relu) as usual.
TEST(Elementwise, LongBodiesAreScheduled) {
  std::vector<GraphCase> cases;
  cases.push_back(
      {"chain30",
       parse_graph_file(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/patterns/chain30.af"),
       // Chunks of 64 and tails: none, one, several; rows split across blocks.
       {{{"N", 1}, {"D", 1}},
        {{"N", 3}, {"D", 131}},
        {{"N", 2}, {"D", 64}},
        {{"N", 5}, {"D", 1000}},
        {{"N", 2}, {"D", 4097}}},
       1e-5,
       1e-5});
  GraphBuilder b("bias_relu");
  Tensor x = b.input("x", DType::f32, {S("N"), S("D")});
  Tensor bias = b.input("bias", DType::f32, {S("D")});
  cases.push_back(
      {"bias_relu", std::move(b).build({b.unary(OpKind::Relu, b.add(x, bias))}), nd_bindings()});
  const std::string code = check_cases(cases);
  EXPECT_THAT(code, HasSubstr("#define AF_SCHEDULED __attribute__((optimize(\"schedule-insns\""));
  EXPECT_THAT(code, HasSubstr("extern \"C\" AF_SCHEDULED void chain30_kernel("));
  EXPECT_THAT(code, HasSubstr("extern \"C\" void chain30_kernel("));
  EXPECT_THAT(code, Not(HasSubstr("AF_SCHEDULED void bias_relu_kernel(")));
}

}  // namespace elementwise_test_local
}  // namespace autofuse::codegen_test
