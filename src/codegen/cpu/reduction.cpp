// The Reduction template (schedule.h): block b takes the work units
// [b * chunk, min((b + 1) * chunk, work)). A unit is a row (row layout), a
// tile of a row (column layout), or one segment of the outermost reduced
// axis of either when the tiling split it (nsplit > 1). Per unit, stages and
// passes alternate as the schedule assigned them (ScheduledKernel::node_pass):
//
//   stage 0: row nodes needing no reduction (e.g. a per-row operand; in the
//            column layout, tile vectors such as a per-column weight)
//   pass 0:  a loop nest over the reduced axes computing what pass 0's
//            Reduces and Stores need (reduction_pass.cpp)
//   stage 1: pass 0's Reduces finish; row nodes that need them
//   pass 1:  ... (varying nodes are recomputed in every pass that needs them,
//            but for expensive ones kept in row buffers: row_buffers.cpp)
//   stage num_passes: the last row nodes and their Stores
//
// Column layout: scalar row nodes are computed before the stage's tile loop
// (`#pragma omp simd` over the tile), which fills the tile vectors in
// topological order; their Stores follow in a loop of their own. A kernel
// that folds rows (tiling::folds_rows) also copies the tile vectors its
// passes read into `fold` repeats (`r<id>`: lane j holds column j % W).
//
// Split kernels run as split_phases() launches (kernel_abi.h): launch p runs,
// for each of its units, the stages 0..p (recomputing the row nodes it
// needs, cheap) and pass p over the unit's segment, then writes the pass's
// partial accumulators to the workspace and moves to its next unit. A stage
// combines the partials of the row's segments in segment order
// (emit_combine), so results do not depend on which block ran which
// segment; a stage's Stores run only in its own launch, in the row's
// segment 0. Unsplit kernels (nsplit == 1, one launch) run every stage and
// pass of a unit in turn, as the guards below all hold.
#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

int KernelEmitter::accumulate_level(const AscNode& reduce) const {
  return level_.at(static_cast<size_t>(reduce.inputs.at(0)));
}

bool KernelEmitter::accumulates(const AscNode& reduce) const {
  return slot_.at(static_cast<size_t>(reduce.id)) >= 0;
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

std::string KernelEmitter::reduction_arrays() const {
  std::string out;
  const int64_t lanes = tiling::max_tile(kernel_);
  const auto array = [&](const std::string& type, const std::string& name) {
    out += fmt::format("  {} {}[{}] __attribute__((aligned(64)));\n", type, name, lanes);
  };
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!live_[id] || !tile_vector_[id] || n.kind == AscKind::Store) continue;
    array(c_compute_type(n.dtype), fmt::format("v{}", n.id));
    if (replicated_[id]) array(c_compute_type(n.dtype), fmt::format("r{}", n.id));
    if (n.kind != AscKind::Reduce || !accumulates(n)) continue;
    const ReduceCode code = reduce_code(n.op, n.dtype);
    array(code.acc_type, fmt::format("a{}", n.id));
    if (code.tracks_nan) array("int", fmt::format("nan{}", n.id));
    if (acc_kind(n, depth_) != Acc::Chunked) continue;
    array(code.acc_type, fmt::format("k{}", n.id));
    array(code.acc_type, fmt::format("a{}c", n.id));
  }
  return out + moment_arrays();
}

std::string KernelEmitter::unit_loop_head() const {
  std::string out;
  out += "  int64_t seg = row_begin % nsplit;  // this unit's segment of its row (or tile)\n";
  if (column_) {
    out += "  const int64_t tw = td->tile;\n";
    if (fold_) out += "  const int64_t fold = td->fold;  // rows per tile loop\n";
    out += "  const int64_t ntiles = td->tiles;\n";
    out += fmt::format("  const int64_t pf_rows = td->{};  // tile rows prefetched ahead\n",
                       tiling::kPrefetchRowsField);
    out += "  (void)pf_rows;\n";
    out += "  int64_t tile = row_begin / nsplit % ntiles;\n";
    out += decompose_row("row_begin / nsplit / ntiles", "  ");
  } else {
    out += decompose_row("row_begin / nsplit", "  ");
  }
  return out;
}

