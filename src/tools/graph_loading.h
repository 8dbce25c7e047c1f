// Shared by the subcommands: loading a graph and building executables.
#pragma once

#include <memory>
#include <string>

#include "autofuse/graph/graph.h"
#include "autofuse/runtime/executable.h"

namespace autofuse::tools {

/// Parses a `.af` file into a shared graph (UserError on bad input).
std::shared_ptr<const Graph> load_graph(const std::string& path);

/// Compile options from the environment (AUTOFUSE_FLAGS, AUTOFUSE_CACHE_DIR,
/// CXX, AUTOFUSE_DUMP) with fusion on or off.
runtime::CompileOptions compile_options(bool fused, const std::string& dump_dir = "");

}  // namespace autofuse::tools
