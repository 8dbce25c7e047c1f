// Elementwise loops over f16 data as 16 lanes in one register whose
// conversions are F16C's (lane_loops.cpp, kernel_prelude_f16.h): the module
// compiled with the form and without it (AF_F16C 0 before the prelude: the
// word pairs or the plain loop) gives the same bits under every tiling key,
// on rows of every length around 16 and 64 and unaligned outputs, with NaN,
// infinities, ties and subnormal f16 values, and both match the reference
// (Elementwise loops, their chunk sigmoids, and a short row's loop writing
// its reduce buffer); which loops get the form.
#include <cmath>
#include <cstdint>
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
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace f16c_loops_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kOff = "#define AF_F16C 0\n";
const std::string kForm = "f16 by F16C, 16 lanes";

/// (select_chain_text: every op the one-register form takes.)
std::string chain_text(const std::string& d) {
  return select_chain_text(d, "f16");
}

// One rounding (ties to even), and a loop that loads f16 and stores bf16
// and f16.
const char* kProduct = R"(graph product(x: f16[N, D], w: f16[D]) {
  y = mul(x, w)
  return y
})";
const char* kMixed = R"(graph mixed(x: f16[N, D], w: bf16[D]) {
  a = cast(x, to=f32)
  b = cast(w, to=f32)
  p = mul(a, b)
  y = cast(p, to=bf16)
  z = cast(p, to=f16)
  return y, z
})";
// f32 in, f16 out (a store only) and f16 in, f32 out (a load only).
const char* kNarrow = R"(graph narrow(x: f32[N, D]) {
  h = mul(x, x)
  y = cast(h, to=f16)
  return y
})";
const char* kWiden = R"(graph widen(x: f16[N, D]) {
  h = cast(x, to=f32)
  y = add(h, h)
  return y
})";

// SwiGLU's product with a sigmoid of a sigmoid's product: chunk sigmoids
// (inner_loop.cpp), the second one's operand from the first one's buffer.
const char* kSilu = R"(graph silu(x: f16[N, D], u: f16[N, D]) {
  s = sigmoid(x)
  g = mul(x, s)
  t = sigmoid(g)
  y = mul(t, u)
  return y
})";

// SkipLayerNorm in f16 ops (a frontend's fp16 model): the row pass writes
// h's row buffer and stores h; the column layout's normalizing pass reads
// its per-column arrays (mean, inv, g) 16 columns at a time; RMSNorm's
// streaming pass joins two f16 halves for one 64-byte store.
// (Statistics in f32, as kLayerNorm: in f16 ops the reference's variance
// overflows where the kernel's f32 one does not.)
const std::string kSkipNorm =
    "graph skipnorm(x: f16[N, D], s: f16[N, D]) {\n  h = add(x, s)\n  h32 = cast(h, to=f32)\n" +
    normalized_text("f32", "h32", 1) + "  y = cast(xn, to=f16)\n  return y, h\n}\n";
const std::string kColumnNorm =
    "graph colnorm(x: f16[N, D], g: f16[D]) {\n  x32 = cast(x, to=f32)\n" +
    normalized_text("f32", "x32", 0) +
    "  g32 = cast(g, to=f32)\n  z = mul(xn, g32)\n  y = cast(z, to=f16)\n  return y, mean, "
    "var\n}\n";
const char* kRmsNorm = R"(graph rms(x: f16[N, D]) {
  x32 = cast(x, to=f32)
  sq = mul(x32, x32)
  ms = reduce_mean(sq, axes=[1], keepdims=true)
  eps = constant(dtype=f32, value=1e-5)
  me = add(ms, eps)
  inv = rsqrt(me)
  z = mul(x32, inv)
  y = cast(z, to=f16)
  return y
})";
// A loss: the sum over chunks of 1024 elements (a cascade) as 16-lane sums.
const char* kMse = R"(graph mse(p: f16[N, D], t: f16[N, D]) {
  d = sub(p, t)
  sq = mul(d, d)
  loss = reduce_mean(sq, axes=[0, 1], keepdims=false)
  return loss
})";

