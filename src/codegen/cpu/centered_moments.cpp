// Centered moments (schedule.h, CenteredMoment): the pass of mean(x) also
// computes M2 = sum((x - mean)^2) of each moment. The column layout first
// (below); the row layout's code is at the end of the file.
//
// The pass walks the unit's reduced indices [lo, hi) in blocks of
// td->mom_rows (a multiple of the 64-index chunk, tiles of about a quarter
// of the L2; tiling.h kMomentRowsField). Per block [mb, me):
//   1. the pass's ordinary loop over the block (reads x from memory; its
//      chunk flushes also add the chunk sums of each moment's mean into the
//      block sum ms<mean>, and the block ends with a flush);
//   2. c = ms<mean> / nb, the block's mean (nb = me - mb), per column;
//   3. a second loop over the block (x from the L2) computing the moment's
//      input with c in place of the mean, summed in chunks of 64 into the
//      block's q = sum((x - c)^2), and e = sum(x - c) beside it; when the
//      data comes from memory (td->pf_rows > 0) it prefetches the next
//      block's rows into the L2;
//   4. Chan, Golub and LeVeque's merge into the running moment, in offsets
//      from the shift k = the unit's first block center: the block's mean
//      is c + e / nb, its offset o = (c - k) + e / nb and its M2 about its
//      own mean q - e^2 / nb; with na = mb - lo indices so far and their
//      running offset mean r:
//        d = o - r;  r += d * nb / (na + nb);
//        M2 += (q - e^2 / nb) + d * (d * na * nb / (na + nb))
//      (Kahan's compensated add; a rounded-negative block M2 counts 0).
// Why offsets: c carries the rounding of a sum of x, ~eps |mean|; as an
// offset it cancels exactly (x - c and c - k are differences of nearby
// floats, exact by Sterbenz when |mean| exceeds the data's spread, else
// rounded to ~eps spread), and e / nb (e summed plainly over the block)
// measures the true block mean about c to ~eps max|x - c|. So while eps
// |mean| / sd << 1 (else x itself holds few digits of its deviation) no
// error term grows with |mean| / sd: relative error about (64 + mom_rows /
// 64 + 2) eps, as the two-pass sum's, plus (eps |mean| / sd)^2 from q -
// e^2 / nb. Deviations that overflow make the moment +inf, not NaN
// (overflow_guard). (Merging the
// rounded block means directly, as session 20 did, carried ~2 eps (|mean| /
// sd) / sqrt(nb) to first order: 4.4e-4 at a mean of 1e4 sd in 64-row
// blocks, every digit lost at 1e5; now <= 3.3e-6 at any offset tested.)
//
// A split kernel writes each segment's M2 (about its own mean), its shift k
// and its mean's offset r to the workspace (tiling::workspace_slots); the
// combine takes segment s's mean as (k_s - k_0) + r_s, an offset from
// segment 0's shift, and merges: R = sum n_s o_s / n, M2 = sum M2_s +
// n_s (o_s - R)^2, in segment order.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

/// Moment `r`'s arrays: its running mean offset from the shift (which the
/// split combine reuses for the segments' mean), its block's center, and
/// its block's sum of squares (its mean's block sum: mean_block_sum).
std::string running_mean(int r) {
  return fmt::format("mr{}", r);
}
std::string center(int r) {
  return fmt::format("mc{}", r);
}
std::string block_squares(int r) {
  return fmt::format("mq{}", r);
}
/// Moment `r`'s shift (its unit's first block center) and its block's sum
/// of deviations from the block's center.
std::string shift(int r) {
  return fmt::format("mk{}", r);
}
std::string block_deviations(int r) {
  return fmt::format("md{}", r);
}

/// `term`, a sum of squares about a mean, or +inf where it is NaN but
/// `squares` (the part summed from the data) is not. Deviations that
/// overflow f32 make the offsets +-inf and their differences or products
/// with 0 NaN, where the reference's variance is +inf; NaN or inf in the
/// data make `squares` NaN, and that NaN stays.
std::string overflow_guard(const std::string& term, const std::string& squares) {
  return fmt::format("{0} == {0} || {1} != {1} ? {0} : __builtin_inff()", term, squares);
}

}  // namespace

