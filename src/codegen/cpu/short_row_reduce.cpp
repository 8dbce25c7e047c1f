// Short rows of the Reduction template's row layout, reduced from buffers.
//
// A vector loop with `#pragma omp simd reduction(...)` clauses ends, per row
// and Reduce, with g++ combining the 16 lane partials one by one in order
// (float addition does not reassociate): ~10 cycles, as much as a whole row of
// 16 elements costs otherwise (softmax over rows of 16: a third of its time;
// dlrm_concat: 26 sums of 16 per row, half of its time). For a row of at most
// kShortReduceRow elements the loop instead writes each Reduce's values to a
// buffer (no clause), and the prelude's af_row_* (kernel_prelude_rows.h)
// reduces the buffer with vector lanes and a shuffle tree:
//
//   if (hi - lo <= kShortReduceRow) {        // only this branch if the
//     #pragma omp simd                       // row's length is a constant
//     for (i = lo; i < hi; ++i) { ...; rb<r>[i - lo] = value; }
//     a<r> = af_row_sum_f32(rb<r>, hi - lo);  // max/min: and the NaN flag
//   } else {
//     the clause loop (emit_clause_loop), a cascade's collapse
//   }
//
// A Reduce of an f32 input row reads it in place (af_row_*_in: no copy loop,
// which g++ would turn into a memcpy call); one whose input is in a row
// buffer (row_buffers.cpp) in this pass reduces that buffer. Softmax's
// exp(x - max) (af_exp_nonpos) whose only use in the loop is its buffer is
// written there as x - max and exponentiated after the loop by
// af_exp_nonpos_row: the same bits, 16 lanes at a time with vscalefps under
// AVX-512 (kernel_prelude_lane_ops.h; softmax_mask f32 [8, 12, 384, 384] 0.96x
// the time on Zen 5, and no slow subnormal results). The sum's error
// bound is within the cascade chunk's (a lane of one of 4 accumulators sums
// at most kShortReduceRow / 32 values, then 5 pairwise levels), and its
// order depends only on the row segment, not on the block that runs it.
//
// Measured (`autofuse bench <model> --shape <s> --threads 1`, interleaved
// against the clause): softmax_mask bf16 B=1,S=16 9.3 -> 4.6 us; f32 4.7 ->
// 3.8 us; dlrm_concat f32 B=2048 0.27 -> 0.17 ms; rmsnorm f32 [512, 1024]
// 0.054 -> 0.040 ms; a bare sum of rows of 16 0.094 -> 0.035 ms, of 1024
// 0.0083 -> 0.0078.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

namespace {

/// The longest row reduced from buffers: at most one cascade chunk (the
/// sum's error bound), and the buffers are stack arrays of this many floats.
constexpr int64_t kShortReduceRow = tiling::kShortReduceRow;

/// The shortest rows (static, or a row group's longest) whose exp runs over
/// the buffer after the loop (af_exp_nonpos_row); row groups of 8 take rows
/// of at most 64.
constexpr int64_t kExpRowMin = 65;

/// The prelude function reducing a float buffer with `op`, or empty.
std::string row_function(OpKind op) {
  switch (op) {
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
      return "af_row_sum_f32";
    case OpKind::ReduceMax:
      return "af_row_max_f32";
    case OpKind::ReduceMin:
      return "af_row_min_f32";
    default:
      return {};
  }
}

}  // namespace

bool KernelEmitter::reads_in_place(const AscNode& load, int axis) const {
  return load.kind == ascir::AscKind::Load && load.dtype == DType::f32 &&
         !buffered_.at(static_cast<size_t>(load.id)) &&
         load.view.strides.at(static_cast<size_t>(axis)) == sym::Expr(1);
}

