// The column layout's summing loops as 16-lane vectors with their sums in
// registers (AVX-512, or AVX2's lane pairs: `#if AF_VECTOR_PASS`, the
// scalar loops after `#else`).
//
// A column layout pass runs its reduced rows one by one, and in each row an
// `omp simd` loop over the tile's lanes adds each lane's value into its
// chunk-sum array (a<r>c[i - t0]): per vector a load and a store of the
// accumulator besides the data's load, and each row's adds wait for the
// last row's stores. When the loop body only does float arithmetic on
// contiguous f32, bf16 or f16 loads, tile arrays, per-row values (a weight per
// reduced index, level 1: computed in the lambda as the row loop did) and
// kernel-level scalars, and every value it sums goes into a column array,
// it is emitted once more as a lambda over 16 lanes, and the prelude's
// af_column_rows runs it over the rows with the accumulators in registers:
// strips of 16 vectors for one sum, of 8 for more, then single vectors (the
// last one masked), for runs of rows that end where the chunk ends
// (kColumnChunk rows), after which the chunk sums are flushed as before:
//
//   const auto lanes_ = [&](const int64_t i0, const int64_t i1, const int64_t n_,
//                           af_f32x16* s_) AF_LAMBDA_INLINE {
//     af_f32x16 v1; af_load16(&v1, &p0[b1 + i0 * 256 + i1], n_);  // x
//     af_f32x16 w7; af_load16(&w7, &mc10[i1 - t0], n_);            // a tile array
//     const auto v8 = (v1 - w7);
//     const auto v9 = (v8 * v8);
//     s_[0] += v9; s_[1] += v8;
//   };
//   float* const sums_[2] = {&a10c[0], &md10[0]};
//   for (int64_t r_ = mb_; r_ < me_;) {
//     const int64_t re_ = af_min(me_, r_ + (64 - block_rows));
//     af_column_rows<2>(sums_, t0, t1, r_, re_, lanes_);
//     block_rows += re_ - r_; r_ = re_;
//     if (block_rows == 64) { block_rows = 0; <flush> }
//   }
//
// Each lane adds the same values in the same order as the loop did, so the
// sums have the same bits (g++ contracts a product into the add in both).
//
// The strips change the order rows are read in: a strip reads 16 V lanes of
// each row of the run, then the next strip. From memory (one thread, Zen 5):
// f32 rows as fast as whole rows or faster (masked pooling [32, 512, 768]
// 0.92 -> 0.64 ms, column sum [65536, 256] 1.23 -> 1.02), but bf16 rows
// slower (pooling [128, 512, 768] 1.86 -> 2.3 ms with strips of 256 lanes,
// 3.3 with 128; shorter runs and prefetches did not help), so bf16 data
// takes the vector form only when the tiling found it in the caches
// (pf_rows == 0: [4, 128, 768] 0.0104 -> 0.0077 ms). Data from the L3 pays
// a little for the order (f32 [4, 128, 768] 0.0147 -> 0.0157 ms). A tile
// narrower than its rows (ntiles > 1) reads them strided: the lambda
// prefetches pf_rows ahead as the loop did; whole-row tiles stream without
// (batchnorm_stats' statistics 1.49 ms without, 1.60 with).
//
// Harness (the dumped batchnorm_stats [65536, 256] f32 module, one thread):
// the statistics pass 2.0 -> 1.5 ms, the kernel 4.2 -> 3.7 ms, checksums
// identical (session 37, docs/benchmarks.md).
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

std::vector<int> KernelEmitter::deepest_body(const PassPlan& plan) const {
  std::vector<int> body;
  for (const AscNode& n : graph_.nodes)
    if (plan.need[static_cast<size_t>(n.id)] && level_[static_cast<size_t>(n.id)] == plan.deepest)
      body.push_back(n.id);
  return body;
}

