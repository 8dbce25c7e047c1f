// Software prefetch of a later row in the Reduction template's row layout.
//
// A kernel with several passes over a row (LayerNorm: mean, variance,
// output) reads the row from memory in pass 0 and from the L1 in the later
// passes, which compute and store but load nothing new. The hardware
// prefetcher only runs a few lines ahead of the demand loads, so while the
// later passes run no memory read is in flight, and pass 0 of the next row
// then waits for memory again: memory time and compute time add up instead
// of overlapping (skip-LayerNorm [8192, 768], 1 thread: in-cache rate 60 GB/s,
// memory-bound elementwise kernels with the same bytes 98% of STREAM, the
// three-pass kernel only 55%).
//
// So the last pass's chunk loop (tiling keys 1 and 2, used for outputs
// larger than the cache, with streaming and with ordinary stores;
// inner_loop.cpp) prefetches, per chunk of
// AF_NT_CHUNK elements, the same elements of the row kRowsAhead rows on of
// every input that pass 0 reads from memory, spread over the pass (a burst
// of prefetches at the start of the row stalls on the miss buffers and
// measured slower than none). Measured (`autofuse bench` on
// bench/models.py's skip_layernorm, B=16,S=512, 1 thread): 3.7-3.9 ms ->
// 3.0-3.2 ms. "Rows on" counts along the last row axis; near its end the
// offset is 0 (the row itself, in cache: a wasted prefetch, no branch, no
// address past the buffer). Only keys 1 and 2 prefetch: their rows come
// from memory. Only when those rows and this one fit the L2 (td->pf_rows,
// reduction_tiling.cpp): else what was prefetched rows ahead has left the
// L2 by the time pass 0 gets there, and the reads only cost bandwidth.
// Softmax (its last pass reads a row buffer, exp dominates) neither gained
// nor lost measurably on Zen 5; on session 41's Ice Lake the prefetches
// gain 11% (softmax_mask f32 [8, 12, 384, 384], one thread), and more from
// its exp pass, which computes while no memory access is in flight
// (vector_pass.cpp: row_prefetch_lines).
//
// Gathered rows (an embedding lookup: the table row of a per-row index,
// tables much larger than the cache) are what such kernels wait for most:
// the later row's index is loaded at the row's start and its table row
// prefetched the same way (bert_embeddings B=64,S=512,V=30522, 1 thread:
// 21.3 -> 11.6-12.5 ms; perf had shown half of the kernel's time on the
// first load of each gathered row).
//
// The Elementwise template's rows that reach the chunk loop (keys 1 and 2,
// rows of at least a chunk) prefetch the same way: per chunk, each Load's
// elements about kStreamBytesAhead on, in whole rows (plan_stream_prefetch).
// The hardware prefetcher falls behind a compute-heavy loop even on one
// sequential stream: swiglu f32 [16, 512] (gate and up, rows of 4 KiB) on
// one thread 2.6-2.9 -> 2.0-2.1 ms, 2 threads 1.58 -> 1.51; a plain
// x * w + b over [16384, 1024] 2.77 -> 2.48 / 1.26 -> 1.20; chain30 f32
// within noise (it is compute-bound). A kernel of one flat axis prefetches
// 4 KiB on inside the block's segment: x * sigmoid(x) over 16M floats on one
// thread 4.36 -> 3.68 ms (two threads: within noise).
//
// Besides, a Load whose consecutive rows
// are not consecutive in memory (a transposed read: attention's
// [B, S, H, 64] -> [B, H, S, 64] reads 256-byte rows 3 KiB apart) is a new
// short stream every row, which the hardware prefetcher does not follow:
// such rows (up to kMaxStridedRowBytes) are prefetched about
// kStridedBytesAhead ahead, a few lines per row at the row's start
// (strided_row_prefetches), under keys 1 and 2 (outputs larger than the
// cache; in the Elementwise whole-rows loop of short rows, its streaming and
// prefetching copies). attention_transpose B=16,S=1024, 1 thread: 3.6-4.0 ->
// 1.9-2.2 ms (16 rows ahead 2.2, 32 rows 1.9, 64 rows 2.3; an earlier
// machine). On session 15's AVX2 Zen 3, 2 KiB or 4 KiB ahead instead of 8
// gave 0.93-1.11x the time (noise), so 8 KiB stays.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;
using schedule::Template;