std::string KernelEmitter::row_tile_indices(const std::string& ind) const {
  // Row `row` of the tiled order: tiles of t_ rows of the inner row axes
  // (flattened), each for every outer index; the last tile has what is left.
  const int outer = row_axes_.front();
  std::string inner = "(int64_t)1";
  for (size_t k = 1; k < row_axes_.size(); ++k)
    inner += " * " + size(row_axes_[k]);
  std::string out = fmt::format("{}if (td->{} > 0) {{  // rows in tiles (tiling.h)\n", ind,
                                tiling::kRowTileField);
  const std::string in1 = ind + "  ";
  out += fmt::format("{}const int64_t t_ = td->{}, on_ = {}, in_ = {};\n", in1,
                     tiling::kRowTileField, size(outer), inner);
  out += in1 + "const int64_t full_ = in_ / t_ * t_ * on_;  // rows of the whole tiles\n";
  out += in1 + "int64_t q_;\n";
  out += in1 + "if (row < full_) {\n";
  out += fmt::format("{}  i{} = row % (on_ * t_) / t_;\n", in1, outer);
  out += in1 + "  q_ = row / (on_ * t_) * t_ + row % t_;\n";
  out += in1 + "} else {\n";
  out += in1 + "  const int64_t r_ = in_ - in_ / t_ * t_;\n";
  out += fmt::format("{}  i{} = (row - full_) / r_;\n", in1, outer);
  out += in1 + "  q_ = in_ / t_ * t_ + (row - full_) % r_;\n";
  out += in1 + "}\n";
  for (size_t k = row_axes_.size(); k-- > 2;)
    out +=
        fmt::format("{0}i{1} = q_ % {2};\n{0}q_ /= {2};\n", in1, row_axes_[k], size(row_axes_[k]));
  out += fmt::format("{}i{} = q_;\n", in1, row_axes_[1]);
  return out + ind + "}\n";
}

std::string KernelEmitter::row_head(const std::string& ind) const {
  std::string out;
  const int axis = kernel_.inner_axes.front();
  if (split_possible()) {
    out += fmt::format("{}const int64_t lo = seg * td->seg_len;  // the segment of {}\n", ind,
                       graph_.axes.at(static_cast<size_t>(axis)).name);
    out += fmt::format("{}const int64_t hi = af_min(lo + td->seg_len, {});\n", ind, size(axis));
  } else {
    out += fmt::format("{}const int64_t lo = 0;  // the whole of {}\n", ind,
                       graph_.axes.at(static_cast<size_t>(axis)).name);
    out += fmt::format("{}const int64_t hi = {};\n", ind, size(axis));
  }
  if (column_) {
    out += ind + "const int64_t t0 = tile * tw;  // the tile\n";
    out += fmt::format("{}const int64_t t1 = af_min(t0 + tw, {});\n", ind, size(kernel_.tile_axis));
    if (fold_) out += ind + "const int64_t tf = t0 + fold * (t1 - t0);  // folded lanes\n";
  }
  out += row_bases(ind, /*constant=*/true);
  out += row_prefetch_offsets(ind);
  return out;
}

std::string KernelEmitter::row_loop(bool continued) const {
  std::string out;
  out += continued ? "  for (; row < row_end; ++row) {\n"
                   : "  for (int64_t row = row_begin; row < row_end; ++row) {\n";
  out += "    {\n";
  const std::string ind = "      ";
  if (unsplit_ && !groups_rows() && tiling::row_reuse_bytes(kernel_) != sym::Expr(0))
    out += row_tile_indices(ind);
  out += row_head(ind);
  bool jumps = false;
  for (int stage = 0; stage <= kernel_.num_passes; ++stage) {
    emit_stage(stage, ind, out);
    if (stage == kernel_.num_passes) break;
    prefetching_ = !prefetched_.empty() && stage == kernel_.num_passes - 1;
    emit_pass(stage, ind, out);
    prefetching_ = false;
    if (split_possible()) {
      out += fmt::format("{}if (nsplit > 1 && phase == {}) goto next_row;\n", ind, stage);
      jumps = true;
    }
  }
  out += "    }\n";
  if (jumps) out += "  next_row:\n";
  std::string next = advance_row("      ");
  if (column_)
    next = "      if (++tile == ntiles) {\n        tile = 0;\n" + advance_row("        ") +
           "      }\n";
  if (unsplit_)
    out += next;
  else
    out += "    if (++seg == nsplit) {\n      seg = 0;\n" + next + "    }\n";
  out += "  }\n";
  return out;
}