std::vector<int> KernelEmitter::short_row_reduces(const PassPlan& plan) const {
  // One reduced axis: its loop is the vector loop and the row's only one.
  if (column_ || kernel_.inner_axes.size() != 1 || plan.deepest != 1) return {};
  const std::optional<int64_t> extent =
      graph_.axes.at(static_cast<size_t>(kernel_.inner_axes[0])).size.as_const();
  if (extent && *extent > kShortReduceRow) return {};
  std::vector<int> reduces;
  for (int r : plan.reduces) {
    const AscNode& n = node(r);
    if (accumulate_level(n) != plan.deepest) continue;
    // All or none: a clause left in the loop would keep its lane epilogue.
    if (!tiling::reduces_from_buffer(n)) return {};
    AF_CHECK(reduce_code(n.op, n.dtype).acc_type == "float" && !row_function(n.op).empty(),
             "kernel {}: {} is not reduced from a float buffer", graph_.name, n.name);
    reduces.push_back(r);
  }
  return reduces;
}

bool KernelEmitter::exp_in_buffer(int id, const std::vector<int>& body, int ub) const {
  if (!exp_nonpos(node(id)) || std::count(body.begin(), body.end(), id) == 0) return false;
  // Not for rows known to be short: the extra call costs more than it saves
  // (softmax_mask f32 rows of 16 in groups of 8: 1.07-1.09x the time), and a
  // 16-bit loop's f32 values, stored as 32-byte halves, would reach its
  // 64-byte loads through a store-forwarding stall (bf16: 2.1x).
  const std::optional<int64_t> extent =
      graph_.axes.at(static_cast<size_t>(kernel_.inner_axes.front())).size.as_const();
  if (grouped_ ? group_row_max_ < kExpRowMin : extent && *extent < kExpRowMin) return false;
  // A row buffer of an earlier pass already holds the exps.
  if (ub >= 0 && ub < ub_pass_) return false;
  // No other use in the loop: they would read the exponent.
  return std::none_of(body.begin(), body.end(), [&](int other) {
    const std::vector<int> reads = operands(node(other));
    return std::count(reads.begin(), reads.end(), id) > 0;
  });
}

