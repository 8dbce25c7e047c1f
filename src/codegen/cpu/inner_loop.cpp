// The innermost (vectorized) loop of both templates, and its streaming-store
// variant. With streamed stores (tiling::streams) the loop over [lo, hi) is:
//
//   if (key 1 && hi - lo >= AF_NT_CHUNK) {    // per row: outside the hot loops
//     nt_lo = lo + elements until the first streamed store's address is
//             64-byte aligned;
//     nt_hi = nt_lo + whole chunks of AF_NT_CHUNK elements;
//     for part in {[lo, nt_lo), [nt_hi, hi)}: // ordinary stores
//       simd loop; after the first part:
//       for each chunk in [nt_lo, nt_hi):
//         simd loop storing into aligned chunk buffers t<id>[AF_NT_CHUNK];
//         af_nt_store(&q[...], t<id>, sizeof t<id>)   // whole 64-byte lines
//   } else if (key 2 && hi - lo >= AF_NT_CHUNK) {  // compute-bound, large;
//     for each chunk in [lo, nt_hi):          // only a loop that prefetches
//       the later rows' prefetches, simd loop;
//     simd loop over [nt_hi, hi)              // ordinary stores throughout
//   } else {                                  // key 0, or a short row
//     simd loop over [lo, hi)                 // (the parts and chunks cost
//   }                                         // softmax rows of 16 ~10%)
//
// A row of a constant length L < AF_NT_CHUNK whose streamed stores each
// cover whole cache lines streams whole instead, when hi - lo == L: the
// simd loop stores into buffers t<id>[L], then af_nt_store.
//
// A chunk is 64 elements, so a whole number of cache lines for every dtype;
// a streamed output that is not aligned where the first one is (another
// dtype or row offset) gets ordinary stores from af_nt_store. Each element is
// computed by the same expressions in either variant, so both keys give
// bit-identical results. The kernel ends with af_nt_fence under key 1.
// Each chunk of keys 1 and 2 starts with the prefetches of later rows
// (row_prefetch.cpp).
//
// bf16 stores that stream (the same legality: splitting the loop changes
// no result) are rounded by the chunk where the prelude can (AF_BF16_CVT:
// AVX512-BF16's vcvtne2ps2bf16, kernel_prelude_stores.h): key 1's chunk buffers
// then hold f32 (af_bf16_chunk_t), and key 0's loop and key 2's chunks come
// in two forms, `#if AF_BF16_CVT` chunks of f32 buffers rounded by
// af_bf16_store, `#else` the loops above. Elsewhere nothing changes.
//
// A scheduled Elementwise kernel (AF_SCHEDULED, elementwise.cpp) runs its
// loops with ordinary stores (key 0; key 2) by the chunk as well, every
// streamed store into a chunk buffer copied out after the chunk, so that
// g++'s scheduler can interleave the chunk's vectors.
//
// An Elementwise kernel's chunk loops (all of the above that run by the
// chunk) compute each f32 Sigmoid in two steps (chunk_sigmoid_prologue): a
// loop over the chunk writes -|x| to e<id>[AF_NT_CHUNK] and
// af_exp_nonpos_row exponentiates it (16 lanes with vscalefps under
// AVX-512), then the chunk's loop finishes sigmoid from it
// (af_sigmoid_from_exp) with the same bits as af_sigmoid. SiLU times an
// operand in the L1 (ns per element, one thread, Zen 5): 0.167 -> 0.137;
// built for AVX2 0.367 -> 0.311 (the exp's chain no longer shares the
// loop with the rest); swiglu bf16 0.89-0.94x.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {
/// g++ 12's lanes for loops over 16-bit values (see short_loop_variant).
constexpr int64_t kNarrowLanes = 32;
/// Whole rows whose bf16 stores are rounded by the vector: a multiple of
/// 16 lanes, at most this long (their f32 buffers live on the stack).
constexpr int64_t kBf16RowLanes = 16;
constexpr int64_t kBf16RowMax = 1024;
constexpr int64_t kBf16RowBufferBytes = 32 << 10;  // all of a loop's buffers
}  // namespace

