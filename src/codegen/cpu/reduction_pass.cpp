// One pass of the Reduction template (reduction.cpp): the loop nest over the
// reduced axes and its accumulators (a split kernel's partial results:
// split_partials.cpp).
//
// Loops: one per reduced axis down to the deepest level the pass needs (the
// outermost reduced axis runs over the unit's segment [lo, hi)); in the row
// layout the last one is the vector loop, in the column layout the vector
// loop runs over the tile [t0, t1) inside them. Nodes are computed at their
// level; Stores of values that do not vary along the tile axis are written
// by the row's first tile only.
//
// Folding (column layout, tiling::folds_rows, td->fold > 1): the last
// reduced loop steps `fold` rows at a time and the tile loop covers their
// fold * W lanes [t0, tg) (contiguous in memory); accumulator arrays have a
// lane per (row of the group, column), combined pairwise into the first W
// lanes when the pass ends.
//
// Accumulators (Acc). Every Reduce has its own, initialized to the op's
// identity. In a vector loop over a reduced axis they are OpenMP reduction
// variables (per-lane partials combined at the end; g++ needs the pragma to
// vectorize max and min without -ffast-math); in the column layout they are
// arrays over the tile, one lane per column. Float max/min keep a "saw NaN"
// flag so NaN propagates as ops.h says. Integer sums and products wrap in
// the unsigned type; an integer mean divides the full int64 sum.
//
// Accurate float sums (f32, and f16/bf16 computed in f32; f64 likewise):
//  * Acc::Cascade, a sum in the row layout's vector loop (unless the row is
//    one chunk: then Plain, the same sum, see one_chunk_rows): the loop runs in
//    chunks of kSumChunk elements, each summed into a fresh chunk accumulator
//    (L lanes of chunk/L elements, then a tree over the lanes), and the
//    chunk sums are added pairwise (a binary counter of partial sums, one
//    per level: after chunk c, levels merge like the carries of c + 1).
//    |error| <= (kSumChunk / L + log2(L) + log2(n / kSumChunk) + 2) * eps *
//    sum |x| to first order (eps = 2^-24 for f32), instead of the n / L of
//    plain per-lane partials.
//  * Acc::Chunked, a column sum in the column layout's tile loop: each
//    column sums kColumnChunk reduced indices into a chunk sum, which is then
//    added to the column's total with Kahan's compensated sum (the
//    compensation is folded back in when the pass ends):
//    |error| <= (kColumnChunk + 2 + O(n eps)) * eps * sum |x|. Kahan on every
//    element would cost 4 adds each (measurably slower at memory bandwidth);
//    this costs one, plus a few per column every kColumnChunk rows.
//  * Acc::Compensated, a sum anywhere else (a scalar accumulated outside the
//    vector loop): Kahan's compensated sum of every element,
//    |error| <= (2 eps + O(n eps^2)) * sum |x|.
// A split adds one sum over the segments' partials (nsplit - 1 more roundings).
//
// Short rows (at most 1024 elements, the row layout's one reduced axis) skip
// the clauses: the loop writes the values to buffers that the prelude reduces
// with vector lanes and a tree (short_row_reduce.cpp); a symbolic row
// branches between the two per row.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

/// Elements per chunk of a cascaded sum: long enough that the per-chunk work
/// (a horizontal add, a counter step) is noise, short enough that the lanes'
/// serial sums stay short.
constexpr int kSumChunk = 1024;
/// Levels of a cascade's counter: enough for any int64 chunk count.
constexpr int kCascadeLevels = 64;
using tiling::kColumnChunk;  // reduced indices per chunk of a column sum (Acc::Chunked)

bool is_float_sum(const ascir::AscNode& n) {
  return is_float(n.dtype) && (n.op == OpKind::ReduceSum || n.op == OpKind::ReduceMean);
}

}  // namespace

Acc KernelEmitter::acc_kind(const AscNode& reduce, int deepest) const {
  if (!is_float_sum(reduce)) return Acc::Plain;
  if (accumulate_level(reduce) == deepest) {
    if (!column_) return one_chunk_rows() ? Acc::Plain : Acc::Cascade;
    if (tile_vector_.at(static_cast<size_t>(reduce.id))) return Acc::Chunked;
  }
  return Acc::Compensated;
}

