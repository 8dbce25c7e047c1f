// Tiling: the TilingData struct and the tiling function of a scheduled
// kernel, emitted as C++ into the kernel's module (codegen calls this).
//
// The tiling function runs at run time, once per distinct shape (the
// runtime caches its result): it evaluates the loop-axis sizes from the
// symbol values, counts the work units the blocks split and calls the
// prelude's cost model af_choose_blocks:
//
//   block_dim = clamp(units * bytes_per_unit / machine->min_block_bytes, 1, cores)
//   chunk     = ceil(units / block_dim) rounded up to `align` units
//
// Elementwise: a unit is an element of the flattened iteration space, and
// bytes_per_unit the bytes each element loads and stores; chunks are a
// multiple of the vector width in elements (machine->vector_bytes), so two
// blocks never write the same cache line. (Elementwise kernels walked in
// transpose tiles, TransposeTiles below: a unit is a tile.) Reduction (reduction_tiling.cpp):
// a unit is a row (row layout), a tile of a row (column layout: the tile
// width W fits the local arrays in the L1; later passes re-read the tile
// from the L2 when it fits there, else from the L3 or memory), or a
// segment of one of those when the tiling splits the outermost reduced axis
// because the units are too few for the cores the work can use
// (kernel_abi.h's launches with a workspace, offered by the caller through
// af_tiling_header::max_phases). Tiny work gets one block and no thread
// wake-up. The function allocates nothing and costs a few integer operations.
//
// It also sets the tiling key of a kernel with streaming-capable stores
// (streams()) whose outputs are large against the last-level cache
// (output_bytes() > machine->l3_bytes / 2; see tiling.cpp):
// kStreamingStoresKey when its vector loop is memory-bound (loop_traffic()
// against machine->stream_max_ops_per_kib), else kPrefetchingKey; any other
// kernel gets kOrdinaryStoresKey. The kernel branches on it per row.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "autofuse/schedule/schedule.h"

