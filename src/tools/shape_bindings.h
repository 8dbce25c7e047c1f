// Parsing of the CLI's `--shape N=4,D=768` arguments.
#pragma once

#include <string>
#include <vector>

#include "autofuse/graph/graph.h"
#include "autofuse/sym/expr.h"

namespace autofuse::tools {

/// Parses "N=4,D=768" (spaces allowed around items). UserError on a malformed
/// item, a repeated symbol, or a value that is not an integer >= 0.
sym::Binding parse_shape_binding(const std::string& text);

/// The bindings to run a graph under: one per `--shape` occurrence; exactly
/// one empty binding when the graph has no symbols and none were given.
/// UserError when a binding misses one of the graph's symbols or names a
/// symbol the graph does not have.
std::vector<sym::Binding> bindings_for_graph(const Graph& graph,
                                             const std::vector<std::string>& shape_args);

/// "N=4, D=768", symbols in `order` first (the graph's order), then the rest.
std::string binding_to_string(const sym::Binding& binding,
                              const std::vector<std::string>& order = {});

}  // namespace autofuse::tools