namespace {

/// Elements per chunk of keys 1 and 2: the prelude's AF_NT_CHUNK.
constexpr int64_t kStreamChunk = tiling::kStreamChunk;
/// How many rows ahead: bert_embeddings B=64,S=512,V=30522 (1 thread) 16.5 ms
/// one row ahead, 11.6-12.5 two, 11.9 four; contiguous rows (skip_layernorm)
/// the same for one and two.
constexpr int64_t kRowsAhead = tiling::kReductionRowsAhead;
/// Strided rows (Elementwise): only short ones, and this far ahead (about
/// 32 rows of 256 bytes, the best measured). A longer row is prefetched per
/// chunk like a contiguous one (plan_stream_prefetch): a burst of one
/// prefetch per line at the row's start holds the miss buffers while the
/// row computes. Measured on the Ice Lake of session 40 (bf16 gate * up
/// halves of [8192, 2 * W] rows, streaming stores, one thread): rows of 2 KiB
/// 11.5 GB/s in bursts, 14.8-16 spread over the row; 1 KiB 13.6 vs 16.5;
/// 512 bytes and less the same either way.
constexpr int64_t kMaxStridedRowBytes = 512;
constexpr int64_t kStridedBytesAhead = 8192;
/// Elementwise rows of other Loads (longer, or following each other in
/// memory): about this many bytes of the row's data ahead, in whole rows.
/// swiglu f32 [16, 512] on one thread (gate and up, rows of 4 KiB): 2.6-2.9
/// ms without, 2.0-2.1 one row (4 KiB) ahead, 2.1-2.2 two rows.
constexpr int64_t kStreamBytesAhead = 4096;

/// Elements of `dt` per 64-byte cache line: one prefetch each.
int64_t elements_per_line(DType dt) {
  return std::max<int64_t>(1, 64 / dtype_size(dt));
}

}  // namespace

int64_t KernelEmitter::strided_rows_ahead(const AscNode& n) const {
  if (row_axes_.empty() || depth_ != 1 || vector_axis_ < 0) return 0;
  const auto vec = static_cast<size_t>(vector_axis_);
  const std::optional<int64_t> length = graph_.axes.at(vec).size.as_const();
  if (!length || *length < 1) return 0;
  const auto id = static_cast<size_t>(n.id);
  if (n.kind != AscKind::Load || !live_[id] || level_[id] != 1 || buffered_[id]) return 0;
  if (node(n.inputs.at(0)).kind != AscKind::Data) return 0;
  const sym::Expr& next_row = n.view.strides.at(static_cast<size_t>(row_axes_.back()));
  // Rows that follow each other in memory are one stream: the hardware's.
  if (n.view.strides.at(vec) != sym::Expr(1) || next_row == sym::Expr(0) ||
      next_row == sym::Expr(*length))
    return 0;
  const int64_t row_bytes = *length * dtype_size(n.dtype);
  if (row_bytes > kMaxStridedRowBytes) return 0;
  return std::max<int64_t>(1, kStridedBytesAhead / row_bytes);
}

void KernelEmitter::plan_stream_prefetch() {
  // Elementwise rows that reach the streaming chunk loop: every Load read
  // along the row and moving along the last row axis, but the short strided
  // rows that strided_row_prefetches covers. A kernel of one flat axis (no
  // rows: its block's range is one segment) prefetches its contiguous Loads
  // kStreamBytesAhead on within the segment.
  prefetched_.clear();
  if (kernel_.kind != Template::Elementwise || depth_ != 1 || !streams()) return;
  const auto vec = static_cast<size_t>(vector_axis_);
  const std::optional<int64_t> length = graph_.axes.at(vec).size.as_const();
  if (length && *length < tiling::kStreamChunk) return;  // never in the chunk loop
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (n.kind != AscKind::Load || !live_[id] || level_[id] != 1 || buffered_[id]) continue;
    if (node(n.inputs.at(0)).kind != AscKind::Data || strided_rows_ahead(n) > 0) continue;
    if (n.view.strides.at(vec) != sym::Expr(1)) continue;
    if (!row_axes_.empty() &&
        n.view.strides.at(static_cast<size_t>(row_axes_.back())) == sym::Expr(0))
      continue;
    prefetched_.push_back(n.id);
  }
}

