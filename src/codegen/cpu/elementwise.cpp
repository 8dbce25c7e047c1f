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
/// Loop bodies of at least this many vector instructions per vector
/// (tiling::loop_traffic) are compiled with g++'s scheduling, AF_SCHEDULED.
/// Measured on Zen 5, one thread, A/B in one run: 33 and more gain (chain30
/// f32 0.81x, bf16 0.93x; swiglu bf16 0.92x; rotary bf16 0.97-1.0x); swiglu
/// f32 (25) lost 3-4% on its large shape, attention_transpose f32 (3) up to
/// 8% on its medium one.
constexpr int64_t kMinScheduledOps = 32;
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

std::string KernelEmitter::line_rows_flag(int axis, const std::string& indent) const {
  const std::optional<int64_t> extent = graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  if (!extent || depth_ != 1) return {};
  std::string terms;
  for (const AscNode& n : graph_.nodes) {
    if (!streamed_.at(static_cast<size_t>(n.id))) continue;
    const int64_t bytes = dtype_size(n.dtype);
    if (*extent * bytes % 64 != 0 || n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1))
      return {};
    for (int a : row_axes_) {
      const sym::Expr& stride = n.view.strides.at(static_cast<size_t>(a));
      if (const std::optional<int64_t> c = stride.as_const()) {
        if (*c * bytes % 64 != 0) return {};
        continue;
      }
      const std::string term = fmt::format(" && (int64_t)({}) * {} % 64 == 0", expr(stride), bytes);
      if (terms.find(term) == std::string::npos) terms += term;
    }
    terms += fmt::format(" && ((uintptr_t)&q{}[{}] & 63u) == 0",
                         output_of_store_.at(static_cast<size_t>(n.id)), address(n, axis, "0"));
  }
  if (terms.empty()) return {};
  return fmt::format("{}const bool nt_rows = AF_NT_STORES && td->header.tiling_key == {}{};\n",
                     indent, tiling::kStreamingStoresKey, terms);
}

std::string KernelEmitter::emit_elementwise() {
  if (tiles_.axis >= 0) return emit_elementwise_tiled();
  std::string out;
  // Long loop bodies get g++'s scheduling (kernel_prelude.h), declared with
  // the attribute first.
  scheduled_ = tiling::loop_traffic(kernel_).ops >= kMinScheduledOps;
  if (scheduled_)
    out = fmt::format(
        "extern \"C\" AF_SCHEDULED void {}_kernel(const void* tiling_data, void* const* args, "
        "int64_t block_idx);\n",
        name_);
  out += fmt::format(
      "extern \"C\" void {}_kernel(const void* tiling_data, void* const* args, int64_t block_idx) "
      "{{\n",
      name_);
  out += prologue();
  out += "  const int64_t begin = block_idx * td->chunk;\n";
  out += "  const int64_t end = af_min(begin + td->chunk, td->work);\n";
  out += "  if (begin >= end) return;\n";
  out += invariant_copies();  // a block without work skips them

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
  // Under the streaming key the loop needs rows of whole cache lines
  // (line_rows_flag): it streams them, each row's alignment known from the
  // first's; per-row tests of it cost ~15% (af_nt_store_aligned). Other rows
  // stream in the per-row form below, whose strided-row prefetches kept DRAM
  // busier than this loop without them did. Under key 2 (compute-bound)
  // this loop wins: attention_transpose bf16 [16, 1024] 1.05x and rotary
  // bf16 1.1x the time in the per-row form. Measured on an AVX2 Zen 3, one
  // thread, attention_transpose f32 [16, 12, 1024, 64] (rows of 256 bytes,
  // 3 KiB apart): the per-row form 5.0-5.4 ms, this loop 3.2-3.6.
  const std::string line_rows = short_row ? line_rows_flag(inner, "      ") : std::string();
  if (short_row) {
    out += streams() && line_rows.empty()
               ? fmt::format(
                     "    if (c == 0 && end - f >= ninner && td->header.tiling_key != {}) {{"
                     "  // whole rows\n",
                     tiling::kStreamingStoresKey)
               : "    if (c == 0 && end - f >= ninner) {  // whole rows\n";
    out += "      const int64_t whole = (end - f) / ninner;\n";
    out += row_bases("      ", /*constant=*/false);
    // The loop of rows in up to three copies, so that no row tests what the
    // loop could test once (a per-row test of the key and the prefetches'
    // bounds cost bf16 rows of 64 in the cache ~1%): streaming (where
    // nt_rows), prefetching (keys 1 and 2: data from memory) and plain.
    const auto rows_loop = [&](bool streaming, bool prefetching, const std::string& ind) {
      std::string loop = ind + "for (int64_t w = 0; w < whole; ++w) {\n";
      loop += row_nodes(ind + "  ", /*whole_row=*/true);
      if (prefetching)
        loop += strided_row_prefetches(ind + "  ") + whole_row_prefetches(ind + "  ");
      plain_loops_ = !streaming;
      line_rows_ = streaming;
      emit_inner_loop(inner, "0", size(inner), body, "#pragma omp simd", nullptr, ind + "  ", loop);
      plain_loops_ = false;
      line_rows_ = false;
      loop += step_row(ind + "  ");
      return loop + ind + "}\n";
    };
    const std::string ind = line_rows.empty() ? "      " : "        ";
    std::string rows = rows_loop(false, false, ind);
    if (rows != rows_loop(false, true, ind))
      rows =
          fmt::format("{}if (td->header.tiling_key == {}) {{\n", ind, tiling::kOrdinaryStoresKey) +
          rows_loop(false, false, ind + "  ") + ind + "} else {  // prefetching\n" +
          rows_loop(false, true, ind + "  ") + ind + "}\n";
    if (line_rows.empty()) {
      out += rows;
    } else {
      out += line_rows;
      out += "      if (nt_rows) {  // streaming whole lines\n";
      out += rows_loop(true, true, "        ");
      out += "      } else {\n";
      out += rows;
      out += "      }\n";
    }
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
  prefetching_ = !prefetched_.empty();                // the chunk loops prefetch a later row
  if (short_row && streams() && line_rows.empty()) {  // a whole row, streaming key
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