// The statements of a loop body in an order that keeps few vectors live:
// depth first from each value the loop does not read itself (the values its
// updates and row buffers take first, then the stores), operands before their
// users, and each store right after the value it stores. g++ allocates
// registers in statement order, so all loads first, then all products, then
// all stores kept every value live at once: dlrm's 26 pieces summed by a
// tree spilled most of them (bf16 [2048, 416] 0.200 -> 0.170 ms).
std::vector<int> KernelEmitter::register_order(const std::vector<int>& nodes) const {
  std::vector<int> in_loop(graph_.nodes.size(), -1);  // position in `nodes`, or -1
  for (size_t i = 0; i < nodes.size(); ++i)
    in_loop[static_cast<size_t>(nodes[i])] = static_cast<int>(i);
  std::vector<std::vector<int>> users(nodes.size());
  for (int id : nodes)
    for (int in : operands(node(id)))
      if (in_loop[static_cast<size_t>(in)] >= 0)
        users[static_cast<size_t>(in_loop[static_cast<size_t>(in)])].push_back(id);
  std::vector<bool> done(nodes.size(), false);
  std::vector<int> order;
  order.reserve(nodes.size());
  const auto ready = [&](int id) {
    for (int in : operands(node(id)))
      if (in_loop[static_cast<size_t>(in)] >= 0 &&
          !done[static_cast<size_t>(in_loop[static_cast<size_t>(in)])])
        return false;
    return true;
  };
  const auto visit = [&](const auto& self, int id) -> void {
    const auto at = static_cast<size_t>(in_loop[static_cast<size_t>(id)]);
    if (done[at]) return;
    for (int in : operands(node(id)))
      if (in_loop[static_cast<size_t>(in)] >= 0) self(self, in);
    if (done[at]) return;  // a store, already placed right after its operand
    done[at] = true;
    order.push_back(id);
    for (int user : users[at])
      if (node(user).kind == AscKind::Store && ready(user)) self(self, user);
  };
  for (bool stores : {false, true})
    for (size_t i = 0; i < nodes.size(); ++i)
      if (users[i].empty() && (node(nodes[i]).kind == AscKind::Store) == stores)
        visit(visit, nodes[i]);
  AF_CHECK(order.size() == nodes.size(), "kernel {}: a loop body's order lost nodes", graph_.name);
  return order;
}

void KernelEmitter::emit_inner_loop(int axis, const std::string& lo, const std::string& hi,
                                    const std::vector<int>& loop_nodes,
                                    const std::string& base_pragma,
                                    const std::function<std::string(const std::string&)>& updates,
                                    const std::string& indent, std::string& out) const {
  const std::vector<int> nodes = register_order(loop_nodes);
  // Gathers in the loop add reduction clauses (gather.cpp).
  emit_simd(nodes, indent, out, [&](const std::string& clauses) {
    const std::string pragma = base_pragma + clauses;
    const ShortLoops short_loops = short_loop_variant(axis, nodes);
    if (short_loops == ShortLoops::None) {
      emit_loop_variants(axis, lo, hi, nodes, pragma, updates, indent, out);
      return;
    }
    if (short_loops == ShortLoops::Only) {  // (streams only as whole row spans)
      emit_loop_variants(axis, lo, hi, nodes, pragma + " simdlen(16)", updates, indent, out);
      return;
    }
    out += fmt::format("{}if ({} - {} < {}) {{  // a short row: 16 lanes\n", indent, hi, lo,
                       kNarrowLanes);
    emit_plain_loop(axis, lo, hi, nodes, pragma + " simdlen(16)", updates, indent + "  ", out);
    out += indent + "} else {\n";
    emit_loop_variants(axis, lo, hi, nodes, pragma, updates, indent + "  ", out);
    out += indent + "}\n";
  });
}

