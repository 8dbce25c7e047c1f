// A short row's reducing pass written as 16-lane vector code (the row
// layout's passes with short_row Reduces, short_row_reduce.cpp: sums, maxes
// and mins), and its storing pass (reduction_pass.cpp's emit_vector_loop).
//
// A short row's pass normally writes each reduced value to a buffer in its
// `omp simd` loop and sums the buffer after it (af_row_sum_f32): a store and
// a load per vector, and the sum's adds form one chain per accumulator that
// starts only when the loop ends. Each pass of a row waits for the last
// one's reduction (layernorm: the mean, then the variance about it), and a
// row of 768 has ~1300 instructions, more than the out-of-order window, so
// the chains are on the row's critical path. When the pass only does
// arithmetic on float values (row buffers, contiguous f32, bf16 and f16
// loads,
// gathered rows at offsets found outside the loop, row-level scalars:
// layernorm's sum((x - mean)^2), rmsnorm's sum(x * x)), the loop body is
// emitted once more with 16-lane vector types (GNU vectors: `auto` carries
// vector-ness from the loads through +, -, *, / and broadcasts of row-level
// scalars) in a lambda that adds its values into four accumulators, one per
// vector of a run of 64, so the sums need no buffer and their chains are a
// quarter as long; values kept in a row buffer are stored from the vectors:
//
//   af_f32x16 s<r>[4] = {};
//   const auto lanes_ = [&](const int64_t i<axis>, const int k_, const int64_t n_) {
//     af_f32x16 v<a>; af_load16_bf16(&v<a>, &p0[b<a> + i<axis>], n_);  // x
//     const auto v<b> = (v<a> - v<mean>);        // a row-level float
//     af_store16(&ub<b>[i<axis>], &v<b>, n_);   // its row buffer
//     const auto v<c> = (v<b> * v<b>);
//     af_add_lanes(&s<r>[k_], &v<c>, n_);
//   };
//   for (; i + 64 <= hi; i += 64) lanes_(i, 0, 16); ... lanes_(i + 48, 3, 16);
//   for (; i < hi; i += 16) lanes_(i, 0, hi - i);   // n_ < 16: the row's tail
//   a<r> = af_row_sum16x4(s<r>);                     // (kernel_prelude_lanes.h)
//
// With AVX-512 or AVX2 (`#if AF_VECTOR_PASS`, the loop in the `#else`).
// With AVX2 af_f32x16 is a pair of 8-lane registers with operators
// (kernel_prelude_lanes.h): as a 64-byte GNU vector there the passes took
// 1.4-2.2x the loops' time (session 35); as pairs, on a Zen 3 (session 38),
// bert_embeddings bf16 0.68x, rmsnorm bf16 0.74x, f32 0.86x, softmax_mask
// 0.88-0.92x, skip_layernorm bf16 0.86x (docs/benchmarks.md).
//
// Rows of kVectorPassMinRow to kShortReduceRow elements. A static row's
// sums: the vector pass alone. A symbolic row's sums keep their buffered
// loop: behind a per-row branch (`if (hi - lo >= 64)`) the vector pass made
// mse f32 [64, 1024] (one row of 65536 reduced by the clause loop, so the
// vector pass never ran) 1.25x the time: its code changed how g++ compiled
// the rest of the function (softmax's exp pass excepted, below). The sums'
// order differs from af_row_vector_sum_f32's (64 partial sums, not 32: see
// there why the buffers keep theirs), so a static row's sum may differ from
// the same row's with a symbolic length in the last bits; and g++ contracts
// a product into the accumulator's add (one rounding less).
//
// Max and min passes (not with sums in the same pass), static or symbolic
// rows, one by one or in groups (row_groups.cpp): four accumulators and a
// probe sum (af_extreme_lanes); the pass sets `redo_` when a probe is NaN
// (a NaN, or infinities of both signs), and the buffered loop after it,
// which tests every value for NaN, runs for that row (and for a symbolic
// row outside 64-1024). The result is exact either way (a max does not
// depend on the order). Testing each value, or redoing the row, inside the
// vector pass made g++ allocate the pass's registers worse (softmax_mask
// f32 1.2x the time). Softmax's first pass (x * 0.125 + mask into its row
// buffer, the max) with its storing pass as vectors too, softmax_mask
// [8, 12, 384, 384] one thread: f32 0.82-0.88x the time, bf16 (rows in
// pairs) 0.92-0.93x; [2, 12, 128, 128] 0.90-0.93x (session 36). The bf16
// max pass alone as vectors was slower (3.52 against 3.17 ms, session 34),
// and so was the storing pass alone here: the two gain together.
//
// Softmax's exp pass (exp(x - max) into its row buffer, and its sum) is a
// vector pass too where AVX-512 gives af_exp_nonpos_x16 (`#if
// AF_VECTOR_PASS && AF_EXP_ROW_X16`), for symbolic rows as well (the loop
// after it for rows outside 64-1024): one sweep over the row instead of
// three (x - max to the buffer, af_exp_nonpos_row over it, af_row_sum_f32).
// The exps are the same bits; the sum's order is the vector pass's. The
// pass is compute only (its buffers in the L1) while the last pass streams
// its stores, so it also prefetches the rows ahead (the last pass's
// prefetches then hit the cache). softmax_mask [8, 12, 384, 384] one thread,
// Ice Lake (session 41, the modules interleaved in one process): f32
// 0.86-0.87x the time (the fused sweep alone 0.96x, the prefetches moved
// alone 0.93-0.98x), bf16 0.93-0.95x; [2, 12, 384, 384] (in the L3) f32 0.88x.
//
// A short row's storing pass (no Reduce; its stores f32, bf16 or f16,
// contiguous, of vectors: the normalizing pass of rmsnorm, layernorm,
// softmax) is written the same way: the lambda hands each store's 16 lanes
// back (st_[k]), and the prelude stores them per run of 64 (af_put16_f32,
// af_put32_bf16: vcvtne2ps2bf16, lane by lane where a value is subnormal;
// streaming under key 1 where the address is 64-byte aligned; the row's
// rest by 16 with ordinary stores). No chunk buffer between the values and
// the output, no separate rounding and subnormal-test loops: rmsnorm bf16
// [32, 512, 1024] 0.93-0.94x the time, bert_embeddings f32 0.90-0.93x,
// bf16 0.96-0.97x, skip_layernorm bf16 0.96x (docs/benchmarks.md, session
// 35). af_put32_bf16 rounds by vcvtne2ps2bf16 with AVX512-BF16, else by
// af_f32_to_bf16's integer steps on the vectors (AVX2: lane pairs; AVX-512:
// both halves packed by one vpermt2w). AVX-512 without BF16 ran the loop
// until session 41 (g++ rounds ~9 instructions per 16 lanes either way,
// and an earlier integer form with two vpmovdw lost to the loop's 64-byte
// vectors); with vpermt2w, on Ice Lake, one thread, the modules
// interleaved: rmsnorm bf16 [4, 128, 1024] 0.79x the time, [32, 512, 1024]
// 0.91-0.97x, skip_layernorm bf16 [4, 128, 768] 0.98x, [16, 512, 768]
// 0.95-1.03x, softmax_mask bf16 0.99x; bert_embeddings bf16 (`autofuse
// bench`, the two builds alternating) [4, 128] 0.85-0.91x.
// A symbolic row's behind `if (hi - lo >= 64 && hi - lo <= 1024)`, the
// loop in its `else`.
//
// Measured (`bench/run --no-peers --no-compile-time --threads 1,2`, A/B in
// one run, Zen 5; docs/benchmarks.md, session 34): rmsnorm bf16 0.80-0.85x
// the time, skip_layernorm bf16 0.82-0.90x, bert_embeddings bf16
// 0.77-0.83x, f32 0.86-0.95x; memory-bound f32 rows within noise (rmsnorm
// f32 large 1.01-1.02x). The bf16 widening is one vpmovzxwd
// (AF_WIDEN_U16X16): g++'s generic conversion took three more instructions
// per vector and made rmsnorm bf16 slower than the buffered loop. f16 goes
// through F16C's vcvtph2ps and vcvtps2ph (kernel_prelude_f16.h), where the
// loops convert by integer steps (harness, one thread, Ice Lake, session
// 43): LayerNorm f16 [16384, 1024] 0.48x the time, RMSNorm 0.42x, softmax
// [36864, 384] 0.52x.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

