// `autofuse print G`: parse, infer, print the canonical text.
#include <iostream>
#include <memory>

#include "autofuse/graph/text.h"
#include "tools/commands.h"

namespace autofuse::tools {

Runner add_print_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("print", "Parse a graph, infer shapes, print canonical text");
  auto path = std::make_shared<std::string>();
  cmd->add_option("graph", *path, "graph file (.af)")->required();
  return [cmd, path]() {
    if (!cmd->parsed()) return -1;
    Graph graph = parse_graph_file(*path);
    std::cout << print_graph(graph);
    return 0;
  };
}

}  // namespace autofuse::tools
