// Row buffers of the Reduction template's row layout (the CPU's "UB"): a
// value computed in a pass's vector loop is normally recomputed in every
// later pass that needs it (the row's inputs stay in the L1/L2, so global
// memory is read once). For an expensive value (a transcendental: softmax's
// exp(x - max) is needed by the sum pass and again by the output pass) the
// first pass that computes it also writes it to a row buffer `ub<id>`, and
// later passes read it there instead of recomputing it and what it alone
// needs (loads, broadcasts, the subtraction).
//
// The buffers are function-scope arrays of ub_capacity_ elements each
// (together at most tiling::kTileStackBytes, like the column layout's
// arrays; plus kRowReducePad for a short row's reduction of a buffer,
// short_row_reduce.cpp), indexed by the position in the row (the reduced axes' linear
// index). They are used when `ub_rows` holds: the row fits and the kernel is
// not split (a split runs the passes of a row in different launches, maybe
// on different blocks). Every pass that touches a buffer is emitted twice,
// `if (ub_rows) {buffered} else {recomputing}`, a branch per row outside the
// loops. The buffered value is the same expression's result either way, so
// both variants give bit-identical results.
#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

/// Ops worth a buffer write and read (a few ns per element as vector math,
/// against a store and a load to the L1).
bool expensive(const ascir::AscNode& n) {
  if (n.kind != AscKind::Compute || !is_float(ascir::compute_dtype(n.dtype))) return false;
  switch (n.op) {
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Sigmoid:
    case OpKind::Erf:
    case OpKind::Pow:
      return true;
    default:
      return false;
  }
}

}  // namespace

void KernelEmitter::plan_row_buffers() {
  ub_write_pass_.assign(graph_.nodes.size(), -1);
  ub_capacity_ = 0;
  if (column_ || depth_ < 1 || kernel_.num_passes < 2) return;
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
  int64_t bytes = 0;
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (passes[id] < 2 || level_[id] != depth_ || !expensive(n)) continue;
    ub_write_pass_[id] = first[id];
    bytes += dtype_size(ascir::compute_dtype(n.dtype));
  }
  if (bytes > 0) ub_capacity_ = tiling::kTileStackBytes / bytes / 16 * 16;
}

bool KernelEmitter::reads_row_buffer(int id, int pass) const {
  const int w = ub_write_pass_.at(static_cast<size_t>(id));
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
  out += fmt::format("  const bool ub_rows = nsplit == 1{};  // the passes use the row buffers\n",
                     fits);
  return out;
}

void KernelEmitter::emit_loop_node(const AscNode& n, const std::string& indent, std::string& out,
                                   bool to_buffer) const {
  if (ub_pass_ < 0 || ub_write_pass_.empty() || ub_write_pass_[static_cast<size_t>(n.id)] < 0) {
    emit_node(n, indent, out, to_buffer);
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
  emit_node(n, indent, out, to_buffer);
  if (ub_write_pass_[static_cast<size_t>(n.id)] == ub_pass_)
    out += fmt::format("{}ub{}[{}] = {};\n", indent, n.id, at, value(n.id));
}

}  // namespace autofuse::codegen::cpu