const char* half_suffix(DType dtype) {
  return dtype == DType::bf16 ? "_bf16" : dtype == DType::f16 ? "_f16" : "";
}

bool vector_float_value(DType dtype) {
  return c_compute_type(dtype) == "float" && !is_float8(dtype);
}

bool float_arithmetic(OpKind op) {
  return op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul || op == OpKind::Div ||
         op == OpKind::Neg;
}

bool vector_arithmetic(OpKind op) {
  if (float_arithmetic(op)) return true;
  switch (op) {
    case OpKind::Reciprocal:  // (1.0f / x)
    // af_f32x16 overloads (kernel_prelude_lane_ops.h), lane by lane the
    // scalar functions' selects.
    case OpKind::Abs:
    case OpKind::Relu:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Sqrt:
      return true;
    default:
      return false;
  }
}

bool KernelEmitter::extreme_reduce(int r) const {
  return node(r).op == OpKind::ReduceMax || node(r).op == OpKind::ReduceMin;
}

bool KernelEmitter::extreme_pass(const PassPlan& plan) const {
  return std::any_of(plan.short_row.begin(), plan.short_row.end(),
                     [&](int r) { return extreme_reduce(r); });
}

std::vector<bool> KernelEmitter::vector_pass_lanes(const PassPlan& plan,
                                                   const std::vector<int>& body) const {
  if (plan.short_row.empty()) return {};
  return vector_lanes(plan, body, false);
}