// LayerNorm over a symbolic row: its mean pass over the row converts x
// into the sum's buffer (a short row's loop with writes), the same sum.
const std::string kLayerNorm = "graph ln(x: f16[N, D]) {\n  x32 = cast(x, to=f32)\n" +
                               normalized_text("f32", "x32", 1) +
                               "  y = cast(xn, to=f16)\n  return y\n}\n";

// NaN, infinities, an f16 tie (1 + 2^-11), a large value (30000), f16
// subnormals and values whose results are subnormal or zero.
std::vector<HostTensor> special_inputs(const Graph& g, const sym::Binding& binding) {
  return inputs_with_specials(
      g, binding,
      {std::nan(""), INFINITY, -INFINITY, 1.0 + 1.0 / 2048, 30000.0, 3e-6, -1e-7, 6e-5});
}

/// The first differing element, if any; two NaNs count as equal: an op
/// whose operands are both NaN returns one of them, and which one is the
/// compiler's operand order (the chain's r + t), in either form.
::testing::AssertionResult same_bits(const HostTensor& a, const HostTensor& b, DType dtype) {
  if (a.nbytes() != b.nbytes()) return ::testing::AssertionFailure() << "sizes differ";
  const size_t size = dtype_size(dtype);
  const auto bits = [&](const HostTensor& t, size_t i) {
    uint32_t u = 0;
    std::memcpy(&u, static_cast<const uint8_t*>(t.data()) + i * size, size);
    return u;
  };
  const auto nan = [&](uint32_t u) {
    switch (dtype) {
      case DType::f16:
        return (u & 0x7c00u) == 0x7c00u && (u & 0x3ffu) != 0;
      case DType::bf16:
        return (u & 0x7f80u) == 0x7f80u && (u & 0x7fu) != 0;
      default:
        return (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu) != 0;
    }
  };
  for (size_t i = 0; i < a.nbytes() / size; ++i) {
    const uint32_t u = bits(a, i), v = bits(b, i);
    if (u != v && !(nan(u) && nan(v)))
      return ::testing::AssertionFailure() << fmt::format("element {}: {:#x} vs {:#x}", i, u, v);
  }
  return ::testing::AssertionSuccess();
}

TEST(F16cLoops, BothFormsGiveTheSameBitsUnderEveryKey) {
  const auto lengths = nd_bindings({{1, 1},
                                    {3, 2},
                                    {5, 15},
                                    {5, 16},
                                    {4, 17},
                                    {4, 63},
                                    {3, 64},
                                    {2, 65},
                                    {3, 127},
                                    {2, 130},
                                    {2, 1000},
                                    {3, 1025}});
  std::vector<FormCase> cases;
  cases.push_back({"chain", parse_graph(chain_text("D")), lengths, 3e-3});
  cases.push_back(
      {"chain_static", parse_graph(chain_text("100")), nd_bindings({{1, 100}, {7, 100}}), 3e-3});
  cases.push_back(
      {"chain_rows_of_16", parse_graph(chain_text("16")), nd_bindings({{1, 16}, {9, 16}}), 3e-3});
  cases.push_back({"product", parse_graph(kProduct), lengths, 0});
  cases.push_back({"mixed", parse_graph(kMixed), lengths, 1e-2});
  cases.push_back({"narrow", parse_graph(kNarrow), lengths, 1e-3});
  cases.push_back({"widen", parse_graph(kWiden), lengths, 0});
  cases.push_back({"layernorm", parse_graph(kLayerNorm), lengths, 1e-2});
  cases.push_back({"silu", parse_graph(kSilu), lengths, 1e-2});
  cases.push_back({"skipnorm", parse_graph(kSkipNorm), lengths, 2e-2});
  cases.push_back({"colnorm", parse_graph(kColumnNorm), lengths, 2e-2});
  cases.push_back({"rmsnorm", parse_graph(kRmsNorm), lengths, 1e-2});
  // Rows of one 64-byte line (the whole-rows loop streams each row:
  // af_f16_nt_store_aligned).
  cases.push_back({"rows_of_32", parse_graph(R"(graph rows(x: f16[N, 32], w: f16[32]) {
  y = mul(x, w)
  return y
})"),
                   nd_bindings({{1, 32}, {3, 32}, {70, 32}}), 0});
  // (The outputs' dtypes: f16, bf16 or f32.)
  const auto agree = [](const HostTensor& got, const HostTensor& base) {
    return same_bits(got, base, got.dtype());
  };
  check_forms_agree(cases, kForm, "", kOff, special_inputs, agree);
}

