// `autofuse print G`: parse (or import), infer, print the canonical text.
#include <iostream>
#include <memory>

#include "autofuse/graph/text.h"
#include "tools/commands.h"
#include "tools/graph_loading.h"

namespace autofuse::tools {

Runner add_print_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("print", "Parse a graph, infer shapes, print canonical text");
  auto path = std::make_shared<std::string>();
  cmd->add_option("graph", *path, "graph file (.af or .onnx)")->required();
  return [cmd, path]() {
    if (!cmd->parsed()) return -1;
    std::cout << print_graph(*load_graph(*path).graph);
    return 0;
  };
}

}  // namespace autofuse::tools
