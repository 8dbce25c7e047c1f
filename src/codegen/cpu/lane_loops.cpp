// An Elementwise kernel's vector loops as 16-lane code on AVX2 (the lane
// pairs of kernel_prelude_lanes.h), where g++'s vectorization of the
// scalar loop body is poor for bf16 data.
//
// g++ 12 vectorizes `af_bf16_to_f32(p[i])` for AVX2 as a 32-byte load, a
// widening load of its low half, an extract and a widening of the high half
// (spilling the loaded vector when several inputs are live: rotary's loop
// stored and reloaded each one through the stack), and af_f32_to_bf16's
// rounding with two shifts and a redundant mask per 8 lanes. When the loop
// body only does float arithmetic (+, -, *, /, negation) on contiguous f32
// or bf16 loads, row-invariant f32 arrays and scalars, and stores f32 or
// bf16 contiguously, the loop is emitted once more over 16 lanes:
//
//   #if AF_LANE_PAIRS
//   for (int64_t i3 = lo; i3 < hi; i3 += 16) {
//     const int64_t n_ = hi - i3;                    // < 16: the tail, masked
//     af_f32x16 v1; af_load16_bf16(&v1, &p0[b1 + i3], n_);  // one vpmovzxwd per 8
//     const auto v2 = (v1 * v9);
//     af_put16_bf16(&q0[b2 + i3], v2, n_);           // rounded by the vector
//   }
//   #else
//   <the loop>
//   #endif
//
// Stores into chunk or row-span buffers (streaming, inner_loop.cpp) go to
// the same buffers: with AF_LANE_PAIRS (no AVX512-BF16) a bf16 buffer holds
// bf16 already. Each lane computes the loop's expressions, so the results
// are the loop's bits. Only for loops with 16-bit data: f32 loops are
// vectorized well by g++ and keep their form.
//
// Measured (Zen 3, AVX2, one thread, the dumped module in a harness): rotary
// bf16 [16, 1024, 12, 64] 4.95 -> 3.41 ms with the whole-lines loop so
// written by hand; docs/benchmarks.md (session 38) has the A/B.
//
// AVX-512 has the same trouble in one place: a loop over a row of 16
// 16-bit values is `simdlen(16)` (short_loop_variant), for which g++ 12
// picks 32-byte vectors and computes every f32 value in two halves, with
// its bf16 rounding 8 lanes at a time. Such loops (Elementwise rows, and the
// Reduction template's short rows, whose reduce buffers the loop writes:
// lane_writes_; the row layout, one reduced axis, no row buffers) get the
// form in one register (LaneForm::Register, with the
// vector passes' ops: abs, relu, max, min, sqrt, reciprocal too) under
// `AF_VECTOR_PASS && !AF_LANE_PAIRS && !AF_BF16_CVT`; af_put16_bf16 rounds
// 16 lanes with af_f32_to_bf16's integer steps and one vpmovdw. With
// AVX512-BF16 the loop keeps its form (its bf16 chunk buffers hold f32 there).
// dlrm_concat bf16 [32768] on one thread, Ice Lake (session 40): 0.55-0.6x
// the time in the L2, 0.73-0.75x from memory, the same bits.
//
// An Elementwise loop with f16 data, and a Reduction short row's loop that
// writes its reduce buffers (the rows of 16's condition, any length), get
// the one-register form's code (the vector passes' ops) at any length,
// first among their forms, under `AF_F16C && AF_VECTOR_PASS` (AVX2's lane
// pairs too; and !AF_BF16_CVT when it also stores bf16): F16C's
// vcvtph2ps and vcvtps2ph convert 16 lanes each (kernel_prelude_f16.h)
// where the loop's integer conversions take ~10 instructions per vector
// each way (g++ 12 has no vectorized _Float16 conversion without
// AVX512-FP16). Its f16 chunk buffers hold f16, as the loop's do. A chain
// of mul, sub, abs, max, min, relu, mul, add, neg over f16 [4096, 4096], one
// thread, Ice Lake, harness, streaming (session 43): 16.0 -> 3.8 ms (word
// pairs before; bf16's word pairs take 4.6), built for AVX2 26.7 -> 5.9 ms;
// the same bits. LayerNorm f16 over a symbolic row [16384, 1024] (its
// mean's loop): 13.9 -> 10.9 ms, the same bits.
//
// Session 44 took the f16 form to the loops that still converted by
// integer steps (one thread, Ice Lake, harness, f16 versions of the
// pattern suite's large shapes, the same bits unless noted): a chunk
// sigmoid's two loops (its -|x| into the chunk's buffer e<id> in the
// loop's order, the sigmoid from it: af_sigmoid_from_exp on 16 lanes),
// SwiGLU 10.5 -> 4.8 ms; a Reduction row pass that writes or reads row
// buffers (ub<id>, row_buffers.cpp), SkipLayerNorm 7.6 -> 3.7; the column
// layout's storing pass over a tile's columns, its per-column arrays
// loaded 16 columns at a time, batch-norm statistics 14.0 -> 7.0; and the
// chunks of a long row's sum (lane_sums: four 16-lane accumulators, so
// the sum's order, not its error bound, differs from the OpenMP
// reduction's), MSE 8.2 -> 4.7.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