std::vector<bool> KernelEmitter::vector_store_pass_lanes(const PassPlan& plan,
                                                         const std::vector<int>& body) const {
  if (plan.deepest != 1 || !plan.short_row.empty() ||
      std::any_of(plan.reduces.begin(), plan.reduces.end(),
                  [&](int r) { return accumulate_level(node(r)) == plan.deepest; }) ||
      std::none_of(body.begin(), body.end(),
                   [&](int id) { return node(id).kind == AscKind::Store; }))
    return {};
  return vector_lanes(plan, body, true);
}

std::vector<bool> KernelEmitter::vector_lanes(const PassPlan& plan, const std::vector<int>& body,
                                              bool storing) const {
  if (column_ || kernel_.inner_axes.size() != 1) return {};
  const int axis = kernel_.inner_axes.front();
  if (storing && axis != vector_axis_) return {};
  const std::optional<int64_t> extent = graph_.axes.at(static_cast<size_t>(axis)).size.as_const();
  if (extent && (*extent < kVectorPassMinRow || *extent > tiling::kShortReduceRow)) return {};
  // A symbolic row: only where a row of 64-1024 can come (not in the split
  // rows' loop, groups of 8 rows of at most 64, or a row buffer variant
  // for other lengths): cold compiles grew with their copies
  // (softmax_mask f32 1.04 -> 1.70 s).
  if (!extent && (split_possible() || !symbolic_vector_passes_ ||
                  (grouped_ && group_row_max_ <= kVectorPassMinRow)))
    return {};
  const bool extremes = extreme_pass(plan);
  // Maxes and sums not in one pass: its loop redoes a max's row (below).
  if (extremes && !std::all_of(plan.short_row.begin(), plan.short_row.end(),
                               [&](int r) { return extreme_reduce(r); }))
    return {};
  const auto vector_dtype = [](DType dtype) {
    return dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16;
  };
  // Per node: whether the lambda holds it as a vector (else a row-level float).
  std::vector<bool> vec(graph_.nodes.size(), false);
  std::vector<bool> in_body(graph_.nodes.size(), false);
  for (int id : body)
    in_body[static_cast<size_t>(id)] = true;
  for (int id : register_order(body)) {
    const AscNode& n = node(id);
    // A value written to its row buffer here: a vector (float, see below).
    const bool writes_ub = ub_pass_ >= 0 && ub_write_pass(id) == ub_pass_;
    if (ub_pass_ >= 0 && reads_row_buffer(id, ub_pass_)) {
      if (!vector_float_value(n.dtype)) return {};
      vec[static_cast<size_t>(id)] = true;
      continue;
    }
    switch (n.kind) {
      case AscKind::Gather:  // rows at offsets found outside the loop
        if (!vector_dtype(n.dtype) ||
            n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1) ||
            gather_row_element(n).empty())
          return {};
        vec[static_cast<size_t>(id)] = true;
        break;
      case AscKind::Load: {
        // Contiguous f32, bf16 or f16 (widened), or a row-invariant Load's f32
        // copy.
        const bool invariant = row_invariant_.at(static_cast<size_t>(id));
        if (buffered_.at(static_cast<size_t>(id))) return {};
        if (!invariant && (!vector_dtype(n.dtype) ||
                           n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1)))
          return {};
        vec[static_cast<size_t>(id)] = true;
        break;
      }
      case AscKind::Scalar:
        if (!vector_float_value(n.dtype)) return {};
        break;
      case AscKind::Broadcast:
      case AscKind::Compute: {
        if (!vector_float_value(n.dtype)) return {};
        // Softmax's exp(x - max) in a reducing pass: af_exp_nonpos_x16
        // (AVX-512 only: the pass is then under AF_EXP_ROW_X16 too).
        if (n.kind == AscKind::Compute && !vector_arithmetic(n.op) && (storing || !exp_nonpos(n)))
          return {};
        for (int in : n.inputs) {
          if (!vector_float_value(node(in).dtype)) return {};
          if (in_body[static_cast<size_t>(in)] && vec[static_cast<size_t>(in)])
            vec[static_cast<size_t>(id)] = true;
        }
        break;
      }
      case AscKind::Store: {  // f32, bf16 or f16, contiguous, of a vector
        const int value = n.inputs.at(0);
        if (!storing || !vector_dtype(n.dtype) ||
            n.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1) ||
            output_of_store_.at(static_cast<size_t>(id)) < 0 ||
            !vector_float_value(node(value).dtype) || !in_body[static_cast<size_t>(value)] ||
            !vec[static_cast<size_t>(value)])
          return {};
        vec[static_cast<size_t>(id)] = true;
        break;
      }
      default:  // casts, indices, other ops: the `omp simd` loop
        return {};
    }
    if (writes_ub && !vec[static_cast<size_t>(id)]) return {};
  }
  if (storing) return vec;
  // Sums over symbolic rows keep their buffers' order (bits as before), but
  // for softmax's exp pass.
  const bool exps = vector_exps(body, vec);
  for (int r : plan.short_row) {
    const AscNode& n = node(r);
    const int input = n.inputs.at(0);
    const bool sum = n.op == OpKind::ReduceSum || n.op == OpKind::ReduceMean;
    if (!(extreme_reduce(r) || (sum && (extent || exps))) || !vector_float_value(n.dtype) ||
        !in_body[static_cast<size_t>(input)] || !vec[static_cast<size_t>(input)])
      return {};
  }
  return vec;
}

