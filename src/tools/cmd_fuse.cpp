// `autofuse fuse G [--dump-dir D] [--unfused] [--json]`: partitions the graph
// and prints the fused graph and its kernel count. With --dump-dir, the whole
// pipeline runs (through the JIT) and writes every stage's IR and the
// generated source into D.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autofuse/fuse/fusion.h"
#include "autofuse/fuse/move_views.h"
#include "tools/commands.h"
#include "tools/graph_loading.h"

namespace autofuse::tools {

namespace {

struct FuseOptions {
  std::string path;
  std::string dump_dir;
  bool unfused = false;
  bool json = false;
};

nlohmann::json regions_json(const fuse::FusedGraph& fused) {
  const Graph& graph = *fused.graph;
  nlohmann::json regions = nlohmann::json::array();
  for (const fuse::Region& region : fused.regions) {
    nlohmann::json ops = nlohmann::json::array(), inputs = nlohmann::json::array(),
                   outputs = nlohmann::json::array();
    for (NodeId n : region.nodes)
      ops.push_back(std::string(op_name(graph.node(n).op)));
    for (ValueId v : region.inputs)
      inputs.push_back(graph.value(v).name);
    for (ValueId v : region.outputs)
      outputs.push_back(graph.value(v).name);
    regions.push_back({{"name", region.name},
                       {"kind", std::string(fuse::region_kind_name(region.kind))},
                       {"ops", ops},
                       {"inputs", inputs},
                       {"outputs", outputs}});
  }
  return regions;
}

int run(const FuseOptions& options) {
  std::shared_ptr<const Graph> graph = load_graph(options.path).graph;
  runtime::CompileOptions compile = compile_options(!options.unfused, options.dump_dir);
  // With --dump-dir the whole pipeline runs, and the partition it compiled
  // is the one printed; otherwise only the passes up to the partitioner run
  // (fuse::move_views, when on, and fuse::group_kernels, as the pipeline
  // runs them).
  std::unique_ptr<runtime::Executable> exe;
  if (!options.dump_dir.empty()) exe = runtime::Executable::build(graph, compile);
  std::shared_ptr<const Graph> partitioned = graph;
  if (!exe && compile.fusion.enabled && compile.fusion.move_views)
    partitioned = fuse::move_views(graph).graph;
  fuse::FusedGraph fused;
  if (exe) {
    fused = exe->fused();
  } else {
    fused = fuse::partition(partitioned, compile.fusion);
    fuse::group_kernels(fused, compile.fusion);
  }
  if (options.json) {
    nlohmann::json doc = {{"graph", graph->name()},
                          {"kernels", fused.num_kernels()},
                          {"launches", fused.num_launches()},
                          {"regions", regions_json(fused)},
                          {"refusals", fused.refusals}};
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << fuse::print_fused_graph(fused);
    for (const std::string& refusal : fused.refusals)
      std::cout << "# " << refusal << "\n";
    if (!options.dump_dir.empty()) std::cout << fmt::format("# dumped to {}\n", options.dump_dir);
  }
  return 0;
}

}  // namespace

Runner add_fuse_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("fuse", "Partition a graph into fused kernels and print it");
  auto options = std::make_shared<FuseOptions>();
  cmd->add_option("graph", options->path, "graph file (.af or .onnx)")->required();
  cmd->add_option("--dump-dir", options->dump_dir,
                  "compile and write each stage's IR and the generated source here");
  cmd->add_flag("--unfused", options->unfused, "one kernel per op (fusion disabled)");
  cmd->add_flag("--json", options->json, "print JSON instead of text");
  return [cmd, options]() { return cmd->parsed() ? run(*options) : -1; };
}

}  // namespace autofuse::tools
