// Gather nodes (asc_graph.h): the index checks, the safe read, and the
// report of a bad index to the kernel's af_status (kernel_abi.h).
//
// Per element of Gather %5 reading Data p0 with index %4 (n = gather[0].size):
//
//   const int64_t gr5 = (int64_t)v4;                 // the index as given
//   const int64_t gw5 = gr5 < 0 ? gr5 + n : gr5;     // negative: from the end
//   const bool gb5 = (uint64_t)gw5 >= (uint64_t)n;   // outside [0, n)
//   const float v5 = p0[b5 + ... + (gb5 ? 0 : gw5) * gather[0].stride];
//
// (unsigned index dtypes skip the negative case). A Gather of several dims
// (a chain of gathers) does this per dim j, its names suffixed `_j` from
// the second dim on (gb5_1, ...), and adds their terms. A bad index reads
// index 0 (and, when n is not provably >= 1, nothing: the value is 0), so no
// read is ever out of bounds. Outside a vector loop it is reported at once
// (af_gather_fail: the first report of the call wins; `which` counts the
// gathered dims of the kernel's Gathers in order, AscGraph::gather_names).
// Inside one, a call would keep the loop from vectorizing, so the loop
// carries two reduction variables per gathered dim, `gf5` (|: some index
// was bad) and `gk5` (max: the largest bad index), declared before it and
// reported after it.
//
// Hoisting, per gathered dim. When the index is a broadcast of a value %2
// computed at an outer loop level (the embedding lookup: one index per row,
// broadcast along the hidden axis; the row index of a padded 2-D block),
// the check runs once, right after %2 is defined (per call, per row; in the
// Reduction template in the row's stage, not per pass), and reports at
// once; the gathered row's offset is kept:
//
//   const int64_t go5 = (gb5 ? 0 : gw5) * gather_stride;
//   ... in the loop: const float v5 = p0[b5 + i1 + go5];   // a plain load
//
// The broadcast chain is then dead (operands()). A report needs an element
// actually read: in a Reduction's pass, the check is guarded by the sizes of
// the loops between the two levels when they may be 0 (a row with an empty
// reduced axis reads nothing). The values are those of the
// per-element form, and so is the report (one index per row: the loop's
// largest bad index was that index).
#include <algorithm>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;
using schedule::Template;

namespace {

/// The suffix of gathered dim j's variables: none for the first.
std::string dim_suffix(size_t j) {
  return j == 0 ? std::string() : fmt::format("_{}", j);
}

}  // namespace

std::vector<int> KernelEmitter::operands(const AscNode& n) const {
  std::vector<int> out = n.inputs;
  if (n.kind != AscKind::Gather || hoist_src_.empty()) return out;
  const std::vector<int>& src = hoist_src_.at(static_cast<size_t>(n.id));
  for (size_t j = 0; j < src.size(); ++j)
    if (src[j] >= 0) out.at(1 + j) = src[j];
  return out;
}

void KernelEmitter::plan_gather_hoists() {
  hoist_src_.assign(graph_.nodes.size(), {});
  for (const AscNode& n : graph_.nodes) {
    if (n.kind != AscKind::Gather) continue;
    std::vector<int>& hoisted = hoist_src_[static_cast<size_t>(n.id)];
    hoisted.assign(n.gather.size(), -1);
    for (size_t j = 0; j < n.gather.size(); ++j) {
      int src = n.inputs.at(1 + j);
      while (node(src).kind == AscKind::Broadcast)
        src = node(src).inputs.at(0);
      const auto at = static_cast<size_t>(src);
      // Tile vectors are arrays filled in a stage's tile loop: not a scalar
      // to check once (and at the tile level anyway).
      if (level_.at(at) < level_.at(static_cast<size_t>(n.id)) && !tile_vector_.at(at))
        hoisted[j] = src;
    }
  }
}

std::string KernelEmitter::wrapped_index(DType index_dtype, const std::string& raw,
                                         const std::string& bound) {
  if (is_unsigned_integer(index_dtype)) return raw;
  return fmt::format("{0} < 0 ? {0} + {1} : {0}", raw, bound);
}