bool KernelEmitter::vector_exps(const std::vector<int>& body, const std::vector<bool>& vec) const {
  if (vec.empty()) return false;
  return std::any_of(body.begin(), body.end(), [&](int id) {
    return vec.at(static_cast<size_t>(id)) && exp_nonpos(node(id));
  });
}

void KernelEmitter::emit_vector_pass(const PassPlan& plan, const std::vector<int>& body,
                                     const std::vector<bool>& vec, bool redo,
                                     const std::string& ind, std::string& out) const {
  const int axis = kernel_.inner_axes.front();
  const std::string i = fmt::format("i{}", axis);
  const bool extremes = extreme_pass(plan);
  out += ind + "{  // the pass as 16-lane vectors (vector_pass.cpp)\n";
  const std::string inner = ind + "  ";
  for (int r : plan.short_row) {
    const std::string& name = node(r).name;
    if (!extremes) {
      out += fmt::format("{}af_f32x16 s{}[4] = {{}};  // {}\n", inner, r, name);
      continue;
    }
    out += fmt::format("{0}af_f32x16 m{1}[4], p{1}[4] = {{}};  // {2}, its probe sums\n", inner, r,
                       name);
    out +=
        fmt::format("{0}m{1}[0] = m{1}[1] = m{1}[2] = m{1}[3] = (af_f32x16){{}} + {2};\n", inner, r,
                    node(r).op == OpKind::ReduceMax ? "-__builtin_inff()" : "__builtin_inff()");
  }
  out += fmt::format(
      "{}const auto lanes_ = [&](const int64_t {}, const int k_, const int64_t n_) "
      "AF_LAMBDA_INLINE {{\n",
      inner, i);
  const std::string li = inner + "  ";
  out += vector_statements(body, vec, li, {});
  for (int r : plan.short_row) {
    const std::string v = value(node(r).inputs.at(0));
    out += extremes ? fmt::format("{0}af_extreme_lanes(&m{1}[k_], &p{1}[k_], &{2}, n_, {3});\n", li,
                                  r, v, node(r).op == OpKind::ReduceMax ? "true" : "false")
                    : fmt::format("{}af_add_lanes(&s{}[k_], &{}, n_);\n", li, r, v);
  }
  out += inner + "};\n";
  out += fmt::format("{}int64_t {} = lo;\n", inner, i);
  // Softmax's exp pass, compute only (its row buffers in the L1), also
  // prefetches the rows ahead that the last pass does (those then hit).
  const std::string prefetches =
      vector_exps(body, vec) ? row_prefetch_lines(axis, i, inner + "  ") : std::string();
  out += fmt::format(
      "{0}for (; {1} + 64 <= hi; {1} += 64) {{\n{2}"
      "{0}  lanes_({1}, 0, 16); lanes_({1} + 16, 1, 16); lanes_({1} + 32, 2, 16); "
      "lanes_({1} + 48, 3, 16);\n"
      "{0}}}\n",
      inner, i, prefetches);
  out += fmt::format("{0}for (; {1} < hi; {1} += 16) lanes_({1}, 0, hi - {1});\n", inner, i);
  std::string probes;
  for (int r : plan.short_row) {
    if (!extremes) {
      out += fmt::format("{}{} = af_row_sum16x4(s{});\n", inner, acc(r), r);
      continue;
    }
    out += fmt::format("{}{} = af_row_extreme16x4(m{}, {}); {} = 0;\n", inner, acc(r), r,
                       node(r).op == OpKind::ReduceMax ? "true" : "false", nan(r));
    probes += fmt::format("{}af_probe_nan16x4(p{})", probes.empty() ? "" : " || ", r);
  }
  if (extremes) out += fmt::format("{}{} = {};\n", inner, kVectorPassRedo, probes);
  if (redo && !extremes) out += fmt::format("{}{} = false;\n", inner, kVectorPassRedo);
  out += ind + "}\n";
}