bool KernelEmitter::one_chunk_rows() const {
  // One reduced axis of at most kSumChunk elements: the cascade would see
  // one chunk, and its sum (0 + the chunk's sum) is the plain per-lane sum
  // bit for bit, without the counter and collapse per row and Reduce
  // (dlrm_concat: 26 sums of 16 elements per row).
  if (kernel_.inner_axes.size() != 1) return false;
  const std::optional<int64_t> n =
      graph_.axes.at(static_cast<size_t>(kernel_.inner_axes[0])).size.as_const();
  return n && *n <= kSumChunk;
}

std::string KernelEmitter::acc(int r) const {
  return tile_vector_.at(static_cast<size_t>(r)) ? fmt::format("a{}[{}]", r, tile_index())
                                                 : fmt::format("a{}", r);
}

std::string KernelEmitter::nan(int r) const {
  return tile_vector_.at(static_cast<size_t>(r)) ? fmt::format("nan{}[{}]", r, tile_index())
                                                 : fmt::format("nan{}", r);
}

std::string KernelEmitter::comp(int r) const {
  return tile_vector_.at(static_cast<size_t>(r)) ? fmt::format("k{}[{}]", r, tile_index())
                                                 : fmt::format("k{}", r);
}

std::string KernelEmitter::chunk(int r) const {
  return tile_vector_.at(static_cast<size_t>(r)) ? fmt::format("a{}c[{}]", r, tile_index())
                                                 : fmt::format("a{}c", r);
}

std::string KernelEmitter::update(const AscNode& n, int deepest, const std::string& v) const {
  switch (acc_kind(n, deepest)) {
    case Acc::Cascade:
    case Acc::Chunked:
      return fmt::format("{} += {};", chunk(n.id), v);
    case Acc::Compensated:
      return kahan_add(n, v);
    case Acc::Plain:
      break;
  }
  return reduce_update(n.op, n.dtype, acc(n.id), nan(n.id), v);
}

std::string KernelEmitter::kahan_add(const AscNode& n, const std::string& v) const {
  const std::string t = c_compute_type(n.dtype);
  const std::string a = acc(n.id), k = comp(n.id);
  // Once the total is infinite (or NaN) the compensation (inf - a) - inf
  // would be NaN and turn a sum of +inf into NaN: it is 0 then (t_ - t_
  // is 0 exactly when t_ is finite).
  return fmt::format(
      "{{ const {0} y_ = {1} - {2}; const {0} t_ = {3} + y_; const {0} c_ = (t_ - {3}) - y_; {2} "
      "= (t_ - t_) == 0 ? c_ : 0; {3} = t_; }}",
      t, v, k, a);
}

std::string KernelEmitter::reduced_loop_head(int level, const std::string& indent,
                                             bool folded) const {
  const int axis = kernel_.inner_axes.at(static_cast<size_t>(level - 1));
  const bool split = axis == kernel_.inner_axes.front();
  const std::string lo = split ? "lo" : "0", hi = split ? "hi" : size(axis);
  if (!folded)
    return fmt::format("{0}for (int64_t i{1} = {2}; i{1} < {3}; ++i{1}) {{\n", indent, axis, lo,
                       hi);
  // `fold` rows per iteration; the last group may have fewer: lanes [t0, tg).
  return fmt::format(
      "{0}for (int64_t i{1} = {2}; i{1} < {3}; i{1} += fold) {{\n"
      "{0}  const int64_t tg = t0 + af_min(fold, {3} - i{1}) * (t1 - t0);\n",
      indent, axis, lo, hi);
}