TEST(F16cLoops, ChunkSumsMatchTheReference) {
  // The chunk's sums in the form's order, not the OpenMP reduction's: the
  // same within the sum's error bound (reduction_pass.cpp), not bit for bit.
  std::vector<FormCase> cases;
  cases.push_back(
      {"mse", parse_graph(kMse),
       nd_bindings({{1, 1}, {3, 5}, {1, 1024}, {1, 1025}, {3, 1000}, {5, 1023}, {64, 333}}), 1e-2});
  const auto agree = [](const HostTensor& got, const HostTensor& base) {
    return tensors_close(got, base, 2e-3, 1e-6);
  };
  check_forms_agree(cases, kForm, "", kOff, special_inputs, agree);
}

TEST(F16cLoops, WhichLoopsGetTheForm) {
  // First among the loop's forms (the word pairs after it), its conversions
  // the prelude's, its chunk buffers f16 as the loop's.
  const std::string chain = kernel_code(chain_text("D"));
  EXPECT_THAT(chain, HasSubstr("#if AF_F16C && AF_VECTOR_PASS  // " + kForm));
  EXPECT_THAT(chain, HasSubstr("#elif AF_WORD_PAIRS"));
  EXPECT_THAT(chain, HasSubstr("af_load16_f16(&v"));
  EXPECT_THAT(chain, HasSubstr("af_put16_f16(&t"));
  EXPECT_THAT(chain, HasSubstr("af_put16_f16(&q"));
  EXPECT_THAT(chain, HasSubstr("uint16_t t"));
  // A short row's loop writing its sum's buffer (layernorm's mean).
  const std::string ln = kernel_code(kLayerNorm);
  EXPECT_THAT(ln, HasSubstr(kForm));
  EXPECT_THAT(ln, HasSubstr("af_store16(&rb"));
  // With bf16 stores: not where AVX512-BF16's chunk buffers hold f32.
  EXPECT_THAT(kernel_code(kMixed),
              HasSubstr("#if AF_F16C && AF_VECTOR_PASS && !AF_BF16_CVT  // " + kForm));
  // Chunk sigmoids: -|x| into the chunk's buffer in the same form (not the
  // word pairs' order), sigmoid from it.
  const std::string silu = kernel_code(kSilu);
  EXPECT_THAT(silu, HasSubstr("af_neg_abs(v"));
  EXPECT_THAT(silu, HasSubstr("af_load16(&e"));
  EXPECT_THAT(silu, HasSubstr("= af_sigmoid_from_exp(v"));
  EXPECT_THAT(silu, HasSubstr("#elif AF_WORD_PAIRS  // the even elements, then the odd ones"));
  // Row buffers, column tiles' arrays, chunk sums.
  EXPECT_THAT(kernel_code(kSkipNorm), HasSubstr("af_store16(&ub"));
  EXPECT_THAT(kernel_code(kColumnNorm), HasSubstr(" - t0], n_);"));
  const std::string mse = kernel_code(kMse);
  EXPECT_THAT(mse, HasSubstr("#if AF_F16C && AF_VECTOR_PASS  // " + kForm));
  EXPECT_THAT(mse, HasSubstr("af_add_lanes(&s"));
  // Not for bf16 or f32 data alone, nor ops the form has no vector code
  // for (a sigmoid outside a chunk: rows shorter than one).
  EXPECT_THAT(kernel_code(R"(graph g(x: bf16[N, D]) {
  y = mul(x, x)
  return y
})"),
              Not(HasSubstr(kForm)));
  EXPECT_THAT(kernel_code(R"(graph g(x: f32[N, D]) {
  y = mul(x, x)
  return y
})"),
              Not(HasSubstr(kForm)));
  EXPECT_THAT(kernel_code(R"(graph g(x: f16[N, 16], w: f16[16]) {
  s = sigmoid(x)
  y = mul(s, w)
  return y
})"),
              Not(HasSubstr(kForm)));
}

}  // namespace f16c_loops_test_local
}  // namespace autofuse::codegen_test
