// The kernel function of one scheduled kernel (the part of the module after
// its tiling data; see cpu_codegen.h for the module).
// Its shape (levels, hoisting, variants, gathers, invariant copies):
// kernel_emitter.cpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "autofuse/schedule/schedule.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/emitter_types.h"

namespace autofuse::codegen::cpu {

class KernelEmitter {
 public:
  /// `gather_base`: af_status::which of its first Gather (a kernel group
  /// numbers its members' gathers in one list).
  KernelEmitter(const schedule::ScheduledKernel& kernel, std::string name,
                std::string tiling_struct, int gather_base = 0);

  /// The `extern "C" void <name>_kernel(...)` function.
  std::string emit();

 private:
  using AscNode = ascir::AscNode;

  std::string emit_elementwise();
  std::string emit_reduction();
  /// Elementwise in transpose tiles (transpose_tiles.cpp, tiling.h).
  std::string emit_elementwise_tiled();
  /// The row bases b<id> of the strided nodes, from the row indices (both
  /// templates; elementwise.cpp).
  std::string row_bases(const std::string& indent, bool constant) const;
  /// Elementwise: the per-row (level 0) nodes; stores only where a row
  /// starts unless `whole_row`.
  std::string row_nodes(const std::string& indent, bool whole_row) const;
  /// Elementwise: the next whole row: indices advanced, bases stepped.
  std::string step_row(const std::string& indent) const;
  /// `const bool nt_rows = ...;`: every row of the whole-rows loop from the
  /// current one on streams whole aligned lines; empty when no row can
  /// (streamed rows that are not whole lines, or strides that are not).
  std::string line_rows_flag(int axis, const std::string& indent) const;
  /// Reads tile `tiles_` of every buffered Load into its buffer t<id>.
  std::string fill_tile_buffers(const std::string& indent) const;