PassPlan KernelEmitter::plan_pass(int pass) const {
  const auto pass_of = [&](int id) { return kernel_.node_pass.at(static_cast<size_t>(id)); };
  const auto in_loop = [&](int id) {  // computed inside the pass's loops
    const auto i = static_cast<size_t>(id);
    return level_.at(i) >= 1 && !kernel_.is_row_node.at(i);
  };
  PassPlan plan;
  const size_t count = graph_.nodes.size();
  // The sinks of this pass and everything varying they need.
  plan.need.assign(count, false);
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!live_[id]) continue;
    if (n.kind == AscKind::Reduce && pass_of(n.id) == pass && accumulates(n) &&
        kernel_.moment_of(n.id)) {
      plan.moments.push_back(n.id);  // its own loop (centered_moments.cpp)
    } else if (n.kind == AscKind::Reduce && pass_of(n.id) == pass && accumulates(n)) {
      plan.reduces.push_back(n.id);
      plan.need.at(static_cast<size_t>(n.inputs[0])) = true;
    } else if (n.kind == AscKind::Store && in_loop(n.id) && pass_of(n.id) == pass) {
      plan.need[id] = true;
    }
  }
  for (size_t i = count; i-- > 0;) {
    if (!plan.need[i]) continue;
    const AscNode& n = graph_.nodes[i];
    AF_CHECK(pass_of(n.id) <= pass, "kernel {}: {} (pass {}) needed in pass {}", graph_.name,
             n.name, pass_of(n.id), pass);
    plan.deepest = std::max(plan.deepest, level_[i]);
    if (ub_pass_ == pass && reads_row_buffer(n.id, pass)) continue;  // its inputs not needed
    for (int in : operands(n)) {
      const AscNode& input = node(in);
      if (input.kind == AscKind::Data || level_.at(static_cast<size_t>(in)) < 0) continue;
      if (in_loop(in)) {
        plan.need.at(static_cast<size_t>(in)) = true;
      } else {
        const int ready = input.kind == AscKind::Reduce ? pass_of(in) + 1 : pass_of(in);
        AF_CHECK(ready <= pass, "kernel {}: {} in pass {} reads {} (ready after {})", graph_.name,
                 n.name, pass, input.name, ready);
      }
    }
  }
  // The scalar loops: the reduced axes above the vector loop.
  plan.scalar_levels = column_ ? std::min(plan.deepest, depth_ - 1) : std::max(plan.deepest - 1, 0);
  for (int r : plan.reduces)
    if (acc_kind(node(r), plan.deepest) == Acc::Chunked) plan.chunked.push_back(r);
  // Rows fold into the tile loop when it is inside the last reduced loop.
  plan.folded = fold_ && plan.deepest == depth_ && plan.scalar_levels == depth_ - 1;
  plan.short_row = short_row_reduces(plan);
  return plan;
}

std::string KernelEmitter::pass_updates(const PassPlan& plan, int level,
                                        const std::string& at) const {
  std::string text;
  for (int r : plan.reduces) {
    const AscNode& n = node(r);
    if (accumulate_level(n) != level) continue;
    // Reduced axes at outer loop levels that the input does not vary along:
    // it is reduced over them only once (at index 0, in the first segment).
    std::string guard;
    const AscNode& input = node(n.inputs[0]);
    for (int l = 1; l < level && l <= static_cast<int>(kernel_.inner_axes.size()); ++l) {
      const int a = kernel_.inner_axes.at(static_cast<size_t>(l - 1));
      if (!varies(input, a)) guard += fmt::format("{}i{} == 0", guard.empty() ? "" : " && ", a);
    }
    const std::string u = update(n, plan.deepest, value(input.id));
    text += guard.empty() ? fmt::format("{}{}\n", at, u)
                          : fmt::format("{}if ({}) {{ {} }}\n", at, guard, u);
  }
  return text;
}

std::string KernelEmitter::tile_loop(const std::string& indent, const std::string& body,
                                     const std::string& end) const {
  return fmt::format("#pragma omp simd\n{0}for (int64_t i{1} = t0; i{1} < {3}; ++i{1}) {{ {2} }}\n",
                     indent, kernel_.tile_axis, body, end);
}

