// Row spans (tiling::row_span): the pieces of one Output that a whole row
// of the vector loop writes contiguously (a Concat along the last axis:
// dlrm's 26 embeddings of 16) are buffered and stored as one span. bf16
// pieces of 32 bytes then stream as whole cache lines, and round by 32
// lanes with AVX512-BF16.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asc_case_util.h"
#include "autofuse/graph/builder.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace row_span_test_local {

// z = concat(|e_0|, ..., |e_k-1|) along axis 1: [N, 16k], pieces of 16 at
// offsets 0, 16, ...; with `sum` also s = sum(z) over the row ([N, 1], the
// Reduction template: the pieces are summed in the loop that stores them).
AscCase pieces(DType t, int k, bool sum) {
  const std::string name = fmt::format("pieces_{}_{}{}", dtype_name(t), k, sum ? "_sum" : "");
  GraphBuilder b(name);
  std::vector<Tensor> parts;
  for (int i = 0; i < k; ++i)
    parts.push_back(
        b.unary(OpKind::Abs, b.input(fmt::format("e{}", i), t, {S("N"), sym::Expr(16)})));
  Tensor z = b.concat(parts, 1, "z");
  std::vector<Tensor> outputs = {z};
  if (sum) outputs.push_back(b.reduce_sum(z, {1}, true, "s"));

  std::string asc =
      fmt::format("kernel {} axes(z0: N, z1: 16{}) @IO {{\n", name, sum ? " reduced" : "");
  for (int i = 0; i < k; ++i) {
    asc += fmt::format("  %{} e{} = data(arg={}) : DT repeats[N, 16]\n", 2 * i, i, i);
    asc += fmt::format("  %{} e{}_load = load(%{}) : DT repeats[N, 16] strides[16, 1] offset 0\n",
                       2 * i + 1, i, 2 * i);
  }
  for (int i = 0; i < k; ++i)
    asc += fmt::format("  %{} a{} = abs(%{}) : DT repeats[N, 16]\n", 2 * k + i, i, 2 * i + 1);
  int next = 3 * k;
  if (sum) {
    int acc = 2 * k;
    for (int i = 1; i < k; ++i, ++next) {
      asc +=
          fmt::format("  %{} acc{} = add(%{}, %{}) : DT repeats[N, 16]\n", next, i, acc, 2 * k + i);
      acc = next;
    }
    asc += fmt::format("  %{} s = reduce_sum(%{}) : DT repeats[N, 1]\n", next++, acc);
  }
  const int first_store = next;
  std::string pieces_list;
  for (int i = 0; i < k; ++i, ++next) {
    asc += fmt::format("  %{} z_{} = store(%{}) : DT repeats[N, 16] strides[{}, 1] offset {}\n",
                       next, i, 2 * k + i, 16 * k, 16 * i);
    pieces_list += fmt::format("%{}, ", next);
  }
  asc += fmt::format("  %{} z = output({}arg=0) : DT repeats[N, 16]\n", next++, pieces_list);
  if (sum) {
    asc += fmt::format("  %{} s_store = store(%{}) : DT repeats[N, 1] strides[1, 0] offset 0\n",
                       next, first_store - 1);
    asc += fmt::format("  %{} s_out = output(%{}, arg=1) : DT repeats[N, 1]\n", next + 1, next);
  }
  asc += "}\n";
  AscCase c{fmt::format("{} pieces of 16 {}{}", k, dtype_name(t), sum ? " summed" : ""),
            std::move(b).build(outputs),
            replace_all(asc, "DT", std::string(dtype_name(t))),
            {{{"N", 1}}, {{"N", 3}}, {{"N", 8}}, {{"N", 13}}, {{"N", 70}}}};
  c.rtol = c.atol = tolerance(t);
  return c;
}