// g++ 12 vectorizes a loop that loads or stores 16-bit values with 32 lanes
// (two f32 vectors per op), and a trip count below 32 skips both the vector
// loop and its vectorized epilogue: the row runs scalar (softmax bf16 rows of
// 16: 24.5 us against 4.6 us in f32). simdlen(16) vectorizes such rows with
// 16 lanes; long rows keep 32 (simdlen(16) everywhere made them 20-50% slower).
ShortLoops KernelEmitter::short_loop_variant(int axis, const std::vector<int>& nodes) const {
  const bool narrow = std::any_of(nodes.begin(), nodes.end(), [&](int id) {
    const AscNode& n = node(id);
    const bool memory =
        n.kind == AscKind::Load || n.kind == AscKind::Gather || n.kind == AscKind::Store;
    return memory && dtype_size(n.dtype) == 2;
  });
  if (!narrow) return ShortLoops::None;
  const std::optional<int64_t> extent = graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  if (!extent) return ShortLoops::Branch;
  return *extent < kNarrowLanes ? ShortLoops::Only : ShortLoops::None;
}

std::vector<int> KernelEmitter::whole_row_bf16_stores(int axis,
                                                      const std::vector<int>& nodes) const {
  const std::optional<int64_t> extent = graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  if (axis != vector_axis_ || !extent || *extent % kBf16RowLanes != 0 || *extent > kBf16RowMax)
    return {};
  std::vector<int> out;
  for (int id : nodes) {
    const AscNode& n = node(id);
    // Streamed stores of rows of a chunk or more are rounded by the chunk
    // (emit_loop_variants).
    if (n.kind != AscKind::Store || n.dtype != DType::bf16 ||
        (streamed_.at(static_cast<size_t>(id)) && *extent >= tiling::kStreamChunk) ||
        n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1))
      continue;
    out.push_back(id);
  }
  if (static_cast<int64_t>(out.size()) * *extent * 4 > kBf16RowBufferBytes ||
      !whole_spans(out, *extent))
    return {};
  return out;
}

std::vector<int> KernelEmitter::span_starts(const std::vector<int>& stores) const {
  std::vector<int> starts;
  for (int id : stores)
    if (spans_.at(static_cast<size_t>(id)).first == id) starts.push_back(id);
  return starts;
}

bool KernelEmitter::whole_spans(const std::vector<int>& stores, int64_t extent) const {
  for (int id : stores) {
    const tiling::RowSpan& span = spans_.at(static_cast<size_t>(id));
    if (span.first < 0) return false;
    const auto pieces = std::count_if(stores.begin(), stores.end(), [&](int other) {
      return spans_.at(static_cast<size_t>(other)).first == span.first;
    });
    if (pieces * extent != span.length ||
        std::find(stores.begin(), stores.end(), span.first) == stores.end())
      return false;
  }
  return true;
}

void KernelEmitter::emit_plain_loop(int axis, const std::string& lo, const std::string& hi,
                                    const std::vector<int>& nodes, const std::string& pragma,
                                    const std::function<std::string(const std::string&)>& updates,
                                    const std::string& indent, std::string& out) const {
  const auto loop = [&](const std::string& ind, const std::vector<int>& buffered) {
    return simd_loop(
        axis, lo, hi, nodes, pragma,
        [&](int id) {
          return std::find(buffered.begin(), buffered.end(), id) != buffered.end()
                     ? StoreTo::Span
                     : StoreTo::Output;
        },
        updates, ind);
  };
  const std::vector<int> rounded = whole_row_bf16_stores(axis, nodes);
  if (rounded.empty()) {
    out += loop(indent, {});
    return;
  }
  // A whole row of a constant length: its bf16 stores go to f32 buffers,
  // rounded by the vector after the loop (AF_BF16_CVT, kernel_prelude_stores.h),
  // one buffer per row span (dlrm_concat's 26 pieces of 16: one of 416).
  // The loop is not split, so any loop may.
  const int64_t length = *graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  const std::string in1 = indent + "  ";
  out += "#if AF_BF16_CVT  // bf16 stores rounded by the vector\n";
  out += fmt::format("{}if ({} - {} == {}) {{\n", indent, hi, lo, length);
  out += fmt::format("{}const int64_t nt_k = {};\n", in1, lo);
  for (int id : span_starts(rounded))
    out += fmt::format("{}af_bf16_chunk_t t{}[{}] __attribute__((aligned(64)));\n", in1, id,
                       spans_.at(static_cast<size_t>(id)).length);
  out += loop(in1, rounded);
  for (int id : span_starts(rounded))
    out += fmt::format(
        "{}af_bf16_store(&q{}[{}], t{}, {});\n", in1, output_of_store_.at(static_cast<size_t>(id)),
        address(node(id), axis, "nt_k"), id, spans_.at(static_cast<size_t>(id)).length);
  out += indent + "} else {\n";
  out += loop(in1, {});
  out += indent + "}\n";
  out += "#else\n";
  out += loop(indent, {});
  out += "#endif\n";
}

