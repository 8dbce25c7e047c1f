// Elementwise loops over bf16 and f16 data as 32-bit words of two elements
// (word_pairs.cpp, AF_WORD_PAIRS): the module compiled with the form and
// without it (AF_WORD_PAIRS 0 before the prelude) gives the same bytes
// under every tiling key, on rows of every parity and unaligned outputs,
// and both match the reference; which loops get the form.
#include <cmath>
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
namespace word_pairs_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kOff = "#define AF_WORD_PAIRS 0\n";

// x * sigmoid(x) * u: the chunk loops' sigmoids read their exps from a
// buffer, element by element (inner_loop.cpp).
const char* kSilu = R"(graph silu(x: bf16[N, D], u: bf16[N, D]) {
  s = sigmoid(x)
  g = mul(x, s)
  y = mul(g, u)
  return y
})";

// The column index as a value: each half of a word its own element's.
const char* kIndex = R"(graph position(x: bf16[N, D]) {
  i = iota(dtype=bf16, shape=[N, D], axis=1)
  y = add(x, i)
  return y
})";

// One rounding: the reference's bits, ties to even included.
const char* kProduct = R"(graph product(x: bf16[N, D], w: bf16[D]) {
  y = mul(x, w)
  return y
})";

// f16 words, and a loop that loads f16 and stores bf16 and f16.
const char* kProductF16 = R"(graph product_f16(x: f16[N, D], w: f16[D]) {
  y = mul(x, w)
  return y
})";
const char* kMixed = R"(graph mixed(x: f16[N, D], w: bf16[D]) {
  c = cast(x, to=bf16)
  y = mul(c, w)
  z = cast(y, to=f16)
  return y, z
})";

// NaN, infinities, bf16 ties (1 + 2^-8; (1 + 2^-7) * 1.5) and values
// whose results are subnormal, at positions of either parity.
std::vector<HostTensor> special_inputs(const Graph& g, const sym::Binding& binding) {
  return inputs_with_specials(
      g, binding,
      {std::nan(""), INFINITY, -INFINITY, 1.0 + 1.0 / 256, 1e-39, 1.0 + 1.0 / 128, -3e-40});
}

::testing::AssertionResult same_bytes(const HostTensor& a, const HostTensor& b) {
  if (a.nbytes() != b.nbytes() || (a.nbytes() > 0 && std::memcmp(a.data(), b.data(), a.nbytes())))
    return ::testing::AssertionFailure() << tensors_close(a, b, 0, 0).message();
  return ::testing::AssertionSuccess();
}

TEST(WordPairs, BothFormsGiveTheSameBytesUnderEveryKey) {
  std::vector<FormCase> cases;
  const auto parities = nd_bindings({{1, 1},
                                     {3, 2},
                                     {2, 3},
                                     {5, 17},
                                     {4, 63},
                                     {3, 64},
                                     {2, 65},
                                     {3, 127},
                                     {2, 130},
                                     {2, 1000},
                                     {3, 1025}});
  cases.push_back({"chain", parse_graph(select_chain_text("D")), parities, 3e-2});
  cases.push_back({"chain_static", parse_graph(select_chain_text("100")),
                   nd_bindings({{1, 100}, {7, 100}}), 3e-2});
  cases.push_back({"silu", parse_graph(kSilu), parities, 3e-2});
  cases.push_back({"index", parse_graph(kIndex), parities, 1e-2});
  cases.push_back({"product", parse_graph(kProduct), parities, 0});
  cases.push_back({"chain_f16", parse_graph(select_chain_text("D", "f16")), parities, 3e-3});
  cases.push_back({"product_f16", parse_graph(kProductF16), parities, 0});
  cases.push_back({"mixed", parse_graph(kMixed), parities, 1e-2});
  // (f16 loops take F16C's form first where there is F16C: f16c_loops_test.cpp.)
  const std::string no_f16c = "#define AF_F16C 0\n";
  check_forms_agree(cases, "AF_WORD_PAIRS  // two bf16 elements per 32-bit lane", no_f16c,
                    no_f16c + kOff, special_inputs, same_bytes);
}

TEST(WordPairs, WhichLoopsGetTheForm) {
  const std::string chain = kernel_code(select_chain_text("D"));
  EXPECT_THAT(chain, HasSubstr("af_load_word(&p0["));
  EXPECT_THAT(chain, HasSubstr("af_bf16_lo(w"));
  EXPECT_THAT(chain, HasSubstr("af_bf16_hi(w"));
  EXPECT_THAT(chain, HasSubstr("af_store_word(&t"));                    // chunk buffers
  EXPECT_THAT(kernel_code(kProduct), HasSubstr("af_store_word(&q0["));  // a plain loop's output
  // The parts of a row around its chunks keep the loop (a chunk each at
  // most; with the form, g++ allocated the chunk loop's registers worse).
  const size_t part = chain.find("for (int nt_part = 0;");
  ASSERT_NE(part, std::string::npos);
  const size_t chunks = chain.find("if (nt_part == 1) break;", part);
  ASSERT_NE(chunks, std::string::npos);
  EXPECT_THAT(chain.substr(part, chunks - part), Not(HasSubstr("AF_WORD_PAIRS")));
  // f32 data, an f32 operand beside bf16 ones, a gather: the loop alone.
  EXPECT_THAT(kernel_code(R"(graph f(x: f32[N, D]) {
  y = abs(x)
  return y
})"),
              Not(HasSubstr("AF_WORD_PAIRS")));
  EXPECT_THAT(kernel_code(R"(graph m(x: bf16[N, D], w: f32[N, D]) {
  c = cast(x, to=f32)
  y = mul(c, w)
  z = cast(y, to=bf16)
  return z
})"),
              Not(HasSubstr("AF_WORD_PAIRS")));
  EXPECT_THAT(kernel_code(R"(graph g(t: bf16[V, 256], ids: i64[N]) {
  e = gather(t, ids, axis=0)
  y = abs(e)
  return y
})"),
              Not(HasSubstr("AF_WORD_PAIRS")));
}

}  // namespace word_pairs_test_local
}  // namespace autofuse::codegen_test