  // Shared pieces.
  std::string prologue() const;  // tiling data, symbols, sizes, buffers
  /// The f32 copies c<id> of the row_invariant_ Loads (after a block's
  /// early return for no work).
  std::string invariant_copies() const;
  /// The nodes computed once per call (level -1); a store among them (an
  /// output that does not vary) is written only when `store_guard` holds.
  std::string per_call_nodes(const std::string& store_guard) const;
  /// Declares the row axes' indices i<a> from the row index `row`.
  std::string decompose_row(const std::string& row, const std::string& indent) const {
    return decompose(row_axes_, row, indent);
  }
  /// Steps the row axes' indices to the next row.
  std::string advance_row(const std::string& indent) const { return advance(row_axes_, indent); }
  /// The same for the multi-index over `axes` (outer to inner).
  std::string decompose(const std::vector<int>& axes, const std::string& row,
                        const std::string& indent) const;
  std::string advance(const std::vector<int>& axes, const std::string& indent) const;
  /// Appends the code for node `n` (a definition or a store) at `indent`.
  void emit_node(const AscNode& n, const std::string& indent, std::string& out,
                 StoreTo to = StoreTo::Output) const;
  /// Where Store `n` writes its element (StoreTo) at vector-axis index
  /// `at` (empty: the loop variable i<vector axis>): q<arg>[...], or its
  /// chunk or row-span buffer's t<id>[... - nt_k].
  std::string store_element(const AscNode& n, StoreTo to, const std::string& at = {}) const;
  /// The element index of a Load or Store; with `axis` >= 0, at `axis`
  /// index `at` instead of the loop variable.
  std::string address(const AscNode& n, int axis = -1, const std::string& at = {}) const;
  /// The innermost loop over `axis` from `lo` to `hi`: the `pragma` line,
  /// then per index `nodes` in order and `updates(indent)` (statements after
  /// them; null: none). With streamed stores among `nodes` and no updates,
  /// both store variants, chosen per call by tiling_key (inner_loop.cpp).
  void emit_inner_loop(int axis, const std::string& lo, const std::string& hi,
                       const std::vector<int>& nodes, const std::string& pragma,
                       const std::function<std::string(const std::string&)>& updates,
                       const std::string& indent, std::string& out) const;
  /// The Sigmoids among `nodes` that an Elementwise kernel's chunk loop over
  /// `axis` computes from a chunk buffer: f32 ones, in a kernel without
  /// Gathers (inner_loop.cpp).
  std::vector<int> chunk_sigmoid_ids(int axis, const std::vector<int>& nodes) const;
  /// Whether Compute `id` is one of those in the loop being emitted, its
  /// e^-|x| in e<id>[i - nt_k] (not word pairs' order).
  bool chunk_sigmoid(int id) const;
  /// Before such a chunk loop (index nt_k): per chunk_sigmoid_ids() node, a
  /// loop writing -|x| to a chunk buffer e<id> and af_exp_nonpos_row over
  /// it; sets chunk_sigmoids_ to those Sigmoids (inner_loop.cpp).
  std::string chunk_sigmoid_prologue(int axis, const std::vector<int>& nodes,
                                     const std::string& indent) const;
  /// `nodes` reordered to keep few values live (inner_loop.cpp).
  std::vector<int> register_order(const std::vector<int>& nodes) const;
  /// An f16 loop's values in the one-register form that F16C converts
  /// (lane_loop_values), or empty: no f16 data, or a value it cannot
  /// compute; and that form's `#if` condition (lane_loops.cpp).
  std::vector<bool> f16c_lanes(int axis, const std::vector<int>& nodes) const;
  std::string f16c_condition(const std::vector<int>& nodes) const;
  /// emit_inner_loop's loop(s) with `pragma` complete (inner_loop.cpp).
  void emit_loop_variants(int axis, const std::string& lo, const std::string& hi,
                          const std::vector<int>& nodes, const std::string& pragma,
                          const std::function<std::string(const std::string&)>& updates,
                          const std::string& indent, std::string& out) const;
  /// The bf16 Stores among `nodes` that a whole row of the loop over `axis`
  /// rounds by the vector after the loop (a constant row of whole vectors,
  /// stride 1; not those the chunk loops round).
  std::vector<int> whole_row_bf16_stores(int axis, const std::vector<int>& nodes) const;
  /// Whether every Store in `stores` has a row span (tiling::row_span) whose
  /// pieces, rows of `extent`, are all in `stores`.
  bool whole_spans(const std::vector<int>& stores, int64_t extent) const;
  /// The Stores in `stores` that start their row span (its buffer's name).
  std::vector<int> span_starts(const std::vector<int>& stores) const;
  /// One loop over [lo, hi) with `pragma`, `nodes` and `updates`, no
  /// streaming (with bf16 stores of whole rows: two forms, inner_loop.cpp).
  void emit_plain_loop(int axis, const std::string& lo, const std::string& hi,
                       const std::vector<int>& nodes, const std::string& pragma,
                       const std::function<std::string(const std::string&)>& updates,
                       const std::string& indent, std::string& out) const;
  ShortLoops short_loop_variant(int axis, const std::vector<int>& nodes) const;
  /// Whether some store of the kernel streams (has a tiling_key 1 variant).
  bool streams() const;
  /// Which operand (0 or 1) of binary Compute `n` is a Scalar that is not
  /// NaN, maybe broadcast (the first when both are); -1: neither.
  int never_nan_constant(const AscNode& n) const;
  /// A clamp's constant bound: that operand of a float Max or Min (float8
  /// results are rounded by compute_expr, so they keep the plain op), or -1
  /// (emitted by min_max_with_constant: one compare and blend).
  int clamp_constant(const AscNode& n) const;
  /// Whether value `id` is <= 0 or NaN for every element: x - max(x), the
  /// max reduced from the same x and broadcast back (softmax's exp operand).
  bool nonpositive(int id) const;
  /// Whether node `n` is an Exp emitted as af_exp_nonpos (f32 compute of a
  /// nonpositive() operand).
  bool exp_nonpos(const AscNode& n) const;
  /// `if (key is streaming) af_nt_fence();` when some store streams, else empty.
  std::string fence_if_streamed(const std::string& indent) const;
  std::string row_base(const AscNode& n) const;
  /// Whether node `n` has per-axis strides and a row base b<id> (Load, Gather, Store).
  static bool is_strided(const AscNode& n);