std::string KernelEmitter::fold_lanes(const PassPlan& plan, const std::string& indent) const {
  std::string body;
  for (int r : plan.reduces) {
    if (!tile_vector_.at(static_cast<size_t>(r))) continue;
    const AscNode& n = node(r);
    const ReduceCode code = reduce_code(n.op, n.dtype);
    const std::string other = fmt::format("a{}[{} + o_]", r, tile_index());
    body += reduce_update(n.op, n.dtype, acc(r), nan(r), other) + " ";
    if (code.tracks_nan) body += fmt::format("{} |= nan{}[{} + o_]; ", nan(r), r, tile_index());
  }
  if (body.empty()) return {};
  const std::string in1 = indent + "  ", in2 = in1 + "  ";
  std::string out = indent + "for (int64_t st_ = 1; st_ < fold; st_ *= 2) {  // pairwise\n";
  out += in1 + "for (int64_t g_ = 0; g_ + st_ < fold; g_ += 2 * st_) {\n";
  out += in2 + "const int64_t o_ = st_ * (t1 - t0);\n";
  const std::string base = fmt::format("g_ * (t1 - t0)");
  // Lane g_ * w + c takes lane (g_ + st_) * w + c: the tile index shifted.
  std::string shifted = body;
  out += fmt::format(
      "#pragma omp simd\n{0}for (int64_t i{1} = t0 + {2}; i{1} < t1 + {2}; ++i{1}) {{ {3}}}\n", in2,
      kernel_.tile_axis, base, shifted);
  out += in1 + "}\n" + indent + "}\n";
  return out;
}

void KernelEmitter::emit_pass_init(const PassPlan& plan, const std::string& ind,
                                   std::string& out) const {
  const std::string lanes = plan.folded ? "tf" : "t1";
  for (int r : plan.reduces) {
    const AscNode& n = node(r);
    const ReduceCode code = reduce_code(n.op, n.dtype);
    const Acc kind = acc_kind(n, plan.deepest);
    if (tile_vector_[static_cast<size_t>(r)]) {
      std::string init = fmt::format("{} = {};", acc(r), code.identity);
      if (code.tracks_nan) init += fmt::format(" {} = 0;", nan(r));
      if (kind == Acc::Chunked) init += fmt::format(" {} = 0; {} = 0;", comp(r), chunk(r));
      out += tile_loop(ind, init, lanes);
    } else if (kind == Acc::Compensated) {
      out += fmt::format("{}{} {} = 0;\n", ind, code.acc_type, comp(r));
    } else if (kind == Acc::Cascade) {
      out += fmt::format("{}{} a{}s[{}];  // pairwise partial sums of chunks\n", ind, code.acc_type,
                         r, kCascadeLevels);
      out += fmt::format("{}int64_t a{}n = 0;  // chunks so far\n", ind, r);
    }
  }
  if (!plan.chunked.empty() && plan.deepest == depth_)
    out += ind + "int64_t chunk_rows = 0;  // reduced indices in the column chunk sums\n";
}

void KernelEmitter::emit_vector_loop(
    const PassPlan& plan, const std::string& ind, std::string& out,
    const std::function<void(const std::string&, std::string&)>& chunk_end) const {
  const int deepest = plan.deepest;
  const std::vector<int> body = deepest_body(plan);
  std::function<std::string(const std::string&)> updates;
  if (std::any_of(plan.reduces.begin(), plan.reduces.end(),
                  [&](int r) { return accumulate_level(node(r)) == deepest; }))
    updates = [&](const std::string& at) { return pass_updates(plan, deepest, at); };
  if (column_) {
    // The tile loop: lanes are columns, no reduction clause; every
    // kColumnChunk reduced indices the chunk sums join the totals.
    const std::string tile_end = plan.folded ? "tg" : "t1";
    out += column_prefetches(plan.scalar_levels, tile_end, body, ind);
    emit_inner_loop(kernel_.tile_axis, "t0", tile_end, body, "#pragma omp simd", updates, ind, out);
    if (!plan.chunked.empty()) {
      out +=
          fmt::format("{0}if (++chunk_rows == {1}) {{\n{0}  chunk_rows = 0;\n", ind, kColumnChunk);
      out += flush_chunks(plan, ind + "  ") + ind + "}\n";
    }
    return;
  }
  if (!plan.short_row.empty()) {
    AF_CHECK(!chunk_end, "kernel {}: a short-row loop has no chunks", graph_.name);
    emit_short_row_loop(plan, body, updates, ind, out);
    return;
  }
  // A short row's storing pass as vectors (vector_pass.cpp).
  if (emit_vector_store_pass(plan, body, ind, out)) return;
  emit_clause_loop(plan, body, updates, ind, out, chunk_end);
}