std::string KernelEmitter::prefetch_rows_ahead() const {
  if (kernel_.kind == Template::Reduction) return std::to_string(kRowsAhead);
  int64_t widest = 1;
  for (int id : prefetched_)
    widest = std::max<int64_t>(widest, dtype_size(node(id).dtype));
  const std::optional<int64_t> length =
      graph_.axes.at(static_cast<size_t>(vector_axis_)).size.as_const();
  if (length)
    return std::to_string(std::max<int64_t>(
        1, (kStreamBytesAhead + *length * widest - 1) / std::max<int64_t>(1, *length * widest)));
  const std::string row_bytes = fmt::format("af_max(1, {} * {})", size(vector_axis_), widest);
  return fmt::format("af_max(1, ({} + {} - 1) / {})", kStreamBytesAhead, row_bytes, row_bytes);
}

void KernelEmitter::plan_row_prefetch() {
  prefetched_.clear();
  if (column_ || depth_ < 1 || kernel_.num_passes < 2 || row_axes_.empty()) return;
  const auto last_row_axis = static_cast<size_t>(row_axes_.back());
  const PassPlan first = plan_pass(0);
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (n.kind != AscKind::Load && n.kind != AscKind::Gather) continue;
    if (!live_[id] || !first.need[id] || level_[id] < 1 || buffered_[id]) continue;
    if (n.view.strides.at(static_cast<size_t>(vector_axis_)) != sym::Expr(1)) continue;
    if (n.kind == AscKind::Load && node(n.inputs.at(0)).kind == AscKind::Data &&
        n.view.strides.at(last_row_axis) != sym::Expr(0)) {
      prefetched_.push_back(n.id);
    } else if (n.kind == AscKind::Gather && n.gather.size() == 1 && hoist_src_[id][0] >= 0) {
      // An embedding row per row: its index is one element the row level
      // loads; a later row's index is a later element along the last
      // row axis (if the same element: the same table row, in cache).
      const AscNode& index = node(hoist_src_[id][0]);
      if (index.kind == AscKind::Load && level_.at(static_cast<size_t>(index.id)) == 0 &&
          node(index.inputs.at(0)).kind == AscKind::Data &&
          index.view.strides.at(last_row_axis) != sym::Expr(0))
        prefetched_.push_back(n.id);
    }
  }
}

std::string KernelEmitter::row_prefetch_offsets(const std::string& indent) const {
  if (prefetched_.empty() || row_axes_.empty()) return {};  // flat: row_prefetches
  const int a = row_axes_.back();
  const std::string ahead = prefetch_rows_ahead();
  // Reduction: only rows that stay in the L2 until pass 0 reads them (the
  // tiling's flag).
  const std::string fits = kernel_.kind == Template::Reduction
                               ? fmt::format(" && td->{} > 0", tiling::kPrefetchRowsField)
                               : std::string();
  std::string out = fmt::format("{}const bool pf_more = i{} + {} < {}{};  // a row to prefetch\n",
                                indent, a, ahead, size(a), fits);
  for (int id : prefetched_) {
    const AscNode& n = node(id);
    if (n.kind == AscKind::Load) {  // pf<id>: from this row's element to the later row's
      out += fmt::format("{}const int64_t pf{} = pf_more ? {} * (int64_t)({}) : 0;\n", indent, id,
                         ahead, expr(n.view.strides.at(static_cast<size_t>(a))));
      continue;
    }
    // A Gather: pf<id> is the later row's table row offset (its bad index
    // reads row 0 here; the row's own check reports it).
    const AscNode& index = node(hoist_src_.at(static_cast<size_t>(id)).at(0));
    const std::string bound = fmt::format("(int64_t)({})", expr(n.gather[0].size));
    const std::string next =
        load_expr(index.dtype,
                  fmt::format("p{}[b{} + {} * ({})]", node(index.inputs.at(0)).arg_index, index.id,
                              kRowsAhead, expr(index.view.strides.at(static_cast<size_t>(a)))));
    out += fmt::format("{}int64_t pf{} = 0;  // {}: the table row {} rows on\n", indent, id, n.name,
                       kRowsAhead);
    out += fmt::format(
        "{0}if (pf_more) {{ const int64_t r_ = (int64_t){1}; const int64_t w_ = {2}; "
        "pf{3} = ((uint64_t)w_ < (uint64_t){4} ? w_ : 0) * ({5}); }}\n",
        indent, next, wrapped_index(index.dtype, "r_", bound), id, bound, expr(n.gather[0].stride));
  }
  return out;
}

