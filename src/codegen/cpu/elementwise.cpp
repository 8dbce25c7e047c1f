// The Elementwise template: block b takes the flat elements
// [b * chunk, min((b + 1) * chunk, work)) of the iteration space, walked as
// row segments of the last axis (a partial first and last row when the range
// starts or ends inside a row). Per segment: the outer axes' multi-index is
// advanced, each buffer's base offset and the row-invariant nodes are
// computed, then the vectorized loop runs over the segment (with streaming
// stores under tiling_key 1: inner_loop.cpp).
#include <fmt/format.h>

#include <optional>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {
/// Rows up to this many elements get the constant-trip-count copy of the
/// row loop (longer ones amortize the per-row checks).
constexpr int64_t kShortStaticRow = 256;
}  // namespace

std::string KernelEmitter::row_bases(const std::string& indent, bool constant) const {
  std::string out;
  for (const AscNode& n : graph_.nodes) {
    const int level = level_[static_cast<size_t>(n.id)];
    if (!live_[static_cast<size_t>(n.id)] || level < 0 || !is_strided(n)) continue;
    out +=
        fmt::format("{}{}int64_t b{} = {};\n", indent, constant ? "const " : "", n.id, row_base(n));
  }
  return out;
}

std::string KernelEmitter::row_nodes(const std::string& indent, bool whole_row) const {
  std::string out;
  for (const AscNode& n : graph_.nodes) {
    if (!live_[static_cast<size_t>(n.id)] || level_[static_cast<size_t>(n.id)] != 0) continue;
    if (n.kind == AscKind::Store) {
      std::string store;
      emit_node(n, "", store);
      out += indent + (whole_row ? "" : "if (c == 0) ") + store;
    } else {
      emit_node(n, indent, out);
    }
  }
  return out;
}

std::string KernelEmitter::step_row(const std::string& indent) const {
  // The next row: the bases step along the last row axis; when an index
  // wraps, they are recomputed from the indices.
  if (row_axes_.empty()) return {};  // one row: nothing varies
  std::string step, rebase;
  const int last = row_axes_.back();
  for (const AscNode& n : graph_.nodes) {
    const int level = level_[static_cast<size_t>(n.id)];
    if (!live_[static_cast<size_t>(n.id)] || level < 0 || !is_strided(n)) continue;
    rebase += fmt::format(" b{} = {};", n.id, row_base(n));
    const sym::Expr& stride = n.view.strides.at(static_cast<size_t>(last));
    if (varies(n, last) && stride != sym::Expr(0))
      step += fmt::format(" b{} += {};", n.id, expr(stride));
  }
  if (row_axes_.size() == 1) return fmt::format("{}++i{};{}\n", indent, last, step);
  std::string wrap = advance(std::vector<int>(row_axes_.begin(), row_axes_.end() - 1), "");
  wrap.pop_back();  // its newline
  return fmt::format("{0}if (++i{1} == {2}) {{ i{1} = 0; {3}{4} }} else {{{5} }}\n", indent, last,
                     size(last), wrap, rebase, step);
}

std::string KernelEmitter::emit_elementwise() {
  if (tiles_.axis >= 0) return emit_elementwise_tiled();
  std::string out = fmt::format(
      "extern \"C\" void {}_kernel(const void* tiling_data, void* const* args, int64_t block_idx) "
      "{{\n",
      name_);
  out += prologue();
  out += "  const int64_t begin = block_idx * td->chunk;\n";
  out += "  const int64_t end = af_min(begin + td->chunk, td->work);\n";
  out += "  if (begin >= end) return;\n";

  // Level -1: once per call. A store there (an output that does not vary at
  // all) is written by the block that owns element 0.
  out += per_call_nodes("begin == 0");
  if (depth_ == 0) return out + "}\n";

  const int inner = kernel_.inner_axes.at(0);
  plan_stream_prefetch();
  out += fmt::format("  const int64_t ninner = {};\n", size(inner));
  out += "  int64_t c = begin % ninner;  // column of the current row segment\n";
  out += decompose_row("begin / ninner", "  ");
  out += "  for (int64_t f = begin; f < end;) {\n";
  std::vector<int> body;
  for (const AscNode& n : graph_.nodes)
    if (live_[static_cast<size_t>(n.id)] && level_[static_cast<size_t>(n.id)] == 1)
      body.push_back(n.id);
  // A short row of static length: whole rows (all but a block's partial
  // first and last) run one after another in a loop of their own, whose row
  // loop has a constant trip count (g++ unrolls it with no epilogue) and
  // whose row bases step by their stride instead of being recomputed from
  // the indices: the per-row work otherwise costs as much as the row
  // (attention_transpose, rows of 64: [4, 12, 128, 64] bf16 0.044 -> 0.038
  // ms with the constant trip count, 0.035 -> 0.025 with the stepping bases).
  const std::optional<int64_t> row = graph_.axes.at(static_cast<size_t>(inner)).size.as_const();
  const bool short_row = row && *row <= kShortStaticRow;
  if (short_row) {
    // Not under the streaming key: there the per-row form's prefetches of
    // later rows kept DRAM busier (attention_transpose f32 [16, 12, 1024,
    // 64] on one thread: 2.3 ms against 2.85 ms with this loop). Under key
    // 2 (compute-bound) this loop wins: attention_transpose bf16 [16, 1024]
    // 1.05x and rotary bf16 1.1x the time in the per-row form.
    out += streams() ? fmt::format(
                           "    if (c == 0 && end - f >= ninner && td->header.tiling_key != {}) {{"
                           "  // whole rows\n",
                           tiling::kStreamingStoresKey)
                     : "    if (c == 0 && end - f >= ninner) {  // whole rows\n";
    out += "      const int64_t whole = (end - f) / ninner;\n";
    out += row_bases("      ", /*constant=*/false);
    out += "      for (int64_t w = 0; w < whole; ++w) {\n";
    out += row_nodes("        ", /*whole_row=*/true);
    // (No strided-row prefetches and no streaming variants.)
    plain_loops_ = true;
    emit_inner_loop(inner, "0", size(inner), body, "#pragma omp simd", nullptr, "        ", out);
    plain_loops_ = false;
    out += step_row("        ");
    out += "      }\n";
    out += "      f += whole * ninner;\n";
    out += "      continue;\n";
    out += "    }\n";
  }
  out += "    const int64_t c_end = af_min(ninner, c + (end - f));\n";
  // Level 0: per row segment. Stores there are written by the segment that
  // starts the row, so each element is written once.
  out += row_bases("    ", /*constant=*/true);
  out += row_nodes("    ", /*whole_row=*/false);
  out += strided_row_prefetches("    ");
  out += row_prefetch_offsets("    ");
  prefetching_ = !prefetched_.empty();  // the chunk loops prefetch a later row
  if (short_row && streams()) {         // a whole row under the streaming key
    out += "    if (c == 0 && end - f >= ninner) {  // a whole row, streaming\n";
    emit_inner_loop(inner, "0", size(inner), body, "#pragma omp simd", nullptr, "      ", out);
    out += "      f += ninner;\n";
    out += advance_row("      ");
    out += "      continue;\n";
    out += "    }\n";
  }
  emit_inner_loop(inner, "c", "c_end", body, "#pragma omp simd", nullptr, "    ", out);
  prefetching_ = false;
  out += "    f += c_end - c;\n";
  out += "    c = 0;\n";
  out += advance_row("    ");
  out += "  }\n";
  out += fence_if_streamed("  ");
  out += "}\n";
  return out;
}

}  // namespace autofuse::codegen::cpu
