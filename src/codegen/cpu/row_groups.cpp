// Short and medium rows in groups (the Reduction template's row layout,
// unsplit rows).
//
// A row of a few vectors is a chain of dependent steps: each pass ends in a
// horizontal reduction whose result the next pass broadcasts (softmax: max,
// then exp and sum, then the division). Row by row, that chain (~100 cycles
// for softmax's rows of 16) is most of the row's time: out-of-order
// execution overlaps only the next row or so. In groups, each pass runs over
// kGroupRows rows before the next pass starts, so the group's chains are
// independent work (a standalone softmax over rows of 16: 3.0 -> 2.1 us,
// session 8; generated, on an AVX2 Zen 3: softmax_mask bf16 rows of 16 and
// 64 0.82-0.84x of the time, f32 rows of 64 0.89x, f32 rows of 16 0.97x,
// those bound by exp's instruction count rather than by the chain). Rows
// of 65-1024 elements in groups of 4 or 2 where the loop body is long
// (kMinMediumGroupOps): a hand-written softmax over rows of 384 in the L3,
// Zen 5: 0.231 -> 0.214 ns per element (groups of 4: 0.224; from memory,
// groups of 4 and 8 were slower, their streaming stores in bursts). Groups
// of 4 where their last pass stores at most 2 KiB (kRowGroups): softmax_mask
// bf16 on Zen 5, one thread, against pairs: [2, 12, 128, 128] 0.92-0.93x
// (two threads 0.94x), [48, 12, 160, 160] 0.94x, [32, 12, 256, 256]
// 0.97-0.99x.
//
// The code is the row loop's own (stages and passes emitted as for one row)
// in one `for (g_ ...)` loop per pass; block p runs pass p and then stage
// p + 1, the one that reads pass p's accumulators, so only row-level values
// cross from one block to the next: each is saved to an array over the group
// after the block that defines it and read back in later blocks. The row
// indices are arrays too, and every block recomputes the row bases from
// them. Row buffers (row_buffers.cpp) get a slice per row of the group. The
// rows are computed exactly as one by one, so the results are bit-identical.
// While the blocks are emitted, grouped_ tells the passes that a row has at
// most group_row_max_ (<= 1024) elements and fits the row buffers: no
// long-row clause loop, no recomputing variant (short_row_reduce.cpp,
// reduction_pass.cpp). A Gather's row offsets (gather.cpp) are recomputed in
// each block from the saved index values.
#include <algorithm>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

/// A size of group: `rows` rows of at most `row_max` elements (and more
/// than the previous size's); with `burst_bytes`, only as long as the
/// group's rows store at most that many bytes along the row (their last
/// pass writes them at once). Short rows: 8, enough independent chains to
/// fill the out-of-order window, few enough that the row buffers' slices
/// stay in the L1. Medium rows (up to a short-row reduction's 1024, so their
/// reductions read buffers too): 4, then 2; the chain between passes (a
/// reduction tree, a division, a broadcast) is ~100 cycles against a few
/// hundred of work per pass. Larger bursts of streaming stores stall
/// (softmax_mask bf16 rows of 384 and 512 from memory in groups of 4:
/// 1.18-1.26x the time of pairs; the tanh-weighted f32 softmax of
/// RowGroups' tests, rows of 200 and 256: 1.01-1.05x, of 128: 0.98x).
struct RowGroup {
  int rows;
  int64_t row_max;
  int64_t burst_bytes;  // 0: no limit
};
constexpr RowGroup kRowGroups[] = {
    {8, kGroupRowMax, 0}, {4, 256, 2048}, {2, tiling::kShortReduceRow, 0}};
/// Medium rows run in groups only in kernels whose loop body costs at least
/// this many vector instructions per vector (tiling::loop_traffic): Zen 5,
/// one thread, A/B in one run: softmax_mask bf16 (43) [2, 12, 128, 128]
/// 0.93x, [8, 12, 384, 384] 0.89x, skip_layernorm bf16 (48) and
/// dlrm_concat bf16 0.96-1.01x; but memory-bound rows lost: rmsnorm f32 (6)
/// [32, 512, 1024] 1.21x, bf16 (22) 1.10x, skip_layernorm f32 (14) 1.11x.
constexpr int64_t kMinMediumGroupOps = 32;

/// Elements per row in a row buffer's slice: the longest row plus the pad a
/// short row's reduction writes after it, in whole vectors.
int64_t group_slice(int64_t row_max) {
  return (row_max + kRowReducePad + 15) / 16 * 16;
}

}  // namespace

int64_t KernelEmitter::group_row_max(int index) const {
  const int64_t above = index == 0 ? 0 : group_row_max(index - 1);
  const RowGroup& g = kRowGroups[index];
  int64_t row_max = g.row_max;
  if (g.burst_bytes > 0) {
    int64_t store_bytes = 0;  // per element of the row, over the Stores along it
    for (const AscNode& n : graph_.nodes)
      if (n.kind == AscKind::Store && n.view.varies_along(kernel_.inner_axes.front()))
        store_bytes += dtype_size(n.dtype);
    if (store_bytes > 0) row_max = std::min(row_max, g.burst_bytes / (g.rows * store_bytes));
  }
  return std::max(above, row_max);  // above: an empty range
}