  // Gathers (gather.cpp).
  /// Fills hoist_src_ (after level_ and tile_vector_).
  void plan_gather_hoists();
  /// The nodes `n` reads: its inputs, except that a hoisted Gather reads
  /// its index's source instead of the broadcast chain.
  std::vector<int> operands(const AscNode& n) const;
  /// After node `src` is defined: the checks and row offsets `go<id>` of the
  /// Gathers hoisted to it.
  void emit_gather_checks(int src, const std::string& indent, std::string& out) const;
  /// The index check of gathered dim `j` of Gather `n` and the report of a
  /// bad index, outside vector loops.
  std::string gather_check(const AscNode& n, size_t j, const std::string& index,
                           const std::string& indent, const std::string& guard) const;
  /// A gather index `raw` (an int64 variable) wrapped as ONNX Gather wraps
  /// it: negative signed indices count from the end `bound`.
  static std::string wrapped_index(DType index_dtype, const std::string& raw,
                                   const std::string& bound);
  /// Whether gathered dim `j` of `n` is checked where the Gather is read (not hoisted).
  bool checked_in_loop(const AscNode& n, size_t j) const;
  /// Appends the index checks of Gather `n` at `indent` and returns the
  /// expression of its value (in a vector loop, the checks update the
  /// loop's reduction flags instead of reporting).
  std::string gather_value(const AscNode& n, const std::string& indent, std::string& out) const;
  /// Gather `n`'s element `p<arg>[...]` when every gathered dim is checked
  /// outside the loop (a row offset go<id>) and cannot be empty, else empty.
  std::string gather_row_element(const AscNode& n) const;
  /// The live Gathers among `nodes` with a dim checked in the loop.
  std::vector<int> gathers_in(const std::vector<int>& nodes) const;
  /// A vector loop's reduction clauses for its Gathers' flags.
  std::string gather_clauses(const std::vector<int>& gathers) const;
  /// The flags' declarations (before the loop) and reports (after it).
  std::string gather_flags(const std::vector<int>& gathers, const std::string& indent) const;
  std::string gather_reports(const std::vector<int>& gathers, const std::string& indent) const;
  /// Emits a vector loop: `emit(pragma_suffix)` appends it, given the
  /// reduction clauses to add to its pragma(s); with Gathers among `nodes`,
  /// wrapped in a block that declares their flags and reports after it.
  void emit_simd(const std::vector<int>& nodes, const std::string& indent, std::string& out,
                 const std::function<void(const std::string&)>& emit) const;
  std::string size(int axis) const;  // an int64_t expression for the axis size
  std::string expr(const sym::Expr& e) const;
  bool varies(const AscNode& n, int axis) const;
  std::string value(int id) const;  // the temporary holding node `id`
  const AscNode& node(int id) const { return graph_.node(id); }

