// Software prefetch of the next row in the Reduction template's row layout.
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
// So the last pass's chunk loop (the streaming-store variant, used for
// outputs larger than the cache; inner_loop.cpp) prefetches, per chunk of
// AF_NT_CHUNK elements, the same elements of the next row of every input
// that pass 0 reads from memory: the next row arrives while this one is
// finished, spread over the pass (a burst of prefetches at the start of the
// row stalls on the miss buffers and measured slower than none). Measured
// (`autofuse bench` on bench/models.py's skip_layernorm, B=16,S=512, 1
// thread): 3.7-3.9 ms -> 3.0-3.2 ms. The next row is the next index of the
// last row axis; at the end of that axis the offset is 0 (the row itself,
// in cache: a wasted prefetch per end, no branch, no address past the
// buffer). Only the streaming variant prefetches: its rows come from memory.
// Softmax (its last pass reads a row buffer, exp dominates) neither gains
// nor loses measurably.
#include <fmt/format.h>

#include "autofuse/error.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

/// Elements per chunk of the streaming variant: the prelude's AF_NT_CHUNK.
constexpr int64_t kStreamChunk = 64;

}  // namespace

void KernelEmitter::plan_row_prefetch() {
  prefetched_.clear();
  if (column_ || depth_ < 1 || kernel_.num_passes < 2 || row_axes_.empty()) return;
  const int last_row_axis = row_axes_.back();
  const PassPlan first = plan_pass(0);
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (n.kind != AscKind::Load || !live_[id] || !first.need[id] || level_[id] < 1) continue;
    if (node(n.inputs.at(0)).kind != AscKind::Data || buffered_[id]) continue;
    const sym::Expr& contiguous = n.view.strides.at(static_cast<size_t>(vector_axis_));
    const sym::Expr& next_row = n.view.strides.at(static_cast<size_t>(last_row_axis));
    if (contiguous != sym::Expr(1) || next_row == sym::Expr(0)) continue;
    prefetched_.push_back(n.id);
  }
}

std::string KernelEmitter::row_prefetch_offsets(const std::string& indent) const {
  if (prefetched_.empty()) return {};
  const int a = row_axes_.back();
  std::string out = fmt::format("{}const bool pf_more = i{} + 1 < {};  // a next row to prefetch\n",
                                indent, a, size(a));
  for (int id : prefetched_)
    out += fmt::format("{}const int64_t pf{} = pf_more ? (int64_t)({}) : 0;\n", indent, id,
                       expr(node(id).view.strides.at(static_cast<size_t>(a))));
  return out;
}

std::string KernelEmitter::row_prefetches(int axis, const std::string& at,
                                          const std::string& indent) const {
  if (!prefetching_ || axis != vector_axis_) return {};
  std::string out;
  for (int id : prefetched_) {
    const AscNode& n = node(id);
    const int64_t per_line = 64 / dtype_size(n.dtype);  // elements per cache line
    for (int64_t k = 0; k < kStreamChunk; k += per_line)
      out += fmt::format("{}__builtin_prefetch(&p{}[{} + pf{}]);\n", indent,
                         node(n.inputs.at(0)).arg_index,
                         address(n, axis, fmt::format("{} + {}", at, k)), id);
  }
  return out;
}

}  // namespace autofuse::codegen::cpu