void KernelEmitter::emit_clause_loop(
    const PassPlan& plan, const std::vector<int>& body,
    const std::function<std::string(const std::string&)>& updates, const std::string& ind,
    std::string& out,
    const std::function<void(const std::string&, std::string&)>& chunk_end) const {
  const int deepest = plan.deepest;
  // Row layout: OpenMP reductions over the last reduced axis.
  std::vector<int> cascades;
  std::map<std::string, std::vector<std::string>> clauses;  // operator -> variables
  for (int r : plan.reduces) {
    const AscNode& n = node(r);
    if (accumulate_level(n) != deepest) continue;
    const ReduceCode code = reduce_code(n.op, n.dtype);
    if (acc_kind(n, deepest) == Acc::Cascade) {
      cascades.push_back(r);
      clauses["+"].push_back(chunk(r));
    } else {
      clauses[code.clause].push_back(acc(r));
      if (code.tracks_nan) clauses["|"].push_back(nan(r));
    }
  }
  std::string pragma = "#pragma omp simd";
  for (const auto& [op, vars] : clauses) {
    pragma += fmt::format(" reduction({}:", op);
    for (size_t i = 0; i < vars.size(); ++i)
      pragma += (i ? "," : "") + vars[i];
    pragma += ")";
  }
  const int axis = kernel_.inner_axes.at(static_cast<size_t>(deepest - 1));
  const bool split = axis == kernel_.inner_axes.front();
  const std::string lo = split ? "lo" : "0", hi = split ? "hi" : size(axis);
  if (cascades.empty()) {
    emit_inner_loop(axis, lo, hi, body, pragma, updates, ind, out);
    return;
  }
  // Chunks of kSumChunk elements; each chunk sum enters the cascade.
  out += fmt::format("{}for (int64_t ch = {}; ch < {}; ch += {}) {{\n", ind, lo, hi, kSumChunk);
  const std::string in1 = ind + "  ";
  out += fmt::format("{}const int64_t ch_end = af_min(ch + {}, {});\n", in1, kSumChunk, hi);
  for (int r : cascades) {
    const ReduceCode code = reduce_code(node(r).op, node(r).dtype);
    out += fmt::format("{}{} {} = {};\n", in1, code.acc_type, chunk(r), code.identity);
  }
  // f16 data where F16C converts it: the chunk's sums as 16-lane vectors
  // (only sums at this level, no centered moments).
  const std::string lanes =
      clauses.size() == 1 && clauses.at("+").size() == cascades.size() && plan.moments.empty()
          ? lane_sums(axis, "ch", "ch_end", body, cascades, in1)
          : std::string();
  if (!lanes.empty())
    out += "#if " + f16c_condition(body) + "  // f16 by F16C, 16 lanes (lane_loops.cpp)\n" + lanes +
           "#else\n";
  emit_inner_loop(axis, "ch", "ch_end", body, pragma, updates, in1, out);
  if (!lanes.empty()) out += "#endif\n";
  if (chunk_end) chunk_end(in1, out);
  for (int r : cascades) {
    const std::string type = reduce_code(node(r).op, node(r).dtype).acc_type;
    out += fmt::format(
        "{0}{{ {1} s_ = a{2}c; int64_t k_ = a{2}n++; int l_ = 0; for (; k_ & 1; k_ >>= 1, ++l_) "
        "s_ += a{2}s[l_]; a{2}s[l_] = s_; }}\n",
        in1, type, r);
  }
  out += ind + "}\n";
}

std::string KernelEmitter::cascade_collapse(int r, const std::string& indent) const {
  // The occupied levels, smallest first.
  return fmt::format(
      "{0}{{ {1} s_ = 0; int l_ = 0; for (int64_t k_ = a{2}n; k_ != 0; k_ >>= 1, ++l_) if "
      "(k_ & 1) s_ += a{2}s[l_]; a{2} = s_; }}\n",
      indent, reduce_code(node(r).op, node(r).dtype).acc_type, r);
}