std::vector<int> KernelEmitter::chunk_sigmoid_ids(int axis, const std::vector<int>& nodes) const {
  // (Not with Gathers: their checks belong to one loop.)
  if (kernel_.kind != schedule::Template::Elementwise || axis != vector_axis_ || has_gathers_)
    return {};
  std::vector<int> ids;
  for (int id : nodes) {
    const AscNode& n = node(id);
    if (n.kind != AscKind::Compute || n.op != OpKind::Sigmoid) continue;
    const DType operand = node(n.inputs.at(0)).dtype;
    if (c_compute_type(operand) == "float" && !is_float8(operand)) ids.push_back(id);
  }
  return ids;
}

bool KernelEmitter::chunk_sigmoid(int id) const {
  return chunk_exp_index_.empty() &&
         std::count(chunk_sigmoids_.begin(), chunk_sigmoids_.end(), id) > 0;
}

std::string KernelEmitter::chunk_sigmoid_prologue(int axis, const std::vector<int>& nodes,
                                                  const std::string& indent) const {
  const std::vector<int> ids = chunk_sigmoid_ids(axis, nodes);
  // Where the chunk's loop takes the f16 form (simd_loop), these loops do:
  // the buffers in the loop's order.
  chunk_sigmoids_ = ids;
  const std::vector<bool> f16c = f16c_lanes(axis, nodes);
  const std::string f16c_if = f16c.empty() ? std::string()
                                           : "#if " + f16c_condition(nodes) +
                                                 "  // f16 by F16C, 16 lanes (lane_loops.cpp)\n";
  chunk_sigmoids_.clear();
  std::string out;
  for (int id : ids) {
    const AscNode& n = node(id);
    // The loop's nodes its operand needs, in loop order.
    std::vector<bool> needed(graph_.nodes.size(), false);
    needed.at(static_cast<size_t>(n.inputs.at(0))) = true;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
      if (needed.at(static_cast<size_t>(*it)))
        for (int in : operands(node(*it)))
          needed.at(static_cast<size_t>(in)) = true;
    std::vector<int> chain;
    for (int other : nodes)
      if (needed.at(static_cast<size_t>(other))) chain.push_back(other);
    out += fmt::format("{}float e{}[AF_NT_CHUNK] __attribute__((aligned(64)));  // e^-|x|, {}\n",
                       indent, id, n.name);
    std::string loop = "#pragma omp simd\n";
    loop += fmt::format("{0}for (int64_t i{1} = nt_k; i{1} < nt_k + AF_NT_CHUNK; ++i{1}) {{\n",
                        indent, axis);
    for (int c : chain)
      emit_node(node(c), indent + "  ", loop);
    loop += fmt::format("{}  e{}[i{} - nt_k] = af_neg_abs({});\n", indent, id, axis,
                        value(n.inputs.at(0)));
    loop += indent + "}\n";
    if (!f16c.empty()) {
      const std::string in1 = indent + "  ";
      out += f16c_if;
      out += fmt::format("{0}for (int64_t i{1} = nt_k; i{1} < nt_k + AF_NT_CHUNK; i{1} += 16) {{\n",
                         indent, axis);
      out += in1 + "const int64_t n_ = 16;  // whole vectors\n";
      out += vector_statements(chain, f16c, in1, {}, axis);
      out += fmt::format(
          "{0}{{ const af_f32x16 a_ = af_neg_abs({1}); af_store16(&e{2}[i{3} - nt_k], "
          "&a_, n_); }}\n",
          in1, value(n.inputs.at(0)), id, axis);
      out += indent + "}\n";
    }
    // Where the chunk's loop is word pairs (word_pairs.cpp), this one is
    // too, and the buffer holds the chunk's even elements, then its odd ones.
    if (word_pairs_fit(axis, nodes, "")) {
      out += f16c.empty() ? "#if" : "#elif";
      out += " AF_WORD_PAIRS  // the even elements, then the odd ones (word_pairs.cpp)\n";
      out += "#pragma omp simd\n";
      out += fmt::format("{}for (int64_t w_ = 0; w_ < AF_NT_CHUNK / 2; ++w_) {{\n", indent);
      out += indent + "  const int64_t wp_i = nt_k + 2 * w_;\n";
      out += word_pair_statements(
          axis, chain,
          [&](int half, const std::string& ind) {
            return fmt::format("{}e{}[{}w_] = af_neg_abs({});\n", ind, id,
                               half == 0 ? "" : "AF_NT_CHUNK / 2 + ", value(n.inputs.at(0)));
          },
          indent + "  ");
      out += indent + "}\n";
      out += "#else\n" + loop + "#endif\n";
    } else {
      out += f16c.empty() ? loop : "#else\n" + loop + "#endif\n";
    }
    out += fmt::format("{}af_exp_nonpos_row(e{}, AF_NT_CHUNK);\n", indent, id);
    chunk_sigmoids_.push_back(id);
  }
  return out;
}

