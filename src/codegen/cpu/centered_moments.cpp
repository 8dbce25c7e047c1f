// Centered moments in the column layout (schedule.h, CenteredMoment): the
// pass of mean(x) also computes M2 = sum((x - mean)^2) of each moment.
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
//      block's b = sum((x - c)^2); when the data comes from memory
//      (td->pf_rows > 0) it prefetches the next block's rows into the L2;
//   4. Chan, Golub and LeVeque's merge into the running moment, with na =
//      mb - lo indices so far and their running mean mr:
//        d = c - mr;  mr += d * nb / (na + nb);
//        M2 += b + d * (d * na * nb / (na + nb))   (Kahan's compensated add;
//        d * (d * w): the first block's w is 0, and d^2 could overflow)
// Every term added to M2 is non-negative and each block's b is a two-pass
// sum about (nearly) its own mean: relative error about (64 + mom_rows /
// 64 + 2) eps, as the two-pass sum's, plus the means' rounding (block sums
// in chunks, the running mean: ~eps |mean| each) in d, which the merge's
// correction terms (about 1 / nb of M2) carry to first order: ~2 eps
// (|mean| / sd) / sqrt(nb) relative, 1.5e-4 for a mean of 1e4 standard
// deviations in blocks of 64 rows (5e-5 in 512-row blocks: 256 f32
// columns on a 2 MiB L2). E[x^2] - E[x]^2 would lose (|mean| / sd)^2 eps.
//
// A split kernel writes each segment's M2 (about the segment's running
// mean) to the workspace beside its sum; the combine merges the segments
// about the row's final mean m: M2 = sum_s M2_s + n_s (sum_s / n_s - m)^2
// (exact in real arithmetic whatever each segment was centered on within
// rounding: sum_s / n_s is the segment's mean).
#include <algorithm>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

namespace {

/// Moment `r`'s arrays: its running mean, its block's center, and its
/// block's sum of squares (its mean's block sum: mean_block_sum).
std::string running_mean(int r) {
  return fmt::format("mr{}", r);
}
std::string center(int r) {
  return fmt::format("mc{}", r);
}
std::string block_squares(int r) {
  return fmt::format("mq{}", r);
}

}  // namespace

std::string KernelEmitter::moment_arrays() const {
  std::string out;
  const int64_t lanes = tiling::max_tile(kernel_);
  std::vector<int> means;
  for (const schedule::CenteredMoment& m : kernel_.moments) {
    const std::string type = c_compute_type(node(m.moment).dtype);
    for (const std::string& name :
         {running_mean(m.moment), center(m.moment), block_squares(m.moment)})
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
  return fmt::format("{}[{}]", center(moment_center_), tile_index());
}

void KernelEmitter::emit_moment_pass_body(const PassPlan& plan, const std::string& indent,
                                          std::string& out) const {
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
    init += fmt::format("{} = 0; {} = 0; {} = 0; {}[{}] = 0; {}[{}] = 0; ", acc(v), comp(v),
                        chunk(v), running_mean(v), tile_index(), block_squares(v), tile_index());
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
  // 1. The pass's own loop over the block.
  out += fmt::format("{0}for (int64_t {1} = mb_; {1} < me_; ++{1}) {{\n", in1, i_red);
  emit_level_nodes(plan, 1, in2, out);
  emit_vector_loop(plan, in2, out);
  out += in1 + "}\n";
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
    std::vector<bool> need(graph_.nodes.size(), false);
    need.at(static_cast<size_t>(moment.inputs.at(0))) = true;
    for (size_t i = need.size(); i-- > 0;) {
      if (!need[i]) continue;
      for (int in : operands(graph_.nodes[i])) {
        const auto at = static_cast<size_t>(in);
        if (level_.at(at) >= 1 && !kernel_.is_row_node.at(at)) need[at] = true;
      }
    }
    std::vector<int> body;
    out += in1 + "{\n";
    out += in2 + "int64_t block_rows = 0;  // reduced indices in the chunk sums\n";
    out += fmt::format("{0}for (int64_t {1} = mb_; {1} < me_; ++{1}) {{\n", in2, i_red);
    const std::string in3 = in2 + "  ";
    moment_center_ = v;
    for (const AscNode& n : graph_.nodes) {
      const auto id = static_cast<size_t>(n.id);
      if (!need[id]) continue;
      if (level_[id] == 1) emit_node(n, in3, out);
      if (level_[id] == depth_) body.push_back(n.id);
    }
    // From memory, the next block's rows into the L2 meanwhile: else the
    // memory idles while this loop runs (batchnorm_stats [65536, 256] f32,
    // one thread: 0.85-0.9x the time).
    out += column_prefetches(1, "t1", body, in3, "(me_ - mb_)", ", 0, 2");
    const std::string update = fmt::format("{} += {};", chunk(v), value(moment.inputs.at(0)));
    emit_inner_loop(
        kernel_.tile_axis, "t0", "t1", body, "#pragma omp simd",
        [&](const std::string& at) { return at + update + "\n"; }, in3, out);
    moment_center_ = -1;
    out += fmt::format("{0}if (++block_rows == {1}) {{\n{0}  block_rows = 0;\n", in3,
                       tiling::kColumnChunk);
    out += tile_loop(in3 + "  ", fmt::format("{0}[{1}] += {2}; {2} = 0;", block_squares(v),
                                             tile_index(), chunk(v)));
    out += in3 + "}\n" + in2 + "}\n";  // (the block stays open: each moment's names)
    out += fmt::format("{}const {} nb_ = ({})(me_ - mb_), w_ = nb_ / ({})(me_ - lo);\n", in2, type,
                       type, type);
    out += fmt::format("{}const {} wo_ = ({})(mb_ - lo) * w_;  // na * nb / (na + nb)\n", in2, type,
                       type);
    const std::string d =
        fmt::format("({}[{}] - {}[{}])", center(v), tile_index(), running_mean(v), tile_index());
    const std::string merge =
        fmt::format("const {0} d_ = {1}; {2}[{3}] += d_ * w_; {4} {5}[{3}] = 0; {6} = 0;", type, d,
                    running_mean(v), tile_index(),
                    kahan_add(moment, fmt::format("({}[{}] + {} + d_ * (d_ * wo_))",
                                                  block_squares(v), tile_index(), chunk(v))),
                    block_squares(v), chunk(v));
    out += tile_loop(in2, merge) + in1 + "}\n";
  }
  out += ind + "}\n";
  emit_pass_results(plan, ind, out);
  std::string fold_back, partials;
  for (int v : plan.moments) {
    fold_back += fmt::format("{} -= {}; ", acc(v), comp(v));
    emit_partial_write(v, ind + "  ", partials);
  }
  out += tile_loop(ind, fold_back);
  if (split_possible()) out += ind + "if (nsplit > 1) {\n" + partials + ind + "}\n";
}