namespace autofuse::tiling {

/// TilingData field (and kernel-local variable) holding a symbol's value.
std::string symbol_field(std::string_view symbol);
/// TilingData field holding the evaluated size of loop axis `axis`.
std::string axis_size_field(int axis);
/// TilingData fields: work units in total, and units per block.
inline constexpr std::string_view kWorkField = "work";
inline constexpr std::string_view kChunkField = "chunk";
/// Reduction TilingData fields: segments per row or tile (1: not split),
/// elements of the outermost reduced axis per segment, the tile width and
/// tiles per row (row layout: 1 and 1), and the workspace bytes per
/// accumulator (the partial results of every unit; 0 when not split).
inline constexpr std::string_view kSplitField = "split";
inline constexpr std::string_view kSegmentField = "seg_len";
inline constexpr std::string_view kTileField = "tile";
inline constexpr std::string_view kTilesField = "tiles";
inline constexpr std::string_view kWorkspaceSlotField = "ws_slot";
/// Column layout: rows folded into one vector loop (folds_rows; 1: none).
inline constexpr std::string_view kFoldField = "fold";
/// Column layout: how many reduced indices ahead the passes prefetch their
/// tile rows (0: none; the data fits the cache). Row layout: 1 when the
/// last pass prefetches the row kReductionRowsAhead on (those rows and this
/// one fit the L2, so the lines are still there when pass 0 reads them),
/// else 0 (codegen/cpu/row_prefetch.cpp).
inline constexpr std::string_view kPrefetchRowsField = "pf_rows";
/// Row layout: how many rows on the last pass prefetches.
inline constexpr int64_t kReductionRowsAhead = 2;
/// Column layout with centered moments (schedule.h): reduced indices per
/// block of the moment loop, a multiple of kColumnChunk whose tile rows
/// take about a quarter of the L2 (the second loop re-reads them there).
inline constexpr std::string_view kMomentRowsField = "mom_rows";
/// Row layout: rows per tile of the inner row axes (0: rows in order). A
/// kernel with row_reuse_bytes() walks its rows tile by tile, each tile for
/// every index of the outermost row axis, so that an operand broadcast
/// along that axis is read from the L2 by the next index instead of from
/// the L3 or memory (BERT's position embeddings, one row of 768 per token
/// and 512 tokens to a sequence: [64, 512] f32 tokens on one thread, rows
/// of 32 or 64 tokens 0.87x the time of rows in order, 128 0.91x, 8 0.96x).
inline constexpr std::string_view kRowTileField = "row_tile";

/// Row layout, two or more row axes: the bytes per row that Loads and
/// Gathers read along the reduced axes without varying along the outermost
/// row axis but along another one (0 when none: no row tiles).
sym::Expr row_reuse_bytes(const schedule::ScheduledKernel& kernel);

/// Reduced indices per chunk of a column sum (codegen's Acc::Chunked): the
/// chunk sums join the compensated totals every this many indices.
inline constexpr int64_t kColumnChunk = 64;
/// Column layout: bytes of tile rows (f32 counted) the prefetches run ahead
/// of the loads. batchnorm_stats [65536, 256], 1 thread: 7.6 ms without,
/// 6.3 with 8 KiB, 5.8-6.0 with 32 KiB, 5.7 with 64 and 128 KiB.
inline constexpr int64_t kColumnPrefetchBytes = 32 << 10;

/// The widest tile of the column layout, in elements.
inline constexpr int64_t kMaxTile = 1024;
/// Stack bytes the column layout's local arrays may take (they are sized
/// for the widest tile; callers' threads may have small stacks).
inline constexpr int64_t kTileStackBytes = 128 << 10;
/// The narrowest tile the column layout chooses (unless the axis is
/// narrower): rows of the tile are read as contiguous runs of this many
/// elements, and shorter runs waste most of the memory bandwidth.
inline constexpr int64_t kMinTileRun = 64;
/// Column layout: the narrowest output row (bytes of the Stores along the
/// tile axis and a reduced axis, per reduced index) whose tiles go to
/// different blocks at once. Two cores writing neighbouring pieces of the
/// same rows take each other's cache lines (the store streams' prefetches
/// run past a piece's end): batchnorm_stats on 2 cores of a Zen 5 VM,
/// [512, 256] f32 in tiles of 128: 46 us against 19 on one core, 14 with
/// non-temporal stores or with separate output buffers; [256, 2048] in 3
/// tiles: 100 us against 90, in 4 tiles (2 per block) 62.
inline constexpr int64_t kSharedRowBytes = 8 << 10;
/// Lanes a folded vector loop aims at (rows times the tile width).
inline constexpr int64_t kFoldLanes = 256;
/// Workspace bytes per partial result and tile lane (any accumulator type).
inline constexpr int64_t kWorkspaceElementBytes = 8;

/// What the kernel's generator needs to know about its tiling data.
struct TilingSource {
  std::string struct_name;  ///< "<kernel>_tiling_data"
  /// The struct definition and the two extern "C" functions
  /// `<kernel>_tiling_data_size` and `<kernel>_tiling` (see kernel_abi.h).
  std::string code;
};

/// Emits the tiling data struct and tiling functions of `kernel` named
/// `name` (a C identifier). Symbols in AscGraph::symbols() order.
TilingSource emit_tiling(const schedule::ScheduledKernel& kernel, const std::string& name);

/// The work units the blocks split: the product of all axes' sizes for an
/// Elementwise kernel (elements); for a Reduction the rows (the product of
/// the row axes' sizes), before the tiling cuts them into tiles or segments.
sym::Expr work_units(const schedule::ScheduledKernel& kernel);

/// af_tiling_header::tiling_key values.
inline constexpr int64_t kOrdinaryStoresKey = 0;
/// Contiguous outputs are written with non-temporal (streaming) stores, and
/// the rows' vector loops run in chunks that prefetch later rows.
inline constexpr int64_t kStreamingStoresKey = 1;
/// Ordinary stores, but the vector loops run in chunks that prefetch later
/// rows as under kStreamingStoresKey: large outputs of a compute-bound loop,
/// whose inputs still come from memory.
inline constexpr int64_t kPrefetchingKey = 2;

/// The axis of the vector loop: Elementwise the last axis, Reduction the
/// last reduced axis (row layout) or the tile axis (column layout); -1 if
/// none.
int vector_axis(const schedule::ScheduledKernel& kernel);

/// Elements per chunk of a streaming loop (the prelude's AF_NT_CHUNK): a
/// row shorter than this streams only whole (a constant length of whole
/// cache lines; codegen's inner_loop.cpp).
inline constexpr int64_t kStreamChunk = 64;

/// The longest row of the Reduction template's row layout that a pass
/// reduces from buffers after its vector loop (codegen's
/// short_row_reduce.cpp) instead of accumulating in the loop.
inline constexpr int64_t kShortReduceRow = 1024;

/// Whether Reduce `reduce` of a row-layout kernel is reduced from a buffer
/// when its row is short (<= kShortReduceRow): a float sum, mean, max or
/// min accumulated in f32 (f16/bf16 are computed in f32; f64 and integer
/// reductions and products accumulate in the loop).
bool reduces_from_buffer(const ascir::AscNode& reduce);

/// A run of Stores of one Output that together write one contiguous span of
/// each row of the vector loop: pieces of the loop's constant length L (< a
/// chunk), stride 1 along it and the same strides elsewhere, in one pass, at
/// offsets o, o + L, o + 2L, ... (a Concat along the last axis written in
/// pieces: dlrm's 26 embeddings of 16). A whole-row loop buffers the span
/// and stores it at once: bf16 pieces of 32 bytes make whole cache lines
/// together, so they can stream, and they round by the 32 lanes.
struct RowSpan {
  int first = -1;      ///< the Store at the span's start (-1: no span)
  int64_t offset = 0;  ///< this Store's elements from the span's start
  int64_t length = 0;  ///< the span's elements per row
};

/// The span of Store `store` (the longest such run that contains it, at
/// most kRowSpanMax elements; else, or when its own row is whole cache
/// lines, the store alone: first = store.id, offset 0, length L); first =
/// -1 when the vector loop has no constant length below kStreamChunk or the
/// store is not contiguous along it.
RowSpan row_span(const schedule::ScheduledKernel& kernel, const ascir::AscNode& store);
inline constexpr int64_t kRowSpanMax = 4096;

/// Whether Store `store` is written with streaming stores under
/// kStreamingStoresKey: it is computed in the vector loop and contiguous
/// (stride 1) along it, the kernel is not walked in transpose tiles, and
/// (Reduction) no Reduce of its pass accumulates in that loop (splitting the
/// loop into chunks would change the order of a float sum, and the two keys
/// must give identical results). A pass over rows of a constant length of
/// at most kShortReduceRow, and at least kStreamChunk or whole cache lines of
/// the store, whose Reduces all reduce from buffers
/// (reduces_from_buffer) accumulates nothing in the loop: its stores stream
/// (skip-LayerNorm's residual sum, stored in the mean's pass).
bool streams(const schedule::ScheduledKernel& kernel, const ascir::AscNode& store);

/// Bytes the kernel's Stores write in total (element size times the extent
/// of the axes each varies along; an Output written in pieces counts every
/// piece's Store).
sym::Expr output_bytes(const schedule::ScheduledKernel& kernel);

/// What one element of the kernel's vector loop costs: `ops`, vector
/// instructions per vector of lanes (ascir::vector_op_cost of every node
/// computed per element: loads, computes, stores; a value several passes
/// recompute counts once), and `bytes` it moves through memory (Loads,
/// Gathers and Stores that vary along every axis of size > 1: a broadcast
/// operand such as LayerNorm's gamma stays in the cache). The tiling
/// function streams only when ops * 1024 <= machine->stream_max_ops_per_kib *
/// lanes * bytes (lanes: f32 lanes of machine->vector_bytes), or when the
/// kernel has Gathers (the streaming variant prefetches the gathered rows).
struct LoopTraffic {
  int64_t ops = 0;
  int64_t bytes = 0;
};
LoopTraffic loop_traffic(const schedule::ScheduledKernel& kernel);

/// Estimated bytes moved per work unit (the cost model's input), >= 1.
/// Elementwise: the element sizes of the Loads, Gathers and Stores that vary
/// along the inner axis (a broadcast operand is read once per row, from
/// cache). Reduction: per Load, Gather and Store, its element size times the extent of the
/// reduced axes it varies along (so a row counts its whole input), and in
/// the column layout also of the tile axis (a row counts all its tiles).
sym::Expr bytes_per_unit(const schedule::ScheduledKernel& kernel);

/// The reduction part of the tiling function's body (reduction_tiling.cpp),
/// after the symbols and axis sizes are set: fills the block split (work,
/// chunk, header.block_dim), the tile and split fields and the header's
/// num_phases and workspace_bytes. `print` spells a symbolic expression.
std::string emit_reduction_tiling(const schedule::ScheduledKernel& kernel,
                                  std::string (*print)(const sym::Expr&));

/// Column layout: the widest tile of this kernel, the length of its local
/// arrays (tile vectors and accumulators): kMaxTile, or less when the arrays
/// would take more than kTileStackBytes; a multiple of 16, at least 16.
int64_t max_tile(const schedule::ScheduledKernel& kernel);

/// Column layout: whether consecutive rows of a narrow tile can share one
/// vector loop ("folding"): lane j of a loop over fold * W lanes handles
/// row i + j / W, column j % W, which reads and writes memory contiguously
/// when every Load and Store varying along the tile axis and the innermost
/// reduced axis has stride 1 along the first and the tile axis' size along
/// the second (a Gather, which reads where its index says, needs only
/// stride_r == stride_t * W for its non-gathered part). Also: every value varying along that
/// reduced axis varies along the tile axis (no per-row scalars), every Reduce over the tile varies
/// along it too, and no Index runs along either. The tiling folds tiles narrower than kMinTileRun
/// to about kFoldLanes lanes; each lane keeps its own accumulators, which are combined pairwise at
/// the pass's end.
bool folds_rows(const schedule::ScheduledKernel& kernel);

/// Elementwise kernels with a transpose that moves the contiguous axis
/// (transpose_tiles.cpp): a live Load varies along the vector axis with a
/// stride other than 0 and 1 and has stride 1 along an outer axis, and every
/// Store that varies along the vector axis has stride 1 there. Such a kernel
/// walks tiles of `rows` x `cols` elements of (`axis`, vector axis) instead
/// of row segments: a work unit is a tile (units in the order: the other
/// axes, tiles along `axis`, tiles along the vector axis), and each block
/// takes `chunk` consecutive tiles. Per tile the `loads` are read along
/// `axis` into local buffers, then the vector loop runs once per row of the
/// tile over its columns. Tile sizes depend on the element size of the
/// buffered Loads (a tile column reads a whole cache line). Such kernels do
/// not stream their stores (a tile row is shorter than a streaming chunk).
struct TransposeTiles {
  int axis = -1;           ///< the tiled outer axis; -1: the kernel is not tiled
  int64_t rows = 0;        ///< tile extent along `axis`
  int64_t cols = 0;        ///< tile extent along the vector axis
  std::vector<int> loads;  ///< the Loads read through tile buffers, in node order
};
TransposeTiles transpose_tiles(const schedule::ScheduledKernel& kernel);
/// The tiles of a tiled kernel (its work units).
sym::Expr transpose_tile_units(const schedule::ScheduledKernel& kernel,
                               const TransposeTiles& tiles);

/// The Reduces of a Reduction kernel that accumulate (their input varies
/// along a reduced axis), in node order: when the kernel is split, entry i
/// keeps its per-unit partial results in workspace slot i.
std::vector<int> partial_reduces(const schedule::ScheduledKernel& kernel);
/// Workspace slots of a split Reduction kernel: one per partial_reduces()
/// entry, then two per centered moment (kernel.moments order): each
/// segment's shift and its mean's offset from the shift
/// (codegen/cpu/centered_moments.cpp).
size_t workspace_slots(const schedule::ScheduledKernel& kernel);
/// The first of centered moment `index`'s two extra slots.
size_t moment_workspace_slot(const schedule::ScheduledKernel& kernel, size_t index);

}  // namespace autofuse::tiling