TEST(RowSpan, PiecesOfOneOutputFormOneSpan) {
  const AscCase c = pieces(DType::bf16, 26, true);
  const schedule::ScheduledKernel k = schedule::schedule_kernel(parse_case(c));
  const int first = 26 * 3 + 25 + 1;  // after the loads, abs, adds and the reduce
  for (int i = 0; i < 26; ++i) {
    const tiling::RowSpan span = tiling::row_span(k, k.graph.node(first + i));
    EXPECT_EQ(span.first, first) << i;
    EXPECT_EQ(span.offset, 16 * i) << i;
    EXPECT_EQ(span.length, 416) << i;
    // 32 bytes each, 832 together: whole cache lines, so they stream.
    EXPECT_TRUE(tiling::streams(k, k.graph.node(first + i))) << i;
  }
  // The row's sum is no piece; three bf16 pieces (96 bytes) do not stream.
  EXPECT_EQ(tiling::row_span(k, k.graph.node(first + 27)).first, -1);
  const AscCase three = pieces(DType::bf16, 3, true);
  const schedule::ScheduledKernel k3 = schedule::schedule_kernel(parse_case(three));
  EXPECT_EQ(tiling::row_span(k3, k3.graph.node(3 * 3 + 2 + 1 + 1)).length, 48);
  EXPECT_FALSE(tiling::streams(k3, k3.graph.node(3 * 3 + 2 + 1 + 1)));
}

TEST(RowSpan, SpansMatchTheReference) {
  std::vector<AscCase> cases = {pieces(DType::bf16, 26, true), pieces(DType::bf16, 3, true),
                                pieces(DType::bf16, 2, false), pieces(DType::f16, 4, true),
                                pieces(DType::f32, 5, true)};
  const std::string code = check_asc_cases(cases);

  // dlrm's row: one f32 buffer of 416 for the 26 bf16 pieces, streamed by
  // af_bf16_nt_store under key 1 and rounded by af_bf16_store otherwise.
  // (Counts, not HasSubstr: the kernels are too long to print.)
  const std::string dlrm = kernel_text(code, "pieces_bf16_26_sum");
  EXPECT_EQ(count(dlrm, "af_bf16_chunk_t t104[416]"), 2 * count(dlrm, "// whole lines\n"));
  EXPECT_EQ(count(dlrm, "tiling_key == 1 && hi - lo == 16) {  // whole lines\n"), 3u);
  EXPECT_GE(count(dlrm, "t104[400 + i1 - nt_k] = AF_BF16_CHUNK_VALUE("), 6u);
  EXPECT_EQ(count(dlrm, "af_bf16_nt_store(&q0[b104 + (nt_k)], t104, "), 3u);
  EXPECT_EQ(count(dlrm, "af_bf16_store(&q0[b104 + (nt_k)], t104, 416);"), 3u);
  EXPECT_EQ(count(dlrm, "t105["), 0u);
  // Three pieces of 96 bytes: rounded as one span, never streamed.
  const std::string three = kernel_text(code, "pieces_bf16_3_sum");
  EXPECT_GE(count(three, "af_bf16_store(&q0["), 1u);
  EXPECT_EQ(count(three, "af_bf16_nt_store"), 0u);
  // f16 pieces of 32 bytes stream as one span of 128 bytes (read back in
  // 32-byte halves: kernel_prelude_f16.h).
  const std::string f16 = kernel_text(code, "pieces_f16_4_sum");
  EXPECT_EQ(count(f16, "af_f16_nt_store(&q0["), 3u);
  EXPECT_EQ(count(f16, "af_nt_store(&q0["), 0u);

  // Aligned outputs (check_asc_cases runs key 1 on unaligned ones): the
  // streaming stores themselves, bit for bit equal to key 0's outputs.
  const CompiledCases compiled = compile_cases(cases);
  for (size_t i = 0; i < cases.size(); ++i) {
    for (int64_t n : {1, 8, 70}) {
      const sym::Binding binding = {{"N", n}};
      const std::vector<HostTensor> in = random_inputs(cases[i].graph, binding, 5);
      const auto run = [&](int64_t key) {
        return run_kernel(*compiled.so, compiled.module.kernels[i], compiled.kernels[i].graph,
                          cases[i].graph, in, binding, one_core(), RunOptions{key, 0})
            .outputs;
      };
      const std::vector<HostTensor> plain = run(tiling::kOrdinaryStoresKey);
      const std::vector<HostTensor> streamed = run(tiling::kStreamingStoresKey);
      for (size_t o = 0; o < plain.size(); ++o)
        EXPECT_TRUE(tensors_close(streamed[o], plain[o], 0, 0))
            << cases[i].label << " N=" << n << " output " << o;
    }
  }
}

}  // namespace row_span_test_local
}  // namespace autofuse::codegen_test