std::string KernelEmitter::vector_statements(
    const std::vector<int>& body, const std::vector<bool>& vec, const std::string& li,
    const std::function<std::string(const AscNode&)>& store, int axis) const {
  const std::string i = fmt::format("i{}", axis >= 0 ? axis : kernel_.inner_axes.front());
  std::string out;
  for (int id : register_order(body)) {
    const AscNode& n = node(id);
    if (ub_pass_ >= 0 && reads_row_buffer(id, ub_pass_)) {
      out +=
          fmt::format("{0}af_f32x16 {1}; af_load16(&{1}, &ub{2}[{3}], n_);  // {4} (row buffer)\n",
                      li, value(id), id, i, n.name);
      continue;
    }
    std::string statement;
    switch (n.kind) {
      case AscKind::Store:
        statement = store(n);
        break;
      case AscKind::Gather:
      case AscKind::Load: {
        const bool invariant =
            n.kind == AscKind::Load && row_invariant_.at(static_cast<size_t>(id));
        const std::string at =
            invariant ? fmt::format("c{}[{}]", id, i)
            : n.kind == AscKind::Gather
                ? gather_row_element(n)
                : fmt::format("p{}[{}]", node(n.inputs.at(0)).arg_index, address(n));
        const char* widen = invariant ? "" : half_suffix(n.dtype);
        statement =
            fmt::format("af_f32x16 {0}; af_load16{1}(&{0}, &{2}, n_);", value(id), widen, at);
        break;
      }
      case AscKind::Scalar:
        statement =
            fmt::format("const auto {} = {};", value(id), scalar_literal(n.dtype, n.scalar));
        break;
      case AscKind::Broadcast:
        // (A column tile's array: 16 columns; lane_loop_values.)
        statement =
            vec[static_cast<size_t>(id)] && tile_vector_.at(static_cast<size_t>(n.inputs.at(0)))
                ? fmt::format("af_f32x16 {0}; af_load16(&{0}, &{1}, n_);", value(id),
                              value(n.inputs.at(0)))
                : fmt::format("const auto {} = {};", value(id), value(n.inputs.at(0)));
        break;
      default: {  // Compute (vector_pass_lanes)
        std::vector<std::string> args;
        for (int a : n.inputs)
          args.push_back(value(a));
        const bool lanes = vec[static_cast<size_t>(id)];
        if (chunk_sigmoid(id)) {  // (a lane loop's: lane_loop_values)
          statement = fmt::format(
              "af_f32x16 e{0}_; af_load16(&e{0}_, &e{0}[{1} - nt_k], n_); const auto {2} = "
              "af_sigmoid_from_exp({3}, e{0}_);",
              id, i, value(id), args.at(0));
          break;
        }
        const int constant = clamp_constant(n);
        statement = fmt::format(
            "const auto {} = {};", value(id),
            constant >= 0   ? min_max_with_constant(n.op, constant, args.at(0), args.at(1))
            : exp_nonpos(n) ? fmt::format("af_exp_nonpos{}({})", lanes ? "_x16" : "", args.at(0))
                            : compute_expr(n.op, node(n.inputs.at(0)).dtype, args));
      }
    }
    out += fmt::format("{}{}  // {}{}\n", li, statement, n.name,
                       vec[static_cast<size_t>(id)] ? "" : " (row-level)");
    if (ub_pass_ >= 0 && ub_write_pass(id) == ub_pass_)
      out += fmt::format("{}af_store16(&ub{}[{}], &{}, n_);  // its row buffer\n", li, id, i,
                         value(id));
  }
  return out;
}