std::vector<bool> KernelEmitter::lane_loop_values(int axis, const std::vector<int>& nodes,
                                                  LaneForm form) const {
  // Reduction: only a short row's loop over its one reduced axis in the
  // row layout (lane_writes_ set): column tiles keep per-column values in
  // arrays, and several reduced axes index the row buffers (row_buffers.cpp)
  // by their linear index, not the vector statements' i<axis>.
  const bool reduction =
      form == LaneForm::Register && kernel_.kind == schedule::Template::Reduction;
  const bool reduction_rows =
      reduction && lane_writes_.has_value() && !column_ && kernel_.inner_axes.size() == 1;
  // Or the column layout's loop over a tile's columns (a storing pass: the
  // caller's loop has no updates), its per-column values 16 columns at a
  // time from their arrays (tile_vector_).
  const bool column_tile = reduction && column_ && axis == kernel_.tile_axis;
  if ((kernel_.kind != schedule::Template::Elementwise && !reduction_rows && !column_tile) ||
      axis != vector_axis_ || has_gathers_)
    return {};
  const auto lane_dtype = [](DType dtype) {
    return dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16;
  };
  const auto contiguous = [&](const AscNode& n) {
    return n.view.strides.at(static_cast<size_t>(axis)) == sym::Expr(1);
  };
  std::vector<bool> vec(graph_.nodes.size(), false), in_loop(graph_.nodes.size(), false);
  for (int id : nodes)
    in_loop[static_cast<size_t>(id)] = true;
  bool narrow = false;  // 16-bit data
  for (int id : register_order(nodes)) {
    const AscNode& n = node(id);
    const auto at = static_cast<size_t>(id);
    if (tile_vector_.at(at)) return {};  // (an array element, assigned)
    const bool row_buffer = ub_pass_ >= 0 && ub_write_pass(id) >= 0;
    if (row_buffer && reads_row_buffer(id, ub_pass_)) {  // a vector from its row buffer
      if (!vector_float_value(n.dtype)) return {};
      vec[at] = true;
      continue;
    }
    switch (n.kind) {
      case AscKind::Load:
        if (buffered_.at(at)) return {};
        if (!row_invariant_.at(at)) {
          if (!lane_dtype(n.dtype) || !contiguous(n)) return {};
          narrow = narrow || dtype_size(n.dtype) == 2;
        }
        vec[at] = true;
        break;
      case AscKind::Scalar:
        if (!vector_float_value(n.dtype)) return {};
        break;
      case AscKind::Broadcast:
      case AscKind::Compute: {
        if (!vector_float_value(n.dtype)) return {};
        // Pairs: arithmetic only: with abs, max, min, relu and sqrt too,
        // chain30 bf16's loop took 1.04-1.09x the time in this form (an AVX2
        // build on an Ice Lake, session 39), though vector passes gain from
        // them. One register: the vector passes' ops.
        // One register: a chunk sigmoid too (its e^-|x| from the chunk's
        // buffer, inner_loop.cpp), of an operand that varies along the loop.
        const bool sigmoid = form == LaneForm::Register && chunk_sigmoid(id);
        if (n.kind == AscKind::Compute && !sigmoid &&
            !(form == LaneForm::Pairs ? float_arithmetic(n.op) : vector_arithmetic(n.op)))
          return {};
        for (int in : n.inputs) {
          if (!vector_float_value(node(in).dtype)) return {};
          if (in_loop[static_cast<size_t>(in)] && vec[static_cast<size_t>(in)]) vec[at] = true;
          if (!in_loop[static_cast<size_t>(in)] && tile_vector_.at(static_cast<size_t>(in))) {
            if (n.kind != AscKind::Broadcast) return {};
            vec[at] = true;  // its columns' array (vector_statements)
          }
        }
        if (sigmoid && !vec[at]) return {};
        break;
      }
      case AscKind::Store:
        if (!lane_dtype(n.dtype) || !contiguous(n) || output_of_store_.at(at) < 0 ||
            !vector_float_value(node(n.inputs.at(0)).dtype))
          return {};
        narrow = narrow || dtype_size(n.dtype) == 2;
        vec[at] = true;
        break;
      default:  // indices, casts, other ops: the loop alone
        return {};
    }
    // (A row buffer this pass writes takes a vector.)
    if (row_buffer && ub_write_pass(id) == ub_pass_ && !vec[at]) return {};
  }
  if (!narrow) return {};
  return vec;
}