std::string KernelEmitter::emit_reduction() {
  AF_CHECK(kernel_.node_pass.size() == graph_.nodes.size() && kernel_.num_passes >= 1,
           "kernel {}: reduction schedule without passes", graph_.name);
  std::string out = fmt::format(
      "extern \"C\" void {}_kernel(const void* tiling_data, void* const* args, int64_t block_idx) "
      "{{\n",
      name_);
  out += prologue();
  out += "  const int64_t phase = block_idx / td->header.block_dim;  // the launch (split)\n";
  out += "  block_idx -= phase * td->header.block_dim;\n";
  out += "  const int64_t nsplit = td->split;  // segments per row or tile (1: not split)\n";
  if (!tiling::partial_reduces(kernel_).empty()) {
    int num_args = num_inputs_;
    for (const AscNode& n : graph_.nodes)
      num_args += n.kind == AscKind::Output ? 1 : 0;
    out += fmt::format("  char* const ws = nsplit > 1 ? (char*)args[{}] : (char*)0;  // partials\n",
                       num_args);
  }
  out += "  const int64_t row_begin = block_idx * td->chunk;\n";
  out += "  const int64_t row_end = af_min(row_begin + td->chunk, td->work);\n";
  out += "  if (row_begin >= row_end) return;\n";
  out += invariant_copies();                              // a block without work skips them
  out += per_call_nodes("block_idx == 0 && phase == 0");  // same for every row: once
  if (column_) out += reduction_arrays();
  plan_row_buffers();
  plan_row_prefetch();
  out += row_buffers();
  out += unit_loop_head();
  // The row loop twice: for unsplit rows (nsplit == 1, the common case)
  // without the split's segments, phases and partials, whose code cost
  // softmax over rows of 16 a fifth of its time (3.7 -> 3.0 us with them
  // removed by hand); then the general loop. Both compute each row the same
  // way, so they give bit-identical results.
  out += "  if (nsplit == 1) {  // rows not split\n";
  unsplit_ = true;
  if (groups_rows()) {
    out += "  int64_t row = row_begin;\n";
    out += grouped_row_loop();
    out += row_loop(/*continued=*/true);
  } else {
    out += row_loop();
  }
  unsplit_ = false;
  out += "  } else {\n";
  out += row_loop();
  out += "  }\n";
  out += fence_if_streamed("  ");
  out += "}\n";
  return out;
}

std::string KernelEmitter::stage_store_guard(int stage, bool tile_vector) const {
  std::string guard;
  if (column_ && !tile_vector) guard = "tile == 0";  // every tile of the row has the value
  if (split_possible()) {
    const std::string once = fmt::format("(nsplit == 1 || (seg == 0 && phase == {}))", stage);
    guard = guard.empty() ? once : guard + " && " + once;
  }
  return guard;
}

