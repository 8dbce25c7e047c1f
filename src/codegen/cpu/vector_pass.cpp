// A short row's reducing pass written as 16-lane vector code (the row
// layout's passes with short_row Reduces, short_row_reduce.cpp).
//
// A short row's pass normally writes each reduced value to a buffer in its
// `omp simd` loop and sums the buffer after it (af_row_sum_f32): a store and
// a load per vector, and the sum's adds form one chain per accumulator that
// starts only when the loop ends. Each pass of a row waits for the last
// one's reduction (layernorm: the mean, then the variance about it), and a
// row of 768 has ~1300 instructions, more than the out-of-order window, so
// the chains are on the row's critical path. When the pass only does
// arithmetic on float values (row buffers, contiguous f32 and bf16 loads,
// gathered rows at offsets found outside the loop, row-level scalars:
// layernorm's sum((x - mean)^2), rmsnorm's sum(x * x)), the loop body is
// emitted once more with 16-lane vector types (GNU vectors: `auto` carries
// vector-ness from the loads through +, -, *, / and broadcasts of row-level
// scalars) in a lambda that adds its values into four accumulators, one per
// vector of a run of 64, so the sums need no buffer and their chains are a
// quarter as long; values kept in a row buffer are stored from the vectors:
//
//   af_f32x16 s<r>[4] = {};
//   const auto lanes_ = [&](const int64_t i<axis>, const int k_, const int64_t n_) {
//     af_f32x16 v<a>; af_load16_bf16(&v<a>, &p0[b<a> + i<axis>], n_);  // x
//     const auto v<b> = (v<a> - v<mean>);        // a row-level float
//     af_store16(&ub<b>[i<axis>], &v<b>, n_);   // its row buffer
//     const auto v<c> = (v<b> * v<b>);
//     af_add_lanes(&s<r>[k_], &v<c>, n_);
//   };
//   for (; i + 64 <= hi; i += 64) lanes_(i, 0, 16); ... lanes_(i + 48, 3, 16);
//   for (; i < hi; i += 16) lanes_(i, 0, hi - i);   // n_ < 16: the row's tail
//   a<r> = af_row_sum16x4(s<r>);                     // (kernel_prelude_rows.h)
//
// Static rows of kVectorPassMinRow to kShortReduceRow elements only. A
// symbolic row kept its buffered loop: behind a per-row branch (`if (hi -
// lo >= 64)`) the vector pass made mse f32 [64, 1024] (one row of 65536
// reduced by the clause loop, so the vector pass never ran) 1.25x the time:
// its code changed how g++ compiled the rest of the function. The sums'
// order differs from af_row_vector_sum_f32's (64 partial sums, not 32: see
// there why the buffers keep theirs), so a static row's sum may differ from
// the same row's with a symbolic length in the last bits; and g++
// contracts a product into the accumulator's add (one rounding less).
//
// Measured (`bench/run --no-peers --no-compile-time --threads 1,2`, A/B in
// one run, Zen 5; docs/benchmarks.md, session 34): rmsnorm bf16 0.80-0.85x
// the time, skip_layernorm bf16 0.82-0.90x, bert_embeddings bf16
// 0.77-0.83x, f32 0.86-0.95x; memory-bound f32 rows within noise (rmsnorm
// f32 large 1.01-1.02x). The bf16 widening is one vpmovzxwd
// (AF_WIDEN_U16X16): g++'s generic conversion took three more instructions
// per vector and made rmsnorm bf16 slower than the buffered loop.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

/// The shortest static row whose pass is a vector pass: a 16-bit loop
/// stores its f32 row buffers as 32-byte halves, and a short row's 64-byte
/// loads of them would wait for store forwarding.
constexpr int64_t kVectorPassMinRow = 64;

/// A value the kernel computes as a float (16-bit types too: they are
/// rounded where stored; float8 is rounded after every op).
bool float_value(DType dtype) {
  return c_compute_type(dtype) == "float" && !is_float8(dtype);
}

bool vector_arithmetic(OpKind op) {
  return op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul || op == OpKind::Div ||
         op == OpKind::Neg;
}

}  // namespace