std::vector<bool> KernelEmitter::f16c_lanes(int axis, const std::vector<int>& nodes) const {
  const bool f16 = std::any_of(nodes.begin(), nodes.end(), [&](int id) {
    const AscNode& n = node(id);
    return n.dtype == DType::f16 && (n.kind == AscKind::Store || n.kind == AscKind::Load);
  });
  return f16 ? lane_loop_values(axis, nodes, LaneForm::Register) : std::vector<bool>();
}

std::string KernelEmitter::f16c_condition(const std::vector<int>& nodes) const {
  // (bf16 chunk buffers hold f32 under AF_BF16_CVT, which af_put16_bf16
  // does not write.)
  const bool bf16_stores = std::any_of(nodes.begin(), nodes.end(), [&](int id) {
    return node(id).kind == AscKind::Store && node(id).dtype == DType::bf16;
  });
  return std::string("AF_F16C && AF_VECTOR_PASS") + (bf16_stores ? " && !AF_BF16_CVT" : "");
}

std::string KernelEmitter::lane_loop(int axis, const std::string& lo, const std::string& hi,
                                     const std::vector<int>& nodes, const std::vector<bool>& vec,
                                     const std::function<StoreTo(int)>& store_to, bool writes,
                                     const std::string& indent) const {
  const std::string i = fmt::format("i{}", axis);
  const auto store = [&](const AscNode& n) {
    const int value = n.inputs.at(0);
    // A row-level value stored along the row: splat (x - 0 keeps -0, + 0 would not).
    const std::string v = vec.at(static_cast<size_t>(value))
                              ? this->value(value)
                              : fmt::format("({} - (af_f32x16){{}})", this->value(value));
    const std::string target = store_element(n, store_to(n.id));
    if (const char* half = half_suffix(n.dtype); *half != '\0')
      return fmt::format("af_put16{}(&{}, {}, n_);", half, target, v);
    return fmt::format("af_put16_f32(&{}, {}, n_, false);", target, v);
  };
  // Whole vectors only (a chunk, or a whole row of a multiple of 16): no
  // tail code, so g++ unrolls the loop and keeps its constants in registers
  // (with the tails' branches it rebuilt them every vector).
  const std::optional<int64_t> extent = graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  const bool whole =
      hi == lo + " + AF_NT_CHUNK" || (lo == "0" && hi == size(axis) && extent && *extent % 16 == 0);
  const std::string in1 = indent + "  ";
  std::string out =
      fmt::format("{0}for (int64_t {1} = {2}; {1} < {3}; {1} += 16) {{\n", indent, i, lo, hi);
  out += whole ? in1 + "const int64_t n_ = 16;  // whole vectors\n"
               : fmt::format("{}const int64_t n_ = {} - {};\n", in1, hi, i);
  out += vector_statements(nodes, vec, in1, store, axis);
  if (writes) {
    for (const auto& [buffer, id] : *lane_writes_) {
      if (vec.at(static_cast<size_t>(id))) {
        out += fmt::format("{}af_store16(&{}[{} - lo], &{}, n_);\n", in1, buffer, i, value(id));
        continue;
      }
      out += fmt::format(
          "{}{{ const af_f32x16 s_ = {} - (af_f32x16){{}}; af_store16(&{}[{} - lo], &s_, n_); }}\n",
          in1, value(id), buffer, i);
    }
  }
  return out + indent + "}\n";
}