void KernelEmitter::emit_moment_combine(int r, const std::string& indent, std::string& out) const {
  const AscNode& n = node(r);
  const AscNode& mean = node(kernel_.moment_of(r)->mean);
  const ReduceCode code = reduce_code(n.op, n.dtype);
  const ReduceCode mean_code = reduce_code(mean.op, mean.dtype);
  const std::string type = c_compute_type(n.dtype);
  const std::string in1 = indent + "  ", in2 = in1 + "  ";
  out += fmt::format(
      "{}if (nsplit > 1) {{  // {}: the segments' moments about the row's mean, in segment "
      "order\n",
      indent, n.name);
  out += fmt::format("{}const {}* w_ = (const {}*)(ws + {} * td->{}) + (row - seg) * tw;\n", in1,
                     code.acc_type, code.acc_type, slot_.at(static_cast<size_t>(r)),
                     tiling::kWorkspaceSlotField);
  out += fmt::format("{}const {}* wm_ = (const {}*)(ws + {} * td->{}) + (row - seg) * tw;\n", in1,
                     mean_code.acc_type, mean_code.acc_type, slot_.at(static_cast<size_t>(mean.id)),
                     tiling::kWorkspaceSlotField);
  out += tile_loop(in1, fmt::format("{} = 0;", acc(r)));
  const int axis = kernel_.inner_axes.front();
  out += fmt::format("{}for (int64_t s_ = 0; s_ < nsplit; ++s_) {{\n", in1);
  out += fmt::format("{}const {} ns_ = ({})af_min(td->{}, {} - s_ * td->{});\n", in2, type, type,
                     tiling::kSegmentField, size(axis), tiling::kSegmentField);
  const std::string row_mean =
      reduce_result(mean.op, mean.dtype, acc(mean.id), nan(mean.id), reduce_count(mean));
  out += tile_loop(
      in2, fmt::format("const {0} d_ = wm_[s_ * tw + {1}] / ns_ - {2}; {3} += w_[s_ * tw + {1}] + "
                       "d_ * d_ * ns_;",
                       type, tile_index(), row_mean, acc(r)));
  out += in1 + "}\n" + indent + "}\n";
}

}  // namespace autofuse::codegen::cpu