std::string KernelEmitter::moment_arrays() const {
  std::string out;
  if (!column_) return out;  // the row layout's are scalars in the pass
  const int64_t lanes = tiling::max_tile(kernel_);
  std::vector<int> means;
  for (const schedule::CenteredMoment& m : kernel_.moments) {
    const std::string type = c_compute_type(node(m.moment).dtype);
    for (const std::string& name :
         {running_mean(m.moment), center(m.moment), block_squares(m.moment), shift(m.moment),
          block_deviations(m.moment)})
      out += fmt::format("  {} {}[{}] __attribute__((aligned(64)));\n", type, name, lanes);
    if (std::find(means.begin(), means.end(), m.mean) != means.end()) continue;
    means.push_back(m.mean);
    out += fmt::format("  {} {}[{}] __attribute__((aligned(64)));\n",
                       c_compute_type(node(m.mean).dtype), mean_block_sum(m.mean), lanes);
  }
  return out;
}

bool KernelEmitter::is_moment_mean(const PassPlan& plan, int r) const {
  for (int v : plan.moments)
    if (kernel_.moment_of(v)->mean == r) return true;
  return false;
}

std::string KernelEmitter::moment_center(int id) const {
  if (moment_center_ < 0 || kernel_.moment_of(moment_center_)->mean != id) return {};
  if (!column_) return center(moment_center_);
  return fmt::format("{}[{}]", center(moment_center_), tile_index());
}

std::vector<bool> KernelEmitter::moment_input_nodes(int v) const {
  std::vector<bool> need(graph_.nodes.size(), false);
  need.at(static_cast<size_t>(node(v).inputs.at(0))) = true;
  for (size_t i = need.size(); i-- > 0;) {
    if (!need[i]) continue;
    for (int in : operands(graph_.nodes[i])) {
      const auto at = static_cast<size_t>(in);
      if (level_.at(at) >= 1 && !kernel_.is_row_node.at(at)) need[at] = true;
    }
  }
  return need;
}

std::string KernelEmitter::moment_merge(int v, const std::string& lane,
                                        const std::string& squares) const {
  const AscNode& moment = node(v);
  const AscNode& square = node(moment.inputs.at(0));
  // The deviations' sum is +-nb (block mean - center): Sub(x, mean) or
  // Sub(mean, x).
  const bool x_first =
      node(square.inputs.at(0)).inputs.at(0) == node(kernel_.moment_of(v)->mean).inputs.at(0);
  return fmt::format(
      "const {type} e_ = {sign}{md}{t} / nb_, e2_ = {md}{t} * ({md}{t} / nb_); "
      "const {type} q_ = {squares} - (e2_ - e2_ == 0 ? e2_ : 0); "
      "const {type} d_ = (({mc}{t} - {mk}{t}) + e_) - {mr}{t}; {mr}{t} += d_ * w_; "
      "const {type} m2_ = (q_ < 0 ? 0 : q_) + d_ * (d_ * wo_); {add}",
      fmt::arg("type", c_compute_type(moment.dtype)), fmt::arg("sign", x_first ? "" : "-"),
      fmt::arg("md", block_deviations(v)), fmt::arg("t", lane), fmt::arg("squares", squares),
      fmt::arg("mc", center(v)), fmt::arg("mk", shift(v)), fmt::arg("mr", running_mean(v)),
      fmt::arg("add", kahan_add(moment, fmt::format("({})", overflow_guard("m2_", "q_")))));
}