std::vector<ColumnSum> KernelEmitter::column_chunk_sums(const PassPlan& plan) const {
  std::vector<ColumnSum> sums;
  if (!column_ || plan.deepest != depth_ || kernel_.inner_axes.size() != 1) return {};
  const int row_axis = kernel_.inner_axes.front();
  for (int r : plan.reduces) {
    const AscNode& n = node(r);
    const AscNode& input = node(n.inputs.at(0));
    if (accumulate_level(n) != plan.deepest || acc_kind(n, plan.deepest) != Acc::Chunked ||
        !tile_vector_.at(static_cast<size_t>(r)) || !vector_float_value(n.dtype) ||
        (n.op != OpKind::ReduceSum && n.op != OpKind::ReduceMean) || !varies(input, row_axis))
      return {};
    sums.push_back({chunk(r), input.id});
  }
  return sums;
}

std::optional<std::vector<int>> KernelEmitter::column_row_nodes(const PassPlan& plan) const {
  std::vector<int> nodes;
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!plan.need[id] || level_[id] != 1) continue;
    const bool kind = n.kind == AscKind::Load || n.kind == AscKind::Scalar ||
                      n.kind == AscKind::Broadcast || n.kind == AscKind::Compute ||
                      n.kind == AscKind::Cast;
    // Scalar code, any dtype (an int64 mask and its cast); the vector code
    // takes only float operands from them (emit_column_vector_rows).
    if (!kind || buffered_.at(id)) return std::nullopt;
    nodes.push_back(n.id);
  }
  return nodes;
}