std::string KernelEmitter::row_prefetches(int axis, const std::string& at,
                                          const std::string& indent) const {
  return prefetching_ ? row_prefetch_lines(axis, at, indent) : std::string();
}

std::string KernelEmitter::row_prefetch_lines(int axis, const std::string& at,
                                              const std::string& indent) const {
  if (axis != vector_axis_) return {};
  std::string out;
  if (row_axes_.empty()) {  // one flat axis: ahead within the segment [.., nt_hi)
    for (int id : prefetched_) {
      const AscNode& n = node(id);
      const int64_t ahead = kStreamBytesAhead / dtype_size(n.dtype);
      out += fmt::format("{}if ({} + {} + AF_NT_CHUNK <= nt_hi) {{  // {}\n", indent, at, ahead,
                         n.name);
      for (int64_t k = 0; k < kStreamChunk; k += elements_per_line(n.dtype))
        out += fmt::format("{}  __builtin_prefetch(&p{}[{}]);\n", indent,
                           node(n.inputs.at(0)).arg_index,
                           address(n, axis, fmt::format("{} + {}", at, k + ahead)));
      out += indent + "}\n";
    }
    return out;
  }
  for (int id : prefetched_) {
    const AscNode& n = node(id);
    for (int64_t k = 0; k < kStreamChunk; k += elements_per_line(n.dtype))
      out += fmt::format("{}__builtin_prefetch(&p{}[{} + pf{}]);\n", indent,
                         node(n.inputs.at(0)).arg_index,
                         address(n, axis, fmt::format("{} + {}", at, k)), id);
  }
  return out;
}

std::string KernelEmitter::chunk_prefetches(const std::vector<int>& body, int axis,
                                            const std::string& indent) const {
  const std::string hi = axis == kernel_.inner_axes.front() ? "hi" : size(axis);
  std::string out;
  for (int id : body) {
    const AscNode& n = node(id);
    if (n.kind != AscKind::Load || buffered_.at(static_cast<size_t>(id)) ||
        node(n.inputs.at(0)).kind != AscKind::Data ||
        n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1))
      continue;
    out += fmt::format(
        "{}for (int64_t k_ = ch_end; k_ < af_min(ch_end + (ch_end - ch), {}); k_ += {}) "
        "__builtin_prefetch(&p{}[{}]);  // {}: the next chunk\n",
        indent, hi, elements_per_line(n.dtype), node(n.inputs.at(0)).arg_index,
        address(n, axis, "k_"), n.name);
  }
  return out;
}

