// An Elementwise loop over bf16 (or f16) data as a loop over 32-bit words,
// each holding two elements (AF_WORD_PAIRS: AVX2, and AVX-512 without
// AVX512-BF16, whose vcvtne2ps2bf16 rounds by the chunk instead).
//
// g++ 12 vectorizes `af_bf16_to_f32(p[i])` with 32 lanes as a 64-byte load,
// two vpmovzxwd and a vextracti64x4, and af_f32_to_bf16's results are
// packed by vpermt2w: all port 5 on Ice Lake, where the loop's compares
// into masks already go, and where 512-bit arithmetic has only ports 0 and
// 5. Read as words, the two elements of a pair are floats after one shift
// (the low half) or one mask (the high half), and two rounded results make
// a word with a shift, a mask and an or (kernel_prelude_stores.h): no
// shuffle at all. So when every Load and Store of the loop is bf16 or f16
// and contiguous along the loop (an f16 half converted by the prelude's
// af_f16_to_f32 / af_f32_to_f16 in 32-bit lanes), the loop is emitted once
// more, first among its forms but F16C's for f16 data (lane_loops.cpp's
// simd_loop; with F16C an f16 loop's form is that one):
//
//   #if AF_WORD_PAIRS
//   {
//     const int64_t wp_lo = lo, wp_words = (hi - wp_lo) / 2;
//     #pragma omp simd
//     for (int64_t w_ = 0; w_ < wp_words; ++w_) {
//       const int64_t wp_i = wp_lo + 2 * w_;          // the pair's first element
//       const uint32_t w1 = af_load_word(&p0[b1 + wp_i]);
//       float s9[2];                                  // each Store's two values
//       { const int64_t i1 = wp_i + 0; const float v1 = af_bf16_lo(w1); ...; s9[0] = v8; }
//       { const int64_t i1 = wp_i + 1; const float v1 = af_bf16_hi(w1); ...; s9[1] = v8; }
//       af_store_word(&q0[b9 + wp_i], af_bf16_word(s9[0], s9[1]));
//     }
//     if (wp_lo + 2 * wp_words < hi) { const int64_t i1 = hi - 1; <the body> }
//   }
//
// Each half computes the loop's expressions for its element (an Index is
// its own i1), so the results are the loop's bits. A chunk loop's Sigmoids
// read their exps from a chunk buffer (chunk_sigmoid_prologue); in this
// form its loop is word pairs too and the buffer holds the chunk's even
// elements, then its odd ones, so that each half reads whole vectors.
// Words are read and written at any 2-byte address (x86 allows it): the
// pair is aligned to the loop, not to memory. Loads of other dtypes would
// be de-interleaved by shuffles again, and Gathers check their index in
// the loop: such loops keep their form.
//
// Measured on an Ice Lake Xeon (no AVX512-BF16), one thread, each dumped
// module compiled with and without the form and timed interleaved in one
// process (bench/module_ab.cpp), the same bits: chain30 bf16 [16384, 1024]
// streaming 0.82x the time (its chunk loop's instructions per 64 elements
// 216 -> 194, llvm-mca's port 5 cycles 106 -> 88), [1024, 1024] 0.88x;
// rotary [16, 1024] 0.88x, [4, 128] 0.76x; attention_transpose 0.94x and
// 0.81x; swiglu 0.88x both (0.99x while its exps were read from a buffer
// in element order, two permutes per 32 elements). Built for AVX2
// (-march=haswell, the same machine), streaming: chain30 bf16 0.93x and
// swiglu 0.85x the plain loop's time, rotary 0.80x and attention_transpose
// 0.84x the lane pairs' (lane_loops.cpp), the same bits. f16 (a chain
// with abs, max, sigmoid over [4096, 4096], AVX-512): 0.77x streaming,
// 0.72x key 0, the same bits.
#include <fmt/format.h>

#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

bool KernelEmitter::word_pairs_fit(int axis, const std::vector<int>& nodes,
                                   const std::string& pragma) const {
  // A short row's 16-lane loop (simdlen) has too few words for a vector.
  if (kernel_.kind != schedule::Template::Elementwise || axis != vector_axis_ || has_gathers_ ||
      pragma.find("simdlen") != std::string::npos)
    return false;
  bool memory = false;
  for (int id : nodes) {
    const AscNode& n = node(id);
    const auto at = static_cast<size_t>(id);
    switch (n.kind) {
      case AscKind::Load:
      case AscKind::Store:
        if ((n.dtype != DType::bf16 && n.dtype != DType::f16) || buffered_.at(at) ||
            n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1) ||
            (n.kind == AscKind::Store && output_of_store_.at(at) < 0))
          return false;
        memory = true;
        break;
      case AscKind::Gather:
      case AscKind::Reduce:
        return false;
      default:  // values: computed per element in either half
        break;
    }
  }
  return memory;
}