std::vector<bool> KernelEmitter::vector_pass_lanes(const PassPlan& plan,
                                                   const std::vector<int>& body) const {
  if (column_ || kernel_.inner_axes.size() != 1 || plan.short_row.empty()) return {};
  const int axis = kernel_.inner_axes.front();
  const std::optional<int64_t> extent = graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  if (!extent || *extent < kVectorPassMinRow || *extent > tiling::kShortReduceRow) return {};
  // Per node: whether the lambda holds it as a vector (else a row-level float).
  std::vector<bool> vec(graph_.nodes.size(), false);
  std::vector<bool> in_body(graph_.nodes.size(), false);
  for (int id : body)
    in_body[static_cast<size_t>(id)] = true;
  for (int id : register_order(body)) {
    const AscNode& n = node(id);
    // A value written to its row buffer here: a vector (float, see below).
    const bool writes_ub = ub_pass_ >= 0 && ub_write_pass(id) == ub_pass_;
    if (ub_pass_ >= 0 && reads_row_buffer(id, ub_pass_)) {
      if (!float_value(n.dtype)) return {};
      vec[static_cast<size_t>(id)] = true;
      continue;
    }
    switch (n.kind) {
      case AscKind::Gather:  // rows at offsets found outside the loop
        if ((n.dtype != DType::f32 && n.dtype != DType::bf16) ||
            n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1) ||
            gather_row_element(n).empty())
          return {};
        vec[static_cast<size_t>(id)] = true;
        break;
      case AscKind::Load: {
        // Contiguous f32 or bf16 (widened), or a row-invariant Load's f32 copy.
        const bool invariant = row_invariant_.at(static_cast<size_t>(id));
        if (buffered_.at(static_cast<size_t>(id))) return {};
        if (!invariant && ((n.dtype != DType::f32 && n.dtype != DType::bf16) ||
                           n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1)))
          return {};
        vec[static_cast<size_t>(id)] = true;
        break;
      }
      case AscKind::Scalar:
        if (!float_value(n.dtype)) return {};
        break;
      case AscKind::Broadcast:
      case AscKind::Compute: {
        if (!float_value(n.dtype)) return {};
        if (n.kind == AscKind::Compute && !vector_arithmetic(n.op)) return {};
        for (int in : n.inputs) {
          if (!float_value(node(in).dtype)) return {};
          if (in_body[static_cast<size_t>(in)] && vec[static_cast<size_t>(in)])
            vec[static_cast<size_t>(id)] = true;
        }
        break;
      }
      default:  // stores, casts, indices, other ops: the `omp simd` loop
        return {};
    }
    if (writes_ub && !vec[static_cast<size_t>(id)]) return {};
  }
  for (int r : plan.short_row) {
    const AscNode& n = node(r);
    const int input = n.inputs.at(0);
    if ((n.op != OpKind::ReduceSum && n.op != OpKind::ReduceMean) || !float_value(n.dtype) ||
        !in_body[static_cast<size_t>(input)] || !vec[static_cast<size_t>(input)])
      return {};
  }
  return vec;
}

void KernelEmitter::emit_vector_pass(const PassPlan& plan, const std::vector<int>& body,
                                     const std::vector<bool>& vec, const std::string& ind,
                                     std::string& out) const {
  const int axis = kernel_.inner_axes.front();
  const std::string i = fmt::format("i{}", axis);
  out += ind + "{  // the pass as 16-lane vectors (vector_pass.cpp)\n";
  const std::string inner = ind + "  ";
  for (int r : plan.short_row)
    out += fmt::format("{}af_f32x16 s{}[4] = {{}};  // {}\n", inner, r, node(r).name);
  out += fmt::format(
      "{}const auto lanes_ = [&](const int64_t {}, const int k_, const int64_t n_) {{\n", inner, i);
  const std::string li = inner + "  ";
  for (int id : register_order(body)) {
    const AscNode& n = node(id);
    if (ub_pass_ >= 0 && reads_row_buffer(id, ub_pass_)) {
      out +=
          fmt::format("{0}af_f32x16 {1}; af_load16(&{1}, &ub{2}[{3}], n_);  // {4} (row buffer)\n",
                      li, value(id), id, i, n.name);
      continue;
    }
    std::string statement;
    switch (n.kind) {
      case AscKind::Gather:
      case AscKind::Load: {
        const bool invariant =
            n.kind == AscKind::Load && row_invariant_.at(static_cast<size_t>(id));
        const std::string at =
            invariant ? fmt::format("c{}[{}]", id, i)
            : n.kind == AscKind::Gather
                ? gather_row_element(n)
                : fmt::format("p{}[{}]", node(n.inputs.at(0)).arg_index, address(n));
        const bool widen = n.dtype == DType::bf16 && !invariant;
        statement = fmt::format("af_f32x16 {0}; af_load16{1}(&{0}, &{2}, n_);", value(id),
                                widen ? "_bf16" : "", at);
        break;
      }
      case AscKind::Scalar:
        statement =
            fmt::format("const auto {} = {};", value(id), scalar_literal(n.dtype, n.scalar));
        break;
      case AscKind::Broadcast:
        statement = fmt::format("const auto {} = {};", value(id), value(n.inputs.at(0)));
        break;
      default: {  // Compute (vector_pass_lanes)
        std::vector<std::string> args;
        for (int a : n.inputs)
          args.push_back(value(a));
        statement = fmt::format("const auto {} = {};", value(id),
                                compute_expr(n.op, node(n.inputs.at(0)).dtype, args));
      }
    }
    out += fmt::format("{}{}  // {}{}\n", li, statement, n.name,
                       vec[static_cast<size_t>(id)] ? "" : " (row-level)");
    if (ub_pass_ >= 0 && ub_write_pass(id) == ub_pass_)
      out += fmt::format("{}af_store16(&ub{}[{}], &{}, n_);  // its row buffer\n", li, id, i,
                         value(id));
  }
  for (int r : plan.short_row)
    out += fmt::format("{}af_add_lanes(&s{}[k_], &{}, n_);\n", li, r, value(node(r).inputs.at(0)));
  out += inner + "};\n";
  out += fmt::format("{}int64_t {} = lo;\n", inner, i);
  out += fmt::format(
      "{0}for (; {1} + 64 <= hi; {1} += 64) {{\n"
      "{0}  lanes_({1}, 0, 16); lanes_({1} + 16, 1, 16); lanes_({1} + 32, 2, 16); "
      "lanes_({1} + 48, 3, 16);\n"
      "{0}}}\n",
      inner, i);
  out += fmt::format("{0}for (; {1} < hi; {1} += 16) lanes_({1}, 0, hi - {1});\n", inner, i);
  for (int r : plan.short_row)
    out += fmt::format("{}{} = af_row_sum16x4(s{});\n", inner, acc(r), r);
  out += ind + "}\n";
}

}  // namespace autofuse::codegen::cpu