bool KernelEmitter::group_fits(int index) const {
  // The sizes' ranges come from kRowGroups alone: where a size does not
  // apply, its rows run one by one. (The two medium sizes apply together:
  // the same conditions, and fours need less row buffer than pairs.)
  // Gathers in medium groups only (measured there: bert_embeddings).
  if (column_ || (has_gathers_ && index == 0) || depth_ != 1 || kernel_.inner_axes.size() != 1)
    return false;
  const RowGroup& g = kRowGroups[index];
  const int64_t row_max = group_row_max(index);
  const int64_t above = index == 0 ? 0 : group_row_max(index - 1);
  if (row_max <= above) return false;
  if (ub_capacity_ > 0 && ub_capacity_ < g.rows * group_slice(row_max)) return false;
  if (index > 0 && tiling::loop_traffic(kernel_).ops < kMinMediumGroupOps) return false;
  const std::optional<int64_t> n =
      graph_.axes.at(static_cast<size_t>(kernel_.inner_axes[0])).size.as_const();
  return !n || (*n > above && *n <= row_max);
}

bool KernelEmitter::groups_rows() const {
  for (int i = 0; i < static_cast<int>(std::size(kRowGroups)); ++i)
    if (group_fits(i)) return true;
  return false;
}

int KernelEmitter::group_block(int id) const {
  const AscNode& n = node(id);
  const int pass = kernel_.node_pass.at(static_cast<size_t>(id));
  const int stage = n.kind == AscKind::Reduce ? pass + 1 : pass;
  return stage > 0 ? stage - 1 : 0;
}

std::string KernelEmitter::grouped_row_loop() const {
  // One if-else chain, pairs before fours. g++ compiles a kernel's later
  // loops differently when more row loops come before them (all in one
  // function): behind a groups-of-4 loop as a separate `if`, softmax_mask
  // bf16 rows of 384 in pairs took 1.15x the time, as an `else if` 1.0x;
  // the f32 tanh-weighted softmax of RowGroups' tests, rows of 200 in pairs
  // behind fours, 1.12-1.17x, with pairs first 1.03x.
  std::string out;
  static_assert(std::size(kRowGroups) == 3, "the chain's order below names each size");
  for (int i : {0, 2, 1})
    if (group_fits(i)) out += row_group_loop(i, /*chained=*/!out.empty());
  return out;
}

std::string KernelEmitter::row_group_loop(int index, bool chained) const {
  const RowGroup& group = kRowGroups[index];
  const int64_t row_max = group_row_max(index);
  const int64_t above = index == 0 ? 0 : group_row_max(index - 1);
  const int axis = kernel_.inner_axes.front();
  const std::string g = std::to_string(group.rows);
  std::string out;
  out += chained ? "  else " : "  ";
  out += above == 0 ? fmt::format("if ({} <= {}) {{", size(axis), row_max)
                    : fmt::format("if ({0} > {1} && {0} <= {2}) {{", size(axis), above, row_max);
  out += fmt::format("  // rows in groups of {} (row_groups.cpp)\n", g);
  out += fmt::format("  for (; row_end - row >= {0}; row += {0}) {{\n", g);
  for (int a : row_axes_)
    out += fmt::format("    int64_t gi{}[{}];  // the rows' indices\n", a, g);
  out += fmt::format("    for (int g_ = 0; g_ < {}; ++g_) {{\n", g);
  for (int a : row_axes_)
    out += fmt::format("      gi{0}[g_] = i{0};\n", a);
  out += advance_row("      ");
  out += "    }\n";
  // Row-level values: saved after their block, read back in later ones.
  std::vector<int> values;
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!live_[id] || level_[id] != 0 || n.kind == AscKind::Store || n.kind == AscKind::Data)
      continue;
    if (group_block(n.id) + 1 >= kernel_.num_passes) continue;  // the last block's own
    values.push_back(n.id);
    out += fmt::format("    {} g{}[{}];  // {}\n", c_compute_type(n.dtype), value(n.id), g, n.name);
  }
  for (const AscNode& n : graph_.nodes)
    if (!ub_write_pass_.empty() && ub_write_pass_[static_cast<size_t>(n.id)] >= 0)
      out += fmt::format("    {0}* const ub{1}_all = ub{1};\n", c_compute_type(n.dtype), n.id);
  const std::string ind = "      ";
  grouped_ = true;
  group_row_max_ = row_max;
  for (int block = 0; block < kernel_.num_passes; ++block) {
    out += fmt::format("    for (int g_ = 0; g_ < {}; ++g_) {{\n", g);
    for (int a : row_axes_)
      out += fmt::format("{0}const int64_t i{1} = gi{1}[g_];\n", ind, a);
    out += row_head(ind);
    for (const AscNode& n : graph_.nodes)
      if (!ub_write_pass_.empty() && ub_write_pass_[static_cast<size_t>(n.id)] >= 0)
        out += fmt::format(
            "{0}{1}* __restrict const ub{2} = ub{2}_all + g_ * {3};  // this row's slice\n", ind,
            c_compute_type(n.dtype), n.id, group_slice(row_max));
    for (int id : values)
      if (group_block(id) < block) {
        out += fmt::format("{0}const {1} {2} = g{2}[g_];\n", ind, c_compute_type(node(id).dtype),
                           value(id));
        // The row offsets of the Gathers it indexes (gather.cpp), again: a
        // bad index reports the same error again, which changes nothing.
        emit_gather_checks(id, ind, out);
      }
    if (block == 0) emit_stage(0, ind, out);
    prefetching_ = !prefetched_.empty() && block == kernel_.num_passes - 1;
    emit_pass(block, ind, out);
    prefetching_ = false;
    emit_stage(block + 1, ind, out);
    for (int id : values)
      if (group_block(id) == block) out += fmt::format("{0}g{1}[g_] = {1};\n", ind, value(id));
    out += "    }\n";
  }
  grouped_ = false;
  out += "  }\n  }\n";
  return out;
}

}  // namespace autofuse::codegen::cpu