void KernelEmitter::emit_moment_pass_body(const PassPlan& plan, const std::string& indent,
                                          std::string& out) const {
  if (!column_) {
    emit_row_moment_pass_body(plan, indent, out);
    return;
  }
  AF_CHECK(column_ && !fold_ && depth_ == 2 && plan.deepest == depth_ && plan.scalar_levels == 1 &&
               kernel_.inner_axes.size() == 1,
           "kernel {}: centered moments outside an unfolded column layout with one reduced axis",
           graph_.name);
  const int axis = kernel_.inner_axes.front();
  const std::string i_red = fmt::format("i{}", axis);
  for (int v : plan.moments) {
    const int mean = kernel_.moment_of(v)->mean;
    AF_CHECK(std::find(plan.chunked.begin(), plan.chunked.end(), mean) != plan.chunked.end(),
             "kernel {}: the mean of moment {} is not a column chunk sum of its pass", graph_.name,
             node(v).name);
  }
  std::string ind = indent;
  emit_pass_init(plan, ind, out);
  std::string init;
  for (int v : plan.moments)
    init +=
        fmt::format("{} = 0; {} = 0; {} = 0; {}[{t}] = 0; {}[{t}] = 0; {}[{t}] = 0; {}[{t}] = 0; ",
                    acc(v), comp(v), chunk(v), running_mean(v), block_squares(v), shift(v),
                    block_deviations(v), fmt::arg("t", tile_index()));
  out += tile_loop(ind, init);
  out += fmt::format("{0}for (int64_t mb_ = lo; mb_ < hi; mb_ += td->{1}) {{  // blocks\n", ind,
                     tiling::kMomentRowsField);
  const std::string in1 = ind + "  ", in2 = in1 + "  ";
  out += fmt::format("{}const int64_t me_ = af_min(mb_ + td->{}, hi);\n", in1,
                     tiling::kMomentRowsField);
  std::string zero;
  for (const AscNode& n : graph_.nodes)
    if (is_moment_mean(plan, n.id))
      zero += fmt::format("{}[{}] = 0; ", mean_block_sum(n.id), tile_index());
  out += tile_loop(in1, zero);
  // 1. The pass's own loop over the block (as vectors where it can be, and
  // nothing is computed per row outside the tile loop: column_vectors.cpp).
  std::string loop = fmt::format("{0}for (int64_t {1} = mb_; {1} < me_; ++{1}) {{\n", in1, i_red);
  emit_level_nodes(plan, 1, in2, loop);
  emit_vector_loop(plan, in2, loop);
  loop += in1 + "}\n";
  const std::optional<std::vector<int>> row_nodes = column_row_nodes(plan);
  const std::vector<ColumnSum> sums =
      row_nodes && row_nodes->empty() ? column_chunk_sums(plan) : std::vector<ColumnSum>{};
  const auto flush_means = [&](const std::string& at) { return flush_chunks(plan, at); };
  if (sums.empty() ||
      !emit_column_vector_rows(deepest_body(plan), {}, sums,
                               {"mb_", "me_", "chunk_rows", flush_means, ""}, loop, in1, out))
    out += loop;
  out += in1 + "chunk_rows = 0;\n" + flush_chunks(plan, in1);
  // 2.-4. Per moment: the block's center, its sum of squares, the merge.
  for (int v : plan.moments) {
    const AscNode& moment = node(v);
    const int mean = kernel_.moment_of(v)->mean;
    const std::string type = c_compute_type(moment.dtype);
    out += tile_loop(in1, fmt::format("{}[{}] = {}[{}] / ({})(me_ - mb_);", center(v), tile_index(),
                                      mean_block_sum(mean), tile_index(), type));
    // The moment's input and what it needs inside the loops; the mean's
    // broadcast reads the center (moment_center).
    const std::vector<bool> need = moment_input_nodes(v);
    std::vector<int> body;
    out += in1 + "{\n";
    out += in2 + "int64_t block_rows = 0;  // reduced indices in the chunk sums\n";
    std::string loop = fmt::format("{0}for (int64_t {1} = mb_; {1} < me_; ++{1}) {{\n", in2, i_red);
    const std::string in3 = in2 + "  ";
    moment_center_ = v;
    bool row_level = false;
    for (const AscNode& n : graph_.nodes) {
      const auto id = static_cast<size_t>(n.id);
      if (!need[id]) continue;
      if (level_[id] == 1) emit_node(n, in3, loop);
      row_level = row_level || level_[id] == 1;
      if (level_[id] == depth_) body.push_back(n.id);
    }
    // From memory, the next block's rows into the L2 meanwhile: else the
    // memory idles while this loop runs (batchnorm_stats [65536, 256] f32,
    // one thread: 0.85-0.9x the time, session 21; not in the vector form).
    loop += column_prefetches(1, "t1", body, in3, "(me_ - mb_)", ", 0, 2");
    const AscNode& square = node(moment.inputs.at(0));
    const std::string deviations = fmt::format("{}[{}]", block_deviations(v), tile_index());
    const std::string update = fmt::format("{} += {}; {} += {};", chunk(v), value(square.id),
                                           deviations, value(square.inputs.at(0)));
    emit_inner_loop(
        kernel_.tile_axis, "t0", "t1", body, "#pragma omp simd",
        [&](const std::string& at) { return at + update + "\n"; }, in3, loop);
    const auto flush = [&](const std::string& indent) {
      return tile_loop(indent, fmt::format("{0}[{1}] += {2}; {2} = 0;", block_squares(v),
                                           tile_index(), chunk(v)));
    };
    loop += fmt::format("{0}if (++block_rows == {1}) {{\n{0}  block_rows = 0;\n", in3,
                        tiling::kColumnChunk);
    // (The block opened above stays open: each moment's names.)
    loop += flush(in3 + "  ") + in3 + "}\n" + in2 + "}\n";
    const std::vector<ColumnSum> sums = {{chunk(v), square.id}, {deviations, square.inputs.at(0)}};
    if (row_level || !emit_column_vector_rows(
                         body, {}, sums, {"mb_", "me_", "block_rows", flush, ""}, loop, in2, out))
      out += loop;
    moment_center_ = -1;
    out += fmt::format("{}const {} nb_ = ({})(me_ - mb_), w_ = nb_ / ({})(me_ - lo);\n", in2, type,
                       type, type);
    out += fmt::format("{}const {} wo_ = ({})(mb_ - lo) * w_;  // na * nb / (na + nb)\n", in2, type,
                       type);
    const std::string t = tile_index();
    out += in2 + "if (mb_ == lo) {  // the shift: the first block's center\n";
    out += tile_loop(in2 + "  ",
                     fmt::format("{}[{t}] = {}[{t}];", shift(v), center(v), fmt::arg("t", t)));
    out += in2 + "}\n";
    const std::string merge =
        moment_merge(v, fmt::format("[{}]", t),
                     fmt::format("{}[{}] + {}", block_squares(v), t, chunk(v))) +
        fmt::format(" {}[{t}] = 0; {}[{t}] = 0; {} = 0;", block_squares(v), block_deviations(v),
                    chunk(v), fmt::arg("t", t));
    out += tile_loop(in2, merge) + in1 + "}\n";
  }
  out += ind + "}\n";
  emit_pass_results(plan, ind, out);
  std::string fold_back, partials;
  for (int v : plan.moments) {
    fold_back += fmt::format("{} -= {}; ", acc(v), comp(v));
    emit_partial_write(v, ind + "  ", partials);
    const std::string type = c_compute_type(node(v).dtype);
    const size_t slot = moment_slot(v);
    const std::string t = tile_index();
    partials += tile_loop(
        ind + "  ",
        fmt::format("{} = {}[{t}]; {} = {}[{t}];", workspace_element(type, slot, t), shift(v),
                    workspace_element(type, slot + 1, t), running_mean(v), fmt::arg("t", t)));
  }
  out += tile_loop(ind, fold_back);
  if (split_possible()) out += ind + "if (nsplit > 1) {\n" + partials + ind + "}\n";
}

