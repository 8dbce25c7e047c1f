// The Reduction template: block b takes rows (the flattened kept axes)
// [b * chunk, min((b + 1) * chunk, work)). Per row, stages and passes
// alternate as the schedule assigned them (ScheduledKernel::node_pass):
//
//   stage 0: row nodes needing no reduction (e.g. a per-row operand)
//   pass 0:  a loop nest over the reduced axes computing what pass 0's
//            Reduces and Stores need; the last loop is vectorized
//   stage 1: pass 0's Reduces finish; row nodes that need them
//   pass 1:  ... (varying nodes are recomputed in every pass that needs them)
//   stage num_passes: the last row nodes and their Stores
//
// Accumulation: every Reduce has its own accumulator, vectorized by
// `#pragma omp simd reduction(...)` (g++ needs the pragma to vectorize max
// and min without -ffast-math; cpu-facts.md). A float sum is thus the sum of
// per-lane partial sums of n/L elements each (L lanes), combined at the end:
// |error| <= (n/L + log2(L) + 1) * eps * sum|x| to first order (eps = 2^-24
// for f32), instead of the n * eps of one serial accumulator. Float max/min
// keep a separate "saw NaN" flag, so NaN propagates as ops.h says (the OpenMP
// max combiner alone would drop it). Integer sums and products wrap in the
// unsigned type (the same low bits as the reference's int64); an integer
// mean divides the full int64 sum. A Reduce sums its input over the reduced
// axes along which the input varies (asc_graph.h): on the others it
// accumulates only at index 0.
#include <map>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

std::string acc_name(int id) {
  return fmt::format("a{}", id);
}
std::string nan_name(int id) {
  return fmt::format("nan{}", id);
}

}  // namespace

int KernelEmitter::accumulate_level(const AscNode& reduce) const {
  return level_.at(static_cast<size_t>(reduce.inputs.at(0)));
}

std::string KernelEmitter::reduce_count(const AscNode& reduce) const {
  const AscNode& input = node(reduce.inputs.at(0));
  std::string count;
  for (int a : kernel_.inner_axes) {
    if (!varies(input, a)) continue;
    count += count.empty() ? size(a) : " * " + size(a);
  }
  return count.empty() ? "(int64_t)1" : "(" + count + ")";
}

std::string KernelEmitter::emit_reduction() {
  AF_CHECK(kernel_.node_pass.size() == graph_.nodes.size() && kernel_.num_passes >= 1,
           "kernel {}: reduction schedule without passes", graph_.name);
  std::string out = fmt::format(
      "extern \"C\" void {}_kernel(const void* tiling_data, void* const* args, int64_t block_idx) "
      "{{\n",
      name_);
  out += prologue();
  out += "  const int64_t row_begin = block_idx * td->chunk;\n";
  out += "  const int64_t row_end = af_min(row_begin + td->chunk, td->work);\n";
  out += "  if (row_begin >= row_end) return;\n";
  for (const AscNode& n : graph_.nodes) {
    if (!live_[static_cast<size_t>(n.id)] || level_[static_cast<size_t>(n.id)] != -1) continue;
    if (n.kind == AscKind::Store) {
      std::string store;
      emit_node(n, "", store);
      out += "  if (block_idx == 0) " + store;  // the same value for every row: write it once
    } else {
      emit_node(n, "  ", out);
    }
  }
  out += decompose_row("row_begin", "  ");
  out += "  for (int64_t row = row_begin; row < row_end; ++row) {\n";
  for (const AscNode& n : graph_.nodes) {
    if (!live_[static_cast<size_t>(n.id)] || level_[static_cast<size_t>(n.id)] < 0) continue;
    if (n.kind == AscKind::Load || n.kind == AscKind::Store)
      out += fmt::format("    const int64_t b{} = {};\n", n.id, row_base(n));
  }
  for (int stage = 0; stage <= kernel_.num_passes; ++stage) {
    emit_stage(stage, "    ", out);
    if (stage < kernel_.num_passes) emit_pass(stage, "    ", out);
  }
  out += advance_row("    ");
  out += "  }\n";
  out += fence_if_streamed("  ");
  out += "}\n";
  return out;
}

void KernelEmitter::emit_stage(int stage, const std::string& indent, std::string& out) const {
  const auto pass_of = [&](int id) { return kernel_.node_pass.at(static_cast<size_t>(id)); };
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!live_[id] || level_[id] != 0) continue;
    if (n.kind == AscKind::Reduce) {
      if (pass_of(n.id) + 1 != stage) continue;
      const AscNode& input = node(n.inputs.at(0));
      std::string rhs;
      if (level_.at(static_cast<size_t>(input.id)) <= 0) {
        rhs = value(input.id);  // reducing a value that does not vary is the value
      } else {
        rhs = reduce_result(n.op, n.dtype, acc_name(n.id), nan_name(n.id), reduce_count(n));
      }
      out += fmt::format("{}const {} {} = {};  // {}\n", indent, c_compute_type(n.dtype),
                         value(n.id), rhs, n.name);
      continue;
    }
    if (pass_of(n.id) != stage) continue;
    for (int in : n.inputs) {
      const AscNode& i = node(in);
      if (i.kind == AscKind::Data || level_.at(static_cast<size_t>(in)) < 0) continue;
      const int ready = i.kind == AscKind::Reduce ? pass_of(in) + 1 : pass_of(in);
      AF_CHECK(level_.at(static_cast<size_t>(in)) == 0 && ready <= stage,
               "kernel {}: row node {} (pass {}) reads {} (ready after {})", graph_.name, n.name,
               stage, i.name, ready);
    }
    emit_node(n, indent, out);
  }
}

