// Tiling: the TilingData struct and the tiling function of a scheduled
// kernel, emitted as C++ into the kernel's module (codegen calls this).
//
// The tiling function runs at run time, once per distinct shape (the
// runtime caches its result): it evaluates the loop-axis sizes from the
// symbol values, counts the work units the blocks split (Elementwise: the
// elements of the flattened iteration space; Reduction: the rows, i.e. the
// flattened kept axes) and calls the prelude's cost model af_choose_blocks:
//
//   block_dim = clamp(units * bytes_per_unit / machine->min_block_bytes, 1, cores)
//   chunk     = ceil(units / block_dim) rounded up to `align` units
//
// bytes_per_unit is an expression fixed at generation time from the
// AscGraph: the bytes each unit loads and stores (a Reduction row counts its
// reduced elements), so tiny work gets one block and no thread wake-up. Elementwise chunks are a
// multiple of the vector width in elements (machine->vector_bytes), so two
// blocks never write the same cache line. The function allocates nothing and
// costs a few integer operations.
//
// It also sets the tiling key: kStreamingStoresKey when the kernel has
// streaming-capable stores (streams()) and its outputs are large against the
// last-level cache (output_bytes() > machine->l3_bytes / 2; see
// tiling.cpp), else kOrdinaryStoresKey. The kernel branches on it per row.
#pragma once

#include <string>
#include <string_view>

#include "autofuse/schedule/schedule.h"

namespace autofuse::tiling {

/// TilingData field (and kernel-local variable) holding a symbol's value.
std::string symbol_field(std::string_view symbol);
/// TilingData field holding the evaluated size of loop axis `axis`.
std::string axis_size_field(int axis);
/// TilingData fields: work units in total, and units per block.
inline constexpr std::string_view kWorkField = "work";
inline constexpr std::string_view kChunkField = "chunk";

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

/// The work units the blocks split: the product of the outer axes' sizes for
/// a Reduction (rows), of all axes for an Elementwise kernel (elements).
sym::Expr work_units(const schedule::ScheduledKernel& kernel);

/// af_tiling_header::tiling_key values.
inline constexpr int64_t kOrdinaryStoresKey = 0;
/// Contiguous outputs are written with non-temporal (streaming) stores.
inline constexpr int64_t kStreamingStoresKey = 1;

/// Whether Store `store` is written with streaming stores under
/// kStreamingStoresKey: it is contiguous (stride 1) along the vectorized
/// innermost axis, and (Reduction) no Reduce of its pass accumulates along
/// that axis (splitting that loop into chunks would change the order of a
/// float sum, and the two keys must give identical results).
bool streams(const schedule::ScheduledKernel& kernel, const ascir::AscNode& store);

/// Bytes the kernel's Stores write in total (element size times the extent
/// of the axes each varies along).
sym::Expr output_bytes(const schedule::ScheduledKernel& kernel);

/// Estimated bytes moved per work unit (the cost model's input), >= 1.
/// Elementwise: the element sizes of the Loads and Stores that vary along
/// the inner axis (a broadcast operand is read once per row, from cache).
/// Reduction: per Load and Store, its element size times the extent of the
/// reduced axes it varies along (so a row counts its whole input).
sym::Expr bytes_per_unit(const schedule::ScheduledKernel& kernel);

}  // namespace autofuse::tiling