size_t KernelEmitter::moment_slot(int r) const {
  for (size_t i = 0; i < kernel_.moments.size(); ++i)
    if (kernel_.moments[i].moment == r) return tiling::moment_workspace_slot(kernel_, i);
  AF_CHECK(false, "kernel {}: {} is not a centered moment", graph_.name, node(r).name);
  return 0;
}

void KernelEmitter::emit_moment_combine(int r, const std::string& indent, std::string& out) const {
  const AscNode& n = node(r);
  const ReduceCode code = reduce_code(n.op, n.dtype);
  const std::string type = c_compute_type(n.dtype);
  const std::string in1 = indent + "  ", in2 = in1 + "  ";
  const size_t slot = moment_slot(r);
  out += fmt::format(
      "{}if (nsplit > 1) {{  // {}: the segments' moments about their common mean, in segment "
      "order\n",
      indent, n.name);
  out += workspace_row(code.acc_type, "w_", static_cast<size_t>(slot_.at(static_cast<size_t>(r))),
                       in1);
  out += workspace_row(code.acc_type, "wk_", slot, in1);
  out += workspace_row(code.acc_type, "wo_", slot + 1, in1);
  if (!column_) {
    emit_row_moment_combine(r, in1, out);
    out += indent + "}\n";
    return;
  }
  const int axis = kernel_.inner_axes.front();
  const std::string t = tile_index();
  // Segment s's mean is wk_[s] + wo_[s]; as an offset from segment 0's
  // shift, (wk_[s] - wk_[0]) + wo_[s] (the shifts differ by about the
  // means' spread, so the difference is exact or nearly). Their weighted
  // mean first (in mr), then the squares about it.
  const std::string offset =
      fmt::format("((wk_[s_ * tw + {t}] - wk_[{t}]) + wo_[s_ * tw + {t}])", fmt::arg("t", t));
  const std::string segments = fmt::format(
      "{}for (int64_t s_ = 0; s_ < nsplit; ++s_) {{\n{}const {} ns_ = ({})af_min(td->{}, "
      "{} - s_ * td->{});\n",
      in1, in2, type, type, tiling::kSegmentField, size(axis), tiling::kSegmentField);
  out += tile_loop(in1, fmt::format("{} = 0; {}[{}] = 0;", acc(r), running_mean(r), t));
  out += segments;
  out += tile_loop(in2, fmt::format("{}[{}] += ns_ * {};", running_mean(r), t, offset));
  out += in1 + "}\n";
  out += tile_loop(in1, fmt::format("{}[{}] /= ({})({});", running_mean(r), t, type, size(axis)));
  out += segments;
  out += tile_loop(
      in2,
      fmt::format("const {} d_ = {} - {}[{}], m2_ = w_[s_ * tw + {}] + d_ * (d_ * ns_); {} += {};",
                  type, offset, running_mean(r), t, t, acc(r),
                  overflow_guard("m2_", fmt::format("w_[s_ * tw + {}]", t))));
  out += in1 + "}\n" + indent + "}\n";
}

}  // namespace autofuse::codegen::cpu