void KernelEmitter::emit_pass(int pass, const std::string& indent, std::string& out) const {
  const auto pass_of = [&](int id) { return kernel_.node_pass.at(static_cast<size_t>(id)); };
  const size_t count = graph_.nodes.size();
  // The sinks of this pass and everything varying they need.
  std::vector<bool> need(count, false);
  std::vector<int> reduces;
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!live_[id]) continue;
    if (n.kind == AscKind::Reduce && pass_of(n.id) == pass &&
        level_.at(static_cast<size_t>(n.inputs.at(0))) >= 1) {
      reduces.push_back(n.id);
      need.at(static_cast<size_t>(n.inputs[0])) = true;
    } else if (n.kind == AscKind::Store && level_[id] >= 1 && pass_of(n.id) == pass) {
      need[id] = true;
    }
  }
  int deepest = 0;
  for (size_t i = count; i-- > 0;) {
    if (!need[i]) continue;
    const AscNode& n = graph_.nodes[i];
    AF_CHECK(pass_of(n.id) <= pass, "kernel {}: {} (pass {}) needed in pass {}", graph_.name,
             n.name, pass_of(n.id), pass);
    deepest = std::max(deepest, level_[i]);
    for (int in : n.inputs) {
      const AscNode& input = node(in);
      const int level = level_.at(static_cast<size_t>(in));
      if (input.kind == AscKind::Data) continue;
      if (level >= 1) {
        need.at(static_cast<size_t>(in)) = true;
      } else if (level == 0) {
        const int ready = input.kind == AscKind::Reduce ? pass_of(in) + 1 : pass_of(in);
        AF_CHECK(ready <= pass, "kernel {}: {} in pass {} reads {} (ready after {})", graph_.name,
                 n.name, pass, input.name, ready);
      }
    }
  }
  if (deepest == 0) return;  // nothing to do in this pass

  // Accumulators live at row scope: the next stage reads them.
  std::map<std::string, std::vector<std::string>> clauses;  // operator -> variables
  for (int r : reduces) {
    const AscNode& n = node(r);
    const ReduceCode code = reduce_code(n.op, n.dtype);
    out += fmt::format("{}{} {} = {};\n", indent, code.acc_type, acc_name(r), code.identity);
    if (code.tracks_nan) out += fmt::format("{}int {} = 0;\n", indent, nan_name(r));
    if (accumulate_level(n) != deepest) continue;
    clauses[code.clause].push_back(acc_name(r));
    if (code.tracks_nan) clauses["|"].push_back(nan_name(r));
  }

  // The updates of the Reduces accumulating at `level`, at `ind`.
  const auto updates = [&](int level, const std::string& ind) {
    std::string text;
    for (int r : reduces) {
      const AscNode& n = node(r);
      if (accumulate_level(n) != level) continue;
      // Axes at outer loop levels that the input does not vary along: it is
      // reduced over them only once (at index 0).
      std::string guard;
      const AscNode& input = node(n.inputs[0]);
      for (int l = 1; l < level; ++l) {
        const int a = kernel_.inner_axes.at(static_cast<size_t>(l - 1));
        if (!varies(input, a)) guard += fmt::format("{}i{} == 0", guard.empty() ? "" : " && ", a);
      }
      const std::string update =
          reduce_update(n.op, n.dtype, acc_name(r), nan_name(r), value(input.id));
      text += guard.empty() ? fmt::format("{}{}\n", ind, update)
                            : fmt::format("{}if ({}) {{ {} }}\n", ind, guard, update);
    }
    return text;
  };
  std::string ind = indent;
  for (int level = 1; level < deepest; ++level) {
    const int axis = kernel_.inner_axes.at(static_cast<size_t>(level - 1));
    out += fmt::format("{0}for (int64_t i{1} = 0; i{1} < {2}; ++i{1}) {{\n", ind, axis, size(axis));
    ind += "  ";
    for (const AscNode& n : graph_.nodes)
      if (need[static_cast<size_t>(n.id)] && level_[static_cast<size_t>(n.id)] == level)
        emit_node(n, ind, out);
    out += updates(level, ind);
  }
  // The vectorized loop (streaming stores under tiling_key 1 when it
  // accumulates nothing: inner_loop.cpp).
  std::string pragma = "#pragma omp simd";
  for (const auto& [op, vars] : clauses) {
    pragma += fmt::format(" reduction({}:", op);
    for (size_t i = 0; i < vars.size(); ++i)
      pragma += (i ? "," : "") + vars[i];
    pragma += ")";
  }
  std::vector<int> body;
  for (const AscNode& n : graph_.nodes)
    if (need[static_cast<size_t>(n.id)] && level_[static_cast<size_t>(n.id)] == deepest)
      body.push_back(n.id);
  std::function<std::string(const std::string&)> deepest_updates;
  if (!clauses.empty()) deepest_updates = [&](const std::string& i) { return updates(deepest, i); };
  const int axis = kernel_.inner_axes.at(static_cast<size_t>(deepest - 1));
  emit_inner_loop(axis, "0", size(axis), body, pragma, deepest_updates, ind, out);
  for (int level = deepest - 1; level >= 1; --level) {
    ind.resize(ind.size() - 2);
    out += ind + "}\n";
  }
}

}  // namespace autofuse::codegen::cpu