std::string KernelEmitter::flush_chunks(const PassPlan& plan, const std::string& ind) const {
  std::string body;
  for (int r : plan.chunked) {
    body += kahan_add(node(r), chunk(r)) + " ";
    if (is_moment_mean(plan, r))  // the block's sum too (centered_moments.cpp)
      body += fmt::format("{}[{}] += {}; ", mean_block_sum(r), tile_index(), chunk(r));
    body += fmt::format("{} = 0; ", chunk(r));
  }
  return tile_loop(ind, body, plan.folded ? "tf" : "t1");
}

void KernelEmitter::emit_pass_results(const PassPlan& plan, const std::string& ind,
                                      std::string& out) const {
  if (!plan.chunked.empty()) out += flush_chunks(plan, ind);
  for (int r : plan.reduces) {
    const AscNode& n = node(r);
    switch (acc_kind(n, plan.deepest)) {
      case Acc::Cascade:  // a short_row plan collapses in its long-row branch
        if (plan.short_row.empty()) out += cascade_collapse(r, ind);
        break;
      case Acc::Chunked:
      case Acc::Compensated:  // fold the compensation back in
        if (tile_vector_[static_cast<size_t>(r)]) {
          out +=
              tile_loop(ind, fmt::format("{} -= {};", acc(r), comp(r)), plan.folded ? "tf" : "t1");
        } else {
          out += fmt::format("{}{} -= {};\n", ind, acc(r), comp(r));
        }
        break;
      case Acc::Plain:
        break;
    }
  }
  if (plan.folded) out += fold_lanes(plan, ind);
  if (split_possible() && !plan.reduces.empty()) {
    out += ind + "if (nsplit > 1) {\n";
    for (int r : plan.reduces)
      emit_partial_write(r, ind + "  ", out);
    out += ind + "}\n";
  }
}

void KernelEmitter::emit_pass(int pass, const std::string& indent, std::string& out) const {
  const PassPlan plan = plan_pass(pass);
  if (plan.deepest == 0) return;  // nothing to do in this pass
  struct InPass {                 // tile vectors read here are the replicated arrays (fold)
    const KernelEmitter& e;
    explicit InPass(const KernelEmitter& emitter) : e(emitter) { e.in_pass_ = true; }
    ~InPass() { e.in_pass_ = false; }
  } in_pass(*this);

  // Scalar accumulators live at unit scope: the next stage reads them.
  // (Tile accumulators are the function-scope arrays.)
  std::vector<int> accumulated = plan.reduces;
  accumulated.insert(accumulated.end(), plan.moments.begin(), plan.moments.end());
  for (int r : accumulated) {
    const AscNode& n = node(r);
    if (tile_vector_[static_cast<size_t>(r)]) continue;
    const ReduceCode code = reduce_code(n.op, n.dtype);
    out += fmt::format("{}{} {} = {};\n", indent, code.acc_type, acc(r), code.identity);
    if (code.tracks_nan) out += fmt::format("{}int {} = 0;\n", indent, nan(r));
  }
  // A split kernel runs pass p in launch p; either way the pass is a block
  // of its own (its declarations, e.g. column chunk counters, are per pass).
  std::string ind = indent + "  ";
  if (split_possible())
    out += fmt::format("{}if (nsplit == 1 || phase == {}) {{\n", indent, pass);
  else
    out += fmt::format("{}{{  // pass {}\n", indent, pass);
  // Whether the pass writes or reads a row buffer: a transcendental one
  // (`other_buffer`) or a cost buffer (row_buffers.cpp).
  bool other_buffer = false, cost_touched = false;
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!plan.need[id] || ub_write_pass_[id] < 0 || ub_write_pass_[id] > pass) continue;
    (cost_buffer_[id] ? cost_touched : other_buffer) = true;
  }
  if (other_buffer || cost_touched) {
    // A pass that touches cost buffers uses them only when ub_long holds;
    // with transcendental buffers too, it has a variant with just those.
    // A constant row length decided ub_long (long_rows_static_): no test,
    // no such variant.
    const bool by_length = cost_touched && !other_buffer;
    const bool three = cost_touched && other_buffer && !long_rows_static_;
    // Only the variant with every row buffer runs symbolic rows of 64 or
    // more (ub_long), so only it has their vector passes (vector_pass.cpp);
    // the others would be compiled for nothing.
    const auto variant = [&](bool with_cost) {
      ub_pass_ = pass;
      ub_cost_ = with_cost;
      symbolic_vector_passes_ = with_cost;
      emit_pass_body(plan_pass(pass), ind + "  ", out);
      symbolic_vector_passes_ = true;
      ub_pass_ = -1;
      ub_cost_ = false;
    };
    if (grouped_ && !by_length) {
      // Grouped rows (row_groups.cpp) always fit the row buffers: no
      // recomputing variant.
      if (three) {
        out += ind + "if (ub_long) {  // row buffers (see row_buffers)\n";
        variant(true);
        out += ind + "} else {  // the transcendental ones only\n";
        variant(false);
        out += ind + "}\n";
      } else {
        variant(true);
      }
      out += indent + "}\n";
      return;
    }
    if (three) {
      out += ind + "if (ub_rows && ub_long) {  // row buffers (see row_buffers)\n";
      variant(true);
      out += ind + "} else if (ub_rows) {  // the transcendental ones only\n";
      variant(false);
    } else {
      out += ind +
             (by_length && !long_rows_static_ ? "if (ub_rows && ub_long) {" : "if (ub_rows) {") +
             "  // row buffers (see row_buffers)\n";
      variant(true);
    }
    out += ind + "} else {\n";
    symbolic_vector_passes_ = false;  // rows too long for the buffers, or split
    emit_pass_body(plan, ind + "  ", out);
    symbolic_vector_passes_ = true;
    out += ind + "}\n";
  } else {
    emit_pass_body(plan, ind, out);
  }
  out += indent + "}\n";
}