bool KernelEmitter::checked_in_loop(const AscNode& n, size_t j) const {
  return hoist_src_.at(static_cast<size_t>(n.id)).at(j) < 0;
}

std::string KernelEmitter::gather_check(const AscNode& n, size_t j, const std::string& index,
                                        const std::string& indent, const std::string& guard) const {
  const AscNode& index_node = node(n.inputs.at(1 + j));
  AF_CHECK(is_integer(index_node.dtype), "gather {}: index {} is {}", n.name, index_node.name,
           dtype_name(index_node.dtype));
  const std::string g = fmt::format("{}{}", n.id, dim_suffix(j));
  const std::string bound = fmt::format("(int64_t)({})", expr(n.gather.at(j).size));
  std::string out;
  out += fmt::format("{}const int64_t gr{} = (int64_t){};  // {}: index {}\n", indent, g, index,
                     n.gather[j].name, index_node.name);
  out += fmt::format("{}const int64_t gw{} = {};\n", indent, g,
                     wrapped_index(index_node.dtype, "gr" + g, bound));
  if (is_unsigned_integer(index_node.dtype)) {  // (an index above INT64_MAX is out of range)
    out +=
        fmt::format("{}const bool gb{} = (uint64_t){} >= (uint64_t){};\n", indent, g, index, bound);
  } else {
    out +=
        fmt::format("{0}const bool gb{1} = (uint64_t)gw{1} >= (uint64_t){2};\n", indent, g, bound);
  }
  const int which = gather_id_.at(static_cast<size_t>(n.id)) + static_cast<int>(j);
  if (in_simd_) {
    out += fmt::format("{0}gf{1} |= (int)gb{1};\n", indent, g);
    out += fmt::format("{0}gk{1} = af_max(gk{1}, gb{1} ? gr{1} : INT64_MIN);\n", indent, g);
  } else {
    out += fmt::format("{0}if (gb{1}{2}) af_gather_fail(af_st, {3}, gr{1}, {4});\n", indent, g,
                       guard, which, bound);
  }
  return out;
}

void KernelEmitter::emit_gather_checks(int src, const std::string& indent, std::string& out) const {
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (n.kind != AscKind::Gather || !live_[id]) continue;
    for (size_t j = 0; j < n.gather.size(); ++j) {
      if (hoist_src_[id][j] != src) continue;
      AF_CHECK(!in_simd_, "gather {}: hoisted check inside a vector loop", n.name);
      // The loops that compute the Gather may be empty (a Reduction's pass
      // over a reduced axis of size 0): then nothing is read, and the
      // per-element form reported nothing either.
      std::string guard;
      if (kernel_.kind == Template::Reduction && !kernel_.is_row_node.at(id)) {
        const int from = std::max(level_.at(static_cast<size_t>(src)) + 1, 1);
        for (int a = 0; a < graph_.num_axes(); ++a) {
          const int level = axis_level_[static_cast<size_t>(a)];
          if (level < from || level > level_[id]) continue;
          // (Symbols are >= 1 by contract, but a size of 0 runs: only literals skip it.)
          const sym::Expr& n_a = graph_.axes[static_cast<size_t>(a)].size;
          if (n_a.is_const() && sym::proven_ge(n_a, sym::Expr(1))) continue;
          guard += fmt::format(" && {} > 0", size(a));
        }
      }
      out += gather_check(n, j, value(src), indent, guard);
      out += fmt::format(
          "{0}const int64_t go{1} = (gb{1} ? 0 : gw{1}) * ({2});  // {3}: row offset\n", indent,
          fmt::format("{}{}", n.id, dim_suffix(j)), expr(n.gather[j].stride), n.gather[j].name);
    }
  }
}