bool KernelEmitter::emit_column_vector_rows(const std::vector<int>& body,
                                            const std::vector<int>& row_nodes,
                                            const std::vector<ColumnSum>& sums,
                                            const ColumnRows& rows, const std::string& fallback,
                                            const std::string& ind, std::string& out) const {
  if (!column_ || sums.empty() || kernel_.inner_axes.size() != 1) return false;
  const int row_axis = kernel_.inner_axes.front(), tile_axis = kernel_.tile_axis;
  std::vector<bool> in_body(graph_.nodes.size(), false), per_row(graph_.nodes.size(), false);
  for (int id : body)
    in_body[static_cast<size_t>(id)] = true;
  for (int id : row_nodes)
    per_row[static_cast<size_t>(id)] = true;
  for (const ColumnSum& s : sums)
    if (!in_body.at(static_cast<size_t>(s.value)) || !vector_float_value(node(s.value).dtype))
      return false;
  const std::string li = ind + "    ";
  std::string lambda, tile_loads;
  std::vector<bool> loaded(graph_.nodes.size(), false);
  // An operand computed outside the loop: a tile array (loaded as a vector)
  // or a kernel-level scalar; a value of the row loop itself is not here.
  const auto operand = [&](int in, std::string& name) {
    const auto at = static_cast<size_t>(in);
    if (in_body[at]) {
      name = value(in);
      return true;
    }
    const std::string v = value(in);
    if (!vector_float_value(node(in).dtype)) return false;
    if (v.find('[') != std::string::npos) {
      name = fmt::format("w{}", in);
      if (!loaded[at])
        tile_loads += fmt::format("{0}af_f32x16 {1}; af_load16(&{1}, &{2}, n_);  // {3} (tile)\n",
                                  li, name, v, node(in).name);
      loaded[at] = true;
      return true;
    }
    name = v;
    return level_.at(at) <= 0 || per_row[at];  // a kernel-level or per-row scalar
  };
  bool narrow = false;  // bf16 data
  for (int id : register_order(body)) {
    const AscNode& n = node(id);
    std::string statement;
    switch (n.kind) {
      case AscKind::Load: {
        // f32, or bf16 / f16 widened (f16 by F16C: kernel_prelude_f16.h).
        const char* widen = half_suffix(n.dtype);
        narrow = narrow || n.dtype == DType::bf16;
        if ((n.dtype != DType::f32 && *widen == '\0') || buffered_.at(static_cast<size_t>(id)) ||
            n.view.strides.at(static_cast<size_t>(tile_axis)) != sym::Expr(1))
          return false;
        statement = fmt::format("af_f32x16 {0}; af_load16{1}(&{0}, &p{2}[{3}], n_);", value(id),
                                widen, node(n.inputs.at(0)).arg_index, address(n));
        break;
      }
      case AscKind::Scalar:
        if (!vector_float_value(n.dtype)) return false;
        statement =
            fmt::format("const auto {} = {};", value(id), scalar_literal(n.dtype, n.scalar));
        break;
      case AscKind::Broadcast:
      case AscKind::Compute: {
        if (!vector_float_value(n.dtype) ||
            (n.kind == AscKind::Compute && !vector_arithmetic(n.op)))
          return false;
        std::vector<std::string> args;
        for (int in : n.inputs) {
          std::string name;
          if (!operand(in, name)) return false;
          args.push_back(name);
        }
        statement = n.kind == AscKind::Broadcast
                        ? fmt::format("const auto {} = {};", value(id), args.at(0))
                        : fmt::format("const auto {} = {};", value(id),
                                      compute_expr(n.op, node(n.inputs.at(0)).dtype, args));
        break;
      }
      default:  // stores, gathers, casts, other ops: the loop
        return false;
    }
    lambda += fmt::format("{}{}  // {}\n", li, statement, n.name);
  }
  // The per-row scalars first, as the row loop computes them (scalar code).
  std::string row_values;
  for (int id : row_nodes)
    emit_node(node(id), li, row_values);
  // A tile narrower than the rows reads them strided: the row loop's
  // prefetches, one per vector (a whole-row tile streams without them).
  const std::string prefetch =
      column_prefetches(1, "", body, li, "pf_rows", "", "i" + std::to_string(tile_axis));
  if (!prefetch.empty())
    row_values = li + "if (pf_tiles_) {\n" + prefetch + li + "}\n" + row_values;
  lambda = row_values + lambda;
  std::string adds, arrays;
  for (size_t j = 0; j < sums.size(); ++j) {
    adds += fmt::format("s_[{}] += {}; ", j, value(sums[j].value));
    const std::string& e = sums[j].element;
    arrays += fmt::format("{}&{}[0]", j ? ", " : "", e.substr(0, e.find('[')));
  }
  const std::string in1 = ind + "  ", in2 = in1 + "  ";
  // bf16 rows from memory: the strips were slower than the loop's whole
  // rows (pooling [128, 512, 768] 2.3 vs 1.85 ms); from the caches faster.
  // f16 rows take the vectors from memory too: the loop's integer
  // conversions made it compute-bound (column sum of squares f16 [65536,
  // 256], harness: 4.14 ms the loop, 2.79 the vectors; bf16's 2.32).
  std::string when = rows.when;
  if (narrow) when += (when.empty() ? "" : " && ") + std::string("pf_rows == 0");
  out += "#if AF_VECTOR_PASS\n";
  out += ind + (when.empty() ? "{" : "if (" + when + ") {") +
         "  // 16-lane column vectors, the sums in registers (column_vectors.cpp)\n";
  if (!prefetch.empty()) out += in1 + "const bool pf_tiles_ = pf_rows > 0 && ntiles > 1;\n";
  out += fmt::format(
      "{}const auto lanes_ = [&](const int64_t i{}, const int64_t i{}, const int64_t n_, "
      "af_f32x16* s_) AF_LAMBDA_INLINE {{\n",
      in1, row_axis, tile_axis);
  out += tile_loads + lambda + li + adds + "\n" + in1 + "};\n";
  out += fmt::format("{}float* const sums_[{}] = {{{}}};\n", in1, sums.size(), arrays);
  out += fmt::format("{}for (int64_t r_ = {}; r_ < {};) {{\n", in1, rows.lo, rows.hi);
  out += fmt::format("{}const int64_t re_ = af_min({}, r_ + ({} - {}));\n", in2, rows.hi,
                     tiling::kColumnChunk, rows.counter);
  out += fmt::format("{}af_column_rows<{}>(sums_, t0, t1, r_, re_, lanes_);\n", in2, sums.size());
  out += fmt::format("{}{} += re_ - r_;\n{}r_ = re_;\n", in2, rows.counter, in2);
  out += fmt::format("{0}if ({1} == {2}) {{\n{0}  {1} = 0;\n", in2, rows.counter,
                     tiling::kColumnChunk);
  out += rows.flush(in2 + "  ") + in2 + "}\n" + in1 + "}\n";
  if (when.empty()) {
    out += ind + "}\n#else\n" + fallback + "#endif\n";
  } else {  // the loop once, for both
    out += ind + "} else\n#endif\n" + ind + "{\n" + fallback + ind + "}\n";
  }
  return true;
}

}  // namespace autofuse::codegen::cpu