void KernelEmitter::emit_level_nodes(const PassPlan& plan, int level, const std::string& ind,
                                     std::string& out) const {
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!plan.need[id] || level_[id] != level) continue;
    if (column_ && n.kind == AscKind::Store) {  // constant along the tile axis
      std::string store;
      emit_node(n, "", store);
      out += fmt::format("{}if (tile == 0) {}", ind, store);
    } else {
      emit_node(n, ind, out);
    }
  }
  out += pass_updates(plan, level, ind);
}

void KernelEmitter::emit_pass_body(const PassPlan& plan, const std::string& indent,
                                   std::string& out) const {
  if (!plan.moments.empty()) {
    emit_moment_pass_body(plan, indent, out);
    return;
  }
  emit_pass_loops(plan, indent, out);
}

void KernelEmitter::emit_pass_loops(
    const PassPlan& plan, const std::string& indent, std::string& out,
    const std::function<void(const std::string&, std::string&)>& chunk_end) const {
  emit_pass_init(plan, indent, out);
  const auto loops = [&](std::string& text) {
    std::string ind = indent;
    for (int level = 1; level <= plan.scalar_levels; ++level) {
      text += reduced_loop_head(level, ind, plan.folded && level == plan.scalar_levels);
      ind += "  ";
      emit_level_nodes(plan, level, ind, text);
    }
    // The vector loop, unless the pass's deepest loop is a scalar one (a
    // column layout pass that needs no value varying along the tile).
    if (!column_ || plan.deepest == depth_) emit_vector_loop(plan, ind, text, chunk_end);
    for (int level = plan.scalar_levels; level >= 1; --level) {
      ind.resize(ind.size() - 2);
      text += ind + "}\n";
    }
  };
  // A column pass's sums over one reduced axis: as vectors where it can
  // (column_vectors.cpp).
  const std::vector<ColumnSum> sums =
      chunk_end || plan.scalar_levels != 1 ? std::vector<ColumnSum>{} : column_chunk_sums(plan);
  const std::optional<std::vector<int>> row_nodes =
      sums.empty() ? std::nullopt : column_row_nodes(plan);
  const auto flush = [&](const std::string& at) { return flush_chunks(plan, at); };
  bool vector_form = false;
  if (row_nodes) {
    std::string fallback;
    loops(fallback);
    vector_form = emit_column_vector_rows(
        deepest_body(plan), *row_nodes, sums,
        {"lo", "hi", "chunk_rows", flush, plan.folded ? "fold == 1" : ""}, fallback, indent, out);
  }
  if (!vector_form) loops(out);
  emit_pass_results(plan, indent, out);
}

}  // namespace autofuse::codegen::cpu
