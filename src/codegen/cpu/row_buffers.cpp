// Row buffers of the Reduction template's row layout (the CPU's "UB"): a
// value computed in a pass's vector loop is normally recomputed in every
// later pass that needs it (the row's inputs stay in the L1/L2, so global
// memory is read once). For an expensive value the first pass that computes
// it also writes it to a row buffer `ub<id>`, and later passes read it there
// instead of recomputing it and what it alone needs (loads, broadcasts, the
// subtraction). Expensive: a transcendental (softmax's exp(x - max), needed
// by the sum pass and again by the output pass), or a value whose
// recomputation costs at least kBufferWorth vector instructions per element
// (a "cost buffer": skip_layernorm's x + skip + bias, three loads and two
// adds), counting an operand that has a buffer as one load. A cost buffer
// whose users are all buffered no later is left out (their buffers cover
// it). A Reduce of a buffered value reduces the buffer (short_row_reduce.cpp),
// so the buffer also replaces the reduction's own.
//
// The buffers are function-scope arrays of ub_capacity_ elements each
// (together at most tiling::kTileStackBytes, like the column layout's
// arrays; plus kRowReducePad for a short row's reduction of a buffer,
// short_row_reduce.cpp), indexed by the position in the row (the reduced
// axes' linear index). They are used when `ub_rows` holds: the row fits and
// the kernel is not split (a split runs the passes of a row in different
// launches, maybe on different blocks); cost buffers only when `ub_long`
// holds too (rows of >= kBufferMinRow elements). Every pass that touches a
// buffer is emitted twice, `if (ub_rows) {buffered} else {recomputing}`, a
// branch per row outside the loops; a pass touching both kinds three times
// (`if (ub_rows && ub_long) {all} else if (ub_rows) {transcendental} else
// {recomputing}`). A constant row length decides ub_long when the kernel is
// emitted: a constant row shorter than kBufferMinRow has no cost buffers, a
// longer one neither the ub_long test nor the transcendental-only variant.
// The buffered value is the same expression's result either way, so all
// variants give bit-identical results.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "autofuse/ascir/vector_cost.h"
#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

using ascir::is_transcendental;
using ascir::vector_op_cost;

/// A value that costs at least this much to recompute per element is kept
/// in a row buffer (a store once, a load per later pass) when several
/// passes need it: skip_layernorm's x + skip + bias (three loads and two
/// adds: 5 in f32, 11 in bf16) is read back instead of recomputed twice,
/// and so is softmax_mask's x * 0.125 + mask (4). Measured against 8 (which
/// buffered only the bf16 ones; session 14, `autofuse bench`, medium
/// shapes, one thread, 8 interleaved rounds): skip_layernorm f32 0.90x the
/// time, softmax_mask f32 0.95x, bert_embeddings f32 0.94x; bf16 0.99-1.03x.
constexpr int kBufferWorth = 4;
/// What reading a value back from its row buffer costs (one vector load).
constexpr int kBufferReadCost = 1;
/// The shortest row that uses such buffers (see row_buffers()).
constexpr int64_t kBufferMinRow = 64;

}  // namespace