  // Reduction pieces (reduction.cpp: the unit loop and stages;
  // reduction_pass.cpp: passes and accumulators).
  std::string reduction_arrays() const;  // column layout: function-scope local arrays
  std::string unit_loop_head() const;    // units of this block: split, tile, row indices
  /// Row layout, unsplit: the row indices of unit `row` in the tiled order
  /// when td->row_tile > 0 (tiling::row_reuse_bytes).
  std::string row_tile_indices(const std::string& indent) const;
  void emit_stage(int stage, const std::string& indent, std::string& out) const;
  void emit_stage_tile_vectors(int stage, const std::string& indent, std::string& out) const;
  void emit_pass(int pass, const std::string& indent, std::string& out) const;
  PassPlan plan_pass(int pass) const;
  /// The plan's Reduces that a short row reduces from a buffer: all that
  /// accumulate in the row layout's vector loop when each has a prelude
  /// af_row_* function and the row may be short, else none.
  std::vector<int> short_row_reduces(const PassPlan& plan) const;
  /// The vector loop of a plan with short_row Reduces: for a short row the
  /// loop writes their values to buffers reduced after it; a row that may
  /// be longer branches to emit_clause_loop.
  void emit_short_row_loop(const PassPlan& plan, const std::vector<int>& body,
                           const std::function<std::string(const std::string&)>& updates,
                           const std::string& indent, std::string& out) const;
  /// A short row's pass that only does arithmetic on float values and sums
  /// (static rows) or maxes / mins (static or symbolic rows), as
  /// 16-lane vectors (vector_pass.cpp): per node whether it is a vector
  /// there, or empty when the pass does not qualify. A max or min pass sets
  /// kVectorPassRedo where the row must run the buffered loop after it.
  std::vector<bool> vector_pass_lanes(const PassPlan& plan, const std::vector<int>& body) const;
  /// Whether Reduce r is a max or a min; whether any of the plan's
  /// short_row Reduces is.
  bool extreme_reduce(int r) const;
  bool extreme_pass(const PassPlan& plan) const;
  /// `redo`: the buffered loop after it runs where kVectorPassRedo is set.
  void emit_vector_pass(const PassPlan& plan, const std::vector<int>& body,
                        const std::vector<bool>& vec, bool redo, const std::string& indent,
                        std::string& out) const;
  /// Whether the pass computes an exp_nonpos() as 16 lanes (AF_EXP_ROW_X16).
  bool vector_exps(const std::vector<int>& body, const std::vector<bool>& vec) const;
  /// The same for a short row's pass without Reduces whose stores are f32
  /// or bf16 (its vectors stored by the prelude's af_put*).
  std::vector<bool> vector_store_pass_lanes(const PassPlan& plan,
                                            const std::vector<int>& body) const;
  /// Emits the pass so where it qualifies (under `#if AF_VECTOR_PASS`, the
  /// clause loop in its `#else`); false where it does not.
  bool emit_vector_store_pass(const PassPlan& plan, const std::vector<int>& body,
                              const std::string& indent, std::string& out) const;
  void emit_vector_stores(const std::vector<int>& body, const std::vector<bool>& vec,
                          const std::string& indent, std::string& out) const;
  /// Both: per node whether it is a vector, or empty; `storing` allows Stores.
  std::vector<bool> vector_lanes(const PassPlan& plan, const std::vector<int>& body,
                                 bool storing) const;
  /// The lambda's statements for `body`; `store` writes a Store's; lanes
  /// along `axis` (-1: the reduced one).
  std::string vector_statements(const std::vector<int>& body, const std::vector<bool>& vec,
                                const std::string& indent,
                                const std::function<std::string(const AscNode&)>& store,
                                int axis = -1) const;
  /// Per node whether it is a vector in `form`, or empty where the loop keeps its form.
  std::vector<bool> lane_loop_values(int axis, const std::vector<int>& nodes, LaneForm form) const;
  /// That form's loop over [lo, hi), lane_writes_'s buffers written too
  /// when `writes` (simd_loop puts it under its `#if`).
  std::string lane_loop(int axis, const std::string& lo, const std::string& hi,
                        const std::vector<int>& nodes, const std::vector<bool>& vec,
                        const std::function<StoreTo(int)>& store_to, bool writes,
                        const std::string& indent) const;
  /// An f16 chunk's loop of float sums into `sums`' chunk accumulators
  /// (emit_clause_loop's cascades) in the F16C form: 16-lane sums over
  /// [lo, hi), or empty where it has none (lane_loops.cpp).
  std::string lane_sums(int axis, const std::string& lo, const std::string& hi,
                        const std::vector<int>& body, const std::vector<int>& sums,
                        const std::string& indent) const;
  /// A vector loop over [lo, hi): the `pragma` line, the loop over `nodes`
  /// (stores where `store_to` says) and `updates`; with its lane form where
  /// it has one (`word_pairs`: that form allowed).
  std::string simd_loop(int axis, const std::string& lo, const std::string& hi,
                        const std::vector<int>& nodes, const std::string& pragma,
                        const std::function<StoreTo(int)>& store_to,
                        const std::function<std::string(const std::string&)>& updates,
                        const std::string& indent, bool word_pairs = true) const;
  /// Whether an Elementwise loop over `axis` with `nodes` (no updates) has
  /// the word-pair form: its memory bf16 and contiguous (word_pairs.cpp).
  bool word_pairs_fit(int axis, const std::vector<int>& nodes, const std::string& pragma) const;
  /// The statements of one pair (index wp_i): the Loads' words, then each
  /// half (i<axis> = wp_i + h) with `half_end(h, indent)` (null: none) after it.
  std::string word_pair_statements(
      int axis, const std::vector<int>& nodes,
      const std::function<std::string(int, const std::string&)>& half_end,
      const std::string& indent) const;
  /// That form's loop over [lo, hi) (simd_loop puts it under AF_WORD_PAIRS).
  std::string word_pair_loop(int axis, const std::string& lo, const std::string& hi,
                             const std::vector<int>& nodes, const std::string& pragma,
                             const std::function<StoreTo(int)>& store_to,
                             const std::string& indent) const;
  /// Whether exp_nonpos() node `id`, reduced from a short row's buffer
  /// (`ub`: its row buffer's pass, or -1), can be written to that buffer as
  /// its operand and exponentiated there after the loop: computed in the
  /// loop `body`, used there by nothing else, its buffer written there.
  bool exp_in_buffer(int id, const std::vector<int>& body, int ub) const;
  /// Whether a short row reduces Load `load`'s values in place: f32, contiguous along `axis`.
  bool reads_in_place(const AscNode& load, int axis) const;
  /// The row layout's vector loop with OpenMP reduction clauses (and the
  /// chunks of Acc::Cascade sums). `chunk_end` (if set) appends code after
  /// each chunk's loop, before its sums enter the cascades (the row
  /// layout's centered moments: the chunk is their block).
  void emit_clause_loop(
      const PassPlan& plan, const std::vector<int>& body,
      const std::function<std::string(const std::string&)>& updates, const std::string& indent,
      std::string& out,
      const std::function<void(const std::string&, std::string&)>& chunk_end = nullptr) const;
  /// The statement collapsing Acc::Cascade sum `r`'s partial sums into its accumulator.
  std::string cascade_collapse(int r, const std::string& indent) const;
  /// Row layout: fills ub_write_pass_ (expensive values that several passes
  /// need, kept in row buffers `ub<id>`; reduction_pass.cpp).
  void plan_row_buffers();
  /// The row buffers' declarations and the per-call `ub_rows` flag.
  std::string row_buffers() const;
  /// Row layout with several passes: fills prefetched_ (row_prefetch.cpp).
  void plan_row_prefetch();
  /// Elementwise rows that stream: fills prefetched_ with the Loads whose
  /// later row the chunk loop prefetches (row_prefetch.cpp).
  void plan_stream_prefetch();
  /// How many rows on the prefetches read (a C expression).
  std::string prefetch_rows_ahead() const;
  /// Elementwise: rows ahead for a short Load whose rows are apart in
  /// memory (strided_row_prefetches), 0 for any other node.
  int64_t strided_rows_ahead(const AscNode& n) const;
  /// Per row: the offsets pf<id> of the row to prefetch for each prefetched Load or Gather.
  std::string row_prefetch_offsets(const std::string& indent) const;
  /// While the last pass is emitted (prefetching_): the prefetches of the later
  /// row's elements [at, at + AF_NT_CHUNK) along `axis`, else empty.
  std::string row_prefetches(int axis, const std::string& at, const std::string& indent) const;
  /// The same lines in any pass (softmax's exp pass: vector_pass.cpp).
  std::string row_prefetch_lines(int axis, const std::string& at, const std::string& indent) const;
  /// Elementwise: at a row's start, the prefetches of a later row of each
  /// short Load whose rows are apart in memory (row_prefetch.cpp).
  std::string strided_row_prefetches(const std::string& indent) const;
  /// The Elementwise whole-rows loop's prefetches of the rows of
  /// plan_stream_prefetch's Loads (those of the chunk loops) a few rows on,
  /// under keys 1 and 2, at the row's start.
  std::string whole_row_prefetches(const std::string& indent) const;
  /// Row layout's centered moments: before a chunk's second loop (which
  /// reads the chunk from the L1, so no memory read would be in flight),
  /// the next chunk's lines of each contiguous Load of `body` (none after
  /// the last axis's last chunk: the next one starts elsewhere;
  /// row_prefetch.cpp). A burst of one chunk: measured 0.9x the time of
  /// none (NCHW batch-norm, rows of 3.1 MiB, one thread).
  std::string chunk_prefetches(const std::vector<int>& body, int axis,
                               const std::string& indent) const;
  /// Column layout: before the tile loop [t0, `tile_end`) inside reduced
  /// loop `level` (1: the outermost), the prefetches of the tile row
  /// td->pf_rows indices on along that loop of each Load in `body` that
  /// reads memory along it and contiguously along the tile (row_prefetch.cpp).
  /// `ahead`: indices on (a C expression); `hint`: the builtin's further
  /// arguments (", 0, 2": read, into the L2); `lane`: only the line at that
  /// tile index (a column vector loop's lambda), no loop over the tile.
  std::string column_prefetches(int level, const std::string& tile_end,
                                const std::vector<int>& body, const std::string& indent,
                                const std::string& ahead = "pf_rows", const std::string& hint = "",
                                const std::string& lane = "") const;
  /// Whether node `id` is read from its row buffer in pass `pass` (buffered variant).
  bool reads_row_buffer(int id, int pass) const;
  /// The node's statements in a vector loop: emit_node, or under a buffered
  /// pass a read of its row buffer, plus the write of a buffered value.
  void emit_loop_node(const AscNode& n, const std::string& indent, std::string& out,
                      StoreTo to) const;
  /// The pass's init, loops and results for `plan` (emit_pass runs it once,
  /// or twice: with and without row buffers).
  void emit_pass_body(const PassPlan& plan, const std::string& indent, std::string& out) const;
  /// emit_pass_body without centered moments; `chunk_end` as emit_clause_loop's.
  void emit_pass_loops(
      const PassPlan& plan, const std::string& indent, std::string& out,
      const std::function<void(const std::string&, std::string&)>& chunk_end = nullptr) const;
  /// The nodes of reduced loop `level` (above the vector loop) that `plan`
  /// needs, then the updates of its Reduces accumulating there.
  void emit_level_nodes(const PassPlan& plan, int level, const std::string& ind,
                        std::string& out) const;
  void emit_pass_init(const PassPlan& plan, const std::string& indent, std::string& out) const;
  void emit_vector_loop(
      const PassPlan& plan, const std::string& indent, std::string& out,
      const std::function<void(const std::string&, std::string&)>& chunk_end = nullptr) const;
  /// The nodes of `plan`'s deepest loop (its vector loop's body).
  std::vector<int> deepest_body(const PassPlan& plan) const;
  /// The Acc::Chunked sums of `plan`'s tile loop, or empty where the pass
  /// has other Reduces there (or reduces several axes).
  std::vector<ColumnSum> column_chunk_sums(const PassPlan& plan) const;
  /// The nodes `plan` computes once per reduced row outside its tile loop
  /// (a per-row weight: level 1), which such a loop computes in its lambda
  /// instead; nullopt where one cannot be (a Store, a Gather).
  std::optional<std::vector<int>> column_row_nodes(const PassPlan& plan) const;
  /// Emits the loop over `rows` whose tile loop runs `body` (after the
  /// per-row `row_nodes`) and adds `sums` as 16-lane vectors with the sums
  /// in registers, and `fallback` (the same loop as emitted before) after
  /// its `#else`; false (nothing emitted) where the body does not qualify.
  bool emit_column_vector_rows(const std::vector<int>& body, const std::vector<int>& row_nodes,
                               const std::vector<ColumnSum>& sums, const ColumnRows& rows,
                               const std::string& fallback, const std::string& indent,
                               std::string& out) const;
  /// Cascade collapse, compensation fold and (split) partial writes.
  void emit_pass_results(const PassPlan& plan, const std::string& indent, std::string& out) const;
  /// The updates of the Reduces accumulating at loop `level`.
  std::string pass_updates(const PassPlan& plan, int level, const std::string& at) const;
  /// Adds the Acc::Chunked chunk sums to their totals (and zeroes them).
  std::string flush_chunks(const PassPlan& plan, const std::string& indent) const;
  /// `#pragma omp simd` loop over the tile [t0, `end`) running `body`.
  std::string tile_loop(const std::string& indent, const std::string& body,
                        const std::string& end = "t1") const;
  /// Folding kernels: the lanes of every fold group combined into the first
  /// (pairwise over the groups), for the accumulators of `plan`.
  std::string fold_lanes(const PassPlan& plan, const std::string& indent) const;
  /// The loop over reduced axis level `level` (1-based) with its bounds
  /// (the split axis runs over this unit's segment); `folded`: in steps of
  /// `fold` rows, defining the group's lane end `tg`.
  std::string reduced_loop_head(int level, const std::string& indent, bool folded = false) const;
  /// `if (nsplit > 1) {...}`: the partial results of the row (or row tile)
  /// combined from the workspace into the accumulator of Reduce `r`.
  void emit_combine(int r, const std::string& indent, std::string& out) const;
  /// Centered moments (centered_moments.cpp): the block arrays; whether
  /// `r` is the mean of one of the plan's moments; the pass's body in
  /// blocks, with the moments' loops and merges; the segments' merge of
  /// moment `r` (split); while a moment's loop is emitted, the center that
  /// reads of node `id` take instead of its value (else empty). The row
  /// layout's own: its pass body (blocks are the cascade's chunks), the
  /// code after each chunk's loop, its segments' merge.
  std::string moment_arrays() const;
  bool is_moment_mean(const PassPlan& plan, int r) const;
  void emit_moment_pass_body(const PassPlan& plan, const std::string& indent,
                             std::string& out) const;
  void emit_moment_combine(int r, const std::string& indent, std::string& out) const;
  void emit_row_moment_pass_body(const PassPlan& plan, const std::string& indent,
                                 std::string& out) const;
  void emit_row_moment_chunk(const PassPlan& plan, const std::string& indent,
                             std::string& out) const;
  /// The body of emit_moment_combine's block (its workspace rows w_, wk_,
  /// wo_ declared) in the row layout, at `indent`.
  void emit_row_moment_combine(int r, const std::string& indent, std::string& out) const;
  std::string moment_center(int id) const;
  /// Moment `v`'s merge of its block (Chan's formula in shifted offsets,
  /// the file header of centered_moments.cpp) as one line of statements:
  /// its arrays indexed by `lane` ("[...]", or "" for scalars), `squares`
  /// the block's sum of squares about its center; nb_, w_ and wo_ defined.
  std::string moment_merge(int v, const std::string& lane, const std::string& squares) const;
  /// Per node: whether moment `v`'s input needs it inside the loops.
  std::vector<bool> moment_input_nodes(int v) const;
  /// The first of moment `r`'s two extra workspace slots (shift, offset).
  size_t moment_slot(int r) const;
  /// The block-sum array of a moment's mean `r` (filled by flush_chunks).
  static std::string mean_block_sum(int r) { return "ms" + std::to_string(r); }
  /// While a centered moment's loop is emitted: that moment's Reduce; else -1.
  mutable int moment_center_ = -1;
  /// Writes this unit's partial result of Reduce `r` to the workspace.
  void emit_partial_write(int r, const std::string& indent, std::string& out) const;
  /// Workspace slot `slot` as `type` values: this unit's element at `lane`
  /// (to write its partial), and the declaration of `name` pointing at the
  /// row's first segment (for the combine to read every segment's).
  std::string workspace_element(const std::string& type, size_t slot,
                                const std::string& lane) const;
  std::string workspace_row(const std::string& type, const std::string& name, size_t slot,
                            const std::string& indent) const;
  /// The guard of a Store at stage `stage` (level 0 or a tile vector):
  /// empty when it always runs.
  std::string stage_store_guard(int stage, bool tile_vector) const;
  int accumulate_level(const AscNode& reduce) const;
  bool accumulates(const AscNode& reduce) const;  // its input varies along a reduced axis
  /// How Reduce `reduce` accumulates in a pass whose deepest loop level is
  /// `deepest` (the column layout's sums are compensated at any level).
  Acc acc_kind(const AscNode& reduce, int deepest) const;
  /// Row layout: the one reduced axis is at most one cascade chunk long.
  bool one_chunk_rows() const;
  std::string acc(int r) const;    // the accumulator of Reduce r (an array element: tile)
  std::string nan(int r) const;    // its NaN flag
  std::string comp(int r) const;   // its compensation (Acc::Chunked, Acc::Compensated)
  std::string chunk(int r) const;  // its chunk sum (Acc::Chunked)
  std::string update(const AscNode& reduce, int deepest, const std::string& value) const;
  /// Kahan's step adding `value` to the accumulator of `reduce` (with comp()).
  std::string kahan_add(const AscNode& reduce, const std::string& value) const;
  std::string reduce_count(const AscNode& reduce) const;
  std::string tile_index() const;  // "i<tile> - t0"
  /// Whether the code being emitted may run a split row (in segments, one
  /// pass per launch): not in the unsplit copy of the row loop.
  bool split_possible() const { return !kernel_.inner_axes.empty() && !unsplit_; }
  /// A row's bounds lo/hi (its segment when split), tile bounds, row bases
  /// and prefetch offsets, at the start of its code (reduction.cpp).
  std::string row_head(const std::string& indent) const;
  /// The Reduction template's loop over its rows (reduction.cpp);
  /// `continued`: from the current `row` on (after grouped_row_loop).
  std::string row_loop(bool continued = false) const;
  /// Whether the unsplit rows may run in groups (row_groups.cpp): the row
  /// layout's one reduced axis, no Gathers, rows that may be short.
  bool groups_rows() const;
  /// The block of the grouped loop that defines row-level node `id`.
  int group_block(int id) const;
  /// For short and medium rows, the unsplit rows in groups, each pass over
  /// the group before the next pass (row_groups.cpp); leaves `row` at the
  /// rest.
  std::string grouped_row_loop() const;
  /// Whether row_groups.cpp's group size `index` applies to this kernel, and
  /// the loop over its groups (`chained`: an `else if` after another's).
  bool group_fits(int index) const;
  /// The longest row of group size `index` for this kernel (its range is
  /// empty when that is not above the previous size's).
  int64_t group_row_max(int index) const;
  std::string row_group_loop(int index, bool chained) const;
  /// While the unsplit copy of the row loop is emitted (nsplit == 1).
  mutable bool unsplit_ = false;
  /// While grouped_row_loop's passes are emitted: rows of at most
  /// group_row_max_ elements (<= tiling::kShortReduceRow) that fit the row
  /// buffers.
  mutable bool grouped_ = false;
  mutable int64_t group_row_max_ = 0;
  /// While a chunk loop's body is emitted: the Sigmoids whose e^-|x| the
  /// chunk buffer e<id> holds (chunk_sigmoid_prologue, inner_loop.cpp).
  mutable std::vector<int> chunk_sigmoids_;
  /// While a word pair's half is emitted: its element's place in the chunk
  /// buffers e<id> (word_pairs.cpp); empty: i<axis> - nt_k.
  mutable std::string chunk_exp_index_;
  /// While a short row's loop is emitted: exp_nonpos() Exps whose only use
  /// there is a buffer, which then holds their operand and gets
  /// af_exp_nonpos_row after the loop (short_row_reduce.cpp).
  mutable std::vector<int> row_exps_;
  /// While a short row's loop is emitted: its reduce buffers' writes (the
  /// buffer, the value's node), which are its `updates` (short_row_reduce.cpp).
  mutable std::optional<std::vector<std::pair<std::string, int>>> lane_writes_;

