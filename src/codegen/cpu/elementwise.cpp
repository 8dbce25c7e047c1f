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
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {
/// Rows up to this many elements get the constant-trip-count copy of the
/// row loop (longer ones amortize the per-row checks).
constexpr int64_t kShortStaticRow = 256;
}  // namespace

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
  out += fmt::format("  const int64_t ninner = {};\n", size(inner));
  out += "  int64_t c = begin % ninner;  // column of the current row segment\n";
  out += decompose_row("begin / ninner", "  ");
  out += "  for (int64_t f = begin; f < end;) {\n";
  out += "    const int64_t c_end = af_min(ninner, c + (end - f));\n";
  // Level 0: per row segment. Stores there are written by the segment that
  // starts the row, so each element is written once.
  for (const AscNode& n : graph_.nodes) {
    const int level = level_[static_cast<size_t>(n.id)];
    if (!live_[static_cast<size_t>(n.id)] || level < 0) continue;
    if (is_strided(n)) out += fmt::format("    const int64_t b{} = {};\n", n.id, row_base(n));
  }
  for (const AscNode& n : graph_.nodes) {
    if (!live_[static_cast<size_t>(n.id)] || level_[static_cast<size_t>(n.id)] != 0) continue;
    if (n.kind == AscKind::Store) {
      std::string store;
      emit_node(n, "", store);
      out += "    if (c == 0) " + store;
    } else {
      emit_node(n, "    ", out);
    }
  }
  out += strided_row_prefetches("    ");
  std::vector<int> body;
  for (const AscNode& n : graph_.nodes)
    if (live_[static_cast<size_t>(n.id)] && level_[static_cast<size_t>(n.id)] == 1)
      body.push_back(n.id);
  // A short row of static length: whole rows (all but a block's partial
  // first and last) run a loop of constant trip count, which g++ unrolls
  // with no epilogue; the per-row checks otherwise cost as much as the row
  // (attention_transpose bf16, rows of 64: [4, 12, 128, 64] 0.044 -> 0.038 ms).
  const std::optional<int64_t> row = graph_.axes.at(static_cast<size_t>(inner)).size.as_const();
  if (row && *row <= kShortStaticRow) {
    out += "    if (c == 0 && end - f >= ninner) {  // a whole row\n";
    emit_inner_loop(inner, "0", size(inner), body, "#pragma omp simd", nullptr, "      ", out);
    out += "      f += ninner;\n";
    out += advance_row("      ");
    out += "      continue;\n";
    out += "    }\n";
  }
  emit_inner_loop(inner, "c", "c_end", body, "#pragma omp simd", nullptr, "    ", out);
  out += "    f += c_end - c;\n";
  out += "    c = 0;\n";
  out += advance_row("    ");
  out += "  }\n";
  out += fence_if_streamed("  ");
  out += "}\n";
  return out;
}

}  // namespace autofuse::codegen::cpu
