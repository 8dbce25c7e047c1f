// Fusion scope identification: partitions a Graph into regions, each of
// which becomes one kernel (an "AscBackend" node of the FusedGraph), a
// library call, or a view.
//
// Rules (issue "Compile pipeline"): elementwise (unary, binary, where), cast,
// broadcast_to, constant and iota nodes fuse with each other; reductions fuse
// with their elementwise producers and with their elementwise/broadcast
// consumers (LayerNorm, RMSNorm, Softmax become one kernel each). A region
// must have one loop-axis mapping (see loop_axes.h); every reduction in it
// reduces the same loop axes; merging never creates a cycle between regions.
// Every output of a Kernel region spans all of its non-reduced loop axes (it
// may have extent 1 only along reduced axes, like a reduction result), so no
// value is stored by several iterations. Nodes whose results reach no graph
// output get no region.
// Data movement ops (transpose, slice, concat, split, gather) are single-op
// regions run by the runtime's library implementations until the issue
// "Fusion coverage" fuses them; reshape is a view (no kernel, no copy);
// matmul is a library op and a fusion boundary. Splat constants fuse into
// their consumers as scalars; other constants are Constant regions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autofuse/fuse/loop_axes.h"
#include "autofuse/graph/graph.h"

namespace autofuse::fuse {

/// Configuration, typed. From code, or from the AUTOFUSE_FLAGS environment
/// variable:
/// `--max_fusion_size=256;--max_group_size=8;--disable=reduce,broadcast,move_views,group;--log_refusals`
/// (`;`- or space-separated; `--disable=all` disables fusion: one kernel per op).
struct FusionConfig {
  bool enabled = true;  ///< false: every op its own region (the unfused path)
  /// Most graph nodes in one region (splat constants not counted). Bounds
  /// compile time and code size; 256 lets a DLRM-style concat of 26 pieces
  /// (about 105 nodes after move_views) stay one kernel.
  int max_fusion_size = 256;
  bool fuse_reductions = true;  ///< --disable=reduce
  bool fuse_broadcasts = true;  ///< --disable=broadcast (broadcast_to and implicit broadcasting)
  bool move_views = true;       ///< --disable=move_views (the rewrite of fuse/move_views.h)
  /// --disable=group: every kernel its own launch (see group_kernels below).
  bool group_kernels = true;
  /// Most kernels (loop nests) in one group: bounds the group's live
  /// intermediates (they all live during its launch) and its tiling code.
  int max_group_size = 8;
  bool log_refusals = false;  ///< record every refused merge with its reason

  /// Parses the flag syntax above. UserError naming an unknown flag or bad value.
  static FusionConfig from_flags(std::string_view flags);
  /// from_flags(getenv("AUTOFUSE_FLAGS")), defaults when unset.
  static FusionConfig from_env();
};

enum class RegionKind : uint8_t {
  Kernel,    ///< generated code (an AscBackend): fused ops, or one op when unfused
  Library,   ///< runtime library implementation (matmul; data movement ops for now)
  View,      ///< reshape: the output aliases the input's buffer
  Constant,  ///< a constant that is not fused (non-splat, or only read by library ops):
             ///< materialized once when the Executable is built
};
std::string_view region_kind_name(RegionKind kind);

struct Region {
  int id = 0;
  RegionKind kind = RegionKind::Kernel;
  std::string name;              ///< "asc_backend_3", "library_matmul_5", "view_2"
  std::vector<NodeId> nodes;     ///< in topological order; a Kernel region holds its own copy
                                 ///< of each splat constant it reads (a constant node may be
                                 ///< in several regions; it is never a kernel input or output)
  std::vector<ValueId> inputs;   ///< values read from outside the region (graph order, unique)
  std::vector<ValueId> outputs;  ///< values used outside the region or graph outputs (graph
                                 ///< order); a Library region lists every output of its op
  LoopAxes loop_axes;            ///< Kernel regions only
};

/// Kernel regions that run as one launch with one loop nest per member
/// (AutoFuse's FusedAscBackend): regions whose loops could not merge but
/// that no library op separates. The group's tiling function decides at run
/// time how its members run: all on one core, one after the other, when
/// every member is too small to split (one dispatch instead of several);
/// else members that do not read each other side by side in the same
/// launch phase, and the others in later phases.
struct KernelGroup {
  std::string name;          ///< "fused_asc_backend_3"; a lone kernel: its region's name
  std::vector<int> regions;  ///< indices into FusedGraph::regions, ascending; Kernel
                             ///< regions only (View regions may sit between them)
};

/// A graph partitioned into regions, in an order that respects dependencies.
struct FusedGraph {
  std::shared_ptr<const Graph> graph;
  std::vector<Region> regions;
  /// Every Kernel region is in exactly one group; in region order.
  std::vector<KernelGroup> groups;
  std::vector<std::string> refusals;  ///< "merge of A into B refused: reason" (when logged)

  int num_kernels() const;  ///< regions of kind Kernel (loop nests)
  int num_launches() const { return static_cast<int>(groups.size()); }
};

/// Partitions the graph (greedy, along producer->consumer edges, in
/// topological order; deterministic). Every kernel is its own group.
FusedGraph partition(std::shared_ptr<const Graph> graph, const FusionConfig& config);

/// The pipeline pass after partition (src/fuse/group_kernels.cpp): gathers
/// the kernels into groups (KernelGroup). Reorders the regions (still a
/// dependency order) so that kernels no library op separates are adjacent,
/// then cuts those runs into groups of at most config.max_group_size. With
/// config.group_kernels false (or fusion disabled) every kernel stays its
/// own group, as partition() leaves them.
void group_kernels(FusedGraph& fused, const FusionConfig& config);

/// Text form: one line per region, e.g.
///   y = asc_backend_0(x, gamma, beta)  # 10 ops: reduce_mean, sub, ...; axes [N, D]; reduce [1]
std::string print_fused_graph(const FusedGraph& fused);

}  // namespace autofuse::fuse
