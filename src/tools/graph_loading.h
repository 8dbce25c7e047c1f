// Shared by the subcommands: loading a graph (.af or .onnx) and building
// executables.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autofuse/graph/graph.h"
#include "autofuse/runtime/executable.h"

namespace autofuse::tools {

/// A graph with the names the user knows its inputs and outputs by: the
/// original ONNX names (graph value names are sanitized identifiers), or
/// the graph's own names for `.af` files.
struct LoadedGraph {
  std::shared_ptr<const Graph> graph;
  std::vector<std::string> input_names;   ///< graph-input order
  std::vector<std::string> output_names;  ///< graph-output order
  bool from_onnx = false;
};

/// A `.onnx` file is imported; anything else is parsed as `.af` text.
/// UserError on bad input.
LoadedGraph load_graph(const std::string& path);

/// Compile options from the environment (AUTOFUSE_FLAGS, AUTOFUSE_CACHE_DIR,
/// CXX, AUTOFUSE_DUMP) with fusion on or off.
runtime::CompileOptions compile_options(bool fused, const std::string& dump_dir = "");

}  // namespace autofuse::tools