void KernelEmitter::plan_row_buffers() {
  ub_write_pass_.assign(graph_.nodes.size(), -1);
  cost_buffer_.assign(graph_.nodes.size(), false);
  ub_capacity_ = 0;
  cost_buffers_ = false;
  long_rows_static_ = false;
  if (column_ || depth_ < 1 || kernel_.num_passes < 2) return;
  // A row length that is a constant decides ub_long here: variants that
  // could never run are not emitted (compile time).
  // (Factors capped at kBufferMinRow: the comparison with it stays exact
  // and the product cannot overflow.)
  std::optional<int64_t> row_length = 1;
  for (int a : kernel_.inner_axes) {
    const std::optional<int64_t> n = graph_.axes.at(static_cast<size_t>(a)).size.as_const();
    row_length = row_length && n ? std::optional<int64_t>(std::min(*row_length, kBufferMinRow) *
                                                          std::min(*n, kBufferMinRow))
                                 : std::nullopt;
  }
  const bool short_static = row_length && *row_length < kBufferMinRow;
  long_rows_static_ = row_length && *row_length >= kBufferMinRow;
  std::vector<int> first(graph_.nodes.size(), -1), passes(graph_.nodes.size(), 0);
  for (int pass = 0; pass < kernel_.num_passes; ++pass) {
    const PassPlan plan = plan_pass(pass);
    if (plan.deepest == 0) continue;
    for (size_t i = 0; i < plan.need.size(); ++i) {
      if (!plan.need[i]) continue;
      if (first[i] < 0) first[i] = pass;
      ++passes[i];
    }
  }
  // Recompute cost of each value in the vector loop: itself and what it
  // reads there, an operand that is a candidate itself as the one load of
  // its buffer (nodes are in topological order; a shared operand counts
  // once per user, which only overstates it). Without that, layernorm's
  // x - mean counted x + skip + bias again and took a second buffer, whose
  // store cost what reading it saved.
  std::vector<int> cost(graph_.nodes.size(), 0);
  std::vector<bool> candidate(graph_.nodes.size(), false);
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (level_[id] != depth_) continue;
    cost[id] = vector_op_cost(n);
    for (int in : n.inputs) {
      const auto k = static_cast<size_t>(in);
      if (level_[k] == depth_) cost[id] += candidate[k] ? kBufferReadCost : cost[k];
    }
    const bool value = n.kind == AscKind::Compute && is_float(ascir::compute_dtype(n.dtype));
    candidate[id] = value && passes[id] >= 2 &&
                    (is_transcendental(n) || (!short_static && cost[id] >= kBufferWorth));
  }
  // A candidate whose every user is buffered, written no later and used
  // whenever its own buffer would be, needs no buffer of its own: later
  // passes read its users' buffers instead. Users come later in the node
  // order, so deciding from the last node back sees their decisions.
  const std::vector<std::vector<int>> users = graph_.users();
  int64_t bytes = 0;
  for (size_t i = graph_.nodes.size(); i-- > 0;) {
    if (!candidate[i]) continue;
    const AscNode& n = graph_.nodes[i];
    const bool cost_only = !is_transcendental(n);
    bool subsumed = !users[i].empty();
    for (int u : users[i]) {
      const auto k = static_cast<size_t>(u);
      subsumed = subsumed && ub_write_pass_[k] >= 0 && first[k] <= first[i] &&
                 (cost_only || !cost_buffer_[k]);
    }
    if (subsumed) continue;
    ub_write_pass_[i] = first[i];
    cost_buffer_[i] = cost_only;
    cost_buffers_ = cost_buffers_ || cost_only;
    bytes += dtype_size(ascir::compute_dtype(n.dtype));
  }
  if (bytes > 0) ub_capacity_ = tiling::kTileStackBytes / bytes / 16 * 16;
}

int KernelEmitter::ub_write_pass(int id) const {
  const auto i = static_cast<size_t>(id);
  if (ub_write_pass_.empty() || (cost_buffer_[i] && !ub_cost_)) return -1;
  return ub_write_pass_[i];
}

bool KernelEmitter::reads_row_buffer(int id, int pass) const {
  const int w = ub_write_pass(id);
  return w >= 0 && w < pass;
}

std::string KernelEmitter::row_buffers() const {
  if (ub_capacity_ == 0) return {};
  std::string out;
  for (const AscNode& n : graph_.nodes)
    if (ub_write_pass_[static_cast<size_t>(n.id)] >= 0)
      out += fmt::format("  {} ub{}[{}] __attribute__((aligned(64)));  // {}\n",
                         c_compute_type(n.dtype), n.id, ub_capacity_ + kRowReducePad, n.name);
  // The row fits: every reduced axis and the partial products (no overflow).
  std::string fits, product;
  for (int a : kernel_.inner_axes) {
    fits += fmt::format(" && {} <= {}", size(a), ub_capacity_);
    if (!product.empty()) fits += fmt::format(" && {} * {} <= {}", product, size(a), ub_capacity_);
    product = product.empty() ? size(a) : product + " * " + size(a);
  }
  const std::string row_elements = product.empty() ? "1" : product;
  out += fmt::format("  const bool ub_rows = nsplit == 1{};  // the passes use the row buffers\n",
                     fits);
  // Rows shorter than kBufferMinRow recompute the values buffered only for
  // their cost (see kBufferWorth): a short row's 16-bit loop stores its f32
  // values as two 32-byte halves, and the next pass's 64-byte loads of them
  // wait for store forwarding (softmax bf16 rows of 16: 4.6 -> 7.0 us).
  if (cost_buffers_ && !long_rows_static_)
    out += fmt::format("  const bool ub_long = {} >= {};  // cost buffers too\n", row_elements,
                       kBufferMinRow);
  return out;
}

void KernelEmitter::emit_loop_node(const AscNode& n, const std::string& indent, std::string& out,
                                   StoreTo to) const {
  if (ub_pass_ < 0 || ub_write_pass(n.id) < 0) {
    emit_node(n, indent, out, to);
    return;
  }
  // The position in the row: the reduced axes' linear index.
  std::string at;
  for (int a : kernel_.inner_axes)
    at = at.empty() ? fmt::format("i{}", a) : fmt::format("({}) * {} + i{}", at, size(a), a);
  if (reads_row_buffer(n.id, ub_pass_)) {
    out += fmt::format("{}const {} {} = ub{}[{}];  // {} (row buffer)\n", indent,
                       c_compute_type(n.dtype), value(n.id), n.id, at, n.name);
    return;
  }
  emit_node(n, indent, out, to);
  if (ub_write_pass(n.id) == ub_pass_)
    out += fmt::format("{}ub{}[{}] = {};\n", indent, n.id, at, value(n.id));
}

}  // namespace autofuse::codegen::cpu
