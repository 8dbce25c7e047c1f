// How the fusion pass sees each graph node: which region kind it belongs to
// and which properties (reduction, broadcasting) the config may veto.
#pragma once

#include "autofuse/fuse/fusion.h"
#include "autofuse/graph/graph.h"

namespace autofuse::fuse::detail {

/// A constant holding one value (any static shape): fused as a scalar into
/// every kernel that reads it.
bool is_splat_constant(const Node& node);

/// Ops a Kernel region may contain besides splat constants: unary, binary,
/// where, cast, broadcast_to, reduce_*, iota, and the movement ops.
bool is_kernel_op(const Node& node);

/// The region kind a node gets on its own (splat constants: Kernel, since
/// they normally live inside their consumers' kernels).
RegionKind region_kind_of(const Node& node);

bool is_reduction(const Node& node);

/// The kind of a region holding only `node` when nothing fused with it: a
/// lone reshape is a View (no copy), a lone transpose/slice/split/concat/
/// gather a Library op (the runtime's copy), anything else a Kernel.
RegionKind unfused_kind(const Node& node);

/// broadcast_to, or an elementwise node that stretches one of its
/// non-constant inputs (the shape of some input differs from the output's).
bool has_broadcast(const Graph& graph, const Node& node);

}  // namespace autofuse::fuse::detail