  const schedule::ScheduledKernel& kernel_;
  const ascir::AscGraph& graph_;
  std::string name_;
  std::string tiling_struct_;
  int num_inputs_ = 0;
  int num_outputs_ = 0;
  std::vector<int>
      gather_id_;             ///< per node: a Gather's first dim in KernelSource::gathers, else -1
  bool has_gathers_ = false;  ///< some Gather is live: the kernel reads its af_status
  /// Per Gather node, per gathered dim: when its index is a broadcast of a
  /// value computed at an outer loop level, that value's node (checked
  /// there), else -1.
  std::vector<std::vector<int>> hoist_src_;
  /// While a vector loop's body is emitted: Gathers set its reduction flags.
  mutable bool in_simd_ = false;
  std::vector<int> axis_level_;       ///< per axis: its loop level (0 = row)
  std::vector<int> level_;            ///< per node: the level computing it (-1 .. depth)
  std::vector<bool> live_;            ///< per node: reaches a Store
  std::vector<int> output_of_store_;  ///< per node: the Output arg a Store writes, else -1
                                      ///< (an Output may have several Stores)
  std::vector<bool> streamed_;        ///< per node: a Store that streams under key 1
  std::vector<bool> tile_vector_;     ///< per node: column layout, an array over the tile
  std::vector<int> slot_;             ///< per node: workspace slot of a split Reduce, else -1
  std::vector<int> row_axes_;         ///< the axes of a unit's multi-index (level 0)
  tiling::TransposeTiles tiles_;      ///< Elementwise in transpose tiles (axis >= 0)
  std::vector<bool> buffered_;        ///< per node: a Load read through its tile buffer
  int vector_axis_ = -1;              ///< the axis of the vectorized loop
  bool column_ = false;               ///< Reduction in the column layout
  bool fold_ = false;                 ///< column layout that may fold rows (tiling::folds_rows)
  std::vector<bool> replicated_;      ///< per node: a tile vector read in a folded pass
  /// per node: a Store's row span (tiling::row_span)
  std::vector<tiling::RowSpan> spans_;
  /// per node: a bf16/f16 Load that varies only along the vector axis (of a
  /// constant length, at most kInvariantMax): every row reads the same
  /// values (LayerNorm's gamma and beta), so the kernel converts them to
  /// an f32 array c<id> once per call and its loops read that.
  std::vector<bool> row_invariant_;
  /// While a pass is emitted: tile vectors read there are the replicated
  /// arrays `r<id>` (fold * W lanes) of a folding kernel.
  mutable bool in_pass_ = false;
  int depth_ = 0;  ///< number of inner loop levels
  /// Row layout, per node: the pass that computes it and keeps it in its row
  /// buffer for later passes (an expensive value several passes need), else -1.
  std::vector<int> ub_write_pass_;
  int64_t ub_capacity_ = 0;    ///< elements per row buffer
  bool cost_buffers_ = false;  ///< some row buffer holds a value that is not transcendental
  /// The row's length is a constant of at least kBufferMinRow: ub_long
  /// always holds, and no pass needs the variant without cost buffers. (A
  /// constant shorter row has no cost buffers at all.)
  bool long_rows_static_ = false;
  std::vector<bool> cost_buffer_;  ///< per node: its row buffer is one of those
  /// While a pass is emitted: the variant uses the cost buffers (ub_long).
  mutable bool ub_cost_ = false;
  /// While a pass is emitted: the variant may run a symbolic row of 64 to
  /// kShortReduceRow elements (not: a row buffer variant for shorter or
  /// longer rows), so its vector passes can run (vector_pass.cpp).
  mutable bool symbolic_vector_passes_ = true;
  /// ub_write_pass_ of node `id` in the variant being emitted (-1: none).
  int ub_write_pass(int id) const;
  /// While a pass's buffered variant is emitted: that pass; else -1.
  mutable int ub_pass_ = -1;
  /// Loads and Gathers whose later row the last pass prefetches (row_prefetch.cpp).
  std::vector<int> prefetched_;
  /// While the last pass of a kernel with prefetched_ Loads is emitted.
  mutable bool prefetching_ = false;
  /// While a copy of the Elementwise whole-rows loop with ordinary stores is
  /// emitted: no streaming or prefetching variants.
  mutable bool plain_loops_ = false;
  /// While its streaming copy is emitted (rows of whole cache lines, run
  /// where `nt_rows`, elementwise.cpp): only the streaming variant.
  mutable bool line_rows_ = false;
  /// An Elementwise kernel compiled with g++'s scheduling (AF_SCHEDULED,
  /// elementwise.cpp): its loops with ordinary stores run by the chunk too,
  /// storing into chunk buffers (inner_loop.cpp).
  bool scheduled_ = false;
};

}  // namespace autofuse::codegen::cpu