std::string KernelEmitter::word_pair_statements(
    int axis, const std::vector<int>& nodes,
    const std::function<std::string(int, const std::string&)>& half_end,
    const std::string& indent) const {
  std::string out;
  for (int id : nodes) {
    const AscNode& n = node(id);
    if (n.kind == AscKind::Load)  // (a row-invariant one too: its bf16 row, not its f32 copy)
      out += fmt::format("{}const uint32_t w{} = af_load_word(&p{}[{}]);  // {}\n", indent, id,
                         node(n.inputs.at(0)).arg_index, address(n, axis, "wp_i"), n.name);
    if (n.kind == AscKind::Store)
      out += fmt::format("{}float s{}[2];  // {}\n", indent, id, n.name);
  }
  const std::string in1 = indent + "  ";
  for (int half = 0; half < 2; ++half) {
    out += indent + "{\n";
    out += fmt::format("{}const int64_t i{} = wp_i + {};\n", in1, axis, half);
    out += fmt::format("{}(void)i{};\n", in1, axis);
    // A chunk Sigmoid's exp: the chunk buffer holds the even elements,
    // then the odd ones (chunk_sigmoid_prologue).
    if (!chunk_sigmoids_.empty()) chunk_exp_index_ = half == 0 ? "w_" : "AF_NT_CHUNK / 2 + w_";
    for (int id : nodes) {
      const AscNode& n = node(id);
      if (n.kind == AscKind::Load) {
        out += fmt::format("{}const float {} = af_{}_{}(w{});  // {}\n", in1, value(id),
                           dtype_name(n.dtype), half == 0 ? "lo" : "hi", id, n.name);
      } else if (n.kind == AscKind::Store) {
        const AscNode& stored = node(n.inputs.at(0));
        out += fmt::format("{}s{}[{}] = {};\n", in1, id, half,
                           half_store_value(stored.dtype, n.dtype, value(stored.id)));
      } else {
        emit_node(n, in1, out);
      }
    }
    chunk_exp_index_.clear();
    if (half_end) out += half_end(half, in1);
    out += indent + "}\n";
  }
  return out;
}

std::string KernelEmitter::word_pair_loop(int axis, const std::string& lo, const std::string& hi,
                                          const std::vector<int>& nodes, const std::string& pragma,
                                          const std::function<StoreTo(int)>& store_to,
                                          const std::string& indent) const {
  const std::string in1 = indent + "  ";
  const std::string in2 = in1 + "  ";
  std::string out = indent + "{\n";
  out += fmt::format("{}const int64_t wp_lo = {}, wp_words = ({} - wp_lo) / 2;\n", in1, lo, hi);
  out += pragma + "\n";
  out += fmt::format("{}for (int64_t w_ = 0; w_ < wp_words; ++w_) {{\n", in1);
  out += in2 + "const int64_t wp_i = wp_lo + 2 * w_;  // the pair's first element\n";
  out += word_pair_statements(axis, nodes, nullptr, in2);
  for (int id : nodes) {
    const AscNode& n = node(id);
    if (n.kind == AscKind::Store)
      out +=
          fmt::format("{}af_store_word(&{}, af_{}_word(s{}[0], s{}[1]));  // {}\n", in2,
                      store_element(n, store_to(id), "wp_i"), dtype_name(n.dtype), id, id, n.name);
  }
  out += in1 + "}\n";
  out += fmt::format("{}if (wp_lo + 2 * wp_words < {}) {{  // the last element\n", in1, hi);
  out += fmt::format("{}const int64_t i{} = ({}) - 1;\n", in2, axis, hi);
  if (!chunk_sigmoids_.empty())  // (never: a chunk has whole words)
    chunk_exp_index_ =
        fmt::format("(i{0} - nt_k) / 2 + (i{0} - nt_k) % 2 * (AF_NT_CHUNK / 2)", axis);
  for (int id : nodes)
    emit_node(node(id), in2, out, store_to(id));
  chunk_exp_index_.clear();
  out += in1 + "}\n";
  return out + indent + "}\n";
}

}  // namespace autofuse::codegen::cpu