std::string KernelEmitter::gather_value(const AscNode& n, const std::string& indent,
                                        std::string& out) const {
  const AscNode& data = node(n.inputs.at(0));
  std::string element = fmt::format("p{}[{}", data.arg_index, address(n));
  std::string empty;  // some gathered dim may be empty: the condition to read nothing
  for (size_t j = 0; j < n.gather.size(); ++j) {
    const std::string g = fmt::format("{}{}", n.id, dim_suffix(j));
    if (!checked_in_loop(n, j)) {  // checked at an outer level
      element += fmt::format(" + go{}", g);
    } else {
      out += gather_check(n, j, value(n.inputs.at(1 + j)), indent, "");
      element += fmt::format(" + (gb{0} ? 0 : gw{0}) * ({1})", g, expr(n.gather[j].stride));
    }
    // An empty gathered dim has no element 0 to read instead.
    if (!sym::proven_ge(n.gather[j].size, sym::Expr(1)))
      empty += fmt::format("{}gb{}", empty.empty() ? "" : " || ", g);
  }
  std::string rhs = load_expr(n.dtype, element + "]");
  if (!empty.empty()) rhs = fmt::format("({} ? ({})0 : {})", empty, c_compute_type(n.dtype), rhs);
  return rhs;
}

std::string KernelEmitter::gather_row_element(const AscNode& n) const {
  std::string element = fmt::format("p{}[{}", node(n.inputs.at(0)).arg_index, address(n));
  for (size_t j = 0; j < n.gather.size(); ++j) {
    if (checked_in_loop(n, j) || !sym::proven_ge(n.gather[j].size, sym::Expr(1))) return {};
    element += fmt::format(" + go{}{}", n.id, dim_suffix(j));
  }
  return element + "]";
}

std::vector<int> KernelEmitter::gathers_in(const std::vector<int>& nodes) const {
  std::vector<int> out;
  for (int id : nodes) {
    const AscNode& n = node(id);
    if (n.kind != AscKind::Gather || !live_.at(static_cast<size_t>(id))) continue;
    for (size_t j = 0; j < n.gather.size(); ++j)
      if (checked_in_loop(n, j)) {
        out.push_back(id);
        break;
      }
  }
  return out;
}

std::string KernelEmitter::gather_clauses(const std::vector<int>& gathers) const {
  std::string out;
  for (int id : gathers)
    for (size_t j = 0; j < node(id).gather.size(); ++j)
      if (checked_in_loop(node(id), j))
        out += fmt::format(" reduction(|:gf{0}) reduction(max:gk{0})",
                           fmt::format("{}{}", id, dim_suffix(j)));
  return out;
}

std::string KernelEmitter::gather_flags(const std::vector<int>& gathers,
                                        const std::string& indent) const {
  std::string out;
  for (int id : gathers)
    for (size_t j = 0; j < node(id).gather.size(); ++j)
      if (checked_in_loop(node(id), j))
        out +=
            fmt::format("{0}int gf{1} = 0;  // {2}: a bad index\n{0}int64_t gk{1} = INT64_MIN;\n",
                        indent, fmt::format("{}{}", id, dim_suffix(j)), node(id).gather[j].name);
  return out;
}

std::string KernelEmitter::gather_reports(const std::vector<int>& gathers,
                                          const std::string& indent) const {
  std::string out;
  for (int id : gathers)
    for (size_t j = 0; j < node(id).gather.size(); ++j)
      if (checked_in_loop(node(id), j))
        out += fmt::format("{0}if (gf{1}) af_gather_fail(af_st, {2}, gk{1}, (int64_t)({3}));\n",
                           indent, fmt::format("{}{}", id, dim_suffix(j)),
                           gather_id_.at(static_cast<size_t>(id)) + static_cast<int>(j),
                           expr(node(id).gather[j].size));
  return out;
}

void KernelEmitter::emit_simd(const std::vector<int>& nodes, const std::string& indent,
                              std::string& out,
                              const std::function<void(const std::string&)>& emit) const {
  const std::vector<int> gathers = gathers_in(nodes);
  if (gathers.empty()) {
    emit("");
    return;
  }
  struct InSimd {  // Gathers emitted in the loop set its flags
    const KernelEmitter& e;
    explicit InSimd(const KernelEmitter& emitter) : e(emitter) { e.in_simd_ = true; }
    ~InSimd() { e.in_simd_ = false; }
  };
  out += indent + "{\n";
  out += gather_flags(gathers, indent);
  {
    InSimd in_simd(*this);
    emit(gather_clauses(gathers));
  }
  out += gather_reports(gathers, indent);
  out += indent + "}\n";
}

}  // namespace autofuse::codegen::cpu
