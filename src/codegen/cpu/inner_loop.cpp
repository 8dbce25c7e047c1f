// The innermost (vectorized) loop of both templates, and its streaming-store
// variant. With streamed stores (tiling::streams) the loop over [lo, hi) is:
//
//   nt_lo = nt_hi = hi;                       // key 0: nothing streams
//   if (key 1 && hi - lo >= AF_NT_CHUNK) {    // per row: outside the hot loops
//     nt_lo = lo + elements until the first streamed store's address is
//             64-byte aligned;
//     nt_hi = nt_lo + whole chunks of AF_NT_CHUNK elements;
//   }
//   for part in {[lo, nt_lo), [nt_hi, hi)}:   // ordinary stores
//     simd loop; after the first part:
//     for each chunk in [nt_lo, nt_hi):
//       simd loop storing into aligned chunk buffers t<id>[AF_NT_CHUNK];
//       af_nt_store(&q[...], t<id>, sizeof t<id>)   // whole 64-byte lines
//
// A chunk is 64 elements, so a whole number of cache lines for every dtype;
// a streamed output that is not aligned where the first one is (another
// dtype or row offset) gets ordinary stores from af_nt_store. Each element is
// computed by the same expressions in either variant, so both keys give
// bit-identical results. The kernel ends with af_nt_fence under key 1.
#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

void KernelEmitter::emit_inner_loop(int axis, const std::string& lo, const std::string& hi,
                                    const std::vector<int>& nodes, const std::string& base_pragma,
                                    const std::function<std::string(const std::string&)>& updates,
                                    const std::string& indent, std::string& out) const {
  // Gathers in the loop add reduction clauses (gather.cpp).
  emit_simd(nodes, indent, out, [&](const std::string& clauses) {
    emit_loop_variants(axis, lo, hi, nodes, base_pragma + clauses, updates, indent, out);
  });
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
  const auto body = [&](const std::string& ind, bool to_buffer) {
    std::string b;
    for (int id : nodes)
      emit_loop_node(node(id), ind, b, to_buffer && streamed_[static_cast<size_t>(id)]);
    if (updates) b += updates(ind);
    return b;
  };
  if (streamed.empty() || updates) {
    out += pragma + "\n";
    out +=
        fmt::format("{0}for (int64_t i{1} = {2}; i{1} < {3}; ++i{1}) {{\n", indent, axis, lo, hi);
    out += body(indent + "  ", false);
    out += indent + "}\n";
    return;
  }

  const std::string in1 = indent + "  ";
  const std::string in2 = in1 + "  ";
  const std::string in3 = in2 + "  ";
  const AscNode& first = node(streamed.front());
  const auto element = [&](const AscNode& store, const std::string& at) {
    return fmt::format("&q{}[{}]", output_of_store_.at(static_cast<size_t>(store.id)),
                       address(store, axis, at));
  };
  out += fmt::format("{}int64_t nt_lo = {};  // [nt_lo, nt_hi): streaming stores\n", indent, hi);
  out += fmt::format("{}int64_t nt_hi = {};\n", indent, hi);
  out += fmt::format(
      "{}if (AF_NT_STORES && td->header.tiling_key == {} && {} - {} >= AF_NT_CHUNK) {{\n", indent,
      tiling::kStreamingStoresKey, hi, lo);
  out += fmt::format("{}nt_lo = {} + af_nt_peel({}, {}, {} - {});  // until {} is aligned\n", in1,
                     lo, element(first, lo), dtype_size(first.dtype), hi, lo, first.name);
  out += fmt::format("{}nt_hi = nt_lo + ({} - nt_lo) / AF_NT_CHUNK * AF_NT_CHUNK;\n", in1, hi);
  out += indent + "}\n";
  out += fmt::format("{}for (int nt_part = 0; nt_part < 2; ++nt_part) {{\n", indent);
  out += fmt::format("{}const int64_t nt_from = nt_part == 0 ? {} : nt_hi;\n", in1, lo);
  out += fmt::format("{}const int64_t nt_to = nt_part == 0 ? nt_lo : {};\n", in1, hi);
  out += pragma + "\n";
  out += fmt::format("{0}for (int64_t i{1} = nt_from; i{1} < nt_to; ++i{1}) {{\n", in1, axis);
  out += body(in2, false);
  out += in1 + "}\n";
  out += in1 + "if (nt_part == 1) break;\n";
  out += fmt::format("{}for (int64_t nt_k = nt_lo; nt_k < nt_hi; nt_k += AF_NT_CHUNK) {{\n", in1);
  out += row_prefetches(axis, "nt_k", in2);
  for (int id : streamed)
    out += fmt::format("{}{} t{}[AF_NT_CHUNK] __attribute__((aligned(64)));\n", in2,
                       c_storage_type(node(id).dtype), id);
  out += pragma + "\n";
  out += fmt::format("{0}for (int64_t i{1} = nt_k; i{1} < nt_k + AF_NT_CHUNK; ++i{1}) {{\n", in2,
                     axis);
  out += body(in3, true);
  out += in2 + "}\n";
  for (int id : streamed)
    out += fmt::format("{}af_nt_store({}, t{}, (int64_t)sizeof(t{}));\n", in2,
                       element(node(id), "nt_k"), id, id);
  out += in1 + "}\n";
  out += indent + "}\n";
}

}  // namespace autofuse::codegen::cpu