std::string KernelEmitter::column_prefetches(int level, const std::string& tile_end,
                                             const std::vector<int>& body,
                                             const std::string& indent, const std::string& ahead,
                                             const std::string& hint,
                                             const std::string& lane) const {
  if (!column_ || level < 1) return {};
  const int axis = kernel_.inner_axes.at(static_cast<size_t>(level - 1));
  const std::string hi = axis == kernel_.inner_axes.front() ? "hi" : size(axis);
  std::string lines;
  for (int id : body) {
    const AscNode& n = node(id);
    if (n.kind != AscKind::Load || buffered_.at(static_cast<size_t>(id)) ||
        node(n.inputs.at(0)).kind != AscKind::Data)
      continue;
    const sym::Expr& along = n.view.strides.at(static_cast<size_t>(axis));
    if (n.view.strides.at(static_cast<size_t>(kernel_.tile_axis)) != sym::Expr(1) ||
        along == sym::Expr(0))
      continue;
    const std::string at = fmt::format("&p{}[{} + {} * ({})]{}", node(n.inputs.at(0)).arg_index,
                                       address(n, kernel_.tile_axis, lane.empty() ? "k_" : lane),
                                       ahead, expr(along), hint);
    lines += lane.empty() ? fmt::format(
                                "{}  for (int64_t k_ = t0; k_ < {}; k_ += {}) "
                                "__builtin_prefetch({});  // {}\n",
                                indent, tile_end, elements_per_line(n.dtype), at, n.name)
                          : fmt::format("{}  __builtin_prefetch({});  // {}\n", indent, at, n.name);
  }
  if (lines.empty()) return {};
  return fmt::format("{}if (pf_rows > 0 && i{} + {} < {}) {{\n", indent, axis, ahead, hi) + lines +
         indent + "}\n";
}

std::string KernelEmitter::whole_row_prefetches(const std::string& indent) const {
  if (prefetched_.empty() || row_axes_.empty()) return {};
  const std::optional<int64_t> length =
      graph_.axes.at(static_cast<size_t>(vector_axis_)).size.as_const();
  AF_CHECK(length.has_value(), "kernel {}: whole rows of no constant length", graph_.name);
  const int a = row_axes_.back();
  const std::string ahead = prefetch_rows_ahead();
  std::string out = fmt::format("{}if (td->header.tiling_key != {} && i{} + {} < {}) {{\n", indent,
                                tiling::kOrdinaryStoresKey, a, ahead, size(a));
  for (int id : prefetched_) {
    const AscNode& n = node(id);
    for (int64_t k = 0; k < *length; k += elements_per_line(n.dtype))
      out +=
          fmt::format("{}  __builtin_prefetch(&p{}[{} + {} * ({})]);  // {}\n", indent,
                      node(n.inputs.at(0)).arg_index, address(n, vector_axis_, std::to_string(k)),
                      ahead, expr(n.view.strides.at(static_cast<size_t>(a))), n.name);
  }
  return out + indent + "}\n";
}

std::string KernelEmitter::strided_row_prefetches(const std::string& indent) const {
  if (row_axes_.empty() || depth_ != 1 || vector_axis_ < 0) return {};
  const auto vec = static_cast<size_t>(vector_axis_);
  const std::optional<int64_t> length = graph_.axes.at(vec).size.as_const();
  if (!length || *length < 1) return {};
  // Only under keys 1 and 2 (more data than the cache): on data in the
  // cache the prefetches cost (a [4, 12, 128, 64] transpose 0.033 -> 0.036
  // ms) and gain nothing.
  if (!streams()) return {};
  const int last = row_axes_.back();
  std::string out;
  for (const AscNode& n : graph_.nodes) {
    const int64_t ahead = strided_rows_ahead(n);
    if (ahead == 0) continue;
    const sym::Expr& next_row = n.view.strides.at(static_cast<size_t>(last));
    out += fmt::format(
        "{}if (td->header.tiling_key != {} && i{} + {} < {}) {{  // {}: the row {} on (strided)\n",
        indent, tiling::kOrdinaryStoresKey, last, ahead, size(last), n.name, ahead);
    for (int64_t k = 0; k < *length; k += elements_per_line(n.dtype))
      out += fmt::format("{}  __builtin_prefetch(&p{}[b{} + {} * ({}) + {}]);\n", indent,
                         node(n.inputs.at(0)).arg_index, n.id, ahead, expr(next_row), k);
    out += indent + "}\n";
  }
  return out;
}

}  // namespace autofuse::codegen::cpu
