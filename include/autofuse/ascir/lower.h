// Lowering of a Kernel region of a FusedGraph to its AscGraph, and the
// AscGraph-level passes that run before scheduling.
#pragma once

#include "autofuse/ascir/asc_graph.h"
#include "autofuse/fuse/fusion.h"

namespace autofuse::ascir {

/// Builds the AscGraph of a Kernel region from its loop axes: one Data+Load
/// per region input, nodes for its ops (splat constants become Scalar, iota
/// becomes Index, broadcast_to and implicit broadcasting become Broadcast),
/// Store+Output per region output. Data/Output arg order = region
/// inputs/outputs order. Row-major strides of each buffer over the loop axes.
AscGraph lower_region(const Graph& graph, const fuse::Region& region);

/// Mixed precision: removes Casts between float types that share a compute
/// type (f16/bf16/f32 all compute in f32), so values stay f32 inside the
/// kernel and round only when stored. Returns true if it changed the graph.
bool elide_casts(AscGraph& graph);

}  // namespace autofuse::ascir