void KernelEmitter::emit_stage(int stage, const std::string& indent, std::string& out) const {
  const auto pass_of = [&](int id) { return kernel_.node_pass.at(static_cast<size_t>(id)); };
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!live_[id] || level_[id] != 0 || tile_vector_[id]) continue;
    if (n.kind == AscKind::Reduce) {
      if (pass_of(n.id) + 1 != stage) continue;
      const AscNode& input = node(n.inputs.at(0));
      std::string rhs;
      if (!accumulates(n)) {
        rhs = value(input.id);  // reducing a value that does not vary is the value
      } else {
        emit_combine(n.id, indent, out);
        rhs = reduce_result(n.op, n.dtype, acc(n.id), nan(n.id), reduce_count(n));
      }
      out += fmt::format("{}const {} {} = {};  // {}\n", indent, c_compute_type(n.dtype),
                         value(n.id), rhs, n.name);
      emit_gather_checks(n.id, indent, out);
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
    if (n.kind == AscKind::Store) {
      const std::string guard = stage_store_guard(stage, false);
      std::string store;
      emit_node(n, guard.empty() ? indent : "", store);
      out += guard.empty() ? store : fmt::format("{}if ({}) {}", indent, guard, store);
    } else {
      emit_node(n, indent, out);
    }
  }
  if (column_) emit_stage_tile_vectors(stage, indent, out);
}

void KernelEmitter::emit_stage_tile_vectors(int stage, const std::string& indent,
                                            std::string& out) const {
  const auto pass_of = [&](int id) { return kernel_.node_pass.at(static_cast<size_t>(id)); };
  const auto ready = [&](int id) {
    return node(id).kind == AscKind::Reduce ? pass_of(id) + 1 : pass_of(id);
  };
  std::vector<int> values, stores;
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!live_[id] || !tile_vector_[id] || ready(n.id) != stage) continue;
    (n.kind == AscKind::Store ? stores : values).push_back(n.id);
    if (n.kind == AscKind::Reduce && accumulates(n)) emit_combine(n.id, indent, out);
    if (n.kind == AscKind::Reduce) continue;
    for (int in : n.inputs) {
      if (node(in).kind == AscKind::Data || level_.at(static_cast<size_t>(in)) < 0) continue;
      AF_CHECK(kernel_.is_row_node.at(static_cast<size_t>(in)) && ready(in) <= stage,
               "kernel {}: tile vector {} (stage {}) reads {} (ready after {})", graph_.name,
               n.name, stage, node(in).name, ready(in));
    }
  }
  const int t = kernel_.tile_axis;
  const std::string head =
      fmt::format("{0}for (int64_t i{1} = t0; i{1} < t1; ++i{1}) {{\n", indent, t);
  if (!values.empty()) {
    emit_simd(values, indent, out, [&](const std::string& clauses) {
      out += "#pragma omp simd" + clauses + "\n" + head;
      for (int id : values) {
        const AscNode& n = node(id);
        if (n.kind != AscKind::Reduce) {
          emit_node(n, indent + "  ", out);
          continue;
        }
        const std::string rhs =
            accumulates(n) ? reduce_result(n.op, n.dtype, acc(id), nan(id), reduce_count(n))
                           : value(n.inputs.at(0));
        out += fmt::format("{}  {} = {};  // {}\n", indent, value(id), rhs, n.name);
      }
      out += indent + "}\n";
    });
    // Folding: the passes read them in `fold` copies, one per row of a group
    // (copy by copy: a `% (t1 - t0)` per lane stops the loop vectorizing and
    // cost a quarter of a [128, 1024] column kernel).
    std::string copies;
    for (int id : values)
      if (replicated_[static_cast<size_t>(id)])
        copies += fmt::format("r{0}[g_ + {1}] = v{0}[{1}]; ", id, tile_index());
    if (!copies.empty()) {
      out += indent + "for (int64_t g_ = 0; t1 > t0 && g_ < tf - t0; g_ += t1 - t0) {\n";
      out += tile_loop(indent + "  ", copies);
      out += indent + "}\n";
    }
  }
  if (!stores.empty()) {
    const std::string guard = stage_store_guard(stage, true);
    std::string ind = indent;
    if (!guard.empty()) {
      out += fmt::format("{}if ({}) {{\n", indent, guard);
      ind += "  ";
    }
    out +=
        fmt::format("#pragma omp simd\n{0}for (int64_t i{1} = t0; i{1} < t1; ++i{1}) {{\n", ind, t);
    for (int id : stores)
      emit_node(node(id), ind + "  ", out);
    out += ind + "}\n";
    if (!guard.empty()) out += indent + "}\n";
  }
}

}  // namespace autofuse::codegen::cpu