void KernelEmitter::emit_short_row_loop(
    const PassPlan& plan, const std::vector<int>& body,
    const std::function<std::string(const std::string&)>& updates, const std::string& indent,
    std::string& out) const {
  const int axis = kernel_.inner_axes.front();
  const std::optional<int64_t> extent = graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  // A row of kVectorPassMinRow elements or more: a vector pass
  // (vector_pass.cpp) where the pass qualifies and the target has AVX-512,
  // the buffered loop below otherwise (a symbolic row: also when shorter).
  const std::vector<bool> vec = vector_pass_lanes(plan, body);
  // short_row_reduces checked a static length; grouped rows are short.
  const bool always_short = extent.has_value() || grouped_;
  std::string ind = indent;
  if (!always_short) {
    out += fmt::format("{}if (hi - lo <= {}) {{  // a short row: reduced from buffers\n", indent,
                       kShortReduceRow);
    ind += "  ";
  }
  // A max or min pass, or a symbolic row's (one by one or in groups), runs
  // the loop where the vector pass did not (a shorter row) or must be
  // redone (a NaN probe: the loop's max tests every value for NaN).
  const bool redo = !vec.empty() && (!extent || extreme_pass(plan));
  if (!vec.empty()) {
    // Softmax's exp as 16 lanes: af_exp_nonpos_x16, AVX-512 only.
    out += vector_exps(body, vec) ? "#if AF_VECTOR_PASS && AF_EXP_ROW_X16  // exp as 16 lanes\n"
                                  : "#if AF_VECTOR_PASS\n";
    if (!redo) {
      emit_vector_pass(plan, body, vec, false, ind, out);
      out += "#else\n";
    } else {
      out += fmt::format("{}bool {} = true;  // the loop below runs\n", ind, kVectorPassRedo);
      if (extent) {
        emit_vector_pass(plan, body, vec, true, ind, out);
      } else {
        out += fmt::format("{}if (hi - lo >= {}) {{\n", ind, kVectorPassMinRow);
        emit_vector_pass(plan, body, vec, true, ind + "  ", out);
        out += ind + "}\n";
      }
      out += fmt::format("{}if ({})\n#endif\n{}{{\n", ind, kVectorPassRedo, ind);
      ind += "  ";
    }
  }
  // Each Reduce's buffer: the input row itself when the value is an f32 Load
  // (a copy loop would become a memcpy call), its row buffer when this pass
  // has one, else a buffer of its own.
  std::string writes, reduce, exps;
  std::vector<std::pair<std::string, int>> buffer_values;  // the writes: buffer, value
  for (int r : plan.short_row) {
    const AscNode& n = node(r);
    const int input = n.inputs.at(0);
    const int ub = ub_pass_ >= 0 ? ub_write_pass(input) : -1;
    std::string buffer, suffix;
    if (reads_in_place(node(input), axis)) {
      buffer = fmt::format("&p{}[{}]", node(node(input).inputs.at(0)).arg_index,
                           address(node(input), axis, "lo"));
      suffix = "_in";
    } else if (ub >= 0 && ub <= ub_pass_) {
      buffer = fmt::format("ub{} + lo", input);
    } else {
      buffer = fmt::format("rb{}", r);
      out += fmt::format(
          "{}float {}[{}] __attribute__((aligned(64)));  // {}\n", ind, buffer,
          extent.value_or(grouped_ ? group_row_max_ : kShortReduceRow) + kRowReducePad, n.name);
      writes += fmt::format("{}{}[i{} - lo] = {};", writes.empty() ? "" : " ", buffer, axis,
                            value(input));
      buffer_values.emplace_back(buffer, input);
    }
    if (exp_in_buffer(input, body, ub) && exps.find("(" + buffer + ",") == std::string::npos) {
      exps += fmt::format("{}af_exp_nonpos_row({}, hi - lo);\n", ind, buffer);
      if (std::count(row_exps_.begin(), row_exps_.end(), input) == 0) row_exps_.push_back(input);
    }
    const std::string call = row_function(n.op) + suffix;
    if (reduce_code(n.op, n.dtype).tracks_nan) {
      reduce += fmt::format("{}{} = {}({}, hi - lo, &{});\n", ind, acc(r), call, buffer, nan(r));
    } else {
      reduce += fmt::format("{}{} = {}({}, hi - lo);\n", ind, acc(r), call, buffer);
    }
  }
  // Never null, and only buffer writes: a loop streams its stores under key 1
  // when its Reduces all reduce from buffers (tiling::streams), the buffer
  // writes repeated in each of its variants (emit_loop_variants).
  const auto buffer_writes = [&](const std::string& at) {
    return writes.empty() ? std::string() : at + writes + "\n";
  };
  // No loop when it would only load what is reduced in place.
  const bool loop = std::any_of(body.begin(), body.end(), [&](int id) {
    return std::none_of(plan.short_row.begin(), plan.short_row.end(), [&](int r) {
      return node(r).inputs.at(0) == id && reads_in_place(node(id), axis);
    });
  });
  AF_CHECK(loop || row_exps_.empty(), "kernel {}: an Exp buffered without its loop", graph_.name);
  lane_writes_ = buffer_values;  // the lane form's (lane_loops.cpp)
  if (loop) emit_inner_loop(axis, "lo", "hi", body, "#pragma omp simd", buffer_writes, ind, out);
  lane_writes_.reset();
  row_exps_.clear();
  out += exps + reduce;
  if (!vec.empty() && !redo) out += "#endif\n";
  if (redo) {
    ind.resize(ind.size() - 2);
    out += ind + "}\n";
  }
  if (always_short) return;
  out += indent + "} else {\n";
  emit_clause_loop(plan, body, updates, indent + "  ", out);
  for (int r : plan.short_row)
    if (acc_kind(node(r), plan.deepest) == Acc::Cascade) out += cascade_collapse(r, indent + "  ");
  out += indent + "}\n";
}

}  // namespace autofuse::codegen::cpu