void KernelEmitter::emit_loop_variants(
    int axis, const std::string& lo, const std::string& hi, const std::vector<int>& nodes,
    const std::string& pragma, const std::function<std::string(const std::string&)>& updates,
    const std::string& indent, std::string& out) const {
  std::vector<int> streamed;
  for (int id : nodes)
    if (streamed_.at(static_cast<size_t>(id))) streamed.push_back(id);
  AF_CHECK(streamed.empty() || axis == vector_axis_,
           "kernel {}: streamed stores outside the innermost loop", graph_.name);
  if (streamed.empty() || plain_loops_) {
    emit_plain_loop(axis, lo, hi, nodes, pragma, updates, indent, out);
    return;
  }
  // A loop that streams and has updates is a short row's: they write
  // buffers by index (short_row_reduce.cpp), the same in every variant.
  // Which streamed stores a chunk loop writes to chunk buffers: all of
  // them (streaming), or only the bf16 ones (rounded by the chunk).
  // Chunked: all of them, stored by ordinary stores (scheduled_).
  enum class Buffered { None, Streamed, Bf16, Chunked };
  const auto buffered = [&](int id, Buffered which) {  // None: false
    return which == Buffered::Streamed || which == Buffered::Chunked ||
           (which == Buffered::Bf16 && node(id).dtype == DType::bf16);
  };
  // The loop over [from, to) at `ind`, its streamed stores to `to` where
  // `which` buffers them.
  const auto loop = [&](const std::string& ind, const std::string& from, const std::string& to_,
                        Buffered which, StoreTo to = StoreTo::Chunk) {
    return simd_loop(
        axis, from, to_, nodes, pragma,
        [&](int id) {
          return streamed_[static_cast<size_t>(id)] && buffered(id, which) ? to : StoreTo::Output;
        },
        updates, ind);
  };
  // The parts of a row around its chunks (under a chunk each): without the
  // word-pair form, which made chain30 bf16's chunk loop beside them 1.18x
  // slower (g++ allocated the loop nest's registers worse; word_pairs.cpp).
  const auto part_loop = [&](const std::string& ind, const std::string& from,
                             const std::string& to_) {
    return simd_loop(
        axis, from, to_, nodes, pragma, [](int) { return StoreTo::Output; }, updates, ind,
        /*word_pairs=*/false);
  };
  const std::string chunk_end = "nt_k + AF_NT_CHUNK";

  const std::string in1 = indent + "  ";
  const std::string in2 = in1 + "  ";
  const std::string in3 = in2 + "  ";
  const AscNode& first = node(streamed.front());
  const auto element = [&](const AscNode& store, const std::string& at) {
    return fmt::format("&q{}[{}]", output_of_store_.at(static_cast<size_t>(store.id)),
                       address(store, axis, at));
  };
  // A row of a constant length shorter than a chunk never streams by chunks,
  // but when each streamed store's row span (tiling::row_span) is whole
  // cache lines (f32 rows of 16, 32, 48; 16-bit rows of 32; dlrm's bf16
  // pieces of 16, 26 in a row) the whole row streams: one buffer per span,
  // written by af_nt_store (ordinary stores where the span is not 64-byte
  // aligned). RoPE's half rows of 32: rotary f32 [16, 1024, 12, 64] on one
  // thread 2.29 -> 2.16 ms.
  // The Elementwise whole-rows loop's streaming copy (line_rows_: every row
  // whole aligned lines, checked once before the loop, elementwise.cpp)
  // streams each row with af_nt_store_aligned.
  const std::optional<int64_t> extent = graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  const bool whole_lines =
      line_rows_ ||
      (extent && *extent < tiling::kStreamChunk && whole_spans(streamed, *extent) &&
       std::all_of(streamed.begin(), streamed.end(), [&](int id) {
         return spans_.at(static_cast<size_t>(id)).length * dtype_size(node(id).dtype) % 64 == 0;
       }));
  AF_CHECK(!line_rows_ || extent, "kernel {}: whole-line rows of no constant length", graph_.name);
  if (!whole_lines && extent && *extent < tiling::kStreamChunk) {  // no chunk: nothing streams
    emit_plain_loop(axis, lo, hi, nodes, pragma, updates, indent, out);
    return;
  }
  // Each streamed store's buffer of `length` elements, then its streaming.
  const std::string length = whole_lines ? std::to_string(*extent) : "AF_NT_CHUNK";
  const auto buffers = [&](const std::string& ind, Buffered which, const std::string& len) {
    std::string b;
    for (int id : streamed) {
      if (!buffered(id, which)) continue;
      const DType dtype = node(id).dtype;
      b += fmt::format("{}{} t{}[{}] __attribute__((aligned(64)));\n", ind,
                       dtype == DType::bf16 ? "af_bf16_chunk_t" : c_storage_type(dtype), id, len);
    }
    return b;
  };
  // The buffers' stores: streaming (Buffered::Streamed) or ordinary.
  const auto flush = [&](const std::string& ind, Buffered which) {
    std::string b;
    for (int id : streamed) {
      if (!buffered(id, which)) continue;
      const bool ordinary = which == Buffered::Bf16 || which == Buffered::Chunked;
      if (node(id).dtype == DType::bf16) {
        const char* fn = ordinary     ? "af_bf16_store"
                         : line_rows_ ? "af_bf16_nt_store_aligned"
                                      : "af_bf16_nt_store";
        b += fmt::format("{}{}({}, t{}, (int64_t)(sizeof(t{}) / sizeof(t{}[0])));\n", ind, fn,
                         element(node(id), "nt_k"), id, id, id);
      } else if (node(id).dtype == DType::f16) {  // (kernel_prelude_f16.h: 32-byte halves)
        const char* fn = ordinary     ? "af_f16_store"
                         : line_rows_ ? "af_f16_nt_store_aligned"
                                      : "af_f16_nt_store";
        b += fmt::format("{}{}({}, t{}, (int64_t)sizeof(t{}));\n", ind, fn,
                         element(node(id), "nt_k"), id, id);
      } else if (ordinary) {
        b += fmt::format("{}__builtin_memcpy({}, t{}, sizeof(t{}));\n", ind,
                         element(node(id), "nt_k"), id, id);
      } else {
        b += fmt::format("{}{}({}, t{}, (int64_t)sizeof(t{}));\n", ind,
                         line_rows_ ? "af_nt_store_aligned" : "af_nt_store",
                         element(node(id), "nt_k"), id, id);
      }
    }
    return b;
  };
  const auto nt_stores = [&](const std::string& ind) { return flush(ind, Buffered::Streamed); };
  const bool bf16_chunks = std::any_of(streamed.begin(), streamed.end(),
                                       [&](int id) { return node(id).dtype == DType::bf16; });
  // Sigmoids run by the chunk (chunk_sigmoid_prologue): key 0 and key 2 as
  // well (swiglu f32 in the L2 is compute-bound).
  const bool sigmoids = !chunk_sigmoid_ids(axis, nodes).empty();
  // Loops over [lo, hi) with ordinary stores (key 0, or key 2 with
  // `prefetches` per chunk): with bf16 stores where the prelude rounds by
  // the chunk (AF_BF16_CVT), whole chunks then the rest; else `plain`. A
  // scheduled kernel's run by the chunk always, every streamed store into a
  // chunk buffer: stores to the outputs kept g++'s scheduler from moving the
  // next vector's loads above them, buffers do not (chain30 f32 [1024,
  // 1024] in the L2: 0.32 ms with the chunks storing to the output, 0.27
  // with buffers; Zen 5). A kernel with chunk sigmoids runs by the chunk
  // too, its stores where they were.
  const auto ordinary_loops = [&](const std::string& ind, const std::string& prefetches,
                                  const std::string& plain) {
    if ((!bf16_chunks && !scheduled_ && !sigmoids) || (extent && *extent < tiling::kStreamChunk))
      return plain;
    const Buffered which = scheduled_ ? Buffered::Chunked : Buffered::Bf16;
    // Only bf16 chunks have a form without AF_BF16_CVT (`plain`).
    const bool cvt_only = !scheduled_ && bf16_chunks;
    const std::string i1 = ind + "  ";
    const std::string i2 = i1 + "  ";
    std::string b =
        cvt_only ? "#if AF_BF16_CVT  // bf16 stores rounded by the chunk\n" : std::string();
    b += ind + "{\n";
    b += fmt::format("{}const int64_t nt_hi = {} + ({} - {}) / AF_NT_CHUNK * AF_NT_CHUNK;\n", i1,
                     lo, hi, lo);
    b += fmt::format("{}for (int64_t nt_k = {}; nt_k < nt_hi; nt_k += AF_NT_CHUNK) {{\n", i1, lo);
    b += prefetches;
    b += buffers(i2, which, "AF_NT_CHUNK");
    b += chunk_sigmoid_prologue(axis, nodes, i2);
    b += loop(i2, "nt_k", chunk_end, which);
    chunk_sigmoids_.clear();
    b += flush(i2, which);
    b += i1 + "}\n";
    b += part_loop(i1, "nt_hi", hi);
    b += ind + "}\n";
    return cvt_only ? b + "#else\n" + plain + "#endif\n" : b;
  };
  if (line_rows_) {  // the streaming copy of the whole-rows loop: no other variant
    out += fmt::format("{}const int64_t nt_k = {};  // whole lines\n", indent, lo);
    out += buffers(indent, Buffered::Streamed, length);
    out += loop(indent, lo, hi, Buffered::Streamed);
    out += nt_stores(indent);
    return;
  }
  if (whole_lines) {
    out += fmt::format(
        "{}if (AF_NT_STORES && td->header.tiling_key == {} && {} - {} == {}) {{  // whole lines\n",
        indent, tiling::kStreamingStoresKey, hi, lo, *extent);
    out += fmt::format("{}const int64_t nt_k = {};\n", in1, lo);
    for (int id : span_starts(streamed)) {
      const DType dtype = node(id).dtype;
      out += fmt::format("{}{} t{}[{}] __attribute__((aligned(64)));\n", in1,
                         dtype == DType::bf16 ? "af_bf16_chunk_t" : c_storage_type(dtype), id,
                         spans_.at(static_cast<size_t>(id)).length);
    }
    out += loop(in1, lo, hi, Buffered::Streamed, StoreTo::Span);
    for (int id : span_starts(streamed)) {
      const bool bf16 = node(id).dtype == DType::bf16;
      out += bf16 ? fmt::format(
                        "{}af_bf16_nt_store({}, t{}, (int64_t)(sizeof(t{}) / sizeof(t{}[0])));\n",
                        in1, element(node(id), "nt_k"), id, id, id)
                  : fmt::format("{}{}({}, t{}, (int64_t)sizeof(t{}));\n", in1,
                                node(id).dtype == DType::f16 ? "af_f16_nt_store" : "af_nt_store",
                                element(node(id), "nt_k"), id, id);
    }
  } else {
    // Streaming only under key 1 and for a row of at least a chunk; else
    // (key 0, short rows) one plain loop, without the chunks' overhead.
    out += fmt::format(
        "{}if (AF_NT_STORES && td->header.tiling_key == {} && {} - {} >= AF_NT_CHUNK) {{\n", indent,
        tiling::kStreamingStoresKey, hi, lo);
    out += fmt::format(
        "{}const int64_t nt_lo = {} + af_nt_peel({}, {}, {} - {});  // until {} is aligned\n", in1,
        lo, element(first, lo), dtype_size(first.dtype), hi, lo, first.name);
    out += fmt::format(
        "{}const int64_t nt_hi = nt_lo + ({} - nt_lo) / AF_NT_CHUNK * AF_NT_CHUNK;\n", in1, hi);
    out += fmt::format("{}for (int nt_part = 0; nt_part < 2; ++nt_part) {{\n", in1);
    out += fmt::format("{}const int64_t nt_from = nt_part == 0 ? {} : nt_hi;\n", in2, lo);
    out += fmt::format("{}const int64_t nt_to = nt_part == 0 ? nt_lo : {};\n", in2, hi);
    out += part_loop(in2, "nt_from", "nt_to");
    out += in2 + "if (nt_part == 1) break;\n";
    out += fmt::format("{}for (int64_t nt_k = nt_lo; nt_k < nt_hi; nt_k += AF_NT_CHUNK) {{\n", in2);
    out += row_prefetches(axis, "nt_k", in3);
    out += buffers(in3, Buffered::Streamed, "AF_NT_CHUNK");
    out += chunk_sigmoid_prologue(axis, nodes, in3);
    out += loop(in3, "nt_k", chunk_end, Buffered::Streamed);
    chunk_sigmoids_.clear();
    out += nt_stores(in3);
    out += in2 + "}\n";
    out += in1 + "}\n";
    // Key 2: the same chunks and prefetches, ordinary stores (a
    // compute-bound loop whose inputs come from memory; tiling.cpp). A loop
    // without prefetches runs its plain form under key 2 (no code: each
    // variant costs compile time, softmax_mask's module 1.2 -> 1.6 s).
    const std::string prefetches = row_prefetches(axis, "nt_k", in2);
    if (!prefetches.empty()) {
      out += fmt::format(
          "{}}} else if (td->header.tiling_key == {} && {} - {} >= AF_NT_CHUNK) {{  // "
          "prefetching\n",
          indent, tiling::kPrefetchingKey, hi, lo);
      std::string k2 = fmt::format(
          "{}const int64_t nt_hi = {} + ({} - {}) / AF_NT_CHUNK * AF_NT_CHUNK;\n", in1, lo, hi, lo);
      k2 +=
          fmt::format("{}for (int64_t nt_k = {}; nt_k < nt_hi; nt_k += AF_NT_CHUNK) {{\n", in1, lo);
      k2 += prefetches;
      k2 += chunk_sigmoid_prologue(axis, nodes, in2);
      k2 += loop(in2, "nt_k", chunk_end, Buffered::None);
      chunk_sigmoids_.clear();
      k2 += in1 + "}\n";
      k2 += part_loop(in1, "nt_hi", hi);
      out += ordinary_loops(in1, row_prefetches(axis, "nt_k", in2 + "  "), k2);
    }
  }
  out += indent + "} else {\n";
  std::string plain;
  emit_plain_loop(axis, lo, hi, nodes, pragma, updates, in1, plain);
  out += ordinary_loops(in1, "", plain);
  out += indent + "}\n";
}

}  // namespace autofuse::codegen::cpu