std::string KernelEmitter::lane_sums(int axis, const std::string& lo, const std::string& hi,
                                     const std::vector<int>& body, const std::vector<int>& sums,
                                     const std::string& indent) const {
  // (A loop that only loads and computes: the short rows' condition, with
  // no buffers to write.)
  if (std::any_of(body.begin(), body.end(),
                  [&](int id) { return node(id).kind == AscKind::Store; }))
    return {};
  const auto writes = lane_writes_;  // (lane_loop_values' short-row rule, no buffers)
  lane_writes_.emplace();
  const std::vector<bool> vec = f16c_lanes(axis, body);
  lane_writes_ = writes;
  if (vec.empty()) return {};
  for (int r : sums)
    if (reduce_code(node(r).op, node(r).dtype).acc_type != "float" ||
        !vec.at(static_cast<size_t>(node(r).inputs.at(0))))
      return {};
  // Four accumulators per sum (the vector passes' af_row_sum16x4): the
  // sums' order differs from the OpenMP reduction's, as that one's differs
  // between AVX2 and AVX-512.
  const std::string i = fmt::format("i{}", axis), in1 = indent + "  ", in2 = in1 + "  ";
  std::string out = indent + "{\n";
  std::string adds;
  for (int r : sums) {
    out += fmt::format("{}af_f32x16 s{}_[4] = {{}};  // {}\n", in1, r, node(r).name);
    adds +=
        fmt::format("{}af_add_lanes(&s{}_[k_], &{}, n_);\n", in2, r, value(node(r).inputs.at(0)));
  }
  out += fmt::format(
      "{}const auto lanes_ = [&](const int64_t {}, const int k_, const int64_t n_) "
      "AF_LAMBDA_INLINE {{\n",
      in1, i);
  out += vector_statements(body, vec, in2, {}, axis) + adds + in1 + "};\n";
  out += fmt::format("{}int64_t {} = {};\n", in1, i, lo);
  out += fmt::format(
      "{0}for (; {1} + 64 <= {2}; {1} += 64) {{ lanes_({1}, 0, 16); lanes_({1} + 16, 1, 16); "
      "lanes_({1} + 32, 2, 16); lanes_({1} + 48, 3, 16); }}\n",
      in1, i, hi);
  out += fmt::format("{0}for (; {1} < {2}; {1} += 16) lanes_({1}, 0, {2} - {1});\n", in1, i, hi);
  for (int r : sums)
    out += fmt::format("{}{} = af_row_sum16x4(s{}_);\n", in1, chunk(r), r);
  return out + indent + "}\n";
}

std::string KernelEmitter::simd_loop(int axis, const std::string& lo, const std::string& hi,
                                     const std::vector<int>& nodes, const std::string& pragma,
                                     const std::function<StoreTo(int)>& store_to,
                                     const std::function<std::string(const std::string&)>& updates,
                                     const std::string& indent, bool word_pairs) const {
  std::string loop = pragma + "\n";
  loop += fmt::format("{0}for (int64_t i{1} = {2}; i{1} < {3}; ++i{1}) {{\n", indent, axis, lo, hi);
  for (int id : nodes)
    emit_loop_node(node(id), indent + "  ", loop, store_to(id));
  if (updates) loop += updates(indent + "  ");
  loop += indent + "}\n";
  // One register: rows of 16 with 16-bit data (lane_loop_values requires
  // it), whose loops are simdlen(16) (short_loop_variant) and which g++
  // computes in 32-byte halves.
  const bool rows_of_16 = graph_.axes.at(static_cast<size_t>(axis)).size.as_const() == 16;
  const std::vector<bool> pairs =
      updates ? std::vector<bool>() : lane_loop_values(axis, nodes, LaneForm::Pairs);
  const bool writes = updates && lane_writes_.has_value();
  const std::vector<bool> single = rows_of_16 && (!updates || writes)
                                       ? lane_loop_values(axis, nodes, LaneForm::Register)
                                       : std::vector<bool>();
  const bool words = word_pairs && !updates && word_pairs_fit(axis, nodes, pragma);
  // f16 data where F16C converts it (kernel_prelude_f16.h): the loop in the
  // one-register form's code, whatever its length, before the other forms
  // (an Elementwise loop, or a short row's loop that writes its reduce
  // buffers, as the rows of 16 above).
  const std::vector<bool> f16c = !updates || writes ? f16c_lanes(axis, nodes) : std::vector<bool>();
  if (pairs.empty() && single.empty() && !words && f16c.empty()) return loop;
  std::string out;
  if (!f16c.empty())
    out += "#if " + f16c_condition(nodes) + "  // f16 by F16C, 16 lanes (lane_loops.cpp)\n" +
           lane_loop(axis, lo, hi, nodes, f16c, store_to, writes, indent);
  // Word pairs first: with AVX2 (haswell code on an Ice Lake, session 42)
  // they took 0.80x the lane pairs' time (rotary bf16) and 0.83x
  // (attention_transpose bf16), the same bits.
  if (words)
    out += std::string(out.empty() ? "#if" : "#elif") +
           " AF_WORD_PAIRS  // two bf16 elements per 32-bit lane (word_pairs.cpp)\n" +
           word_pair_loop(axis, lo, hi, nodes, pragma, store_to, indent);
  if (!pairs.empty())
    out += std::string(out.empty() ? "#if" : "#elif") +
           " AF_LANE_PAIRS  // 16 lanes as two registers (lane_loops.cpp)\n" +
           lane_loop(axis, lo, hi, nodes, pairs, store_to, false, indent);
  if (!single.empty())
    out += std::string(out.empty() ? "#if" : "#elif") +
           " AF_VECTOR_PASS && !AF_LANE_PAIRS && !AF_BF16_CVT  // 16 lanes, one register\n" +
           lane_loop(axis, lo, hi, nodes, single, store_to, writes, indent);
  return out + "#else\n" + loop + "#endif\n";
}

}  // namespace autofuse::codegen::cpu