bool KernelEmitter::emit_vector_store_pass(const PassPlan& plan, const std::vector<int>& body,
                                           const std::string& ind, std::string& out) const {
  const std::vector<bool> vec = vector_store_pass_lanes(plan, body);
  if (vec.empty()) return false;
  // With AVX-512 or AVX2 (AF_VECTOR_PASS): elsewhere the loop.
  out += "#if AF_VECTOR_PASS\n";
  const int axis = kernel_.inner_axes.front();
  if (graph_.axes.at(static_cast<size_t>(axis)).size.as_const()) {
    emit_vector_stores(body, vec, ind, out);
    out += "#else\n";
    emit_clause_loop(plan, body, nullptr, ind, out);
    out += "#endif\n";
    return true;
  }
  // A symbolic row: the loop where it is shorter or longer.
  out += fmt::format("{}if (hi - lo >= {} && hi - lo <= {}) {{\n", ind, kVectorPassMinRow,
                     tiling::kShortReduceRow);
  emit_vector_stores(body, vec, ind + "  ", out);
  out += ind + "} else\n#endif\n" + ind + "{\n";
  emit_clause_loop(plan, body, nullptr, ind + "  ", out);
  out += ind + "}\n";
  return true;
}

void KernelEmitter::emit_vector_stores(const std::vector<int>& body, const std::vector<bool>& vec,
                                       const std::string& ind, std::string& out) const {
  const int axis = kernel_.inner_axes.front();
  const std::string i = fmt::format("i{}", axis);
  std::vector<int> stores;
  for (int id : register_order(body))
    if (node(id).kind == AscKind::Store) stores.push_back(id);
  const size_t count = stores.size();
  const auto slot = [&](const AscNode& n) {
    return std::find(stores.begin(), stores.end(), n.id) - stores.begin();
  };
  out += ind + "{  // a storing pass as 16-lane vectors (vector_pass.cpp)\n";
  const std::string inner = ind + "  ";
  const bool streams = std::any_of(stores.begin(), stores.end(),
                                   [&](int id) { return streamed_.at(static_cast<size_t>(id)); });
  if (streams)
    out += fmt::format("{}const bool nt_ = AF_NT_STORES && td->header.tiling_key == {};\n", inner,
                       tiling::kStreamingStoresKey);
  out += fmt::format(
      "{}const auto lanes_ = [&](const int64_t {}, const int64_t n_, af_f32x16* st_) "
      "AF_LAMBDA_INLINE {{\n",
      inner, i);
  out += vector_statements(body, vec, inner + "  ", [&](const AscNode& n) {
    return fmt::format("st_[{}] = {};", slot(n), value(n.inputs.at(0)));
  });
  out += inner + "};\n";
  const auto target = [&](int id, const std::string& at) {
    return fmt::format("&q{}[{}]", output_of_store_.at(static_cast<size_t>(id)),
                       address(node(id), axis, at));
  };
  const auto nt = [&](int id) { return streamed_.at(static_cast<size_t>(id)) ? "nt_" : "false"; };
  // The run's element `e` on (i<axis> + e).
  const auto run_at = [&](int e) { return e == 0 ? i : fmt::format("{} + {}", i, e); };
  // Runs of 64: each store's lines whole (32 bf16 per vcvtne2ps2bf16).
  const std::string l2 = inner + "  ";
  out += fmt::format("{}int64_t {} = lo;\n", inner, i);
  out += fmt::format("{0}for (; {1} + 64 <= hi; {1} += 64) {{\n", inner, i);
  // The rows ahead, as the loop's chunks prefetch them under keys 1 and 2,
  // under key 0 too: from the L3, rows two ahead in the L2 made
  // skip_layernorm f32 [4, 128, 768] 0.92x the time and bert_embeddings
  // f32 0.88x, where prefetching only under keys 1 and 2 gave 1.03-1.06x
  // and 0.99-1.03x (session 35).
  out += row_prefetches(axis, i, l2);
  out += fmt::format("{0}af_f32x16 a_[{1}], b_[{1}], c_[{1}], d_[{1}];\n", l2, count);
  out += fmt::format(
      "{0}lanes_({1}, 16, a_); lanes_({1} + 16, 16, b_); lanes_({1} + 32, 16, c_); "
      "lanes_({1} + 48, 16, d_);\n",
      l2, i);
  for (size_t k = 0; k < count; ++k) {
    const int id = stores[k];
    const char* parts[] = {"a_", "b_", "c_", "d_"};
    if (const char* half = half_suffix(node(id).dtype); *half != '\0') {
      for (int q = 0; q < 4; q += 2)
        out += fmt::format("{}af_put32{}({}, {}[{}], {}[{}], {});\n", l2, half,
                           target(id, run_at(16 * q)), parts[q], k, parts[q + 1], k, nt(id));
      continue;
    }
    for (int q = 0; q < 4; ++q)
      out += fmt::format("{}af_put16_f32({}, {}[{}], 16, {});\n", l2, target(id, run_at(16 * q)),
                         parts[q], k, nt(id));
  }
  out += inner + "}\n";
  // The rest by 16 (the last may be partial), ordinary stores.
  out += fmt::format("{0}for (; {1} < hi; {1} += 16) {{\n", inner, i);
  out += fmt::format("{}af_f32x16 a_[{}];\n", l2, count);
  out += fmt::format("{}lanes_({}, hi - {}, a_);\n", l2, i, i);
  for (size_t k = 0; k < count; ++k) {
    const int id = stores[k];
    const char* half = half_suffix(node(id).dtype);
    out +=
        *half != '\0'
            ? fmt::format("{}af_put16{}({}, a_[{}], hi - {});\n", l2, half, target(id, i), k, i)
            : fmt::format("{}af_put16_f32({}, a_[{}], hi - {}, false);\n", l2, target(id, i), k, i);
  }
  out += inner + "}\n";
  out += ind + "}\n";
}

}  // namespace autofuse::codegen::cpu