namespace autofuse::codegen::cpu {

// Row layout. The pass's loops as emit_pass_body writes them, but the last
// reduced axis always in chunks (emit_clause_loop; no short-row variant:
// those need one reduced axis, the schedule takes two or more), and after
// each chunk's loop every moment merges the chunk [ch, ch_end) as its
// block: its center is the mean's chunk sum over its length, its squares
// and deviations come from a second loop over the chunk (in the L1). The running moment is
// scalar: its count so far mn, shift mk, mean offset mr, and the Kahan pair
// a / k of its M2. The arithmetic is the column layout's (file header).
void KernelEmitter::emit_row_moment_pass_body(const PassPlan& plan, const std::string& indent,
                                              std::string& out) const {
  AF_CHECK(!column_ && plan.deepest == depth_ && plan.scalar_levels == depth_ - 1,
           "kernel {}: row-layout centered moments outside the row layout's vector loop",
           graph_.name);
  for (int v : plan.moments) {
    const int mean = kernel_.moment_of(v)->mean;
    AF_CHECK(std::find(plan.reduces.begin(), plan.reduces.end(), mean) != plan.reduces.end() &&
                 acc_kind(node(mean), plan.deepest) == Acc::Cascade,
             "kernel {}: the mean of moment {} is not a cascaded sum of its pass", graph_.name,
             node(v).name);
  }
  PassPlan chunked = plan;
  chunked.short_row.clear();  // every row in chunks
  for (int v : plan.moments) {
    const std::string type = c_compute_type(node(v).dtype);
    out += fmt::format("{}{} {} = 0, {} = 0, {} = 0;  // offset, shift, M2's compensation\n",
                       indent, type, running_mean(v), shift(v), comp(v));
    out += fmt::format("{}int64_t mn{} = 0;  // indices merged so far\n", indent, v);
  }
  emit_pass_loops(chunked, indent, out, [&](const std::string& at, std::string& text) {
    emit_row_moment_chunk(chunked, at, text);
  });
  std::string partials;
  for (int v : plan.moments) {
    out += fmt::format("{}{} -= {};\n", indent, acc(v), comp(v));
    emit_partial_write(v, indent + "  ", partials);
    const std::string type = c_compute_type(node(v).dtype);
    const size_t slot = moment_slot(v);
    partials +=
        fmt::format("{}{} = {}; {} = {};\n", indent + "  ", workspace_element(type, slot, "0"),
                    shift(v), workspace_element(type, slot + 1, "0"), running_mean(v));
  }
  if (split_possible()) out += indent + "if (nsplit > 1) {\n" + partials + indent + "}\n";
}

void KernelEmitter::emit_row_moment_chunk(const PassPlan& plan, const std::string& indent,
                                          std::string& out) const {
  const int axis = kernel_.inner_axes.back();
  for (int v : plan.moments) {
    const AscNode& moment = node(v);
    const int mean = kernel_.moment_of(v)->mean;
    const std::string type = c_compute_type(moment.dtype);
    const std::string in1 = indent + "  ";
    out += fmt::format("{}{{  // {}: the chunk merged\n", indent, moment.name);
    out += fmt::format("{}const {} nb_ = ({})(ch_end - ch);\n", in1, type, type);
    out += fmt::format("{}const {} {} = {} / nb_;  // the chunk's center\n", in1, type, center(v),
                       chunk(mean));
    out += fmt::format("{}{} {} = 0, {} = 0;\n", in1, type, block_squares(v), block_deviations(v));
    const std::vector<bool> need = moment_input_nodes(v);
    std::vector<int> body;
    for (const AscNode& n : graph_.nodes) {
      const auto id = static_cast<size_t>(n.id);
      if (!need[id]) continue;
      AF_CHECK(level_[id] == depth_ || plan.need[id],
               "kernel {}: moment {} needs {} outside its pass's loops", graph_.name, moment.name,
               n.name);
      if (level_[id] == depth_) body.push_back(n.id);
    }
    const AscNode& square = node(moment.inputs.at(0));
    out += chunk_prefetches(body, axis, in1);
    moment_center_ = v;
    emit_inner_loop(
        axis, "ch", "ch_end", body,
        fmt::format("#pragma omp simd reduction(+:{},{})", block_squares(v), block_deviations(v)),
        [&](const std::string& at) {
          return fmt::format("{}{} += {}; {} += {};\n", at, block_squares(v), value(square.id),
                             block_deviations(v), value(square.inputs.at(0)));
        },
        in1, out);
    moment_center_ = -1;
    out += fmt::format("{}if (mn{} == 0) {} = {};  // the shift: the first chunk's center\n", in1,
                       v, shift(v), center(v));
    out += fmt::format(
        "{in}const {type} w_ = nb_ / ({type})(mn{v} + (ch_end - ch)), wo_ = ({type})mn{v} * w_;\n"
        "{in}{merge}\n{in}mn{v} += ch_end - ch;\n",
        fmt::arg("in", in1), fmt::arg("type", type), fmt::arg("v", v),
        fmt::arg("merge", moment_merge(v, "", block_squares(v))));
    out += indent + "}\n";
  }
}

void KernelEmitter::emit_row_moment_combine(int r, const std::string& in1, std::string& out) const {
  const std::string type = c_compute_type(node(r).dtype);
  const std::string in2 = in1 + "  ";
  // Segments cut the outermost reduced axis; each of its indices holds the
  // product of the other reduced axes' lengths.
  const int axis = kernel_.inner_axes.front();
  std::string rest = "1";
  for (size_t i = 1; i < kernel_.inner_axes.size(); ++i)
    rest += " * " + size(kernel_.inner_axes[i]);
  out += fmt::format("{}const {} rest_ = ({})({});\n", in1, type, type, rest);
  const std::string segments = fmt::format(
      "{}for (int64_t s_ = 0; s_ < nsplit; ++s_) {{\n{}const {} ns_ = ({})af_max(0, af_min(td->{}, "
      "{} - s_ * td->{})) * rest_;\n{}const {} o_ = (wk_[s_] - wk_[0]) + wo_[s_];\n",
      in1, in2, type, type, tiling::kSegmentField, size(axis), tiling::kSegmentField, in2, type);
  out += fmt::format("{}{} R_ = 0;\n", in1, type);
  out += segments + in2 + "R_ += ns_ * o_;\n" + in1 + "}\n";
  out += fmt::format("{}R_ /= ({}){};\n{}{} = 0;\n", in1, type,
                     reduce_count(node(kernel_.moment_of(r)->mean)), in1, acc(r));
  out += segments;
  out += fmt::format("{}const {} d_ = o_ - R_, m2_ = w_[s_] + d_ * (d_ * ns_);\n{}{} += {};\n", in2,
                     type, in2, acc(r), overflow_guard("m2_", "w_[s_]"));
  out += in1 + "}\n";
}

}  // namespace autofuse::codegen::cpu
